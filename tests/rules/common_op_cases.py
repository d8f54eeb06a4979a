"""Shared body of the common-op family property tests (reorder, pointwise, products, selection): each op reads
the channels-last output of a Conv2d in the port; hypothesis draws odd and size-1 inputs, compared eagerly, and
every op is compared under XLA on the awkward shapes of XLA_EXAMPLES."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, conv_model, port_cache, random_input


def ported_cases(tmp_path_factory, ops):
    return port_cache(tmp_path_factory, {name: conv_model(op) for name, op in ops.items()})


def check_case(ported, name, batch, height, width, seed, tolerance=1e-5, jit=True):
    """The op `name` matches torch eagerly on a (batch, 3, height, width) input, and under XLA when `jit`."""
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=tolerance, what=f"{name} x{x.shape}")
    if jit:
        assert_same_outputs(ported(name), [x], tolerance=tolerance, what=f"{name} XLA x{x.shape}", jit=True)


SHAPES = {"batch": st.integers(1, 3), "height": st.sampled_from([1, 2, 3, 5]),
          "width": st.sampled_from([1, 2, 4, 7]), "seed": st.integers(0, 2**16)}


# Shapes every op also runs under XLA, as explicit examples (run first, in every profile): every axis of size 1 at
# batch 1; a height of 1 beside an odd width at batch 2; an odd height beside an even width at batch 3. An XLA run is
# a trace and a compile (about 0.3 s, the eager comparison 0.02 s): most of a case's time when each of the 8 drawn
# examples ran it too, on shapes drawn from the same sizes; the drawn examples are compared eagerly.
XLA_EXAMPLES = [{"batch": 1, "height": 1, "width": 1, "seed": 0}, {"batch": 2, "height": 1, "width": 7, "seed": 1},
                {"batch": 3, "height": 5, "width": 2, "seed": 2}]


def drawn(test):
    """The hypothesis decoration every case test uses: the XLA_EXAMPLES with `xla` true, then 8 drawn examples
    with `xla` false."""
    for shape in reversed(XLA_EXAMPLES):
        test = example(**shape, xla=True)(test)
    return settings(max_examples=8, deadline=None)(given(**SHAPES, xla=st.just(False))(test))


def op_family_tests(ops, tolerance=1e-5, jit=True):
    """(the module-scoped `ported` fixture, the test comparing every op of `ops` with torch on drawn sizes, eagerly
    and under XLA): a family test module binds them to `ported` and its own `test_..._matches_torch` name."""

    @pytest.fixture(scope="module")
    def ported(tmp_path_factory):
        return ported_cases(tmp_path_factory, ops)

    @pytest.mark.parametrize("name", sorted(ops))
    @drawn
    def test_matches_torch(ported, name, batch, height, width, seed, xla):
        check_case(ported, name, batch, height, width, seed, tolerance=tolerance, jit=jit and xla)

    return ported, test_matches_torch
