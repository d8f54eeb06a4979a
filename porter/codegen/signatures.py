"""Parameter lists of generated `def`s, rebuilt from the source's parameters rather than copied as text.

Copying the text kept what only the source can hold: comments inside multi-line signatures, trailing commas that
became `,,` once `**kwargs` was appended, and annotations naming torch types (`Tensor`, `Optional[nn.Module]`)
the port does not import. Each parameter is printed as `name[: annotation][=default]`, with the annotation only
where `porter.frontend.annotations` says the port can keep it.
"""

import libcst as cst

from porter.frontend.annotations import annotation_text


def parameter_list(source, definition, training=False, default_text=None):
    """`self, x, *, mask=None, training=None, **kwargs` for `definition` (a FunctionDef); with `training`,
    `training=None` is added before a `**` parameter (keyword-only when the source has `*` or `*args`).
    `default_text(node)` prints a default (the source's text when None)."""
    params = definition.params
    default_text = default_text or (lambda node: _code(source, node))
    parts = [_param(source, p, default_text) for p in params.posonly_params]
    if params.posonly_params:
        parts.append("/")
    parts.extend(_param(source, p, default_text) for p in params.params)
    if isinstance(params.star_arg, cst.Param):
        parts.append("*" + _param(source, params.star_arg, default_text))
    elif params.kwonly_params:
        parts.append("*")
    parts.extend(_param(source, p, default_text) for p in params.kwonly_params)
    if training:
        parts.append("training=None")
    if params.star_kwarg is not None:
        parts.append("**" + _param(source, params.star_kwarg, default_text))
    return ", ".join(parts)


def _param(source, param, default_text):
    text = param.name.value
    annotation = annotation_text(source, param.annotation.annotation) if param.annotation is not None else None
    if annotation is not None:
        text += f": {annotation}"
    if param.default is not None:
        text += (" = " if annotation is not None else "=") + default_text(param.default)
    return text


def _code(source, node):
    """One-line source text of an expression (a default spread over lines keeps its meaning on one)."""
    return " ".join(source.module.code_for_node(node).split())
