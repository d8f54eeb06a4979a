"""TPU lint rules over the code that runs every step (forward and what it calls): data-dependent shapes, Python
control flow on tensor values, host syncs, int64 index math, ops XLA cannot compile, and sizes that recompile.

Each rule reports only what the source shows for certain (a value known to be a tensor, a call known to be torch's):
an unknown value never produces a finding, so clean models report nothing.
"""

import libcst as cst

from porter.frontend.walk import walk
from porter.passes.tpu_lint_values import STATIC, STATIC_ATTRIBUTES, ValueKinds

INT64 = {"torch.long", "torch.int64", "torch.LongTensor"}
DYNAMIC_RESULT_OPS = {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"}
HOST_SYNC_METHODS = {"item", "tolist", "numpy"}
# lists of differently long tensors padded in the step (pack_padded_sequence / pad_packed_sequence keep the padded
# tensor's static size in the port: porter/runtime/packed_sequence.py)
PACKED_SEQUENCES = {"torch.nn.utils.rnn.pack_sequence", "torch.nn.utils.rnn.pad_sequence"}
SIZE_METHODS = {"view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_full", "new_empty", "narrow"}
SIZE_FUNCTIONS = {f"torch.{name}" for name in ("zeros", "ones", "empty", "full", "arange", "randn", "rand",
                                                 "randint", "linspace", "eye", "reshape", "narrow")}
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Divide, cst.Power,
              cst.LeftShift, cst.RightShift)
SHAPE_READS = {"size", "dim", "numel", "ndimension", "nelement"}
SHAPE_BUILTINS = {"len", "isinstance", "hasattr", "type"}  # read a length or a type, never tensor values

SUGGESTIONS = {
    "nonzero": "keep the full shape: use the mask itself (`torch.where(mask, x, 0)`, `x * mask`), or a fixed "
               "number of indices (`topk` with a constant k)",
    "argwhere": "keep the full shape: use the mask itself (`torch.where(mask, x, 0)`, `x * mask`), or a fixed "
                "number of indices (`topk` with a constant k)",
    "masked_select": "keep the shape with `torch.where(mask, x, torch.zeros_like(x))` and reduce with masked sums "
                     "(`(x * mask).sum() / mask.sum()`)",
    "unique": "use a fixed-size encoding instead: `one_hot(x, num_classes).amax(0)` or "
              "`torch.bincount(x, minlength=N) > 0` over a known number of values",
    "where": "use three-argument `torch.where(cond, x, y)` (static shape), or a fixed number of indices (`topk` "
             "with a constant k)",
    "mask_index": "keep the shape: `torch.where(mask, x, 0)` or `x * mask` (then reduce with masked sums); "
                  "`x[mask] = v` as an assignment is fine (it becomes a static `tf.where`)",
    "repeat_interleave": "repeat by a constant count, or pad each group to a fixed maximum and mask the padding",
    "control_flow": "compute both branches and select with `torch.where(cond, a, b)` (`tf.where` in the port), "
                    "or make the condition static (a constructor flag, a shape); a data-dependent loop becomes a "
                    "fixed-count loop with a mask (`tf.while_loop` with a static bound)",
    "item": "keep the value a tensor (`x.sum()` instead of `x.sum().item()`) and use it in tensor ops; log it "
            "outside the training step",
    "tolist": "keep the tensor and use tensor ops (indexing, `torch.where`) instead of a Python list",
    "numpy": "keep the computation in torch ops (they become TF ops); convert to numpy only outside the model, "
             "after the step",
    "print": "remove it from forward, or print static facts (`x.shape`); look at values after the step (the "
             "training script logs the loss)",
    "cast": "keep the value a tensor; Python `int()`/`float()`/`bool()` of a tensor copies it to the host",
    "int64": "make it int32 (`dtype=torch.int32`, `.int()`): index math fits in 32 bits, and the TF port's "
             "gathers and one-hots take int32",
    "histc": "bin with tensor ops: `idx = ((x - lo) / width).floor().clamp(0, bins - 1).long()`, then "
             "`one_hot(idx, bins).sum(0)`",
    "bincount": "give the number of bins: `torch.bincount(x, minlength=N)` with values below N (the port uses "
                "minlength = maxlength = N), or `one_hot(x, N).sum(0)`",
    "eig": "use `torch.linalg.eigh` / `eigvalsh` when the matrix is symmetric (XLA lowers those on TPU), or "
           "compute the decomposition outside the training step",
    "topk": "use a constant k (the largest you need) and mask the extra entries",
    "recompile": "pad to a fixed length (or a few bucket lengths) in the data pipeline and pass a mask; slice "
                 "with sizes that come from shapes, not values",
    "packed": "pad every batch to a fixed length (or a few bucket lengths) in the data pipeline and pack it with "
              "`pack_padded_sequence` (the port runs that at the padded length)",
}


class ForwardRules(cst.CSTVisitor):
    """Walks one function that runs every step and collects (line, kind, message, suggestion)."""

    def __init__(self, function, source, module_attributes, where, is_method=True):
        super().__init__()
        self.source = source
        self.imports = source.imports
        self.values = ValueKinds(function, source.imports, module_attributes, is_method)
        self.where = where  # "`Net.forward`": named in messages
        self.found = []
        self.store_depth = 0
        self.int64_names = {}  # name -> (int64 producer, the value assigned), until its first use in arithmetic
        self.root = function
        self.reading = set()  # names being followed by reads_tensor_values (a guard against `n = n + 1` cycles)

    # --- helpers ---------------------------------------------------------------------------------------------
    def report(self, node, kind, message, suggestion):
        self.found.append((self.source.line_of(node), kind, f"`{self.code(node)}` in {self.where}: {message}",
                           suggestion))

    def code(self, node, limit=70):
        text = " ".join(self.source.code_of(node).split())
        return text if len(text) <= limit else text[:limit - 3] + "..."

    def method_of(self, call):
        """(canonical import or None, method name or None, receiver or None) of a call."""
        canonical = self.imports.resolve(call.func)
        if canonical is None and isinstance(call.func, cst.Attribute):
            return None, call.func.attr.value, call.func.value
        return canonical, None, None

    def reads_tensor_values(self, node):
        """Whether `node` depends on a tensor's values (not just its shape): `lengths.max()`, `int(mask.sum())`."""
        if isinstance(node, cst.Attribute) and node.attr.value in STATIC_ATTRIBUTES:
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in SHAPE_READS and self.imports.resolve(node.func) is None:
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in SHAPE_BUILTINS:
            return False
        if isinstance(node, (cst.Call, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)) \
                and self.values.is_tensor(node):
            return True
        if isinstance(node, cst.Name):
            return self._name_reads_tensor_values(node.value)
        return any(self.reads_tensor_values(child) for child in _expression_children(node))

    def _name_reads_tensor_values(self, name):
        """A name assigned from tensor values (`n = lengths.max()`, `n = int(mask.sum())`); parameters are not."""
        if self.values.names.get(name) == "tensor":
            return True
        if name in self.reading:
            return False
        self.reading.add(name)
        try:
            return any(value is not None and self.reads_tensor_values(value)
                       for value in self.values.assigned.get(name, []))
        finally:
            self.reading.discard(name)

    def argument(self, call, position, keyword):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg.value
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        return positional[position] if position < len(positional) else None

    # --- stores are not reads: `x[mask] = 0` keeps x's shape ------------------------------------------------
    def visit_AssignTarget(self, node):
        self.store_depth += 1

    def leave_AssignTarget(self, node):
        self.store_depth -= 1

    def visit_AugAssign(self, node):
        self._int64_arithmetic(node.target, node)
        walk(node.value, self)
        return False

    def leave_Assign(self, node):
        """Bind (or unbind) int64 names in source order, after the value was read: `pos = emb(pos)` ends it."""
        producer = self._int64_producer(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if producer is not None:
                    self.int64_names[target.target.value] = (producer, node.value)
                else:
                    self.int64_names.pop(target.target.value, None)

    def visit_FunctionDef(self, node):
        return node is self.root  # a nested function is not called by forward as such

    # --- control flow on tensor values -----------------------------------------------------------------------
    def visit_If(self, node):
        self._branch_test(node.test, "`if`")

    def visit_While(self, node):
        self._branch_test(node.test, "`while`")

    def visit_IfExp(self, node):
        self._branch_test(node.test, "a conditional expression")

    def visit_Assert(self, node):
        self._branch_test(node.test, "`assert`")

    def _branch_test(self, test, what):
        if isinstance(test, (cst.Name, cst.Attribute)):
            return  # `if mask:` usually means `is not None`; only computed tensor values are certain
        if self.values.is_tensor(test):
            self.report(test, "tensor-control-flow", f"{what} on a tensor value", SUGGESTIONS["control_flow"])

    # --- subscripts: boolean masks and slices sized by values ------------------------------------------------
    def visit_Subscript(self, node):
        if self.store_depth or self.values.kind(node.value) == STATIC:
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                if self.values.is_bool_tensor(element.slice.value):
                    self.report(node, "data-dependent-shape", "boolean-mask indexing keeps only the selected "
                                "elements, so the result's size depends on the mask's values",
                                SUGGESTIONS["mask_index"])
            elif isinstance(element.slice, cst.Slice):
                bounds = [element.slice.lower, element.slice.upper, element.slice.step]
                if any(bound is not None and self.reads_tensor_values(bound) for bound in bounds):
                    self.report(node, "recompiling-shape", "a slice whose bound comes from tensor values (a "
                                "length read from the data)", SUGGESTIONS["recompile"])

    # --- calls -----------------------------------------------------------------------------------------------
    def visit_Call(self, node):
        canonical, method, receiver = self.method_of(node)
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            method = None  # `self.expand(x)` calls a submodule or a method of the model, not a tensor method
        name = canonical.rsplit(".", 1)[-1] if canonical and canonical.startswith("torch.") else method
        if method is not None and self.values.kind(receiver) == STATIC and method not in HOST_SYNC_METHODS:
            name = None  # a method of a Python value
        if canonical is not None and not canonical.startswith("torch."):
            name = None
        self._data_dependent(node, canonical, name)
        self._host_sync(node, canonical, method)
        self._unsupported(node, canonical, name, method)
        self._recompiling(node, canonical, method)

    def _data_dependent(self, node, canonical, name):
        if name in DYNAMIC_RESULT_OPS:
            self.report(node, "data-dependent-shape", f"`{name}` returns as many elements as the data holds",
                        SUGGESTIONS[name if name in SUGGESTIONS else "nonzero"])
        elif canonical == "torch.where" and len(node.args) == 1 and node.args[0].keyword is None:
            self.report(node, "data-dependent-shape", "one-argument `torch.where` returns the indices of the true "
                        "elements, as many as the data holds", SUGGESTIONS["where"])
        elif name == "repeat_interleave":
            repeats = self.argument(node, 1 if canonical else 0, "repeats")
            if repeats is not None and self.values.is_tensor(repeats):
                self.report(node, "data-dependent-shape", "`repeat_interleave` with per-element repeats from a "
                            "tensor: the output length is their sum", SUGGESTIONS["repeat_interleave"])

    def _host_sync(self, node, canonical, method):
        if method in HOST_SYNC_METHODS:
            self.report(node, "host-sync", f"`.{method}()` copies the tensor to the host and waits for it",
                        SUGGESTIONS[method])
            return
        if canonical is not None or not isinstance(node.func, cst.Name):
            return
        builtin = node.func.value
        if builtin == "print" and any(self._shows_tensor(arg.value) for arg in node.args):
            self.report(node, "host-sync", "printing a tensor copies its values to the host every step",
                        SUGGESTIONS["print"])
        elif builtin in ("int", "float", "bool") and len(node.args) == 1 and \
                self.values.is_tensor(node.args[0].value) and not _calls_method(node.args[0].value, "item"):
            self.report(node, "host-sync", f"`{builtin}()` of a tensor copies its value to the host",
                        SUGGESTIONS["cast"])

    def _shows_tensor(self, node):
        if isinstance(node, cst.FormattedString):
            return any(isinstance(part, cst.FormattedStringExpression) and self._shows_tensor(part.expression)
                       for part in node.parts)
        return self.values.is_tensor(node)

    def _unsupported(self, node, canonical, name, method):
        if name == "histc":
            self.report(node, "xla-unsupported-op", "`histc` has no XLA lowering (its TF counterpart "
                        "`tf.histogram_fixed_width` fails to compile with jit_compile)", SUGGESTIONS["histc"])
        elif name == "bincount" and self.argument(node, 2 if canonical else 1, "minlength") is None:
            self.report(node, "xla-unsupported-op", "`bincount` without minlength returns max(value) + 1 counts, "
                        "a length read from the data", SUGGESTIONS["bincount"])
        elif canonical in ("torch.linalg.eig", "torch.linalg.eigvals", "torch.eig"):
            self.report(node, "xla-unsupported-op", "nonsymmetric eigendecomposition has no XLA lowering on TPU "
                        "(XLA implements it on CPU only)", SUGGESTIONS["eig"])
        elif name in ("topk", "kthvalue"):
            k = self.argument(node, 1 if canonical else 0, "k")
            if k is not None and self.reads_tensor_values(k):
                self.report(node, "xla-unsupported-op", f"`{name}` with k taken from tensor values: XLA's TopK "
                            "needs k at compile time", SUGGESTIONS["topk"])

    def _recompiling(self, node, canonical, method):
        if canonical in PACKED_SEQUENCES:
            self.report(node, "recompiling-shape", f"`{canonical.rsplit('.', 1)[-1]}` makes each batch's shape "
                        "follow its longest sequence", SUGGESTIONS["packed"])
            return
        sized = canonical in SIZE_FUNCTIONS or (canonical is None and method in SIZE_METHODS) or \
            (isinstance(node.func, cst.Name) and node.func.value == "range")
        filled = canonical == "torch.full" or canonical is None and method == "new_full"  # (its fill value, the
        # second argument, is no size: GPT-2's `torch.full([], mask_value, ...)`)
        positional = [arg for arg in node.args if arg.keyword is None]
        if sized and any(self.reads_tensor_values(arg.value) for arg in node.args
                         if (arg.keyword is None and not (filled and positional.index(arg) == 1)) or
                         arg.keyword is not None and arg.keyword.value in ("size", "shape", "end", "start", "steps")):
            self.report(node, "recompiling-shape", "a size taken from tensor values: every new value is a new "
                        "shape", SUGGESTIONS["recompile"])

    # --- int64 index math ------------------------------------------------------------------------------------
    def visit_BinaryOperation(self, node):
        if isinstance(node.operator, ARITHMETIC):
            for operand in (node.left, node.right):
                self._int64_arithmetic(operand, node)

    def _int64_arithmetic(self, operand, where):
        producer = self._int64_producer(operand)
        if producer is not None:
            self._report_int64(producer, operand, where)
        elif isinstance(operand, cst.Name) and operand.value in self.int64_names:
            producer, value = self.int64_names.pop(operand.value)  # once per name
            self._report_int64(producer, value, where, operand.value)

    def _report_int64(self, producer, value, where, name=None):
        line, used = self.source.line_of(value), self.source.line_of(where)
        subject = f"`{name}` is int64 and" if name else "an int64 value is"
        at = f" at line {used}" if used != line else ""
        message = f"`{self.code(value)}` in {self.where}: {subject} used in index arithmetic{at}"
        self.found.append((line, "int64-index-math", message, SUGGESTIONS["int64"]))

    def _int64_producer(self, node):
        """The call that makes `node` int64 (`torch.arange(..., dtype=torch.long)`, `.long()`), or None."""
        if not isinstance(node, cst.Call):
            return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "dtype" and self.imports.resolve(arg.value) in INT64:
                return node
        _, method, _ = self.method_of(node)
        if method == "long":
            return node
        if method in ("to", "type") and node.args and self.imports.resolve(node.args[0].value) in INT64:
            return node
        return None


def lint_function(function, source, module_attributes, where, is_method=True):
    """Findings (line, kind, message, suggestion) of one function that runs every step."""
    rules = ForwardRules(function, source, module_attributes, where, is_method)
    walk(function, rules)
    return rules.found


def _calls_method(node, method):
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == method


def _expression_children(node):
    return [child for child in node.children if isinstance(child, (cst.BaseExpression, cst.Arg, cst.SubscriptElement,
                                                                   cst.Index, cst.Slice, cst.ComparisonTarget,
                                                                   cst.Element))]
