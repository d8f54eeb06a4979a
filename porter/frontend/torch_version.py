"""Comparisons of torch's version, decided without running anything: the port follows the torch release the
constants name (`torch.__version__` in porter/rules/constants.py), so `version.parse(torch.__version__) >=
version.parse("2.1.0")` is a fact. x-transformers binds `LayerNorm = partial(nn.LayerNorm, bias=False)` under such
a test at top level; performer and lucidrains' packages guard features with them in constructors.

A version is read as the numbers of its release (`"2.0.0+cu118"` -> (2, 0, 0), `"1.10.0a0"` -> (1, 10, 0)), the way
`packaging.version` orders releases; a bare string compared with a string is compared as Python compares strings,
as the port will compare them at run time.
"""

import ast
import re

import libcst as cst

from porter.rules.constants import TORCH_CONSTANTS

# the callables that read a version string as a comparable version
VERSION_PARSERS = frozenset({
    "packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version",
    "distutils.version.LooseVersion", "distutils.version.StrictVersion", "looseversion.LooseVersion",
    "setuptools.version.LooseVersion"})
COMPARE = {cst.LessThan: "__lt__", cst.LessThanEqual: "__le__", cst.GreaterThan: "__gt__",
           cst.GreaterThanEqual: "__ge__", cst.Equal: "__eq__", cst.NotEqual: "__ne__"}
_RELEASE_PART = re.compile(r"\d+")


def torch_version():
    """The torch version the port follows, as a string ("2.13.0")."""
    return ast.literal_eval(TORCH_CONSTANTS["torch.__version__"])


def version_comparison(test, resolve):
    """True/False for a comparison of torch's version porter decides (`version.parse(torch.__version__) <
    version.parse('2.0.0')`, `torch.__version__ >= "1.6"`), else None. `resolve(node)`: an imported name's
    canonical name."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and
            type(test.comparisons[0].operator) in COMPARE):
        return None
    left, right = _operand(test.left, resolve), _operand(test.comparisons[0].comparator, resolve)
    if left is None or right is None or "torch" not in (left[2], right[2]):
        return None  # (two literals are the source's own business)
    if "version" in (left[0], right[0]):
        left, right = _release(left[1]), _release(right[1])
        width = max(len(left), len(right))
        left, right = left + (0,) * (width - len(left)), right + (0,) * (width - len(right))
    else:
        left, right = left[1], right[1]
    return getattr(left, COMPARE[type(test.comparisons[0].operator)])(right)


def _operand(node, resolve):
    """(kind "str" or "version", the version string, "torch" where it is torch's version else "literal"), or None."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return ("str", text, "literal") if isinstance(text, str) else None
    if isinstance(node, (cst.Name, cst.Attribute)) and resolve(node) == "torch.__version__":
        return "str", torch_version(), "torch"
    if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and \
            not node.args[0].star and resolve(node.func) in VERSION_PARSERS:
        inner = _operand(node.args[0].value, resolve)
        return None if inner is None or inner[0] != "str" else ("version", inner[1], inner[2])
    return None


def _release(text):
    """(2, 13, 0) of "2.13.0": the numbers of the release, local and pre-release parts aside."""
    release = text.split("+", 1)[0]
    numbers = []
    for part in release.split("."):
        found = _RELEASE_PART.match(part)
        if found is None:
            break
        numbers.append(int(found.group()))
        if found.end() != len(part):
            break
    return tuple(numbers)
