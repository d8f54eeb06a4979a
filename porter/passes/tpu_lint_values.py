"""Which expressions of a method are tensors and which are static Python values, read from the source alone.

The TPU lint asks this to tell `if x.sum() > 0:` (a branch on a tensor value) from `if x.size(1) > 3:` (a branch
on a static shape). The answer is "tensor", "static" or None (not known); the lint only reports what is known to
be a tensor, so an unknown value never produces a finding.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk

TENSOR, STATIC = "tensor", "static"

# Tensor methods and attributes whose result is a Python value (or a torch.Size), not a tensor.
STATIC_METHODS = {"size", "dim", "ndimension", "numel", "nelement", "item", "tolist", "numpy", "element_size",
                  "stride",
                  "is_contiguous", "get_device", "is_floating_point", "is_complex", "data_ptr", "storage_offset",
                  "__len__", "type", "is_sparse"}
STATIC_ATTRIBUTES = {"shape", "ndim", "dtype", "device", "is_cuda", "requires_grad", "training", "layout",
                     "is_leaf", "is_quantized", "is_meta"}
# Methods only tensors have (no Python built-in type has them): a call of one is a tensor whatever the receiver.
TENSOR_ONLY_METHODS = {"any", "all", "sum", "mean", "max", "min", "amax", "amin", "norm", "prod", "abs", "argmax",
                       "argmin", "std", "var", "isnan", "isinf", "isfinite", "eq", "ne", "gt", "lt", "ge", "le",
                       "logical_and", "logical_or", "logical_not", "logical_xor", "nonzero", "count_nonzero",
                       "masked_select", "unique", "bool", "long", "float", "half", "double", "int", "sign", "exp",
                       "sqrt", "clamp", "cumsum", "squeeze", "unsqueeze", "view", "reshape", "flatten", "to",
                       "detach", "contiguous", "cpu", "cuda", "sigmoid", "softmax", "relu", "tanh"}
BOOL_METHODS = {"bool", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "logical_and",
                "logical_or", "logical_not", "logical_xor", "isclose", "isin", "__eq__", "__ne__"}
BOOL_FUNCTIONS = {f"torch.{name}" for name in BOOL_METHODS | {"isneginf", "isposinf", "isreal"}}
# torch functions that return Python values, torch.Size, dtypes or module objects: not tensors.
STATIC_TORCH_PREFIXES = ("torch.jit.", "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.onnx.",
                         "torch.compiler.", "torch._C.", "torch.is_", "torch.get_", "torch.set_", "torch.are_",
                         "torch.nn.init.", "torch.nn.utils.", "torch.autograd.", "torch.fx.", "torch.Size",
                         "torch.finfo", "torch.iinfo", "torch.device", "torch.dtype", "torch.no_grad",
                         "torch.enable_grad", "torch.inference_mode", "torch.numel", "torch.typename")
STATIC_BUILTINS = {"len", "int", "float", "bool", "range", "isinstance", "str", "tuple", "list", "dict", "round",
                   "hasattr", "getattr", "type", "enumerate", "zip", "repr", "sorted", "abs", "divmod", "id", "iter"}
NAME_OPERATORS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def is_torch_function(canonical):
    """Whether a resolved import names a torch function that returns tensors (torch.sum, F.relu, torch.linalg.*)."""
    if canonical is None or not canonical.startswith("torch.") or canonical.startswith(STATIC_TORCH_PREFIXES):
        return False
    if canonical.startswith("torch.nn.functional."):
        return True
    return not canonical.rsplit(".", 1)[-1][:1].isupper() and not canonical.startswith("torch.nn.")


class ValueKinds:
    """Kinds of the values of one function (a method with `self`, or a module-level helper).

    `module_attributes`: torch attribute name -> ModuleIR attribute entry ("parameter", "buffer", "value" or a
    module reference), for reading `self.weight` and `self.fc(x)`."""

    def __init__(self, function, imports, module_attributes=None, is_method=True):
        self.imports = imports
        self.attributes = module_attributes or {}
        params = list(function.params.params)
        if is_method and params:
            params = params[1:]
        self.params = {}
        for position, param in enumerate(params):
            self.params[param.name.value] = self._param_kind(param, position)
        self.names, self.masks = {}, set()
        assignments = _assignments(function.body)
        self.assigned = _group(assignments)  # name -> [value nodes] (None: bound by a loop or unpacking)
        for _ in range(3):  # a few rounds: `h = x` then `y = h.sum()` settle without ordering
            self.names = self._classify(assignments)
        self.masks = {name for name, values in _group(assignments).items()
                      if all(self.is_bool_tensor(value) for value in values if value is not None)
                      and all(value is not None for value in values)}

    def _param_kind(self, param, position):
        annotation = dotted_name(param.annotation.annotation) if param.annotation is not None else None
        if annotation is not None:
            last = annotation.rsplit(".", 1)[-1]
            if last == "Tensor":
                return TENSOR
            if last in ("int", "float", "bool", "str", "tuple", "list", "dict"):
                return STATIC
        if param.default is not None:
            default = param.default
            if isinstance(default, cst.Name) and default.value == "None":
                return None
            return STATIC if isinstance(default, (cst.Integer, cst.Float, cst.SimpleString, cst.Name,
                                                  cst.UnaryOperation, cst.Tuple, cst.List)) else None
        return TENSOR if position == 0 else None  # the first input of forward is the data

    def _classify(self, assignments):
        kinds = {}
        for name, values in _group(assignments).items():
            seen = {self.kind(value) if value is not None else None for value in values}
            if seen == {STATIC}:
                kinds[name] = STATIC
            elif TENSOR in seen and STATIC not in seen:
                kinds[name] = TENSOR
        return kinds

    # --- kinds of expressions --------------------------------------------------------------------------------
    def kind(self, node):
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                             cst.FormattedString)):
            return STATIC
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return STATIC
            if node.value in self.names:
                return self.names[node.value]
            return self.params.get(node.value)
        if isinstance(node, cst.Attribute):
            return self._attribute_kind(node)
        if isinstance(node, cst.Call):
            return self._call_kind(node)
        if isinstance(node, cst.Subscript):
            base = self.kind(node.value)
            return base if base in (TENSOR, STATIC) else None
        if isinstance(node, cst.BinaryOperation):
            return _combine(self.kind(node.left), self.kind(node.right))
        if isinstance(node, cst.UnaryOperation):
            return self.kind(node.expression)
        if isinstance(node, cst.Comparison):
            if any(isinstance(target.operator, NAME_OPERATORS) for target in node.comparisons):
                return STATIC
            kinds = [self.kind(node.left)] + [self.kind(target.comparator) for target in node.comparisons]
            return TENSOR if TENSOR in kinds else STATIC if all(k == STATIC for k in kinds) else None
        if isinstance(node, cst.BooleanOperation):
            return _combine(self.kind(node.left), self.kind(node.right))
        return None

    def is_tensor(self, node):
        return self.kind(node) == TENSOR

    def _attribute_kind(self, node):
        if self.imports.resolve(node) is not None:
            return STATIC  # torch.float32, math.pi, a module
        if node.attr.value in STATIC_ATTRIBUTES:
            return STATIC
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            entry = self.attributes.get(node.attr.value)
            if entry in ("parameter", "buffer"):
                return TENSOR
            return STATIC if entry == "value" else None
        base = self.kind(node.value)
        return TENSOR if base == TENSOR and node.attr.value in ("T", "mT", "H", "data", "real", "imag", "grad") \
            else None

    def _call_kind(self, node):
        function = node.func
        canonical = self.imports.resolve(function)
        if canonical is not None:
            return TENSOR if is_torch_function(canonical) else STATIC if not canonical.startswith("torch.") \
                else None
        if isinstance(function, cst.Name):
            return STATIC if function.value in STATIC_BUILTINS else None
        if not isinstance(function, cst.Attribute):
            return None
        method = function.attr.value
        receiver = function.value
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            entry = self.attributes.get(method)
            return TENSOR if entry is not None and not isinstance(entry, str) else None  # self.fc(x)
        if method in STATIC_METHODS:
            return STATIC
        receiver_kind = self.kind(receiver)
        if receiver_kind == TENSOR:
            return TENSOR
        if receiver_kind is None and method in TENSOR_ONLY_METHODS and not _is_literal_container(receiver):
            return TENSOR
        return None

    def is_bool_tensor(self, node):
        """A boolean tensor: a comparison of tensors, `~mask`, `a & b`, `.bool()`, `torch.isnan(x)`, a mask name."""
        if isinstance(node, cst.Name):
            return node.value in self.masks
        if isinstance(node, cst.Comparison):
            return self.kind(node) == TENSOR
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_bool_tensor(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_bool_tensor(node.left) or self.is_bool_tensor(node.right)
        if isinstance(node, cst.Call):
            canonical = self.imports.resolve(node.func)
            if canonical is not None:
                return canonical in BOOL_FUNCTIONS
            if isinstance(node.func, cst.Attribute) and self.kind(node.func.value) != STATIC:
                method = node.func.attr.value
                if method in BOOL_METHODS:
                    return True
                if method == "to" and node.args and self.imports.resolve(node.args[0].value) == "torch.bool":
                    return True
        return False


def _combine(left, right):
    if TENSOR in (left, right):
        return TENSOR
    return STATIC if left == STATIC and right == STATIC else None


def _is_literal_container(node):
    return isinstance(node, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.SimpleString))


def _assignments(body):
    """[(name, value node or None)] of every name bound in `body` (None: bound by something unreadable)."""
    found = []

    class Collector(cst.CSTVisitor):
        def visit_Assign(self, node):
            for target in node.targets:
                _bind(target.target, node.value, found)

        def visit_AnnAssign(self, node):
            if node.value is not None:
                _bind(node.target, node.value, found)

        def visit_AugAssign(self, node):
            if isinstance(node.target, cst.Name):
                found.append((node.target.value, cst.BinaryOperation(node.target, cst.Add(), node.value)))

        def visit_For(self, node):
            _bind(node.target, None, found)

        def visit_FunctionDef(self, node):
            return False  # nested functions have their own names

        def visit_Lambda(self, node):
            return False

    walk(body, Collector())
    return found


def _bind(target, value, found):
    if isinstance(target, cst.Name):
        found.append((target.value, value))
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            inner = element.value.value if isinstance(element, cst.StarredElement) else element.value
            _bind(inner, value, found)  # `a, b = x.chunk(2)`: each part has the kind of the whole


def _group(assignments):
    grouped = {}
    for name, value in assignments:
        grouped.setdefault(name, []).append(value)
    return grouped
