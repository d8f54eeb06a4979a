"""Dicts of features built in one go: `OrderedDict([("p3", p3), ("p4", p4)])`, `dict(p3=p3, p4=p4)`,
`OrderedDict([(k, v) for k, v in zip(names, results)])`, `dict(zip(names, results))` (torchvision's
FeaturePyramidNetwork returns its levels so, and a user's model hands it its backbone's stages so).

Where every value is an image held channels-last, the dict is held as it lies (ir/lists.py `HeldTable`): read by
key as it lies, handed as it lies to a block translated for it (the FPN's `list(x.values())`), and with every value
in torch's layout for any other reader. Before, each value was converted to torch's layout where the dict was
built and back where it was read: two Transposes a level. A dict display (`{"a": a}`) and a dict comprehension are
decided the same way (passes/expressions.py).
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.ir.layout import element_template
from porter.ir.lists import held_features, images_alike

DICT_BUILDERS = frozenset({"collections.OrderedDict"})


def builds_a_dict(translator, node, canonical):
    """Whether `node` calls `OrderedDict` or the builtin `dict` (not rebound in the body)."""
    return canonical in DICT_BUILDERS or isinstance(node.func, cst.Name) and node.func.value == "dict" and \
        translator.env.get("dict") is None


def keyed_features(translator, node):
    """The held dict `node` builds when its values are all images held channels-last, else None (the caller then
    translates the call as it did: every value in torch's layout)."""
    func = translator.code(node.func)
    if node.args and all(a.keyword is not None and not a.star for a in node.args):  # dict(p3=p3, p4=p4)
        values = [translator.expr(a.value) for a in node.args]
        item = images_alike(values)
        written = ", ".join(f"{a.keyword.value}={v.code}" for a, v in zip(node.args, values))
        return None if item is None else held_features(translator.ctx, item, f"{func}({written})")
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return None
    argument = node.args[0].value
    if isinstance(argument, (cst.List, cst.Tuple)):
        return _literal_pairs(translator, func, argument)
    if isinstance(argument, (cst.ListComp, cst.GeneratorExp)) and isinstance(argument.elt, cst.Tuple) and \
            len(argument.elt.elements) == 2:
        translator.keyed_pairs = True  # (the comprehension keeps its pairs' images as they lie, and says so)
        try:
            pairs = translator.expr(argument)
        finally:
            translator.keyed_pairs = False
        held = pairs.static[1] if isinstance(pairs.static, tuple) and pairs.static[:1] == ("pairs",) else None
        return None if held is None else held_features(translator.ctx, held, f"{func}({pairs.code})")
    if isinstance(argument, cst.Call) and dotted_name(argument.func) == "zip" and translator.env.get("zip") is None \
            and len(argument.args) == 2 and not any(a.keyword is not None or a.star for a in argument.args):
        keys, images = (translator.expr(a.value) for a in argument.args)
        template = element_template(images) if images.kind == "tuple" else None
        item = images_alike([template]) if template is not None and not keys.is_tensor else None
        return None if item is None else held_features(translator.ctx, item,
                                                       f"{func}(zip({keys.code}, {images.code}))")
    return None


def _literal_pairs(translator, func, pairs):
    """`OrderedDict([("p3", p3), ("p4", p4)])`: pairs written out."""
    if not pairs.elements or not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Tuple) and len(
            e.value.elements) == 2 and all(isinstance(i, cst.Element) for i in e.value.elements)
                                     for e in pairs.elements):
        return None
    keys = [translator.expr(e.value.elements[0].value) for e in pairs.elements]
    values = [translator.expr(e.value.elements[1].value) for e in pairs.elements]
    item = images_alike(values)
    if item is None or any(k.is_tensor for k in keys):
        return None
    open_, close = ("[", "]") if isinstance(pairs, cst.List) else ("(", ")")
    written = ", ".join(f"({k.code}, {v.code})" for k, v in zip(keys, values))
    return held_features(translator.ctx, item, f"{func}({open_}{written}{close})")
