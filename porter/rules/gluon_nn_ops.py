"""Rules: MXNet's neural-network operators called through `F` (`mx.nd`/`mx.sym`) -> porter/runtime/gluon_nn_ops.py
(F.Pooling, F.contrib.AdaptiveAvgPooling2D, F.pad, F.contrib.BilinearResize2D, F.UpSampling, channels-last like
the layers they stand for; F.ones_like and F.zeros_like in any layout), torch's rules under mxnet's parameter names
(F.Dropout, F.swapaxes), and the layout-aware slices F.slice and F.slice_axis (a channels-last tensor is sliced as
it lies, its begin/end/step entries or axis reordered)."""

import ast

from porter.ir.values import python, remap_axis, tensor
from porter.rules.gluon_routing import via_rule
from porter.rules.registry import FUNCTION_RULES, Signature, function_rule

OPS = "mxnet.ndarray."
CL = "channels_last"

function_rule(OPS + "Pooling", runtime="gluon_pooling", layout=CL,
              signature="(data, kernel=(), pool_type='max', global_pool=False, cudnn_off=False, "
                        "pooling_convention='valid', stride=(), pad=(), p_value=None, count_include_pad=None, "
                        "layout=None, name=None)")
function_rule(OPS + "contrib.AdaptiveAvgPooling2D", runtime="gluon_adaptive_avg_pooling2d", layout=CL,
              signature="(data, output_size=(), name=None)")
function_rule(OPS + "pad", OPS + "Pad", runtime="gluon_pad", layout=CL,
              signature="(data, mode, pad_width, constant_value=0.0, name=None)")
function_rule(OPS + "UpSampling", runtime="gluon_upsampling", layout=CL,
              signature="(*data, scale, sample_type='nearest', num_args=1, num_filter=0, multi_input_mode='concat', "
                        "workspace=512, name=None)")

_RESIZE = Signature.parse("(data, like=None, height=1, width=1, scale_height=None, scale_width=None, mode='size', "
                          "align_corners=True, name=None)")


def translate_bilinear_resize(ctx, call):
    """F.contrib.BilinearResize2D: the image resized channels-last; a `like` tensor is read as it lies (only its
    size matters), its layout passed along."""
    bound = call.bind(_RESIZE)
    data = ctx.to_layout(bound.pop("data"), CL, 4)
    like = bound.pop("like", None)
    kwargs = {k: ctx.plain(v) for k, v in bound.items() if k != "name"}
    if like is not None:
        kwargs["like"] = like if like.is_tensor else ctx.plain(like)
        kwargs["like_channels_last"] = python(str(bool(like.channels_last)), static=bool(like.channels_last))
    code = f"{ctx.runtime('gluon_bilinear_resize2d')}({ctx.join_args([data], kwargs)})"
    return tensor(code, 4, CL)


function_rule(OPS + "contrib.BilinearResize2D", translate=translate_bilinear_resize, layout=CL)

_DROPOUT = Signature.parse("(data, p=0.5, mode='training', axes=(), cudnn_off=False, name=None)")


def translate_dropout(ctx, call):
    """F.Dropout: torch's dropout, active in training (mode 'training': as autograd.is_training() says, which the
    port's `training` argument carries; mode 'always': always)."""
    bound = call.bind(_DROPOUT)
    mode = bound.get("mode")
    if mode is not None and mode.static not in ("training", "always"):
        raise ValueError(f"mode={mode.code} is not supported")
    axes = bound.get("axes")
    always = mode is not None and mode.static == "always"
    if axes is not None and axes.static not in ((), [], None):
        # one mask shared along `axes` (GluonNLP's variational dropout over time, `axes=(0,)`): Gluon's axis order
        data = ctx.to_layout(bound["data"], "source")
        p = bound.get("p", python("0.5", static=0.5))
        active = "True" if always else "training"
        return tensor(f"{ctx.runtime('gluon_shared_dropout')}({data.code}, p={p.code}, axes={axes.code}, "
                      f"training={active})", data.rank, "source")
    kwargs = {"p": bound.get("p", python("0.5", static=0.5)),
              "training": python("True", static=True) if always else python("training")}
    rule = FUNCTION_RULES["torch.nn.functional.dropout"]
    return ctx.apply_declarative(rule, type(call)("torch.nn.functional.dropout", [bound["data"]], kwargs,
                                                  call.line))


function_rule(OPS + "Dropout", translate=translate_dropout, layout="any")
function_rule(OPS + "swapaxes", OPS + "SwapAxis", layout="any", translate=via_rule(
    "torch.transpose", "(data, dim1=0, dim2=0, name=None)", {"dim1": "dim0", "dim2": "dim1"},
    defaults={"dim0": "0", "dim1": "0"}))
for _name in ("ones_like", "zeros_like"):  # the same shape in whatever layout `data` lies
    function_rule(OPS + _name, runtime=f"gluon_{_name}", signature="(data, name=None)", layout="any")

_SLICE = Signature.parse("(data, begin, end, step=(), name=None)")


def _entries(value, rank):
    """A literal begin/end/step tuple padded with None to `rank` entries, or None when not literal."""
    static = value.static if value is not None else ()
    if static is None:  # a literal holding None (`end=(None, None)`) has no static value: read its text
        try:
            static = ast.literal_eval(value.code)
        except (ValueError, SyntaxError):
            return None
    if not isinstance(static, (tuple, list)) or len(static) > rank:
        return None
    return list(static) + [None] * (rank - len(static))


def translate_slice(ctx, call):
    """F.slice(data, begin, end, step): a channels-last tensor is sliced as it lies when the tuples are literal
    (their entries moved as its axes are), else in Gluon's order."""
    bound = call.bind(_SLICE)
    data = bound["data"]
    runtime = ctx.runtime("gluon_slice")
    if data.channels_last and data.rank is not None:
        tuples = [_entries(bound.get(name), data.rank) for name in ("begin", "end", "step")]
        if None not in tuples:
            moved = []
            for entries in tuples:
                held = [None] * data.rank
                for dim, entry in enumerate(entries):
                    held[remap_axis(dim, data.rank)] = entry
                moved.append(repr(tuple(held)))
            return tensor(f"{runtime}({data.code}, {', '.join(moved)})", data.rank, CL)
    plain = ctx.plain(data)
    args = [ctx.plain(bound[name]).code for name in ("begin", "end") if name in bound]
    step = f", {ctx.plain(bound['step']).code}" if "step" in bound else ""
    return tensor(f"{runtime}({plain.code}, {', '.join(args)}{step})", plain.rank)


_SLICE_AXIS = Signature.parse("(data, axis, begin, end, name=None)")


def translate_slice_axis(ctx, call):
    """F.slice_axis(data, axis, begin, end): a channels-last tensor is sliced along the axis its `axis` lies at
    (a literal axis), else in Gluon's order."""
    bound = call.bind(_SLICE_AXIS)
    data, axis = bound["data"], bound["axis"]
    runtime = ctx.runtime("gluon_slice_axis")
    rest = ", ".join(ctx.plain(bound[name]).code for name in ("begin", "end"))
    if data.channels_last and data.rank is not None and isinstance(axis.static, int):
        return tensor(f"{runtime}({data.code}, {remap_axis(axis.static, data.rank)}, {rest})", data.rank, CL)
    plain = ctx.plain(data)
    return tensor(f"{runtime}({plain.code}, {ctx.plain(axis).code}, {rest})", plain.rank)


function_rule(OPS + "slice", OPS + "crop", translate=translate_slice, layout="any")
function_rule(OPS + "slice_axis", translate=translate_slice_axis, layout="any")
