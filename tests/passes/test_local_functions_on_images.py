"""A function defined in `forward` and called there on an image (`def gate(t): return t *
torch.sigmoid(t.mean((2, 3), keepdim=True))`, then `gate(self.a(x))`): it took every tensor in torch's layout, so
the image went out of channels-last and back around it (4 Transposes, now 2: the boundary's). Its first call's
images are now taken as they are held; a later call hands its own converted to that layout. Matches torch for drawn
sizes (odd ones, batch 1), the function called once and twice (once on an image in torch's layout)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

TEMPLATE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 3, 1)

    def forward(self, x):
        def gate(t, scale=1.0):
            return t * torch.sigmoid(t.mean((2, 3), keepdim=True) * scale)
        {op}
'''

OPS = {
    "called_once": "return self.b(gate(self.a(x)))",
    "called_twice": "y = gate(self.a(x), 2.0)\n        return self.b(y) + gate(x.permute(0, 1, 3, 2).transpose(2, 3))",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: TEMPLATE.replace("{op}", op) for name, op in OPS.items()},
                      input_specs=("3,9,11",))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([5, 9]), width=st.sampled_from([7, 12]),
       seed=st.integers(0, 2**16))
def test_local_function_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")


def test_local_function_takes_images_as_held(ported):
    x = random_input(0, (2, 3, 9, 11))
    assert_same_outputs(ported("called_once"), [x], jit=True)
    assert count_transposes(ported("called_once").keras_model, [x]) <= 2
