"""Rules: short-time Fourier transforms and their windows (`torch.stft`, `torch.istft`, `torch.hann_window`,
`torch.hamming_window`) and the real FFTs (`torch.fft.rfft`, `torch.fft.irfft`), run by porter/runtime/spectral.py
in torch's axis order (layout "source"). Ranks: stft adds the frequency axis (and the real/imaginary pair when
`return_complex=False`), istft drops it, windows are vectors, the real FFTs keep the rank."""

from porter.ir.values import tensor
from porter.rules.registry import Signature, function_rule

STFT = Signature.parse("(input, n_fft, hop_length=None, win_length=None, window=None, center=True, "
                       "pad_mode='reflect', normalized=False, onesided=None, return_complex=None)")
ISTFT = Signature.parse("(input, n_fft, hop_length=None, win_length=None, window=None, center=True, "
                        "normalized=False, onesided=None, length=None, return_complex=False)")


def _keyword_call(ctx, runtime, signature, call, rank_of):
    """`runtime(first, name=value, ...)` for the arguments `call` binds, all but the first by keyword."""
    bound = call.bind(signature)
    first = ctx.plain(bound["input"]) if "input" in bound else ctx.plain(call.all_args()[0])
    keywords = {name: ctx.plain(value) for name, value in bound.items() if name != "input"}
    return tensor(f"{ctx.runtime(runtime)}({ctx.join_args([first], keywords)})", rank_of(first, bound))


def _stft(ctx, call):
    def rank(first, bound):
        pairs = bound.get("return_complex")
        extra = 1 if pairs is not None and pairs.static is False else 0
        return first.rank + 1 + extra if first.is_tensor and first.rank is not None else None
    return _keyword_call(ctx, "stft", STFT, call, rank)


def _istft(ctx, call):
    def rank(first, bound):
        return first.rank - 1 if first.is_tensor and first.rank is not None else None
    return _keyword_call(ctx, "istft", ISTFT, call, rank)


def _window(runtime, signature):
    parsed = Signature.parse(signature)

    def translate(ctx, call):
        bound = call.bind(parsed)
        args = [ctx.plain(bound["window_length"])]
        keywords = {name: ctx.plain(value) for name, value in bound.items()
                    if name in ("periodic", "alpha", "beta", "dtype")}
        return tensor(f"{ctx.runtime(runtime)}({ctx.join_args(args, keywords)})", 1)

    return translate


def _real_fft(runtime):
    parsed = Signature.parse("(input, n=None, dim=-1, norm=None)")

    def translate(ctx, call):
        bound = call.bind(parsed)
        first = ctx.plain(bound["input"])
        keywords = {name: ctx.plain(value) for name, value in bound.items() if name != "input"}
        return tensor(f"{ctx.runtime(runtime)}({ctx.join_args([first], keywords)})", first.rank)

    return translate


function_rule("torch.stft", "Tensor.stft", translate=_stft, layout="source")
function_rule("torch.istft", "Tensor.istft", translate=_istft, layout="source")
function_rule("torch.hann_window", translate=_window(
    "hann_window", "(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False)"),
    layout="source")
function_rule("torch.hamming_window", translate=_window(
    "hamming_window", "(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, "
    "device=None, requires_grad=False)"), layout="source")
function_rule("torch.fft.rfft", translate=_real_fft("rfft"), layout="source")
function_rule("torch.fft.irfft", translate=_real_fft("irfft"), layout="source")
