"""Rules: weight normalisation of a layer, `torch.nn.utils.weight_norm` (legacy, parameters `weight_g`/`weight_v`),
`torch.nn.utils.parametrizations.weight_norm` (state_dict keys `parametrizations.weight.original0/1`), and their
removal (`remove_weight_norm`, `parametrize.remove_parametrizations`).

Each call takes a layer and returns it (torch swaps its class for a parametrized subclass; so does the runtime): the
result is the same module to the translator, with the layout behaviour of the layer it wraps, so
`self.conv = weight_norm(nn.Conv1d(...))` still runs channels-last. The weight transform (g and v in the layer's
stored layout, loaded under torch's names) is the runtime's (porter/runtime/weight_norm.py).
"""

from porter.ir.values import python
from porter.rules.registry import Signature, function_rule

APPLY_SIGNATURE = Signature.parse("(module, name='weight', dim=0)")
REMOVE_SIGNATURE = Signature.parse("(module, name='weight', leave_parametrized=True)")


def translate_module_wrapper(runtime, signature):
    """A call that hands back the layer it is given, reparametrized by the runtime function `runtime`."""

    def translate(ctx, call):
        bound = call.bind(signature)
        module = bound["module"]
        rest = {name: ctx.plain(bound[name]) for name in signature.params[1:] if name in bound}
        code = f"{ctx.runtime(runtime)}({ctx.join_args([module], rest)})"
        if module.kind == "module":
            return module.but(code=code)
        return python(code)

    return translate


function_rule("torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm",
              translate=translate_module_wrapper("weight_norm", APPLY_SIGNATURE), layout="source",
              returns_module_argument=True)
function_rule("torch.nn.utils.parametrizations.weight_norm",
              translate=translate_module_wrapper("parametrized_weight_norm", APPLY_SIGNATURE), layout="source",
              returns_module_argument=True)
function_rule("torch.nn.utils.remove_weight_norm", "torch.nn.utils.weight_norm.remove_weight_norm",
              "torch.nn.utils.parametrize.remove_parametrizations",
              translate=translate_module_wrapper("remove_weight_norm", REMOVE_SIGNATURE), layout="source",
              returns_module_argument=True)
