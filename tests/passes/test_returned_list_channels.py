"""A class returning a list of images its comprehension made (an FPN's `[s(l) for s, l in zip(self.smooth,
laterals)]`), which the caller pools and flattens: the channel count the flatten reorders by was the callee's loop
variable's (`s.out_channels`), a name the caller does not have; the port failed its own check (an undefined name).
Each image's count is rebased onto the caller's instance, or dropped where the caller cannot name it. The held-out
attention convnet (held_out_models/attention_convnet.py: non-local, CBAM, Ghost and that FPN), eagerly and under
XLA, drawn batch and sizes (odd ones: the FPN's interpolation to the lateral's size), batch 1."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_matches_converting_at_the_boundary, port, random_input

MODEL = Path(__file__).resolve().parent / "held_out_models" / "attention_convnet.py"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("fpn_list"), MODEL.read_text(), input_specs=("3,32,32",))


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([8, 13, 32]), width=st.sampled_from([8, 19]),
       seed=st.integers(0, 2**16))
def test_pooled_list_of_a_class_matches_torch_converting_at_the_boundary(pair, batch, height, width, seed):
    assert_matches_converting_at_the_boundary(pair, random_input(seed, (batch, 3, height, width)), tolerance=1e-5)
