"""Pretrained-weight code: functions and model-class methods that download or read weight files.

`EfficientNet.from_pretrained(name)` calls `load_pretrained_weights`, which calls `model_zoo.load_url(url_map[name])`
or `torch.load(path)`: I/O, like a training loop, not model code. The port loads weights with `porter convert
--weights` and its own `load_state_dict`; such methods are left out of the generated class (listed in PORTING.md
as not carried over) instead of becoming stubs, and the functions they call are not carried over either.
"""

import libcst as cst

from porter.frontend.walk import walk

# calls that fetch or read pretrained weights: a function making them is I/O, not model code
WEIGHT_DOWNLOADS = frozenset({"torch.utils.model_zoo.load_url", "torch.hub.load_state_dict_from_url", "torch.hub.load",
                              "torch.hub.download_url_to_file", "torch.load", "urllib.request.urlretrieve"})
# methods the model needs whatever they call (a constructor that loads weights when asked still builds the layers)
KEPT_METHODS = frozenset({"__init__", "forward", "hybrid_forward"})


def downloading_functions(functions, imports):
    """Names of the module-level functions (`{name: cst.FunctionDef}`) that download or read weights, themselves
    or through each other (`from_pretrained` -> `load_pretrained_weights` -> `model_zoo.load_url`)."""
    scanned = {name: _scan(function, imports) for name, function in functions.items()}  # each body walked once
    found = {name for name, (downloads, _) in scanned.items() if downloads}
    while True:
        more = {name for name, (_, called) in scanned.items() if name not in found and called & found}
        if not more:
            return frozenset(found)
        found |= more


def _scan(function, imports):
    """(whether `function` calls a weight download itself, the bare names it calls)."""
    downloads, called = [], set()

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            if isinstance(call.func, cst.Name):
                called.add(call.func.value)
            if not downloads and imports.resolve(call.func) in WEIGHT_DOWNLOADS:
                downloads.append(call)

    walk(function, Finder())
    return bool(downloads), called


def weight_loading_methods(methods, imports, downloaders):
    """{name: method} of a model class's methods that download or read weights (never its constructor or
    forward)."""
    return {name: method for name, method in methods.items()
            if name not in KEPT_METHODS and _calls(method, imports, downloaders)}


def _calls(function, imports, downloaders):
    """Whether `function` calls a weight download, or one of the `downloaders` by its bare name."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            if imports.resolve(call.func) in WEIGHT_DOWNLOADS or (
                    isinstance(call.func, cst.Name) and call.func.value in downloaders):
                found.append(call)
            return not found

    walk(function, Finder())
    return bool(found)
