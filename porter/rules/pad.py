"""Rule: `F.pad`, in whichever layout its input arrives.

A channels-last image is padded channels-last (the runtime `pad` remaps torch's pad tuple, last torch dim first,
onto the channels-last axes); a tensor held permuted (a permute left pending: DeepSpeech's lookahead pads
`x.transpose(0, 1).transpose(1, 2)`) on the axes that hold the dims (`pad_in_order`); a tensor held in torch's
order (Swin's (B, H, W, C) feature maps, sequences, a tensor whose layout porter lost) in torch's order
(`pad_in_torch_order`): padding never makes the port transpose. Dtype, rank and layout: kept.
"""

from porter.ir.values import is_permuted, physical_order
from porter.rules.registry import FunctionRule, Signature, function_rule

NAMES = ("torch.nn.functional.pad",)
SIGNATURE = Signature.parse("(input, pad, mode='constant', value=None)")
CHANNELS_LAST = FunctionRule(NAMES, "pad", SIGNATURE, "channels_last", family="pad")
TORCH_ORDER = FunctionRule(NAMES, "pad_in_torch_order", SIGNATURE, "source", family="pad",
                           extra={"same_rank": True})


def translate_pad(ctx, call):
    bound = call.bind(SIGNATURE)
    value = bound.get("input")
    if value is not None and value.is_tensor and is_permuted(value) and value.rank:
        rest = [f"{name}={ctx.plain(bound[name]).code}" for name in ("pad", "mode", "value") if name in bound]
        code = f"{ctx.runtime('pad_in_order')}({value.code}, {physical_order(value)}, {', '.join(rest)})"
        return value.but(code=code, static=None, unit_dims=None)
    channels_last = value is not None and value.is_tensor and value.channels_last
    return ctx.apply_declarative(CHANNELS_LAST if channels_last else TORCH_ORDER, call)


function_rule(*NAMES, translate=translate_pad, layout="any", same_rank=True)
