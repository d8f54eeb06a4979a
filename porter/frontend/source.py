"""Read a model source file statically: decode, parse with libcst, find the nn.Module subclasses.

Never imports, execs or evals the input.
"""

import bisect
import contextlib
import functools
import itertools
import sys
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from porter.errors import SourceError
from porter.frontend import gluon
from porter.frontend.forward_aliases import with_forward_from_aliases
from porter.frontend.gluon_lambdas import lambdas_as_functions
from porter.frontend.gluon_saved_names import saved_parameter_names
from porter.frontend.imports import EQUIVALENT_NAMES, ImportTable, canonical_id, dotted_name
from porter.frontend.library_idioms import module_aliases, normalised_text
from porter.frontend.linker import linked_text
from porter.frontend.names import assigned_names, names_in, read_names, registrar_functions, top_level_bindings
from porter.frontend.node_index import NodeIndex
from porter.frontend.positions import node_positions
from porter.frontend.static_branches import decided_body, module_flags
from porter.frontend.syntax_check import (
    MAX_NESTING,
    check_syntax,  # noqa: F401 - porter.package's name for it, from here
    checked_syntax,
    read_text,
)
from porter.frontend.unchecked_parse import parsed_module
from porter.frontend.walk import walk
from porter.frontend.weight_loading import WEIGHT_DOWNLOADS, downloading_functions, weight_loading_methods

MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
CONTAINER_BASES = {"torch.nn.Sequential": "sequential", "torch.nn.ModuleList": "list", "torch.nn.ModuleDict": "dict"}
# where layer classes live: a function constructing them is model code (`make_layers(cfg)`)
LAYER_NAMESPACES = ("torch.nn.", "mxnet.gluon.nn.", "mxnet.gluon.rnn.", "mxnet.gluon.contrib.nn.")


@dataclass
class ClassInfo:
    """One nn.Module subclass found in the source."""

    name: str
    node: cst.ClassDef
    line: int
    bases: list  # in-file module class names this class derives from
    methods: dict = field(default_factory=dict)  # name -> cst.FunctionDef
    class_attributes: dict = field(default_factory=dict)  # name -> cst expression (e.g. `expansion = 4`)
    family: dict = field(default_factory=dict, repr=False)  # all classes of the file, for base lookup
    container_base: str | None = None  # "sequential"/"list"/"dict" for subclasses of torch's containers
    layer_base: str | None = None  # a torch layer a rule covers that the class derives from (`nn.LayerNorm`)
    framework: str = "torch"  # "mxnet" for Gluon Blocks
    left_out: dict = field(default_factory=dict)  # name -> cst.FunctionDef: pretrained-weight methods, not model code
    # Gluon: attribute -> the name its parameter is saved under (a `_collect_params_with_prefix` override)
    saved_names: dict = field(default_factory=dict)
    # bases written as bare names of no import and no module class: plain classes of the file it mixes in
    # (`class Net(nn.Module, InitMixin)`), kept as bases where the port has them
    mixins: tuple = ()

    def find_method(self, name):
        """The method `name` as Python would find it through in-file base classes (None if not in the file)."""
        if name in self.methods:
            return self.methods[name]
        for base in self.bases:
            found = self.family[base].find_method(name) if base in self.family else None
            if found is not None:
                return found
        return None

    def derives_from(self, name):
        """Whether the class derives from the class `name`, directly or through in-file base classes."""
        return any(base == name or (base in self.family and self.family[base].derives_from(name))
                   for base in self.bases)

    def owner_of(self, name):
        """The class (self or an in-file base) that defines method `name`."""
        if name in self.methods:
            return self
        for base in self.bases:
            found = self.family[base].owner_of(name) if base in self.family else None
            if found is not None:
                return found
        return None


@dataclass
class SourceFile:
    """A parsed source file and what the frontend found in it."""

    path: Path
    display_path: str
    text: str
    module: cst.Module
    positions: dict
    imports: ImportTable
    classes: dict  # name -> ClassInfo, in source order
    functions: dict  # module-level function name -> cst.FunctionDef
    framework: str = "torch"
    linked_from_line: int | None = None  # first line of definitions linked in from the file's package (linker)
    factories: dict = field(default_factory=dict)  # Gluon model-zoo factory -> the class it builds (gluon.py)
    parsed_nodes: int | None = None  # how many of `positions` (the first) are the parser's nodes; None: all
    decided_ifs: list = field(default_factory=list)  # top-level `if`s decided statically (static_branches.py)
    linked_origins: dict = field(default_factory=dict)  # linked name -> the file (resolved path) it comes from
    # [(first line in the text, last line, the file it comes from, its first line there)] of each linked definition
    linked_lines: list = field(default_factory=list)
    linked_home_names: dict = field(default_factory=dict)  # linked under a name of its own -> its name in its file
    # top-level names other files of a converted package take from this one (porter/package.py): model code here too,
    # so their definitions live in this file's port and the others import them
    exported: frozenset = frozenset()
    # module-level functions that download or read pretrained weights (weight_loading.py): I/O, never model code
    downloaders: frozenset = frozenset()
    # module-level names the port's factory of the model reads (`cfgs` of `VGG(make_layers(cfgs["A"]))`): model code
    entry_names: frozenset = frozenset()
    sequential_factory: str | None = None  # a function building the model as an nn.Sequential, read as the class
    # appended for it (frontend/sequential_factories.py): the port's factory builds that class instead

    def class_named(self, name):
        """The module class `name` stands for: its own, or one it is an alias of (`SElayer = SqueezeExcitation`)."""
        return self.classes.get(name) or self.classes.get(self.class_aliases.get(name))

    @functools.cached_property
    def class_aliases(self):
        """Top-level `Alias = ModuleClass` assignments: alias -> class name."""
        aliases = {}
        for statement in self.module.body:
            if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
                assign = statement.body[0]
                if isinstance(assign.value, cst.Name) and assign.value.value in self.classes:
                    for target in assign.targets:
                        if isinstance(target.target, cst.Name):
                            aliases[target.target.value] = assign.value.value
        return aliases

    @functools.cached_property
    def module_flags(self):
        """Module flags (`has_apex = False`) that decide `if`s inside functions (static_branches.module_flags)."""
        return module_flags(self.module)

    @functools.cached_property
    def node_index(self):
        return NodeIndex(self.module)

    def nodes_in(self, scope, *kinds):
        """The nodes of exactly those types inside `scope` (the module, a class or a function), in source order;
        the module is walked once for all such questions."""
        return self.node_index.nodes_in(scope, *kinds)

    def calls_named(self, name):
        """Every `name(...)` call of the file (a plain name as the callee), in source order."""
        return self._calls_by_callee.get(name, [])

    @functools.cached_property
    def _calls_by_callee(self):
        calls = {}
        for call in self.nodes_in(self.module, cst.Call):
            if isinstance(call.func, cst.Name):
                calls.setdefault(call.func.value, []).append(call)
        return calls

    @functools.cached_property
    def names_not_called(self):
        """Names the file reads other than by calling them or defining them (`embed_layer=PatchEmbed`,
        `partial(Block, ...)`, a base class): a class absent from them is built by `Name(...)` calls only."""
        skipped = {id(call.func) for call in self.nodes_in(self.module, cst.Call)}
        skipped.update(id(attribute.attr) for attribute in self.nodes_in(self.module, cst.Attribute))
        skipped.update(id(node.name) for node in self.nodes_in(self.module, cst.ClassDef, cst.FunctionDef))
        return frozenset(name.value for name in self.nodes_in(self.module, cst.Name) if id(name) not in skipped)

    @functools.cached_property
    def string_literals(self):
        """Every plain string literal of the file (the names `getattr(nn, rnn_type)` may take)."""
        found = set()

        class Collector(cst.CSTVisitor):
            def visit_SimpleString(self, node):
                value = node.evaluated_value
                if isinstance(value, str):
                    found.add(value)

        walk(self.module, Collector())
        return frozenset(found)

    @functools.cached_property
    def lines(self):
        """The source text split into lines (once: reports read it per class)."""
        return self.text.splitlines()

    @functools.cached_property
    def autograd_functions(self):
        """Names of the file's `torch.autograd.Function` subclasses (called as `Name.apply(...)`)."""
        return frozenset(node.name.value for node in self.module.body if isinstance(node, cst.ClassDef) and any(
            self.imports.resolve(base.value) == "torch.autograd.Function" for base in node.bases))

    @functools.cached_property
    def registrars(self):
        """{module-level function: the module-level tables it fills by key} (frontend/names.py)."""
        return registrar_functions(self.module)

    @functools.cached_property
    def model_names(self):
        """Top-level names the model needs, directly or through each other: helper functions, plain classes
        (configs, namedtuples), assigned constants, and builder functions that construct torch layers
        (`make_layers(cfg)`) with what they use. Everything else at module level (training, data, I/O,
        pretrained-weight registries) is not model code, except factories that only build a model class
        (`def resnet14_tiny(num_classes=10): return ResNet(...)`), which train_tpu.py calls as the source does.
        Names other files of a converted package take from this one (`exported`) are model code too, except
        functions that download weights (a sibling's `from .utils import load_pretrained_weights`)."""
        bindings = top_level_bindings(self.module)
        builders = [node for name, node in self.functions.items() if name != self.sequential_factory and (
                    builds_torch_layers(node, self.imports) or self._only_builds_a_model(node) or
                    name in self.factories)]
        used = {node.name.value for node in builders}
        exported = [name for name in sorted(self.exported | self.entry_names)
                    if name in bindings and name not in self.classes and name not in self.downloaders]
        used.update(exported)
        frontier = [node for info in self.classes.values() for node in _model_parts(info)] + builders
        frontier += [node for name in exported for node in bindings[name]]
        # `gluon.Trainer(...)`, `self.data`: an attribute's name is not the module-level name it spells, nor is a
        # keyword's (timm's `model_cfgs = dict(hgnet_tiny=dict(...))` reads no function `hgnet_tiny`)
        attributes = {id(attribute.attr) for attribute in self.nodes_in(self.module, cst.Attribute)}
        attributes |= {id(arg.keyword) for arg in self.nodes_in(self.module, cst.Arg) if arg.keyword is not None}
        while frontier:
            node = frontier.pop()
            for name in {name.value for name in self.nodes_in(node, cst.Name) if id(name) not in attributes}:
                if name in bindings and name not in used and name not in self.classes and name not in self.downloaders:
                    used.add(name)  # (a function reading pretrained weights is I/O: a call of it, a stub)
                    frontier.extend(bindings[name])
        return frozenset(used)

    def add_entry_names(self, names):
        """Module-level names the port's factory of the model reads become model code (model_names read anew)."""
        self.entry_names = frozenset(self.entry_names | set(names))
        self.__dict__.pop("model_names", None)

    def _only_builds_a_model(self, function):
        """True for `def f(...): [docstring] return ModelClass(...)` with an in-file module class."""
        statements = body_without_docstring(function)
        if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
            return False
        returned = statements[0].body[0]
        return isinstance(returned, cst.Return) and isinstance(returned.value, cst.Call) and isinstance(
            returned.value.func, cst.Name) and returned.value.func.value in self.classes

    def model_functions(self):
        """Module-level functions the model classes use (directly or through each other): the rest is
        training, data or I/O code, which the model module does not carry."""
        return [name for name in self.functions if name in self.model_names]

    def origin(self, line):
        """(file name, line) of a line of the text: a line of a linked definition is its own file's line, so a stub
        in it says the same wherever the definition is translated."""
        if self.linked_from_line is None or line is None or line < self.linked_from_line:
            return self.path.name, line
        index = bisect.bisect_right(self.linked_lines, line, key=lambda entry: entry[0]) - 1
        if index < 0:
            return self.path.name, line
        first, last, origin, origin_line = self.linked_lines[index]
        if line > last:  # an import or an alias the linker wrote between definitions
            return self.path.name, line
        return origin.name, origin_line + line - first

    def line_of(self, node):
        position = self.positions.get(node)
        return position.start.line if position else None

    def is_linked(self, node):
        """Whether `node` is part of a definition the linker appended (library code, not the file's own)."""
        line = self.line_of(node)
        return self.linked_from_line is not None and line is not None and line >= self.linked_from_line

    def code_of(self, node):
        """The source code of `node`; a one-line expression or simple statement is sliced from the text (regenerating
        code for every expression the translator reads made conversion time grow with nesting depth, and for every
        statement it records was a second code generation of the whole file)."""
        position = self.positions.get(node)
        if position is not None and position.start.line == position.end.line and self._plain_lines is not None:
            line = self._plain_lines[position.start.line - 1]
            if _is_sliceable_expression(type(node)) and not getattr(node, "lpar", ()):  # else: parentheses, a comma
                return line[position.start.column:position.end.column]
            if node in self._parsed_statements:  # as libcst writes it: comment lines above, no indent
                newline = self.module.default_newline
                above = "".join(empty.whitespace.value + (empty.comment.value if empty.comment else "") +
                                (empty.newline.value or newline) for empty in node.leading_lines)
                return above + line[position.start.column:] + newline
        code = self._generated_code.get(node)
        if code is None:  # the translator reads a node several times (layout trials, reports)
            code = self._generated_code[node] = self.module.code_for_node(node)
        return code

    @functools.cached_property
    def _parsed_statements(self):
        """The simple statements as parsed: a Gluon method porter rewrites gets new statements (with the old
        positions) whose text is not the file's."""
        parsed = itertools.islice(self.positions, self.parsed_nodes)  # nodes added after the parse come later
        return frozenset(node for node in parsed if type(node) is cst.SimpleStatementLine)

    @functools.cached_property
    def _generated_code(self):
        return {}

    def span_text(self, node):
        """The source text from `node`'s first to its last character as the file has it (indentation of
        continuation lines included); '' for a node that is not from the file."""
        position = self.positions.get(node)
        if position is None or self._plain_lines is None:
            return self.code_of(node) if position is not None else ""
        lines = self._plain_lines[position.start.line - 1:position.end.line]
        if len(lines) == 1:
            return lines[0][position.start.column:position.end.column]
        return "\n".join([lines[0][position.start.column:], *lines[1:-1], lines[-1][:position.end.column]])

    @functools.cached_property
    def _plain_lines(self):
        """The text's lines as the parser counts them (None when it has `\\r` line ends: no slicing then)."""
        return None if "\r" in self.text else self.text.split("\n")


IMPORT_TYPES = frozenset({cst.Import, cst.ImportFrom})  # exact types: libcst does not subclass them


PARSE_RECURSION_LIMIT = 20 * MAX_NESTING + 1000


@contextlib.contextmanager
def recursion_room(limit):
    """Raise Python's recursion limit to at least `limit` for the block (pure-Python frames only)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def parse_source(path, display_path=None, factories=False, appended=""):
    """Read and parse `path`; find module classes and functions. `factories`: the definitions the file's factories
    take from its package are linked too (frontend/linker.py); `appended`: code porter adds after the file's own (the
    class a Sequential factory builds: frontend/sequential_factories.py)."""
    display_path = display_path or str(path)
    text = read_text(path, display_path) + appended
    checked_syntax(text, display_path, path)  # check_syntax, or its verdict from the command line's early check
    package = package_of(Path(path))
    own_lines = text.count("\n") + 1
    text, linked, origins, linked_lines, home_names = linked_text(Path(path), text, package, is_covered_by_a_rule,
                                                                  factories)
    text = normalised_text(text)  # `d2l = sys.modules[__name__]`, `self.save_hyperparameters()`
    try:
        with recursion_room(PARSE_RECURSION_LIMIT):  # libcst's visitors recurse a few frames per nesting level
            module = parsed_module(text)  # the text compiled above: libcst's per-node checks are skipped
            positions = node_positions(module)  # a dict: Gluon's normalised methods add nodes
            parsed_nodes = len(positions)
            # every node has a position, in source order among nodes that do not nest: the imports without
            # another walk of the module
            # the file's own imports win over those of linked definitions (a linked `functional as F` must not
            # rebind the file's `torch.nn.functional as F`)
            import_nodes = [node for node in positions if type(node) in IMPORT_TYPES]  # not the ABC isinstance
            boundary = own_lines + 1 if linked else None
            import_nodes.sort(key=lambda node: not (boundary and positions[node].start.line >= boundary))
            imports = ImportTable.from_statements(import_nodes, package)
            for name in linked:  # defined by the linked text now, not imported
                imports.aliases.pop(name, None)
            imports.aliases.update(module_aliases(module, imports))  # `nn_Module = nn.Module`
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise SourceError(f"cannot parse the file ({str(error).splitlines()[0]})", display_path) from None
    body, decided_ifs = decided_body(module, imports.resolve, is_covered_by_a_rule)
    if decided_ifs:  # `if hasattr(nn, "SiLU"): Swish = nn.SiLU else: class Swish(...)`: the branch taken is top-level
        module = module.with_changes(body=body)
    classes, functions = {}, {}
    first_linked = own_lines + 1 if linked else None
    for statement in linked_first(module.body, positions, first_linked):
        if isinstance(statement, cst.ClassDef):
            info = _class_info(statement, imports, classes, positions)
            if info is not None:
                if info.name in classes:
                    raise SourceError(f"module class {info.name} is defined a second time (first at line "
                                      f"{classes[info.name].line})", display_path, info.line,
                                      hint="porter ports one definition per class name: rename or remove one")
                info.family = classes
                classes[info.name] = info
        elif isinstance(statement, cst.FunctionDef):
            functions[statement.name.value] = statement
        elif isinstance(statement, cst.SimpleStatementLine):
            _refuse_rebound_class(statement, classes, positions, display_path)
    framework = "torch"
    if any(info.framework == "mxnet" for info in classes.values()):
        framework = "mxnet"
        module, lambdas = lambdas_as_functions(module, positions)  # `transpose = lambda a: a.T` (d2l's helpers)
        functions.update({name: f for name, f in lambdas.items() if name not in functions})
        for info in classes.values():  # `F` in hybrid_forward names the op namespace
            hybrid = info.node.body.body and next((s for s in info.node.body.body if isinstance(
                s, cst.FunctionDef) and s.name.value == "hybrid_forward"), None)
            namespace = gluon.op_namespace_parameter(hybrid) if hybrid else None
            if namespace is not None and namespace not in imports.aliases:
                imports.aliases[namespace] = gluon.OP_NAMESPACE
    downloaders = downloading_functions(functions, imports)
    for info in classes.values():  # `from_pretrained`: pretrained-weight I/O, not carried over (weight_loading.py)
        info.left_out = weight_loading_methods(info.methods, imports, downloaders)
        info.methods = {name: method for name, method in info.methods.items() if name not in info.left_out}
    factories = gluon.model_factories(functions, classes, module) if framework == "mxnet" else {}
    replaced = {}
    for name, function in functions.items() if framework == "mxnet" else ():
        # helpers build blocks as methods do (`with out.name_scope():` unwrapped); model-zoo factories are model
        # code, without their pretrained-weights branch
        replaced[function] = gluon.normalised_function(function, positions, imports, name in factories)
    functions.update((name, replaced[function]) for name, function in functions.items() if function in replaced)
    if any(old is not new for old, new in replaced.items()):
        module = module.with_changes(body=[replaced.get(s, s) for s in module.body])
    return SourceFile(Path(path), display_path, text, module, positions, imports, classes, functions,
                      framework=framework, linked_from_line=first_linked, factories=factories, downloaders=downloaders,
                      parsed_nodes=parsed_nodes, decided_ifs=decided_ifs, linked_origins=origins,
                      linked_lines=linked_lines, linked_home_names=home_names)


_SLICEABLE = {}  # node class -> whether its one-line code is its text's slice (tested once: ABC checks are slow)


def _is_sliceable_expression(kind):
    found = _SLICEABLE.get(kind)
    if found is None:
        found = _SLICEABLE[kind] = issubclass(kind, cst.BaseExpression) and not issubclass(kind, cst.StarredElement)
    return found


def linked_first(statements, positions, first_linked):
    """Top-level statements with those the linker appended (from line `first_linked` on) first: the file's own
    classes may derive from them."""
    if first_linked is None:
        return list(statements)
    start = {s: positions[s].start.line for s in statements}
    return [s for s in statements if start[s] >= first_linked] + [s for s in statements if start[s] < first_linked]


def is_covered_by_a_rule(canonical):
    """Whether a rule translates `canonical` (such names stay imports; the linker does not copy them in)."""
    from porter.rules.registry import load_all_rules

    module_rules, function_rules = load_all_rules()
    if canonical in module_rules or canonical in function_rules:
        return True
    # the linker asks about names as a package module imports them (`timm.layers.weight_init.trunc_normal_`)
    canonical = canonical_id(canonical)
    return canonical in module_rules or canonical in function_rules or canonical in EQUIVALENT_NAMES.values()


def is_a_rule_layer(canonical):
    """Whether a layer rule covers `canonical` (`nn.LayerNorm`): a class deriving from it is a module."""
    from porter.rules.registry import load_all_rules

    return canonical in load_all_rules()[0]


def package_of(path):
    """Dotted package of a file inside a package (folders with `__init__.py`), '' for a loose file:
    `.../torchvision/models/resnet.py` -> `torchvision.models`."""
    parts = []
    folder = path.resolve().parent if path.exists() else path.parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(parts))


def builds_torch_layers(function, imports):
    """Whether a function constructs torch.nn layers itself and returns what it built (`make_layers(cfg)`,
    `nn.Sequential(*layers)`); a training function (it calls `.backward()`, or returns nothing) is not one, even
    when it builds a loss or the model, nor is a pretrained-weight factory (it downloads weights or loads a
    state_dict: `inceptionv4(pretrained='imagenet')` swapping in a 1000-class head after the download)."""
    found, training, returns = [], [], []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            canonical = imports.resolve(call.func)
            name = canonical.rsplit(".", 1)[-1] if canonical else ""
            if canonical and canonical.startswith(LAYER_NAMESPACES) and name[:1].isupper() and \
                    not name.endswith("Loss"):
                found.append(call)
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
                training.append(call)
            if canonical in WEIGHT_DOWNLOADS or isinstance(call.func, cst.Attribute) and \
                    call.func.attr.value == "load_state_dict":
                training.append(call)  # a pretrained-weight factory (downloads, loads a state_dict): I/O

        def visit_Return(self, node):
            if node.value is not None:
                returns.append(node)

        def visit_FunctionDef(self, node):
            return node is function  # nested functions return for themselves

    walk(function, Finder())
    return bool(found) and bool(returns) and not training


def _method_renamed(method, name, positions):
    """A copy of FunctionDef `method` named `name`, its nodes at the original's positions."""
    renamed = method.with_changes(name=cst.Name(name))
    for old, new in ((method, renamed), (method.name, renamed.name)):
        if old in positions:
            positions[new] = positions[old]
    return renamed


def _refuse_rebound_class(statement, classes, positions, display_path):
    """A SourceError for a top-level assignment binding the name of a module class defined above that something
    read in between (`class Kept(Scale)`, then `Scale = nn.Identity`): the port holds one binding per name. (A class
    nothing reads before it is bound again is dropped: static_branches.py. A rebinding that reads the class,
    `Block = register(Block)`, is left out as before: the class is ported.)"""
    for name in assigned_names(statement):
        if name in classes and positions[statement].start.line > classes[name].line and \
                name not in read_names(statement.body[-1].value if len(statement.body) == 1 and isinstance(
                    statement.body[-1], (cst.Assign, cst.AnnAssign)) and statement.body[-1].value is not None
                    else statement):
            raise SourceError(f"module class {name} (line {classes[name].line}) is bound again after code above "
                              f"uses it", display_path, positions[statement].start.line,
                              hint="porter ports one binding per name: rename the class or the later binding")


def _class_info(node, imports, known, positions):
    in_file_bases, is_module, container, layer_base, framework = [], False, None, None, "torch"
    mixins = []
    for base in node.bases:
        canonical = imports.resolve(base.value)
        name = dotted_name(base.value)
        if canonical in MODULE_BASES:
            is_module = True
        elif canonical in gluon.BLOCK_BASES:
            is_module, framework = True, "mxnet"
        elif canonical in gluon.CONTAINER_BASES:
            is_module, container, framework = True, gluon.CONTAINER_BASES[canonical], "mxnet"
        elif canonical in CONTAINER_BASES:
            is_module, container = True, CONTAINER_BASES[canonical]
        elif name in known:
            is_module = True
            in_file_bases.append(name)
            framework = known[name].framework
        elif canonical is not None and is_a_rule_layer(canonical) and \
                canonical.rsplit(".", 1)[-1].lstrip("_")[:1].isupper():  # (torch's `_ConvNd` too)
            is_module, layer_base = True, canonical  # `class LayerNorm2d(nn.LayerNorm)` with its own forward
        elif isinstance(base.value, cst.Name) and canonical in (None, name) and base.keyword is None:
            mixins.append(name)
    if not is_module:
        return None
    methods, attributes = {}, {}
    for statement in node.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value in methods and _property_accessor(statement):
            continue  # (`@buffer.setter` after the `@property` getter: the getter is the method; a ported model's
            # attributes are set by its own code, not through the property)
        if isinstance(statement, cst.FunctionDef):
            methods[statement.name.value] = statement
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                        small.targets[0].target, cst.Name):
                    attributes[small.targets[0].target.value] = small.value
    for name, value in list(attributes.items()):
        if isinstance(value, cst.Name) and value.value in methods and name not in methods:
            # `forward = _forward_impl` in the class body: the method under a second name, as Python binds it (the
            # first name kept only where the class reads it)
            original = value.value
            methods[name] = _method_renamed(methods[original], name, positions)
            del attributes[name]
            if not any(original in names_in(method) for key, method in methods.items() if key != original):
                del methods[original]
    saved_names = {}
    if framework == "torch":
        methods = with_forward_from_aliases(methods, positions)  # `self.forward = self.forward_slicing`
    if framework == "mxnet":
        saved_names = saved_parameter_names(methods, imports)
        inherited = [known[b].find_method("__init__") for b in in_file_bases]  # their parameters are this Block's
        methods = gluon.normalised_methods(methods, positions, imports, [i for i in inherited if i is not None])
    info = ClassInfo(node.name.value, node, positions[node].start.line, in_file_bases, methods, attributes)
    info.saved_names = saved_names
    info.framework = framework
    info.container_base = container or next((known[b].container_base for b in in_file_bases
                                             if known[b].container_base), None)
    info.layer_base = layer_base
    info.mixins = tuple(mixins)
    return info


def _property_accessor(definition):
    """Whether a method is decorated `@<name>.setter` or `@<name>.deleter` (a property's other accessors)."""
    return any(isinstance(d.decorator, cst.Attribute) and d.decorator.attr.value in ("setter", "deleter")
               for d in definition.decorators)


def _model_parts(info):
    """The parts of a model class the model needs: the whole class, or without its pretrained-weight methods."""
    if not info.left_out:
        return [info.node]
    left_out = set(info.left_out.values())
    return [*(b.value for b in info.node.bases), *(d.decorator for d in info.node.decorators),
            *(s for s in info.node.body.body if s not in left_out)]


def body_without_docstring(function):
    """The statements of `function`'s body, its docstring (any string-only statement) left out."""
    return [s for s in function.body.body if not (
        isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr) and
        isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]
