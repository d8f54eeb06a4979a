"""Item assignment into a tensor held channels-last or permuted (`out[:, :-1, :fold] = x[:, 1:, :fold]`, the
temporal shift module's shift of a 5-d view of images; `y[:, :c] = z` on a channels-last map; a scalar into a crop):
the index goes to the axes that hold its torch dims, the value comes in the layout that part is stored in, and the
tensor keeps its layout. Each assignment converted the tensor and the value to torch's order and back (a held-out
TSM traced 6 Transposes, now 1, the boundary's). The port matches torch for hypothesis-drawn channels, sizes and
batches, eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=2, n_div=4):
        super().__init__()
        self.net, self.n_segment, self.fold_div = net, n_segment, n_div

    def forward(self, x):
        return self.net(self.shift(x, self.n_segment, fold_div=self.fold_div))

    @staticmethod
    def shift(x, n_segment, fold_div=3):
        nt, c, h, w = x.size()
        x = x.view(nt // n_segment, n_segment, c, h, w)
        fold = c // fold_div
        out = torch.zeros_like(x)
        out[:, :-1, :fold] = x[:, 1:, :fold]
        out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]
        out[:, :, 2 * fold:] = x[:, :, 2 * fold:]
        return out.view(nt, c, h, w)


class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.shift = TemporalShift(nn.Conv2d(width, width, 3, padding=1))
        self.head = nn.Conv2d(width, 4, 1)

    def forward(self, x):
        y = self.shift(self.stem(x))
        z = self.head(y)
        y[:, :4] = z * 2
        y[:, :, 0] = 0.5
        return y
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"shift": SOURCE})


@settings(max_examples=4, deadline=None)
@given(width=st.integers(4, 9), pairs=st.integers(1, 2), height=st.integers(2, 7), width_px=st.integers(2, 6),
       seed=st.integers(0, 2**16))
def test_assignments_into_held_tensors_keep_their_layout(ported, width, pairs, height, width_px, seed):
    pair = PortedPair(ported("shift").out_dir, init_args={"width": width}, seed=seed)
    x = random_input(seed, (2 * pairs, 3, height, width_px))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2
