"""An image read inside a comprehension that does not bind it (`torch.cat([op(x) for op in self.paths], 1)`,
`sum(conv(x) for conv in self.convs)`): its conversion to channels-last goes before the statement, once, as a
plain loop's does; it ran once a turn (4 Transposes for three paths, now 2: the boundary's). A name the
comprehension or a lambda binds is still converted where it is read (a lambda parameter's conversion was hoisted
out of `map(lambda p, q: p * q, ...)`: an undefined name). Each matches torch for drawn sizes (odd ones, batch 1)."""

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
        self.paths = nn.ModuleList([nn.Conv2d(3, 4, 3, padding=1 + i, dilation=1 + i) for i in range(3)])

    def forward(self, x):
        {op}
'''

OPS = {
    "cat_of_paths": "return torch.cat([op(x) for op in self.paths], 1)",
    "sum_of_paths": "return sum(op(x) for op in self.paths)",
    "own_names_too": "ys = [op(x) for op in self.paths]\n        return torch.cat([y * 2 for y in ys], 1)",
    # a lambda's parameters are its own names: `q`'s conversion was hoisted out of `map(lambda p, q: p * q, ...)`
    # (an undefined name in the port)
    "lambda_parameters": "f = self.paths[0](x)\n        w = f.mean((2, 3)).reshape(f.shape[0], 4, 1, 1)\n"
                         "        return list(map(lambda p, q: p * q, [f], [w]))[0]",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: TEMPLATE.replace("{op}", op) for name, op in OPS.items()},
                      input_specs=("3,9,11",))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([7, 10]), width=st.sampled_from([5, 11]),
       seed=st.integers(0, 2**16))
def test_comprehension_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_comprehension_converts_once(ported, name):
    x = random_input(0, (2, 3, 9, 11))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} XLA", jit=True)
    assert count_transposes(ported(name).keras_model, [x]) <= 2
