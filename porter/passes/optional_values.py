"""Values that may be None: a forward parameter its caller leaves at its default `None` (pytorchcv's
`DualPathSequential.forward(self, x1, x2=None)`), and a loop-carried name that enters a loop as None and leaves it
an image (`x1, x2 = self.dual_path_scheme(module, x1, x2)` over the container's children: x2 is None on the first
turn, the image a dual-path unit returns after).

Such a value is known, not untyped: a lambda run as written may take it (function_attributes.py), and a loop body
that leaves it an image is translated again with it entering as that image (None on the first turn reads as an
absent image: `x2 is not None` stays a run-time test), so the blocks called on later turns are translated for the
image they are really handed.
"""

from porter.ir.values import NoneDefault


def holds_none(value):
    """Whether `value` is None: the literal `None`, or a parameter still at its None default (passed on as it is:
    a lambda's parameter, a tuple's item)."""
    return value.kind == "python" and (value.code == "None" and value.static is None or
                                       isinstance(value.static, NoneDefault))


def optional_image(first, second):
    """The image one of two paths leaves a variable holding where the other leaves it None (`x1, x2 =
    scheme_ordinal(...)` keeping x2 None, `x1, x2 = scheme(...)` making it an image): None otherwise."""
    if holds_none(first) and second.is_tensor:
        return second
    if holds_none(second) and first.is_tensor:
        return first
    return None


def optional_tuple(first, second):
    """The tuple one of two paths leaves a variable holding where the other leaves it None (lucidrains' diffusion
    U-Net: `scale_shift = None`, then `scale_shift = time_emb.chunk(2, dim=1)` under an `if`), marked as one that may
    be None (`may_be_none`): None otherwise."""
    for none, other in ((first, second), (second, first)):
        if holds_none(none) and other.kind == "tuple":
            return other.but(may_be_none=True)
    return None
