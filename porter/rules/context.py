"""What a rule's `translate(ctx, call)` sees of the translation: a narrow context API, never the translator.

The expression translator (porter/passes) builds one `RuleContext` around itself and passes it to every rule it
dispatches to. Each operation a rule may use is an explicit method here; nothing else of the translator is
reachable (no `__getattr__`), so what rules depend on is this file, and rules never import porter.passes.
"""

from porter.ir.layout import to_layout, unify


class RuleContext:
    """The operations op rules need while translating one call, delegated to the translator that owns them."""

    __slots__ = ("_translator",)

    def __init__(self, translator):
        self._translator = translator

    # --- emitted code ----------------------------------------------------------------------------------------
    def runtime(self, name):
        """Mark the runtime definition `name` as used by the port; returns the name to emit for it (a different one
        when the source file uses `name` itself)."""
        return self._translator.ctx.use(name)

    def join_args(self, args, kwargs):
        """Argument text of a call from Values: `args` positional, `kwargs` by name (a `**name` key is spread)."""
        return self._translator.join_args(args, kwargs)

    def unsupported(self, construct, reason):
        """A `not_supported(...)` stub Value for a call porter cannot translate; the construct is reported (PORTING.md,
        manifest) with the current source line and `reason`."""
        return self._translator.stub(construct, reason)

    # --- layout ----------------------------------------------------------------------------------------------
    def plain(self, value):
        """`value` as torch-order code (for runtime functions and calls that know nothing of porter's layouts):
        tensors converted back to torch's axis order, a size materialised as a tuple, list items converted."""
        return self._translator.as_plain(value)

    def to_layout(self, value, wanted, rank=None):
        """`value` converted to `wanted` ("channels_last" | "source" | "any"); `rank` when the value's is unknown."""
        return to_layout(self._translator.ctx, value, wanted, rank)

    def unify(self, values, unknown_rank=True):
        """Tensor operands of an elementwise op brought to one layout: (converted values, layout, rank);
        `unknown_rank`: channels-last images of unknown rank may stay so (the rule needs no axis, or the channel's)."""
        return unify(self._translator.ctx, values, unknown_rank=unknown_rank)

    def compared(self, value, other):
        """`value` as the operand of a comparison with `other` (a Python number or tensor): promoted where torch
        compares across dtypes and TensorFlow will not (a bool mask against 0, an integer tensor against a float
        one)."""
        return self._translator.promote_compared(value, other)

    def dim_size(self, value, dim):
        """The size of torch dim `dim` of `value` (a tensor or size Value in any layout), as a python Value."""
        return self._translator.dim_size(value, dim)

    def layout_flag(self, value):
        """The `, channels_last=True` argument `torch_size` needs for a channels-last `value`, else ""."""
        return self._translator.layout_flag(value)

    def variables(self):
        """The translator's current variable bindings (name -> Value): a pending einsum re-emits its operands only
        while they are unchanged (EinsumRecipe's `env`)."""
        return self._translator.env

    # --- other rules -----------------------------------------------------------------------------------------
    def function_rule(self, canonical):
        """The function rule registered for the canonical name `canonical` (KeyError when there is none)."""
        return self._translator.ctx.function_rules[canonical]

    def apply_declarative(self, rule, call):
        """`call` translated by `rule`'s declared behaviour (runtime function, layout, axis parameters), ignoring its
        own `translate`: for rules that adjust a call and then defer to another rule."""
        return self._translator.declarative_rule(rule, call)
