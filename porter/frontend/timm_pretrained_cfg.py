"""The keyword arguments timm's builder takes from a variant's pretrained config, read statically.

`build_model_with_cfg(VisionTransformer, "vitamin_small_224", pretrained, **kwargs)` resolves the variant's
pretrained config (the first `default_cfgs` entry of that architecture: `"vitamin_small_224.datacomp1b_clip":
_cfg(..., num_classes=768)`) and sets, where the caller gave none, `num_classes`, `global_pool` and `in_chans` (the
config's input size's first) from it, and `img_size` (its last two) where the config says `fixed_input_size`
(timm/models/_builder.py `_update_default_model_kwargs`). A port's factory that left them out built a 1000-class
head where timm builds a 768-class one, or a ViT for 224 pixels where `vit_base_patch16_384` is built for 384.

`builder_defaults(source, variant)` -> {keyword: literal value}; {} where no config is found.
"""

import ast
from collections import deque

import libcst as cst

_KEYWORDS = ("num_classes", "global_pool")
# what timm's PretrainedCfg holds where a config leaves an entry out
PRETRAINED_CFG_DEFAULTS = {"num_classes": 1000, "input_size": (3, 224, 224), "fixed_input_size": False}


def builder_defaults(source, variant):
    """{keyword: value} timm's builder sets by default for `variant` of the file `source` (see the module
    docstring); values the config does not give literally are left out."""
    config = _variant_config(source, variant)
    if config is None:
        return {}
    config = {**PRETRAINED_CFG_DEFAULTS, **config}
    defaults = {}
    for key in _KEYWORDS:
        value = config.get(key)
        if key == "num_classes" and isinstance(value, int) and not isinstance(value, bool) and value >= 0 or \
                key == "global_pool" and isinstance(value, str):
            defaults[key] = value
    size = config.get("input_size")
    if isinstance(size, tuple) and len(size) == 3 and all(isinstance(s, int) for s in size):
        defaults["in_chans"] = size[0]
        if config.get("fixed_input_size") is True:
            defaults["img_size"] = size[1:]
    return defaults


def _variant_config(source, variant):
    """The literal entries of `variant`'s default pretrained config, or None. As timm's `generate_default_cfgs`
    picks it: an untagged entry with weights, or the first tag ending in `*`, else the first tag with weights, else
    the first listed."""
    table = _default_cfgs(source.module)
    if table is None:
        return None
    tags, configs, pretrained, default_set = deque(), {}, False, False
    for element in table.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            continue
        arch, _, tag = element.key.evaluated_value.partition(".")
        if arch != variant:
            continue
        entries = _config_entries(source, element.value)
        if entries is None:
            return None
        weights = any(entries.get(key) for key in ("url", "file", "hf_hub_id"))  # (a computed one: truthy)
        priority = weights and not tag or tag.endswith("*") and not default_set
        tag = tag.strip("*")
        if priority:
            tags.appendleft(tag)
            default_set = True
        elif weights and not pretrained:
            tags.appendleft(tag)
        else:
            tags.append(tag)
        pretrained = pretrained or weights
        configs[tag] = entries
    return configs[tags[0]] if tags else None


def _default_cfgs(module):
    """The dict display of the module's `default_cfgs = generate_default_cfgs({...})` (or `= {...}`), or None."""
    for statement in module.body:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and
                isinstance(statement.body[0], cst.Assign)):
            continue
        assign = statement.body[0]
        if not any(isinstance(t.target, cst.Name) and t.target.value == "default_cfgs" for t in assign.targets):
            continue
        value = assign.value
        if isinstance(value, cst.Call) and len(value.args) == 1:
            value = value.args[0].value
        return value if isinstance(value, cst.Dict) else None
    return None


def _config_entries(source, node, bound=None, given=None, star=None, depth=0):
    """{key: literal} of a config expression: a dict display, or a call of the file's config functions
    (`_cfg(url='', **kwargs)` returning a display over its parameters and keyword arguments, or another's call:
    `_tcfg` returning `_cfg(url=url, **dict({'interpolation': 'bicubic'}, **kwargs))`); None where unread."""
    bound, given = bound or {}, given or {}
    if isinstance(node, cst.Dict):
        return _literal_entries(node, bound, given, star)
    if depth > 4 or not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
        return None
    function = source.functions.get(node.func.value)
    if not isinstance(function, cst.FunctionDef):
        return None
    positional, keywords = [], {}
    for argument in node.args:
        if argument.star == "**":
            spread = _spread(argument.value, bound, given, star)
            if spread is None:
                return None
            keywords.update(spread)
        elif argument.star:
            return None
        elif argument.keyword is None:
            positional.append(_value(argument.value, bound))
        else:
            keywords[argument.keyword.value] = _value(argument.value, bound)
    params = function.params
    named = [*params.posonly_params, *params.params, *params.kwonly_params]
    inner = {p.name.value: literal_value(p.default) for p in named if p.default is not None}
    inner.update({p.name.value: value for p, value in zip(named, positional)})
    extra = {}
    for name, value in keywords.items():
        if any(p.name.value == name for p in named):
            inner[name] = value
        else:
            extra[name] = value
    inner_star = params.star_kwarg.name.value if params.star_kwarg is not None else None
    returned = _returned(function)
    return None if returned is None else _config_entries(source, returned, inner, extra if inner_star else {},
                                                         inner_star, depth + 1)


def _spread(node, bound, given, star):
    """The keyword arguments `**node` hands: the function's own `**kwargs`, or `dict({...}, **kwargs)`."""
    if isinstance(node, cst.Name) and node.value == star:
        return dict(given)
    if isinstance(node, cst.Dict):
        return _literal_entries(node, bound, given, star)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict":
        merged = {}
        for argument in node.args:
            if argument.star == "**":
                inner = _spread(argument.value, bound, given, star)
                if inner is None:
                    return None
                merged.update(inner)
            elif argument.keyword is not None:
                merged[argument.keyword.value] = _value(argument.value, bound)
            elif isinstance(argument.value, cst.Dict):
                merged.update(_literal_entries(argument.value, bound, given, star))
            else:
                return None
        return merged
    return None


def _returned(function):
    body = function.body.body
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return):
        return last.body[0].value
    return None


def _value(node, bound):
    return bound[node.value] if isinstance(node, cst.Name) and node.value in bound else literal_value(node)


def _literal_entries(display, bound, given, star=None):
    entries = {}
    for element in display.elements:
        if isinstance(element, cst.StarredDictElement):
            if isinstance(element.value, cst.Name) and element.value.value == star:
                entries.update(given)
            continue
        if isinstance(element.key, cst.SimpleString):
            entries[element.key.evaluated_value] = _value(element.value, bound)
    return entries


class _NotLiteral:
    def __repr__(self):
        return "<not a literal>"


NOT_LITERAL = _NotLiteral()


def literal_value(node):
    """The Python value of a literal expression node, else NOT_LITERAL."""
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_LITERAL
