"""Rules: linear algebra of square matrices (`torch.linalg.qr`/`torch.qr`, `slogdet`, `det`, `logdet`, `inverse`/
`linalg.inv`, `linalg.solve`, `cholesky`): Glow's invertible 1x1 convolution draws an orthogonal weight with QR
and adds `slogdet` of it to the log-likelihood; normalising flows and Gaussian layers solve and factor.

Layout "source": the matrices are torch's last two dims. Results keep the input's dtype (float64 where the source
asks `.double()`); the pairs (Q, R) and (sign, logabsdet) are tuples of tensors, named as torch's.
"""

from porter.ir.values import Value, tensor
from porter.rules.op_helpers import rank_of, runtime_call_code, source_call
from porter.rules.registry import Signature, function_rule


def _pair(runtime, signature, ranks):
    """A translate for an op returning two tensors: `ranks(input rank)` -> their ranks."""
    parsed = Signature.parse(signature)

    def translate(ctx, call):
        bound = call.bind(parsed)
        code = runtime_call_code(ctx, call, runtime)
        first = bound.get(parsed.params[0])
        rank = first.rank if first is not None and first.is_tensor else None
        dtype = first.dtype if first is not None and first.is_tensor else None
        return Value(code, "tuple", items=tuple(tensor("", r, "source").but(dtype=dtype) for r in ranks(rank)))

    return translate


def _same(rank):
    return rank, rank


def _dropped_two(rank):
    return (None, None) if rank is None else (rank - 2, rank - 2)


function_rule("torch.linalg.qr", translate=_pair("linalg_qr", "(A, mode='reduced')", _same), layout="source")
function_rule("torch.qr", "Tensor.qr", translate=_pair("torch_qr", "(input, some=True)", _same), layout="source")
function_rule("torch.slogdet", "Tensor.slogdet", "torch.linalg.slogdet",
              translate=_pair("slogdet", "(A)", _dropped_two), layout="source")
function_rule("torch.det", "Tensor.det", "torch.linalg.det",
              translate=source_call("det", "(A)", rank_of("A", -2)), layout="source")
function_rule("torch.logdet", "Tensor.logdet", translate=source_call("logdet", "(A)", rank_of("A", -2)),
              layout="source")
function_rule("torch.inverse", "Tensor.inverse", "torch.linalg.inv",
              translate=source_call("linalg_inv", "(A)", rank_of("A")), layout="source")
function_rule("torch.linalg.solve", translate=source_call("linalg_solve", "(A, B, *, left=True)", rank_of("B")),
              layout="source")
function_rule("torch.linalg.cholesky", translate=source_call("linalg_cholesky", "(A, *, upper=False)",
                                                             rank_of("A")), layout="source")
function_rule("torch.cholesky", "Tensor.cholesky", translate=source_call("torch_cholesky", "(input, upper=False)",
                                                                        rank_of("input")), layout="source")
