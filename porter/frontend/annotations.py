"""Which of the source's type annotations can stand in the port.

An annotation is kept only when every name it needs exists in the generated module: builtins, names bound by the
standard-library imports the port keeps, and the file's own classes and functions. Annotations naming torch types
(`Tensor`, `Optional[nn.Module]`, `torch.Tensor`) or string forward references are dropped.
"""

import builtins
import functools

import libcst as cst

from porter.frontend.imports import KEPT_STDLIB, dotted_name
from porter.frontend.walk import walk

BUILTIN_NAMES = frozenset(dir(builtins))


def annotation_text(source, annotation):
    """Source text of `annotation` (a cst expression) when the port can keep it, else None."""
    if annotation is None or not _names_needed(annotation) <= names_defined(source):
        return None
    return source.module.code_for_node(annotation).strip()


def names_defined(source):
    """Names the generated module defines: builtins, names bound by kept standard-library imports, and the
    source's module-level classes and functions."""
    return _names_defined_in(source.module)


@functools.lru_cache(maxsize=4)  # libcst nodes hash by identity: one entry per parsed source
def _names_defined_in(module):
    names = set(BUILTIN_NAMES)
    for statement in module.body:
        if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                names.update(_bound_by_kept_import(small))
    return frozenset(names)


def _names_needed(node):
    """Root names an annotation needs at run time; a string annotation counts as needing an unknown name."""
    found = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name):
            found.add(name.value)

        def visit_Attribute(self, attribute):
            root = attribute
            while isinstance(root, cst.Attribute):
                root = root.value
            found.add(root.value if isinstance(root, cst.Name) else "<expression>")
            return False

        def visit_SimpleString(self, string):
            found.add("<string annotation>")

    walk(node, Collector())
    return found


def _bound_by_kept_import(small):
    if isinstance(small, cst.Import):
        for alias in small.names:
            dotted = dotted_name(alias.name) or ""
            if dotted.split(".")[0] in KEPT_STDLIB:
                yield alias.asname.name.value if alias.asname else dotted.split(".")[0]
    elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative and \
            (dotted_name(small.module) or "").split(".")[0] in KEPT_STDLIB and \
            not isinstance(small.names, cst.ImportStar):
        for alias in small.names:
            yield alias.asname.name.value if alias.asname else dotted_name(alias.name)


def portable_code(source, node, rename=None):
    """Source text of `node` (a class or function carried over as it is) with each annotation the port cannot
    keep replaced by `object` (a dataclass field keeps its place; a signature stays valid), then `rename` (a
    CSTTransformer, e.g. torch layer names -> runtime names) applied."""
    node = node.visit(_UnportableAnnotations(names_defined(source)))
    return source.module.code_for_node(node.visit(rename) if rename is not None else node)


class _UnportableAnnotations(cst.CSTTransformer):
    """Each annotation naming what `defined` lacks replaced by `object`. (A module-level class: one made per call
    has libcst's `isinstance(visitor, CSTVisitor)` walk every visitor class alive, each time.)"""

    def __init__(self, defined):
        super().__init__()
        self.defined = defined

    def leave_Annotation(self, original, updated):
        if _names_needed(original.annotation) <= self.defined:
            return updated
        return updated.with_changes(annotation=cst.Name("object"))


SEQUENCE_NAMES = frozenset({"List", "list", "Tuple", "tuple", "Sequence"})


def declared_tensors(node):
    """What the parameter `node` (a cst.Param), or the function's return (a cst.FunctionDef), is declared to hold:
    "list" for a list of tensors of any length (`List[torch.Tensor]`, `list[Tensor]`, `Tuple[Tensor, ...]`,
    `typing.Sequence[torch.Tensor]`), the count for a tuple of tensors (`Tuple[torch.Tensor, torch.Tensor]`: 2),
    else None."""
    declared = node.returns if isinstance(node, cst.FunctionDef) else node.annotation
    annotation = declared.annotation if declared is not None else None
    if not isinstance(annotation, cst.Subscript) or \
            (dotted_name(annotation.value) or "").rpartition(".")[2] not in SEQUENCE_NAMES:
        return None
    elements = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
    if len(elements) == 2 and isinstance(elements[1], cst.Ellipsis):
        elements = elements[:1]
    if not elements or not all((dotted_name(e) or "").rpartition(".")[2] == "Tensor" for e in elements):
        return None
    if len(elements) == 1:
        return "list"
    return len(elements) if (dotted_name(annotation.value) or "").rpartition(".")[2] in ("Tuple", "tuple") else None
