"""What a recurrent layer's constructor says of its final states: one unidirectional layer, so h_n's first dim is 1.

A seq2seq decoder reads its GRU's `hidden` (D * num_layers, N, H) as a batch of queries (`hidden.permute(1, 0, 2)`,
the PyTorch tutorial's Bahdanau attention): with one layer one way that permute moves a dim of size 1, a reshape and
no Transpose, which porter can only know from the constructor. This module reads it there: every assignment of
`self.<attribute>` builds the layer with `num_layers` and `bidirectional` left at their defaults or written as the
literals 1 and False.
"""

import libcst as cst

from porter.frontend.arguments import bound_arguments
from porter.passes.elementwise_classes import every_construction

# torch.nn.RNN / LSTM / GRU's positional parameters
RECURRENT_PARAMS = ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional")


def one_unidirectional_layer(source, info, attribute, canonical_name):
    """Whether every assignment of `self.<attribute>` in `info`'s constructor builds `canonical_name`
    (`torch.nn.GRU`) with one layer, one direction (literals or defaults)."""
    return every_construction(source, info, attribute, canonical_name, _one_layer)


def _one_layer(call):
    bound = bound_arguments(call, RECURRENT_PARAMS)
    if bound is None:
        return False
    layers, directions = bound.get("num_layers"), bound.get("bidirectional")
    return (layers is None or isinstance(layers, cst.Integer) and int(layers.value) == 1) and (
        directions is None or isinstance(directions, cst.Name) and directions.value == "False")
