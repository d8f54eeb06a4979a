"""Parameter lists of generated `def`s, rebuilt from the source's parameters rather than copied as text.

Copying the text kept what only the source can hold: comments inside multi-line signatures, trailing commas that
became `,,` once `**kwargs` was appended, and annotations naming torch types (`Tensor`, `Optional[nn.Module]`)
the port does not import. Each parameter is printed as `name[: annotation][=default]`; an annotation is kept only
when every name in it exists in the generated module (builtins, the standard-library imports it keeps, the file's
own classes and functions), otherwise it is dropped.
"""

import builtins

import libcst as cst

BUILTIN_NAMES = frozenset(dir(builtins))


def parameter_list(source, definition, kept_roots, training=False):
    """`self, x, *, mask=None, training=None, **kwargs` for `definition` (a FunctionDef); with `training`,
    `training=None` is added before a `**` parameter (keyword-only when the source has `*` or `*args`)."""
    params = definition.params
    known = _names_defined(source, kept_roots)
    parts = [_param(source, p, known) for p in params.posonly_params]
    if params.posonly_params:
        parts.append("/")
    parts.extend(_param(source, p, known) for p in params.params)
    if isinstance(params.star_arg, cst.Param):
        parts.append("*" + _param(source, params.star_arg, known))
    elif params.kwonly_params:
        parts.append("*")
    parts.extend(_param(source, p, known) for p in params.kwonly_params)
    if training:
        parts.append("training=None")
    if params.star_kwarg is not None:
        parts.append("**" + _param(source, params.star_kwarg, known))
    return ", ".join(parts)


def _param(source, param, known):
    text = param.name.value
    annotation = param.annotation
    if annotation is not None and _annotation_names(annotation.annotation) <= known:
        text += ": " + source.module.code_for_node(annotation.annotation).strip()
        if param.default is not None:
            return f"{text} = {_code(source, param.default)}"
    if param.default is not None:
        text += "=" + _code(source, param.default)
    return text


def _code(source, node):
    """One-line source text of an expression (a default spread over lines keeps its meaning on one)."""
    return " ".join(source.module.code_for_node(node).split())


def _annotation_names(node):
    """Root names an annotation needs at run time; a string annotation counts as needing an unknown name."""
    found = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name):
            found.add(name.value)

        def visit_Attribute(self, attribute):
            root = attribute
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name):
                found.add(root.value)
            else:
                found.add("<expression>")
            return False

        def visit_SimpleString(self, string):
            found.add("<string annotation>")

    node.visit(Collector())
    return found


def _names_defined(source, kept_roots):
    """Names the generated module defines: builtins, names bound by kept standard-library imports, and the
    source's module-level classes and functions."""
    names = set(BUILTIN_NAMES)
    for statement in source.module.body:
        if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                names.update(_bound_by(small, kept_roots))
    return frozenset(names)


def _bound_by(small, kept_roots):
    if isinstance(small, cst.Import):
        for alias in small.names:
            dotted = _dotted(alias.name)
            if dotted.split(".")[0] in kept_roots:
                yield alias.asname.name.value if alias.asname else dotted.split(".")[0]
    elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative and \
            _dotted(small.module).split(".")[0] in kept_roots and not isinstance(small.names, cst.ImportStar):
        for alias in small.names:
            yield alias.asname.name.value if alias.asname else _dotted(alias.name)


def _dotted(node):
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""
