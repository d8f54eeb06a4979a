"""`if isinstance(layer, MaskedConv1d):` over a loop's layer of several kinds: each branch knows which it has.

A loop over a ModuleList of mixed layers binds one of several modules (`ModuleRef.alternative_element`); a call on
it converts at run time (`call_module`) unless every one takes and returns the same layouts. Code written for such
lists tells the kinds apart itself (NVIDIA's Jasper/QuartzNet blocks: `if isinstance(l, MaskedConv1d): out, lens =
l((out, lens))` else `out = l(out)`): in the body the layer is one of the alternatives the test admits, in the
else branch one of the others, so each call is laid out for what it can be. A test porter cannot decide for every
alternative (a class it does not know, a base class no rule or in-file class names) narrows nothing.
"""

import functools

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.ir.values import ModuleRef
from porter.rules.constants import TORCH_BASE_CLASSES
from porter.rules.registry import load_all_rules

ANY_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def isinstance_narrowing(test, env, source):
    """(name, Value in the body, Value in the else branch) for `isinstance(name, C)` / `isinstance(name, (C, D))`
    where `env[name]` is a module of several known kinds the test splits; None otherwise."""
    if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2 and
            isinstance(test.args[0].value, cst.Name)):
        return None
    name = test.args[0].value.value
    value = env.get(name)
    ref = value.module if value is not None and value.kind == "module" else None
    if ref is None or ref.kind != "unknown" or not ref.alternatives:
        return None
    kinds = test.args[1].value
    classes = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    verdicts = [_is_instance(alternative, classes, source) for alternative in ref.alternatives]
    if None in verdicts or all(verdicts) or not any(verdicts):
        return None
    matching = tuple(a for a, v in zip(ref.alternatives, verdicts) if v)
    others = tuple(a for a, v in zip(ref.alternatives, verdicts) if not v)
    return name, value.but(module=_one_of(matching)), value.but(module=_one_of(others))


def _one_of(refs):
    return refs[0] if len(refs) == 1 else ModuleRef("unknown", alternatives=refs)


def _is_instance(ref, classes, source):
    """Whether module `ref` is an instance of one of `classes` (class expressions); None when porter cannot tell."""
    verdicts = [_is_instance_of(ref, node, source) for node in classes]
    if True in verdicts:
        return True
    return None if None in verdicts else False


def _is_instance_of(ref, node, source):
    name, canonical = dotted_name(node), source.imports.resolve(node)
    if canonical in ANY_MODULE:
        return True
    if canonical in TORCH_BASE_CLASSES:  # `nn.modules.batchnorm._BatchNorm`: any of the layers deriving from it
        verdicts = [_is_instance_of_rule(ref, layer, source) for layer in TORCH_BASE_CLASSES[canonical]]
        return True if True in verdicts else None if None in verdicts else False
    known_rule = canonical in _layer_rule_names()
    if name not in source.classes and not known_rule:
        return None  # (a base class no rule or in-file class is)
    if ref.kind == "class":
        info = source.classes.get(ref.class_name)
        if info is None:
            return None
        if ref.class_name == name or info.derives_from(name):
            return True
        return known_rule and canonical in _layer_bases(info)
    if ref.kind == "rule":
        return known_rule and canonical in ref.rule.names
    return None if ref.kind == "unknown" else False


def _is_instance_of_rule(ref, canonical, source):
    """Whether module `ref` is the torch layer `canonical` (a rule's name) or derives from it; None: unknown."""
    if ref.kind == "class":
        info = source.classes.get(ref.class_name)
        return None if info is None else canonical in _layer_bases(info)
    if ref.kind == "rule":
        return canonical in ref.rule.names
    return None if ref.kind == "unknown" else False


def _layer_bases(info):
    """The torch layers `info` derives from, through in-file base classes."""
    found, seen = set(), set()
    pending = [info]
    while pending:
        current = pending.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        if current.layer_base:
            found.add(current.layer_base)
        pending.extend(current.family[b] for b in current.bases if b in current.family)
    return found


@functools.cache
def _layer_rule_names():
    """Every torch name a module rule covers."""
    return frozenset(name for rule in load_all_rules()[0].values() for name in rule.names)
