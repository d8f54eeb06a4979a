"""Rules: products and distances (`torch.tensordot`, `dot`/`inner` of vectors, `mv`, `baddbmm`, `addmm`, `addbmm`,
`addmv`, `addr`, `cdist`, `dist`, `cross`/`linalg.cross`) and the pseudo-inverse (`linalg.pinv`, `pinverse`).

Layout "source": their dim arguments and matrix axes are torch's, so operands go back to torch's order first.
"""

from porter.rules.op_helpers import fixed_rank, rank_of, source_call
from porter.rules.registry import function_rule


def _tensordot_rank(bound):
    a, b, dims = bound.get("a"), bound.get("b"), bound.get("dims")
    if a is None or b is None or a.rank is None or b.rank is None:
        return None
    if dims is None:
        contracted = 2
    elif isinstance(dims.static, int) and not isinstance(dims.static, bool):
        contracted = dims.static
    elif isinstance(dims.static, (tuple, list)) and len(dims.static) == 2:
        first = dims.static[0]
        contracted = len(first) if isinstance(first, (tuple, list)) else 1
    else:
        return None
    return a.rank + b.rank - 2 * contracted


function_rule("torch.tensordot", translate=source_call("tensordot", "(a, b, dims=2)", _tensordot_rank),
              layout="source")
function_rule("torch.dot", "Tensor.dot", "torch.vdot", "Tensor.vdot",
              translate=source_call("dot", "(input, other)", fixed_rank(0)), layout="source")
function_rule("torch.mv", "Tensor.mv", translate=source_call("mv", "(input, vec)", fixed_rank(1)), layout="source")
function_rule("torch.baddbmm", "Tensor.baddbmm",
              translate=source_call("baddbmm", "(input, batch1, batch2, beta=1, alpha=1)", fixed_rank(3)),
              layout="source")
# beta * input + alpha * a product (HF GPT-2's Conv1D: `torch.addmm(bias, x.view(-1, nx), weight)`)
for _name, _operands, _rank in (("addmm", "mat1, mat2", 2), ("addbmm", "batch1, batch2", 2), ("addmv", "mat, vec", 1),
                                ("addr", "vec1, vec2", 2)):
    function_rule(f"torch.{_name}", f"Tensor.{_name}", layout="source", translate=source_call(
        _name, f"(input, {_operands}, *, beta=1, alpha=1)", fixed_rank(_rank)))
function_rule("torch.cdist", translate=source_call("cdist", "(x1, x2, p=2.0, compute_mode=None)", rank_of("x1")),
              layout="source")
function_rule("torch.dist", "Tensor.dist", translate=source_call("dist", "(input, other, p=2)", fixed_rank(0)),
              layout="source")


def _broadcast_rank(bound):
    ranks = [bound[name].rank for name in ("input", "other") if name in bound and bound[name].is_tensor]
    return max(ranks) if len(ranks) == 2 and None not in ranks else None


function_rule("torch.cross", "Tensor.cross",
              translate=source_call("cross", "(input, other, dim=None)", _broadcast_rank), layout="source")
function_rule("torch.linalg.cross", translate=source_call("linalg_cross", "(input, other, dim=-1)", _broadcast_rank),
              layout="source")
function_rule("torch.linalg.pinv",
              translate=source_call("linalg_pinv", "(input, *, atol=None, rtol=None, hermitian=False)",
                                    rank_of("input")), layout="source")
function_rule("torch.pinverse", "Tensor.pinverse", translate=source_call("pinverse", "(input, rcond=1e-15)",
                                                                        rank_of("input")), layout="source")
