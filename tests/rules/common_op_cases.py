"""Shared body of the common-op family property tests (reorder, pointwise, products, selection): each op reads
the channels-last output of a Conv2d in the port; hypothesis draws odd and size-1 inputs, compared eagerly and
under XLA."""

import pytest
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


def op_family_tests(ops, tolerance=1e-5, jit=True):
    """(the module-scoped `ported` fixture, the test comparing every op of `ops` with torch on drawn sizes, eagerly
    and under XLA): a family test module binds them to `ported` and its own `test_..._matches_torch` name."""

    @pytest.fixture(scope="module")
    def ported(tmp_path_factory):
        return ported_cases(tmp_path_factory, ops)

    @pytest.mark.parametrize("name", sorted(ops))
    @drawn
    def test_matches_torch(ported, name, batch, height, width, seed):
        check_case(ported, name, batch, height, width, seed, tolerance=tolerance, jit=jit)

    return ported, test_matches_torch
