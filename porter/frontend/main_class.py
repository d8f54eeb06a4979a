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

from porter.frontend.names import dunder_all
from porter.frontend.walk import walk


def factory_main_class(source, preferred=None):
    """The class the file's public factories return most (see above), or None when no function returns one. It
    comes before what training code builds: a model file's helpers build blocks (`create_byob_stem` building
    `Stem(...)`), which the training-code reader takes for the model. Between classes the factories return
    equally (GluonCV's `get_residualAttentionModel` building one of two by input size), `preferred` (what training
    code builds) wins."""
    returned = _factory_counts(source, set(source.classes))  # a factory may return a linked class (ssdlite's SSD)
    returned = {name: counts for name, counts in returned.items() if counts[0]}
    if not returned:
        return None
    fallback = _unused_in_order(source, _own_classes(source))
    return max(returned, key=lambda name: (*returned[name], name == preferred,
                                           fallback.index(name) if name in fallback else -1))


def default_main_class(source):
    """The main class of `source` (a SourceFile) when neither `--class` nor training code names one."""
    found = factory_main_class(source)
    if found is not None:
        return found
    own = _own_classes(source)
    fallback = _unused_in_order(source, own)
    # a loss (`class MaskedSoftmaxCELoss(nn.CrossEntropyLoss)` closing d2l's torch.py) is what training uses,
    # not the model
    models = [name for name in fallback if not is_loss_class(source, name)]
    fallback = models or fallback
    exported = [name for name in dunder_all(source.module) or () if name in fallback]
    if exported:  # the file says what it offers (MONAI's swin_unetr.py: `__all__ = ["SwinUNETR", ...]`, where
        return exported[0]  # PatchMerging, chosen from a dict, read as unused and came last)
    return fallback[-1] if fallback else own[-1]


def is_loss_class(source, name):
    """Whether module class `name` derives from a torch loss (`class MaskedSoftmaxCELoss(nn.CrossEntropyLoss)`)."""
    info = source.classes.get(name)
    return info is not None and (info.layer_base or "").endswith("Loss")


def _own_classes(source):
    return [name for name, info in source.classes.items() if not source.is_linked(info.node)] or list(source.classes)


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
    # called anywhere in the file's own code (another function, a class's method: ssdlite's `_extra_block`)
    called = {name for name in functions if any(not source.is_linked(call) for call in source.calls_named(name))}
    returns = ReturnedClasses(functions, own_classes, source.imports.resolve)
    counts = {}
    for name in functions:
        public = name not in called
        for cls, always in returns.of(name).items():
            found = counts.get(cls, (0, 0, 0, 0))
            counts[cls] = (found[0] + public, found[1] + (public and always), found[2] + 1, found[3] + always)
    return counts


class ReturnedClasses:
    """What each own function returns: {own class: returned on every path}, through the names it binds
    (`model_cls = EfficientNet`), the own functions it calls and builders it does not define (handed the class
    first: `build_model_with_cfg(ResNet, variant, ...)`)."""

    def __init__(self, functions, own_classes, resolve):
        self.functions, self.own_classes, self.found, self.resolve = functions, own_classes, {}, resolve

    def is_torch(self, callee):
        """Whether a callee is torch's (`nn.Sequential(block, ...)` holds its first argument, it builds no model)."""
        return (self.resolve(callee) or "").startswith("torch.")

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
        walk(function.body, self)
        return self.result

    def classes_of(self, expression, conditional=False, class_objects=False):
        """{class: always} an expression may evaluate to (a class, or a model built from one; only classes
        themselves with `class_objects`: what a builder is handed first)."""
        always = not (conditional or self.conditions)
        if isinstance(expression, cst.IfExp):  # `A if flag else B`: A is the default
            found = self.classes_of(expression.body, conditional, class_objects)
            for cls, value in self.classes_of(expression.orelse, True, class_objects).items():
                found[cls] = found.get(cls, False) or value
            return found
        if isinstance(expression, cst.Name):
            if expression.value in self.returns.own_classes:
                return {expression.value: always}
            found, is_class = self.bound.get(expression.value, ({}, True))
            return {cls: value and always for cls, value in found.items()} if is_class or not class_objects else {}
        if isinstance(expression, cst.Call) and not class_objects:
            callee = expression.func.value if isinstance(expression.func, cst.Name) else None
            if callee in self.returns.functions:
                return {cls: value and always for cls, value in self.returns.of(callee).items()}
            if callee in self.returns.own_classes or callee in self.bound:
                return self.classes_of(expression.func, conditional, class_objects=True)
            first = expression.args[0] if expression.args else None
            if first is not None and first.keyword is None and not first.star and \
                    not self.returns.is_torch(expression.func):
                # a builder handed the class (`build_model_with_cfg(ResNet, ...)`), not a model (`SSD(backbone)`)
                return self.classes_of(first.value, conditional, class_objects=True)
        return {}

    def visit_If(self, node):
        self.conditions += 1
        walk(node.body, self)
        if node.orelse is not None:
            walk(node.orelse, self)
        self.conditions -= 1
        return False

    def visit_FunctionDef(self, node):
        return False  # a nested function's returns are its own

    def visit_Assign(self, node):
        found = self.classes_of(node.value)
        is_class = not isinstance(node.value, cst.Call)  # `model_cls = EfficientNet`, not `model = ResNet(...)`
        for target in node.targets:
            if isinstance(target.target, cst.Name) and found:
                known, _ = self.bound.setdefault(target.target.value, ({}, is_class))
                for cls, always in found.items():
                    known[cls] = known.get(cls, False) or always

    def visit_Return(self, node):
        for cls, always in (self.classes_of(node.value) if node.value is not None else {}).items():
            self.result[cls] = self.result.get(cls, False) or always
