"""Rules: pooling (max/avg/power-average/adaptive), resizing (Upsample, F.interpolate), padding and pixel (un)shuffle.

All of them are channels-last: the runtime takes (N, *spatial, C). F.pad, which pads in whichever layout its input
arrives, is in pad.py.
"""

from porter.ir.values import Value, tensor, untyped_as_tensor
from porter.rules.registry import KEEPS_CHANNELS, ModuleRule, function_rule, module_rule

CL = "channels_last"


def _max_pool_variant(kind, dims, flag_position, plain):
    """`nn.MaxPool2d(..., return_indices=True)`, `nn.AdaptiveMaxPool2d(size, True)`: (values, indices), both held
    channels-last (the indices feed a MaxUnpool2d); any other construction is the plain pool (`plain`: its dims ->
    its rule)."""
    indices = ModuleRule((f"torch.nn.{kind}{dims}d",), f"{kind}{dims}d", CL, rank=dims + 2, outputs="tuple",
                         family="pool", channels=KEEPS_CHANNELS, items=("image", "image"))

    def variant(positional, keywords):
        flag = keywords.get("return_indices", positional[flag_position] if len(positional) > flag_position else
                            "False")
        return indices if flag.strip() == "True" else plain[dims]

    return variant


def _functional_max_pool(canonical, dims):
    """F.max_pool2d, F.adaptive_max_pool2d: with `return_indices=True`, (values, indices) both held channels-last;
    else the declared translation."""

    def translate(ctx, call):
        rule = ctx.function_rule(canonical)
        bound = call.bind(rule.signature)
        flag = bound.get("return_indices")
        if flag is None or flag.static is not True or "input" not in bound:
            return ctx.apply_declarative(rule, call)
        image = ctx.to_layout(bound["input"], CL, dims + 2)
        rest = {name: ctx.plain(value) for name, value in bound.items() if name != "input"}
        code = f"{ctx.runtime(rule.runtime)}({ctx.join_args([image], rest)})"
        values = tensor(f"{code}[0]", dims + 2, CL)
        return Value(code, "tuple", items=(values, values.with_code(f"{code}[1]").but(dtype="int")))

    return translate


def _functional_max_unpool(dims):
    """F.max_unpool2d(input, indices, ...): the input and its pool's indices both taken channels-last."""
    canonical = f"torch.nn.functional.max_unpool{dims}d"

    def translate(ctx, call):
        rule = ctx.function_rule(canonical)
        bound = call.bind(rule.signature)
        images = [ctx.to_layout(untyped_as_tensor(bound[name]), CL, dims + 2) for name in ("input", "indices")]
        rest = {name: ctx.plain(value) for name, value in bound.items() if name not in ("input", "indices")}
        return tensor(f"{ctx.runtime(rule.runtime)}({ctx.join_args(images, rest)})", dims + 2, CL)

    return translate


MAX_POOLS, ADAPTIVE_MAX_POOLS = {}, {}
for _dims in (1, 2, 3):
    _rank = _dims + 2
    MAX_POOLS[_dims] = module_rule(f"torch.nn.MaxPool{_dims}d", runtime=f"MaxPool{_dims}d", layout=CL, rank=_rank,
                                   spatial_order_free=True, channels=KEEPS_CHANNELS,
                                   variant=_max_pool_variant("MaxPool", _dims, 4, MAX_POOLS))
    module_rule(f"torch.nn.MaxUnpool{_dims}d", runtime=f"MaxUnpool{_dims}d", layout=CL, rank=_rank,
                channels=KEEPS_CHANNELS, image_args=2, params=("input", "indices", "output_size"))
    function_rule(f"torch.nn.functional.max_unpool{_dims}d", runtime=f"max_unpool{_dims}d",
                  signature="(input, indices, kernel_size, stride=None, padding=0, output_size=None)", layout=CL,
                  rank=_rank, translate=_functional_max_unpool(_dims))
    module_rule(f"torch.nn.AvgPool{_dims}d", runtime=f"AvgPool{_dims}d", layout=CL, rank=_rank,
                spatial_order_free=True, channels=KEEPS_CHANNELS)
    module_rule(f"torch.nn.AdaptiveAvgPool{_dims}d", runtime=f"AdaptiveAvgPool{_dims}d", layout=CL, rank=_rank,
                channels=KEEPS_CHANNELS)
    ADAPTIVE_MAX_POOLS[_dims] = module_rule(
        f"torch.nn.AdaptiveMaxPool{_dims}d", runtime=f"AdaptiveMaxPool{_dims}d", layout=CL, rank=_rank,
        channels=KEEPS_CHANNELS, variant=_max_pool_variant("AdaptiveMaxPool", _dims, 1, ADAPTIVE_MAX_POOLS))
    for _kind in ("ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
        module_rule(f"torch.nn.{_kind}{_dims}d", runtime=f"{_kind}{_dims}d", layout=CL, rank=_rank,
                    channels=KEEPS_CHANNELS, unbatched_in_order=True)

    function_rule(f"torch.nn.functional.max_pool{_dims}d", f"torch.max_pool{_dims}d", runtime=f"max_pool{_dims}d",
                  signature="(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
                            "return_indices=False)", layout=CL, rank=_rank, keeps_channels=True,
                  translate=_functional_max_pool(f"torch.nn.functional.max_pool{_dims}d", _dims))
    _avg_signature = "(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True"
    _avg_signature += ")" if _dims == 1 else ", divisor_override=None)"
    function_rule(f"torch.nn.functional.avg_pool{_dims}d", *(("torch.avg_pool1d",) if _dims == 1 else ()),
                  runtime=f"avg_pool{_dims}d", signature=_avg_signature, layout=CL, rank=_rank, keeps_channels=True)
    module_rule(f"torch.nn.LPPool{_dims}d", runtime=f"LPPool{_dims}d", layout=CL, rank=_rank,
                channels=KEEPS_CHANNELS)
    function_rule(f"torch.nn.functional.lp_pool{_dims}d", runtime=f"lp_pool{_dims}d",
                  signature="(input, norm_type, kernel_size, stride=None, ceil_mode=False)", layout=CL, rank=_rank,
                  keeps_channels=True)
    function_rule(f"torch.nn.functional.adaptive_avg_pool{_dims}d",
                  *(("torch.adaptive_avg_pool1d",) if _dims == 1 else ()), runtime=f"adaptive_avg_pool{_dims}d",
                  signature="(input, output_size)", layout=CL, rank=_rank, keeps_channels=True)
    function_rule(f"torch.nn.functional.adaptive_max_pool{_dims}d", runtime=f"adaptive_max_pool{_dims}d",
                  signature="(input, output_size, return_indices=False)", layout=CL, rank=_rank,
                  keeps_channels=True,
                  translate=_functional_max_pool(f"torch.nn.functional.adaptive_max_pool{_dims}d", _dims))

module_rule("torch.nn.Upsample", runtime="Upsample", layout=CL, channels=KEEPS_CHANNELS)
module_rule("torch.nn.UpsamplingNearest2d", runtime="UpsamplingNearest2d", layout=CL, rank=4, channels=KEEPS_CHANNELS)
module_rule("torch.nn.UpsamplingBilinear2d", runtime="UpsamplingBilinear2d", layout=CL, rank=4,
            channels=KEEPS_CHANNELS)
module_rule("torch.nn.PixelShuffle", runtime="PixelShuffle", layout=CL, rank=4)
module_rule("torch.nn.PixelUnshuffle", runtime="PixelUnshuffle", layout=CL, rank=4)

function_rule("torch.nn.functional.interpolate", runtime="interpolate",
              signature="(input, size=None, scale_factor=None, mode='nearest', align_corners=None, "
                        "recompute_scale_factor=None, antialias=False)", layout=CL, keeps_channels=True)
function_rule("torch.nn.functional.upsample", runtime="upsample",
              signature="(input, size=None, scale_factor=None, mode='nearest', align_corners=None)", layout=CL,
              keeps_channels=True)
function_rule("torch.nn.functional.upsample_nearest", runtime="upsample_nearest",
              signature="(input, size=None, scale_factor=None)", layout=CL, keeps_channels=True)
function_rule("torch.nn.functional.upsample_bilinear", runtime="upsample_bilinear",
              signature="(input, size=None, scale_factor=None)", layout=CL, rank=4, keeps_channels=True)
function_rule("torch.nn.functional.pixel_shuffle", "torch.pixel_shuffle", runtime="pixel_shuffle",
              signature="(input, upscale_factor)", layout=CL, rank=4)
function_rule("torch.nn.functional.pixel_unshuffle", "torch.pixel_unshuffle", runtime="pixel_unshuffle",
              signature="(input, downscale_factor)", layout=CL, rank=4)
