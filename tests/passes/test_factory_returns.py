"""A factory function returning one module or another (timm's `create_conv2d_pad`: its in-file `Conv2dSame` subclass
for "same" padding, else `nn.Conv2d`) builds either. The scan followed its first `return` alone, so a block built with
plain padding was translated for the subclass (torch's layout in, channels-last out) while the runtime layer it
really holds takes channels-last images: the port raised (a channels-first image reached the Conv2d), once a norm
porter sees only at run time (a lambda in a module-level dict, `NORMS[norm](c)`) followed the conv. Now the returns
are alternatives, as an if/else binding them is (passes/modules.py `_callable_return`), each laid out where it runs.

The HGNetV2-style model of test_affine_or_identity.py (the factory through a second factory, the learnable affine or
Identity, a concatenation of every layer's output) with its norms from such a dict, both paddings (the stem strided),
odd sizes, batch 1: the port matches torch eagerly and under XLA."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.passes.test_affine_or_identity import SOURCE as AFFINE_SOURCE
from tests.rules.op_ports import assert_same_outputs, port, random_input

TABLE = '''
NORMS = {"batchnorm": nn.BatchNorm2d, "group": lambda c: nn.GroupNorm(2, c)}
PADDING = ''


class LearnableAffine(nn.Module):'''


def model_source(padding):
    """test_affine_or_identity's model, its convs built with `padding` (the stem strided), its norms `NORMS[norm]`."""
    source = AFFINE_SOURCE.replace("\nclass LearnableAffine(nn.Module):", TABLE.replace("''", repr(padding)), 1)
    source = source.replace("self.conv = create_conv2d(in_chs, out_chs, 3, padding='')",
                            "self.conv = create_conv2d(in_chs, out_chs, 3, padding=PADDING, stride=2 if in_chs == 3 "
                            "else 1)", 1)
    source = source.replace('self.bn = nn.BatchNorm2d(out_chs) if norm == "batchnorm" else nn.GroupNorm(2, out_chs)',
                            "self.bn = NORMS[norm](out_chs)", 1)
    source = source.replace('class Net(nn.Module):\n    def __init__(self, norm="batchnorm")',
                            'class Net(nn.Module):\n    def __init__(self, norm="group")', 1)
    assert source.count("NORMS[norm]") == 1 and "PADDING, stride" in source and 'norm="group")' in source
    return source


@pytest.fixture(scope="module", params=["", "same"])
def pair(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp(request.param or "plain"), model_source(request.param),
                input_specs=("3,7,7",))


@given(batch=st.integers(1, 2), height=st.sampled_from([1, 4, 7]), width=st.sampled_from([3, 6]),
       seed=st.integers(0, 2**16))
def test_either_module_a_factory_returns_matches_torch(pair, batch, height, width, seed):
    """(1e-4: a 1x3 image strided to 1x2 leaves GroupNorm a handful of values per group, block after block, whose
    float32 rounding the normalisation amplifies, in torch and the port alike: 3.8e-5 on one drawn case)"""
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
