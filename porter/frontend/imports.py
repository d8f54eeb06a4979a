"""Import-alias table: which local names stand for which torch (or other) modules and objects.

`import torch.nn as nn`, `from torch import nn`, `import torch.nn.functional as F`, `from torch.nn import
functional as F`, `from torch.nn import Conv2d` all resolve `nn.Conv2d`/`Conv2d`/`F.relu` to canonical dotted
ids such as `torch.nn.Conv2d` and `torch.nn.functional.relu`. Cheaper than libcst's QualifiedNameProvider,
which is measured in seconds on large files.
"""

import functools
import sys

import libcst as cst

from porter.frontend.walk import walk

# Standard-library modules whose imports the port keeps (and whose names annotations may use): the whole standard
# library (a linked helper class's `from textwrap import dedent, indent`, MONAI's component store, came without its
# import and the port did not import), less the file-system, network and process modules that only the code
# porter leaves out (weight downloads, training scripts) uses
KEPT_STDLIB = frozenset(sys.stdlib_module_names) - {
    "__future__", "os", "shutil", "pathlib", "glob", "tempfile", "io", "pickle", "urllib", "http", "socket", "ssl",
    "subprocess", "multiprocessing", "threading", "concurrent", "asyncio", "zipfile", "tarfile", "gzip", "hashlib",
    "argparse", "time", "datetime", "sys", "signal", "builtins", "importlib", "pkgutil"}

# Submodule paths that torch re-exports under a shorter canonical name.
CANONICAL_PREFIXES = (
    ("torch.nn.modules.", "torch.nn."),
    ("torch.autograd.function.", "torch.autograd."),  # `from torch.autograd.function import Function`
    # Gluon: its layer modules, its Block module and its two op namespaces (`mx.nd`, `mx.sym`: `F`'s values)
    ("mxnet.gluon.nn.basic_layers.", "mxnet.gluon.nn."),
    ("mxnet.gluon.nn.conv_layers.", "mxnet.gluon.nn."),
    ("mxnet.gluon.nn.activations.", "mxnet.gluon.nn."),
    ("mxnet.gluon.rnn.rnn_layer.", "mxnet.gluon.rnn."),
    ("mxnet.gluon.rnn.rnn_cell.", "mxnet.gluon.rnn."),
    ("mxnet.gluon.block.", "mxnet.gluon."),
    ("mxnet.nd.", "mxnet.ndarray."),
    ("mxnet.sym.", "mxnet.ndarray."),
    ("mxnet.symbol.", "mxnet.ndarray."),
    # timm's helpers, from whichever of its modules (`timm.layers.drop`, the older `timm.models.layers`)
    ("timm.models.layers.", "timm.layers."),
    ("timm.layers.", "timm.layers."),
)
# Third-party names that are torch's under another name: resolved to torch's, whose rules translate them.
EQUIVALENT_NAMES = {"timm.layers.trunc_normal_": "torch.nn.init.trunc_normal_",
                    "timm.layers._assert": "torch._assert"}  # timm's trace_utils re-exports torch's


@functools.lru_cache(maxsize=4096)  # a pure function of the name, asked for every call and attribute a pass reads
def canonical_id(full):
    """The canonical id of an absolute dotted name (`torchvision.ops.misc.Conv2dNormActivation`, a timm alias such
    as `timm.layers.weight_init.trunc_normal_` -> `torch.nn.init.trunc_normal_`): CANONICAL_PREFIXES, then
    EQUIVALENT_NAMES."""
    for prefix, replacement in CANONICAL_PREFIXES:
        if full.startswith(prefix):
            full = replacement + full[len(prefix):].split(".")[-1]
    return EQUIVALENT_NAMES.get(full, full)


def dotted_name(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    kind = type(node)  # not isinstance: libcst's node classes are ABCs, and this runs for most nodes a pass reads
    if kind is cst.Name:
        return node.value
    if kind is cst.Attribute:
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _module_name(node):
    return dotted_name(node) if node is not None else ""


class ImportTable:
    """Local name -> canonical dotted id, built from a module's import statements (any nesting level)."""

    def __init__(self, package=""):
        self.package = package  # dotted package of the file, for relative imports ('' for a loose file)
        self.aliases = {}  # local name -> the dotted name it is bound to (`import a.b` binds `a` to `a`)
        self.from_names = {}  # local name -> (absolute module, imported name) of a `from M import n` that resolves
        self.star_modules = []  # absolute modules of `from M import *` (a climb above the package left out)
        self.module_names = {}  # text naming a module through an `import` (`a.b`, or `c` of `import a.b as c`)
        self.stdlib_imports = []  # source text of imports kept in generated code

    @classmethod
    def from_module(cls, module, package=""):
        return cls.from_statements(_walk_imports(module), package)

    @classmethod
    def from_statements(cls, statements, package=""):
        """The table of these Import/ImportFrom nodes, in source order (a later import of a name wins)."""
        table = cls(package)
        for node in statements:
            table.add(node)
        return table

    def add(self, node):
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if alias.asname is not None:
                    self.aliases[alias.asname.name.value] = full
                    self.module_names[alias.asname.name.value] = full
                else:
                    top = full.split(".")[0]
                    self.aliases[top] = top
                    self.module_names[full] = full
        elif isinstance(node, cst.ImportFrom):
            module = self.absolute_module(len(node.relative), _module_name(node.module))
            resolved = not module.startswith(".")
            if isinstance(node.names, cst.ImportStar):
                if resolved:
                    self.star_modules.append(module)
                return
            for alias in node.names:
                name = dotted_name(alias.name)
                local = bound_name(alias)
                self.aliases[local] = f"{module}.{name}" if module else name
                if resolved:
                    self.from_names[local] = (module, name)
                else:
                    self.from_names.pop(local, None)

    def absolute_from(self, node):
        """The absolute module a `from ... import` names, or None when its dots climb above the package."""
        module = self.absolute_module(len(node.relative), _module_name(node.module))
        return None if module.startswith(".") else module

    def absolute_module(self, level, module):
        """The absolute name of `from <level dots><module> import ...`; relative to an unknown package it keeps
        its dots (`..utils`), which no rule and no translatable library matches."""
        if not level:
            return module
        package = self.package.split(".") if self.package else []
        if level - 1 < len(package) and package:
            base = ".".join(package[:len(package) - (level - 1)])
            return f"{base}.{module}" if module else base
        return "." * level + module

    def resolve(self, node):
        """Canonical id of an expression like `nn.Conv2d` or `F.relu`, or None when it is not an import."""
        head = node
        while type(head) is cst.Attribute:  # the chain's first name decides; most (`self.fc`, `x`) are no import
            head = head.value
        if type(head) is not cst.Name or head.value not in self.aliases:
            return None
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        return canonical_id(self.aliases[head] + ("." + rest if rest else ""))

    def is_torch(self, canonical):
        return canonical is not None and (canonical == "torch" or canonical.startswith("torch."))


def mentions_torch(node, imports):
    """Whether the code of `node` names something of torch's (`torch.tensor`, an imported `nn`)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, attribute):
            if imports.is_torch(imports.resolve(attribute)):
                found.append(attribute)
            return not found

        def visit_Name(self, name):
            if imports.is_torch(imports.resolve(name)):
                found.append(name)

    walk(node, Finder())
    return bool(found)


def bound_name(alias):
    """The name an import alias binds in a `from` import (`SqueezeExcitation as SElayer` -> SElayer)."""
    return alias.asname.name.value if alias.asname is not None else dotted_name(alias.name)


def top_level_imports(module):
    """The Import/ImportFrom statements at a module's top level, in source order."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small


def _walk_imports(module):
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_Import(self, node):
            found.append(node)

        def visit_ImportFrom(self, node):
            found.append(node)

    walk(module, Visitor())
    return found
