"""The class a file is about, when the user names none: the model its factory functions return.

A model file's own module-level functions say which class is the model: `def resnet18(...): return _resnet(...)`
whose `_resnet` returns `ResNet(block, layers)`, or timm's `_create_resnet` returning what `build_model_with_cfg`
builds from the class handed to it first (`ResNet`, or `model_cls` bound to `EfficientNet`). The class the most
public factories (functions no other function of the file calls) return wins; one returned only under a condition
(`if features_only: model_cls = EfficientNetFeatures`, the `else` of `LevitDistilled if distilled else Levit`)
counts less than one returned always, and a part a private helper returns (`_vgg_extractor` building SSD's
backbone) less than the model a public factory returns. A class the linker brought in from another module is the
main class only when the file's factories return it (torchvision ssdlite.py builds ssd.py's `SSD`), never because
nothing uses it (timm.layers' `SelectAdaptivePool2d`). Without factories: the file's own last class no other class
uses or derives from (the class the others feed into).
"""

import libcst as cst


def default_main_class(source):
    """The main class of `source` (a SourceFile) when neither `--class` nor training code names one."""
    own = [name for name, info in source.classes.items() if not source.is_linked(info.node)] or list(source.classes)
    returned = _factory_counts(source, set(source.classes))  # a factory may return a linked class (ssdlite's SSD)
    fallback = _unused_in_order(source, own)
    if returned:
        return max(returned, key=lambda name: (*returned[name], fallback.index(name) if name in fallback else -1))
    return fallback[-1] if fallback else own[-1]


def _unused_in_order(source, own):
    """The own classes no other class constructs or derives from, in source order."""
    used = set()
    for name in own:
        info = source.classes[name]
        code = source.span_text(info.node)
        used.update(other for other in own if other != name and f"{other}(" in code)
        used.update(info.bases)
    return [name for name in own if name not in used]


def _factory_counts(source, own_classes):
    """class -> (public factories returning it, of them always, functions returning it, of them always), for the
    classes some own function returns."""
    functions = {name: node for name, node in source.functions.items() if not source.is_linked(node)}
    called = set()
    for name, node in functions.items():
        called.update(call.func.value for call in source.nodes_in(node, cst.Call)
                      if isinstance(call.func, cst.Name) and call.func.value in functions and call.func.value != name)
    returns = _Returns(functions, own_classes)
    counts = {}
    for name in functions:
        public = name not in called
        for cls, always in returns.of(name).items():
            found = counts.get(cls, (0, 0, 0, 0))
            counts[cls] = (found[0] + public, found[1] + (public and always), found[2] + 1, found[3] + always)
    return counts


class _Returns:
    """What each own function returns: {own class: returned on every path}, through the names it binds
    (`model_cls = EfficientNet`), the own functions it calls and builders it does not define (handed the class
    first: `build_model_with_cfg(ResNet, variant, ...)`)."""

    def __init__(self, functions, own_classes):
        self.functions, self.own_classes, self.found = functions, own_classes, {}

    def of(self, name):
        if name not in self.found:
            self.found[name] = {}  # a recursive call returns nothing known
            self.found[name] = _FunctionReturns(self).read(self.functions[name])
        return self.found[name]


class _FunctionReturns(cst.CSTVisitor):
    """One function's returned classes: a walk in source order, binding names as it goes."""

    def __init__(self, returns):
        self.returns, self.bound, self.result, self.conditions = returns, {}, {}, 0

    def read(self, function):
        function.body.visit(self)
        return self.result

    def classes_of(self, expression, conditional=False):
        """{class: always} an expression may evaluate to (a class, or a model built from one)."""
        always = not (conditional or self.conditions)
        if isinstance(expression, cst.IfExp):  # `A if flag else B`: A is the default
            found = self.classes_of(expression.body, conditional)
            for cls, value in self.classes_of(expression.orelse, True).items():
                found[cls] = found.get(cls, False) or value
            return found
        if isinstance(expression, cst.Name):
            if expression.value in self.returns.own_classes:
                return {expression.value: always}
            return {cls: value and always for cls, value in self.bound.get(expression.value, {}).items()}
        if isinstance(expression, cst.Call):
            callee = expression.func.value if isinstance(expression.func, cst.Name) else None
            if callee in self.returns.functions:
                return {cls: value and always for cls, value in self.returns.of(callee).items()}
            if callee in self.returns.own_classes or callee in self.bound:
                return self.classes_of(expression.func, conditional)
            first = expression.args[0] if expression.args else None
            if first is not None and first.keyword is None and not first.star:
                return self.classes_of(first.value, conditional)  # a builder handed the class
        return {}

    def visit_If(self, node):
        self.conditions += 1
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        self.conditions -= 1
        return False

    def visit_FunctionDef(self, node):
        return False  # a nested function's returns are its own

    def visit_Assign(self, node):
        found = self.classes_of(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name) and found:
                known = self.bound.setdefault(target.target.value, {})
                for cls, always in found.items():
                    known[cls] = known.get(cls, False) or always

    def visit_Return(self, node):
        for cls, always in (self.classes_of(node.value) if node.value is not None else {}).items():
            self.result[cls] = self.result.get(cls, False) or always
