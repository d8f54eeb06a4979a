"""Definitions a model file imports from its own package, brought into the conversion.

`from ..ops.misc import Conv2dNormActivation` in a file of a package (folders with `__init__.py`) names a class
porter can read: the linker finds the module file, takes the definitions the model classes need from it (with the
top-level names they use in turn, and their imports made absolute), and appends them after the file's own text, so
the file's line numbers stay as they are. Names a rule covers (`torchvision.utils._log_api_usage_once`) stay
imported. What it appends is read like the file's own code; the emitter places it first.

It follows only what is used, transitively (no cap on files: each statement is walked once), through named and star
imports, re-exports and references through an imported module (`inception_module.InceptionA`). One text holds a
name once: a definition whose name another linked (or the file's own) definition already has is linked under a
module-qualified name that the definitions of its module say. Each linked name's origin file (and the name it has
there), and each linked definition's lines in its own file, are returned too: a package port imports from its
sibling's port what that port holds translated the same way (porter/package.py), and a stub says the line of the
file the definition is written in.

A folder converted as a whole (`porter convert DIR`) without an `__init__.py` is a source root, as when its scripts
run from it: `from models.common import Conv` in DIR/models/yolo.py names DIR/models/common.py (`SOURCE_ROOTS`).
"""

import contextlib
import contextvars
from pathlib import Path

import libcst as cst

from porter.frontend.imports import ImportTable, bound_name, dotted_name, top_level_imports
from porter.frontend.libraries import DATA_MODULES, library_root, may_import_a_library, module_file, torch_libraries
from porter.frontend.library_code import as_linked_from_a_library
from porter.frontend.names import bound_names, dunder_all, names_in, top_level_bindings
from porter.frontend.static_branches import decided_module
from porter.frontend.timm_models import created_models
from porter.frontend.unchecked_parse import parsed_module
from porter.frontend.walk import walk

MAX_STAR_DEPTH = 4  # `from .a import *` of a module that star-imports in turn, this deep
BANNER = "# --- porter: definitions imported from {path} ---"
# base classes named bare (`from mxnet.gluon import HybridBlock`) that make a class a module: torch's and Gluon's
MODULE_BASE_NAMES = ("Module", "Sequential", "ModuleList", "ModuleDict", "Block", "HybridBlock", "HybridSequential")
GLUON_PREFIXES = ("gluon.", "mx.gluon.", "mxnet.gluon.")


# library functions a factory hands its model class to, which porter's factory reader reads itself
# (frontend/factory_reader.py): never linked (timm's builder would bring hub downloads and feature extractors)
READ_BY_THE_FACTORY_READER = frozenset({"timm.models._builder.build_model_with_cfg"})
# names code gives the framework's modules (`import torch.nn.functional as F`): a definition under one of them is
# linked under a name of its own, whatever the modules linked later import
MODULE_ALIASES = frozenset({"F", "nn", "torch", "np", "tf", "mx", "nd"})
SOURCE_ROOTS = contextvars.ContextVar("porter_source_roots", default=())  # folders whose modules import by name


@contextlib.contextmanager
def source_root(folder):
    """Within the block, modules under `folder` (no `__init__.py` of its own) import each other absolutely."""
    token = SOURCE_ROOTS.set((*SOURCE_ROOTS.get(), Path(folder).resolve()))
    try:
        yield
    finally:
        SOURCE_ROOTS.reset(token)


def linked_text(path, text, package, covered, factories=False):
    """(text with the needed in-package definitions appended, names defined by them, {name: the file (resolved
    path) each linked definition comes from}, [(first line in the text, last line, the file it comes from, its first
    line there)] of each linked definition in text order (a stub in it names its own file's line), {name: the name it
    has in its own file} of the definitions linked under a name of their own).

    `path`: the file; `package`: its dotted package ('' for a loose file: nothing to link, unless it lies under a
    source root); `covered(canonical)`: whether a rule covers an imported name (those stay imports); `factories`:
    a torch file's factories are roots too (what torchvision's `fcn_resnet50()` builds its model from: resnet.py's
    `resnet50()`, _utils.py's `IntermediateLayerGetter`), asked for where the model cannot be built otherwise."""
    root = _package_root(path, package) if package else None
    if not package:
        root, package = _under_source_root(Path(path))
    if root is None and not may_import_a_library(text):
        return text, frozenset(), {}, [], {}  # (nothing to link: the file is not parsed here)
    try:
        module = parsed_module(text)
    except cst.ParserSyntaxError:
        return text, frozenset(), {}, [], {}  # the parser reports it properly
    module, created = created_models(module, ImportTable.from_module(module, package).resolve,
                                     library_root("timm") if "create_model" in text else None,
                                     set(top_level_bindings(module)))
    if created:  # `timm.create_model("resnet18")` read as a call of its entrypoint (frontend/timm_models.py)
        text = module.code
    libraries = torch_libraries(_imported_modules(module, package) + sorted(set(created.values())),
                                package.split(".")[0])
    if root is None and not libraries:
        return text, frozenset(), {}, [], {}
    namespace = root is not None and (not (root / package.replace(".", "/") / "__init__.py").is_file()
                                      if package else True)
    linker = _Linker(root, lambda name: name in READ_BY_THE_FACTORY_READER or covered(name), namespace=namespace)
    linker.libraries = libraries
    through_attributes = linker.module_attribute_imports(module, package)
    if through_attributes:  # `inception_module.InceptionA` read as the `InceptionA` it names (same lines)
        module = module.visit(_ThroughModuleAttributes(through_attributes))
        text = module.code
    module = linker.prepared(linker.decided(module), package, through_attributes)
    for name, dotted in created.items():  # (each entrypoint named as if the file imported it)
        dict.__setitem__(linker.in_package_imports(module, package), name, (dotted, name))
    linker.top = package.split(".")[0]
    linker.weights_aside = factories or bool(libraries)  # (a library's factories: their weights are downloads)
    linker.owners.update((name, ("", None)) for name in top_level_bindings(module))  # the file's own names win
    linker.import_targets.update(_top_level_table(module, package).aliases)
    wanted = linker.wanted_from(module, package, _model_class_names(module, linker, package, factories))
    blocks = linker.link(wanted)
    if not blocks:
        return text, frozenset(), {}, [], {}
    aliases = [f"{local} = {name}" for local, (_, name) in sorted(linker.in_package_imports(module, package).items())
               if local != name and name in linker.defined]
    text = text.rstrip()
    line, lines = text.count("\n") + 4, []  # the first appended line: after the file's last and two blank ones
    for block, marks in blocks:
        lines.extend((line + offset, line + offset + more, origin, origin_line)
                     for offset, origin, origin_line, more in marks)
        line += block.count("\n") + 2
    appended = "\n\n".join([block for block, _ in blocks] + aliases)
    origins = {name: linker.paths[dotted] for name, (dotted, _) in linker.owners.items() if dotted}
    home_names = {linker.renamed[dotted][name]: name for dotted, name in linker.clashes}
    return f"{text}\n\n\n{appended}\n", frozenset(
        linker.bound_names() | linker.aliases | {a.split(" = ")[0] for a in aliases}), origins, lines, home_names


# text of a module file the linker read -> its parse, the most recently used last. A process that converts many files
# of one library (a package, the test suite's corpora) reads the same helper modules for each: libcst trees are
# immutable, so one parse serves them all. Bounded by the characters the parsed texts hold (~3 KB of tree a line).
_PARSES = {}
_PARSES_MAX_CHARACTERS = 1_500_000


def _parsed_library_module(text):
    """`parsed_module(text)` for a module the linker reads, kept for the next conversion that reads the same text."""
    module = _PARSES.pop(text, None)
    if module is None:
        module = parsed_module(text, early=False)
        held = sum(map(len, _PARSES)) + len(text)
        for old in list(_PARSES):
            if held <= _PARSES_MAX_CHARACTERS:
                break
            held -= len(old)
            del _PARSES[old]
    _PARSES[text] = module
    return module


def _under_source_root(path):
    """(source root, dotted package of `path` under it: '' at its top) or (None, '')."""
    folder = path.resolve().parent
    for root in SOURCE_ROOTS.get():
        if folder == root or root in folder.parents:
            parts = folder.relative_to(root).parts
            if all(part.isidentifier() for part in parts):
                return root, ".".join(parts)
    return None, ""


class _Linker:
    def __init__(self, root, covered, namespace=False):
        self.root = root  # folder that holds the top-level package
        self.namespace = namespace  # `root` is a source root: any module under it is in the project
        self.covered = covered
        self.parsed = {}  # dotted module -> cst.Module or None
        self.imports = {}  # (id of a parsed module, its package) -> its in_package_imports
        self.codes = {}  # id of a top-level statement of a parsed module -> its text (compared, then appended)
        self.taken = {}  # dotted module -> set of names taken from it
        self.order = []  # dotted modules, in the order they were first completed
        self.needs = {}  # dotted module -> the other modules its taken definitions use
        self.defined = set()  # every name the appended text defines
        self.aliases = set()  # names the appended text binds to a definition of another name (`SElayer = ...`)
        self.statement_names = {}  # id(statement) -> (statement, the names it mentions, its nested import-froms)
        self.paths = {}  # dotted module -> its file
        self.owners = {}  # name -> (module, definition text) of what the text defines under that name
        self.clashes = set()  # (module, name) linked under a name of its own: another definition has its name
        self.renamed = {}  # module -> {name in it: the name its definitions say instead} (clashes, and imports of them)
        self.final = {}  # (module, name) -> the name its definition has in the appended text
        self.import_targets = {}  # name an import binds in the text (the file's, then linked modules') -> its target
        self.top = ""  # the top-level package's name
        self.weights_aside = False  # factories linked: names of pretrained-weight enums (`ResNet50_Weights`) are not
        self.texts = {}  # dotted module -> its text, as the statements linked from it read (their lines)
        self.libraries = {}  # top-level package -> its folder: installed torch libraries linked from
        self.qualified = {}  # (module, name) of a library, imported from outside it -> whether it is linked

    def root_for(self, dotted):
        """The folder module `dotted` lies under: its library's, else the package's (None for a loose file)."""
        return self.libraries.get(dotted.split(".")[0], self.root)

    def module(self, dotted):
        if dotted not in self.parsed:
            self.parsed[dotted] = None
            root = self.root_for(dotted)
            for candidate in [module_file(root, dotted)] if root is not None else ():
                if candidate is not None:
                    try:
                        text = candidate.read_text(encoding="utf-8")
                        parsed = _parsed_library_module(text)
                    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
                        break
                    package = self.package_of(dotted)
                    through_attributes = self.module_attribute_imports(parsed, package)
                    if through_attributes:  # the same lines: each statement keeps its line
                        parsed = parsed.visit(_ThroughModuleAttributes(through_attributes))
                        text = parsed.code
                    self.texts[dotted] = text
                    decided = self.decided(parsed)
                    if dotted.split(".")[0] in self.libraries:
                        decided = decided.with_changes(body=[as_linked_from_a_library(s) for s in decided.body])
                    self.parsed[dotted] = self.prepared(decided, package, through_attributes)
                    self.paths[dotted] = candidate.resolve()
                    break
        return self.parsed[dotted]

    def names_in(self, statement):
        """The plain names `statement` mentions (names.names_in), once per statement: the closure and the
        dependencies of a definition both ask."""
        return self.statement_facts(statement)[1]

    def used_by(self, statement, imports):
        """The names `statement` needs linked: those it mentions, less the bases of a module class that are no
        modules (`class SegmentationModel(nn.Module, SMPHubMixin)`: the port derives from its module bases only, so
        a mixin, and the third-party classes it derives from, are never needed)."""
        names = self.names_in(statement)
        if self.weights_aside:  # (a factory's pretrained-weights enums: their presets are data transforms)
            names = {name for name in names if "Weights" not in name}
        if not isinstance(statement, cst.ClassDef) or len(statement.bases) < 2:
            return names
        modules = [_is_module_base(b.value, imports, self, depth=0) for b in statement.bases]
        if not any(modules):
            return names
        dropped = {dotted_name(b.value) for b, module in zip(statement.bases, modules) if not module}
        kept = set().union(*(names_in(b.value) for b, module in zip(statement.bases, modules) if module),
                           *(names_in(part) for part in (statement.body, *statement.decorators, *statement.keywords)))
        return (names - dropped) | (names & kept)

    def nested_import_froms(self, statement):
        """The `from ... import` statements inside `statement`, from the same one walk."""
        return self.statement_facts(statement)[2]

    def statement_facts(self, statement):
        key = id(statement)
        if key not in self.statement_names:  # the node kept beside its facts: its id stays its own
            names, imports = set(), []

            class Collector(cst.CSTVisitor):
                def visit_Name(self, node):
                    names.add(node.value)

                def visit_ImportFrom(self, node):
                    imports.append(node)

            walk(statement, Collector())
            self.statement_names[key] = (statement, names, imports)
        return self.statement_names[key]

    def prepared(self, module, package, through_attributes):
        """`module` with the names its module-attribute references were rewritten to counted as its imports."""
        if through_attributes:
            imports = self.in_package_imports(module, package)
            for local, target in through_attributes.names.items():
                dict.__setitem__(imports, local, target)
        return module

    def module_attribute_imports(self, module, package):
        """A _ModuleAttributes for `module`'s references to definitions through an in-package module it imports
        (`from torchvision.models import inception as inception_module` then `inception_module.InceptionA`,
        `import pkg.blocks as blocks` then `blocks.X`, `import pkg.blocks` then `pkg.blocks.X`), or None."""
        top = package.split(".")[0] if package else ""
        table = _top_level_table(module, package)
        modules = {}  # the dotted text a reference starts with -> the module it names
        for local, (absolute, name) in table.from_names.items():
            if self.in_project(absolute, top) and self.is_module(f"{absolute}.{name}"):
                modules[local] = f"{absolute}.{name}"
        for text, dotted in table.module_names.items():
            if self.in_project(dotted, top) and self.is_module(dotted):
                modules[text] = dotted
        if not modules:
            return None
        own = set(top_level_bindings(module)) - set(modules)
        names, clashes = {}, set()
        linker = self

        class Finder(cst.CSTVisitor):
            def visit_Attribute(self, node):
                text = dotted_name(node.value) or ""
                target = modules.get(text) or linker.submodule(modules, text)
                name = node.attr.value
                library = linker.outside_library(target, top) if target is not None else False
                if target is None or name in own or name in clashes or library and not linker.qualifies(
                        target, name) or not library and linker.is_module(f"{target}.{name}"):
                    return  # (a library's `models.alexnet`: the factory its package star-imports over the module)
                if names.get(name, (target, name)) != (target, name):
                    clashes.add(name)  # `a.Block` and `b.Block`: two definitions, one name; left as they are
                    names.pop(name)
                    return
                names[name] = (target, name)

        walk(module, Finder())
        found = {name: target for name, target in names.items() if self.defines(*target)}
        return _ModuleAttributes(modules, found) if found else None

    def submodule(self, modules, text):
        """The library module a dotted reference through an imported library names (`torchvision.models` of
        `import torchvision`), recorded in `modules`; else None."""
        head, _, rest = text.partition(".")
        if not rest or head not in modules or modules[head].split(".")[0] not in self.libraries:
            return None
        dotted = f"{modules[head]}.{rest}"
        if not self.is_module(dotted):
            return None
        modules[text] = dotted
        return dotted

    def defines(self, dotted, name):
        """Whether module `dotted` binds `name` at top level or imports it from inside the package."""
        module = self.module(dotted)
        if module is None:
            return False
        return name in top_level_bindings(module) or name in self.in_package_imports(module, self.package_of(dotted))

    def decided(self, module):
        """`module` with its statically decided top-level `if`s replaced by the branch taken (a `Swish` bound in
        `if hasattr(nn, 'SiLU'):` is then a definition to take)."""
        if not any(isinstance(statement, (cst.If, cst.Try)) for statement in module.body):
            return module  # nothing to decide: the import table (a walk of the whole module) is not needed
        return decided_module(module, ImportTable.from_module(module).resolve, self.covered)

    def in_package_imports(self, module, package, depth=0):
        """local name -> (absolute module, imported name) for imports of `module` from inside the package tree
        (`from .layers import *` imports what `layers` defines or re-exports from the package: its `__all__`, else
        its public names)."""
        key = (id(module), package)
        if key not in self.imports:
            self.imports[key] = self._in_package_imports(module, package, depth)
        return self.imports[key]

    def _in_package_imports(self, module, package, depth):
        table = _top_level_table(module, package)
        top = package.split(".")[0] if package else ""
        stars = [absolute for absolute in table.star_modules if self.in_project(absolute, top) and
                 not self.outside_library(absolute, top)]
        found = _Imports(self, stars, depth)
        for local, (absolute, name) in table.from_names.items():
            if self.in_project(absolute, top) and not self.covered(f"{absolute}.{name}") and (
                    not self.outside_library(absolute, top) or self.qualifies(absolute, name)):
                found[local] = (absolute, name)
        return found

    def outside_library(self, absolute, top):
        """Whether `absolute` is a library's module imported from outside that library (the model's file)."""
        first = absolute.split(".")[0]
        return first in self.libraries and first != top

    def qualifies(self, dotted, name):
        """Whether a library's `name` (of module `dotted`), imported by the model's file, is linked: a module class
        or a factory building one (torchvision's `resnet18`); its other names (`torchvision.ops.nms`, a dataset)
        stay what they were."""
        key = (dotted, name)
        if f"{dotted}.".startswith(tuple(f"{m}." for m in DATA_MODULES)):
            return False
        if key not in self.qualified:
            self.qualified[key] = False  # (a cycle of re-exports: not a definition)
            self.qualified[key] = _is_module_base(cst.Name(name), {name: key}, self, depth=0) or \
                _builds_library_module(self, dotted, name, depth=0)
            if not self.qualified[key]:  # a builder of torch layers (torchvision's vgg.py `make_layers(cfg)`)
                found = _library_function(self, dotted, name)
                self.qualified[key] = found is not None and _builds_layers(found[1])
        return self.qualified[key]

    def star_names(self, dotted, depth):
        """name -> (absolute module, name) that `from <dotted> import *` binds from inside the package."""
        module = self.module(dotted)
        if module is None:
            return {}
        bindings = top_level_bindings(module)
        reexported = self.in_package_imports(module, self.package_of(dotted), depth).full()
        public = dunder_all(module)
        if public is None:
            public = [name for name in list(bindings) + list(reexported) if not name.startswith("_")]
        names = {}
        for name in public:
            if name in bindings:
                names[name] = (dotted, name)
            elif name in reexported:
                names[name] = reexported[name]
        return names

    def wanted_from(self, module, package, roots, with_locals=False):
        """[(absolute module, name)] the definitions named `roots` in `module` need from other package modules;
        `with_locals`: [(the top-level name `module` imports it as, or None inside a function, (module, name))]."""
        imports = self.in_package_imports(module, package)
        bindings = top_level_bindings(module)
        needed, stack, seen = [], list(roots), set()
        for statement in module.body:  # `register_block("mobilevit", MobileVitBlock)` (timm's mobilevit.py): a
            # registration of a root in a table of another file is needed with the function filling it
            if isinstance(statement, cst.SimpleStatementLine) and set(roots) & set(names_in(statement)):
                needed.extend((None, imports[small.value.func.value]) for small in statement.body
                              if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and
                              isinstance(small.value.func, cst.Name) and small.value.func.value in imports)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            for statement in bindings.get(name, ()):
                for used in self.used_by(statement, imports):
                    if used in imports:
                        needed.append((used, imports[used]))
                    elif used in bindings and used not in seen:
                        stack.append(used)
                needed.extend((None, target) for target in self.local_imports(statement, package))
        if with_locals:
            return sorted(set(needed), key=lambda item: (item[1], item[0] or ""))
        return sorted({target for _, target in needed})

    def local_imports(self, statement, package):
        """[(absolute module, name)] that imports inside a function or class (`from ..nn import GroupNorm` in a
        model-zoo factory) take from inside the package."""
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return []
        top = package.split(".")[0] if package else ""
        found, table = [], ImportTable(package)
        for node in self.nested_import_froms(statement):
            absolute = table.absolute_from(node)
            if absolute is None or isinstance(node.names, cst.ImportStar) or not self.in_project(absolute, top):
                continue
            found.extend((absolute, dotted_name(a.name)) for a in node.names
                         if not self.covered(f"{absolute}.{dotted_name(a.name)}"))
        return found

    def link(self, wanted):
        """Source blocks (one per package module, dependencies first) defining everything `wanted` needs."""
        for dotted, name in wanted:
            self.visit(dotted, name)
        self.defined = set().union(*self.taken.values()) if self.taken else set()
        self.defined |= {new for names in self.renamed.values() for new in names.values()}
        return [self.block(dotted) for dotted in self.dependencies_first()]

    def bound_names(self):
        """The names the appended definitions bind: each under the name it is linked as (timm's typing.py `F`, linked
        as `F_typing` beside the file's `import torch.nn.functional as F`, leaves `F` the file's import)."""
        return {self.renamed.get(dotted, {}).get(name, name) for dotted, names in self.taken.items() for name in names}

    def dependencies_first(self):
        """The linked modules, each after the modules its definitions need: a module met first for one name may
        need another module for a name taken later (timm's norm_act.py: `class RmsNormAct(RmsNorm)` of norm.py)."""
        placed, order = set(), []

        def place(dotted, open_):
            if dotted in placed or dotted in open_:
                return  # a cycle (through function bodies only, or Python could not import it): first come first
            open_.add(dotted)
            for needed in sorted(self.needs.get(dotted, ())):
                place(needed, open_)
            placed.add(dotted)
            if dotted in self.taken:  # (a package re-exporting a name needs the module defining it)
                order.append(dotted)

        for dotted in self.order:
            place(dotted, set())
        return order

    def visit(self, dotted, name):
        """Take `name` (and the top-level names it uses) from module `dotted`, after what they need in turn."""
        module = self.module(dotted)
        if module is None or name in self.taken.get(dotted, set()):
            return
        bindings = top_level_bindings(module)
        if name not in bindings:  # a package re-exporting it (`from ..ops import StochasticDepth`)
            imports = self.in_package_imports(module, self.package_of(dotted))
            if not dict.__contains__(imports, name) and self.is_module(f"{dotted}.{name}") and not (
                    dotted.split(".")[0] in self.libraries and name in imports):
                return  # `from .. import resnet`: a module, not a definition (star imports need not be expanded;
                # a library's are: torchvision.models' `alexnet` is the factory `from .alexnet import *` binds)
            reexported = imports.get(name)
            if reexported is not None and reexported != (dotted, name):
                if reexported[0] != dotted:
                    self.needs.setdefault(dotted, set()).add(reexported[0])
                self.visit(*reexported)
                self.final[(dotted, name)] = self.final.get(reexported, reexported[1])
            return
        imports = self.in_package_imports(module, self.package_of(dotted))
        closure = _local_closure(bindings, name, lambda statement: self.used_by(statement, imports))
        renamed = self.renamed.setdefault(dotted, {})
        for n in sorted(closure - set(renamed)):
            code = "\n".join(self.code_of(module, s) for s in bindings[n])
            if self.owners.get(n, (dotted, code))[1] == code and not self.imported_from_outside(n) and \
                    n not in MODULE_ALIASES:
                self.owners[n] = (dotted, code)
                continue
            # another definition of this name is in the text already (timm's two `PosEmbedRel`s; video/
            # swin_transformer.py's own 3-D `_get_relative_position_bias` beside the 2-D one of the block it links),
            # or the file imports it from outside the package (timm's typing.py `F = TypeVar("F")` beside the
            # file's `import torch.nn.functional as F`), or it has the name other modules give a framework module
            # (that `F` linked beside timm's norm.py, whose `F` is torch's functional module):
            # one namespace holds one name once, so this one is linked under a name of its own, and the definitions
            # of its module that use it (and the linked modules importing it) say that name
            renamed[n] = _free_name(f"{n}_{dotted.rsplit('.', 1)[-1]}", self.owners)
            self.owners[renamed[n]] = (dotted, code)
            self.clashes.add((dotted, n))
        self.final.update(((dotted, n), renamed.get(n, n)) for n in closure)
        self.taken.setdefault(dotted, set()).update(closure)
        for local, dependency in self.wanted_from(module, self.package_of(dotted), closure, with_locals=True):
            if dependency[0] != dotted:
                self.needs.setdefault(dotted, set()).add(dependency[0])
            self.visit(*dependency)
            final = self.final.get(dependency, dependency[1])
            if local is not None and final != dependency[1] and local not in bindings:
                renamed[local] = final  # it was linked under a name of its own
        if dotted not in self.order:
            self.order.append(dotted)

    def in_project(self, absolute, top):
        """Whether module `absolute` belongs to the package (its top name is the package's), or lies under the
        source root."""
        first = absolute.split(".")[0]
        if first in ("torch", "mxnet"):  # the framework's own files (a model zoo file inside mxnet): rules map them
            return False
        if first == top or first in self.libraries:
            return True
        return self.namespace and bool(first) and (
            (self.root / f"{first}.py").is_file() or (self.root / first).is_dir())

    def is_module(self, dotted):
        root = self.root_for(dotted)
        return root is not None and module_file(root, dotted) is not None

    def package_of(self, dotted):
        root = self.root_for(dotted)
        if root is not None and (root / dotted.replace(".", "/") / "__init__.py").is_file():
            return dotted
        return dotted.rsplit(".", 1)[0] if "." in dotted else ""

    def block(self, dotted):
        """(The text appended for module `dotted`: its imports (made absolute, without the names linked in) and the
        definitions taken from it, in its own order; [(line in that text, its file, its line there, its further
        lines)] of each definition whose line is known: a statement of a top-level `if` decided statically has
        none)."""
        module = self.parsed[dotted]
        package = self.package_of(dotted)
        lines = [BANNER.format(path=dotted.replace(".", "/") + ".py")]
        in_package = self.in_package_imports(module, package)
        table = ImportTable(package)
        for statement in module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            small = statement.body[0]
            if isinstance(small, cst.Import):
                self.import_targets.update(ImportTable.from_statements([small], package).aliases)
                lines.append(module.code_for_node(statement).strip())
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                absolute = table.absolute_from(small)
                kept = [a for a in small.names if not self.linked_in(bound_name(a), in_package)]
                if absolute is not None and kept:
                    names_text = ", ".join(self.import_alias(dotted, module, absolute, a) for a in kept)
                    lines.append(f"from {absolute} import {names_text}")
        for local, (_, name) in sorted(in_package.items()):
            if local != name and name in self.defined and local not in self.defined:
                # `from ..ops.misc import SqueezeExcitation as SElayer` of a definition linked in: bound before the
                # definitions, whose defaults may name it (`se_layer=partial(SElayer, ...)`)
                lines.append(f"{local} = {name}")
                self.aliases.add(local)
        emitted = self.__dict__.setdefault("emitted", {})  # name -> the definition text already appended
        renamed = self.renamed.get(dotted)
        starts = []  # (index in lines, the line its code starts on in the module's file, its further lines)
        lines_of = _StatementLines(self.texts[dotted])
        bindings = top_level_bindings(module)  # (statements filling a name in: `SPEC[k] = ...`, registrations)
        filling = {id(s) for name in self.taken[dotted] for s in bindings.get(name, ()) if not bound_names(s)}
        for statement in module.body:
            names = set(bound_names(statement))
            if names & self.taken[dotted] or id(statement) in filling:
                full = self.code_of(module, statement)
                first_line = lines_of.first_line(full)  # as read, before renaming
                if renamed:  # names linked under names of their own (`visit`), as bound and as used
                    statement = statement.visit(_Renamed(renamed))
                    names = {renamed.get(n, n) for n in names}
                    full = module.code_for_node(statement)
                code = full.strip("\n")
                if names and all(emitted.get(name) == code for name in names):
                    continue  # the very same definition in two package modules (a copied `class LambdaBase`)
                emitted.update(dict.fromkeys(names, code))
                if first_line is not None:  # blank lines above it are not appended
                    starts.append((len(lines), first_line + len(full) - len(full.lstrip("\n")), code.count("\n")))
                lines.append("\n\n" + code)
        offsets, offset = [], 0
        for line in lines:
            offsets.append(offset)
            offset += line.count("\n") + 1
        marks = [(offsets[index] + 2, self.paths[dotted], first_line, more) for index, first_line, more in starts]
        return "\n".join(lines), marks

    def code_of(self, module, statement):
        """The text of `statement`, a top-level statement of `module` (a module kept in `parsed`), made once."""
        key = id(statement)
        if key not in self.codes:
            self.codes[key] = module.code_for_node(statement)
        return self.codes[key]

    def imported_from_outside(self, name):
        """Whether the file binds `name` by an import of something outside the package (torch's `F`)."""
        target = self.import_targets.get(name)
        return target is not None and not self.in_project(target, self.top)

    def import_alias(self, dotted, module, absolute, alias):
        """The text of one name a linked module imports. A name the text already binds to something else (the file
        imports torch's `einsum`, the linked module einops' `einsum`) is imported under a name of its own, which that
        module's definitions say (`renamed`): one namespace, each definition still reads what its own file meant."""
        local, target = bound_name(alias), f"{absolute}.{dotted_name(alias.name)}"
        bound = self.import_targets.get(local)
        if (bound is None or bound == target) and self.owners.get(local, (dotted,))[0] == dotted:
            self.import_targets[local] = target
            return dotted_name(alias.name) + (f" as {bound_name(alias)}" if alias.asname is not None else "")
        own = _free_name(f"{local}_{dotted.rsplit('.', 1)[-1]}", set(self.owners) | set(self.import_targets))
        self.import_targets[own] = target
        self.renamed.setdefault(dotted, {})[local] = own
        return f"{dotted_name(alias.name)} as {own}"

    def linked_in(self, local, in_package):
        """Whether the imported name `local` stands for a definition linked in (by its own name or an alias)."""
        return local in self.defined or local in in_package and in_package[local][1] in self.defined


class _Renamed(cst.CSTTransformer):
    """Every plain name of a statement in `names` (old -> new) renamed: definitions linked under names of their own
    and the uses of them. Attribute names (`self.x`) and keyword names are not plain names and stay."""

    def __init__(self, names):
        super().__init__()
        self.names = names

    def visit_Attribute(self, node):
        return False  # only the object part holds plain names: renamed on leaving

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=original.value.visit(self))

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword) if original.keyword is not None else updated

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.names[original.value]) if original.value in self.names else updated


class _StatementLines:
    """The line each of a module's top-level statements (asked in module order) starts on in its text: where its code
    stands at the start of a line, after the statement asked before it (a search: generating the code of every
    statement to count its lines cost a quarter of parsing the module). None for one the text does not hold as it
    is (a statement of a top-level `if` decided statically, dedented)."""

    def __init__(self, text):
        self.text, self.cursor, self.line = text, 0, 1

    def first_line(self, code):
        at = self.text.find(code, self.cursor)
        while at > 0 and self.text[at - 1] != "\n":  # inside another line: a top-level statement starts a line
            at = self.text.find(code, at + 1)
        if at < 0:
            return None
        self.line += self.text.count("\n", self.cursor, at)
        self.cursor = at
        return self.line


def _free_name(name, taken):
    while name in taken:
        name += "_"
    return name


class _ModuleAttributes:
    """References to definitions through imported in-package modules: `modules` (the dotted text that names a module
    -> the module) and `names` (a name referenced that way -> (module, name))."""

    def __init__(self, modules, names):
        self.modules, self.names = modules, names


class _ThroughModuleAttributes(cst.CSTTransformer):
    """`inception_module.InceptionA` -> `InceptionA`, for the names a _ModuleAttributes holds: the linker then takes
    the definition as it takes an imported name (bases, calls and defaults alike), on the same lines."""

    def __init__(self, found):
        super().__init__()
        self.found = found

    def leave_Attribute(self, original, updated):
        target = self.found.modules.get(dotted_name(original.value) or "")
        name = original.attr.value
        if target is not None and self.found.names.get(name) == (target, name):
            return cst.Name(name)
        return updated


class _Imports(dict):
    """local name -> (absolute module, imported name): the named imports, and on a lookup they miss, the names of
    the module's `from .x import *` imports (expanded then, once: a module nothing looks into is not parsed)."""

    def __init__(self, linker, stars, depth):
        super().__init__()
        self.linker, self.stars, self.depth, self.starred = linker, stars, depth, None

    def star(self):
        if self.starred is None:
            self.starred = {}
            if self.depth < MAX_STAR_DEPTH:
                for absolute in self.stars:
                    self.starred.update((name, target) for name, target in
                                        self.linker.star_names(absolute, self.depth + 1).items()
                                        if not self.linker.covered(f"{target[0]}.{target[1]}"))
        return self.starred

    def full(self):
        """Every name, star-imported ones included (named imports win)."""
        return {**self.star(), **self} if self.stars else dict(self)

    def __contains__(self, name):
        return dict.__contains__(self, name) or bool(self.stars) and name in self.star()

    def __getitem__(self, name):
        return dict.__getitem__(self, name) if dict.__contains__(self, name) else self.star()[name]

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default


def _model_class_names(module, linker, package, factories=False):
    """Roots of what the model needs: the file's module classes (deriving from torch.nn or Gluon's blocks, or from a
    package class that does), its builder functions (those that construct layers) and its factories (functions
    that call a class or function of these)."""
    imports = linker.in_package_imports(module, package)
    names = []
    for statement in module.body:
        if isinstance(statement, cst.ClassDef) and any(
                _is_module_base(b.value, imports, linker, depth=0) or _names_one_of(b.value, names)
                for b in statement.bases):  # a base defined above in this file (HRNet's HighResolutionBaseNet)
            names.append(statement.name.value)
        elif isinstance(statement, cst.FunctionDef) and _builds_layers(statement):
            names.append(statement.name.value)
    if not _imports_mxnet(module) and not factories:  # torch files: factories hold weight registries and
        return names or _sibling_factories(module, imports, linker)  # downloads, unless asked for (see linked_text)
    # factories: functions that build a model class or call a factory (`resnet18_v1b(**kwargs)`); asked for, also
    # those naming a model class (timm's `_create_effnet`: `model_cls = EfficientNet`, handed to its builder)
    if factories:  # (or a sibling's: mobilevit.py's `build_model_with_cfg(ByobNet, ...)` of byobnet.py)
        classes = set(names) | _sibling_module_classes(imports, linker)
        names.extend(s.name.value for s in module.body if isinstance(s, cst.FunctionDef) and
                      s.name.value not in classes and classes & set(names_in(s)))
    return _with_callers(module, names)


def _with_callers(module, names):
    """`names` and the module's functions calling one of them by its bare name, transitively."""
    names = list(names)
    functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    while True:
        callers = [f.name.value for f in functions if f.name.value not in names and _calls_any(f, names)]
        if not callers:
            return names
        names.extend(callers)


def _sibling_factories(module, imports, linker):
    """A file of factories only (pytorchcv's zfnet.py: `get_zfnet()` builds `AlexNet` of alexnet.py; timm's
    byoanet.py hands `ByobNet` to `build_model_with_cfg`): its functions that name a module class or a function the
    package defines elsewhere, and the functions calling those, are what the model needs."""
    functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    siblings = _sibling_module_classes(imports, linker) | {name for name in imports
                                                           if _defines_function(linker, *imports[name])}
    return _with_callers(module, [f.name.value for f in functions if siblings & set(names_in(f))])


def _sibling_module_classes(imports, linker):
    """The names a file imports from its package that are module classes there."""
    return {name for name in imports if _is_module_base(cst.Name(name), imports, linker, depth=0)}


def _defines_function(linker, dotted, name):
    defining = linker.module(dotted)
    return defining is not None and any(isinstance(s, cst.FunctionDef) and s.name.value == name
                                        for s in defining.body)


def _names_one_of(node, names):
    return isinstance(node, cst.Name) and node.value in names


def _imports_mxnet(module):
    """Whether a top-level import of the file names mxnet or GluonCV (a Gluon model-zoo style file)."""
    return any(target.split(".")[0] in ("mxnet", "gluoncv") for target in _top_level_table(module, "").aliases.values())


def _calls_any(function, names):
    """Whether `function` calls one of `names` by its bare name."""
    wanted, found = set(names), []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            if isinstance(call.func, cst.Name) and call.func.value in wanted:
                found.append(call)

    walk(function, Finder())
    return bool(found)


def _is_module_base(node, imports, linker, depth):
    """Whether a base class expression is torch's Module/Sequential/..., Gluon's (Hybrid)Block/HybridSequential, or a
    package class deriving from one."""
    name = dotted_name(node) or ""
    if name.split(".")[0] in ("nn", "torch") or name in MODULE_BASE_NAMES:
        return True
    if name.startswith(GLUON_PREFIXES):  # `gluon.HybridBlock`, `mx.gluon.Block`
        return True
    if name not in imports or depth > 4:
        return False
    dotted, imported = imports[name]
    defining = linker.module(dotted)
    if defining is None:
        return False
    inner_imports = linker.in_package_imports(defining, linker.package_of(dotted))
    classes = {s.name.value for s in defining.body if isinstance(s, cst.ClassDef)}
    for statement in defining.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value == imported:
            # (a base defined beside it: torchvision's `Conv2dNormActivation(ConvNormActivation)` of ops/misc.py)
            return any(_is_module_base(b.value, inner_imports, linker, depth + 1) or isinstance(b.value, cst.Name)
                       and b.value.value in classes and b.value.value != imported and _is_module_base(
                           b.value, {b.value.value: (dotted, b.value.value)}, linker, depth + 1)
                       for b in statement.bases)
    if imported in inner_imports:  # re-exported (`from .model import SegmentationModel` in a package's __init__)
        return _is_module_base(cst.Name(imported), inner_imports, linker, depth + 1)
    return False


def _library_function(linker, dotted, name, depth=0):
    """(the module defining it, the function) for the top-level function `name` library module `dotted` defines or
    re-exports from another, or None."""
    module = linker.module(dotted)
    if module is None or depth > 3:
        return None
    function = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
    if function is not None or name in top_level_bindings(module):
        return (dotted, function) if function is not None else None
    reexported = linker.in_package_imports(module, linker.package_of(dotted)).get(name)
    return _library_function(linker, *reexported, depth + 1) if reexported not in (None, (dotted, name)) else None


def _builds_library_module(linker, dotted, name, depth):
    """Whether `name` of library module `dotted` (or what it re-exports) is a function calling a module class or
    such a function by its bare name, or handing a module class to a builder first, a few calls deep
    (torchvision's `resnet18` -> `_resnet` -> `ResNet`; timm's `resnet18` -> `_create_resnet` -> ResNet)."""
    found = _library_function(linker, dotted, name) if depth <= 3 else None
    if found is None:
        return False
    dotted, function = found
    module = linker.module(dotted)
    imports = linker.in_package_imports(module, linker.package_of(dotted))
    classes = {s.name.value for s in module.body if isinstance(s, cst.ClassDef) and
               any(_is_module_base(b.value, imports, linker, depth=0) for b in s.bases)}
    called = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call):
            if isinstance(call.func, cst.Name):
                called.add(call.func.value)
            # (a class handed to a builder: timm's `build_model_with_cfg(ResNet, variant, pretrained, **kwargs)`)
            called.update(arg.value.value for arg in call.args[:1] if isinstance(arg.value, cst.Name))

    walk(function, Calls())
    return bool(called & classes) or any(
        _is_module_base(cst.Name(c), imports, linker, depth=0) or _builds_library_module(linker, dotted, c, depth + 1)
        for c in sorted(called - classes - {name}) if c in imports or c in top_level_bindings(module))


def _imported_modules(module, package):
    """The absolute modules the file's top-level imports name or import from."""
    table = _top_level_table(module, package)
    return sorted({absolute for absolute, _ in table.from_names.values()} | set(table.star_modules) |
                  set(table.module_names.values()))


def _builds_layers(function):
    """Whether a function calls `nn.X(...)`/`torch.nn.X(...)` itself (a builder such as `make_layers(cfg)`)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            name = dotted_name(call.func) or ""
            if (name.startswith("nn.") or name.startswith("torch.nn.")) and name.rsplit(".", 1)[-1][:1].isupper():
                found.append(call)

    walk(function, Finder())
    return bool(found)


def _package_root(path, package):
    folder = path.resolve().parent
    for _ in package.split("."):
        folder = folder.parent
    return folder


def _top_level_table(module, package):
    """The ImportTable of a module's top-level imports (the one reader of import statements)."""
    return ImportTable.from_statements(top_level_imports(module), package)


def _local_closure(bindings, name, names_of=names_in):
    closure, stack = set(), [name]
    while stack:
        current = stack.pop()
        if current in closure or current not in bindings:
            continue
        closure.add(current)
        for statement in bindings[current]:
            stack.extend(n for n in names_of(statement) if n in bindings and n not in closure)
    return closure
