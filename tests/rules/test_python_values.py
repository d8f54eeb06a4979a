"""Property tests of tensors meeting plain Python values (porter/rules/tensor_ops.py `Tensor.tolist`,
porter/passes/expressions.py's promotion of integer tensors): against real torch, on a Conv2d's output."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, conv_model, port_cache, random_input

OPS = {
    # an integer tensor times a Python number porter cannot see statically (a float here): torch gives float32
    "arange_times_python_float": "s = y.shape[-1] / 3\n        y = y * (torch.arange(y.shape[-1]) * s + 1.0)",
    "arange_plus_python_int": "s = y.shape[-1] // 2\n        y = y + (torch.arange(y.shape[-1]) + s).float()",
    # Tensor.tolist(): Python numbers read back (eager only: a host sync the TPU lint flags in forward)
    "tolist_scales": "w = y.sum(dim=(0, 2, 3)).tolist()\n        y = y * w[0] + w[-1]",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: conv_model(op) for name, op in OPS.items()})


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4]), width=st.sampled_from([1, 2, 5]),
       seed=st.integers(0, 2**16))
def test_python_values_match_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape}")
