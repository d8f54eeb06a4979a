"""`super().forward(x)` / `super(Cls, self).forward(x)` (and Gluon's `super(...).hybrid_forward(F, x)`, which the
frontend reads as `.forward(x)`) in a forward: the parent's computation, as Python's MRO finds it.

The port's forward is Keras's `call`, so the call becomes `super(Owner, self).call(...)` with the class that holds
the source's call written out: zero-argument `super()` would name whichever class the translated body lands in (a
subclass inheriting the forward gets its own copy of it). The parent is an in-file class (its `call`, translated for
these arguments' layouts like any call of that class) or a torch/Gluon layer a rule covers (`class
LayerNorm2d(nn.LayerNorm)`: the runtime layer's own `call`, its input in the rule's layout)."""

import libcst as cst

from porter.frontend.imports import dotted_name


def super_forward_owner(translator, node):
    """The class (ClassInfo) whose parent `node`, a `super(...).forward(...)` call, reaches past, or None when `node`
    is not one."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "forward" and isinstance(func.value, cst.Call)
            and dotted_name(func.value.func) == "super" and translator.info is not None):
        return None
    named = func.value.args[0].value if func.value.args else None
    if named is not None:
        return translator.source.classes.get(dotted_name(named))
    return translator.info.owner_of("forward") or translator.info


def translate_super_forward(translator, owner, node):
    """The Value of `super(owner, self).forward(*args)`: the parent class's `call`, or the base layer's."""
    args, kwargs = translator.arg_values(node)
    translator.node_of_call = node  # (a call the translator hands to the runtime's converting call_module)
    code = f"super({owner.name}, self).call"
    parent = translator.source.classes.get(owner.bases[0]) if owner.bases else None
    if parent is not None and parent.find_method("forward") is not None:
        return translator.class_call(code, parent.name, args, kwargs)
    layer_base = owner.layer_base or (parent.layer_base if parent is not None else None)
    rule = translator.ctx.module_rules.get(layer_base) if layer_base else None
    if rule is not None:
        return translator.rule_module_call(code, rule, args, kwargs)
    container = owner.container_base or (parent.container_base if parent is not None else None)
    if container != "sequential" or translator.info is None:
        return None
    # `class Decoder(nn.Sequential)` whose forward picks its input (`super().forward(features[-1])`): the runtime
    # Sequential's call over the children its __init__ hands to super().__init__
    children = translator.module_ref_resolver().sequential_subclass(translator.info)
    return translator.sequential_call(code, children, args, kwargs, explicit=True) if children is not None else None
