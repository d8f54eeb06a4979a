"""ndrplz/ConvLSTM_pytorch's ConvLSTM as written: a cell whose state `[h, c]` comes from `_init_hidden`, a method
growing a list of `(h, c)` pairs with `append`, unpacked per layer (`h, c = hidden_state[layer_idx]`) and carried
through a loop over time steps.

What broke before: the grown list's items were untyped, so the cell was translated for a plain state (torch's
layout) while the loop handed it the channels-last state the cell returned on every later step, unconverted: wrong
numbers, silently for a square image with as many hidden channels as pixels per side. Now a plain list of tuples of
tensors keeps its item type (ir/lists.py), a list handed where a call was translated for a plain value goes in
torch's layout, and a loop-carried value porter could not type is brought back to torch's layout for the next turn.
The ports match torch, eagerly and under XLA, for drawn sizes, sequence lengths and batches.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import torch.nn as nn
import torch


class ConvLSTMCell(nn.Module):

    def __init__(self, input_dim, hidden_dim, kernel_size, bias):
        super(ConvLSTMCell, self).__init__()

        self.input_dim = input_dim
        self.hidden_dim = hidden_dim

        self.kernel_size = kernel_size
        self.padding = kernel_size[0] // 2, kernel_size[1] // 2
        self.bias = bias

        self.conv = nn.Conv2d(in_channels=self.input_dim + self.hidden_dim,
                              out_channels=4 * self.hidden_dim,
                              kernel_size=self.kernel_size,
                              padding=self.padding,
                              bias=self.bias)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state

        combined = torch.cat([input_tensor, h_cur], dim=1)  # concatenate along channel axis

        combined_conv = self.conv(combined)
        cc_i, cc_f, cc_o, cc_g = torch.split(combined_conv, self.hidden_dim, dim=1)
        i = torch.sigmoid(cc_i)
        f = torch.sigmoid(cc_f)
        o = torch.sigmoid(cc_o)
        g = torch.tanh(cc_g)

        c_next = f * c_cur + i * g
        h_next = o * torch.tanh(c_next)

        return h_next, c_next

    def init_hidden(self, batch_size, image_size):
        height, width = image_size
        return (torch.zeros(batch_size, self.hidden_dim, height, width, device=self.conv.weight.device),
                torch.zeros(batch_size, self.hidden_dim, height, width, device=self.conv.weight.device))


class ConvLSTM(nn.Module):
    def __init__(self, input_dim=3, hidden_dim=[8, 8], kernel_size=(3, 3), num_layers=2,
                 batch_first=True, bias=True, return_all_layers=False):
        super(ConvLSTM, self).__init__()

        self._check_kernel_size_consistency(kernel_size)

        kernel_size = self._extend_for_multilayer(kernel_size, num_layers)
        hidden_dim = self._extend_for_multilayer(hidden_dim, num_layers)
        if not len(kernel_size) == len(hidden_dim) == num_layers:
            raise ValueError("Inconsistent list length.")

        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.kernel_size = kernel_size
        self.num_layers = num_layers
        self.batch_first = batch_first
        self.bias = bias
        self.return_all_layers = return_all_layers

        cell_list = []
        for i in range(0, self.num_layers):
            cur_input_dim = self.input_dim if i == 0 else self.hidden_dim[i - 1]

            cell_list.append(ConvLSTMCell(input_dim=cur_input_dim,
                                          hidden_dim=self.hidden_dim[i],
                                          kernel_size=self.kernel_size[i],
                                          bias=self.bias))

        self.cell_list = nn.ModuleList(cell_list)

    def forward(self, input_tensor, hidden_state=None):
        if not self.batch_first:
            input_tensor = input_tensor.permute(1, 0, 2, 3, 4)

        b, _, _, h, w = input_tensor.size()

        if hidden_state is not None:
            raise NotImplementedError()
        else:
            hidden_state = self._init_hidden(batch_size=b,
                                             image_size=(h, w))

        layer_output_list = []
        last_state_list = []

        seq_len = input_tensor.size(1)
        cur_layer_input = input_tensor

        for layer_idx in range(self.num_layers):

            h, c = hidden_state[layer_idx]
            output_inner = []
            for t in range(seq_len):
                h, c = self.cell_list[layer_idx](input_tensor=cur_layer_input[:, t, :, :, :],
                                                 cur_state=[h, c])
                output_inner.append(h)

            layer_output = torch.stack(output_inner, dim=1)
            cur_layer_input = layer_output

            layer_output_list.append(layer_output)
            last_state_list.append([h, c])

        if not self.return_all_layers:
            layer_output_list = layer_output_list[-1:]
            last_state_list = last_state_list[-1:]

        return layer_output_list, last_state_list

    def _init_hidden(self, batch_size, image_size):
        init_states = []
        for i in range(self.num_layers):
            init_states.append(self.cell_list[i].init_hidden(batch_size, image_size))
        return init_states

    @staticmethod
    def _check_kernel_size_consistency(kernel_size):
        if not (isinstance(kernel_size, tuple) or
                (isinstance(kernel_size, list) and all([isinstance(elem, tuple) for elem in kernel_size]))):
            raise ValueError("`kernel_size` must be tuple or list of tuples")

    @staticmethod
    def _extend_for_multilayer(param, num_layers):
        if not isinstance(param, list):
            param = [param] * num_layers
        return param


class Net(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.rnn = ConvLSTM(3, [hidden, hidden], (3, 3), 2, True, True, False)
        self.head = nn.Conv2d(hidden, 2, 1)

    def forward(self, x):
        outputs, states = self.rnn(x)
        return self.head(outputs[0][:, -1])
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """hidden -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "4,3,6,6", "hidden")


@settings(max_examples=5, deadline=None)
@given(hidden=st.sampled_from([4, 6]), batch=st.integers(1, 2), steps=st.integers(1, 3),
       size=st.sampled_from([(6, 6), (4, 5)]), seed=st.integers(0, 2**16))
def test_conv_lstm_matches_torch(ported, hidden, batch, steps, size, seed):
    assert_matches_torch(ported(hidden), seed, (batch, steps, 3, *size))


def test_square_image_with_as_many_hidden_channels_matches(ported):
    assert_matches_torch(ported(6), 1, (2, 3, 3, 6, 6))
