"""Lambdas a class's constructions hand it, keeps on `self` and calls on images, translated for the layout the call
holds them in: akamaster's CIFAR ResNet builds its option-A shortcut as
`LambdaLayer(lambda x: F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4), "constant", 0))` and
`LambdaLayer.forward` returns `self.lambd(x)`.

A lambda whose body is not the code it is written as on a channels-last image (the slice and the pad name torch's
axes) was called in torch's layout, a conversion each way around every shortcut. The first call of the attribute
that hands it tensors of known rank, one of them channels-last, fixes the lambdas' signature (`LambdaSignature`: the
layouts they take, what they return) when every lambda is written in a class's `__init__`, where its closure's names
(`planes`) are in scope: each lambda is then written there translated for those layouts (`x[:, ::2, ::2, :]`, the
channel pad on the last axis), its result brought to the signature's layout, and every call of the attribute hands
its tensors in the signature's layouts. The classes whose constructors write such lambdas are translated again once
the calls have fixed them (`classes_writing`). A later call the signature does not fit (an image of another rank)
is a conflict: the file is translated again with those lambdas called as any plain callable is (convert.py).
"""

from dataclasses import dataclass

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import descendants
from porter.ir.layout import to_layout
from porter.ir.values import Value, tensor


@dataclass(frozen=True)
class LambdaSignature:
    """The layouts a set of handed lambdas takes (Value templates, one per parameter) and returns (a template)."""

    args: tuple
    result: Value


def _plain_lambda(function):
    params = function.params
    return not (isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.kwonly_params or
                params.posonly_params or isinstance(params.star_kwarg, cst.Param) or
                any(p.default is not None for p in params.params))


def lambdas_in_inits(source):
    """ids of the lambdas written in a class's `__init__` (their closures are the constructor's names)."""
    found = set()
    for info in source.classes.values():
        init = info.methods.get("__init__")
        if init is not None:
            found.update(id(node) for node in descendants(init) if isinstance(node, cst.Lambda))
    return found


def only_called(info, attr):
    """Whether `self.<attr>` is read only as a call's function in the class's methods (never handed to `map`,
    `functools.reduce` or anything else that would call it on torch's layout)."""
    for method in info.methods.values():
        calls = {id(node.func) for node in descendants(method) if isinstance(node, cst.Call)}
        for node in descendants(method):
            if isinstance(node, cst.Attribute) and node.attr.value == attr and dotted_name(node.value) == "self" \
                    and id(node) not in calls and method is not info.methods.get("__init__"):
                return False
    return True


def decided_signature(translator, lambdas, args):
    """The signature every one of `lambdas` shares (fixed by an earlier call), else one these `args` fix, else
    None (the lambdas are then called as any plain callable is, in torch's layout)."""
    ctx = translator.ctx
    ids = {id(f) for f in lambdas}
    if ids & ctx.lambda_banned:
        return None
    known = {ctx.lambda_signatures.get(i) for i in ids}
    if len(known) == 1 and None not in known:
        signature = known.pop()
        if len(args) == len(signature.args) and all(a.is_tensor and a.rank == t.rank
                                                    for a, t in zip(args, signature.args)):
            return signature
    if known != {None}:  # a call the signature an earlier one fixed does not fit (another rank, another value)
        ctx.lambda_conflicts.update(ids)  # (the file is translated again, these lambdas called as written)
        return None
    if not args or not all(a.is_tensor and a.rank is not None and a.layout in ("channels_last", "source")
                           for a in args) or all(a.layout == "source" for a in args):
        return None
    writable = lambdas_in_inits(translator.source)
    if not all(id(f) in writable and _plain_lambda(f) and len(f.params.params) == len(args) for f in lambdas):
        return None
    templates = tuple(tensor("", a.rank, a.layout) for a in args)
    results = [translated_aside(translator, f, templates) for f in lambdas]
    if not all(r is not None and r.is_tensor and r.layout in ("channels_last", "source") for r in results):
        return None
    layout = results[0].layout if all(r.layout == results[0].layout for r in results) else "source"
    rank = results[0].rank if all(r.rank == results[0].rank for r in results) else None
    signature = LambdaSignature(templates, tensor("", rank, layout))
    for function in lambdas:
        ctx.lambda_signatures[id(function)] = signature
    return signature


def translated_aside(translator, function, templates):
    """`function`'s body for parameters held as `templates`; nothing the translation notes is kept."""
    ctx = translator.ctx
    env, pending, used = dict(translator.env), list(translator.pending), set(ctx.used_runtime)
    hoister, ctx.hoister = getattr(ctx, "hoister", None), None
    try:
        for param, template in zip(function.params.params, templates):
            translator.env[param.name.value] = template.with_code(param.name.value)
        return translator.expr(function.body)
    finally:
        translator.env.clear()
        translator.env.update(env)
        translator.pending[:] = pending
        ctx.used_runtime.clear()
        ctx.used_runtime.update(used)
        ctx.hoister = hoister


def call_with_signature(translator, function_code, args, signature):
    """`self.f(args)` handing each tensor in the layout the lambdas take; the result as they return it."""
    handed = [to_layout(translator.ctx, a, t.layout) for a, t in zip(args, signature.args)]
    return signature.result.with_code(f"{function_code}({', '.join(a.code for a in handed)})")


def written_lambda(translator, node, signature):
    """Lambda `node` written in a constructor, translated for the layouts its signature takes."""
    names = [p.name.value for p in node.params.params]
    env = dict(translator.env)
    try:
        for name, template in zip(names, signature.args):
            translator.env[name] = template.with_code(name)
        body = translator.expr(node.body)
    finally:
        translator.env.clear()
        translator.env.update(env)
    body = to_layout(translator.ctx, body, signature.result.layout) if body.is_tensor else body
    return f"lambda {', '.join(names)}: {body.code}"


def classes_writing(source, signatures):
    """The classes whose `__init__` writes a lambda a call fixed a signature for (translated again)."""
    return [info for info in source.classes.values() if info.methods.get("__init__") is not None and any(
        id(node) in signatures for node in descendants(info.methods["__init__"]) if isinstance(node, cst.Lambda))]
