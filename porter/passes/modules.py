"""Module references: which runtime layer, in-file class or container an `__init__` expression builds.

Used by the translator to know, for `self.features(x)` in forward, what `self.features` is and which layouts
it takes and returns, without executing anything.
"""

import re
from dataclasses import dataclass, replace

import libcst as cst

from porter.frontend.arguments import parameter_of
from porter.frontend.gluon import is_gluon
from porter.frontend.handed_functions import handed_functions
from porter.frontend.imports import dotted_name
from porter.frontend.module_tables import module_level_table
from porter.frontend.names import assignment_targets, target_names
from porter.frontend.returns import return_values
from porter.frontend.walk import descendants
from porter.ir.containers import CONTAINERS
from porter.ir.values import ELEMENTWISE_CALLABLE, UNKNOWN_MODULE, ModuleRef
from porter.passes.call_literals import (
    FORWARDED,
    LITERALS,
    argument_literals,
    call_literals,
    literal_text,
    static_value,
)
from porter.passes.elementwise_callables import is_elementwise_reference, returns_elementwise_callable
from porter.passes.elementwise_classes import is_elementwise_class
from porter.passes.init_statics import decided_attributes
from porter.passes.module_loops import DictKey, dict_item, list_expression, literal_int, loop_turns
from porter.passes.unhanded_params import UNHANDED, decided_test, note_handed
from porter.rules.registry import module_rule_for_call

CONSTRUCTION_STATICS = "#statics"  # param_hints key: class -> {literal values of a construction: None}


def constructed_without(param_hints, class_name, static):
    """Whether a construction of `class_name` met while resolving constructors may hold the literal values `static`
    ((attribute, text) pairs) at run time without porter knowing it: none of its known values differs, and one of
    those attributes is unknown (`_HEncLayer(..., empty=last_freq)` in a loop turning `last_freq` from False to
    True). A case of `call` chosen by those attributes at run time can then be what such an instance runs."""
    statics = param_hints.get(CONSTRUCTION_STATICS, {}).get(class_name, {})
    for known in map(dict, statics):
        if all(known.get(attr, text) == text for attr, text in static) and not all(attr in known for attr, _ in static):
            return True
    return False


class ModuleResolver:
    """Resolves expressions in `__init__` (and helper methods it calls) to ModuleRefs."""

    def __init__(self, source, module_rules, class_of, param_hints=None):
        self.source = source
        self.module_rules = module_rules
        self.class_of = class_of  # callable: in-file class name -> ClassInfo or None
        self.depth = 0
        self.param_hints = param_hints if param_hints is not None else {}  # class -> {param: ModuleRef}
        self.returns_seen = {}  # (function, owner, what it was handed) -> the ModuleRef it returns

    def note_constructor_args(self, class_name, node, env, owner, keep_class_defaults=False):
        """Remember module-valued constructor arguments (`Block(..., downsample=seq)`) for that class's params.
        `keep_class_defaults` (a call in module-level code, such as a model-zoo factory): a block class handed
        for a parameter whose default is another block class (`resnet50_v1b_gn` passing `norm_layer=GroupNorm`
        where the default is BatchNorm) does not replace the default the class is laid out for."""
        info = self.class_of(class_name)
        init = info.find_method("__init__") if info is not None else None
        if init is None:
            return
        params = [p.name.value for p in init.params.params][1:]
        note_handed(self.param_hints, class_name, params, node)
        defaults = {p.name.value: p.default for p in init.params.params if p.default is not None} \
            if keep_class_defaults else {}
        hints = self.param_hints.setdefault(class_name, {})
        sites = self.param_hints.setdefault("#sites", {})  # (class, param) -> {argument node: ModuleRef}
        for position, arg in enumerate(node.args):
            name = parameter_of(arg, position, params)
            if name is None or (name in hints and (class_name, name) not in sites):
                continue
            ref = self.ref_of(arg.value, env, owner)
            if ref.kind == "classobj" or ref.kind == "unknown" and not ref.alternatives:  # (one of several modules
                # an if/elif chose, wav2vec2's GroupNorm or channel LayerNorm, stays: `alternatives_call`)
                cls = self.class_ref(arg.value, env)  # a block class handed to the constructor
                default = self.class_ref(defaults[name], {}) if name in defaults else None
                if cls is not None and default is not None and default != cls:
                    continue  # another block class than the parameter's default (kept: keep_class_defaults)
                ref = ModuleRef("classobj", elements=(cls,)) if cls is not None else None
            if ref is None and self._replaces_class_default(init, name, arg.value, env):
                ref = UNKNOWN_MODULE  # (GC ViT's `norm_layer=norm_layer_cl`, resolved from a string at run time:
                # not the LayerNorm2d default the class would otherwise be laid out for)
            if ref is None or ref.kind == "classobj" and name in hints:
                continue  # block classes handed in are alternatives (siblings share what one learns): the first
            seen = sites.setdefault((class_name, name), {})
            site = (getattr(owner, "name", owner), self.source.line_of(node), self.source.code_of(arg.value))
            if site[0] is None and any(other[1:] == site[1:] for other in seen):
                continue  # (a construction in a function, seen from module level without the function's locals,
                # `nn.ModuleList(blocks)`: what a scan of the function as some class's constructor calls it found)
            seen.pop((None, *site[1:]), None)
            seen[site] = ref
            # one module for every construction; `Residual(conv)`, `Residual(Attention(...))` differ: one of them,
            # which the wrapper's call lays out for each (calls.py `alternatives_call`), else unknown (call_module)
            refs = list(seen.values())
            hints[name] = refs[0] if all(_same_module(refs[0], other) for other in refs[1:]) else \
                _alternatives(list(dict.fromkeys(refs)))
        if isinstance(init.params.star_arg, cst.Param):
            self.note_star_children(class_name, init, node, env, owner)

    def elementwise_default(self, class_name, param):
        """Whether constructor parameter `param` of `class_name` defaults to an elementwise callable and every
        construction in the file leaves it so, or hands None or an elementwise callable."""
        if param.default is None or not is_elementwise_reference(self.source, param.default):
            return False
        handed = self.param_hints.get("#sites", {}).get((class_name, param.name.value), {})
        return all(code == "None" or is_elementwise_reference(self.source, cst.parse_expression(code))
                   for _, _, code in handed)

    def _replaces_class_default(self, init, name, value, env):
        """Whether `value`, handed for parameter `name` of `init`, is a name the constructor bound to a call's result
        porter cannot see (GC ViT's `norm_layer_cl = partial(get_norm_layer("layernorm"), ...)`), or a parameter
        such a name was handed to, where the parameter defaults to a module class: the class is not laid out for
        that default. Any other value porter cannot see (a parameter of a helper function handed on, an item of a
        tuple-valued parameter) is still taken to be of the default's kind, as before."""
        if not isinstance(value, cst.Name) or value.value not in env.get(BOUND_UNSEEN, ()) and \
                env.get(value.value) is not UNKNOWN_MODULE:  # (or a parameter such a name was handed to)
            return False
        default = next((p.default for p in init.params.params if p.name.value == name), None)
        return default is not None and self.class_ref(default, {}) is not None

    def handed_no_children(self, info):
        """Whether every construction of the Sequential subclass `info` hands its `*args` children parameter no
        module (known: the class has no children)."""
        init = info.find_method("__init__")
        star = init.params.star_arg if init is not None else None
        hint = self.param_hints.get(info.name, {}).get(star.name.value) if isinstance(star, cst.Param) else None
        return hint is not None and hint.kind == "list" and not hint.elements

    def note_star_children(self, class_name, init, node, env, owner):
        """The modules a construction hands the constructor's `*args` (`LambdaMap(fn, nn.Sequential(...),
        Lambda(fn))`, which __init__ hands on to nn.Sequential): the parameter's hint is every module any
        construction hands it (a list of unknown order), unknown when one hands a starred list or no module."""
        star = init.params.star_arg.name.value
        positional = len([p for p in init.params.params][1:])
        handed = [a for a in node.args if a.keyword is None]
        refs = None if any(a.star for a in handed) else tuple(self.ref_of(a.value, env, owner)
                                                               for a in handed[positional:])
        if refs is not None and any(r.kind in ("unknown", "classobj") for r in refs):
            refs = None
        seen = self.param_hints.setdefault("#star_sites", {}).setdefault((class_name, star), {})
        seen[(getattr(owner, "name", owner), self.source.line_of(node), self.source.code_of(node))] = refs
        hints = self.param_hints.setdefault(class_name, {})
        if any(r is None for r in seen.values()):
            hints[star] = UNKNOWN_MODULE
        else:
            hints[star] = ModuleRef("list", elements=tuple(dict.fromkeys(r for refs in seen.values() for r in refs)),
                                    ordered=False)

    def note_added_children(self, class_name, refs):
        """Remember the modules an owner adds to its instance of the container subclass `class_name`
        (`self.branches = Concurrent()` then `self.branches.add_module("branch1", block)`): the children that
        class's own forward iterates (`for module in self._modules.values()`), of every instance, in no known
        order; unknown when one of them is."""
        info = self.class_of(class_name)
        if info is None or not info.container_base:
            return
        added = self.param_hints.setdefault("#added_children", {})
        known = added.get(class_name, ())
        if known is None or any(r.kind == "unknown" and not r.alternatives for r in refs):
            added[class_name] = None
        else:
            added[class_name] = tuple(dict.fromkeys((*known, *refs)))

    def added_children(self, info):
        """The modules owners add to instances of the container subclass `info` (note_added_children): () when
        none, None when one is unknown."""
        return self.param_hints.get("#added_children", {}).get(info.name, ())

    def static_arguments(self, class_name, node, env=None):
        """(attribute, literal text) pairs for the literal constructor arguments of `class_name(...)` at `node` that
        its __init__ stores on self unchanged and its forward reads back (`Permute([0, 2, 3, 1])` storing
        `self.dims = dims`): what its `call` can be specialised for; () when there are none. In a factory function
        (`env` holds its literal parameters, call_literals.py) its parameters and `**kwargs` read as what its
        caller handed it."""
        info = self.class_of(class_name)
        init = info.find_method("__init__") if info is not None else None
        if init is None or info.container_base and info.find_method("forward") is None or info.layer_base or any(
                info.name in other.bases for other in self.source.classes.values()):
            return ()  # (a subclass would inherit the per-instance layouts its own call does not follow)
        stored = stored_parameters(info)
        decidable = decided_attribute_names(info)
        if not stored and not decidable:
            return ()
        names = [p.name.value for p in init.params.params][1:]
        handed, known = argument_literals(node, names, self.source.code_of, (env or {}).get(LITERALS, {}))
        functions = handed_functions(self.source)
        for position, arg in enumerate(node.args):  # `MaxViTBlock(..., partition_function=grid_partition)`
            name = parameter_of(arg, position, names) if not arg.star else None
            if name is not None and handed.get(name) is None and isinstance(arg.value, cst.Name) and \
                    arg.value.value in functions and name in stored:
                handed[name] = arg.value.value
        splat = not known
        pairs, bound = {}, {}
        for name, text in handed.items():
            if text is not None:
                bound[name] = static_value(text)
                if name in stored:
                    pairs[stored[name]] = text
        if not splat:  # what the call leaves out takes its literal default (`ChannelNorm(dim)`)
            for param in (*init.params.params, *init.params.kwonly_params):
                name = param.name.value
                if name not in handed and param.default is not None:
                    text = literal_text(self.source.code_of(param.default))
                    if text is None and isinstance(param.default, cst.Name) and param.default.value in functions \
                            and name in stored:
                        text = param.default.value  # `partition_function=window_partition`
                    if text is not None:
                        bound[name] = static_value(text)
                        if name in stored:
                            pairs[stored[name]] = text
                    elif self.source.code_of(param.default).strip() == "None":
                        bound[name] = None  # decides `if merge_type is not None:` (never a specialisation's key)
        if decidable and not splat:  # `self.has_proj = True` under `if block_type is 'proj'`: known per construction
            for attr, value in decided_attributes(init, bound, self.source.code_of).items():
                text = literal_text(repr(value))
                if attr in decidable and attr not in pairs and text is not None:
                    pairs[attr] = text
        return tuple(sorted(pairs.items()))

    def ref_of(self, node, env, owner=None):
        """ModuleRef for expression `node`, with `env` mapping local names to ModuleRefs or lists of them."""
        if self.depth > 20:
            return UNKNOWN_MODULE
        self.depth += 1
        try:
            return self._ref_of(node, env, owner)
        finally:
            self.depth -= 1

    def _ref_of(self, node, env, owner):
        if type(node) is cst.Call:  # the common case first, by exact type (isinstance on libcst's classes is an ABC
            return self._call_ref(node, env, owner)  # check); no other test below takes a Call
        if isinstance(node, cst.Name) and node.value in env:
            found = env[node.value]
            if isinstance(found, (DictKey, LocalFunction)):  # a key a loop over a dict binds, a function the
                return UNKNOWN_MODULE  # body defines: not a module
            if isinstance(found, ModuleRef):  # one module (a list marked unordered may be rebound to one in a loop)
                return found
            return _list_ref(node.value, found, env)
        if isinstance(node, cst.Name) and node.value not in env:
            built = module_level_construction(self.source, node.value)
            if built is not None:  # `self.features = resnext101_32x4d_features`, built once at module level
                return self.ref_of(built, {}, None)
        if isinstance(node, (cst.List, cst.Tuple)):
            return ModuleRef("list", elements=tuple(self._elements(node.elements, env, owner)))
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return ModuleRef("list", elements=(self.ref_of(node.elt, env, owner),), ordered=False)
        if isinstance(node, cst.DictComp):
            return ModuleRef("list", elements=(self.ref_of(node.value, env, owner),), ordered=False)
        if isinstance(node, cst.Dict):
            return ModuleRef("list", elements=tuple(self.ref_of(e.value, env, owner) for e in node.elements
                                                    if isinstance(e, cst.DictElement)))
        if isinstance(node, cst.Call):
            return self._call_ref(node, env, owner)
        if isinstance(node, cst.IfExp) and any(isinstance(b, cst.Name) and b.value == "None"
                                               for b in (node.body, node.orelse)):
            # `PEG(dim) if is_first else None`: an optional module, which callers test (`if exists(peg)`) before
            # calling it; where it is called, it is the module
            kept = node.orelse if isinstance(node.body, cst.Name) and node.body.value == "None" else node.body
            return self.ref_of(kept, env, owner)
        decided = decided_test(node.test, env) if isinstance(node, cst.IfExp) else None
        if decided is not None:
            # `norm_layer(dim) if norm_layer else nn.Identity()`, no construction handing norm_layer: the Identity
            return self.ref_of(node.body if decided else node.orelse, env, owner)
        if isinstance(node, cst.IfExp):  # `RELU6() if relu6 else nn.Activation("relu")`: as an if/else would bind
            return _one_layout_alternative([self.ref_of(node.body, env, owner), self.ref_of(node.orelse, env, owner)],
                                           self.passes_layout_through)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            found = env.get(f"self.{node.attr.value}", UNKNOWN_MODULE)
            # (`self.features = []` grown by appends, then `nn.Sequential(*self.features)`: a list of modules)
            return _list_ref(f"self.{node.attr.value}", found, env) if isinstance(found, list) else found
        if isinstance(node, cst.Attribute) and not (isinstance(node.value, cst.Name) and node.value.value in (
                "self", "nn", "torch", "F")):
            built = self.ref_of(node.value, env, owner)
            child = self.instance_attribute(built.class_name, node.attr.value) if built.kind == "class" else None
            if child is not None:  # `vgg.features` of `vgg = models.vgg11()`: what VGG's __init__ assigns there
                return child
        item = dict_item(node, env)
        if item is not None:  # `layer_dict[key]` on a turn of `for key in layer_dict.keys()`
            return item
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            part = node.slice[0].slice  # `vgg[:5]` of a container porter knows: the children it keeps
            container = self.ref_of(node.value, env, owner)
            if container.kind in ("sequential", "list"):
                return container.sliced([literal_int(b) for b in (part.lower, part.upper, part.step)])
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 and \
                isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Integer):
            held = env.get(node.value.value)  # `blocks[0]` of a local list; `head[0]` of a helper's `return vgg,
            # extras, (loc_layers, conf_layers)` unpacked (an ordered list of modules)
            items = held if isinstance(held, list) else held.elements if isinstance(held, ModuleRef) and \
                held.kind == "list" and held.ordered else None
            if items is not None:
                index = int(node.slice[0].slice.value.value)
                return items[index] if -len(items) <= index < len(items) else UNKNOWN_MODULE
        if not (isinstance(node, cst.Name) and node.value in env) and is_elementwise_reference(self.source, node):
            return ELEMENTWISE_CALLABLE  # `self.act = F.relu`, `act_fn=swish`
        return UNKNOWN_MODULE

    def layer_by_name(self, node):
        """(candidates, ModuleRef) for `getattr(nn, rnn_type)`: the torch.nn layers the file names in string
        literals that a rule covers ({"LSTM": rule, "GRU": rule}), and the module they stand for (one layout
        behaviour, else unknown); None when `node` is not such a lookup."""
        if not (isinstance(node, cst.Call) and dotted_name(node.func) == "getattr" and len(node.args) == 2):
            return None
        canonical = self.source.imports.resolve(node.args[0].value)
        if canonical not in ("torch.nn", "torch.nn.modules"):
            return None
        candidates = {name: self.module_rules[f"torch.nn.{name}"] for name in sorted(self.source.string_literals)
                      if f"torch.nn.{name}" in self.module_rules}
        if not candidates:
            return None
        refs = [ModuleRef("rule", rule=rule) for rule in candidates.values()]
        return candidates, (refs[0] if len(refs) == 1 else _one_layout_alternative(refs))

    def passes_layout_through(self, ref):
        """Whether the in-file class `ref` names is elementwise: any layout in, the same out."""
        from porter.rules.registry import load_all_rules

        return is_elementwise_class(self.source, self.module_rules, load_all_rules()[1], ref.class_name)

    def returned_class(self, function_name):
        """The class an in-file function returns (`get_same_padding_conv2d(image_size)` returning
        `Conv2dDynamicSamePadding` or `partial(Conv2dStaticSamePadding, image_size=...)`): one class, or one of
        several subclasses of the same torch layer (which the translator gives one layout: `class_alternatives`);
        None otherwise."""
        names = self.class_alternatives(function_name)
        return ModuleRef("class", class_name=names[-1]) if names else None

    def class_alternatives(self, function_name):
        """In-file classes (in return order) an in-file function returns, when every return names one (directly or
        through functools.partial) and, if several, all derive from the same torch layer; else []."""
        function = self.source.functions.get(function_name) if function_name else None
        if function is None:
            return []
        names = []
        for returned in return_values(function.body):
            ref = self.class_ref(returned, {}) if returned is not None else None
            if ref is None or ref.kind != "class":
                return []
            if ref.class_name not in names:
                names.append(ref.class_name)
        infos = [self.class_of(name) for name in names]
        if len(names) > 1 and not all(info is not None and info.layer_base and
                                      info.layer_base == infos[0].layer_base for info in infos):
            return []
        return names

    def is_partial(self, node):
        return isinstance(node, cst.Call) and bool(node.args) and not node.args[0].keyword and \
            self.source.imports.resolve(node.func) == "functools.partial"

    def class_ref(self, node, env):
        """The in-file class or rule a callee expression names (for `block(...)` where block is a parameter)."""
        by_name = self.layer_by_name(node)
        if by_name is not None:
            return by_name[1] if by_name[1].kind != "unknown" else None
        if self.is_partial(node):  # `partial(SElayer, scale_activation=nn.Hardsigmoid)` builds that class
            return self.class_ref(node.args[0].value, env)
        choices = None
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Dict):
            # a class chosen at run time: `{"lstm": rnn.LSTM, "gru": rnn.GRU}[mode]`
            choices = [e.value for e in node.value.elements if isinstance(e, cst.DictElement)]
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            # `BLOCKS_DICT[cfg[1]]` with `BLOCKS_DICT = {'BASIC': HRBasicBlock, ...}` at module level
            choices = module_level_table(self.source, node.value.value)
        elif isinstance(node, cst.IfExp):  # `nn.ReLU if a else nn.Tanh`
            choices = [node.body, node.orelse]
        if choices is not None:
            # `norm_layer if patch_norm else None`: an optional class; the receiver tests it against None
            refs = [self.class_ref(choice, env) for choice in choices
                    if not (isinstance(choice, cst.Name) and choice.value == "None")]
            if not refs or None in refs:
                return None
            chosen = _one_layout_alternative(refs)  # (one of several blocks: each laid out where it is called)
            return chosen if chosen.kind != "unknown" or chosen.alternatives else None
        name = dotted_name(node)
        if name is None:
            return None
        if name in env and isinstance(env[name], ModuleRef) and env[name].kind == "classobj":
            return env[name].elements[0]
        canonical = self.source.imports.resolve(node)
        if canonical in self.module_rules:
            return ModuleRef("rule", rule=self.module_rules[canonical])
        info = self.class_of(name)
        if info is not None:
            if info.container_base == "sequential":
                return self.sequential_class(info)
            return self.instance_ref(info)  # an alias names its class
        if name in self.source.functions and name not in env:  # `norm_act=bnrelu`: a factory function
            return self.function_built(name)
        return None

    def instance_ref(self, info):
        """What an instance of the in-file class `info` is: that class, or, for a subclass of a torch layer without
        a forward of its own (`class GroupNorm(nn.GroupNorm)` fixing the groups in __init__), the layer's rule: it
        runs the layer's call, in the layer's layouts."""
        if info.layer_base in self.module_rules and info.find_method("forward") is None:
            return ModuleRef("rule", rule=self.module_rules[info.layer_base])
        return ModuleRef("class", class_name=info.name)

    def function_built(self, name):
        """The module the in-file function `name` builds when called with only the arguments it needs (`bnrelu`
        returning a Sequential of BatchNorm and ReLU, handed as `norm_act=bnrelu` and called `norm_act(channels)`);
        None when what it returns is no module porter can see (a function computing a size)."""
        built = self.__dict__.setdefault("_function_built", {})
        if name not in built:
            built[name] = None  # (a function reaching itself builds nothing porter can see)
            if self.depth <= 10:
                self.depth += 1
                try:
                    ref = self._function_return(self.source.functions[name], cst.Call(func=cst.Name(name)), {}, None)
                finally:
                    self.depth -= 1
                built[name] = ref if ref.kind in ("rule", "class", "sequential", "list", "dict") or \
                    ref.alternatives else None
        return built[name]

    def sequential_class(self, info, arguments=None):
        """What an instance of the nn.Sequential subclass `info` is: the container of its children, or, when it has a
        forward of its own and porter knows every child (a loop over `self._modules.values()` binds one of them),
        that class, whose forward runs. With a child porter cannot see (`super().__init__(*args)`) it stays the
        container of unknown children: called through call_module, which converts at run time."""
        ref = self.sequential_subclass(info, arguments)
        if info.find_method("forward") is not None and _known_throughout(ref):
            return ModuleRef("class", class_name=info.name)
        return _own_forward(info, ref)

    def instance_attribute(self, class_name, attr):
        """The module an instance of in-file class `class_name` holds under `attr`, as its __init__ (or an in-file
        base's) assigns it from what its constructions hand it (param_hints); None when porter cannot see one."""
        found = self.__dict__.setdefault("_instance_attributes", {})
        if (class_name, attr) not in found:
            found[(class_name, attr)] = None  # (a class reaching itself: nothing seen)
            info, env = self.class_of(class_name), {}
            lineage = []
            while info is not None and len(lineage) < 8:
                lineage.insert(0, info)
                info = self.class_of(info.bases[0]) if info.bases else None
            if self.depth <= 10:
                self.depth += 1
                try:
                    for each in lineage:
                        init = each.methods.get("__init__")
                        if init is not None:  # (the modules its constructions hand it: `VGG(make_layers(cfg))`)
                            env.update((p.name.value, self.param_hints[each.name][p.name.value])
                                       for p in (*init.params.params, *init.params.kwonly_params)
                                       if p.name.value in self.param_hints.get(each.name, {}))
                            self.scan_body(init.body, env, each)
                finally:
                    self.depth -= 1
            ref = env.get(f"self.{attr}")
            found[(class_name, attr)] = ref if isinstance(ref, ModuleRef) and ref.kind != "unknown" else None
        return found[(class_name, attr)]

    def sequential_subclass(self, info, arguments=None):
        """A class deriving from nn.Sequential (or nn.ModuleList / nn.ModuleDict: a container of that kind): its
        children are what its __init__ hands to super().__init__ (or, for a subclass of such an in-file class, what
        the base builds from the arguments handed to it). `arguments`: parameter -> ModuleRef known from the caller
        (a subclass's super().__init__ call)."""
        init = info.methods.get("__init__")
        if init is None or self.depth > 10:
            base = self.class_of(info.bases[0]) if info.bases else None
            if init is None and base is not None and self.depth <= 10:  # (its constructions fill the base's
                return self.sequential_subclass(base, {**self.param_hints.get(info.name, {}), **(arguments or {})})
            return ModuleRef("sequential", elements=(), ordered=False)
        env = {}
        star = [init.params.star_arg] if isinstance(init.params.star_arg, cst.Param) else []
        for param in (*init.params.params, *star, *init.params.kwonly_params):  # `conv_layer=nn.Conv2d` defaults
            hint = (arguments or {}).get(param.name.value) or self.param_hints.get(info.name, {}).get(
                param.name.value)
            cls = self.class_ref(param.default, {}) if param.default is not None else None
            if hint is not None:
                env[param.name.value] = hint
            elif cls is not None:
                env[param.name.value] = ModuleRef("classobj", elements=(cls,))
        self.depth += 1
        try:
            self.scan_body(init.body, env, info)
            for statement in _statements(init.body):
                call = statement.value if isinstance(statement, cst.Expr) else None
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                        call.func.attr.value == "__init__" and isinstance(call.func.value, cst.Call):
                    base = self.class_of(info.bases[0]) if info.bases else None
                    if base is not None:  # `super().__init__(cin, cout, ..., norm_layer, torch.nn.Conv2d)`
                        return self.sequential_subclass(base, self._bound_arguments(base, call, env, info))
                    kind = info.container_base if info.container_base in ("list", "dict") else "sequential"
                    fake = call.with_changes(func=cst.parse_expression(
                        {"list": "torch.nn.ModuleList", "dict": "torch.nn.ModuleDict"}.get(kind, "torch.nn.Sequential")))
                    ref = self._container(fake, kind, env, info)
                    added = tuple(env.get("#children", ()))  # self.add_module(name, block) after super().__init__()
                    ordered = ref.ordered and "#children" not in env.get("#unordered", ())
                    return ModuleRef("sequential", elements=ref.elements + added, ordered=ordered,
                                     lead=0 if ordered else _lead_of(ref))
        finally:
            self.depth -= 1
        # `self.add_module(name, layer)` appends in order, but not in a loop porter does not run turn by turn
        ordered = "#children" not in env.get("#unordered", ())
        return ModuleRef("sequential", elements=tuple(env.get("#children", ())), ordered=ordered,
                         lead=0 if ordered else env.get("#lead", {}).get("#children", 0))

    @staticmethod
    def _register_child(env, name, ref, in_loop):
        """`self.conv = nn.Conv2d(...)` in an nn.Sequential subclass's __init__ (timm's ConvNorm: conv, then bn):
        torch registers it as the next child, run in turn by Sequential's forward; assigned again, it keeps its
        place."""
        names = env.setdefault("#child_names", [])
        children = env.setdefault("#children", [])
        if name in names and len(names) == len(children):
            children[names.index(name)] = ref
            return
        if in_loop:
            _mark_unordered(env, "#children", len(children))
        names.append(name)
        children.append(ref)

    def _bound_arguments(self, info, call, env, owner):
        """parameter -> ModuleRef for the module-valued arguments of a call of `info`'s __init__."""
        init = info.methods.get("__init__")
        names = [p.name.value for p in init.params.params][1:] if init is not None else []
        bound = {}
        for position, arg in enumerate(call.args):
            name = parameter_of(arg, position, names)
            if name is None:
                continue
            ref = self.ref_of(arg.value, env, owner)
            if ref.kind == "unknown":
                cls = self.class_ref(arg.value, env)
                ref = ModuleRef("classobj", elements=(cls,)) if cls is not None else ref
            if ref.kind != "unknown":
                bound[name] = ref
        return bound

    def _call_ref(self, node, env, owner):
        canonical = self.source.imports.resolve(node.func)
        if canonical in CONTAINERS or dotted_name(node.func) == "torch.nn.Sequential":
            return self._container(node, CONTAINERS.get(canonical, "sequential"), env, owner)
        return self._non_container_call(node, env, owner)

    def _container(self, node, kind, env, owner):
        if True:
            elements, ordered, lead = [], True, 0

            def extend(inner):  # children of unknown order after known ones: the known ones still lead
                nonlocal ordered, lead
                if ordered and not inner.ordered:
                    lead = len(elements) + inner.lead
                elements.extend(inner.elements)
                ordered = ordered and inner.ordered

            gluon = is_gluon(self.source.imports.resolve(node.func))
            for arg in node.args:
                if arg.keyword is not None or gluon:  # Gluon's `HybridSequential(prefix="")`, `('stem_')`: an
                    continue  # option, not a child (a Gluon container starts empty and is filled by add)
                if arg.star == "*":
                    inner = self.ref_of(arg.value, env, owner)
                    if inner.kind == "unknown":  # children porter could not follow: not an empty Sequential
                        elements.append(inner)
                    extend(inner)
                elif kind == "sequential" and _is_ordered_dict(arg.value, self.source):
                    pairs = dotted_name(arg.value.args[0].value) if arg.value.args else None
                    # `OrderedDict(layers)`, layers grown in a branch or a loop: their order is not known
                    extend(ModuleRef("list", elements=tuple(self._ordered_dict_elements(arg.value, env, owner)),
                                     ordered=pairs not in env.get("#unordered", ()),
                                     lead=env.get("#lead", {}).get(pairs, 0)))
                else:
                    inner = self.ref_of(arg.value, env, owner)
                    if kind == "sequential" and isinstance(arg.value, cst.Name) and arg.value.value in env and \
                            isinstance(env[arg.value.value], list):
                        extend(inner)  # Sequential(layers_dict) / Sequential(list) of children
                    elif kind == "sequential":
                        elements.append(inner)
                    else:
                        extend(inner)
            return ModuleRef(kind, elements=tuple(elements), ordered=ordered, lead=0 if ordered else lead)

    def _non_container_call(self, node, env, owner):
        if dotted_name(node.func) == "getattr" and is_elementwise_reference(self.source, node):
            return ELEMENTWISE_CALLABLE  # `getattr(F, act)` of activations the file names
        local = env.get(node.func.value) if isinstance(node.func, cst.Name) else None
        if isinstance(local, LocalFunction):  # `resnet_block(64, 2)`, defined in the body building the model
            return self._callable_return(local.definition, [p.name.value for p in local.definition.params.params],
                                         node, env, owner, closure=True)
        if isinstance(node.func, cst.Name) and node.func.value in self.source.functions and \
                node.func.value not in env:  # an in-file function builds with the call's own arguments
            ref = self._function_return(self.source.functions[node.func.value], node, env, owner)
            if ref == UNKNOWN_MODULE and returns_elementwise_callable(
                    self.source, node, owner.find_method("__init__") if owner is not None else None):
                return ELEMENTWISE_CALLABLE  # timm's `get_act_fn(act_type)`: an activation from a registry
            return ref
        target = self.class_ref(node.func, env)
        info = self.class_of(dotted_name(node.func)) if target is not None and target.kind == "sequential" and \
            dotted_name(node.func) is not None else None
        if info is not None and info.container_base == "sequential":
            # `AnyStage(..., block_type, ...)`: the children its __init__ builds from what this call hands it
            ref = self.sequential_class(info, self._bound_arguments(info, node, env, owner))
            if ref.kind != "class":
                return ref
            target = ref
        if target is None and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
            owner_info = self.class_of(node.func.value.value) if node.func.value.value not in env else None
            method = owner_info.find_method(node.func.attr.value) if owner_info is not None else None
            if method is not None and _returns_its_class(method):  # `EfficientNet.from_name("efficientnet-b0")`
                return self.instance_ref(owner_info)
        if target is None and isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) != "self":
            alternatives = config_block_classes(self.source, self.class_of).get(node.func.attr.value)
            if alternatives:  # `cnf.block(cnf, ...)`: a block class a config object carries (MBConv, FusedMBConv)
                for name in alternatives:
                    self.note_constructor_args(name, node, env, owner)
                target = ModuleRef("class", class_name=alternatives[0])
                return target
        if target is not None and target.kind == "unknown":  # a block class chosen at run time (`BLOCKS[name](...)`)
            for alternative in target.alternatives:
                if alternative.kind == "class":
                    self.note_constructor_args(alternative.class_name, node, env, owner)
            return target
        if target is not None:
            if target.kind == "rule" and target.rule.variant is not None:  # `nn.LayerNorm(axis=1)`: its arguments pick
                target = ModuleRef("rule", rule=module_rule_for_call(target.rule, node))
            if target.kind == "class":
                self.note_constructor_args(target.class_name, node, env, owner)
                static = self.static_arguments(target.class_name, node, env)
                # (every construction's literal values, in the order met: constructed_without reads them)
                self.param_hints.setdefault(CONSTRUCTION_STATICS, {}).setdefault(target.class_name, {})[static] = None
                if static:
                    target = replace(target, static=static)
            return target
        if isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == "self" and owner is not None:
            return self._method_return(owner, node.func.attr.value, node, env)
        if isinstance(node.func, cst.Name) and node.func.value in self.source.functions:
            return self._function_return(self.source.functions[node.func.value], node, env, owner)
        if node.args and self._copies_modules(node.func, env):
            return self.ref_of(node.args[0].value, env, owner)
        if node.args and self.hands_back_its_module(node.func):  # `weight_norm(nn.Conv1d(...))`: that layer
            return self.ref_of(node.args[0].value, env, owner)
        return UNKNOWN_MODULE

    def _copies_modules(self, node, env):
        """Whether `node` names `copy.deepcopy` / `copy.copy`, or a local alias of them (`c = copy.deepcopy`)."""
        name = dotted_name(node)
        if name is None:
            return False
        return self.source.imports.resolve(node) in ("copy.deepcopy", "copy.copy") or \
            name in env.get(COPY_ALIASES, ())

    def hands_back_its_module(self, func):
        """Whether `func` is a function rule that returns the layer it is given (reparametrized in place)."""
        from porter.rules.registry import load_all_rules

        rule = load_all_rules()[1].get(self.source.imports.resolve(func))
        return rule is not None and rule.extra.get("returns_module_argument", False)

    def _elements(self, elements, env, owner):
        refs = []
        for element in elements:
            inner = self.ref_of(element.value, env, owner)
            if inner.kind == "unknown" and not isinstance(element, cst.StarredElement):
                cls = self.class_ref(element.value, env)  # `[BasicConv2d, Inception]`: block classes
                inner = ModuleRef("classobj", elements=(cls,)) if cls is not None else inner
            if isinstance(element, cst.StarredElement):
                refs.extend(inner.elements)
            else:
                refs.append(inner)
        return refs

    def _ordered_dict_elements(self, node, env, owner):
        """The modules of `OrderedDict([(name, module), ...])` or `OrderedDict(pairs)` with `pairs` a list the
        scan followed; a child porter cannot see makes the container unknown (converted at run time)."""
        refs = []
        if node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            for item in node.args[0].value.elements:
                if isinstance(item.value, cst.Tuple) and len(item.value.elements) == 2:
                    refs.append(self.ref_of(item.value.elements[1].value, env, owner))
        elif node.args and isinstance(env.get(dotted_name(node.args[0].value)), list):
            for ref in env[dotted_name(node.args[0].value)]:
                refs.append(_pair_module(ref))
        elif node.args and (isinstance(node.args[0].value, cst.Call) or isinstance(
                env.get(dotted_name(node.args[0].value)), ModuleRef)):
            # `OrderedDict(conv3x3(cin, cout, name, i))`, a helper returning `[(name, module), ...]`, or a local list
            # of such pairs (VoVNet's `stem = conv3x3(...)`, `stem += conv3x3(...)`, `OrderedDict(stem)`)
            pairs = self.ref_of(node.args[0].value, env, owner)
            if pairs.kind != "list" or not pairs.ordered or not pairs.elements:
                return [UNKNOWN_MODULE]
            refs.extend(_pair_module(ref) for ref in pairs.elements)
        elif node.args:
            refs.append(UNKNOWN_MODULE)
        return refs

    def _function_return(self, function, call, env, owner):
        return self._callable_return(function, [p.name.value for p in function.params.params], call, env, owner)

    def _method_return(self, owner, name, call, env):
        method = owner.find_method(name)
        if method is None:
            return UNKNOWN_MODULE
        return self._callable_return(method, [p.name.value for p in method.params.params][1:], call, env, owner)

    def _callable_return(self, method, params, call, env, owner, closure=False):
        """What `method` returns when `call` calls it; `closure`: a function defined in the body being scanned,
        which reads that body's names too."""
        local = {key: value for key, value in env.items()
                 if key.startswith("self.") or closure and not key.startswith("#")}
        for param in params:  # (a parameter shadows the name it shares with the enclosing body)
            local.pop(param, None)
        # the literals the call hands (`return_preact=True` through a factory's `**kwargs`): the blocks it builds
        local[LITERALS] = call_literals(method, call, self.source.code_of, env.get(LITERALS, {}))
        for param, arg in zip(params, [a for a in call.args if not a.keyword]):
            self._bind_handed(local, param, arg.value, env, owner)
        given = set(params[:len([a for a in call.args if not a.keyword])])
        for arg in call.args:
            if arg.keyword is not None:
                given.add(arg.keyword.value)
                self._bind_handed(local, arg.keyword.value, arg.value, env, owner)
        for param in method.params.params:  # `norm_layer=BatchNorm` the call leaves out: the default class builds
            default = self.class_ref(param.default, {}) if param.default is not None and \
                param.name.value in params and param.name.value not in given else None
            if default is not None:
                local[param.name.value] = ModuleRef("classobj", elements=(default,))
        handed_none = {arg.keyword.value for arg in call.args if arg.keyword is not None and
                       dotted_name(arg.value) == "None"}  # (`act=None`)
        left_none = tuple(sorted(p.name.value for p in method.params.params if p.name.value in params and (
            p.name.value not in given and dotted_name(p.default) == "None" or p.name.value in handed_none)))
        local[HANDED] = tuple(sorted(given - set(handed_none)))  # (what this call hands: a module class handed
        # is never None in its body, where a constructor's hints may merge constructions that hand None)
        if left_none and not any(a.star for a in call.args):  # (`def conv(cin, cout, act=None)` called without
            # `act`, or with `act=None`: `if act is not None:` never runs; a starred argument may hand it)
            local[UNHANDED] = left_none
        # the same function reached again with what it was handed before returns what it returned (MONAI's DynUNet:
        # helpers calling helpers on every branch were scanned anew at each call, exponentially in their depth)
        key = (id(method), id(owner), repr(sorted(local.items(), key=lambda item: item[0])))
        if key not in self.returns_seen:
            self.returns_seen[key] = self._scanned_return(method, local, owner)
        return self.returns_seen[key]

    def _scanned_return(self, method, local, owner):
        self.scan_body(method.body, local, owner)
        # `return None` for a configuration without the module (HRNet's fuse layers of one branch): an optional
        # module, which callers test before calling; the module is what the other returns build
        returned = [r for r in return_values(method.body) if not (isinstance(r, cst.Name) and r.value == "None")]
        # a factory returning one module or another (timm's `create_conv2d_pad`: its `Conv2dSame` subclass for
        # "same" padding, else `nn.Conv2d`): alternatives, as an if/else binding them is, not the first one; where
        # a return is no module porter knows (timm's `create_act_layer` tries `act_layer(inplace=...)`, then
        # `act_layer(**kwargs)`), the first return stands for them when it is no better known
        refs = list(dict.fromkeys(self.ref_of(r, local, owner) for r in returned))
        if len(refs) > 1 and all(ref.kind in ("class", "rule", "sequential") for ref in refs):
            return _one_layout_alternative(refs, self.passes_layout_through)
        if len(refs) > 1 and refs[0].kind != "unknown" and UNKNOWN_MODULE in refs:
            # a known module or one porter cannot see (timm's `create_aa`: `noop()` when disabled, else the
            # anti-aliasing layer handed in, a BlurPool2d of torch's layout): unknown, which `call_module` runs
            return UNKNOWN_MODULE
        return refs[0] if refs else UNKNOWN_MODULE

    def _bind_handed(self, local, param, node, env, owner):
        """What a call hands parameter `param` of a function that builds from it: a block class (`_make_layer(
        Bottleneck, ...)`), or a list of layers (ssd.pytorch's `multibox(vgg(base, 3), add_extras(extras, 1024),
        ...)` returning them beside its heads); anything else leaves the parameter unknown."""
        bound = self.class_ref(node, env)
        if bound is not None:
            local[param] = ModuleRef("classobj", elements=(bound,))
            return
        if not isinstance(node, (cst.Call, cst.Name, cst.List)):
            return
        ref = self.ref_of(node, env, owner)
        if isinstance(ref, ModuleRef) and ref.kind in ("list", "sequential") and ref.elements:
            local[param] = list(ref.elements) if ref.kind == "list" else ref
        elif isinstance(ref, ModuleRef) and ref.kind in ("class", "rule"):
            local[param] = ref  # a layer handed to be copied (the Annotated Transformer's `clones(layer, N)`)

    def scan_body(self, body, env, owner):
        """Abstractly run `__init__`-style statements: record module-valued locals and lists of modules."""
        for statement in _statements(body):
            self._scan_statement(statement, env, owner, in_loop=False)

    def _scan_closure_call(self, function, env, owner, in_loop):
        """A call, as a statement, of a function defined in the body (crnn.pytorch's `convRelu(i)` adding layers
        to the enclosing `cnn = nn.Sequential()`): its body runs on the enclosing names, its parameters unknown
        (restored after: the closure's own names do not outlive the call)."""
        params = [p.name.value for p in (*function.params.params, *function.params.kwonly_params)]
        shadowed = {name: env.pop(name) for name in params if name in env}
        try:
            self.scan_function_body(function, env, owner, in_loop)
        finally:
            for name in params:
                env.pop(name, None)
            env.update(shadowed)

    def scan_function_body(self, function, env, owner, in_loop):
        """Scan the statements of a function a constructor calls (ten calls deep at most: a helper calling
        itself stops there)."""
        if self.depth > 10:
            return
        self.depth += 1
        try:
            for statement in _statements(function.body):
                self._scan_statement(statement, env, owner, in_loop)
        finally:
            self.depth -= 1

    def _scan_helper_call(self, function, call, env, owner, in_loop):
        _helper_scanned(self, function, call, env, owner, in_loop)

    def _scan_branches(self, statement, env, owner):
        """`if ... else ...`: each branch is scanned from the same start; a name the branches bind to different
        modules (`self.branch1 = nn.Sequential(...)` / `nn.Sequential()`) is unknown, decided at run time."""
        branches, node = [], statement
        while node is not None:
            branches.append(node.body)
            node = getattr(node, "orelse", None)
        before = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
                  for k, v in env.items()}
        outcomes = []
        for body in branches:
            scope = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
                     for k, v in before.items() if k != REBOUND_UNKNOWN}
            scope[REBOUND_UNKNOWN] = set()
            for inner in _statements(body):
                self._scan_statement(inner, scope, owner, in_loop=True)
            scope.update((name, UNKNOWN_MODULE) for name in scope.pop(REBOUND_UNKNOWN))
            outcomes.append(scope)
        if not isinstance(_last_orelse(statement), cst.Else):
            outcomes.append(before)  # no else: the names may keep what they had
        for name in sorted({k for scope in outcomes for k in scope}):
            assigned = [scope[name] for scope in outcomes if scope.get(name) is not None]
            if all(v == assigned[0] for v in assigned):
                env[name] = assigned[-1]
            elif all(isinstance(v, set) for v in assigned):
                env[name] = set().union(*assigned)
            elif name == LITERALS:  # what every path binds alike (a dict written on one path only: unknown after)
                env[name] = {k: v for k, v in assigned[0].items() if all(o.get(k, not v) == v for o in assigned)}
            elif all(isinstance(v, dict) for v in assigned):  # "#lead": the fewest children known to lead
                env[name] = {k: min(v[k] for v in assigned if k in v) for v in assigned for k in v}
            elif all(isinstance(v, list) for v in assigned):
                # a list grown in some branches: what they all start it with, then what any of them adds (a
                # make_layers loop appending a pool in one branch and a block in the other holds both), unordered
                env[name] = _branches_grown(assigned)
                if not name.startswith("#") or name == "#children" and len({len(v) for v in assigned}) > 1:
                    _mark_unordered(env, name, _common_prefix(assigned))  # what every branch starts it with leads
            elif _grown_container(assigned):  # a container some branches added children to: the longest, unordered
                longest = max(assigned, key=lambda ref: len(ref.elements))
                # Gluon's `if ...: out.add(block)` appends in program order: the blocks a branch may skip
                ordered = longest.ordered and self.source.framework == "mxnet"
                env[name] = ModuleRef(longest.kind, elements=longest.elements, ordered=ordered)
            elif _branch_appended(assigned):  # each branch appended its own child (HRNet's transition: a conv
                # Sequential, an Identity or a stack of strided convs): one child that is one of them
                env[name] = _branch_appended(assigned)
            else:
                env[name] = _one_layout_alternative(assigned, self.passes_layout_through)

    def _scan_statement(self, statement, env, owner, in_loop):
        # exact types (libcst's node classes are final): isinstance on them is an ABC check, and most fail here
        if type(statement) is cst.AnnAssign and statement.value is not None:  # `layers: List[nn.Module] = []`
            statement = cst.Assign(targets=[cst.AssignTarget(statement.target)], value=statement.value)
        if type(statement) is cst.Expr and type(statement.value) is cst.Tuple and all(
                type(e.value) is cst.Call for e in statement.value.elements):
            for element in statement.value.elements:  # `self.add_module('norm1', norm),` (a stray comma: a tuple)
                self._scan_statement(statement.with_changes(value=element.value), env, owner, in_loop)
            return
        kind = type(statement)
        if kind is cst.FunctionDef:  # a helper defined in the body (d2l's `resnet_block` inside `resnet18`)
            env[statement.name.value] = LocalFunction(statement)
            return
        if kind is cst.If:
            decided = decided_test(statement.test, env, _handed_modules(env))
            if decided is not None:  # `if norm_layer is not None:`, no construction handing norm_layer
                taken = statement.body if decided else statement.orelse
                if isinstance(taken, cst.If):
                    self._scan_statement(taken, env, owner, in_loop)
                elif taken is not None:
                    for inner in _statements(taken.body):
                        self._scan_statement(inner, env, owner, in_loop)
                return
            self._scan_branches(statement, env, owner)
            return
        if kind is cst.For and self._scan_turns(statement, env, owner, in_loop):
            return
        if kind in _SCANNED_BLOCKS:
            for inner in _statements(statement.body):
                self._scan_statement(inner, env, owner, in_loop=True)
            orelse = getattr(statement, "orelse", None)
            while orelse is not None:
                for inner in _statements(orelse.body):
                    self._scan_statement(inner, env, owner, in_loop=True)
                orelse = getattr(orelse, "orelse", None)
            return
        if kind not in _SCANNED_STATEMENTS:
            return  # nothing below reads another statement
        if kind is cst.Assign and len(statement.targets) == 1 and isinstance(
                statement.targets[0].target, cst.Subscript):
            holder = dotted_name(statement.targets[0].target.value)
            if holder == "self" and owner is not None:  # `self["down"] = block` in a ModuleDict subclass
                holder = "#children"  # a child, as `self.add_module("down", block)` adds one
                env.setdefault(holder, [])
            if holder in env and isinstance(env[holder], list):  # layers["conv1"] = nn.Conv2d(...)
                if in_loop:
                    _mark_unordered(env, holder, len(env[holder]))
                env[holder].append(self.ref_of(statement.value, env, owner))
            elif holder in env and isinstance(env[holder], ModuleRef) and env[holder].kind == "dict":
                # `self.stages[f"stage{i}"] = Stage(...)` into an nn.ModuleDict: a child, as add_module adds one
                current = env[holder]
                env[holder] = ModuleRef("dict", elements=current.elements + (self.ref_of(statement.value, env, owner),),
                                        ordered=current.ordered and not in_loop,
                                        lead=len(current.elements) if current.ordered and in_loop else
                                        _lead_of(current))
            return
        if isinstance(statement, cst.Assign) and isinstance(statement.value, (cst.Call, cst.Dict)) and (
                _is_ordered_dict(statement.value, self.source) or isinstance(statement.value, cst.Dict)):
            source = dotted_name(statement.value.args[0].value) if isinstance(statement.value, cst.Call) and \
                statement.value.args else None
            for target in statement.targets:
                name = _target_name(target.target)
                if name is not None and not name.startswith("self."):
                    env[name] = self._ordered_dict_elements(statement.value, env, owner) if isinstance(
                        statement.value, cst.Call) else [self.ref_of(e.value, env, owner)
                                                         for e in statement.value.elements
                                                         if isinstance(e, cst.DictElement)]
                    env.setdefault("#dicts", set()).add(name)  # a loop over it binds its keys
                    if isinstance(statement.value, cst.Dict):  # `dd = {'device': device, ...}`, handed as `**dd`
                        env[LITERALS] = {**env.get(LITERALS, {}),
                                         FORWARDED + name: _dict_literals(statement.value, self.source.code_of)}
                    if source in env.get("#unordered", ()):  # `OrderedDict(blocks)`, blocks appended in a loop
                        _mark_unordered(env, name, env.get("#lead", {}).get(source, 0))
            return
        if isinstance(statement, cst.Assign) and self._copies_modules(statement.value, env):
            for target in statement.targets:  # `c = copy.deepcopy` (the Annotated Transformer): `c(attn)` copies
                if isinstance(target.target, cst.Name):
                    env.setdefault(COPY_ALIASES, set()).add(target.target.value)
            return
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0].target, cst.Name) and name_pattern(statement.value) is not None:
            env[LOCAL_PATTERN + statement.targets[0].target.value] = name_pattern(statement.value)  # (a name string)
            return
        if isinstance(statement, cst.Assign):
            value = self.ref_of(statement.value, env, owner)
            for target in statement.targets:
                name = _target_name(target.target)
                if owner is not None and owner.container_base == "sequential" and name is not None and \
                        name.startswith("self.") and "." not in name[5:] and isinstance(statement.value, cst.Call) \
                        and value.kind in MODULE_KINDS:
                    self._register_child(env, name[5:], value, in_loop)
                if isinstance(target.target, (cst.Tuple, cst.List)) and value.kind == "list" and \
                        len(value.elements) == len(target.target.elements):
                    # `self.incre, self.down, self.final = self._make_head(...)`: a helper returning several modules
                    written = statement.value.elements if isinstance(statement.value, (cst.Tuple, cst.List)) else \
                        [None] * len(value.elements)
                    for element, ref, item in zip(target.target.elements, value.elements, written):
                        inner = _target_name(element.value)
                        cls = self.class_ref(item.value, env) if item is not None and not isinstance(
                            item.value, cst.Call) else None
                        if inner is not None and cls is not None:  # `conv_nd, bn = nn.Conv2d, nn.BatchNorm2d`
                            env[inner] = ModuleRef("classobj", elements=(cls,))
                        elif inner is not None and (ref.kind != "unknown" or ref.alternatives):
                            env[inner] = ref
                    continue
                if name is None:
                    continue
                env.get("#dicts", set()).discard(name)  # (rebound: no longer the dict a loop would read keys of)
                if isinstance(statement.value, (cst.List, cst.Tuple)) and value.kind == "list":
                    env[name] = list(value.elements)
                elif isinstance(statement.value, (cst.BinaryOperation, cst.Subscript)) and value.kind == "unknown" \
                        and list_expression(statement.value, env, lambda n: self.ref_of(n, env, owner)) is not None:
                    # `layers = layers[0:2] + [("dropout", dropout())] + layers[2:]`
                    env[name] = list_expression(statement.value, env, lambda n: self.ref_of(n, env, owner))
                elif value.kind != "unknown" or value.alternatives:
                    env[name] = value
                    if name.startswith("self.") and value.kind == "sequential":
                        # `self.path = nn.Sequential(OrderedDict([('pad', ...), ...]))`: `self.path.pad(x)`
                        env.update({f"{name}.{child}": ref for child, ref in _named_children(statement.value, value)})
                else:
                    hint = self.class_ref(statement.value, env) if not isinstance(statement.value, cst.Call) or \
                        self.is_partial(statement.value) else None
                    if hint is None and isinstance(statement.value, cst.Call):
                        hint = self.returned_class(dotted_name(statement.value.func))
                    if hint is not None:
                        env[name] = ModuleRef("classobj", elements=(hint,))
                    elif not (isinstance(statement.value, cst.Name) and statement.value.value == "None"):
                        # rebound to what porter cannot see (`_NORM_TO_NORM_ACT_MAP.get(name)`): a branch doing so
                        # makes the name unknown after the if (_scan_branches), not what another branch bound
                        env.get(REBOUND_UNKNOWN, set()).add(name)
                        if isinstance(statement.value, cst.Call):  # `norm_layer_cl = partial(get_norm_layer(...))`
                            env.setdefault(BOUND_UNSEEN, set()).add(name)
                        continue
                if isinstance(env.get(REBOUND_UNKNOWN), set):
                    env[REBOUND_UNKNOWN].discard(name)
                env.get(BOUND_UNSEEN, set()).discard(name)
        elif isinstance(statement, cst.AugAssign) and isinstance(statement.operator, cst.AddAssign):
            name = _target_name(statement.target)
            if name is not None and isinstance(env.get(name), list):
                if in_loop:
                    _mark_unordered(env, name, len(env[name]))
                env[name].extend(self.ref_of(statement.value, env, owner).elements)
            elif name is not None and isinstance(env.get(name), ModuleRef) and env[name].kind in ("list",
                                                                                                  "sequential"):
                current, added = env[name], self.ref_of(statement.value, env, owner)  # `self.layers += [...]`
                ordered = current.ordered and added.ordered and not in_loop
                env[name] = ModuleRef(current.kind, elements=current.elements + added.elements, ordered=ordered,
                                      lead=0 if ordered else _lead_of(current))
        elif isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) and isinstance(
                statement.value.func, cst.Attribute) and statement.value.func.attr.value == "__init__" and isinstance(
                statement.value.func.value, cst.Call) and owner is not None and owner.bases:
            self.note_constructor_args(owner.bases[0], statement.value, env, owner)  # super().__init__(Block, ...)
        elif isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
            call = statement.value
            if isinstance(call.func, cst.Name) and call.func.value == "setattr" and len(call.args) == 3 and \
                    dotted_name(call.args[0].value) == "self":
                ref = self.ref_of(call.args[2].value, env, owner)
                if isinstance(call.args[1].value, cst.SimpleString):
                    env["self." + call.args[1].value.evaluated_value] = ref
                elif ref.kind != "unknown":  # setattr(self, name, nn.Sequential(*seq)) in a loop over names
                    env.setdefault("#setattr", []).append(ref)
                    pattern = _pattern_of(call.args[1].value, env)  # `setattr(self, f"patch_embed{i + 1}", ...)`: what
                    if pattern is not None:  # `getattr(self, f"patch_embed{i + 1}")` reads (attribute_by_pattern)
                        env.setdefault(SET_BY_PATTERN + pattern, []).append(ref)
                return
            if isinstance(call.func, cst.Name) and isinstance(env.get(call.func.value), LocalFunction):
                self._scan_closure_call(env[call.func.value].definition, env, owner, in_loop)
                return
            if isinstance(call.func, cst.Name) and call.func.value in self.source.functions:
                self._scan_helper_call(self.source.functions[call.func.value], call, env, owner, in_loop)
                return
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "extend", "add_module",
                                                                                 "add"):
                holder = dotted_name(call.func.value)
                args = [a.value for a in call.args]
                if call.func.attr.value == "append" and holder is not None and holder.startswith("self.") and \
                        len(args) == 1 and _pattern_of(args[0], env) is not None:
                    # `self.stage_names.append(name)`: a list of attribute names of that pattern, which a loop in
                    # forward hands to `getattr(self, name)` (attribute_by_pattern)
                    env[NAMES_OF_PATTERN + holder[5:]] = _pattern_of(args[0], env)
                    return
                if call.func.attr.value == "add_module" and holder == "self" and len(args) == 2:
                    ref = self.ref_of(args[1], env, owner)
                    if isinstance(args[0], cst.SimpleString):
                        env["self." + args[0].evaluated_value] = ref
                    elif ref.kind != "unknown" and _pattern_of(args[0], env) is not None:
                        # `self.add_module(name, _OSA_stage(...))` with `name = "stage%d" % (i + 2)`: what
                        # `self.stage2` and `getattr(self, name)` read (attribute_by_pattern)
                        env.setdefault(SET_BY_PATTERN + _pattern_of(args[0], env), []).append(ref)
                    if in_loop:
                        _mark_unordered(env, "#children", len(env.get("#children", ())))
                    env.setdefault("#children", []).append(ref)  # for containers that iterate over themselves
                    return
                if holder in env and isinstance(env[holder], list) and args:
                    if in_loop:
                        _mark_unordered(env, holder, len(env[holder]))
                    item = args[0]
                    if isinstance(item, cst.Tuple) and len(item.elements) == 2:  # blocks.append((name, block))
                        item = item.elements[1].value  # for OrderedDict(blocks)
                    ref = self.ref_of(item, env, owner)
                    if call.func.attr.value == "append":
                        env[holder].append(ref)
                    else:
                        env[holder].extend(ref.elements)
                elif holder in env and isinstance(env[holder], ModuleRef) and env[holder].kind == "unknown" and \
                        env[holder].alternatives and call.func.attr.value == "add_module" and len(args) == 2:
                    # `stage = DualPathSequential() if k < 0 else nn.Sequential()`, then `stage.add_module(...)`:
                    # each container it may be gets the child
                    env[holder] = self._added_to_each(env[holder], self.ref_of(args[-1], env, owner))
                elif holder in env and isinstance(env[holder], ModuleRef) and env[holder].kind != "rule" and args:
                    current = env[holder]  # self.features.add_module(name, block) / blocks.append(block)
                    method = call.func.attr.value
                    if method == "add":  # Gluon's Sequential.add(a, b, c) appends its blocks in order
                        extra = self._added_blocks(call, env, owner)
                        # in program order: a loop repeats its blocks in place (a stage, a dense block), so the
                        # first and last blocks, which decide the layouts in and out, stay known
                        ordered = current.ordered
                    else:
                        ref = self.ref_of(args[-1] if method == "add_module" else args[0], env, owner)
                        # `add_module(name, block)` appends (in a loop run turn by turn too: in order)
                        extra = ref.elements if method == "extend" else (ref,)
                        ordered = method == "add_module" and current.ordered and not in_loop
                        if method == "add_module" and len(args) == 2 and isinstance(args[0], cst.SimpleString):
                            env[f"{holder}.{args[0].evaluated_value}"] = ref  # `self.path.pad(x)` reads it back
                        if method == "add_module" and current.kind == "class":
                            # a container subclass with a forward of its own: its children are its class's
                            self.note_added_children(current.class_name, (ref,))
                            return  # (the owner keeps its class ref)
                    env[holder] = ModuleRef(current.kind, elements=current.elements + extra, ordered=ordered,
                                            lead=0 if ordered else _lead_of(current))

    def _added_to_each(self, current, ref):
        """`current` (one of several containers) with child `ref` added to each of them: a container subclass
        with a forward of its own notes it as its class's child; a Sequential grows by it (in no known order)."""
        grown = []
        for alternative in current.alternatives:
            if alternative.kind == "class":
                self.note_added_children(alternative.class_name, (ref,))
                grown.append(alternative)
            elif alternative.kind in ("sequential", "list"):
                grown.append(replace(alternative, elements=alternative.elements + (ref,), ordered=False))
            else:
                return UNKNOWN_MODULE
        return replace(current, alternatives=tuple(grown))

    def _scan_turns(self, statement, env, owner, in_loop):
        """Runs a `for` over a local list or dict of modules once per module (`for key in layer_dict.keys():
        self.convs.add(layer_dict[key])`), the loop's names bound to that turn's key or module; False (nothing
        scanned) when porter cannot tell what each turn binds."""
        found = loop_turns(statement, lambda node: self._iterated_items(node, env, owner))
        if found is None:
            return False
        turns, ordered = found
        names = target_names(statement.target)
        before = {name: env[name] for name in names if name in env}
        containers = {name: ref for name, ref in env.items() if isinstance(ref, ModuleRef)}
        for turn in turns:
            env.update(turn)
            for inner in _statements(statement.body):
                self._scan_statement(inner, env, owner, in_loop=in_loop or not ordered)
        for name in names:  # (the loop's names are not modules after it: porter never followed them there)
            env.pop(name, None)
        env.update(before)
        if not ordered:  # the modules went in in an order porter does not know (Gluon's `add` keeps the turns')
            for name, ref in list(env.items()):
                start = containers.get(name)
                grown = isinstance(ref, ModuleRef) and ref.kind in ("sequential", "list", "dict") and ref.ordered
                if grown and start is not None and len(ref.elements) > len(start.elements):
                    env[name] = replace(ref, ordered=False, lead=_lead_of(start))
        return True

    def _iterated_items(self, node, env, owner):
        """(modules, is a dict, in known order) for what a loop iterates: a local list or dict of modules, an
        `OrderedDict(...)` built in place, a literal list; None otherwise."""
        name = dotted_name(node)
        if isinstance(env.get(name), list):
            return env[name], name in env.get("#dicts", ()), name not in env.get("#unordered", ())
        if _is_ordered_dict(node, self.source):
            pairs = dotted_name(node.args[0].value) if node.args else None
            return self._ordered_dict_elements(node, env, owner), True, pairs not in env.get("#unordered", ())
        if isinstance(node, (cst.List, cst.Tuple)):
            return self._elements(node.elements, env, owner), False, True
        return None

    def _added_blocks(self, call, env, owner):
        """The blocks `seq.add(a, b)` appends, a starred literal list (`seq.add(*[conv, bn])`) or list local
        (`seq.add(*layers)`) unpacked."""
        blocks = []
        for arg in call.args:
            if arg.star == "*" and isinstance(arg.value, (cst.List, cst.Tuple)):
                blocks.extend(self.ref_of(e.value, env, owner) for e in arg.value.elements)
            elif arg.star == "*" and isinstance(env.get(dotted_name(arg.value)), list):
                blocks.extend(env[dotted_name(arg.value)])
            else:
                blocks.append(self.ref_of(arg.value, env, owner))
        return tuple(blocks)


@dataclass(frozen=True, eq=False)
class LocalFunction:
    """A function defined inside the body being scanned: a call of it builds what it returns."""

    definition: cst.FunctionDef


# names a branch being scanned rebound to a value porter cannot see (a set, only while scanning an if's branch)
REBOUND_UNKNOWN = "#rebound_unknown"
BOUND_UNSEEN = "#bound_unseen"  # names the constructor bound to a call's result porter cannot see
COPY_ALIASES = "#copy_aliases"  # local names bound to copy.deepcopy / copy.copy


SET_BY_PATTERN = "#setattr:"  # + a name pattern: the modules `setattr(self, <a name of that pattern>, ...)` sets
NAMES_OF_PATTERN = "#names:"  # + an attribute: the name pattern of the strings a list attribute holds
LOCAL_PATTERN = "#pattern:"  # + a local name: the name pattern of the string it holds (`name = "stage%d" % i`)


def attribute_by_pattern(ir, name, pattern=None):
    """The module `getattr(self, name)` stands for when `name` is a pattern (`'level{}'.format(i)`, `f"layer{i}"`,
    `'layer' + str(i)`; `pattern`: the pattern of a name the caller knows, a loop variable over names): the module
    attributes of class `ir` whose names it matches, as alternatives (one module when they are all one); unknown
    otherwise."""
    pattern = pattern or name_pattern(name)
    if pattern is None:
        return UNKNOWN_MODULE
    refs = [ref for attribute, ref in ir.attributes.items() if isinstance(ref, ModuleRef) and
            re.fullmatch(pattern, ir.renamed.get(attribute, attribute))]
    if not refs and isinstance(ir.attributes.get(SET_BY_PATTERN + pattern), list):
        refs = list(ir.attributes[SET_BY_PATTERN + pattern])  # set by `setattr` under a name of the same pattern
    if not refs or any(r.kind == "unknown" and not r.alternatives for r in refs):
        return UNKNOWN_MODULE
    distinct = list(dict.fromkeys(refs))
    return distinct[0] if len(distinct) == 1 else _alternatives(distinct)


def attribute_set_by_pattern(ir, attribute):
    """The module `self.<attribute>` is when no assignment names it but `setattr`/`add_module` set it under a name
    of a pattern it matches (`self.add_module("stage%d" % i, ...)`, then `self.stage2(x)`); None otherwise."""
    for key, refs in ir.attributes.items():
        if key.startswith(SET_BY_PATTERN) and isinstance(refs, list) and re.fullmatch(key[len(SET_BY_PATTERN):],
                                                                                       attribute):
            return attribute_by_pattern(ir, None, key[len(SET_BY_PATTERN):])
    return None


def tensor_by_pattern(ir, name):
    """The rank (None where unknown) of the tensor `getattr(self, name)` reads when `name` is a pattern that names
    tensors `setattr(self, <a name of that pattern>, nn.Parameter(...))` set (PVT's `pos_embed{i + 1}`), else
    False."""
    pattern = name_pattern(name)
    entry = ir.attributes.get(SET_BY_PATTERN + pattern) if pattern is not None else None
    return entry[1] if isinstance(entry, tuple) and entry[:1] == ("tensor",) else False


def _pattern_of(node, env):
    """The name pattern of a string expression, or of the local name that holds one (scan env)."""
    pattern = name_pattern(node)
    if pattern is None and isinstance(node, cst.Name):
        pattern = env.get(LOCAL_PATTERN + node.value)
    return pattern


def name_pattern(node):
    """A regular expression for the attribute names expression `node` can build from literal text around run-time
    parts (`'level{}'.format(i)`, `f"level{i}"`, `'level' + str(i)`, `"stage%d" % i`), or None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format" and \
            isinstance(node.func.value, cst.SimpleString):
        parts = re.split(r"\{[^{}]*\}", node.func.value.evaluated_value)
    elif isinstance(node, cst.FormattedString):
        parts, text = [], ""
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                text += part.value
            else:
                parts.append(text)
                text = ""
        parts.append(text)
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add) and \
            isinstance(node.left, cst.SimpleString):
        parts = [node.left.evaluated_value, ""]
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo) and \
            isinstance(node.left, cst.SimpleString):  # `"stage%d" % (i + 2)` (VoVNet's stages)
        parts = re.split(r"%[-#0 +]*\d*(?:\.\d+)?[sdifr]", node.left.evaluated_value)
    else:
        return None
    if len(parts) < 2 or not any(parts):
        return None
    return r"\w+".join(re.escape(p) for p in parts)



def _mark_unordered(env, holder, lead):
    """`holder` (a local list of modules) gets children whose order porter cannot follow (appended in a loop or a
    branch); the `lead` children it held before keep their place in front."""
    unordered = env.setdefault("#unordered", set())
    leads = env.setdefault("#lead", {})
    leads[holder] = min(leads.get(holder, lead), lead) if holder in unordered else lead
    unordered.add(holder)


def _common_prefix(lists):
    """How many first items all of `lists` share."""
    shortest = min(len(items) for items in lists)
    return next((i for i in range(shortest) if any(items[i] != lists[0][i] for items in lists)), shortest)


def _branches_grown(lists):
    """The items of lists branches grew from one start: the longest, then what the others add besides."""
    grown = list(max(lists, key=len))
    shared = _common_prefix(lists)
    for items in lists:
        grown.extend(item for item in items[shared:] if item not in grown)
    return grown


def _lead_of(ref):
    """How many of a container's children are known to come first, in order."""
    return len(ref.elements) if ref.ordered else ref.lead

def _helper_scanned(resolver, function, call, env, owner, in_loop):
    """Containers handed to a module-level helper that fills them (`_add_conv(self.features, ...)` calling
    `out.add(...)`): the helper's body runs with its parameters bound, and what it added comes back."""
    names = [p.name.value for p in function.params.params]
    local, handed = {}, {}
    for position, arg in enumerate(call.args):
        parameter = parameter_of(arg, position, names)
        holder = dotted_name(arg.value)
        if parameter is not None and holder in env and isinstance(env[holder], ModuleRef):
            local[parameter], handed[parameter] = env[holder], holder
        elif parameter is not None:  # a block class handed in (`_add_block(out, ResidualBlock, n, channels)`)
            cls = resolver.class_ref(arg.value, env)
            if cls is not None:
                local[parameter] = ModuleRef("classobj", elements=(cls,))
    if not handed or resolver.depth > 10:
        return
    resolver.scan_function_body(function, local, owner, in_loop)
    for parameter, holder in handed.items():
        env[holder] = local[parameter]


def _grown_container(alternatives):
    """True when `alternatives` are one container (`self.features`) as branches left it: each one's children
    start with the children of the shortest."""
    if not all(isinstance(ref, ModuleRef) and ref.kind in ("sequential", "list", "dict") for ref in alternatives):
        return False
    shortest = min(alternatives, key=lambda ref: len(ref.elements))
    return len({ref.kind for ref in alternatives}) == 1 and all(
        ref.elements[:len(shortest.elements)] == shortest.elements for ref in alternatives)


HANDED = "#handed"  # scan env key of a helper's body: the parameters its call hands explicitly


def _handed_modules(env):
    """The parameters of a helper's body its call handed a module or a module class (`act=nn.ReLU`: never None
    there, where a constructor's hints may merge constructions that hand None)."""
    return frozenset(name for name in env.get(HANDED, ()) if isinstance(env.get(name), ModuleRef) and
                     env[name].kind in ("classobj", "class", "rule") and not env[name].alternatives)


def _branch_appended(alternatives):
    """`alternatives` as one container (`layers`) that each branch of an if/else appended one child of its own to:
    the container with one child standing for any of those (alternatives); None when they are not so."""
    if not all(isinstance(ref, ModuleRef) and ref.kind in ("sequential", "list") for ref in alternatives) or \
            len({ref.kind for ref in alternatives}) != 1:
        return None
    shortest = min(len(ref.elements) for ref in alternatives)
    if shortest == 0 or any(len(ref.elements) != shortest for ref in alternatives):
        return None
    first = alternatives[0]
    if any(ref.elements[:-1] != first.elements[:-1] for ref in alternatives):
        return None
    child = _alternatives(list(dict.fromkeys(ref.elements[-1] for ref in alternatives)))
    return ModuleRef(first.kind, elements=first.elements[:-1] + (child,), ordered=all(r.ordered for r in alternatives),
                     lead=min(_lead_of(r) for r in alternatives) if not all(r.ordered for r in alternatives) else 0)


def _list_ref(name, found, env):
    """The ModuleRef of the list of modules `found` that `env` binds to `name` (in the order its statements built
    it, unless a loop or branch grew it: then its first known elements lead)."""
    ordered = name not in env.get("#unordered", ())
    lead = 0 if ordered else min(env.get("#lead", {}).get(name, 0), len(found))
    return ModuleRef("list", elements=tuple(found), ordered=ordered, lead=lead)


def _one_layout_alternative(alternatives, passes=None):
    """The module a name bound differently in if/else branches stands for when only one alternative has a layout
    of its own and the others pass any layout through (`nn.Identity()`, `nn.Sequential()`): the translator
    follows that one, and the pass-through ones agree with it at run time; so it does when the alternatives are
    layers of one layout behaviour. Otherwise it is unknown, and the call converts at run time. `passes(ref)`: whether
    an in-file class passes any layout through too (elementwise_classes.py)."""
    distinct = []
    if alternatives and all(isinstance(ref, ModuleRef) and ref.kind == "classobj" and len(ref.elements) == 1
                            for ref in alternatives):  # `conv_nd = nn.Conv3d` / `nn.Conv2d` / `nn.Conv1d`
        chosen = _one_layout_alternative([ref.elements[0] for ref in alternatives], passes)
        return ModuleRef("classobj", elements=(chosen,)) if chosen.kind != "unknown" or chosen.alternatives else \
            UNKNOWN_MODULE
    # an if/elif chain: the inner if/else bound one of several already
    alternatives = [a for ref in alternatives for a in (ref.alternatives if isinstance(ref, ModuleRef) and
                                                        ref.alternatives else (ref,))]
    for ref in alternatives:
        if not isinstance(ref, ModuleRef):
            return UNKNOWN_MODULE
        passes_through = (ref.kind == "rule" and ref.rule.layout == "any" and ref.rule.rank_delta == 0) or (
            ref.kind in ("sequential", "list") and not ref.elements) or (
            passes is not None and ref.kind == "class" and passes(ref))
        if not passes_through and ref not in distinct:
            distinct.append(ref)
    if len(distinct) == 1 and (distinct[0].kind != "class" or len(set(alternatives)) == 1):
        return distinct[0]
    if len({ref.rule.rank for ref in distinct if ref.kind == "rule" and ref.rule.rank is not None}) > 1:
        # layers of several ranks (a non-local block's Conv1d/2d/3d chosen by `dimension`): each call picks the
        # one its input's rank fits (calls.py `alternatives_call`)
        return _alternatives(list(dict.fromkeys(alternatives)))
    if len(distinct) == 1:  # a block class or a pass-through (`Residual(...) if has_local else nn.Identity()`): they
        # agree only when the class returns the layout it takes, which its translation tells (calls.py)
        return _alternatives(list(dict.fromkeys(alternatives)))
    if not distinct:  # every alternative passes its input through (`nn.ReLU if a else nn.Tanh`)
        classes = list(dict.fromkeys(ref for ref in alternatives if ref.kind == "class"))
        if classes and len(set(alternatives)) > 1:
            # an in-file elementwise class or a pass-through (hgnet's `LearnableAffineBlock() if use_lab else
            # nn.Identity()`): they agree only when the class's translation hands back the layout it takes (a
            # learnable scale meeting an image of unknown rank may not), which its translation tells (calls.py)
            return _alternatives(list(dict.fromkeys(alternatives)))
        return classes[-1] if classes else alternatives[-1]
    behaviours = {_layout_behaviour(r) for r in distinct}
    if len(behaviours) == 1 and None not in behaviours:  # `nn.Upsample(...)` or `nn.ConvTranspose2d(...)`; two
        return distinct[-1]  # versions of a feature stack built from the same kinds of layers and blocks
    if all(_channels_last_throughout(r) for r in distinct):
        # a patch-embedding Conv2d or a conv stem Sequential: channels-last in and out either way; the translator
        # follows a Sequential (its call passes `training` on, which a single layer ignores)
        return next((r for r in reversed(distinct) if r.kind == "sequential"), distinct[-1])
    return _alternatives(alternatives)


def _alternatives(refs):
    """An unknown module that is one of `refs` (layers or in-file classes): the translator may still find one layout
    for all of them (calls.py `alternatives_call`); else plainly unknown."""
    refs = [a for ref in refs for a in (ref.alternatives if ref.kind == "unknown" and ref.alternatives else (ref,))]
    if refs and all(r.kind in ("class", "rule", "sequential") for r in refs):
        return ModuleRef("unknown", alternatives=tuple(dict.fromkeys(refs)))
    return UNKNOWN_MODULE


def _known_throughout(ref):
    """Whether every module in `ref` (recursively, each alternative too) is a rule, an in-file class or a container
    of such."""
    if ref.kind == "unknown":
        return bool(ref.alternatives) and all(_known_throughout(a) for a in ref.alternatives)
    return ref.kind != "sequential" or all(_known_throughout(e) for e in ref.elements)


def _channels_last_throughout(ref):
    """True for a channels-last layer that keeps the rank, or a Sequential made only of such layers (and
    layout-free ones): it takes and returns channels-last tensors whichever of them runs."""
    if ref.kind == "rule":
        return ref.rule.layout == "channels_last" and ref.rule.rank_delta == 0 and ref.rule.outputs == "tensor"
    if ref.kind == "sequential" and ref.elements:
        free = [e.kind == "rule" and e.rule.layout == "any" and e.rule.rank_delta == 0 for e in ref.elements]
        return not all(free) and all(f or _channels_last_throughout(e) for f, e in zip(free, ref.elements))
    return False


def _layout_behaviour(ref):
    """What the layout reasoning needs of a module: a layer's layout and outputs (rank kept), or for a Sequential
    the kinds of its first and last children and the set of all (None when it cannot be summarised)."""
    if ref.kind == "rule":
        return (ref.rule.layout, ref.rule.outputs) if ref.rule.rank_delta == 0 else None
    if ref.kind == "class":
        return ("class", ref.class_name)
    if ref.kind == "sequential" and ref.ordered and ref.elements:
        kinds = [_layout_behaviour(e) for e in ref.elements]
        return None if None in kinds else ("sequential", kinds[0], kinds[-1], frozenset(kinds))
    return None


def _last_orelse(statement):
    """The final `else`/`elif` clause of an if statement (None when it has none)."""
    node = statement.orelse
    while isinstance(node, cst.If) and node.orelse is not None:
        node = node.orelse
    return node


def _named_children(call, ref):
    """(name, ModuleRef) of the children of `nn.Sequential(OrderedDict([(name, module), ...]))` (literal pairs, in
    the order of `ref.elements`); nothing for any other construction."""
    if not (isinstance(call, cst.Call) and len(call.args) == 1 and isinstance(call.args[0].value, cst.Call)):
        return []
    inner = call.args[0].value
    if not (inner.args and isinstance(inner.args[0].value, (cst.List, cst.Tuple))):
        return []
    names = []
    for item in inner.args[0].value.elements:
        if not (isinstance(item.value, cst.Tuple) and len(item.value.elements) == 2 and
                isinstance(item.value.elements[0].value, cst.SimpleString)):
            return []
        names.append(item.value.elements[0].value.evaluated_value)
    return list(zip(names, ref.elements)) if len(names) == len(ref.elements) else []


def _dict_literals(node, code_of):
    """{keyword: literal text or None} of a dict display whose keys are all strings (what `**name` of it hands a
    call: every keyword known), or None (then `**name` is an unknown mapping)."""
    found = {}
    for element in node.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None
        found[element.key.evaluated_value] = literal_text(code_of(element.value))
    return found


def _pair_module(ref):
    """The module of a `(name, module)` pair of a list literal (read as a list of two), else `ref` itself."""
    if isinstance(ref, ModuleRef) and ref.kind == "list" and len(ref.elements) == 2 and \
            ref.elements[0].kind == "unknown":
        return ref.elements[1]
    return ref


def _is_ordered_dict(node, source):
    return isinstance(node, cst.Call) and (source.imports.resolve(node.func) in (
        "collections.OrderedDict",) or dotted_name(node.func) in ("OrderedDict", "collections.OrderedDict"))


def _target_name(target):
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
        return f"self.{target.attr.value}"
    return None


def _statements(body):
    """Small statements of a block, in order (compound statements as themselves)."""
    result = []
    for statement in getattr(body, "body", []):
        if isinstance(statement, cst.SimpleStatementLine):
            result.extend(statement.body)
        else:
            result.append(statement)
    return result


MODULE_KINDS = frozenset({"rule", "class", "sequential", "list", "dict"})  # refs naming one module instance
_SCANNED_BLOCKS = frozenset({cst.For, cst.While, cst.With, cst.Try})  # exact types
_SCANNED_STATEMENTS = frozenset({cst.Assign, cst.AugAssign, cst.Expr})


def stored_parameters(info):
    """{constructor parameter: attribute} for the parameters `info.__init__` stores unchanged (`self.dims = dims`,
    the parameter never rebound) whose attribute `forward` reads and no method but __init__ assigns."""
    cached = info.__dict__.get("_stored_parameters")
    if cached is not None:
        return cached
    init, forward = info.find_method("__init__"), info.find_method("forward")
    result = {}
    if init is not None and forward is not None:
        params = {p.name.value for p in (*init.params.params, *init.params.kwonly_params)} - {"self"}
        rebound, stored = set(), {}
        for node in _walk(init.body):
            targets = assignment_targets(node)
            for target in targets:
                if isinstance(target, cst.Name):
                    rebound.add(target.value)
                elif isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
                    value = node.value if isinstance(node, cst.Assign) else None
                    if isinstance(value, cst.Name) and value.value in params and target.attr.value not in stored:
                        stored[target.attr.value] = value.value
                    else:
                        stored[target.attr.value] = None  # set twice, or to something else
        assigned_elsewhere = set()
        for name, method in info.methods.items():
            if name == "__init__":
                continue
            for node in _walk(method.body):
                targets = assignment_targets(node)
                assigned_elsewhere.update(t.attr.value for t in targets if isinstance(t, cst.Attribute) and
                                          dotted_name(t.value) == "self")
        read = {n.attr.value for n in _walk(forward.body) if isinstance(n, cst.Attribute) and
                dotted_name(n.value) == "self"}
        result = {param: attr for attr, param in stored.items() if param is not None and param not in rebound and
                  attr in read and attr not in assigned_elsewhere}
    info.__dict__["_stored_parameters"] = result
    return result


def module_level_construction(source, name):
    """The call expression a module-level statement binds `name` to, when it is that statement's only target, the
    only top-level binding of `name` and a call of a container (`features = nn.Sequential(...)`: a model part built
    once at import, which a class then holds); else None."""
    cached = source.__dict__.get("_module_level_constructions")
    if cached is None:
        cached, seen = {}, set()
        for statement in source.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = assignment_targets(small)
                for target in targets:
                    bound = target.value if isinstance(target, cst.Name) else None
                    if bound in seen:
                        cached.pop(bound, None)
                    elif bound is not None:
                        seen.add(bound)
                        if len(targets) == 1 and isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) \
                                and source.imports.resolve(small.value.func) in CONTAINERS:
                            cached[bound] = small.value
        source.__dict__["_module_level_constructions"] = cached
    return cached.get(name)


def decided_attribute_names(info):
    """The `self` attributes `info.__init__` assigns (other than from a parameter unchanged, which
    `stored_parameters` covers) that `forward` reads and no other method assigns: those a construction's literal
    arguments may decide (`init_statics`). Empty for a class with in-file bases (their __init__ may set them too)."""
    cached = info.__dict__.get("_decided_attribute_names")
    if cached is not None:
        return cached
    init, forward = info.find_method("__init__"), info.find_method("forward")
    result = frozenset()
    if init is not None and forward is not None and not info.bases and "__init__" in info.methods:
        elsewhere = {name for method_name, method in info.methods.items() if method_name != "__init__"
                     for name in _self_targets(method.body)}
        read = {n.attr.value for n in _walk(forward.body) if isinstance(n, cst.Attribute) and
                dotted_name(n.value) == "self"}
        result = frozenset((set(_self_targets(init.body)) & read) - elsewhere - set(stored_parameters(info).values()))
    info.__dict__["_decided_attribute_names"] = result
    return result


def _self_targets(body):
    """The names of the `self` attributes assigned anywhere in `body`."""
    for node in _walk(body):
        targets = assignment_targets(node)
        for target in targets:
            if isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
                yield target.attr.value


def _walk(node):
    """Every node under `node` (nested functions and classes included)."""
    return descendants(node)


def config_block_classes(source, class_of):
    """{attribute: [module classes]} for the block classes plain (config) classes of the file bind to an
    attribute (`block = MBConv` in MBConvConfig.__init__ or at class level, `self.block = FusedMBConv`), in source
    order: a call `cnf.block(...)` builds one of them."""
    cached = source.__dict__.get("_config_block_classes")
    if cached is not None:
        return cached
    found = {}
    for statement in source.module.body:
        if not isinstance(statement, cst.ClassDef) or class_of(statement.name.value) is not None:
            continue
        for node in _walk(statement.body):
            if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Name)):
                continue
            target = class_of(node.value.value)
            if target is None or target.container_base:
                continue
            for assigned in node.targets:
                name = _target_name(assigned.target)
                name = name[5:] if name is not None and name.startswith("self.") else name
                if name is not None and target.name not in found.setdefault(name, []):
                    found[name].append(target.name)
    source.__dict__["_config_block_classes"] = found
    return found


def _same_module(a, b):
    """True when two construction arguments are the same kind of module (class, rule, container contents)."""
    if a.kind != b.kind or a.class_name != b.class_name or a.rule != b.rule or a.alternatives != b.alternatives:
        return False
    if a.kind == "classobj":
        return len(a.elements) == len(b.elements) and all(_same_module(x, y) for x, y in zip(a.elements, b.elements))
    return True  # containers: their children are followed where they are built


def _own_forward(info, ref):
    """A Sequential subclass's ref, naming the class when it has a forward of its own (`forward(self, *features)`
    picking what its children take): a call the children cannot take as one Sequential runs that forward."""
    return replace(ref, class_name=info.name) if info.find_method("forward") is not None else ref


def _returns_its_class(method):
    """Whether a method is a classmethod whose returns construct its class (`return cls(...)`, or `model =
    cls(...)` ... `return model`): a factory of the class, as efficientnet_pytorch's `EfficientNet.from_name`."""
    if not any(dotted_name(d.decorator) == "classmethod" for d in method.decorators) or not method.params.params:
        return False
    cls = method.params.params[0].name.value
    nodes = list(descendants(method))
    built = {t.target.value for n in nodes if isinstance(n, cst.Assign) and isinstance(n.value, cst.Call) and
             dotted_name(n.value.func) == cls for t in n.targets if isinstance(t.target, cst.Name)}
    returns = [n.value for n in nodes if isinstance(n, cst.Return) and n.value is not None]
    return bool(returns) and all(isinstance(r, cst.Call) and dotted_name(r.func) == cls or
                                 isinstance(r, cst.Name) and r.value in built for r in returns)

