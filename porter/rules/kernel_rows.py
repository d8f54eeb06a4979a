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
from porter.ir.values import python, tensor


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


@dataclass(frozen=True)
class OutputRows:
    """The `static` of a torch-order (O, rest) view of a convolution kernel held as Keras stores it (the WS paper's
    `weight.view(weight.size(0), -1)`): `kernel` is that kernel's (k..., I/g, O) code, `rank` its rank. A reduction
    over the rows' dim 1 that does not depend on the entries' order reads the kernel as it lies instead."""

    kernel: str
    rank: int


# reductions over a row whose value does not depend on the order of its entries (runtime names of tensor_ops)
ORDER_FREE_ROW_REDUCTIONS = frozenset({"torch_sum", "mean", "std", "var", "amax", "amin", "prod", "norm"})


def output_rows_of_kernel(value, sizes, viewed):
    """OutputRows for `value.view(O, -1)` (translated as `viewed`) when `value` is a convolution kernel held as
    Keras stores it and the sizes keep its output channels first and merge the rest; None otherwise."""
    if not value.is_tensor or value.rank is None or value.rank < 3 or value.layout != kernel_layout(value.rank) or \
            not viewed.is_tensor or len(sizes) != 2 or sizes[1].static != -1 or \
            any(size.kind in ("starred", "tuple") for size in sizes) or sizes[0].static == -1:
        return None
    return OutputRows(value.code, value.rank)


def reduced_rows(ctx, runtime, rows, dims, keep, extra):
    """`rows.<reduction>(dim=1)` of a kernel's (O, rest) rows, computed over every axis of the kernel as it lies but
    the last (its output channels): the (O,) result torch gives (`keepdim`: (O, 1)), with no transpose; None where
    the reduction or the dims are not such."""
    if runtime not in ORDER_FREE_ROW_REDUCTIONS or not isinstance(dims, (tuple, list)) or \
            sorted(d % 2 for d in dims) != [1]:
        return None
    axes = tuple(range(rows.rank - 1))
    code = f"{ctx.runtime(runtime)}({ctx.join_args([tensor(rows.kernel)], {'dim': python(repr(axes)), **extra})})"
    result = tensor(code, 1)
    return tensor(f"tf.expand_dims({code}, -1)", 2).but(unit_dims=(1,)) if keep else result


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

