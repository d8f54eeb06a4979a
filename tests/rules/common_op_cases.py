"""Shared body of the common-op family property tests (reorder, pointwise, products, selection): each op reads
the channels-last output of a Conv2d in the port; hypothesis draws odd and size-1 inputs, compared eagerly and
under XLA."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, conv_model, port_cache, random_input


def ported_cases(tmp_path_factory, ops):
    return port_cache(tmp_path_factory, {name: conv_model(op) for name, op in ops.items()})


def check_case(ported, name, batch, height, width, seed, tolerance=1e-5, jit=True):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=tolerance, what=f"{name} x{x.shape}")
    if jit:
        assert_same_outputs(ported(name), [x], tolerance=tolerance, what=f"{name} XLA x{x.shape}", jit=True)


SHAPES = {"batch": st.integers(1, 3), "height": st.sampled_from([1, 2, 3, 5]),
          "width": st.sampled_from([1, 2, 4, 7]), "seed": st.integers(0, 2**16)}


def drawn(test):
    """The hypothesis decoration every case test uses (a modest number of examples: each runs eager and XLA)."""
    return settings(max_examples=8, deadline=None)(given(**SHAPES)(test))
