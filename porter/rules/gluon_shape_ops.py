"""Rules: MXNet's reshape, transpose and squeeze (`F.reshape`, `F.transpose`, `F.squeeze`, and the NDArray methods
`x.reshape(...)`, `x.transpose(...)`, `x.squeeze(...)` on Gluon values) -> porter/runtime/gluon_shape_ops.py.

A reshape that only splits or merges the channel dim of a channels-last image (GluonCV's channel shuffle,
`(0, -4, groups, -1, -2)` / swapaxes / `(0, -3, -2)`) keeps the image's layout the way torch's view does
(porter/rules/tensor_ops.py); a literal transpose relabels axes like torch's permute. Anything else runs in
Gluon's own axis order (a channels-last tensor converted back first; rank-3 sequences are never transposed)."""

import ast

from porter.ir.layout import layout_of_order, reduced_order
from porter.ir.values import physical_order, python, tensor
from porter.rules.registry import Signature, function_rule
from porter.rules.tensor_ops import layout_kept_result, translate_permute, view_orders_keeping_layout

OPS = "mxnet.ndarray."
IMAGE_RANK = 4
_RESHAPE_TEXT = "(data, *dims, shape=None, reverse=False, name=None)"
_TRANSPOSE_TEXT = "(data, *given, axes=None, name=None)"
_SQUEEZE_TEXT = "(data, axis=None, inplace=False, name=None)"
_RESHAPE, _TRANSPOSE = Signature.parse(_RESHAPE_TEXT), Signature.parse(_TRANSPOSE_TEXT)
_SQUEEZE = Signature.parse(_SQUEEZE_TEXT)


def reshape_rank(codes, rank):
    """The rank mxnet's reshape gives a rank-`rank` input for shape `codes` (Values), or None when a code that
    decides it is not a literal. The two sizes after a -4 only split one dim, so they need not be literal; an entry
    read from the model (`self.radix`) is a size (special codes are written as literals), one dim: the runtime
    refuses the reshape if it turns out otherwise."""
    count, source, i = 0, 0, 0
    while i < len(codes):
        code = codes[i].static
        if code is None and codes[i].kind == "python" and _is_read_size(codes[i].code):
            code = 1
        if not isinstance(code, int) or isinstance(code, bool):
            return None
        if code == -2:
            count, source = count + rank - source, rank
        elif code == -3:
            count, source = count + 1, source + 2
        elif code == -4:
            count, source, i = count + 2, source + 1, i + 2
        elif code >= -1:
            count, source = count + 1, source + 1
        else:
            return None
        i += 1
    return count if source <= rank and i == len(codes) else None


def _copied_to(codes, dim):
    """The result dim into which shape `codes` (Values, reshape_rank can count them) copy the input's `dim` whole
    (a 0, or within a -2), or None when a code that reaches it merges, splits or resizes it (-3, -4, -1, a
    size)."""
    out, source, i = 0, 0, 0
    while i < len(codes) and source <= dim:
        code = codes[i].static if isinstance(codes[i].static, int) else 1  # a size read from the model
        if code == 0 and source == dim:
            return out
        if code == -2:
            return out + dim - source
        taken, given = {-3: (2, 1), -4: (1, 2)}.get(code, (1, 1))
        source, out, i = source + taken, out + given, i + (3 if code == -4 else 1)
    return None


def _is_read_size(code):
    """An entry written as a name or attribute read (`channels`, `self.radix`), not an expression."""
    try:
        written = ast.parse(code, mode="eval").body
    except SyntaxError:
        return False
    while isinstance(written, ast.Attribute):
        written = written.value
    return isinstance(written, ast.Name)


def _shape_codes(bound):
    """The reshape's shape entries as Values (a literal entry with its static int), or None when the shape is not
    written out as a tuple."""
    shape = bound.get("shape")
    if shape is None:
        dims = list(bound.get("dims", ()))
        if len(dims) != 1:
            return dims or None
        shape = dims[0]
    if shape.items is not None:
        return list(shape.items)
    try:
        written = ast.parse(shape.code, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(written, (ast.Tuple, ast.List)):
        return None
    codes = []
    for item in written.elts:
        text = ast.unparse(item)
        try:
            codes.append(python(text, static=ast.literal_eval(item)))
        except ValueError:
            codes.append(python(text))
    return codes


def translate_reshape(ctx, call):
    """F.reshape keeping a channels-last (or permuted) tensor's layout when it only regroups the channel dim;
    the runtime checks at trace time that the sizes group so (else it goes through Gluon's order)."""
    bound = call.bind(_RESHAPE)
    data = bound["data"]
    codes = _shape_codes(bound)
    reverse = bound.get("reverse")
    # a channels-last value of unknown rank came from a layer porter could not see into (a block built by a
    # helper function): an image; the runtime refuses any other rank rather than guess
    rank = data.rank if data.rank is not None else (IMAGE_RANK if data.channels_last else None)
    if codes is not None and data.is_tensor and rank is not None and (reverse is None or reverse.static is False):
        data = data.but(rank=rank)
        count = reshape_rank(codes, rank)
        channel_out = _copied_to(codes, physical_order(data)[-1])
        orders = view_orders_keeping_layout(data, count, channel_out) if count is not None else None
        if orders is not None:
            order, out_order = orders
            shape = f"({', '.join(ctx.plain(v).code for v in codes)}{',' if len(codes) == 1 else ''})"
            return layout_kept_result(f"{ctx.runtime('gluon_reshape_in_layout')}({data.code}, {order}, "
                                      f"{out_order}, {shape})", out_order)
    result = ctx.apply_declarative(RESHAPE, call)
    count = reshape_rank(codes, rank) if codes is not None and rank is not None and reverse is None else None
    return result.but(rank=count) if result.is_tensor and result.rank is None and count is not None else result


def translate_transpose(ctx, call):
    """F.transpose with literal axes on a tensor of known rank: torch's permute (a relabelling, no data moved)."""
    bound = call.bind(_TRANSPOSE)
    data, axes = bound["data"], bound.get("axes")
    given = list(bound.get("given", ()))
    if axes is None and len(given) == 1 and given[0].kind == "tuple":
        axes = given[0]
    static = axes.static if axes is not None else tuple(v.static for v in given)
    if data.is_tensor and data.rank is not None and isinstance(static, (tuple, list)) and \
            all(isinstance(a, int) and not isinstance(a, bool) for a in static):
        dims = list(static) if static else list(reversed(range(data.rank)))
        if len(dims) == data.rank:
            return translate_permute(ctx, type(call)("torch.permute", [data], {"dims": _literal(dims)}, call.line))
    return ctx.apply_declarative(TRANSPOSE, call)


def _literal(dims):
    return python(repr(tuple(dims)), static=tuple(dims))


# the declared behaviour (Gluon's order) is what a call falls back to when its translate cannot keep the layout
RESHAPE = function_rule(OPS + "reshape", OPS + "Reshape", runtime="gluon_reshape", signature=_RESHAPE_TEXT,
                        layout="source", translate=translate_reshape, keeps_dtype=True)
TRANSPOSE = function_rule(OPS + "transpose", runtime="gluon_transpose", signature=_TRANSPOSE_TEXT, layout="source",
                          rank_delta=0, translate=translate_transpose, keeps_dtype=True)


def _static_axes(value, rank):
    """The literal axis or axes of a squeeze as non-negative dims (None when not literal or out of range)."""
    static = value.static if value is not None else None
    axes = [static] if isinstance(static, int) and not isinstance(static, bool) else static
    if not isinstance(axes, (tuple, list)) or not axes or \
            not all(isinstance(a, int) and not isinstance(a, bool) and -rank <= a < rank for a in axes):
        return None
    return sorted({a + rank if a < 0 else a for a in axes})


def translate_squeeze(ctx, call):
    """F.squeeze(data, axis): literal axes of a tensor of known rank are removed where they lie, whatever its layout
    (a video net's pooled (N, 1, 1, 1, C) features squeezed over axes (2, 3, 4) give (N, C): no data moved); other
    calls run in Gluon's order (no axis: every size-1 axis, mxnet keeping one axis of an all-ones shape)."""
    bound = call.bind(_SQUEEZE)
    data = bound["data"]
    axes = _static_axes(bound.get("axis"), data.rank) if data.is_tensor and data.rank is not None else None
    if axes is None or len(axes) == data.rank:  # every axis removed: mxnet's (1,), in Gluon's order
        return ctx.apply_declarative(SQUEEZE, call)
    order = physical_order(data)
    out_order = reduced_order(order, axes)
    stored = sorted(order.index(a) for a in axes)
    result = tensor(f"{ctx.runtime('gluon_squeeze')}({data.code}, axis={tuple(stored)!r})", len(out_order))
    return result.but(layout=layout_of_order(out_order), dtype=data.dtype)


SQUEEZE = function_rule(OPS + "squeeze", runtime="gluon_squeeze", signature=_SQUEEZE_TEXT, layout="source",
                        translate=translate_squeeze, keeps_dtype=True)
