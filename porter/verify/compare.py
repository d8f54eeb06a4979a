"""The equivalence assertion: shapes, dtypes and NaN/Inf masks first, then error relative to the output's scale."""

import numpy as np


def relative_error(expected, actual):
    """max |expected - actual| / max(1, max |expected|) over finite elements (0.0 when nothing is finite)."""
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    finite = np.isfinite(expected) & np.isfinite(actual)
    if not finite.any():
        return 0.0
    scale = max(1.0, float(np.abs(expected[finite]).max()))
    return float(np.abs(expected[finite] - actual[finite]).max()) / scale


def assert_equivalent(expected, actual, tolerance=1e-4, what="output"):
    """Assert that `actual` (Keras) reproduces `expected` (torch): shape, NaN/Inf pattern, then scaled error."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert expected.shape == actual.shape, f"{what}: shape {actual.shape} != torch {expected.shape}"
    assert np.array_equal(np.isnan(expected), np.isnan(actual)), f"{what}: NaN pattern differs"
    assert np.array_equal(np.isinf(expected), np.isinf(actual)), f"{what}: Inf pattern differs"
    finite = np.isfinite(expected)
    assert np.array_equal(expected[~finite & ~np.isnan(expected)], actual[~finite & ~np.isnan(actual)]), \
        f"{what}: infinities differ in sign"
    error = relative_error(expected, actual)
    assert error <= tolerance, f"{what}: error {error:.3g} relative to output scale exceeds {tolerance:g}"
    return error
