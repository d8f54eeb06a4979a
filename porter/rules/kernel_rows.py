"""Rules: weight standardisation of a convolution's kernel as timm writes it (NF-Nets' ScaledStdConv2d, BiT's
StdConv2d): `F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None, weight=..., training=True,
momentum=0., eps=eps).reshape_as(self.weight)`, handed to `F.conv2d`.

The port holds a kernel as the Keras convolution stores it, (k..., I/g, O). In torch's order its rows
`reshape(1, O, -1)` are (I/g, k...) merged, which the kernel holds in another order: made exactly, they cost a
transpose there and one back per convolution (NF-RegNet-B0: 261 Transposes). Batch norm's statistics over a row do not
depend on the order of its entries, so the standardised kernel is computed where it lies (`standardized_kernel`:
moments over every axis but the last) and `reshape_as` of the kernel hands it back as the kernel it is.

The exact Values stay: the rows `reshape` gives and the rows batch norm gives are still the torch-order tensors
(`view_in_layout`, as before) for any other use; `KernelRows`, their `static`, says which kernel they are rows of,
and is what batch norm and `reshape_as` read. Code nothing reads is never written. The rules are declared with
their families (norm.py's F.batch_norm, tensor_ops.py's view_as / reshape_as); their translations are here.
"""

from dataclasses import dataclass, replace

from porter.ir.layout import kernel_layout
from porter.ir.values import tensor


@dataclass(frozen=True)
class KernelRows:
    """The `static` of a torch-order (1, O, rest) view of a convolution kernel held as Keras stores it:
    `kernel`: code of that kernel's (k..., I/g, O) tensor as it lies (standardised, after batch norm); `source`:
    code of the weight the rows were taken from (what `reshape_as` is asked to take the shape of); `rank`: the
    kernel's rank; `rows`: the code of the view with `{kernel}` where the kernel goes (the exact rows of a kernel)."""

    kernel: str
    source: str
    rank: int
    rows: str


def rows_of_kernel(value, sizes, viewed):
    """KernelRows for `value.reshape(*sizes)` (translated as `viewed`) when `value` is a convolution kernel held as
    Keras stores it and the sizes keep its output channels whole as batch norm's channels and merge the rest
    (`(1, O, -1)`; batch norm of `(O, -1)` would normalise across the output channels); None otherwise."""
    if not value.is_tensor or value.rank is None or value.rank < 3 or value.layout != kernel_layout(value.rank) or \
            not viewed.is_tensor or viewed.code.count(value.code) != 1 or "{" in viewed.code:
        return None
    statics = [size.static for size in sizes]
    if len(statics) != 3 or statics[0] != 1 or statics[2] != -1 or any(size.kind in ("starred", "tuple")
                                                                        for size in sizes):
        return None
    return KernelRows(value.code, value.code, value.rank, viewed.code.replace(value.code, "{kernel}"))


def translate_batch_norm(ctx, call):
    """F.batch_norm: of a kernel's rows in training mode without running statistics (weight standardisation), the
    standardised kernel where it lies, with the rows' exact Value kept for other uses; else the declared rule."""
    rule = ctx.function_rule("torch.nn.functional.batch_norm")
    bound = call.bind(rule.signature)
    rows = bound.get("input")
    found = rows.static if rows is not None and isinstance(rows.static, KernelRows) else None
    statistics = [bound.get(name) for name in ("running_mean", "running_var")]
    training = bound.get("training")
    if found is None or any(s is None or s.code != "None" for s in statistics) or \
            training is None or training.static is not True:
        return ctx.apply_declarative(rule, call)
    affine = {name: ctx.plain(bound[name]) for name in ("weight", "bias") if name in bound}
    eps = ctx.plain(bound["eps"]) if "eps" in bound else None
    arguments = ctx.join_args([tensor(found.kernel)], {**affine, **({"eps": eps} if eps is not None else {})})
    kernel = f"{ctx.runtime('standardized_kernel')}({arguments})"
    # the rows batch norm gives, exactly: the standardised kernel's rows (for any other use; never read, they go)
    return rows.but(code=found.rows.replace("{kernel}", kernel), static=replace(found, kernel=kernel))


def translate_reshape_as(ctx, call):
    """`rows.reshape_as(weight)` / `view_as`: the kernel the rows were taken from (standardised) as it lies, when
    `rows` are a kernel's and `weight` is that kernel; else the declared rule (torch's order)."""
    rule = ctx.function_rule("Tensor.view_as")
    args = call.all_args()
    found = args[0].static if args and isinstance(args[0].static, KernelRows) else None
    if found is None or len(args) != 2 or args[1].code != found.source or \
            args[1].layout != kernel_layout(found.rank):
        return ctx.apply_declarative(rule, call)
    return tensor(found.kernel, found.rank).but(layout=kernel_layout(found.rank))

