"""The equivalence assertion: shapes, dtypes and NaN/Inf masks first, then error relative to the output's scale."""

import numpy as np


def nonfinite_difference(expected, actual):
    """Where the NaN/Inf patterns of two same-shaped arrays differ, as a phrase; None when they agree.

    The masks come first in every comparison: errors are then measured over the finite elements only, which is
    sound only because NaN and Inf fall in the same elements (with the same sign) on both sides.
    """
    expected64, actual64 = np.asarray(expected, np.float64), np.asarray(actual, np.float64)
    for name, mask in (("NaN", np.isnan), ("Inf", np.isinf)):
        want, got = mask(expected64), mask(actual64)
        if not np.array_equal(want, got):
            first = tuple(int(i) for i in np.argwhere(want != got)[0])
            return (f"{name} pattern differs ({int(np.sum(want != got))} elements, first at {first}: "
                    f"torch {expected64[first]!r}, keras {actual64[first]!r})")
    infinite = np.isinf(expected64)
    if not np.array_equal(np.sign(expected64[infinite]), np.sign(actual64[infinite])):
        return "infinities differ in sign"
    return None


def relative_error(expected, actual, floor=1.0, where=None):
    """max |expected - actual| / max(floor, max |expected|), NaN/Inf masks first, never NaN itself.

    inf when the shapes differ or the NaN/Inf patterns do (`nonfinite_difference`); otherwise the error over the
    finite elements (those in `where` too, when given; the scale is taken over all finite elements), 0.0 when
    there are none. With floor=0 and a zero scale, only an exact match is 0.0 (anything else is inf).
    """
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    if expected.shape != actual.shape or nonfinite_difference(expected, actual) is not None:
        return np.inf
    finite = np.isfinite(expected)
    judged = finite if where is None else finite & np.asarray(where, bool)
    if not judged.any():
        return 0.0
    scale = max(float(floor), float(np.abs(expected[finite]).max(initial=0.0)))
    difference = float(np.abs(expected[judged] - actual[judged]).max())
    if scale == 0.0:
        return 0.0 if difference == 0.0 else np.inf
    return difference / scale


def assert_equivalent(expected, actual, tolerance=1e-4, what="output"):
    """Assert that `actual` (Keras) reproduces `expected` (torch): shape, NaN/Inf pattern, then scaled error."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert expected.shape == actual.shape, f"{what}: shape {actual.shape} != torch {expected.shape}"
    difference = nonfinite_difference(expected, actual)
    assert difference is None, f"{what}: {difference}"
    error = relative_error(expected, actual)
    assert error <= tolerance, f"{what}: error {error:.3g} relative to output scale exceeds {tolerance:g}"
    return error


class Comparison:
    """One torch/Keras tensor pair compared: `problem` is None when they agree (errors are over finite elements)."""

    __slots__ = ("what", "abs_error", "rel_error", "problem")

    def __init__(self, what, abs_error=0.0, rel_error=0.0, problem=None):
        self.what, self.abs_error, self.rel_error, self.problem = what, abs_error, rel_error, problem

    def __repr__(self):
        return f"Comparison({self.what!r}, abs={self.abs_error:.3g}, rel={self.rel_error:.3g}, {self.problem!r})"


def compare_arrays(expected, actual, tolerance=1e-4, what="output", masks_only=False, check_dtype=True):
    """Compare in the order that explains a difference best: shape, dtype, NaN mask, Inf mask and signs, error.

    `masks_only` (extreme input magnitudes) stops after the masks: the error is measured but not judged.
    """
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        return Comparison(what, np.inf, np.inf, f"{what}: shape {actual.shape} != torch {expected.shape}")
    if check_dtype and expected.dtype != actual.dtype:
        return Comparison(what, np.inf, np.inf, f"{what}: dtype {actual.dtype} != torch {expected.dtype}")
    if expected.dtype.kind not in "fc":
        equal = np.array_equal(expected, actual)
        differing = int(np.sum(expected != actual))
        return Comparison(what, 0.0 if equal else np.inf, 0.0 if equal else np.inf,
                          None if equal else f"{what}: {differing} of {expected.size} values differ")
    expected64, actual64 = expected.astype(np.float64), actual.astype(np.float64)
    difference = nonfinite_difference(expected64, actual64)
    if difference is not None:
        return Comparison(what, np.inf, np.inf, f"{what}: {difference}")
    finite = np.isfinite(expected64)
    abs_error = float(np.abs(expected64[finite] - actual64[finite]).max()) if finite.any() else 0.0
    rel_error = relative_error(expected64, actual64)
    problem = None
    if not masks_only and not rel_error <= tolerance:
        problem = (f"{what}: max abs error {abs_error:.3g}, {rel_error:.3g} relative to the output's scale "
                   f"(tolerance {tolerance:g})")
    return Comparison(what, abs_error, rel_error, problem)


def gradient_errors(expected, actual, floor_fraction=1e-3, vanishing=()):
    """{name: error of actual[name] relative to max |expected[name]|} for gradients keyed alike.

    Each tensor's max is floored at `floor_fraction` of the largest gradient, and the tensors named in `vanishing`
    (zero in exact arithmetic: the bias of a conv followed by a training-mode BatchNorm, whose float32 value is
    pure round-off) are judged against the largest gradient itself; a gradient that should vanish and does not
    still counts.
    """
    arrays = [np.asarray(g, np.float64) for g in expected.values()]
    peak = max([float(np.abs(g[np.isfinite(g)]).max(initial=0.0)) for g in arrays] + [0.0])  # NaN-free
    floor = max(peak * floor_fraction, 1e-30)
    return {name: relative_error(want, actual[name], floor=max(peak, 1e-30) if name in vanishing else floor)
            for name, want in expected.items()}


def cosine_similarity(expected, actual):
    """Cosine of the angle between two tensors flattened (1.0 for two zero tensors), over the finite elements once
    the NaN/Inf patterns agree (0.0, no agreement, when they do not)."""
    expected = np.asarray(expected, np.float64).ravel()
    actual = np.asarray(actual, np.float64).ravel()
    if expected.shape != actual.shape or nonfinite_difference(expected, actual) is not None:
        return 0.0
    finite = np.isfinite(expected)
    expected, actual = expected[finite], actual[finite]
    norms = float(np.linalg.norm(expected) * np.linalg.norm(actual))
    if norms == 0.0:
        return 1.0 if not expected.any() and not actual.any() else 0.0
    return float(np.dot(expected, actual) / norms)


def argmax_agreement(expected, actual):
    """Fraction of rows whose argmax over the last axis agrees (for classifier logits)."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    return float(np.mean(np.argmax(expected, axis=-1) == np.argmax(actual, axis=-1)))


def is_classifier_output(array):
    """(N, classes) floating output with more than one class: argmax agreement is meaningful."""
    array = np.asarray(array)
    return array.ndim == 2 and array.shape[-1] > 1 and array.dtype.kind == "f"


def explained_by_round_off(port_error, torch_error, scale, tolerance):
    """Whether a float32 result `port_error` (absolute, against torch in float64) from torch's float64 one is as
    precise as torch's own float32 (`torch_error`, absolute): within `tolerance` of the scale plus 10x torch's own
    error. A saturating gate or an attention's softmax over large logits magnifies round-off in either framework."""
    return port_error <= tolerance * scale + 10 * torch_error


def in_float64(inputs):
    """Numpy inputs with the floating ones in float64 (integer token ids as they are)."""
    return [np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f" else x for x in inputs]
