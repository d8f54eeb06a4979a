"""Rules' helper: a Gluon call (legacy `F.*` or mxnet's NumPy interface) translated by another rule, a torch or
legacy Gluon one of the same meaning under other parameter names, so that the two share their layout handling."""

import ast

from porter.ir.values import python
from porter.rules.registry import FUNCTION_RULES, Signature, with_kept_dtype


def via_rule(target, signature_text, renames=None, positional=1, refused=None, defaults=None, keywords=False):
    """A translate callable: bind the call by its own `signature_text` (NumPy's, Gluon's), then translate it with the
    rule registered as `target` (a torch or legacy Gluon name): its first `positional` parameters passed
    positionally, the others under `renames` (the call's name -> the target's; parameters not named there are
    dropped: `out=`, `ctx=`, `order=`, `name=`). `refused`: the call's parameter -> the only literal porter
    supports; `defaults`: target parameter -> literal it gets when the call does not set it; `keywords`: the other
    keyword arguments pass on under their own names (a method handed to the function of the same parameters)."""
    signature = Signature.parse(signature_text)
    renames = renames or {}

    def translate(ctx, call):
        bound = call.bind(signature)
        for parameter, supported in (refused or {}).items():
            if parameter in bound and bound[parameter].code != supported:
                raise ValueError(f"{parameter}={bound[parameter].code} is not supported")
        names = list(signature.params)
        args = [bound.pop(name) for name in names[:positional] if name in bound]
        if signature.vararg in bound:
            args.extend(bound.pop(signature.vararg))
        kwargs = {renames.get(k, k): v for k, v in bound.items() if k in renames or keywords}
        for name, literal in (defaults or {}).items():
            kwargs.setdefault(name, python(literal, static=_literal(literal)))
        rule = FUNCTION_RULES[target]
        routed = type(call)(target, args, kwargs, call.line)
        result = rule.translate(ctx, routed) if rule.translate is not None else ctx.apply_declarative(rule, routed)
        return with_kept_dtype(rule, routed, result)

    return translate


def _literal(text):
    try:
        return ast.literal_eval(text)
    except ValueError:
        return None
