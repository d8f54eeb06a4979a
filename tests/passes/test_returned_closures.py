"""A closure a factory function returns (the memory-efficient DenseNet's `_bn_function_factory(norm, relu,
conv)` returning `bn_function(*inputs)`; `def fn(t): return conv(t)`): nothing calls it where it is defined, and
what calls it later (`call_module` on a value porter cannot type) takes its results in torch's layout. Its returns
were left as its layers made them (channels-last), and the caller converted them again: a wrong shape, silently,
or a crash at the next batch norm. Its returns are now in torch's order. Each matches torch for drawn sizes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCES = {
    "closure_of_a_layer": '''
import torch.nn as nn


def _factory(conv):
    def fn(t):
        return conv(t)
    return fn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        f = _factory(self.a)
        return self.b(f(x))
''',
    "bn_function_factory": '''
import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn_function_factory(norm, relu, conv):
    def bn_function(*inputs):
        concated_features = torch.cat(inputs, 1)
        bottleneck_output = conv(relu(norm(concated_features)))
        return bottleneck_output
    return bn_function


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, 2 * growth_rate, kernel_size=1, bias=False)
        self.norm2 = nn.BatchNorm2d(2 * growth_rate)
        self.conv2 = nn.Conv2d(2 * growth_rate, growth_rate, kernel_size=3, padding=1, bias=False)

    def forward(self, *prev_features):
        bn_function = _bn_function_factory(self.norm1, self.relu1, self.conv1)
        bottleneck_output = bn_function(*prev_features)
        return self.conv2(F.relu(self.norm2(bottleneck_output)))


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, padding=1)
        self.layers = nn.ModuleList([_DenseLayer(6 + 4 * i, 4) for i in range(2)])

    def forward(self, x):
        features = [self.stem(x)]
        for layer in self.layers:
            features.append(layer(*features))
        return torch.cat(features, 1)
''',
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, SOURCES, input_specs=("3,9,11",))


@pytest.mark.parametrize("name", sorted(SOURCES))
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([5, 9]), width=st.sampled_from([6, 11]),
       seed=st.integers(0, 2**16))
def test_returned_closure_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")
