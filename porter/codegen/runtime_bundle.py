"""The runtime module of a port: the porter/runtime definitions its model module uses (and what they use), copied
into one file beside the model module, and the names the model module binds from it.

Dependencies are global names only (`porter.runtime.global_references`): a runtime definition is copied when a
copied definition or the model code reads it as a global, never because a local variable shares its name. The
runtime module is its own namespace, so its definitions keep their names; where the user's file already uses a
runtime name (a class `Linear`, a local `mean`), the model module binds the runtime's under the emitted name
(`TorchLinear = runtime.Linear`) chosen before translation (`FileContext.renames`).
"""

import re
import symtable

from porter.runtime import runtime_index, table_global_references

STDLIB_MODULES = {"math", "sys", "contextlib", "collections", "functools", "itertools", "numbers", "typing", "copy",
                  "warnings", "dataclasses", "re", "random", "inspect", "threading"}
# Runtime functions every model module offers by name: callers load weights and walk state through the module.
PUBLIC_NAMES = ("collect_state", "load_state_dict")


def runtime_file_name(module_file_name):
    """`resnet_keras.py` -> `resnet_keras_runtime.py` (beside it, so a directory of ports never shares one)."""
    return module_file_name.removesuffix(".py") + "_runtime.py"


ALIASED_MODULES = (("numpy", "np"), ("tensorflow", "tf"))
# `math.`, `np.` ... not after a name or a dot; one pass over the text finds them all (a pass per module was 17)
_MODULE_USE = re.compile(r"(?<![\w.])(" + "|".join(sorted(STDLIB_MODULES | {"keras"} | {a for _, a in ALIASED_MODULES}))
                         + r")\.")


def runtime_modules_used(text):
    """The imports a chunk of generated text needs (keras, np, tf, math, ...)."""
    used = set(_MODULE_USE.findall(text))
    imports = [f"import {module}" for module in sorted(STDLIB_MODULES | {"keras"}) if module in used]
    return imports + [f"import {module} as {alias}" for module, alias in ALIASED_MODULES if alias in used]


def closure(names):
    """All runtime definitions needed by `names`, dependency-closed."""
    index = runtime_index()
    needed, stack = set(), [n for n in names if n in index]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        stack.extend(u for u in index[name].uses if u in index and u not in needed)
    return needed


def bundle(names):
    """Source text of the runtime definitions `names` need, in definition order (base classes first)."""
    index = runtime_index()
    needed = closure(names)
    chunks, seen = [], set()

    def place(definition, waiting):
        if definition.source in seen:  # one statement can define several names
            return
        for base in _base_names(definition.source):  # a base class another runtime file defines comes first
            if base in needed and base not in waiting:
                place(index[base], waiting | {definition.name})
        seen.add(definition.source)
        chunks.append(definition.source)

    for definition in sorted((index[n] for n in needed), key=lambda d: d.order):
        place(definition, frozenset({definition.name}))
    return "\n\n\n".join(chunks)


def _base_names(source):
    """The plain names a class definition derives from ([] for anything else)."""
    if "class " not in source:
        return []
    import ast

    node = ast.parse(source).body[0]
    return [base.id for base in node.bases if isinstance(base, ast.Name)] if isinstance(node, ast.ClassDef) else []


def runtime_bindings(model_code, renames, requested=()):
    """[(name in the model module, runtime name)] for every runtime definition `model_code` reads as a global,
    every `requested` one the model code names (the translation asked for it; some are read only by expressions
    the runtime evaluates in the model module, such as `torch_flatten_inputs = {"fc": "last_channels(self.features)"}`),
    plus
    PUBLIC_NAMES (by their own names where the model code defines none: a file naming one that is not ported keeps
    the contract); sorted. `renames` maps runtime names the user's file also uses to the names emitted for them."""
    index = runtime_index()
    emitted_as = {new: old for old, new in renames.items()}
    table = symtable.symtable(model_code, "<generated>", "exec")  # read once for both questions (a large module)
    defined = _module_level_names(table)
    bindings = {}
    for name in table_global_references(table) - defined:
        runtime = emitted_as.get(name, None if name in renames else name)  # a renamed name is the user's own
        if runtime in index:
            bindings[name] = runtime
    for runtime in PUBLIC_NAMES:  # by their own names, unless the model code defines one (then as renamed)
        emitted = runtime if runtime not in defined else renames.get(runtime, runtime)
        if emitted not in defined:
            bindings.setdefault(emitted, runtime)
    words = None
    for runtime in sorted(name for name in requested if name in index):
        emitted = renames.get(runtime, runtime)
        if emitted not in defined and emitted not in bindings:
            words = set(re.findall(r"\w+", model_code)) if words is None else words
            if emitted in words:  # (asked for by a translation the model code did not keep: a channel count
                bindings[emitted] = runtime  # an average pool dropped)
    return sorted(bindings.items())


def _module_level_names(table):
    """Names a module's symbol table binds at module level (its classes, functions, constants and imports)."""
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
