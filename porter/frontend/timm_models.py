"""timm's model factory as user code calls it, read statically: `timm.create_model("resnet18", num_classes=5)`.

`create_model` looks the name up in timm's registry at run time; the registry is filled by `@register_model`
entrypoints in `timm/models/*.py` (`def resnet18(pretrained=False, **kwargs)`). porter finds the entrypoint by
reading those files (never importing timm) and reads the call as a call of it, which the linker then links from
timm's files like any library factory (frontend/linker.py). The entrypoints build with `build_model_with_cfg(ResNet,
variant, pretrained, **kwargs)`, timm's builder, which also resolves pretrained configs and downloads; linked from
timm, that call is the construction it makes, `ResNet(**kwargs)` (`cfg=model_cfg` where one is given), as
factory_reader.py reads it for a model file's own factories. A feature extractor (`features_only=True`) stays
`create_model`'s call, a stub porter reports (timm wraps the model in its FeatureListNet: not ported yet).
"""

import functools
import re

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.module_constants import module_constants
from porter.frontend.walk import descendants

CREATE_MODEL = frozenset({"timm.create_model", "timm.models.create_model", "timm.models._factory.create_model"})
# create_model's own parameters besides the name and `pretrained` (which the entrypoints take themselves)
_CREATE_MODEL_OWN = frozenset({"pretrained_cfg", "pretrained_cfg_overlay", "checkpoint_path", "cache_dir",
                               "scriptable", "exportable", "no_jit"})
# build_model_with_cfg's own parameters (model_cfg aside: the class's `cfg`)
BUILDER_OWN = frozenset({"model_cls", "variant", "pretrained", "pretrained_cfg", "pretrained_cfg_overlay",
                         "feature_cfg", "pretrained_strict", "pretrained_filter_fn", "cache_dir", "kwargs_filter",
                         "pretrained_model_args"})
_ENTRYPOINT = re.compile(r"^@register_model\b[^\n]*\n(?:@[^\n]*\n)*def (\w+)\(", re.MULTILINE)


@functools.lru_cache(maxsize=4)
def entrypoints(root):
    """{registered model name: the timm.models module defining its entrypoint} under `root` (the folder holding
    timm)."""
    found = {}
    for path in sorted((root / "timm" / "models").glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for name in _ENTRYPOINT.findall(text):
            found.setdefault(name, f"timm.models.{path.stem}")
    return found


def created_models(module, resolve, root, taken):
    """(`module` with each `timm.create_model(<name>, ...)` of a registered name rewritten to a call of its
    entrypoint, on the same lines; {entrypoint name: its timm.models module}). The name is a string literal, a
    module constant or a config class's attribute holding one (`CFG.model_name`): that entrypoint; or a parameter
    whose default is one, or names one (`def __init__(self, model_name=CFG.model_name)`): the entrypoints of the names the file
    writes that way, chosen by the value at run time (`{"resnet18": resnet18}[model_name](...)`: another name
    raises KeyError, never builds something else). `resolve(node)`: a name's canonical id; `taken`: the names the
    file binds (an entrypoint named like one of them is left as it is)."""
    if root is None:
        return module, {}
    table = entrypoints(root)
    constants = _string_constants(module)
    created = {}

    def entrypoint(text):
        name = text.split(".")[0]  # (`"resnet18.a1_in1k"`: the architecture's)
        return name if name in table and name not in taken and name.isidentifier() else None

    rewritten = module.visit(_CreateModelCalls(resolve, constants, entrypoint, table, created))
    return (rewritten, created) if created else (module, {})


class _CreateModelCalls(cst.CSTTransformer):
    """created_models' rewriter: each create_model call of a name it can tell, noted in `created`."""

    def __init__(self, resolve, constants, entrypoint, table, created):
        super().__init__()
        self.resolve, self.constants, self.entrypoint, self.table, self.created = (resolve, constants, entrypoint,
                                                                                   table, created)
        self.defaults = [{}]  # per enclosing function: parameter -> the string its default writes

    def visit_FunctionDef(self, node):
        params = (*node.params.params, *node.params.kwonly_params)
        written = {p.name.value: p.default.evaluated_value if isinstance(p.default, cst.SimpleString) else
                   self.constants.get(dotted_name(p.default) or "") for p in params if p.default is not None}
        self.defaults.append({name: text for name, text in written.items() if isinstance(text, str)})

    def leave_FunctionDef(self, original, updated):
        self.defaults.pop()
        return updated

    def leave_Call(self, original, updated):
        if self.resolve(original.func) not in CREATE_MODEL or not original.args:
            return updated
        first = original.args[0]
        if first.star or first.keyword is not None and first.keyword.value != "model_name" or any(
                arg.keyword is not None and arg.keyword.value == "features_only" and not (
                    isinstance(arg.value, cst.Name) and arg.value.value == "False") for arg in original.args):
            return updated  # (a feature extractor, timm's FeatureListNet around the model: not ported yet)
        kept = _without_trailing_comma([arg for arg in updated.args[1:]
                                        if arg.keyword is None or arg.keyword.value not in _CREATE_MODEL_OWN])
        value = first.value
        written = value.evaluated_value if isinstance(value, cst.SimpleString) else \
            self.constants.get(dotted_name(value) or "")
        name = self.entrypoint(written) if isinstance(written, str) else None
        if name is not None:
            self.created[name] = self.table[name]
            return updated.with_changes(func=cst.Name(name), args=kept)
        default = self.defaults[-1].get(value.value) if isinstance(value, cst.Name) else None
        name = self.entrypoint(default) if default is not None else None
        if name is None:
            return updated
        self.created[name] = self.table[name]
        chooser = cst.parse_expression(f"{{{default!r}: {name}}}[{value.value}]")
        return updated.with_changes(func=chooser, args=kept)


def _string_constants(module):
    """{`NAME` or `Class.attr`: its string} for the module's constants (module_constants.py) and its classes' class
    attributes bound once to a string literal (`MODEL_NAME = "resnet18"`, `class CFG: model_name = "resnet18"`)."""
    found = {name: value for name, value in module_constants(module).items() if isinstance(value, str)}
    for statement in module.body:
        if not (isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock)):
            continue
        bound = {}
        for line in statement.body.body:
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    target = small.targets[0].target if isinstance(small, cst.Assign) and \
                        len(small.targets) == 1 else getattr(small, "target", None)
                    if isinstance(target, cst.Name):
                        key = f"{statement.name.value}.{target.value}"
                        bound[key] = small.value if key not in bound else None  # (bound twice: not a constant)
        found.update((key, value.evaluated_value) for key, value in bound.items()
                     if isinstance(value, cst.SimpleString))
    return found


def as_constructions(function):
    """A timm library function with its `build_model_with_cfg(Class, variant, pretrained, ...)` calls read as the
    constructions they make (`Class(**kwargs)`); a feature extractor's call stays."""
    if not any(isinstance(n, cst.Call) and dotted_name(n.func) == "build_model_with_cfg"
               for n in descendants(function)):
        return function
    return function.visit(_BuilderAsConstruction())


class _BuilderAsConstruction(cst.CSTTransformer):
    def leave_Call(self, original, updated):
        if dotted_name(original.func) != "build_model_with_cfg" or not original.args or original.args[0].star or \
                original.args[0].keyword is not None:
            return updated
        arguments = []
        for argument in updated.args[3:]:
            keyword = argument.keyword.value if argument.keyword is not None else None
            if keyword in ("features_only", "kwargs_filter") or argument.keyword is None and argument.star != "**":
                return updated  # (a feature extractor, filtered keywords, positional extras: not read)
            if keyword == "model_cfg":
                arguments.append(argument.with_changes(keyword=cst.Name("cfg")))
            elif keyword not in BUILDER_OWN:
                arguments.append(argument)
        return updated.with_changes(func=original.args[0].value, args=_without_trailing_comma(arguments))


def _without_trailing_comma(arguments):
    if arguments and arguments[-1].comma is not cst.MaybeSentinel.DEFAULT:
        arguments[-1] = arguments[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return arguments
