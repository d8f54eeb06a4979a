"""Property tests of max pooling with indices and max unpooling (`nn.MaxPool1d/2d/3d(return_indices=True)`,
`F.max_pool2d(..., return_indices=True)`, `nn.MaxUnpool1d/2d/3d`, `F.max_unpool1d/2d/3d`: porter/rules/pool.py,
porter/runtime/pool.py) against real torch. SegNet-style decoders need them; the port raised at construction
(`return_indices=True is not supported`) though porter reported it converted, and MaxUnpool2d had no rule. The
indices are torch's (flat over each (n, c) plane of the unpadded input, the window's first maximum: ReLU outputs full
of tied zeros check the scan order), held channels-last as the values are. Cases: stride 2 with padding and
ceil_mode, overlapping windows, dilation, rectangular windows, `output_size` from `x.size()`, 1d and 3d; odd sizes
and batch 1 drawn by hypothesis, eagerly and under XLA. Adaptive max pooling with indices (`nn.AdaptiveMaxPool1d/2d/3d(
..., return_indices=True)`, `F.adaptive_max_pool1d/2d/3d`) raised when the port was built: its bins (torch's floor/ceil
bounds, overlapping where the output is larger than the input, None keeping a size) give torch's indices too."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv{dims}d(3, 4, 3, padding=1)
        self.pool = {pool}
        self.unpool = {unpool}

    def forward(self, x):
        y = torch.relu(self.conv(x))
        {op}
        return torch.cat([u.flatten(1), i.flatten(1).float()], 1)
'''

# name -> (dims, pool module, unpool module, forward statements binding u (the unpooled or pooled values) and i)
CASES = {
    "module_2d": (2, "nn.MaxPool2d(2, 2, return_indices=True)", "nn.MaxUnpool2d(2, 2)",
                  "v, i = self.pool(y); u = self.unpool(v, i, output_size=y.size())"),
    "padded_ceil_overlapping": (2, "nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True)",
                                "nn.MaxUnpool2d(3, 2, 1)", "v, i = self.pool(y); u = self.unpool(v, i, y.shape)"),
    "rectangular": (2, "nn.MaxPool2d((2, 3), (2, 1), (1, 0), return_indices=True)",
                    "nn.MaxUnpool2d((2, 3), (2, 1), (1, 0))",
                    "v, i = self.pool(y); u = self.unpool(v, i, output_size=y.shape[-2:])"),
    "functional_dilation": (2, "None", "None", "u, i = F.max_pool2d(y, 3, 1, 1, dilation=2, return_indices=True)"),
    "functional_unpool": (2, "None", "None",
                          ("v, i = F.max_pool2d(y, 2, return_indices=True); u = F.max_unpool2d(v, i, 2, "
                           "output_size=y.size())")),
    "module_1d": (1, "nn.MaxPool1d(3, 2, 1, return_indices=True)", "nn.MaxUnpool1d(3, 2, 1)",
                  "v, i = self.pool(y); u = self.unpool(v, i, output_size=y.size())"),
    "functional_3d": (3, "None", "None",
                      "v, i = F.max_pool3d(y, 2, return_indices=True); u = F.max_unpool3d(v, i, 2) + 0 * v.sum()"),
    "adaptive_module_2d": (2, "nn.AdaptiveMaxPool2d((3, 2), return_indices=True)", "None", "u, i = self.pool(y)"),
    "adaptive_overlapping": (2, "nn.AdaptiveMaxPool2d((5, 7), True)", "None", "u, i = self.pool(y)"),
    "adaptive_functional_1d": (1, "None", "None", "u, i = F.adaptive_max_pool1d(y, 6, return_indices=True)"),
    "adaptive_3d_none": (3, "nn.AdaptiveMaxPool3d((2, None, 3), return_indices=True)", "None", "u, i = self.pool(y)"),
}
SPECS = {1: "3,9", 2: "3,8,8", 3: "3,4,4,4"}


def source(name):
    dims, pool, unpool, op = CASES[name]
    return TEMPLATE.replace("{dims}", str(dims)).replace("{pool}", pool).replace("{unpool}", unpool).replace(
        "{op}", op.replace("; ", "\n        "))


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """name -> PortedPair of the case, converted on first use."""
    return cached(lambda name: port(tmp_path_factory.mktemp(name), source(name), (SPECS[CASES[name][0]],)))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), sizes=st.lists(st.sampled_from([4, 5, 7, 8, 9]), min_size=3, max_size=3),
       seed=st.integers(0, 2**16))
def test_max_pool_indices_and_unpool_match_torch(ported, name, batch, sizes, seed):
    dims = CASES[name][0]
    if name == "functional_3d":  # (an even size: torch's unpool of an odd one has no output_size to say it)
        sizes = [s - s % 2 for s in sizes]
    x = random_input(seed, (batch, 3, *sizes[:dims]))
    pair = ported(name)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)


SEGNET = '''
import torch.nn as nn
import torch.nn.functional as F


class Enc(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.conv(x)
        size = x.size()
        x, idx = F.max_pool2d(x, 2, 2, return_indices=True)
        return x, idx, size


class OpModel(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.e1, self.e2 = Enc(3, 8), Enc(8, 16)
        self.unpool = nn.MaxUnpool2d(2, 2)
        self.d2 = nn.Conv2d(16, 8, 3, padding=1)
        self.d1 = nn.Conv2d(8, classes, 3, padding=1)

    def forward(self, x):
        x, i1, s1 = self.e1(x)
        x, i2, s2 = self.e2(x)
        x = self.d2(self.unpool(x, i2, output_size=s2))
        return self.d1(self.unpool(x, i1, output_size=s1))
'''


def test_a_segnet_decoder_converts_only_at_its_boundary(tmp_path):
    from tests.corpus.test_torchvision import xla_transposes

    pair = port(tmp_path, SEGNET, ("3,33,29",))
    x = random_input(1, (1, 3, 33, 29))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert xla_transposes(pair.keras_model, x) <= 2
