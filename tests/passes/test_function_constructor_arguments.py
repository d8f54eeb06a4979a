"""Blocks built with a module-level function as a constructor argument (the MaxViT implementation's
`MaxViTTransformerBlock(in_channels, partition_function=window_partition, reverse_function=window_reverse)` beside
one built with `grid_partition`/`grid_reverse`, kept as `self.partition_function` and called in forward): the port
called them through `call_module`, which converts images to torch's order and the 4-d windows it returns to
channels-last and back. Each construction's function is now a static argument of that instance (its `call`
specialised for it, as for literal arguments): the call is that function's, laid out like any direct call. A
MaxViT stage: 8 -> 4 Transposes; the port matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


def window_partition(x, ws=2):
    B, C, H, W = x.shape
    windows = x.view(B, C, H // ws, ws, W // ws, ws)
    return windows.permute(0, 2, 4, 3, 5, 1).contiguous().view(-1, ws * ws, C)


def window_reverse(windows, size, ws=2):
    H, W = size
    C = windows.shape[-1]
    B = int(windows.shape[0] / (H * W / ws / ws))
    output = windows.view(B, H // ws, W // ws, ws, ws, C)
    return output.permute(0, 5, 1, 3, 2, 4).contiguous().view(B, C, H, W)


def grid_partition(x, gs=2):
    B, C, H, W = x.shape
    grid = x.view(B, C, gs, H // gs, gs, W // gs)
    return grid.permute(0, 3, 5, 2, 4, 1).contiguous().view(-1, gs * gs, C)


def grid_reverse(grid, size, gs=2):
    (H, W), C = size, grid.shape[-1]
    B = int(grid.shape[0] / (H * W / gs / gs))
    output = grid.view(B, H // gs, W // gs, gs, gs, C)
    return output.permute(0, 5, 3, 1, 4, 2).contiguous().view(B, C, H, W)


class TransformerBlock(nn.Module):
    def __init__(self, channels, partition_function, reverse_function):
        super().__init__()
        self.partition_function = partition_function
        self.reverse_function = reverse_function
        self.norm = nn.LayerNorm(channels)
        self.attention = nn.MultiheadAttention(channels, 2, batch_first=True)

    def forward(self, x):
        B, C, H, W = x.shape
        windows = self.partition_function(x)
        normed = self.norm(windows)
        attended, _ = self.attention(normed, normed, normed, need_weights=False)
        return x + self.reverse_function(attended, (H, W))


class OpModel(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.block = TransformerBlock(channels, window_partition, window_reverse)
        self.grid = TransformerBlock(channels, partition_function=grid_partition, reverse_function=grid_reverse)
        self.head = nn.Conv2d(channels, 2, 1)

    def forward(self, x):
        return self.head(self.grid(self.block(self.stem(x))))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("function_arguments"), textwrap.dedent(SOURCE), input_specs=("3,8,8",))


def test_each_instance_calls_its_function(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "if (self.partition_function, self.reverse_function) == (window_partition, window_reverse):" in code
    assert "windows = window_partition_channels_last(x)" in code and "windows = grid_partition_channels_last(x)" in code
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 8, 8))) <= 8  # (torch permutes 4 times)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.sampled_from([4, 8]))
def test_port_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))], tolerance=1e-4)
