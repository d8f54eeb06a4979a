"""Property tests of `torch.all` / `torch.any` and their Tensor methods (porter/rules/tensor_ops.py reductions,
runtime torch_all / torch_any) against real torch: on the channels-last output of a Conv2d (dims remapped), over
several dims with keepdim, without dims, and on a torch-ordered tensor; shapes and values drawn by hypothesis."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, conv_model, port, random_input

OPS = {
    "all_channels": "y = (y > -0.5).all(dim=1).float()",
    "any_spatial_keepdim": "y = torch.any(y > 0.8, dim=(2, 3), keepdim=True).float() * y",
    "all_everything": "y = (y > -3.0).all().float() * y",
    "any_negative_dim": "y = (y < 0).any(-1).float()",
    "all_torch_order": "y = torch.all(y.flatten(2) > 0.0, dim=2).float()",
    "any_on_numbers": "y = torch.any(torch.relu(y), dim=1).float()",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), conv_model(OPS[name])))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4]), width=st.sampled_from([2, 5]),
       scale=st.sampled_from([0.1, 1.0, 3.0]), seed=st.integers(0, 2**16))
def test_all_any_match_torch(ported, name, batch, height, width, scale, seed):
    x = random_input(seed, (batch, 3, height, width), scale)
    assert_same_outputs(ported(name), [x], tolerance=1e-6, what=f"{name} x{x.shape}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_all_any_compile_with_xla(ported, name):
    assert_same_outputs(ported(name), [random_input(0, (2, 3, 4, 5))], tolerance=1e-6, what=f"{name} XLA", jit=True)
