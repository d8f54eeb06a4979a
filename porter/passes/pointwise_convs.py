"""Convolutions a constructor builds as 1x1 matmuls: they run on torch's layout where a sequence lies.

gMLP's spatial gating unit and some MLP-Mixers mix tokens with `nn.Conv1d(seq_len, seq_len, kernel_size=1)` on a
(batch, tokens, features) sequence: the tokens are the convolution's channels. A channels-last convolution would
take the sequence transposed and hand it back so (two Transposes a block, and the elementwise gate beside it a
third); a 1x1 convolution with stride 1, no padding and one group is a matmul over axis 1 wherever it lies, which
the runtime's `layout="source"` computes in place (runtime/conv.py). This module answers, from the constructor's
source, whether an attribute is such a convolution.
"""

import libcst as cst

from porter.frontend.arguments import bound_arguments
from porter.passes.elementwise_classes import every_construction

CONV_PARAMS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias",
               "padding_mode")
POINTWISE_DEFAULTS = {"stride": 1, "padding": 0, "groups": 1, "padding_mode": "zeros"}


def pointwise_conv_attribute(source, info, attribute, canonical_name):
    """Whether every assignment of `self.<attribute>` in `info`'s constructor builds `canonical_name`
    (`torch.nn.Conv1d`) as a 1x1 convolution: kernel size 1, stride 1, padding 0, one group, written as literals
    (defaults count)."""
    return every_construction(source, info, attribute, canonical_name, _pointwise)


def _pointwise(call):
    """Whether the literal arguments of a Conv construction make it 1x1, stride 1, unpadded and ungrouped."""
    bound = bound_arguments(call, CONV_PARAMS)
    if bound is None or "kernel_size" not in bound or _literal(bound["kernel_size"]) not in (1, (1,), [1]):
        return False
    for name, default in POINTWISE_DEFAULTS.items():
        if name in bound and _literal(bound[name]) not in (default, (default,), [default]):
            return False
    return True


ARITHMETIC = {cst.Add: int.__add__, cst.Subtract: int.__sub__, cst.Multiply: int.__mul__,
              cst.FloorDivide: int.__floordiv__}


def _literal(node):
    """The Python value of a literal int (arithmetic of literal ints too: `padding=1 // 2`), string, or tuple/list
    of ints (None for anything else)."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in ARITHMETIC:
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, int) and isinstance(right, int) and not (
                isinstance(node.operator, cst.FloorDivide) and right == 0):
            return ARITHMETIC[type(node.operator)](left, right)
        return None
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, (cst.Tuple, cst.List)):
        items = tuple(_literal(e.value) for e in node.elements)
        return items if None not in items else None
    return None
