"""Rules: MXNet's attention operators as GluonNLP calls them -> porter/runtime/gluon_attention_ops.py: BERT's fused
contrib.interleaved_matmul_selfatt_qk / _valatt (time-major projections interleaved per head), contrib.div_sqrt_dim,
and softmax / log_softmax when they use mxnet's extra arguments (softmax's `length` with `use_length`,
`temperature`, `dtype`): plain calls stay torch's softmax (axis remapped on channels-last tensors), the others run
in Gluon's order."""

from porter.ir.values import tensor
from porter.rules.gluon_routing import via_rule
from porter.rules.registry import Signature, function_rule

OPS = "mxnet.ndarray."
SOURCE = "source"

function_rule(OPS + "contrib.interleaved_matmul_selfatt_qk", runtime="gluon_interleaved_matmul_selfatt_qk",
              layout=SOURCE, rank=3, signature="(queries_keys_values, heads, name=None)")
function_rule(OPS + "contrib.interleaved_matmul_selfatt_valatt", runtime="gluon_interleaved_matmul_selfatt_valatt",
              layout=SOURCE, rank=3, signature="(queries_keys_values, attention, heads, name=None)")
function_rule(OPS + "contrib.div_sqrt_dim", runtime="gluon_div_sqrt_dim", layout=SOURCE, same_rank=True,
              signature="(data, name=None)")

# mxnet 1.9's parameter order: softmax's second input is `length`; log_softmax has none
_SOFTMAX = {"softmax": "(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False, name=None)",
            "log_softmax": "(data, axis=-1, temperature=None, dtype=None, use_length=False, name=None)"}
_PLAIN = ("data", "axis", "name")


def _softmax_rule(name):
    signature = Signature.parse(_SOFTMAX[name])
    as_torch = via_rule(f"torch.nn.functional.{name}", _SOFTMAX[name], {"axis": "dim"}, defaults={"dim": "-1"})

    def translate(ctx, call):
        """F.softmax / F.log_softmax: torch's when only the axis is given (or the extras hold their defaults), else
        the runtime's with every argument, in Gluon's order."""
        bound = call.bind(signature)
        extras = {k: v for k, v in bound.items() if k not in _PLAIN and v.code not in ("None", "False")}
        if not extras:
            return as_torch(ctx, call)
        data = ctx.plain(bound["data"])
        kwargs = {k: ctx.plain(v) for k, v in bound.items() if k not in ("data", "name")}
        return tensor(f"{ctx.runtime(f'gluon_{name}')}({ctx.join_args([data], kwargs)})", data.rank, SOURCE)

    return translate


for _name in _SOFTMAX:
    function_rule(OPS + _name, layout="any", translate=_softmax_rule(_name))
