"""Per-parameter groups of a torch optimizer, as a function `parameter_group(name, shape) -> group index`.

Read statically from the ways sources build groups:
- `[{"params": decay, ...}, {"params": no_decay, ...}]` with the lists filled in a
  `for name, param in model.named_parameters():` loop (the loop body becomes the function body, each
  `decay.append(param)` a `return 0`);
- list comprehensions `[p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)]`;
- `model.backbone.parameters()` (names starting with `backbone.`) and `model.parameters()` (everything else).
`param.dim()`/`param.ndim` read the Keras variable's rank, which equals torch's; `param.shape` is Keras' shape
(transposed for some layers), noted when used.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.training.values import COMPARE

RANK_FORMS = {"dim", "ndimension"}


class Untranslatable(Exception):
    pass


class GroupReader:
    """Builds the text of `parameter_group(name, shape)` for a list of group `params` expressions."""

    def __init__(self, index, values, model_names):
        self.index = index
        self.values = values
        self.model_names = model_names  # names bound to the model in the training code
        self.notes = []

    def function_code(self, params_nodes, scope, origin):
        """(code of `def parameter_group(name, shape)`, notes) or (None, notes) when not readable."""
        branches = []  # lines of the body
        fallback = None
        handled_loops = {}
        try:
            for group, node in enumerate(params_nodes):
                node_scope = scope
                if isinstance(node, cst.Name):
                    found = self.values.lookup(node.value, scope)
                    if found is not None and isinstance(found[0], (cst.ListComp, cst.Call)):
                        node, node_scope = found
                    elif found is not None and isinstance(found[0], cst.List) and not found[0].elements:
                        loop = self._filling_loop(node.value, node_scope)
                        if loop is None:
                            raise Untranslatable(f"how the list {node.value} is filled")
                        handled_loops.setdefault(loop, {})[node.value] = group
                        continue
                    else:
                        raise Untranslatable(self.index.source.code_of(node).strip())
                if isinstance(node, cst.ListComp):
                    condition = self._comprehension_condition(node, node_scope)
                    branches.append(f"if {condition}:\n    return {group}" if condition else f"return {group}")
                    continue
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                        node.func.attr.value == "parameters" and not node.args:
                    prefix = self._module_prefix(node.func.value, node_scope)
                    if prefix == "":
                        fallback = group
                    else:
                        branches.append(f"if name.startswith({prefix + '.'!r}):\n    return {group}")
                    continue
                raise Untranslatable(self.index.source.code_of(node).strip())
            for loop, lists in handled_loops.items():
                branches.append(self._loop_body(loop, lists, scope))
        except Untranslatable as error:
            self.notes.append(f"the parameter groups of {origin} could not be read statically ({error}); "
                              "every parameter uses the first group's settings")
            return None, self.notes
        body = "\n".join(b for b in branches if b)
        if fallback is not None:
            body += f"\nreturn {fallback}"
        elif not _always_returns(body):
            body += "\nreturn None"
        code = "def parameter_group(name, shape):\n" + _indent(
            f'"""Index of the parameter group (of {origin}) that parameter `name` belongs to."""\n' + body)
        return code, self.notes

    # --- the ways groups are written --------------------------------------------------------------------
    def _module_prefix(self, node, scope):
        """'' for the model itself, 'backbone' for model.backbone, else raise."""
        parts = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if isinstance(node, cst.Name) and (node.value in self.model_names or node.value in ("model", "net",
                                                                                            "self")):
            return ".".join(reversed(parts))
        raise Untranslatable(self.index.source.code_of(node).strip())

    def _named_parameters_loop(self, iterable, scope):
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
                iterable.func.attr.value == "named_parameters":
            prefix = self._module_prefix(iterable.func.value, scope)
            return prefix
        raise Untranslatable(self.index.source.code_of(iterable).strip())

    def _comprehension_condition(self, node, scope):
        loop = node.for_in
        if loop.inner_for_in is not None or not isinstance(loop.target, cst.Tuple):
            raise Untranslatable(self.index.source.code_of(node).strip())
        name_var, param_var = [e.value.value if isinstance(e.value, cst.Name) else None for e in
                               loop.target.elements]
        prefix = self._named_parameters_loop(loop.iter, scope)
        if prefix:
            raise Untranslatable("named_parameters of a submodule")
        conditions = [self.condition(c.test, scope, name_var, param_var) for c in loop.ifs]
        return " and ".join(f"({c})" for c in conditions) if conditions else ""

    def _filling_loop(self, list_name, scope):
        for call in self.index.calls:
            if call.callee == f"{list_name}.append" and call.function is scope.function:
                loops = self.index.loops_around(call.node)
                if loops and isinstance(loops[-1], cst.For):
                    return loops[-1]
        return None

    def _loop_body(self, loop, lists, scope):
        if not isinstance(loop.target, cst.Tuple) or len(loop.target.elements) != 2:
            raise Untranslatable(self.index.source.code_of(loop.target).strip())
        name_var, param_var = [e.value.value if isinstance(e.value, cst.Name) else None for e in
                               loop.target.elements]
        prefix = self._named_parameters_loop(loop.iter, scope)
        if prefix:
            raise Untranslatable("named_parameters of a submodule")
        return self.statements(loop.body.body, scope, name_var, param_var, lists)

    def statements(self, body, scope, name_var, param_var, lists):
        lines = []
        for statement in body:
            if isinstance(statement, cst.If):
                lines.append(self._if(statement, scope, name_var, param_var, lists))
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    lines.append(self._small(small, scope, name_var, param_var, lists))
            else:
                raise Untranslatable(self.index.source.code_of(statement).strip().splitlines()[0])
        return "\n".join(line for line in lines if line)

    def _if(self, node, scope, name_var, param_var, lists, keyword="if"):
        test = self.condition(node.test, scope, name_var, param_var)
        if test in ("not (True)", "False") and node.orelse is None and keyword == "if":
            return ""  # `if not param.requires_grad: continue`: every Keras trainable variable requires grad
        text = f"{keyword} {test}:\n" + _indent(self.statements(node.body.body, scope, name_var, param_var, lists)
                                                or "pass")
        if isinstance(node.orelse, cst.If):
            text += "\n" + self._if(node.orelse, scope, name_var, param_var, lists, "elif")
        elif isinstance(node.orelse, cst.Else):
            text += "\nelse:\n" + _indent(self.statements(node.orelse.body.body, scope, name_var, param_var, lists)
                                          or "pass")
        return text

    def _small(self, node, scope, name_var, param_var, lists):
        if isinstance(node, cst.Continue):
            return "return None"
        if isinstance(node, cst.Pass):
            return ""
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            callee = dotted_name(node.value.func) or ""
            base, _, method = callee.rpartition(".")
            args = node.value.args
            if method == "append" and base in lists and len(args) == 1 and isinstance(args[0].value, cst.Name) \
                    and args[0].value.value == param_var:
                return f"return {lists[base]}"
            if method == "append" and base in lists:
                raise Untranslatable(self.index.source.code_of(node).strip())
        if isinstance(node, cst.Expr) and isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
            return ""
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and \
                (dotted_name(node.value.func) or "").endswith(("print", "add")):
            return ""
        raise Untranslatable(self.index.source.code_of(node).strip())

    # --- conditions --------------------------------------------------------------------------------------
    def condition(self, node, scope, name_var, param_var, local=None):
        local = dict(local or {})
        c = lambda n: self.condition(n, scope, name_var, param_var, local)  # noqa: E731
        if isinstance(node, cst.Name):
            if node.value == name_var:
                return "name"
            if node.value in local:
                return local[node.value]
            value = self.values.translate(node, scope)
            if value is None or value.refs:
                raise Untranslatable(node.value)
            return repr(value.value) if value.known else value.code
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            return self.index.source.code_of(node).strip()
        if isinstance(node, cst.BooleanOperation):
            op = "and" if isinstance(node.operator, cst.And) else "or"
            return f"({c(node.left)} {op} {c(node.right)})"
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return f"not ({c(node.expression)})"
        if isinstance(node, cst.Comparison):
            parts = [c(node.left)]
            for target in node.comparisons:
                op = COMPARE.get(type(target.operator))
                symbol = op[0] if op else {cst.In: "in", cst.NotIn: "not in", cst.Is: "is",
                                           cst.IsNot: "is not"}.get(type(target.operator))
                if symbol is None:
                    raise Untranslatable(self.index.source.code_of(node).strip())
                parts.append(f"{symbol} {c(target.comparator)}")
            return " ".join(parts)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == param_var:
            if node.attr.value == "ndim":
                return "len(shape)"
            if node.attr.value == "requires_grad":
                return "True"
            if node.attr.value == "shape":
                self._shape_note()
                return "shape"
            raise Untranslatable(f"{param_var}.{node.attr.value}")
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                    func.value.value == param_var:
                if func.attr.value in RANK_FORMS:
                    return "len(shape)"
                if func.attr.value == "size" and not node.args:
                    self._shape_note()
                    return "shape"
                raise Untranslatable(f"{param_var}.{func.attr.value}()")
            callee = dotted_name(func)
            if callee == "len" and len(node.args) == 1:
                inner = node.args[0].value
                if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and \
                        inner.value.value == param_var and inner.attr.value == "shape":
                    return "len(shape)"
                if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and isinstance(
                        inner.func.value, cst.Name) and inner.func.value.value == param_var and \
                        inner.func.attr.value == "size":
                    return "len(shape)"
                return f"len({c(inner)})"
            if callee in ("any", "all") and len(node.args) == 1 and isinstance(node.args[0].value,
                                                                              cst.GeneratorExp):
                generator = node.args[0].value
                loop = generator.for_in
                if loop.inner_for_in is not None or not isinstance(loop.target, cst.Name) or loop.ifs:
                    raise Untranslatable(self.index.source.code_of(node).strip())
                iterable = c(loop.iter)
                inner_local = {**local, loop.target.value: loop.target.value}
                element = self.condition(generator.elt, scope, name_var, param_var, inner_local)
                return f"{callee}({element} for {loop.target.value} in {iterable})"
            if isinstance(func, cst.Attribute) and func.attr.value in ("startswith", "endswith", "lower", "upper",
                                                                      "split") and not any(
                    a.keyword is not None for a in node.args):
                base = c(func.value)
                args = ", ".join(c(a.value) for a in node.args)
                return f"{base}.{func.attr.value}({args})"
        if isinstance(node, (cst.Tuple, cst.List)):
            items = [c(e.value) for e in node.elements]
            return ("(" + ", ".join(items) + ",)") if isinstance(node, cst.Tuple) else "[" + ", ".join(items) + "]"
        value = self.values.translate(node, scope)
        if value is not None and not value.refs and value.known:
            return repr(value.value)
        raise Untranslatable(self.index.source.code_of(node).strip())

    def _shape_note(self):
        note = ("parameter groups read `param.shape`: train_tpu.py passes the Keras variable's shape, which is "
                "transposed for some layers (Conv kernels are HWIO)")
        if note not in self.notes:
            self.notes.append(note)


def _indent(text, prefix="    "):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _always_returns(body):
    """True when the body ends with an `else:` branch that returns (so both branches of the last if return)."""
    lines = [line for line in body.splitlines() if line.strip()]
    top = [line for line in lines if not line.startswith(" ")]
    return len(lines) >= 2 and lines[-1].startswith("    return") and bool(top) and top[-1] == "else:"
