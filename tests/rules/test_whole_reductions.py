"""Reductions over every element of an image held channels-last (rules/tensor_ops.py `_over_every_element`):
`x.mean()`, `torch.sum(x)`, `x.amax()`, `x.std()`, `x.norm()`, `x.prod()`, `(x > 0).all()` read the elements in
any order, so the port reduces the image as it is held (before: a Transpose back to torch's layout first, e.g. a
held-out block's `x.mean() * 0`). argmax's flat index depends on the order: it still converts. Each matches torch
on drawn sizes (odd, batch 1) and traces only the boundary's Transpose and the one argmax needs.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, conv_model, port, random_input

OPS = {
    "mean": "y = y - y.mean()",
    "sum_function": "y = y * torch.sum(y) / 100",
    "amax_amin": "y = (y - y.amin()) / (y.amax() - y.amin() + 1)",
    "max_min": "y = y * torch.max(y) + torch.min(y)",
    "std_var": "y = y / (y.std() + 1) + y.var(unbiased=False)",
    "norm": "y = y / (y.norm() + 1e-3) + torch.norm(y, 1) * 0.01",
    "prod": "y = y + torch.prod(torch.sigmoid(y) + 0.5) * 0.1",
    "all_any": "y = y * (y > -3).all().float() + (y > 2).any().float()",
    "dim_none": "y = y - torch.mean(y, dim=None)",
    "bool_count": "y = y * (y > 0).sum()",
}
# the flat index of argmax counts in torch's order: converted first
ORDERED = {"argmax": "y = y + y.argmax().float() / 100"}
# each traces the input's Transpose; the output leaves in torch's layout (one more)
TRANSPOSES = 2


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), conv_model({**OPS, **ORDERED}[name])))


@pytest.mark.parametrize("name", sorted({**OPS, **ORDERED}))
@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4]), width=st.sampled_from([2, 5]),
       seed=st.integers(0, 2**16))
def test_whole_reductions_match_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_whole_reductions_keep_the_layout(ported, name):
    from porter.verify.harness import count_transposes

    pair = ported(name)
    x = random_input(0, (2, 3, 4, 5))
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} XLA", jit=True)
    assert "to_channels_first" not in (pair.out_dir / "op_model_keras.py").read_text()
    assert count_transposes(pair.keras_model, [x]) <= TRANSPOSES
