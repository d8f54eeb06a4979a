"""Op-level layout: ops that act on the channel axis of an image keep it where a channels-last image stores it,
so a convnet built from them traces only the boundary's Transposes and still matches torch.

Each snippet is a construct as held-out model code writes it, cut down: pretrainedmodels' SpatialCrossMapLRN
(an AvgPool3d across channels over `x.pow(2).unsqueeze(1)`), ResNeSt's split attention in torch (a radix axis split
off the channels by `view`, summed over, a softmax over it, per-group weights broadcast back), vit-pytorch
crossformer's channel LayerNorm (`torch.var`/`torch.mean` over dim 1 with keepdim, (1, C, 1, 1) parameters). The
property tests draw shapes and values with hypothesis and compare with the real torch op.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, conv_model, port_cache, random_input

HEADER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
'''

SOURCES = {
    "cross_channel_lrn": HEADER + '''

class SpatialCrossMapLRN(nn.Module):
    def __init__(self, local_size=1, alpha=1.0, beta=0.75, k=1, ACROSS_CHANNELS=True):
        super(SpatialCrossMapLRN, self).__init__()
        self.ACROSS_CHANNELS = ACROSS_CHANNELS
        if ACROSS_CHANNELS:
            self.average = nn.AvgPool3d(kernel_size=(local_size, 1, 1), stride=1,
                                        padding=(int((local_size - 1.0) / 2), 0, 0))
        else:
            self.average = nn.AvgPool2d(kernel_size=local_size, stride=1, padding=int((local_size - 1.0) / 2))
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, x):
        if self.ACROSS_CHANNELS:
            div = x.pow(2).unsqueeze(1)
            div = self.average(div).squeeze(1)
            div = div.mul(self.alpha).add(self.k).pow(self.beta)
        else:
            div = x.pow(2)
            div = self.average(div)
            div = div.mul(self.alpha).add(self.k).pow(self.beta)
        x = x.div(div)
        return x


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.lrn = SpatialCrossMapLRN(5, 0.5, 0.75, 2)
        self.pool = nn.MaxPool3d((3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0))
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        y = self.lrn(torch.relu(self.conv(x)))
        y = self.pool(y.unsqueeze(1)).squeeze(1)  # a max over neighbouring channels, every second kept
        return self.conv2(y).mean([2, 3])
''',
    "radix_split_attention": HEADER + '''

class RadixSoftmax(nn.Module):
    def __init__(self, radix, cardinality):
        super().__init__()
        self.radix = radix
        self.cardinality = cardinality

    def forward(self, x):
        batch = x.size(0)
        x = x.view(batch, self.cardinality, self.radix, -1).transpose(1, 2)
        x = F.softmax(x, dim=1)
        return x.reshape(batch, -1)


class SplitAttn(nn.Module):
    def __init__(self, channels, radix=2, cardinality=1):
        super().__init__()
        self.radix = radix
        self.conv = nn.Conv2d(channels, channels * radix, 3, padding=1, groups=radix)
        self.bn0 = nn.BatchNorm2d(channels * radix)
        self.fc1 = nn.Conv2d(channels, 8, 1, groups=cardinality)
        self.fc2 = nn.Conv2d(8, channels * radix, 1, groups=cardinality)
        self.rsoftmax = RadixSoftmax(radix, cardinality)

    def forward(self, x):
        x = torch.relu(self.bn0(self.conv(x)))
        B, RC, H, W = x.shape
        x = x.reshape((B, self.radix, RC // self.radix, H, W))
        x_gap = x.sum(dim=1)
        x_gap = x_gap.mean((2, 3), keepdim=True)
        x_attn = self.fc2(torch.relu(self.fc1(x_gap)))
        x_attn = self.rsoftmax(x_attn).view(B, -1, 1, 1)
        out = (x * x_attn.reshape((B, self.radix, RC // self.radix, 1, 1))).sum(dim=1)
        return out


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.attn = SplitAttn(4)
        self.head = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.head(self.attn(self.stem(x)) + self.stem(x))
''',
    "channel_layer_norm": HEADER + '''

class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


def FeedForward(dim, mult=2):
    return nn.Sequential(LayerNorm(dim), nn.Conv2d(dim, dim * mult, 1), nn.GELU(), nn.Conv2d(dim * mult, dim, 1))


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.proj = nn.Conv2d(dim, dim, 1)

    def forward(self, x):
        return self.proj(self.norm(x))


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 3, padding=1)
        self.layers = nn.ModuleList([nn.ModuleList([Block(8), FeedForward(8)]) for _ in range(2)])

    def forward(self, x):
        x = self.embed(x)
        for block, ff in self.layers:
            x = block(x) + x
            x = ff(x) + x
        return x.mean([2, 3])
''',
}


def _port_main(folder, source):
    """`source` converted with OpModel as its main class (exit code 0 required), as a PortedPair."""
    path = folder / "op_model.py"
    path.write_text(source)
    conversion = convert(ConvertOptions(path, folder / "out", class_name="OpModel", input_specs=["3,8,8"]))
    assert conversion.exit_code == 0, (conversion.exit_code, conversion.manifest)
    write_tree(folder / "out", conversion.files)
    return PortedPair(folder / "out")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: _port_main(tmp_path_factory.mktemp(name), SOURCES[name]))


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_construct_matches_torch_and_converts_only_at_the_boundary(ported, name):
    pair = ported(name)
    x = random_input(0, (2, 3, 8, 8))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


# --- property tests: each op on a channels-last image (a Conv2d's output) against torch ----------------------
OPS = {
    # a size-1 axis added before the channels and taken away again
    "unsqueeze_squeeze": "y = (y.unsqueeze(1) * 2.0).squeeze(1)",
    # a radix axis split off the channels (a view) and reduced: sum, mean, var with keepdim, amax
    "radix_sum": "y = y.view(y.shape[0], 2, -1, y.shape[2], y.shape[3]).sum(dim=1)",
    "radix_mean_keepdim": "y = y.view(y.shape[0], 3, -1, y.shape[2], y.shape[3]).mean(1, keepdim=True).squeeze(1)",
    "radix_var": "y = torch.var(y.view(y.shape[0], 2, -1, y.shape[2], y.shape[3]), dim=1, unbiased=False)",
    "radix_amax": "y = y.view(y.shape[0], 2, -1, y.shape[2], y.shape[3]).amax(dim=1)",
    # a softmax over the radix axis, per-group weights of lower rank broadcast against the split image
    "radix_softmax": "y = F.softmax(y.view(y.shape[0], 2, -1, y.shape[2], y.shape[3]), dim=1).sum(1)",
    "radix_weights": "w = y.mean((2, 3)).view(y.shape[0], 2, -1, 1, 1)\n        "
                     "y = (y.view(y.shape[0], 2, -1, y.shape[2], y.shape[3]) * w).sum(1)",
    # channels pooled where they lie (avg and max over a window across neighbouring channels; layers in LAYERS)
    "channel_avg_pool": "y = self.pool(y.unsqueeze(1)).squeeze(1)",
    "channel_max_pool": "y = self.pool(y.unsqueeze(1)).squeeze(1)",
    # a channel LayerNorm: reductions over dim 1 with keepdim, per-channel (1, C, 1, 1) parameters
    "channel_norm": "y = (y - y.mean(1, keepdim=True)) / (torch.var(y, 1, unbiased=False, keepdim=True) + 1e-5)."
                    "sqrt() * torch.arange(6.0).view(1, 6, 1, 1)",
}
# the pools' layers, built in __init__
LAYERS = {
    "channel_avg_pool": "self.pool = nn.AvgPool3d((3, 1, 1), stride=1, padding=(1, 0, 0))",
    "channel_max_pool": "self.pool = nn.MaxPool3d((3, 2, 1), stride=(2, 1, 1), padding=(1, 0, 0))",
}


def _source(name):
    source = conv_model(OPS[name])
    if name in LAYERS:
        source = source.replace("padding=1)\n", f"padding=1)\n        {LAYERS[name]}\n", 1)
    return source


@pytest.fixture(scope="module")
def op_ports(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: _source(name) for name in OPS}, input_specs=("3,6,6",))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(2, 7), width=st.integers(2, 7), seed=st.integers(0, 2**16),
       scale=st.sampled_from([0.1, 1.0, 10.0]))
def test_op_on_a_channels_last_image_matches_torch(op_ports, name, batch, height, width, seed, scale):
    pair = op_ports(name)
    x = random_input(seed, (batch, 3, height, width), scale)
    assert_same_outputs(pair, [x], tolerance=1e-4)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_keeps_the_image_channels_last(op_ports, name):
    pair = op_ports(name)
    x = random_input(0, (2, 3, 6, 6))
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=5), data=st.data())
def test_softmax_over_any_axis_matches_torch_without_transposes(shape, data):
    import tensorflow as tf
    import torch

    from porter.runtime.activation import log_softmax, softmax

    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32) * 5
    for ours, theirs in ((softmax, torch.softmax), (log_softmax, torch.log_softmax)):
        np.testing.assert_allclose(np.asarray(ours(tf.constant(x), dim)), theirs(torch.from_numpy(x), dim).numpy(),
                                   rtol=1e-5, atol=1e-6)
        graph = tf.function(lambda a: ours(a, dim)).get_concrete_function(tf.TensorSpec(shape, tf.float32)).graph
        assert not [op for op in graph.get_operations() if op.type == "Transpose"]
