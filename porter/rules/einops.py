"""Rules: einops' `rearrange`, `reduce`, `repeat`, `einsum`, `pack`, `unpack` and its layers `Rearrange` / `Reduce`
(`einops.layers.torch`), ported to porter's own runtime (porter/runtime/einops.py): the port needs no einops.

Layout: a literal pattern applied to a channels-last tensor is rewritten, not the tensor: the left side's groups
are put in the order the Keras tensor stores the torch dims (`b c h w` becomes `b h w c`), so no transpose runs.
A result of the same rank that keeps channels on axis 1 (a channel shuffle, space-to-depth, a window partition)
stays channels-last the same way; any other result (`b c h w -> b (h w) c`, tokens for a transformer; heads moved
off axis 1) is in torch's order; `b c ... -> ...` reads the spatial axes `...` stands for before the channels. Without a literal pattern, or with `...` elsewhere on the left,
the tensor goes back to torch's order first. The layers take torch's order.
A pattern that keeps every axis where it is or makes it a unit axis (`o ... -> o 1 1 1`, a kernel's per-filter
mean) runs on any layout, its result held the same way; a rearrange of a channels-last image that splits its
channels off (`b (h c) x y -> b h c (x y)`) is a reshape with the heads' order left pending (einops_pending.py).
Dtype: kept (reduce's mean of an integer tensor is einops' error too).
"""

import ast
import re

from porter.ir.values import EinsumRecipe, Value, physical_order, tensor
from porter.rules.einops_pending import pending_rearrange
from porter.rules.registry import ModuleRule, Signature, function_rule, module_rule

_GROUPS = re.compile(r"\([^)]*\)|[^\s()]+")
SIGNATURES = {"rearrange": Signature.parse("(tensor, pattern)"), "repeat": Signature.parse("(tensor, pattern)"),
              "reduce": Signature.parse("(tensor, pattern, reduction)")}


def _literal(value):
    """The Python literal a Value's code spells (a pattern string), else None."""
    try:
        return ast.literal_eval(value.code)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _groups(side):
    return _GROUPS.findall(side)


def _names(group):
    return set(group.strip("()").split())


def _image_to_image(left, right):
    """Whether a same-rank pattern keeps an image: each channel name (left axis 1) stays on axis 1 or joins a
    spatial axis (a channel shuffle, space-to-depth and back, windows folded into the batch); heads split off to an
    axis of their own (`b (h d) x y -> b h (x y) d`) make no image."""
    spatial = set().union(*(_names(g) for g in left[2:]))
    return bool(_names(right[1]) & _names(left[1])) and all(
        name in _names(right[1]) or any(name in _names(g) and _names(g) & spatial for g in right[2:])
        for name in _names(left[1]))


def _pattern_for_layout(pattern, value):
    """(pattern, result layout) running `pattern` on `value` as the Keras tensor stores it, or None."""
    if not isinstance(pattern, str) or pattern.count("->") != 1 or not value.is_tensor:
        return None
    left, right = (_groups(side) for side in pattern.split("->"))
    if value.rank is None and value.channels_last and "..." not in pattern:
        value = value.but(rank=len(left))  # (a block's result of unknown rank: the pattern names its axes)
    order = physical_order(value)
    if order is None or order == list(range(len(order))):
        return None
    if left[2:] == ["..."] and value.layout == "channels_last" and "..." not in left[:2]:
        # `b (h d) ... -> b h (...) d`: the spatial axes `...` stands for sit between batch and channels
        return f"{left[0]} ... {left[1]} -> {' '.join(right)}", "source"
    kept = _positions_kept(left, right, len(order))
    if kept is not None:  # `o ... -> o 1 1 1` of a kernel held (kh, kw, i, o): each axis stays or becomes 1
        expanded_left, expanded_right = kept
        return (f"{' '.join(expanded_left[d] for d in order)} -> {' '.join(expanded_right[d] for d in order)}",
                value.layout)
    if len(left) != len(order) or "..." in pattern:
        return None
    physical_left = " ".join(left[d] for d in order)
    if len(right) == len(left) and value.layout == "channels_last" and _image_to_image(left, right):
        return f"{physical_left} -> {' '.join(right[d] for d in order)}", "channels_last"
    return f"{physical_left} -> {' '.join(right)}", "source"


def _positions_kept(left, right, rank):
    """(left, right) with `...` spelled out as names, for a pattern whose every axis stays where it is or becomes
    a unit axis (`o ... -> o 1 1 1`, weight standardization's per-filter mean): it runs on a tensor in any layout
    with both sides in stored order, the result held the same way. None for any other pattern."""
    def spelled(side):
        if side.count("...") > 1 or any("..." in g and g != "..." for g in side):
            return None
        if "..." not in side:
            return list(side)
        at = side.index("...")
        covered = rank - (len(side) - 1)
        return side[:at] + [f"ellipsis{i}" for i in range(covered)] + side[at + 1:] if covered >= 0 else None

    if ("..." in left) != ("..." in right) and "..." in right:
        return None
    expanded_left = spelled(left)
    if expanded_left is None or len(expanded_left) != rank:
        return None
    if "..." in right:
        expanded_right = spelled(right)
    else:
        expanded_right = list(right)
    if expanded_right is None or len(expanded_right) != rank:
        return None
    if not all(r == l or r in ("1", "()") for l, r in zip(expanded_left, expanded_right)) or \
            expanded_left == expanded_right or any(g.startswith("(") for g in expanded_left):
        return None
    return expanded_left, expanded_right


def _image_from_features(pattern):
    """`b h (x y) d -> b x y (h d)` for `b h (x y) d -> b (h d) x y`: tokens folded back into an image whose channels
    merge the feature axis (the left side's last), written channels-last; None for any other pattern."""
    if not isinstance(pattern, str) or pattern.count("->") != 1 or "..." in pattern:
        return None
    left, right = (_groups(side) for side in pattern.split("->"))
    if len(right) < 4 or not left or not _names(left[-1]) <= _names(right[1]):  # (rank 3: a sequence, no image)
        return None
    return f"{' '.join(left)} -> {' '.join([right[0], *right[2:], right[1]])}"


def _result_rank(pattern, rank):
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        return None
    left, right = (_groups(side) for side in pattern.split("->"))
    if "..." not in pattern:
        return len(right)
    if rank is None or "..." not in left:
        return None
    covered = rank - (len(left) - 1)
    return len(right) - 1 + covered if "..." in right else len(right)


def _translate(op):
    signature = SIGNATURES[op]

    def translate(ctx, call):
        bound = call.bind(signature)
        value = bound["tensor"]
        pattern = _literal(bound["pattern"]) if "pattern" in bound else None
        keywords = {name: ctx.plain(v) for name, v in bound.items() if name not in signature.params}
        runtime = ctx.runtime(f"einops_{op}")
        rewritten = _pattern_for_layout(pattern, value)
        # (an image's channels split into heads, `b (h c) x y -> b h c (x y)`: a reshape where the image lies, the
        # heads' order left pending for the einsums after it, where the rewritten pattern would move the data)
        pending = pending_rearrange(ctx, value, pattern, "".join(
            f", {name}={v.code}" for name, v in keywords.items())) if op == "rearrange" and (
            rewritten is None or value.channels_last and rewritten[1] == "source") else None
        if pending is not None:
            code, result = pending
            return result.with_code(code).but(dtype=value.dtype)
        if rewritten is not None:
            physical, layout = rewritten
            arguments = [value.with_code(value.code), ctx.plain(bound["pattern"]).with_code(repr(physical))]
            rank, channels = _result_rank(pattern, value.rank), None
        else:
            plain = ctx.plain(value)
            arguments = [plain, ctx.plain(bound["pattern"])]
            layout, rank = "source", _result_rank(pattern, plain.rank)
            image = _image_from_features(pattern) if op == "rearrange" else None
            if image is not None:  # the data moves anyway: it lands channels-last, as the convs after it take it
                arguments[1] = arguments[1].with_code(repr(image))
                layout, channels = "channels_last", None
        if op == "reduce":
            arguments.append(ctx.plain(bound["reduction"]))
        code = f"{runtime}({ctx.join_args(arguments, keywords)})"
        if layout == "channels_last":
            return tensor(code, rank, "channels_last").but(channels=channels, dtype=value.dtype)
        if layout.startswith("permuted:"):  # (a kernel's per-filter mean, held as the kernel is)
            return tensor(code, rank).but(layout=layout, dtype=value.dtype)
        return tensor(code, rank).but(dtype=value.dtype if value.is_tensor else None)

    return translate


def translate_einsum(ctx, call):
    """einops.einsum(x, y, ..., pattern): tensors in torch's order, the pattern last."""
    *tensors, pattern = call.args
    literal = _literal(pattern)
    if isinstance(literal, str) and literal.count("->") == 1 and "..." not in literal and "(" not in literal and \
            tensors and all(t.is_tensor and t.rank is not None for t in tensors):
        inputs, output = literal.split("->")
        sides = [side.split() for side in inputs.split(",")]
        names = {n: "abcdefghijklmnopqrstuvwxyz"[i] for i, n in enumerate(dict.fromkeys(
            n for side in sides + [output.split()] for n in side))}
        if len(sides) == len(tensors) and len(names) <= 26 and all(len(side) == t.rank for side, t in
                                                                   zip(sides, tensors)):
            # operands read in the order they are stored (a pending transpose costs nothing), as tf.einsum
            physical = ["".join(names[side[d]] for d in physical_order(t)) for side, t in zip(sides, tensors)]
            recipe = EinsumRecipe(physical, [t.code for t in tensors], "".join(names[n] for n in output.split()),
                                  ctx.variables())
            return tensor(recipe.code(), len(output.split())).but(static=recipe)
    arguments = [ctx.plain(t) for t in tensors] + [ctx.plain(pattern)]
    rank = _result_rank(_literal(pattern), None)
    return tensor(f"{ctx.runtime('einops_einsum')}({ctx.join_args(arguments, {})})", rank)


def _pack_named(pattern):
    """How many axes a literal pack pattern ('b * d') names besides '*', else None."""
    if not isinstance(pattern, str) or pattern.split().count("*") != 1:
        return None
    return len(pattern.split()) - 1


def translate_pack(ctx, call):
    """einops.pack(tensors, pattern) -> (packed, packed_shapes): tensors in torch's order; the packed tensor's rank
    is the pattern's; the packed shapes remember each input's rank under '*' for unpack."""
    bound = call.bind(Signature.parse("(tensors, pattern)"))
    tensors, pattern = ctx.plain(bound["tensors"]), bound["pattern"]
    named = _pack_named(_literal(pattern))
    ranks = None
    if named is not None and tensors.kind == "tuple" and tensors.items:
        ranks = tuple(None if item.rank is None else item.rank - named for item in tensors.items)
    code = f"{ctx.runtime('einops_pack')}({tensors.code}, {ctx.plain(pattern).code})"
    items = (tensor("", None if named is None else named + 1), Value("", "python", static=("packed", ranks)))
    return Value(code, "tuple", items=items)


def translate_unpack(ctx, call):
    """einops.unpack(packed, packed_shapes, pattern) -> list of tensors in torch's order."""
    bound = call.bind(Signature.parse("(tensor, packed_shapes, pattern)"))
    value, shapes, pattern = (ctx.plain(bound[name]) for name in ("tensor", "packed_shapes", "pattern"))
    named = _pack_named(_literal(bound["pattern"]))
    code = f"{ctx.runtime('einops_unpack')}({value.code}, {shapes.code}, {pattern.code})"
    known = bound["packed_shapes"].static
    if named is None or not (isinstance(known, tuple) and known[:1] == ("packed",) and known[1] is not None):
        return Value(code, "tuple", items=None)
    return Value(code, "tuple", items=tuple(tensor("", None if rank is None else named + rank) for rank in known[1]))


# (`value_runtime`: the function used as a value, x-transformers' `maybe(rearrange)(t, pattern, h=h)`, is the
# runtime's, taking tensors in torch's order as einops does)
for _op in SIGNATURES:
    function_rule(f"einops.{_op}", translate=_translate(_op), layout="any", keeps_dtype=_op != "reduce",
                  value_runtime=f"einops_{_op}")
function_rule("einops.einsum", translate=translate_einsum, layout="source", value_runtime="einops_einsum")
function_rule("einops.pack", translate=translate_pack, layout="source", value_runtime="einops_pack")
function_rule("einops.unpack", translate=translate_unpack, layout="source", value_runtime="einops_unpack")


def channels_last_layer_rank_delta(pattern):
    """Output rank - input rank of an einops layer whose literal `pattern` reads an image channels-last at no cost
    and whose result is no worse channels-last: a channel shuffle, space-to-depth or window fold that keeps the
    image (`b c (h p1) (w p2) -> b (c p1 p2) h w`), or a global pool to features (`b c h w -> b c`, a hybrid's
    head after its convs). None for any other pattern (tokens for a transformer, `...`, a rank-3 sequence)."""
    if not isinstance(pattern, str) or pattern.count("->") != 1 or "..." in pattern:
        return None
    left, right = (_groups(side) for side in pattern.split("->"))
    if len(left) < 4:
        return None
    if len(right) == len(left) and _image_to_image(left, right):
        return 0
    if len(right) == 2 and right[1] == left[1]:
        return 2 - len(left)
    return None


def _layer_variant(name, runtime):
    def variant(positional, keywords):
        delta = channels_last_layer_rank_delta(_literal(Value(keywords.get("pattern", positional[0] if positional
                                                                           else "None"), "python")))
        if delta is None:
            return SOURCE_LAYERS[name]
        return ModuleRule((name,), f"{runtime}ChannelsLast", "channels_last", family="einops", rank_delta=delta)

    return variant


SOURCE_LAYERS = {
    name: module_rule(name, runtime=runtime, layout="source", rank_delta="unknown",
                      variant=_layer_variant(name, runtime))
    for name, runtime in (("einops.layers.torch.Rearrange", "Rearrange"), ("einops.layers.torch.Reduce", "Reduce"))}
