"""`z[z < 0] = 0` on an image held channels-last: the mask is computed where the image lies, so the assignment is a
`tf.where` on the image as held. Before, the image went to torch's order for the scatter while its mask stayed
channels-last ("boolean index did not match indexed array" at run time); a tensor index of a scatter in torch's
order is now brought to that order too (`z[m] += 1`). In-place channel and row assignments keep the layout. Odd
sizes and batch 1 drawn by hypothesis; eager and XLA."""

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
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        z = y.clone()
        {op}
        return z
'''

CASES = {
    "scalar_mask": "z[z < 0] = 0",
    "mask_of_another": "m = y.mean(1, keepdim=True).expand_as(y) > 0.1\n        z[m] = -1.5",
    "mask_then_channels": "z[z > 0.5] = 0.5\n        z[:, :2] = z[:, :2] * 2\n        z[:, :, 0] = y[:, :, -1]",
    "aug_mask": "z[z > 0] += 1.0",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), TEMPLATE.replace("{op}", CASES[name])))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(1, 7), width=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_masked_assignment_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)


def test_scalar_mask_is_a_where_as_held(ported):
    import inspect

    code = inspect.getsource(ported("scalar_mask").keras_module.OpModel.call)
    assert "tf.where(" in code and "to_channels_first" not in code, code
