"""A class called with tensors of another rank than its first caller's (a channel gate a Sequential runs on images
and, elsewhere, on the (N, C, L) sequences a Conv1d makes): the class gets a case of `call` for that rank, chosen at
run time by `len(x.shape)`, taking it in the layout the class declares (containers convert to it). Before, its one
translation reduced the image's channel axis of a rank-3 tensor (a crash, or wrong values when sizes allow).
Compared with torch, eagerly and under XLA, for hypothesis-drawn sizes and batches."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x.mean(1, keepdim=True))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Sequential(Gate(), nn.Conv2d(3, 4, 3, padding=1))
        self.body = nn.Sequential(nn.Conv2d(4, 5, 3, padding=1), Gate(), nn.ReLU())
        self.seq_head = nn.Sequential(nn.Conv1d(5, 6, 1), Gate())

    def forward(self, x):
        return self.seq_head(self.body(self.pre(x)).flatten(2))
'''


DIM_BRANCHES = '''
import torch
import torch.nn as nn


class ScaleShift(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.linspace(0.5, 1.5, dim))
        self.beta = nn.Parameter(torch.linspace(-0.2, 0.2, dim))

    def forward(self, x):
        if x.dim() == 4:
            return x * self.gamma[None, :, None, None] + self.beta.view(1, -1, 1, 1)
        return x * self.gamma.unsqueeze(-1) + self.beta.unsqueeze(-1)


class Net(nn.Module):
    def __init__(self, c=6):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.image_affine = ScaleShift(c)
        self.token_affine = ScaleShift(c)
        self.mix = nn.Conv1d(c, c, 3, padding=1)

    def forward(self, x):
        x = self.image_affine(self.conv(x))
        return self.mix(self.token_affine(x.flatten(2)))
'''


SELF_CALL_ON_ANOTHER_RANK = '''
import torch.nn as nn


class ConvFF(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pw = nn.Conv1d(c, c, 1)

    def forward(self, x):
        if x.dim() == 4:
            b, c, h, w = x.shape
            return self.forward(x.view(b, c, h * w)).view(b, c, h, w)
        return x + self.pw(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
        self.ff = ConvFF(8)
        self.c2 = nn.Conv2d(8, 8, 3, 1, 1)
        self.seq = nn.Sequential(ConvFF(8), nn.Conv1d(8, 4, 1))

    def forward(self, x):
        x = self.c2(self.ff(self.c1(x)))
        return self.ff(x.flatten(2)).mean(2) + self.seq(x.flatten(2)).sum(2).repeat(1, 2)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"gate": SOURCE, "dim_branches": DIM_BRANCHES,
                                         "self_call": SELF_CALL_ON_ANOTHER_RANK})


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(1, 9), width=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_class_called_with_two_ranks_matches_torch(ported, batch, height, width, seed):
    pair = ported("gate")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_a_branch_on_the_rank_the_case_never_takes_decides_no_layout(ported, batch, seed):
    """`if x.dim() == 4: return <image form>` in the case of `call` for 3-d tokens never runs there: its return
    (broadcast in torch's order, a rank-4 parameter view against 3-d tokens) no longer sets that case's output to
    torch's layout, which converted the tokens out and back (3 Transposes, now the boundary's 2)."""
    from porter.verify.harness import count_transposes

    pair = ported("dim_branches")
    x = random_input(seed, (batch, 3, 7, 5))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert count_transposes(pair.keras_model, [x]) <= 2


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(1, 9), width=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_a_case_for_another_rank_says_its_own_layout_out(ported, batch, height, width, seed):
    """A block that calls itself on its image viewed as a sequence (`self.forward(x.view(b, c, h * w))`), and is
    called on sequences elsewhere: the case of `call` for 3-d tensors returns channels-last while the class returns
    torch's layout, so the class says so per rank (`rank_layouts_out`) and its own call and a Sequential read it.
    Before, the call of itself converted a channels-last result again (max error 0.35, exit 0)."""
    pair = ported("self_call")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
