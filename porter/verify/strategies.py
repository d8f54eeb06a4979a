"""Hypothesis strategies for equivalence checks: one drawn `Case` -> the inputs both models get.

A case is four numbers (batch, magnitude exponent, size variant, seed), so a failure prints as one short line
that reproduces it exactly. Inputs are generated from the case with numpy, never drawn element by element:
float values are N(0, 1) * 10**exponent where the exponent is an integer in [-3, 3] plus a jitter in
[-0.25, 0.25] (continuous values: no exact ties, whose gradients differ by convention); integer inputs are
uniform in the input's [low, high) (the smallest Embedding's size when the manifest leaves `high` open).
"""

import numpy as np
from hypothesis import strategies as st

EXTREME_EXPONENT = 2.5  # |exponent| beyond this: outputs are compared on NaN/Inf masks only
SIZE_FACTORS = (0.5, 0.75, 1.25)  # spatial sizes / sequence lengths tried besides the manifest's


class Case:
    """One drawn example: batch size, value magnitude 10**exponent, index of the size variant, numpy seed."""

    __slots__ = ("batch", "exponent", "variant", "seed")

    def __init__(self, batch=2, exponent=0.0, variant=0, seed=0):
        self.batch, self.exponent, self.variant, self.seed = int(batch), float(exponent), int(variant), int(seed)

    def __str__(self):
        return f"batch={self.batch},exponent={self.exponent:g},variant={self.variant},seed={self.seed}"

    def __repr__(self):
        return f"Case({self})"

    def __eq__(self, other):
        return isinstance(other, Case) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    @classmethod
    def parse(cls, text):
        """Inverse of str(): 'batch=3,exponent=-1.25,variant=0,seed=7' (missing fields take defaults)."""
        fields = {}
        for part in text.replace(" ", "").split(","):
            if not part:
                continue
            key, _, value = part.partition("=")
            if key not in cls.__slots__ or not value:
                raise ValueError(f"bad case {text!r}: expected batch=B,exponent=E,variant=V,seed=S")
            fields[key] = float(value) if key == "exponent" else int(value)
        return cls(**fields)

    @property
    def extreme(self):
        """Magnitudes where float32 round-off legitimately differs: judged on NaN/Inf masks only."""
        return abs(self.exponent) > EXTREME_EXPONENT


def cases(variants=1, min_batch=1, max_batch=8):
    """Strategy of Case: batch in [min_batch, max_batch], exponent k + jitter (k in [-3, 3]), any size variant."""

    @st.composite
    def draw_case(draw):
        batch = draw(st.integers(min_batch, max_batch), label="batch")
        exponent = draw(st.integers(-3, 3), label="exponent") + draw(st.integers(-250, 250), label="jitter") / 1000
        variant = draw(st.integers(0, max(variants, 1) - 1), label="variant")
        seed = draw(st.integers(0, 2**31 - 1), label="seed")
        return Case(batch, exponent, variant, seed)

    return draw_case()


def input_arrays(specs, shapes, case):
    """The inputs of `case`: one numpy array per spec (dtype/low/high from the spec, shape from `shapes`)."""
    rng = np.random.default_rng(case.seed)
    scale = 10.0 ** case.exponent
    arrays = []
    for spec, shape in zip(specs, shapes):
        shape = (case.batch, *shape)
        dtype = spec["dtype"]
        if dtype.startswith(("int", "uint")):
            low = int(spec["low"]) if spec.get("low") is not None else 0
            high = int(spec["high"])
            arrays.append(rng.integers(low, max(high, low + 1), size=shape).astype(dtype))
        elif dtype == "bool":
            arrays.append(rng.random(shape) < 0.5)
        else:
            values = rng.standard_normal(shape) * scale
            if spec.get("low") is not None or spec.get("high") is not None:
                values = np.clip(values, spec.get("low"), spec.get("high"))
            arrays.append(values.astype(np.float32))
    return arrays


def output_weights(shapes, seed):
    """Fixed random weights w_i (one per output shape): the gradients compared are of sum_i sum(w_i * output_i)."""
    rng = np.random.default_rng([seed, 1])
    return [rng.standard_normal(tuple(shape)).astype(np.float32) for shape in shapes]


def varied_shape(spec, factor):
    """`spec`'s shape with its spatial sizes (float rank >= 2: all but the channel) or sequence length (integer or
    bool rank 1) scaled by `factor` and rounded; other dims are kept."""
    shape = list(spec["shape"])
    if spec["dtype"] in ("float32", "float64", "float16", "bfloat16") and len(shape) >= 2:
        axes = range(1, len(shape))
    elif len(shape) == 1 and not spec["dtype"].startswith("float"):
        axes = range(1)
    else:
        axes = ()
    for axis in axes:
        shape[axis] = max(1, round(shape[axis] * factor))
    return tuple(shape)


def size_variants(specs, accepts):
    """[manifest shapes] + the scaled shapes (SIZE_FACTORS, applied to every input together) `accepts` takes."""
    base = [tuple(spec["shape"]) for spec in specs]
    variants = [base]
    for factor in SIZE_FACTORS:
        shapes = [varied_shape(spec, factor) for spec in specs]
        if shapes not in variants and accepts(shapes):
            variants.append(shapes)
    return variants
