"""Property tests of `torch.unflatten` / `Tensor.unflatten` (porter/rules/tensor_ops.py `translate_unflatten`)
against real torch: the dim is split where it is stored, whatever the layout, so an image held channels-last keeps
its channels last (`x.unflatten(1, (g, -1))` is held (N, H, W, g, C/g)) and a spatial dim splits in place. Cases:
the channels split with -1 first or last, a spatial dim split, a negative dim, 1d and 3d images, a channel shuffle
written with unflatten/transpose/flatten (no Transpose of the image), a tensor in torch's order; odd sizes and
batch 1 drawn by hypothesis."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

TEMPLATE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv{dims}d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        {op}
        return y
'''

# name -> (image dims, forward statement)
CASES = {
    "channel_groups": (2, "y = y.unflatten(1, (2, -1)).sum(2)"),
    "channel_groups_minus_first": (2, "y = torch.unflatten(y, 1, (-1, 3)) * 2.0"),
    "spatial_split": (2, "y = y.unflatten(-1, (1, -1)).mean(3)"),
    "shuffle": (2, "y = y.unflatten(1, (3, -1)).transpose(1, 2).flatten(1, 2)"),
    "shuffle_1d": (1, "y = y.unflatten(1, (2, 3)).transpose(1, 2).flatten(1, 2)"),
    "video_channels": (3, "y = y.unflatten(1, (3, 2)).amax(1)"),
    "torch_order": (2, "y = y.flatten(1).unflatten(1, (6, -1))"),
}
SPECS = {1: "3,9", 2: "3,8,8", 3: "3,4,4,4"}


def source(name):
    dims, op = CASES[name]
    return TEMPLATE.replace("{dims}", str(dims)).replace("{op}", op)


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), source(name), (SPECS[CASES[name][0]],)))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), sizes=st.lists(st.sampled_from([1, 3, 4, 5, 8]), min_size=3, max_size=3),
       seed=st.integers(0, 2**16))
def test_unflatten_matches_torch(ported, name, batch, sizes, seed):
    dims = CASES[name][0]
    x = random_input(seed, (batch, 3, *sizes[:dims]))
    pair = ported(name)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)


@pytest.mark.parametrize("name", ["channel_groups", "shuffle", "spatial_split"])
def test_unflatten_splits_the_dim_where_it_is_stored(ported, name):
    import inspect

    code = inspect.getsource(ported(name).keras_module.OpModel.call)
    assert "to_channels_first" not in code and "permute_axes" not in code, code
