"""Read what the source's own training/data code says: which class it builds and the example input shapes.

`model = Net()` then `x = torch.randn(512, 1, 28, 28)` and `model(x)` give the main class and its example
input (1, 28, 28) float32; `torch.randint(0, 1000, (8, 32))` gives int64 inputs with a value range.
Everything is read statically.
"""

from dataclasses import dataclass

import libcst as cst

from porter.frontend.gluon import literal_array_example
from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk

CREATORS = {"torch.randn": "float32", "torch.rand": "float32", "torch.zeros": "float32", "torch.ones": "float32",
            "torch.empty": "float32", "torch.randint": "int64", "torch.normal": "float32"}

# mxnet creation calls (canonical names as the import table resolves them) -> default dtype
MX_CREATORS = {f"mxnet.ndarray.{name}": dtype for name, dtype in (
    ("normal", "float32"), ("uniform", "float32"), ("random.normal", "float32"), ("random.uniform", "float32"),
    ("random_normal", "float32"), ("random_uniform", "float32"), ("zeros", "float32"), ("ones", "float32"),
    ("empty", "float32"), ("randint", "int32"), ("random.randint", "int32"))}


@dataclass
class ExampleInput:
    shape: list  # batch excluded
    dtype: str = "float32"
    low: float | None = None
    high: float | None = None

    def as_manifest(self):
        return {"shape": list(self.shape), "dtype": self.dtype, "low": self.low, "high": self.high}

    @classmethod
    def from_manifest(cls, spec):
        return cls(list(spec["shape"]), spec["dtype"], spec.get("low"), spec.get("high"))

    def spec_text(self):
        """The --input-shape that gives this example: `1,28,28` or `32:int64:0:64`."""
        text = ",".join(str(size) for size in self.shape)
        if self.dtype != "float32" or self.low is not None:
            text += f":{self.dtype}"
            if self.low is not None and self.high is not None:
                text += f":{self.low:g}:{self.high:g}"
        return text


class TrainingCodeReader(cst.CSTVisitor):
    """Collect model constructions, tensor creations with literal shapes, and calls of model variables."""

    def __init__(self, source):
        self.source = source
        self.constants = module_constants(source)
        self.model_vars = {}  # variable -> class name
        self.tensors = {}  # variable -> ExampleInput (batch included in shape[0] stripped later)
        self.calls = []  # (class name, [arg nodes])
        self.constructed = []  # class names constructed outside class bodies, in order
        self.dataset_inputs = []  # first tensors handed to TensorDataset(...)
        self.returned = {}  # module-level function -> ExampleInput it returns (None: not a literal tensor)
        self.depth = 0
        self.model_helpers = _model_helpers(source)

    def visit_ClassDef(self, node):
        return node.name.value not in self.source.classes and not self.source.is_linked(node)

    def visit_FunctionDef(self, node):
        if self.source.is_linked(node):  # library code the linker brought in (timm.layers' `create_conv2d`)
            return False
        # a Gluon helper that adds layers to a model (`_add_conv(out, ...)`) is model code, not training code
        name = node.name.value
        if name in self.model_helpers:  # a helper the classes call (timm's `create_conv2d_pad` building Conv2dSame)
            return False
        return not (self.source.framework == "mxnet" and name in self.source.model_names and
                    name not in self.source.factories)

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(node.value, (cst.Tuple, cst.List)) and len(
                target.elements) == len(node.value.elements):
            for element, value in zip(target.elements, node.value.elements):
                if isinstance(element.value, cst.Name):
                    constant = _literal(value.value, self.constants)
                    if isinstance(constant, int) and not isinstance(constant, bool):
                        self.constants[element.value.value] = constant
                    example = self.example_of(value.value)
                    if example is not None:
                        self.tensors[element.value.value] = example
            return
        if not isinstance(target, cst.Name):
            return
        name = target.value
        constant = _literal(node.value, self.constants)
        if isinstance(constant, (int, float)) and not isinstance(constant, bool):
            self.constants[name] = constant
        value = node.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in (
                "to", "cuda", "float", "long", "cpu", "requires_grad_"):
            value = value.func.value
        if not isinstance(value, cst.Call):
            return
        callee = dotted_name(value.func)
        if callee in self.source.classes or callee in self.source.factories:  # a model-zoo factory's class
            self.model_vars[name] = self.source.factories.get(callee, callee)
            return
        example = self.example_of(node.value)
        if example is not None:
            self.tensors[name] = example

    def example_of(self, node):
        """ExampleInput of an expression: a creation call, a known tensor, or a slice of one."""
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "to", "cuda", "float", "long", "cpu", "requires_grad_"):
            node = node.func.value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "astype" \
                and len(node.args) == 1:  # mxnet's `x.astype("float32")`: the same values in that dtype
            dtype = _literal(node.args[0].value, self.constants)
            found = self.example_of(node.func.value)
            return ExampleInput(found.shape, dtype, found.low, found.high) if isinstance(dtype, str) and \
                found is not None else None
        if isinstance(node, cst.Name):
            return self.tensors.get(node.value)
        if isinstance(node, cst.Call) and dotted_name(node.func) in self.source.functions:
            return self.returned_example(dotted_name(node.func))
        if isinstance(node, cst.Call):
            return self.example_from_creation(node)
        if isinstance(node, cst.Subscript):
            base = self.example_of(node.value)
            return _sliced(base, node.slice, self.constants) if base is not None else None
        return None

    def visit_Call(self, node):
        callee = dotted_name(node.func)
        if callee is not None and callee.split(".")[-1] == "TensorDataset" and node.args:
            example = self.example_of(node.args[0].value)
            if example is not None:
                self.dataset_inputs.append(example)
        if callee in self.source.classes:
            self.constructed.append(callee)
        elif callee in self.model_vars:
            self.calls.append((self.model_vars[callee], [a.value for a in node.args if a.keyword is None]))
        elif isinstance(node.func, cst.Call) and dotted_name(node.func.func) in self.source.classes:
            self.calls.append((dotted_name(node.func.func), [a.value for a in node.args if a.keyword is None]))

    def returned_example(self, function_name):
        """ExampleInput of what a module-level function returns: `def example_batch(): return torch.randn(8, 40,
        101)` gives (40, 101); None unless every return gives the same example."""
        if function_name in self.returned:
            return self.returned[function_name]
        self.returned[function_name] = None  # a recursive function reads as unknown
        returns = []

        class Returns(cst.CSTVisitor):
            def visit_FunctionDef(self, node):
                return node is function  # a nested function's returns are its own

            def visit_Return(self, node):
                returns.append(node.value)

        function = self.source.functions[function_name]
        walk(function, Returns())
        examples = [self.example_of(value) if value is not None else None for value in returns]
        found = examples[0] if examples and all(e is not None and e == examples[0] for e in examples) else None
        self.returned[function_name] = found
        return found

    def function_examples(self):
        """Examples returned by the file's module-level functions, in source order."""
        return [e for e in (self.returned_example(name) for name in self.source.functions) if e is not None]

    def example_from_creation(self, call):
        canonical = self.source.imports.resolve(call.func)
        if canonical == "mxnet.ndarray.array":  # literal data: its shape and value range
            found = literal_array_example(call)
            return ExampleInput(*found) if found is not None else None
        if canonical in MX_CREATORS:
            return self.example_from_mx_creation(call, canonical)
        if canonical not in CREATORS:
            return None
        args = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        dtype = CREATORS[canonical]
        low = high = None
        if canonical == "torch.randint":
            numbers = [_literal(a.value, self.constants) for a in args]
            if len(numbers) >= 3:
                low, high, shape = numbers[0], numbers[1], numbers[2]
            elif len(numbers) == 2:
                low, high, shape = 0, numbers[0], numbers[1]
            else:
                shape = _literal(keywords.get("size"), self.constants) if "size" in keywords else None
                high = numbers[0] if numbers else None
                low = 0
            if isinstance(shape, cst.BaseExpression):
                shape = None
            if shape is None and len(args) >= 1 and isinstance(args[-1].value, (cst.Tuple, cst.List)):
                shape = [_literal(e.value, self.constants) for e in args[-1].value.elements]
                shape = [0] + shape[1:] if all(isinstance(v, int) for v in shape[1:]) else None
            if not isinstance(shape, (tuple, list)):
                return None
            shape = [0] + list(shape)[1:]
        else:
            sizes = [_literal(a.value, self.constants) for a in args]
            if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
                sizes = [_literal(e.value, self.constants) for e in args[0].value.elements]
            if len(sizes) < 2 or not all(isinstance(s, int) for s in sizes[1:]):
                return None
            shape = [0] + sizes[1:]  # the batch size need not be literal
            if canonical in ("torch.randn", "torch.normal"):
                low, high = None, None
        if "dtype" in keywords:
            dtype = (dotted_name(keywords["dtype"]) or "torch.float32").split(".")[-1]
            dtype = {"long": "int64", "float": "float32", "int": "int32"}.get(dtype, dtype)
        if not shape or not all(isinstance(s, int) for s in shape[1:]):
            return None
        return ExampleInput(list(shape[1:]), dtype, low, high)


    def example_from_mx_creation(self, call, canonical):
        """`mx.nd.random.normal(shape=(64, 1, 28, 28))`, `mx.nd.random.uniform(-1, 1, shape=...)`,
        `mx.nd.zeros((64, 10))`, `mx.nd.random.randint(0, 10, shape=(64,))`: the shape without the batch."""
        dtype, low, high = MX_CREATORS[canonical], None, None
        args = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        shape = keywords.get("shape")
        last = canonical.rsplit(".", 1)[-1]
        if shape is None and last in ("zeros", "ones", "empty") and args:
            shape = args[0]
        if last in ("uniform", "randint"):
            bounds = [_literal(a, self.constants) for a in args[:2]]
            bounds += [_literal(keywords.get(k), self.constants) for k in ("low", "high")[len(bounds):]]
            if last == "uniform" and not args and "low" not in keywords and "high" not in keywords:
                bounds = [0.0, 1.0]  # mxnet's defaults
            if all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds):
                low, high = bounds
        sizes = _literal(shape, self.constants) if shape is not None else None
        if isinstance(sizes, int):
            sizes = (sizes,)
        if not isinstance(sizes, tuple) or not sizes or not all(isinstance(v, int) for v in sizes):
            return None
        if "dtype" in keywords:
            dtype = _literal(keywords["dtype"], self.constants) or dtype
        if last == "randint" and dtype == "int32":
            dtype = "float32" if low is not None else dtype
        return ExampleInput(list(sizes[1:]), dtype, low, high)


def _sliced(example, elements, constants):
    """Shape of `tensor[...]` for basic slices with literal bounds (batch axis untouched)."""
    shape = [None] + list(example.shape)
    result = []
    for axis, element in enumerate(elements):
        if axis >= len(shape):
            return None
        item = element.slice
        if isinstance(item, cst.Index):
            if _literal(item.value, constants) is None:
                return None
            continue  # an integer index drops the axis
        size = shape[axis]
        if axis == 0:
            result.append(None)
            continue
        lower = _literal(item.lower, constants) if item.lower is not None else 0
        upper = _literal(item.upper, constants) if item.upper is not None else size
        step = _literal(item.step, constants) if item.step is not None else 1
        if not all(isinstance(v, int) for v in (lower, upper, step)) or step <= 0:
            return None
        result.append(len(range(size)[lower:upper:step]))
    result.extend(shape[len(elements):])
    if not result or result[0] is not None:
        return None
    return ExampleInput(result[1:], example.dtype, example.low, example.high)


def module_constants(source):
    """Top-level `NAME = <int/float literal or simple arithmetic of earlier constants>` of the file."""
    constants = {}
    for statement in source.module.body:
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
            assign = statement.body[0]
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                value = _literal(assign.value, constants)
                if value is None and isinstance(assign.value, (cst.List, cst.Tuple)):
                    value = tuple(range(len(assign.value.elements)))  # only its length matters here
                if value is not None:
                    constants[assign.targets[0].target.value] = value
    return constants


def _literal(node, constants=None):
    constants = constants or {}
    if node is None:
        return None
    if isinstance(node, cst.Name) and node.value in constants:
        return constants[node.value]
    if isinstance(node, cst.Call) and dotted_name(node.func) == "len" and len(node.args) == 1:
        inner = _literal(node.args[0].value, constants)
        return len(inner) if isinstance(inner, tuple) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Add, cst.FloorDivide,
                                                                            cst.Subtract)):
        left, right = _literal(node.left, constants), _literal(node.right, constants)
        if isinstance(left, int) and isinstance(right, int):
            if isinstance(node.operator, cst.Multiply):
                return left * right
            if isinstance(node.operator, cst.Add):
                return left + right
            if isinstance(node.operator, cst.Subtract):
                return left - right
            return left // right if right else None
        return None
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _literal(node.expression, constants)
        return -inner if inner is not None else None
    if isinstance(node, (cst.Tuple, cst.List)):
        values = [_literal(e.value, constants) for e in node.elements]
        return tuple(values) if None not in values else None
    if isinstance(node, (cst.SimpleString,)):
        return node.evaluated_value
    return None


def _model_helpers(source):
    """Module-level functions the classes' code calls, directly or through each other (a conv factory returning
    `Conv2dSame` or `nn.Conv2d`): model code, whose constructions are parts of a model, not the model training code
    builds. A model-zoo factory is never one."""
    found, frontier = set(), [info.node for info in source.classes.values()]
    while frontier:
        node = frontier.pop()
        for call in source.nodes_in(node, cst.Call):
            name = dotted_name(call.func)
            if name in source.functions and name not in found and name not in source.factories:
                found.add(name)
                frontier.append(source.functions[name])
    return found


def read_training_code(source):
    """(class the training code builds and calls, {class: [ExampleInput per forward arg]})."""
    reader = TrainingCodeReader(source)
    walk(source.module, reader)
    examples = {}
    for class_name, args in reader.calls:
        inputs = []
        for arg in args:
            inputs.append(reader.example_of(arg))
        if inputs and all(i is not None for i in inputs) and class_name not in examples:
            examples[class_name] = inputs
    if reader.dataset_inputs:
        for class_name in [c for c, _ in reader.calls] + list(reader.model_vars.values()):
            if class_name not in examples and len(_forward_params(source, class_name)) == 1:
                examples[class_name] = [reader.dataset_inputs[0]]
    built = [c for c, _ in reader.calls] + list(reader.model_vars.values()) + reader.constructed
    # only the file's own classes: a linked part built beside the model (`DefaultBoxGenerator(...)`, timm regnet's
    # `ConvNormAct(...)` in a helper) is not it; a linked model a factory returns is main_class.py's to find
    main = next((c for c in built if c in source.classes and not source.is_linked(source.classes[c].node)), None)
    if main is not None and main not in examples:
        # the model was built but its call is indirect (a train() helper): take the first data tensor
        loose = sorted(reader.tensors.values(), key=lambda v: (v.dtype != "float32", -len(v.shape)))
        if loose and len(_forward_params(source, main)) == 1:
            examples[main] = [loose[0]]
    returned = reader.function_examples()
    if returned:
        # a function that builds an example batch (`def example_batch(): return torch.randn(8, 40, 101)`) serves
        # any class whose forward takes one tensor and that the training code gives nothing better
        for class_name in source.classes:
            if class_name not in examples and len(_forward_params(source, class_name)) == 1:
                examples[class_name] = [returned[0]]
    return main, examples


def _forward_params(source, class_name):
    info = source.classes[class_name]
    forward = info.find_method("forward")
    if forward is None:
        return []
    return [p for p in forward.params.params if p.name.value != "self" and p.default is None]
