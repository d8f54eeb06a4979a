"""porter/frontend/imports.py: the import table, the one reader of import statements (the resolver and the linker)."""

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.imports import ImportTable, canonical_id, dotted_name, top_level_imports

SOURCE = """\
import torch.nn as nn
import pkg.blocks
import pkg.layers as layers
from . import utils
from .ops.misc import Conv2dNormActivation as ConvBN, SqueezeExcitation
from ..parts import *
from ...above import Thing
from torch.nn import functional as F


def build():
    from .inner import Nested
"""


def table(package="pkg.models"):
    return ImportTable.from_statements(top_level_imports(cst.parse_module(SOURCE)), package)


def test_aliases_resolve_names_to_dotted_targets():
    aliases = table().aliases
    assert aliases["nn"] == "torch.nn" and aliases["pkg"] == "pkg" and aliases["layers"] == "pkg.layers"
    assert aliases["ConvBN"] == "pkg.models.ops.misc.Conv2dNormActivation"
    assert aliases["utils"] == "pkg.models.utils" and aliases["F"] == "torch.nn.functional"
    assert aliases["Thing"] == "...above.Thing"  # above the package: it keeps its dots, which nothing matches
    assert "Nested" not in aliases  # top-level statements only


def test_from_imports_split_module_and_name_and_leave_out_a_climb_above_the_package():
    found = table()
    assert found.from_names["ConvBN"] == ("pkg.models.ops.misc", "Conv2dNormActivation")
    assert found.from_names["SqueezeExcitation"] == ("pkg.models.ops.misc", "SqueezeExcitation")
    assert found.from_names["utils"] == ("pkg.models", "utils")
    assert "Thing" not in found.from_names
    assert found.star_modules == ["pkg.parts"]
    assert found.module_names == {"nn": "torch.nn", "pkg.blocks": "pkg.blocks", "layers": "pkg.layers"}


def test_a_loose_file_resolves_no_relative_import():
    found = table(package="")
    assert found.star_modules == [] and "ConvBN" not in found.from_names and "F" in found.from_names
    statement = cst.parse_module("from .x import y\n").body[0].body[0]
    assert found.absolute_from(statement) is None and table().absolute_from(statement) == "pkg.models.x"


HEADS = ["nn", "F", "layers", "ConvBN", "self", "x", "torch", "f(x)", "a[0]", "(nn)"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(HEADS), st.lists(st.sampled_from(["Conv2d", "relu", "fc", "weight", "functional"]),
                                        max_size=3))
def test_resolve_is_the_dotted_name_looked_up_by_its_first_name(head, attributes):
    """resolve looks at the chain's first name before spelling the chain out; the answer is the same."""
    imports = table()
    node = cst.parse_expression(".".join([head, *attributes]))
    name = dotted_name(node)
    first, _, rest = (name or "").partition(".")
    expected = canonical_id(imports.aliases[first] + ("." + rest if rest else "")) \
        if name is not None and first in imports.aliases else None
    assert imports.resolve(node) == expected
