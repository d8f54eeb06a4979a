"""Models a factory function builds as a container (`def resnet18(num_classes): net = nn.Sequential(); net.add(...);
return net`, kuangliu's `make_layers(cfg)` returning `nn.Sequential(*layers)`): laid out as one model.

No `forward` porter reads calls the blocks such a container holds, so each block class is laid out alone (a "top
class": torch's layout in and out) and would convert on the way in and out of every block. Here the container's
call is followed as the runtime Sequential runs it when called as the model (torch's layout handed in, each child
converted to the layout it takes): the block classes are handed images channels-last, so each gets a case of its
`call` for those layouts (the generic one stays, for an instance built anywhere else), and every instance the
factory, or a helper only factories use, builds is told at construction to run that case
(`Block(...).with_layouts("channels_last", "channels_last")`). The model then converts once on entry and once
on exit.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import descendants, walk
from porter.ir.values import tensor
from porter.passes.modules import ModuleResolver

FACTORY_SITE = "#factory"  # the owner of the site of a block a factory builds (FileTranslator.bound_sites)


def lay_out_factory_models(file_translator, body_translator_class):
    """Follow the call of every factory-built container model; returns the names of the functions whose class
    constructions are told the layouts found (the factories and the helpers only they call)."""
    source = file_translator.source
    # what the translation learnt of constructor arguments, read (a copy: following the factories changes nothing)
    hints = {name: {key: dict(value) if isinstance(value, dict) else value for key, value in learnt.items()}
             for name, learnt in file_translator.param_hints.items()}
    resolver = ModuleResolver(source, file_translator.ctx.module_rules, source.class_named, hints)
    callers = _callers(source)
    models = []
    for name in source.model_functions():
        if callers.get(name) or source.is_linked(source.functions[name]):
            continue  # a helper of other code (or library code the linker brought in): not a model itself
        built = resolver.function_built(name)
        rank = _image_rank(file_translator, built) if built is not None and built.kind == "sequential" else None
        if rank is not None and _holds_own_class(built, source.classes):
            models.append((name, built, rank))
    if not models:
        return frozenset()
    follower = body_translator_class(file_translator, None, "forward", {}, None)
    follower.construction_site = FACTORY_SITE  # each block class it reaches is called where the factory built it
    for _, built, rank in models:
        follower.simulate_sequential(built, tensor("", rank, "source"))
    return _factory_only(source, [name for name, _, _ in models], callers)


def handed_constructions(source, functions):
    """The ids of the constructor calls of in-file classes in `functions` whose instance goes to another in-file
    class's constructor (`Net(block=Block(4))`, `b = Block(4); Net(b)`): that class's own code calls it, in the
    layouts its translation chose (telling it so itself where they differ), so no factory layout is told there."""
    handed = set()
    for name in functions:
        walk(source.functions[name], _HandedConstructions(source, handed))
    return frozenset(handed)


class _HandedConstructions(cst.CSTVisitor):
    """Adds to `handed` the ids of the constructions one function hands to a class constructor."""

    def __init__(self, source, handed):
        super().__init__()
        self.source, self.handed = source, handed
        self.constructed = {}  # local name -> the constructor calls assigned to it

    def builds(self, node):
        return isinstance(node, cst.Call) and self.source.class_named(dotted_name(node.func) or "") is not None

    def visit_Assign(self, node):
        if self.builds(node.value):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.constructed.setdefault(target.target.value, []).append(node.value)

    def visit_Call(self, node):
        if not self.builds(node):
            return
        for arg in node.args:
            for inner in descendants(arg.value):
                if self.builds(inner):
                    self.handed.add(id(inner))
                elif isinstance(inner, cst.Name):
                    self.handed.update(id(call) for call in self.constructed.get(inner.value, ()))


def _image_rank(file_translator, ref, depth=0):
    """The rank of the image the first spatial layer of container `ref` takes (Conv2d: 4), or None."""
    for element in ref.elements:
        if depth > 8:
            return None
        if element.kind == "rule" and element.rule.layout == "channels_last" and element.rule.rank:
            return element.rule.rank
        if element.kind == "rule" and element.rule.layout == "source":
            return None  # a Linear, an Embedding first: no image comes in
        if element.kind in ("sequential", "list"):
            found = _image_rank(file_translator, element, depth + 1)
            if found is not None:
                return found
        elif element.kind == "class" and element.class_name in file_translator.source.classes:
            return file_translator.spatial_rank(file_translator.source.classes[element.class_name])
    return None


def _holds_own_class(ref, classes):
    return any(element.kind == "class" and element.class_name in classes or _holds_own_class(element, classes)
               for element in ref.elements)


def _callers(source):
    """Own function -> the names of the own functions and classes whose code calls it (by its plain name)."""
    callers = {}
    for statement in source.module.body:
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or source.is_linked(statement):
            continue
        # the node index's calls of the statement (one walk of the module for all such questions), not a walk
        # of every node of the statement, whitespace included
        found = {node.func.value for node in source.nodes_in(statement, cst.Call) if
                 isinstance(node.func, cst.Name) and node.func.value in source.functions}
        for callee in found - {statement.name.value}:
            callers.setdefault(callee, set()).add(statement.name.value)
    return callers


def _factory_only(source, factories, callers):
    """The factories and the own functions reached from them that nothing else calls."""
    reached = set(factories)
    changed = True
    while changed:
        changed = False
        for name, by in callers.items():
            if name not in reached and by and by <= reached:
                reached.add(name)
                changed = True
    return frozenset(reached)
