"""Rules: complex numbers as rotary embeddings use them (`torch.polar`, `torch.view_as_complex`,
`torch.view_as_real`, `torch.complex`), `torch.outer` and the FFTs `torch.fft.fft/ifft/fft2/ifft2`.

The port keeps complex values as TensorFlow complex64 tensors: their products, reshapes and slices are TF's own
ops with torch's meaning, and XLA compiles them. Layout "source": the pair axis of view_as_real/view_as_complex
is torch's last axis. Rank: view_as_complex drops the pair axis, view_as_real adds it, outer gives a matrix.
"""

from porter.ir.values import tensor
from porter.rules.registry import Signature, function_rule


def _ranked(runtime, signature, delta=None, fixed=None):
    parsed = Signature.parse(signature)

    def translate(ctx, call):
        bound = call.bind(parsed)
        arguments, keywords = [], {}
        for name in parsed.params:  # positional up to the first one left out, by keyword after it
            if name in bound:  # (`torch.fft.fft(x, dim=-2)`: not `fft(x, -2)`, which hands -2 as `n`)
                if keywords or len(arguments) < parsed.params.index(name):
                    keywords[name] = ctx.plain(bound[name])
                else:
                    arguments.append(ctx.plain(bound[name]))
        first = arguments[0]
        rank = fixed if fixed is not None else (first.rank + delta if first.is_tensor and first.rank is not None
                                                else None)
        return tensor(f"{ctx.runtime(runtime)}({ctx.join_args(arguments, keywords)})", rank)

    return translate


function_rule("torch.polar", translate=_ranked("polar", "(abs, angle)", delta=0), layout="source")
function_rule("torch.complex", translate=_ranked("complex_from_parts", "(real, imag)", delta=0), layout="source")
function_rule("torch.view_as_complex", translate=_ranked("view_as_complex", "(input)", delta=-1), layout="source")
function_rule("torch.view_as_real", translate=_ranked("view_as_real", "(input)", delta=1), layout="source")
function_rule("torch.outer", "torch.ger", "Tensor.outer", "Tensor.ger",
              translate=_ranked("outer", "(input, vec2)", fixed=2), layout="source")
function_rule("torch.fft.fft", translate=_ranked("fft", "(input, n=None, dim=-1, norm=None)", delta=0),
              layout="source")
function_rule("torch.fft.ifft", translate=_ranked("ifft", "(input, n=None, dim=-1, norm=None)", delta=0),
              layout="source")
function_rule("torch.fft.fft2", translate=_ranked("fft2", "(input, s=None, dim=(-2, -1), norm=None)", delta=0),
              layout="source")
function_rule("torch.fft.ifft2", translate=_ranked("ifft2", "(input, s=None, dim=(-2, -1), norm=None)", delta=0),
              layout="source")
