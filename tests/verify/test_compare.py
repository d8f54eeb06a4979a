"""porter.verify.compare: differences are explained in order (shape, dtype, NaN/Inf masks) before errors."""

import numpy as np
import pytest

from porter.verify.compare import (
    argmax_agreement,
    assert_equivalent,
    compare_arrays,
    cosine_similarity,
    gradient_errors,
    is_classifier_output,
    nonfinite_difference,
    relative_error,
)


def test_equal_arrays_have_no_problem():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    comparison = compare_arrays(x, x.copy())
    assert comparison.problem is None and comparison.abs_error == 0.0 and comparison.rel_error == 0.0


@pytest.mark.parametrize("actual, needle", [
    (np.zeros((3, 2), np.float32), "shape"),
    (np.zeros((2, 3), np.float64), "dtype"),
    (np.array([[np.nan, 0, 0], [0, 0, 0]], np.float32), "NaN pattern"),
    (np.array([[np.inf, 0, 0], [0, 0, 0]], np.float32), "Inf pattern"),
    (np.array([[1e-3, 0, 0], [0, 0, 0]], np.float32), "relative to the output's scale"),
])
def test_first_difference_is_named(actual, needle):
    comparison = compare_arrays(np.zeros((2, 3), np.float32), actual)
    assert needle in comparison.problem


def test_infinities_must_agree_in_sign():
    expected = np.array([np.inf, 1.0], np.float32)
    assert "sign" in compare_arrays(expected, np.array([-np.inf, 1.0], np.float32)).problem


def test_masks_only_measures_without_judging():
    expected = np.array([1e6, 2.0], np.float32)
    comparison = compare_arrays(expected, expected * 1.01, masks_only=True)
    assert comparison.problem is None and comparison.rel_error > 1e-3
    nan = compare_arrays(expected, np.array([np.nan, 2.0], np.float32), masks_only=True)
    assert "NaN" in nan.problem


def test_error_is_relative_to_the_output_scale():
    expected = np.array([1000.0, 0.0])
    assert relative_error(expected, expected + [0.05, 0.05]) == pytest.approx(5e-5)
    assert relative_error(np.array([1e-3]), np.array([2e-3])) == pytest.approx(1e-3)  # scale floor 1
    assert_equivalent(expected, expected + 0.05)
    with pytest.raises(AssertionError):
        assert_equivalent(expected, expected + 0.5)


def test_integer_outputs_compare_exactly():
    assert compare_arrays(np.array([1, 2]), np.array([1, 2])).problem is None
    assert "1 of 2 values differ" in compare_arrays(np.array([1, 2]), np.array([1, 3])).problem


def test_gradient_errors_are_relative_to_each_tensor_with_a_floor():
    expected = {"big": np.array([100.0, -50.0]), "small": np.array([1.0, 0.0]), "zero": np.zeros(3)}
    actual = {"big": np.array([100.01, -50.0]), "small": np.array([1.1, 0.0]), "zero": np.full(3, 1e-5)}
    errors = gradient_errors(expected, actual)
    assert errors["big"] == pytest.approx(1e-4)
    assert errors["small"] == pytest.approx(0.1)  # judged against its own max, not the largest gradient
    assert errors["zero"] == pytest.approx(1e-5 / 0.1)  # floor: 1e-3 of the largest gradient
    assert gradient_errors({"a": np.ones(2)}, {"a": np.ones(3)})["a"] == np.inf


def test_cosine_and_argmax():
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    assert cosine_similarity(a, 2 * a) == pytest.approx(1.0)
    assert cosine_similarity(a, -a) == pytest.approx(-1.0)
    assert cosine_similarity(np.zeros(3), np.zeros(3)) == 1.0
    assert argmax_agreement(a, a[::-1]) == 0.0
    assert is_classifier_output(a) and not is_classifier_output(a[:, :1]) and not is_classifier_output(a[0])


NAN, INF = np.nan, np.inf


@pytest.mark.parametrize("expected, actual", [
    ([1.0, 2.0], [NAN, NAN]),  # everything NaN where torch is finite: nothing finite is left to measure
    ([1.0, 2.0], [1.0, NAN]),
    ([NAN, 2.0], [1.0, 2.0]),
    ([1.0, 2.0], [INF, 2.0]),
    ([INF, 2.0], [-INF, 2.0]),
    ([NAN, 2.0], [INF, 2.0]),
])
def test_a_nonfinite_difference_is_an_infinite_error(expected, actual):
    expected, actual = np.array(expected), np.array(actual)
    assert nonfinite_difference(expected, actual) is not None
    assert relative_error(expected, actual) == np.inf
    assert compare_arrays(expected, actual).problem is not None
    assert cosine_similarity(expected, actual) == 0.0
    assert gradient_errors({"w": expected}, {"w": actual})["w"] == np.inf
    with pytest.raises(AssertionError):
        assert_equivalent(expected, actual)


def test_matching_nonfinite_elements_leave_the_finite_ones_to_judge():
    expected = np.array([NAN, INF, -INF, 1.0])
    assert nonfinite_difference(expected, expected.copy()) is None
    assert relative_error(expected, expected.copy()) == 0.0
    assert relative_error(expected, expected + [0, 0, 0, 0.5]) == pytest.approx(0.5)
    assert relative_error(np.full(3, NAN), np.full(3, NAN)) == 0.0  # same masks, nothing finite to measure


def test_relative_error_floor_where_and_shape():
    assert relative_error(np.zeros(2), np.zeros(3)) == np.inf
    assert relative_error(np.array([1e-3, 0.0]), np.array([2e-3, 0.0]), floor=0.0) == pytest.approx(1.0)
    assert relative_error(np.zeros(2), np.zeros(2), floor=0.0) == 0.0
    assert relative_error(np.zeros(2), np.array([0.0, 1e-9]), floor=0.0) == np.inf  # never 0/0 = NaN
    expected, actual = np.array([4.0, 1.0]), np.array([4.0, 3.0])
    assert relative_error(expected, actual, where=[True, False]) == 0.0
    assert relative_error(expected, actual, where=[False, True]) == pytest.approx(0.5)  # scaled by all of expected
    assert relative_error(np.array([1.0, NAN]), np.array([1.0, 2.0]), where=[True, False]) == np.inf  # masks: all


def test_a_nan_gradient_does_not_hide_the_others():
    expected = {"nan": np.array([NAN, 1.0]), "w": np.array([2.0, 0.0])}
    errors = gradient_errors(expected, {"nan": np.array([NAN, 1.0]), "w": np.array([2.0, 0.5])})
    assert errors == {"nan": 0.0, "w": pytest.approx(0.25)}
