"""The factory that builds the model, when its class cannot be built from JSON constructor arguments.

torchvision's `ResNet(block, layers)` takes a block class, which `--init-args` (JSON) cannot name: the file's own
factories build it (`def resnet18(*, weights=None, progress=True, **kwargs)` returning
`_resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)`, whose `model = ResNet(block, layers, **kwargs)` is
returned). `porter convert resnet.py` builds the model as the first such factory does (`--class resnet50` names
another), and the generated scripts, tests and `porter verify` build it through that factory: the source's own on
torch's side (its pretrained weights left at their default: none), and on the port's side a function of the same name
that constructs the class as the factory does, read here by following the factory's calls with their arguments bound
(`ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)`). A factory the model module carries as it is (`def res2net_tiny(
**kwargs): return Res2Net(Bottle2neck, [2, 2], **kwargs)`) is used as it is.

Followed: assignments (the last binding of a name wins), calls of the file's own functions, `return NAME` of a built
model, and `if` statements whose condition is decided by what is bound (`if weights is not None:` with `weights=None`)
or that touch neither the model nor the arguments. Anything else that could change what is built (a `kwargs.pop`
statement, a condition read from an unknown value, a model changed after construction) leaves the factory unread:
porter then says that the model needs arguments it cannot build, rather than guess.
"""

import ast
import builtins
import math
import re
import sys
import textwrap
from dataclasses import dataclass, replace

import libcst as cst

from porter.frontend.factory_reader import (
    WEIGHTS_SWITCH,
    FactoryReader,
    bound_to_defaults,
    pins_weights,
    required_names,
    required_parameters,
)
from porter.frontend.factory_values import KWARGS, Unread, free_names, node_code, popped_key
from porter.frontend.main_class import ReturnedClasses
from porter.frontend.module_constants import KnownKeys, module_constants
from porter.frontend.names import top_level_bindings
from porter.frontend.walk import descendants, walk


@dataclass(frozen=True)


class ModelEntry:
    """The function that builds the main class."""

    function: str  # the source's factory, called by torch's side with the user's arguments
    class_name: str
    line: int  # the factory's line in the source
    arguments: tuple = ()  # code of the construction's arguments, the factory's own parameters bound
    takes_kwargs: bool = False  # the factory hands its keyword arguments on to the class
    names: frozenset = frozenset()  # module-level names the arguments read
    statements: tuple = ()  # code the port's factory runs first (`setting, last_channel = _conf("b0")`)
    as_written: bool = False  # the model module carries the factory itself: no function is generated
    parameters: tuple = ()  # (name, default code) of the factory's parameters the port's factory takes too
    reads: frozenset = frozenset()  # names the construction and the statements before it read
    positional: int = 0  # how many of `parameters` (the source's leading ones) may be given by position
    torch_arguments: tuple = ()  # (name, None) of the weights switches torch's side hands the source's factory
    defaults: tuple = ()  # code (`"layers": (3, 4)`) of keyword arguments the user's keyword arguments override

    def code(self, source_name):
        """The model module's function building the class as the factory does (None: the factory is carried)."""
        if self.as_written:
            return None
        merged = "{" + ", ".join([*self.defaults, f"**{KWARGS}"]) + "}" if self.defaults else KWARGS
        arguments = [*self.arguments, *([f"**{merged}"] if self.takes_kwargs else [])]
        own = [f"{name}={default}" for name, default in self.parameters]
        keyword_only = own[self.positional:]
        signature = ", ".join([*own[:self.positional], *(["*"] if keyword_only else []), *keyword_only,
                               *([f"**{KWARGS}"] if self.takes_kwargs else [])])
        return (f"def {self.function}({signature}):\n"
                f'    """{self.class_name} built as {source_name}:{self.line} {self.function}() builds it (pretrained '
                f'weights aside)."""\n'
                + "".join(textwrap.indent(statement.strip(), "    ") + "\n" for statement in self.statements)
                + f"    return {self.class_name}({', '.join(arguments)})\n")


def model_entry(source, function_name):
    """The ModelEntry of the source's own function `function_name`, or None when it builds no module class this
    reader can follow."""
    function = source.functions.get(function_name)
    if function is None:
        return None
    if function_name in source.model_functions():  # carried as written: it builds what it builds, both sides
        returned = [name for name, always in ReturnedClasses(source.functions, set(source.classes),
                                                      source.imports.resolve).of(function_name).items() if always]
        if len(returned) == 1:
            return ModelEntry(function_name, returned[0], source.line_of(function), as_written=True)
    bindings = top_level_bindings(source.module)  # (read once for every reading below)
    entry = _read_entry(source, bindings, function, function_name, ())
    if entry is None:
        return None
    for name, default in _keepable_parameters(function):  # each parameter the construction reads, kept as one
        wider = _read_entry(source, bindings, function, function_name, (*entry.parameters, (name, default)))
        if wider is not None and name in wider.reads:
            entry = wider
    order = [p.name.value for p in function.params.params]  # kept in the source's order, positional where they can
    kept = [name for name, _ in entry.parameters]
    leading = next((i for i, name in enumerate(order[:len(kept)]) if name not in kept), min(len(kept), len(order)))
    pinned = tuple((p.name.value, None) for p in (*function.params.params, *function.params.kwonly_params)
                   if pins_weights(p))  # `weights_backbone=ResNet50_Weights.IMAGENET1K_V1` read as None
    return replace(entry, positional=leading if kept[:leading] == order[:leading] else 0, torch_arguments=pinned)


def _read_entry(source, bindings, function, function_name, parameters):
    """The ModelEntry of `function` with `parameters` ((name, default code)) kept as the port's factory's own and
    the others bound to their defaults; None where the reading fails or names what the port lacks. `bindings`: the
    source's top-level bindings."""
    reader = FactoryReader(source)
    bound = bound_to_defaults(function)
    bound.update((name, cst.Name(name)) for name, _ in parameters)
    reader.locals.update(name for name, _ in parameters)
    try:
        built = reader.construction(function, bound, 0)
    except (Unread, RecursionError):
        built = None
    if built is None:
        return None
    class_name, call = built
    line = source.line_of(function)
    arguments, takes_kwargs, overridden = [], False, []
    for argument in call.args:
        if argument.star == "**" and isinstance(argument.value, cst.Name) and argument.value.value == KWARGS:
            takes_kwargs = True
            continue
        if argument.star == "**" and isinstance(argument.value, cst.Dict) and not takes_kwargs:
            # `**{"layers": (3, 4), **kwargs, "stem": stem}`: the keys before the user's are defaults they override
            # (kept merged), those after are the factory's
            user = None
            for index, element in enumerate(argument.value.elements):
                if isinstance(element, cst.StarredDictElement):
                    if user is not None or not (isinstance(element.value, cst.Name) and element.value.value == KWARGS):
                        return None
                    user = index
                    continue
                if not isinstance(element.key, cst.SimpleString) or not element.key.evaluated_value.isidentifier():
                    return None
                value = _folded(node_code(element.value.visit(_DecidedConditionals())))
                if user is None:
                    overridden.append(f'"{element.key.evaluated_value}": {value}')
                else:
                    arguments.append(f"{element.key.evaluated_value}={value}")
            takes_kwargs = True
            continue
        if argument.star:
            return None
        value = _folded(node_code(argument.value.visit(_DecidedConditionals())))
        arguments.append(f"{argument.keyword.value}={value}" if argument.keyword is not None else value)
    prelude = _unread_locals_popped(source, bindings, reader.prelude, call)
    computed = [s for s in prelude if not isinstance(s, (cst.Import, cst.ImportFrom))]
    defaults = [cst.parse_expression(default) for _, default in parameters]
    read = free_names([*call.args, *computed])
    names = free_names([*call.args, *computed, *defaults]) - {KWARGS} - reader.locals
    if not all(_portable_name(source, bindings, name) for name in names):
        return None  # a name the port would not define (a sibling's helper, a pretrained-weights enum)
    if not all(_has_a_port(canonical) for canonical in _torch_references(source, [*call.args, *prelude,
                                                                                   *defaults])):
        return None  # a torch name the port's code cannot name (`nn.BatchNorm2d` becomes the runtime's: it can)
    return ModelEntry(function_name, class_name, line, tuple(arguments), takes_kwargs,
                      frozenset(name for name in names if name in bindings),
                      tuple(map(_statement_code, prelude)), parameters=parameters, reads=frozenset(read),
                      defaults=tuple(overridden))


def _keepable_parameters(function):
    """(name, default code) of the factory's parameters the port's factory may take as its own: those with a
    default, not a pretrained-weights switch, not `*args`/`**kwargs`."""
    parameters = function.params
    return [(p.name.value, node_code(p.default)) for p in (*parameters.params, *parameters.kwonly_params)
            if p.default is not None and not WEIGHTS_SWITCH.search(p.name.value) and p.name.value != KWARGS]


def classmethod_entry(source, requested):
    """The ModelEntry of `Class.method`, a classmethod of a module class of the file building it
    (efficientnet_pytorch's `EfficientNet.from_name(model_name)`): the port carries it as written. None otherwise."""
    class_name, _, method = requested.partition(".")
    info = source.classes.get(class_name)
    node = info.find_method(method) if info is not None and method and "." not in method else None
    if node is None or not any(isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod"
                               for d in node.decorators):
        return None
    return ModelEntry(requested, class_name, source.line_of(node), as_written=True)


def factory_node(source, entry):
    """The FunctionDef of an entry's factory (a module-level function, or a classmethod: `Class.method`)."""
    class_name, _, method = entry.function.rpartition(".")
    return source.classes[class_name].find_method(method) if class_name else source.functions[entry.function]


def default_entry(source, class_name, init_args):
    """The first public factory (one no other function of the file calls) that builds `class_name`, when the
    class needs constructor arguments `init_args` does not give; None when it needs none or no factory builds it.
    `class_name` None: the first public factory building any module class (timm's vitamin.py, whose factories hand
    `VisionTransformer` to timm's builder)."""
    if class_name is not None and not required_parameters(source, class_name) - set(init_args or {}):
        return None
    called = {name for name in source.functions if any(not source.is_linked(call) for call in source.calls_named(name))}
    for name, node in source.functions.items():
        if name in called or name.startswith("_") or source.is_linked(node):
            continue
        if required_names(node.params):
            continue
        entry = model_entry(source, name)
        if entry is not None and (class_name is None or entry.class_name == class_name):
            return entry
    return None


def _unread_locals_popped(source, bindings, prelude, call):
    """`prelude` with each local the construction does not read, bound to a call of what the port does not define,
    replaced by the pops of the user's keyword arguments in it (timm's inception_v3.py: `pretrained_cfg =
    resolve_pretrained_cfg(variant, pretrained_cfg=kwargs.pop("pretrained_cfg", None))`, timm's pretrained-config
    machinery, whose result only the builder's weight loading reads)."""
    kept = []
    for index, statement in enumerate(prelude):
        target = statement.targets[0].target if isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
            else None
        others = [*call.args, *prelude[:index], *prelude[index + 1:]]
        if not (isinstance(target, cst.Name) and isinstance(statement.value, cst.Call)) or \
                target.value in free_names(others) or all(
                    _portable_name(source, bindings, name) for name in free_names([statement.value]) - {KWARGS}):
            kept.append(statement)
            continue
        kept.extend(cst.Expr(cst.parse_expression(f"{KWARGS}.pop({key!r}, None)"))
                    for key in _popped_keys(statement.value))
    return kept


def _popped_keys(node):
    """The keys `kwargs.pop("key", ...)` calls inside `node` pop from the port factory's keyword arguments."""
    bound = {KWARGS: cst.Name(KWARGS)}
    return [key for call in descendants(node) if isinstance(call, cst.Call)
            for key in [popped_key(call, bound)] if key is not None]


def _portable_name(source, bound, name):
    """Whether the port defines `name` when its factory reads it: a builtin, a module class, model code the port
    carries, the file's own top-level definitions (the factory's reading makes them model code), torch's names (a
    rule ports them: checked apart) and the standard library's (`functools.partial`). Not a definition linked in
    from a sibling file that is not model code, nor anything about pretrained weights (`ResNet50_Weights`)."""
    if WEIGHTS_SWITCH.search(name) or name in source.downloaders:
        return False
    if hasattr(builtins, name) or name in source.classes or name in source.model_names:
        return True
    if name in source.imports.aliases:
        top = (source.imports.resolve(cst.Name(name)) or "").split(".")[0]
        return top == "torch" or top in sys.stdlib_module_names
    nodes = bound.get(name)
    if not nodes:
        return False
    if all(not source.is_linked(node) or isinstance(node, cst.FunctionDef) for node in nodes):
        return True
    # a sibling's constant (module_constants.py: computed from literals), carried as model code: timm's
    # `BN_EPS_TF_DEFAULT = 1e-3`, which its tf_ variants set as the BatchNorm eps; not a table of unread values
    constants = module_constants(source.module)
    return name in constants and not isinstance(constants[name], KnownKeys)


_PURE_BUILTINS = {name: getattr(builtins, name) for name in (
    "abs", "bool", "float", "int", "len", "list", "max", "min", "range", "round", "sum", "tuple", "zip", "True",
    "False", "None")}


def _folded(code):
    """`[[ci] * li for (ci, li) in zip([64, 128], [1, 1])]` as the literal it computes (`[[64], [128]]`), `(10 >= 50)`
    as `False`; any other code as it is. Code that could build something huge (a power, a number past a million:
    `[0] * 10**12` in a hostile file) is left as it is, never run."""
    if "**" in code or len(code) > 2000 or any(len(digits) > 6 for digits in re.findall(r"\d+", code)):
        return code
    try:
        value = eval(code, {"__builtins__": _PURE_BUILTINS}, {})  # literals and pure builtins only
    except (ArithmeticError, AttributeError, LookupError, NameError, SyntaxError, TypeError, ValueError):
        return code
    return repr(value) if _is_plain(value) else code


_LITERALS = (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _statement_code(statement):
    """A statement of the port's factory; a module built into a local with its arguments folded (`Block(4 * 2)` as
    `Block(8)`)."""
    if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.Call) and \
            isinstance(statement.targets[0].target, cst.Name):
        call = statement.value
        arguments = [argument if argument.star or isinstance(argument.value, (*_LITERALS, cst.GeneratorExp)) else
                     argument.with_changes(value=cst.parse_expression(_folded(node_code(argument.value))))
                     for argument in call.args]  # (`tuple(i for i in ...)`: a generator's code is no expression)
        statement = statement.with_changes(value=call.with_changes(args=arguments))
    return node_code(statement)


class _DecidedConditionals(cst.CSTTransformer):
    """`a if not "botnet26t" else b` (a condition of literals, timm's `model_cfgs[variant] if not cfg_variant else
    model_cfgs[cfg_variant]` bound) as the side it takes."""

    def leave_IfExp(self, original, updated):
        test = node_code(updated.test)
        try:
            taken = ast.literal_eval(_folded(test))
        except (SyntaxError, ValueError):
            return updated
        return updated.body if taken else updated.orelse


def _is_plain(value):
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item) for item in value)
    return value is None or isinstance(value, (bool, int, str)) or isinstance(value, float) and math.isfinite(value)


def _torch_references(source, nodes):
    """The canonical names of the torch functions, layers and constants `nodes` name (`nn.BatchNorm2d`)."""
    found = []

    class References(cst.CSTVisitor):
        def visit_Attribute(self, node):
            canonical = source.imports.resolve(node)
            if canonical is not None and canonical.split(".")[0] == "torch":
                found.append(canonical)
                return False
            return True

        def visit_Name(self, node):
            canonical = source.imports.resolve(node)
            if canonical is not None and canonical.split(".")[0] == "torch":
                found.append(canonical)

        def visit_Arg(self, node):
            walk(node.value, self)
            return False

    for node in nodes:
        walk(node, References())
    return found


def _has_a_port(canonical):
    """Whether the port's code carried over names `canonical` by the runtime's name (codegen's runtime renamer)."""
    from porter.ir.containers import container_runtime
    from porter.rules.constants import CARRIED_CLASSES, TORCH_CONSTANTS
    from porter.rules.registry import load_all_rules

    module_rules, function_rules = load_all_rules()
    rule = module_rules.get(canonical) or function_rules.get(canonical)
    return (getattr(rule, "runtime", None) is not None or canonical in TORCH_CONSTANTS or
            canonical in CARRIED_CLASSES or container_runtime(canonical) is not None)
