"""A tensor created constant and then filled (`outputs = torch.zeros(T, B, C)`, `outputs[t] = step` in a loop,
as seq2seq decoders collect their steps; `g.mul_(2).add_(y)`; `f[mask] = 1.0`): after the fill its values differ
wherever the filled part does. porter took `zeros(...)` for a constant whose copies may be broadcast
(ir/varying.py) and kept that after the item assignment: `outputs.permute(1, 0, 2)` became `permute_broadcast`,
which reads one element and broadcasts it: a silent all-zero result. A chain of in-place methods dropped its
result (`(g * 2) + y` as a statement), as did an in-place method on a name porter could not type, and a boolean
mask index raised in the runtime's scatter (`a[mask] = b[mask]` is now a `where`). Each case matches
torch for hypothesis-drawn sizes (batch 1 and odd lengths included), eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

TEMPLATE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        {op}
'''

OPS = {
    "loop_filled": "outputs = torch.zeros(x.shape[1], x.shape[0], x.shape[2])\n"
                   "        for t in range(x.shape[1]):\n"
                   "            outputs[t] = self.fc(x[:, t])\n"
                   "        return outputs.permute(1, 0, 2)",
    "one_row_added": "b = torch.zeros(x.shape[1], x.shape[0], x.shape[2])\n"
                     "        b[0] += x[:, 0]\n"
                     "        return b.transpose(0, 1)",
    "in_place_chain": "g = torch.ones(x.shape[1], x.shape[0], x.shape[2])\n"
                      "        g.mul_(2).add_(x.transpose(0, 1)).clamp_(min=0.5)\n"
                      "        return g.permute(1, 0, 2)",
    "mask_filled": "f = torch.zeros(x.shape[1], x.shape[0], x.shape[2])\n"
                   "        f[x.transpose(0, 1) > 0] = 1.0\n"
                   "        return f.permute(1, 0, 2) + self.fc(x)",
    # one mask on both sides (farthest-point sampling): a `where`, as XLA takes it (a scatter of the masked values
    # has a data-dependent size)
    "same_mask_both_sides": "distance = torch.ones_like(x) * 0.5\n"
                            "        dist = self.fc(x)\n"
                            "        mask = dist < distance\n"
                            "        distance[mask] = dist[mask]\n"
                            "        return distance",
    # an in-place method on a name porter could not type (unpacked from a map over a lambda): its result was dropped
    "in_place_on_unpacked": "h = self.fc(x)\n"
                            "        (v, lv), (k, lk) = map(lambda t: (t[:, :3], t[:, 3:]), (h, h * 2))\n"
                            "        v.masked_fill_(x[:, :3] > 0, 0.)\n"
                            "        return v + k",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    import textwrap

    sources = {name: textwrap.dedent(TEMPLATE).replace("{op}", op) for name, op in OPS.items()}
    return port_cache(tmp_path_factory, sources, input_specs=("5,4",))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([1, 2, 5]), seed=st.integers(0, 2**16))
def test_filled_tensor_matches_torch(ported, name, batch, length, seed):
    x = random_input(seed, (batch, length, 4))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_filled_tensor_compiles_with_xla(ported, name):
    assert_same_outputs(ported(name), [random_input(1, (2, 5, 4))], tolerance=1e-5, what=f"{name} XLA", jit=True)
