"""porter.verify.strategies: drawn cases are small, printable and reproduce their inputs exactly."""

import numpy as np
import pytest
from hypothesis import given

from porter.verify.strategies import Case, cases, input_arrays, size_variants, varied_shape

FLOAT_SPEC = {"shape": [3, 32, 32], "dtype": "float32", "low": None, "high": None}
TOKEN_SPEC = {"shape": [20], "dtype": "int64", "low": 1, "high": 50}


@given(cases(variants=4))
def test_drawn_cases_stay_in_range_and_round_trip(case):
    assert 1 <= case.batch <= 8 and 0 <= case.variant < 4
    assert -3.25 <= case.exponent <= 3.25
    assert Case.parse(str(case)) == case


def test_case_text_is_short_and_parsed_back():
    case = Case(3, -1.25, 1, 7)
    assert str(case) == "batch=3,exponent=-1.25,variant=1,seed=7"
    assert Case.parse("seed=7, batch=3,exponent=-1.25 ,variant=1") == case
    assert Case.parse("batch=4") == Case(4, 0.0, 0, 0)
    with pytest.raises(ValueError):
        Case.parse("size=3")
    assert Case(2, 2.9).extreme and Case(2, -2.6).extreme and not Case(2, 2.25).extreme


def test_inputs_follow_the_case():
    case = Case(5, -2.0, 0, 11)
    floats, tokens = input_arrays([FLOAT_SPEC, TOKEN_SPEC], [(3, 8, 8), (20,)], case)
    assert floats.shape == (5, 3, 8, 8) and floats.dtype == np.float32
    assert 1e-3 < np.abs(floats).std() < 1e-1  # N(0, 1) * 10**-2
    assert tokens.shape == (5, 20) and tokens.dtype == np.int64 and tokens.min() >= 1 and tokens.max() < 50
    again = input_arrays([FLOAT_SPEC, TOKEN_SPEC], [(3, 8, 8), (20,)], case)
    assert np.array_equal(floats, again[0]) and np.array_equal(tokens, again[1])
    assert len(np.unique(floats)) == floats.size  # no ties


def test_varied_shapes_scale_spatial_sizes_and_sequence_lengths_only():
    assert varied_shape(FLOAT_SPEC, 0.75) == (3, 24, 24)  # the channel is kept
    assert varied_shape({"shape": [1, 28, 28], "dtype": "float32"}, 0.5) == (1, 14, 14)
    assert varied_shape(TOKEN_SPEC, 1.25) == (25,)
    assert varied_shape({"shape": [13], "dtype": "float32"}, 0.5) == (13,)  # features, not a length
    assert varied_shape({"shape": [3, 4], "dtype": "int64"}, 0.5) == (3, 4)


def test_size_variants_keep_what_the_source_accepts():
    seen = []

    def accepts(shapes):
        seen.append(shapes)
        return shapes[0][1] <= 32

    variants = size_variants([FLOAT_SPEC], accepts)
    assert variants == [[(3, 32, 32)], [(3, 16, 16)], [(3, 24, 24)]]
    assert [(3, 40, 40)] in seen
