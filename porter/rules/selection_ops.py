"""Rules: ops that pick, place, count or rank entries along a dim (`torch.median`/`kthvalue`, `cummax`/`cummin`,
`logcumsumexp`, `searchsorted`/`bucketize`, `scatter`/`scatter_add`, `count_nonzero`, `empty_like`, `unique`).

Layout: logcumsumexp runs on whatever layout arrives with its dim remapped; the others run in torch's order
("source"): their (values, indices) pairs and index tensors are torch's. Dtype: indices and counts are int64
(searchsorted's `out_int32`: int32). median's value is torch's lower median (the ((n - 1) // 2)-th smallest).
In-place `x.scatter_(...)` rebinds the name (the translator's handling of trailing-underscore methods).
"""

from porter.ir.values import Value, tensor
from porter.rules.op_helpers import rank_of, source_call
from porter.rules.registry import Signature, function_rule

MEDIAN = Signature.parse("(input, dim=None, keepdim=False)")


def translate_median(ctx, call):
    """A scalar without `dim`, a (values, indices) pair with it."""
    bound = call.bind(MEDIAN)
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    code = f"{ctx.runtime('median')}({ctx.join_args(args, kwargs)})"
    if "dim" in bound and bound["dim"].code != "None":
        return Value(code, "tuple", items=None)
    return tensor(code, 0, "source").but(dtype=bound["input"].dtype)


def translate_scatter(ctx, call):
    """scatter with `reduce` "add" or none (torch's deprecated "multiply" is stubbed)."""
    reduce = call.kwargs.get("reduce")
    if reduce is not None and reduce.static not in (None, "add"):
        return ctx.unsupported(f"{call.canonical}(reduce={reduce.code})", "only reduce='add' is mapped")
    return source_call("scatter", "(input, dim, index, src=None, value=None, reduce=None)",
                       rank_of("input"))(ctx, call)


function_rule("torch.median", "Tensor.median", translate=translate_median, layout="source")
function_rule("torch.kthvalue", "Tensor.kthvalue",
              translate=source_call("kthvalue", "(input, k, dim=-1, keepdim=False)", outputs="tuple"),
              layout="source")
for _name in ("cummax", "cummin"):
    function_rule(f"torch.{_name}", f"Tensor.{_name}",
                  translate=source_call(_name, "(input, dim)", outputs="tuple"), layout="source")
function_rule("torch.logcumsumexp", "Tensor.logcumsumexp", runtime="logcumsumexp", signature="(input, dim)",
              layout="any", axis_params=("dim",))
function_rule("torch.searchsorted", translate=source_call(
    "searchsorted", "(sorted_sequence, input, out_int32=False, right=False, side=None, sorter=None)",
    rank_of("input"), dtype="int"), layout="source")
function_rule("torch.bucketize", translate=source_call(
    "bucketize", "(input, boundaries, out_int32=False, right=False)", rank_of("input"), dtype="int"),
    layout="source")
function_rule("torch.scatter", "Tensor.scatter", translate=translate_scatter, layout="source")
function_rule("torch.scatter_add", "Tensor.scatter_add",
              translate=source_call("scatter_add", "(input, dim, index, src)", rank_of("input")), layout="source")
# index_add_ (kaituoxu's Conv-TasNet overlap-and-add), index_copy_, index_fill_: the in-place spellings rebind the name
function_rule("torch.index_add", "Tensor.index_add", translate=source_call(
    "index_add", "(input, dim, index, source, *, alpha=1)", rank_of("input")), layout="source")
function_rule("torch.index_copy", "Tensor.index_copy", translate=source_call(
    "index_copy", "(input, dim, index, source)", rank_of("input")), layout="source")
function_rule("torch.index_fill", "Tensor.index_fill", translate=source_call(
    "index_fill", "(input, dim, index, value)", rank_of("input")), layout="source")
function_rule("torch.count_nonzero", "Tensor.count_nonzero",
              translate=source_call("count_nonzero", "(input, dim=None)", dtype="int"), layout="source")
function_rule("torch.empty_like", runtime="empty_like", signature="(input, dtype=None)", layout="any")

UNIQUE = Signature.parse("(input, sorted=True, return_inverse=False, return_counts=False, dim=None)")


def translate_unique(ctx, call):
    """The distinct values (rank 1 without `dim`), or a tuple with the inverse indices and counts asked for."""
    bound = call.bind(UNIQUE)
    flags = [bound.get(name) for name in ("return_inverse", "return_counts")]
    if any(flag is not None and flag.static not in (True, False) for flag in flags):
        return ctx.unsupported(f"{call.canonical}(return_inverse=/return_counts= not a constant)",
                               "whether it returns a tuple must be known when converting")
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    code = f"{ctx.runtime('unique')}({ctx.join_args(args, kwargs)})"
    dim = bound.get("dim")
    source = bound["input"]
    along = dim is not None and dim.code != "None"
    values = tensor(code, source.rank if along else 1, "source").but(dtype=source.dtype)
    if not any(flag is not None and flag.static for flag in flags):
        return values
    items = [values, tensor("", 1 if along else source.rank, "source").but(dtype="int"),  # the inverse
             tensor("", 1, "source").but(dtype="int")]  # the counts
    items = [items[0]] + [item for item, flag in zip(items[1:], flags, strict=True) if flag is not None and flag.static]
    return Value(code, "tuple", items=tuple(item.with_code(f"{code}[{i}]") for i, item in enumerate(items)))


function_rule("torch.unique", "Tensor.unique", translate=translate_unique, layout="source")
