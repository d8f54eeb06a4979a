"""Swin-style window attention on (B, H, W, C) maps matches torch and moves no more data than torch does.

tests/rules/window_attention.py (torchvision's style): the stem's `Permute([0, 2, 3, 1])` relabels the channels-last
map as torch's (B, H, W, C) (no transpose), the stages appended in a loop after the stem take that layout (an
unordered Sequential's leading children run first), `F.pad` pads the map in torch's order, and `q, k, v` read from
one pending permute index the axes that hold their dims. tests/rules/swin_windows.py (the original implementation's
style): sequences viewed as maps, rolls, a mask buffer. The port's Transposes stay within torch's own data moves
plus the boundary's two.
"""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from porter.verify.torch_moves import count_torch_data_moves
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = Path(__file__).resolve().parent / "window_attention.py"


SWIN = Path(__file__).resolve().parent / "swin_windows.py"


@pytest.fixture(scope="module")
def window_net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("window"), SOURCE.read_text(), input_specs=("3,12,12",))


@pytest.fixture(scope="module")
def swin(tmp_path_factory):
    return port(tmp_path_factory.mktemp("swin"), SWIN.read_text(), input_specs=("3,32,32",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([4, 6, 10, 12]), width=st.sampled_from([4, 6, 10, 12]),
       seed=st.integers(0, 2**16))
def test_window_attention_matches_torch(window_net, batch, height, width, seed):
    """Map sizes that are and are not whole windows (6 // 2 = 3 patches: padded to 4)."""
    assert_same_outputs(window_net, [random_input(seed, (batch, 3, height, width))], tolerance=1e-4,
                        what=f"window attention {height}x{width}")


def test_window_attention_compiles_with_xla(window_net):
    assert_same_outputs(window_net, [random_input(1, (2, 3, 12, 12))], tolerance=1e-4, what="XLA", jit=True)


def test_window_attention_moves_no_more_data_than_torch(window_net):
    x = random_input(0, (1, 3, 12, 12))
    torch_moves = count_torch_data_moves(window_net.torch_model, [x])
    assert torch_moves >= 8  # per block: partition, qkv permute, k transpose, head merge, reverse; and the Permutes
    assert count_transposes(window_net.keras_model, [x]) <= torch_moves + 2


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_original_style_swin_matches_torch(swin, batch, seed):
    """Every stage alternates plain and shifted windows (the second block of each adds its mask buffer)."""
    x = random_input(seed, (batch, 3, 32, 32))
    assert_same_outputs(swin, [x], tolerance=1e-4, what="swin")
    assert_same_outputs(swin, [x], tolerance=1e-4, what="swin XLA", jit=True)


def test_original_style_swin_moves_no_more_data_than_torch(swin):
    x = random_input(0, (1, 3, 32, 32))
    assert count_transposes(swin.keras_model, [x]) <= count_torch_data_moves(swin.torch_model, [x]) + 2
