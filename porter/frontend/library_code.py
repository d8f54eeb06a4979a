"""How the linker takes a function from an installed library's module (frontend/linker.py, frontend/libraries.py).

A library's model factories carry what a port does without: registry decorators (`@register_model`) and
torchvision's `@handle_legacy_interface(weights=("pretrained", ...))`, which maps a legacy `pretrained=` argument to
a weights enum; the enums themselves (`weights = ResNet18_Weights.verify(weights)`, `weights_backbone=
MobileNet_V3_Large_Weights.IMAGENET1K_V1` defaults), which are downloads; and weights parameters a caller may fill
(`weights="DEFAULT"`). The port builds the same architecture without downloads (the weights come from the torch
model's state_dict), so those go: a legacy name stays accepted, a weights parameter is None from the factory's first
statement. Other decorators stay (MONAI's `@Norm.factory_function("instance")` fills the layer factory its classes
read). timm's builder is read as the construction it makes (frontend/timm_models.py).
"""

import re

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import names_in
from porter.frontend.timm_models import as_constructions

_TIGHT = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def as_linked_from_a_library(statement):
    """A top-level statement of an installed library's module as the port links it: a factory without its
    decorators (registrations in the library's tables; torchvision's `handle_legacy_interface`, which maps a legacy
    `pretrained=` argument to a weights enum) and without its pretrained-weight enums, which are downloads: the port
    builds without weights (`weights = ResNet18_Weights.verify(weights)` keeps the switch at None, as
    factory_reader.py reads it)."""
    if not isinstance(statement, cst.FunctionDef):
        return statement
    statement = as_constructions(statement)  # (timm's builder: the construction it makes)
    if statement.decorators:
        statement = _without_decorators(statement)
    if any("Weights" in name for name in names_in(statement)):
        statement = statement.visit(_WithoutWeightEnums())
    return _without_weights_arguments(statement)


def _without_weights_arguments(function):
    """A library factory whose pretrained-weights parameters (torchvision's `weights`, `weights_backbone`) are None
    from its first statement on, whatever the caller hands (`weights=ResNet18_Weights.DEFAULT`, `weights="DEFAULT"`):
    the port builds without downloads, and the weights come from the torch model's state_dict."""
    params = function.params
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
             if re.fullmatch(r"weights(_\w+)?", p.name.value)]
    if not names or not isinstance(function.body, cst.IndentedBlock):
        return function
    body = list(function.body.body)
    docstring = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)) else 0
    cleared = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n)) for n in names], cst.Name("None"))],
                                      trailing_whitespace=cst.TrailingWhitespace(cst.SimpleWhitespace("  "), cst.Comment(
                                          "# porter: no pretrained weights (load the torch model's state_dict)")))
    return function.with_changes(body=function.body.with_changes(body=[*body[:docstring], cleared,
                                                                       *body[docstring:]]))


# decorators of a library's model factories that register them in its tables or map legacy `pretrained=` arguments
# to weight enums (torchvision's, timm's): left out with the downloads. Others stay (MONAI's
# `@Norm.factory_function("instance")` fills the layer factory its classes read)
REGISTRY_DECORATORS = frozenset({"register_model", "handle_legacy_interface", "register_notrace_function",
                                 "register_notrace_module"})


def _without_decorators(function):
    """A library factory without its registry decorators (REGISTRY_DECORATORS, and any naming a weights enum); the
    legacy names a `handle_legacy_interface(weights=("pretrained", ...))` maps stay accepted, as keyword-only
    parameters that build without weights as the enums do."""
    dropped = [d for d in function.decorators if _decorator_name(d) in REGISTRY_DECORATORS or
               any("Weights" in name for name in names_in(d))]
    if not dropped:
        return function
    legacy = [element.value.value.strip("'\"") for decorator in dropped
              if isinstance(decorator.decorator, cst.Call) for argument in decorator.decorator.args
              if isinstance(argument.value, cst.Tuple) and argument.value.elements
              for element in argument.value.elements[:1] if isinstance(element.value, cst.SimpleString)]
    params = function.params
    taken = {p.name.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)}
    added = tuple(cst.Param(cst.Name(name), default=cst.Name("None"), equal=_TIGHT) for name in legacy
                  if name.isidentifier() and name not in taken)
    if added:
        star = params.star_arg if isinstance(params.star_arg, cst.Param) else cst.ParamStar()
        params = params.with_changes(star_arg=star, kwonly_params=(*params.kwonly_params, *added))
    kept = tuple(d for d in function.decorators if all(d is not other for other in dropped))
    return function.with_changes(decorators=kept, params=params)


def _decorator_name(decorator):
    """The last name of a decorator (`register_model` of `@register_model()`, `@timm.models.register_model`)."""
    node = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
    return (dotted_name(node) or "").rsplit(".", 1)[-1]


class _WithoutWeightEnums(cst.CSTTransformer):
    """A library factory without its pretrained-weight enums (`ResNet18_Weights`), which are never linked: the
    statements reading one (`weights = ResNet18_Weights.verify(weights)`) and the annotations naming one go, and a
    default naming one is None (no weights)."""

    def leave_SimpleStatementLine(self, original, updated):
        if any("Weights" in name for name in names_in(original)):
            return cst.RemovalSentinel.REMOVE
        return updated

    def leave_Param(self, original, updated):
        if original.annotation is not None and any("Weights" in n for n in names_in(original.annotation)):
            updated = updated.with_changes(annotation=None, equal=_TIGHT if updated.default is not None else
                                           cst.MaybeSentinel.DEFAULT)
        if original.default is not None and any("Weights" in n for n in names_in(original.default)):
            updated = updated.with_changes(default=cst.Name("None"))  # (`weights_backbone=X_Weights.IMAGENET1K_V1`)
        return updated
