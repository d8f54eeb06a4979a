"""Items a body stores into a list of images and reads back in the statements that follow.

YOLOv5's Detect head stores `x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)` into the list
of feature maps it was handed, then reads `x[i].sigmoid()`. The list holds channels-last images, so the store
brings the 5-d value to that layout; the read then took the list's item and converted it again (a Transpose each
way, per level). The value stored is kept under a name of its own (`x_i`), the list gets it in its layout, and a
read of the same place (`x[i]`, the same index name or literal) before anything else touches the list or rebinds
the index takes the kept value as it lies.
"""

import re

import libcst as cst

from porter.frontend.walk import walk

_PLACE = re.compile(r"^([A-Za-z_]\w*)\[([A-Za-z_]\w*|-?\d+)\]$")


def place_of(code):
    """(list name, index text) for a place `x[i]` / `x[0]`; None for any other target."""
    found = _PLACE.match(code.replace(" ", ""))
    return found.groups() if found else None


def kept_name(place, taken):
    """A new variable name for the value stored at `place` (`x_i`), not one of `taken`."""
    base, index = place
    name = f"{base}_{index.replace('-', 'm')}"
    while name in taken:
        name += "_"
    return name


def still_held(places, statement, code_of, fresh):
    """The places whose kept values `statement` leaves as they were: it neither mentions the list other than
    through that very place, nor binds the index, nor stores into the place or changes it in place (`x[i] += 1`,
    `x[i].mul_(2)`), nested statements included; `fresh`: the places this statement itself stored (kept)."""
    text = code_of(statement)
    bound, stored = _bindings(statement, code_of)
    kept = {}
    for code, value in places.items():
        base, index = place_of(code)
        written = rf"(?<![\w.]){re.escape(base)}\s*\[\s*{re.escape(index)}\s*\]"
        rest = re.sub(written, "", text)
        if code in fresh or index not in bound and code not in stored and not re.search(
                rf"(?<![\w.]){re.escape(base)}\b", rest) and not re.search(rf"{written}\s*\.\s*\w+_\s*\(", text):
            kept[code] = value
    return kept


def _bindings(statement, code_of):
    """(the names `statement` binds, the code of the subscripts it stores into), nested statements included."""
    names, stored = set(), set()

    def target(node):
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                target(element.value)
        elif isinstance(node, cst.StarredElement):
            target(node.value)
        elif isinstance(node, cst.Subscript):
            stored.add(code_of(node).replace(" ", ""))

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            target(node.target)

        def visit_AugAssign(self, node):
            target(node.target)

        def visit_AnnAssign(self, node):
            target(node.target)

        def visit_For(self, node):
            target(node.target)

        def visit_NamedExpr(self, node):
            target(node.target)

    walk(statement, Visitor())
    return names, stored
