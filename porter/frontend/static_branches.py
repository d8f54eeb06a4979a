"""Top-level `if`/`try` statements porter decides without running anything: the branch taken replaces the statement.

`if hasattr(nn, 'SiLU'): Swish = nn.SiLU` / `else: class Swish(nn.Module): ...` (efficientnet_pytorch's utils.py)
binds a name the model classes use in one of two branches. Torch feature checks are decided as the forward's
`hasattr(F, "scaled_dot_product_attention")` is: by what the port supports (a rule covers `torch.nn.SiLU`). The
statements of the branch taken then stand at top level, where the class finder, the linker, the model-name walk and
the emitter see them like any other definition; the `if` itself is listed as not carried over. An optional import of
a third-party package (`try: from apex... import ...` / `except ImportError: has_apex = False`) takes its handler:
the port never has that package.
"""

import sys
from collections import Counter
from dataclasses import dataclass

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import bound_names, read_names
from porter.frontend.torch_version import version_comparison
from porter.frontend.walk import walk

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
# what a `try` may import and still be left as it is: numpy, and the frameworks and libraries porter translates or
# links (a `try: from timm.layers import X` / `except ImportError: from timm.models.layers import X` is no optional
# package)
AVAILABLE_IN_PORT = frozenset({"torch", "torchvision", "numpy", "mxnet", "gluoncv", "einops", "timm"})


@dataclass(frozen=True)
class DecidedIf:
    """A top-level `if` (or optional-import `try`) decided statically: its test's source ("try" for a `try`), the
    value taken (False: the else branch or the ImportError handler), and the node."""

    node: cst.If | cst.Try
    test: str
    taken: bool


def decided_body(module, resolve, covered):
    """(top-level statements with each decidable `if` replaced by the statements of the branch taken, [DecidedIf]).

    `resolve(node)`: the canonical name of an imported name (`nn` -> `torch.nn`) or None; `covered(canonical)`:
    whether a rule translates it."""
    body, decided = [], []
    for statement in module.body:
        body.extend(_taken_statements(statement, module, resolve, covered, decided))
    shadowed = _shadowed_definitions(body)
    decided.extend(DecidedIf(statement, "shadowed", False) for statement in shadowed)
    return [statement for statement in body if statement not in shadowed], decided


def _shadowed_definitions(body):
    """The `class`/`def` statements of `body` a later top-level statement binds again before anything reads them:
    x-transformers' `class LayerNorm(Module)`, then `LayerNorm = partial(nn.LayerNorm, bias=False)` under a version
    check. Python keeps the last binding, so the port holds that one only (the model's classes would otherwise
    build the dead class: other parameters than torch's)."""
    definitions = [index for index, statement in enumerate(body)
                   if isinstance(statement, (cst.ClassDef, cst.FunctionDef))]
    if not definitions:
        return []
    bound = [set(bound_names(statement)) for statement in body]
    counts = Counter(name for names in bound for name in names)
    definitions = [index for index in definitions if counts[body[index].name.value] > 1]
    mentioned = [None] * len(body)  # (each statement walked once, when a scan first reaches it)
    shadowed = []
    for index in definitions:
        name = body[index].name.value
        for later in range(index + 1, len(body)):
            if name in bound[later]:
                if name not in _read_by_binding(body[later]):
                    shadowed.append(body[index])
                break
            if mentioned[later] is None:
                mentioned[later] = read_names(body[later])
            if name in mentioned[later]:
                break
    return shadowed


def _read_by_binding(statement):
    """Names a binding statement reads where it runs: an assignment's value, a class's bases and decorators, a
    function's decorators and defaults (its body runs later)."""
    if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
        parts = [*statement.decorators, *(statement.bases if isinstance(statement, cst.ClassDef) else
                                          (statement.params,))]
        return set().union(*(read_names(part) for part in parts)) if parts else set()
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
            isinstance(statement.body[0], (cst.Assign, cst.AnnAssign)) and statement.body[0].value is not None:
        return read_names(statement.body[0].value)
    return read_names(statement)


def decided_module(module, resolve, covered):
    """`module` with its decidable top-level `if`s replaced by the branch taken (the same node objects inside)."""
    body, decided = decided_body(module, resolve, covered)
    return module.with_changes(body=body) if decided else module


def _taken_statements(statement, module, resolve, covered, decided):
    if isinstance(statement, cst.Try):
        return _taken_from_try(statement, module, resolve, covered, decided)
    if isinstance(statement, cst.With) and _only_filters_warnings(statement, resolve):
        # `with warnings.catch_warnings(): warnings.simplefilter("ignore"); class StemInterface(...)` (MONAI's DiNTS):
        # what it defines is the module's; the filters say nothing about the model
        decided.append(DecidedIf(statement, "with", True))
        taken = []
        for inner in statement.body.body:
            taken.extend(_taken_statements(inner, module, resolve, covered, decided))
        return taken
    if not isinstance(statement, cst.If):
        return [statement]
    value = static_truth(statement.test, resolve, covered)
    if value is None:
        return [statement]
    decided.append(DecidedIf(statement, module.code_for_node(statement.test), value))
    if value:
        branch = statement.body.body
    elif isinstance(statement.orelse, cst.If):  # `elif`: decided in turn (or kept as an `if` of its own)
        return _taken_statements(statement.orelse, module, resolve, covered, decided)
    else:
        branch = statement.orelse.body.body if statement.orelse is not None else ()
    taken = []
    for inner in branch:
        taken.extend(_taken_statements(inner, module, resolve, covered, decided))
    return taken


def _only_filters_warnings(statement, resolve):
    """Whether a `with` statement's every context is `warnings.catch_warnings(...)` bound to no name."""
    return all(isinstance(item.item, cst.Call) and item.asname is None and
               resolve(item.item.func) == "warnings.catch_warnings" for item in statement.items)


def _taken_from_try(statement, module, resolve, covered, decided):
    """An optional import (`try: from apex... import fused_layer_norm_affine; has_apex = True` / `except ImportError:
    has_apex = False`): the port imports no third-party package, so where the `try` imports one, its ImportError
    handler (then the `finally`) is what runs. Other `try`s stay as they are."""
    handler = next((h for h in statement.handlers if _catches_import_error(h)), None)
    if handler is None or not any(_third_party(name) for name in _imported_modules(statement.body.body)):
        return [statement]
    decided.append(DecidedIf(statement, "try", False))
    # the imports stay (names only the `try` binds resolve to the package: a stub where the model reaches them)
    taken = [s for s in statement.body.body if any(True for _ in _imported_modules([s]))]
    for inner in [*handler.body.body, *(statement.finalbody.body.body if statement.finalbody else ())]:
        taken.extend(_taken_statements(inner, module, resolve, covered, decided))
    return taken


def _catches_import_error(handler):
    caught = handler.type
    names = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    return caught is None or any(isinstance(n, cst.Name) and n.value in IMPORT_ERRORS for n in names)


def _imported_modules(statements):
    """Absolute dotted modules the (simple) import statements among `statements` name; relative ones as ''."""
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                yield from (dotted_name(alias.name) or "" for alias in small.names)
            elif isinstance(small, cst.ImportFrom):
                yield "" if small.relative else (dotted_name(small.module) or "")


def _third_party(module):
    """Whether an absolute module is a package the port never has (not the standard library, not AVAILABLE_IN_PORT)."""
    root = module.split(".")[0]
    return bool(root) and root not in AVAILABLE_IN_PORT and root not in sys.stdlib_module_names


def static_truth(test, resolve, covered):
    """True/False for a test porter decides without running it, else None: `hasattr(<torch module>, "name")` and
    `"name" in dir(<torch module>)` (whether a rule covers that name), `"NAME" in os.environ` (unset), combined with
    `not`, `and`, `or`; comparisons of torch's version (porter/frontend/torch_version.py); `typing.TYPE_CHECKING` (False when the code runs: MONAI's apps/utils.py binds `has_tqdm` in its
    else branch)."""
    if isinstance(test, (cst.Name, cst.Attribute)) and resolve(test) == "typing.TYPE_CHECKING":
        return False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = static_truth(test.expression, resolve, covered)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = static_truth(test.left, resolve, covered), static_truth(test.right, resolve, covered)
        if left is None or right is None:
            return None
        return (left and right) if isinstance(test.operator, cst.And) else (left or right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn)) and \
            resolve(test.comparisons[0].comparator) == "os.environ":
        # `if 'TIMM_FUSED_ATTN' in os.environ:` (timm's layers/config.py): the converter's own environment never
        # goes into the port (the same source gives the same port anywhere), so the variable counts as unset
        return isinstance(test.comparisons[0].operator, cst.NotIn)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr" and \
            len(test.args) == 2 and isinstance(test.args[1].value, cst.SimpleString):
        return torch_has(resolve(test.args[0].value), test.args[1].value.evaluated_value, covered)
    optional = optional_import_check(test)
    if optional is not None:
        return torch_has(*optional, covered)
    compared = version_comparison(test, resolve)  # `version.parse(torch.__version__) >= version.parse("2.1.0")`
    if compared is not None:
        return compared
    return torch_dir_membership(test, resolve, covered)


def optional_import_check(test):
    """(module, name) of MONAI's feature check `optional_import("torch.nn.functional", name="silu")[1]` (the flag of
    the (object, found) pair its utility returns), else None: decided as `hasattr` on that torch module is."""
    if not (isinstance(test, cst.Subscript) and len(test.slice) == 1 and
            isinstance(test.slice[0].slice, cst.Index) and isinstance(test.slice[0].slice.value, cst.Integer) and
            test.slice[0].slice.value.value == "1" and isinstance(test.value, cst.Call)):
        return None
    call = test.value
    callee = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", None)
    if callee != "optional_import" or not call.args or call.args[0].keyword is not None or \
            not isinstance(call.args[0].value, cst.SimpleString):
        return None
    name = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "name"), None)
    if not isinstance(name, cst.SimpleString):
        return None
    return call.args[0].value.evaluated_value, name.evaluated_value


def torch_dir_membership(test, resolve, covered):
    """True/False for `"silu" in dir(torch.nn.functional)` (`not in` too), timm's `_has_silu` feature checks: whether
    a rule covers the name, as `hasattr` on a torch module is decided; None for any other expression."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and
            isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn)) and isinstance(test.left, cst.SimpleString)):
        return None
    listing = test.comparisons[0].comparator
    if not (isinstance(listing, cst.Call) and isinstance(listing.func, cst.Name) and listing.func.value == "dir" and
            len(listing.args) == 1 and not listing.args[0].keyword and not listing.args[0].star):
        return None
    found = torch_has(resolve(listing.args[0].value), test.left.evaluated_value, covered)
    return None if found is None else found != isinstance(test.comparisons[0].operator, cst.NotIn)


def torch_has(owner, attribute, covered):
    """`hasattr(owner, attribute)` for a torch module `owner` as the port sees it: whether a rule covers the name
    (None for owners that are not torch's)."""
    if owner is None or not (owner == "torch" or owner.startswith("torch.")):
        return None
    return covered(f"{owner}.{attribute}")


# attributes every torch tensor has that are not methods a rule covers
TENSOR_PROPERTIES = frozenset({"shape", "dtype", "device", "ndim", "data", "grad", "requires_grad", "is_cuda", "T",
                               "mT", "layout", "real", "imag", "itemsize", "nbytes", "is_leaf", "grad_fn"})


def value_has(value, attribute, covered):
    """`hasattr(value, attribute)` where porter knows what `value` is: a tensor (demucs' `if hasattr(reference,
    "size")`: True in torch, while a TensorFlow tensor has no `size`) has its properties and every method a rule
    covers; a Python constant answers for itself. None where it cannot tell."""
    if value.kind == "tensor":
        return True if attribute in TENSOR_PROPERTIES or covered(f"Tensor.{attribute}") else None
    if value.kind == "python" and isinstance(value.static, (int, float, str, tuple, list)):
        return hasattr(value.static, attribute)
    return None


def decided_getattr(node, resolve, covered, namespace, nested=False):
    """What `getattr(<torch module>, "name", default)` is in the port, as code (None where it is not such a call, or
    where it names a torch module, which stays as written): the attribute where a rule covers it, else the default;
    nested ones too (timm's `getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap` is `None or
    nullwrap`: no rule covers `torch.compiler.disable`, and `getattr(None, ...)` is its default).
    `covered(canonical)`: a rule covers it; `namespace(canonical)`: rules cover names under it (`torch.nn`)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr" and
            len(node.args) == 3 and not any(a.star or a.keyword for a in node.args) and
            isinstance(node.args[1].value, cst.SimpleString)):
        return None
    owner = node.args[0].value
    if isinstance(owner, cst.Call):
        owner = decided_getattr(owner, resolve, covered, namespace, nested=True)
        if owner is None:
            return None
    if isinstance(owner, cst.Name) and owner.value == "None":
        return node.args[2].value
    canonical = resolve(owner)
    attribute = node.args[1].value.evaluated_value
    if torch_has(canonical, attribute, covered) is None:
        return None
    full = f"{canonical}.{attribute}"
    if covered(full) or nested and namespace(full):
        return cst.Attribute(owner, cst.Name(attribute))
    return None if namespace(full) else node.args[2].value


# calls that are False wherever the port runs (it is neither TorchScript nor compiled by torch)
NEVER_IN_PORT = frozenset({"torch.jit.is_scripting", "torch.compiler.is_compiling", "torch.compiler.is_exporting"})
# and True: the port runs traced (tf.function, XLA), where what `if torch.jit.is_tracing() or self.training:` guards
# against holds too: a tensor kept in a Python dict (timm's attention-bias caches in LeViT, EfficientFormer,
# TinyViT) would be a constant of the first call's weights, stale once the weights load or train
ALWAYS_IN_PORT = frozenset({"torch.jit.is_tracing"})


def module_flags(module):
    """name -> True/False for the module's flags: names bound only by top-level `NAME = True`/`NAME = False` (after
    the decided `if`s and optional imports: `has_apex = False` from an ImportError handler), never in a compound
    statement, a `def`/`class`, an import, nor rebound through `global NAME` inside a function."""
    values, others = {}, set()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                flag = _flag_assignment(small)
                if flag is not None:
                    values.setdefault(flag[0], set()).add(flag[1])
                else:
                    others.update(_names_bound(small))
        else:
            others.update(_names_bound(statement))
    others.update(_global_names(module))
    return {name: next(iter(seen)) for name, seen in values.items() if len(seen) == 1 and name not in others}


def flag_truth(test, flags, resolve):
    """True/False for a test a module flag decides (`if has_apex:`, `if not _has_hf_hub or
    torch.jit.is_scripting():`), else None: at least one flag decides it, with `not`, `and`/`or` (short-circuit:
    `has_apex and anything` is False) and the calls NEVER_IN_PORT and ALWAYS_IN_PORT."""
    value, uses_flag = _flag_value(test, flags, resolve)
    return value if uses_flag else None


def _flag_value(test, flags, resolve):
    """(value or None, whether a flag took part)."""
    if isinstance(test, cst.Name) and test.value in flags:
        return flags[test.value], True
    if isinstance(test, cst.Call) and not test.args and resolve(test.func) in NEVER_IN_PORT | ALWAYS_IN_PORT:
        return resolve(test.func) in ALWAYS_IN_PORT, False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner, used = _flag_value(test.expression, flags, resolve)
        return (None if inner is None else not inner), used
    if isinstance(test, cst.BooleanOperation):
        left, left_used = _flag_value(test.left, flags, resolve)
        right, right_used = _flag_value(test.right, flags, resolve)
        deciding = not isinstance(test.operator, cst.And)  # the value that decides: False for and, True for or
        if left is deciding:
            return deciding, left_used
        if right is deciding:
            return deciding, right_used
        if left is None or right is None:
            return None, False
        return right, left_used or right_used
    return None, False


def _flag_assignment(small):
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, cst.Name) and small.value.value in ("True", "False"):
        return small.targets[0].target.value, small.value.value == "True"
    return None


def _names_bound(node):
    """Plain names a statement (with what it holds, function bodies aside) binds."""
    names = set()

    class Finder(cst.CSTVisitor):
        def visit_Name(self, name):
            return False

        def visit_AssignTarget(self, target):
            names.update(n.value for n in _target_names(target.target))

        def visit_AnnAssign(self, assign):
            names.update(n.value for n in _target_names(assign.target))

        def visit_AugAssign(self, assign):
            names.update(n.value for n in _target_names(assign.target))

        def visit_For(self, loop):
            names.update(n.value for n in _target_names(loop.target))

        def visit_FunctionDef(self, function):
            names.add(function.name.value)
            return False

        def visit_ClassDef(self, klass):
            names.add(klass.name.value)
            return False

        def visit_ImportAlias(self, alias):
            names.add(alias.asname.name.value if alias.asname else (dotted_name(alias.name) or "").split(".")[0])

    walk(node, Finder())
    return names


def _target_names(target):
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _target_names(element.value)]
    return []


def _global_names(module):
    names = set()

    class Finder(cst.CSTVisitor):
        def visit_Global(self, statement):
            names.update(item.name.value for item in statement.names)

    walk(module, Finder())
    return names
