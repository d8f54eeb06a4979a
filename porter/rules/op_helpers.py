"""Shared translate builders of the common-op rule families (reorder_ops, pointwise_ops, products, selection_ops):
a runtime call in torch's order with a known result rank/dtype, or the declarative translation with a dtype noted.
"""

from porter.ir.values import Value, tensor
from porter.rules.registry import Signature


def source_call(runtime, signature, rank=None, dtype=None, outputs="tensor"):
    """A translate running `runtime` on every argument in torch's order. `rank(bound)`: the result's rank from the
    bound argument Values (None: unknown); `outputs` "tuple": a (values, indices) pair in torch's order."""
    parsed = Signature.parse(signature)

    def translate(ctx, call):
        bound = call.bind(parsed)
        code = runtime_call_code(ctx, call, runtime)
        if outputs == "tuple":
            return Value(code, "tuple", items=None)
        return tensor(code, rank(bound) if rank else None, "source").but(dtype=dtype)

    return translate


def runtime_call_code(ctx, call, runtime):
    """`runtime(...)` called with every argument of `call` in torch's order, as written."""
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    return f"{ctx.runtime(runtime)}({ctx.join_args(args, kwargs)})"


def declarative_with_dtype(dtype):
    """The rule's declared translation, its result's dtype recorded (bool signbit, int64 counts)."""

    def translate(ctx, call):
        return ctx.apply_declarative(ctx.function_rule(call.canonical), call).but(dtype=dtype)

    return translate


def rank_of(name, delta=0):
    """rank(bound) for source_call: argument `name`'s rank plus `delta` (None when unknown)."""

    def rank(bound):
        value = bound.get(name)
        return value.rank + delta if value is not None and value.is_tensor and value.rank is not None else None

    return rank


def fixed_rank(count):
    return lambda bound: count
