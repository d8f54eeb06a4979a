"""Comparisons of torch's version decided statically (frontend/torch_version.py), as torch 2.13 (the release the
port follows) answers them: `version.parse(torch.__version__) >= version.parse("2.1.0")` guards x-transformers'
`LayerNorm = partial(nn.LayerNorm, bias=False)` at top level, and such checks in constructors were a raising stub
(`packaging.version.parse` is third-party code the port does not import)."""

import libcst as cst
import pytest

from porter.frontend.imports import ImportTable
from porter.frontend.torch_version import torch_version, version_comparison

IMPORTS = """
import torch
from packaging import version
from packaging.version import Version
from distutils.version import LooseVersion
import pkg_resources
"""


def decided(test):
    module = cst.parse_module(IMPORTS)
    resolve = ImportTable.from_module(module).resolve
    return version_comparison(cst.parse_expression(test), resolve)


@pytest.mark.parametrize("test, expected", [
    ("version.parse(torch.__version__) >= version.parse('2.1.0')", True),
    ("version.parse(torch.__version__) < version.parse('2.0.0')", False),
    ("Version(torch.__version__) >= Version('2.13')", True),  # (missing parts count as 0)
    ("Version(torch.__version__) > Version('2.13.0+cu118')", False),
    ("LooseVersion(torch.__version__) >= LooseVersion('1.8.0')", True),
    ("LooseVersion(torch.__version__) < '1.10'", False),  # a string against a version: read as a version
    ("pkg_resources.parse_version(torch.__version__) == pkg_resources.parse_version('2.13.0')", True),
    ("version.parse('1.10.0a0') < version.parse(torch.__version__)", True),
    ("torch.__version__ >= '1.6.0'", True),  # two strings: compared as Python compares strings, as at run time
    ("torch.__version__ >= '2.2'", False),  # ('2.13.0' < '2.2' as strings, as torch 2.13 compares them)
    ("torch.__version__ != '1.0'", True),
])
def test_torch_version_comparisons_are_decided_as_torch_2_13_answers(test, expected):
    assert torch_version() == "2.13.0"
    assert decided(test) is expected


@pytest.mark.parametrize("test", [
    "version.parse('1.0') < version.parse('2.0')",  # no torch: the source's own business
    "version.parse(other) >= version.parse('2.0')",
    "torch.__version__ in ('2.0', '2.1')",
    "version.parse(torch.__version__) >= version.parse('2.0') >= version.parse('1.0')",
    "len(torch.__version__) > 3",
])
def test_other_comparisons_are_left_alone(test):
    assert decided(test) is None
