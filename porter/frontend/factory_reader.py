"""Reading a model factory's code without running it: which module class it constructs, and with what.

`FactoryReader.construction(function, bound, 0)` follows a factory's statements with its parameters bound to code
(their defaults, or what a caller handed): assignments (the last binding of a name wins), calls of the file's own
functions (their parameters bound to the call's arguments, `*args` and `**kwargs` handed on), tuple unpackings and
standard-library imports (statements of the port's factory too), `if` statements whose condition the bound values
decide (`if weights is not None:` with `weights=None`; a pretrained-weights switch stays None through
`weights = Weights.verify(weights)`), timm's `build_model_with_cfg(Class, variant, pretrained, **kwargs)`, and
`return` of a construction or of a name bound to one. It returns the class and the construction call with every
name bound; anything that could change what is built unseen (a statement mutating the model or the keyword
arguments, a condition it cannot decide touching them) raises `Unread`. porter/frontend/model_entry.py turns the
result into the port's factory.
"""

import ast
import re
import warnings

import libcst as cst

from porter.frontend.factory_values import (
    KWARGS,
    UNKNOWN,
    Unread,
    default_keyword_read,
    dict_display,
    free_names,
    hands_keywords,
    kwargs_names,
    merges_keywords,
    node_code,
    own_keywords,
    popped_from_displays,
    popped_key,
    reads_default_keywords,
    reads_unknown,
    string_key_target,
    substituted,
    unpacked,
    updated_display,
    without_keywords,
)
from porter.frontend.imports import KEPT_STDLIB
from porter.frontend.linker import READ_BY_THE_FACTORY_READER
from porter.frontend.module_constants import module_constants
from porter.frontend.names import target_names
from porter.frontend.source import body_without_docstring
from porter.frontend.timm_models import BUILDER_OWN
from porter.frontend.timm_pretrained_cfg import builder_defaults, literal_value
from porter.frontend.walk import walk

_DEPTH = 8  # helper calls followed, at most
_TIMM_BUILDER, = READ_BY_THE_FACTORY_READER
_TIMM_BUILDER_PARAMETERS = BUILDER_OWN  # what it takes for itself (model_cfg aside: the class's `cfg`)
_TIMM_BUILDER_SWITCHES = frozenset({"features_only", "kwargs_filter"})  # its own too; porter follows them off only
WEIGHTS_SWITCH = re.compile(r"weight|pretrained|checkpoint", re.IGNORECASE)
def bound_to_defaults(function):
    """The factory's own parameters bound to their defaults; its `**kwargs` to the generated function's."""
    parameters = function.params
    bound = {}
    for parameter in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params):
        bound[parameter.name.value] = parameter.default if parameter.default is not None else UNKNOWN
        if pins_weights(parameter):  # `weights_backbone=ResNet50_Weights.IMAGENET1K_V1`: no pretrained weights
            bound[parameter.name.value] = cst.Name("None")
    if isinstance(parameters.star_arg, cst.Param):
        bound[parameters.star_arg.name.value] = UNKNOWN
    if parameters.star_kwarg is not None:
        bound[parameters.star_kwarg.name.value] = cst.Name(KWARGS)
    return bound


def constructor_of(source, class_name):
    """The `__init__` module class `class_name` runs (its own or an in-file base's), or None."""
    info = source.classes.get(class_name)
    owner = info.owner_of("__init__") if info is not None else None
    return owner.find_method("__init__") if owner is not None else None


def required_parameters(source, class_name):
    """Constructor parameters of module class `class_name` without a default (its own `__init__` or an in-file
    base's)."""
    init = constructor_of(source, class_name)
    return set(required_names(init.params)[1:]) if init is not None else set()


def required_names(parameters):
    """Names of the parameters without a default, in order."""
    return [p.name.value for p in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params)
            if p.default is None]


def pins_weights(parameter):
    """Whether a factory's parameter is a pretrained-weights switch whose default loads weights (torchvision's
    `weights_backbone=ResNet50_Weights.IMAGENET1K_V1`): porter builds without them, so it is bound to None (and
    torch's side is handed None)."""
    default = parameter.default
    return default is not None and WEIGHTS_SWITCH.search(parameter.name.value) is not None and not (
        isinstance(default, cst.Name) and default.value in ("None", "False"))


class FactoryReader:
    """Follows a factory's statements and the helpers it calls to the module class it constructs."""

    def __init__(self, source):
        self.source = source
        self.prelude = []  # statements the port's factory runs before the construction (tuple unpackings)
        self.locals = set()  # the names they bind
        self.builds = {}  # function name -> whether it may build a module (may_build)

    def construction(self, function, bound, depth):
        """(class name, the construction call with every name of the function bound) of what `function`
        returns, None when it returns no construction."""
        if depth > _DEPTH:
            raise Unread
        bound = dict(bound)
        built = {}  # local name -> (class, call) of a construction assigned to it
        for statement in body_without_docstring(function):
            result = self.statement(statement, bound, built, depth)
            if result is not None:
                return result
        return None

    def statement(self, statement, bound, built, depth):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                result = self.small_statement(small, bound, built, depth)
                if result is not None:
                    return result
            return None
        if isinstance(statement, cst.If):
            taken = self.decided(statement.test, bound)
            if taken is None:
                taken = self.decided_by_default_keywords(statement.test, bound)
            if taken is None:
                if _touches(statement, set(built) | {name for name, value in bound.items()
                                                     if isinstance(value, cst.Name) and value.value == KWARGS}):
                    raise Unread
                _forget_changed(statement, bound, built)
                return None
            branch = statement.body if taken else statement.orelse
            if isinstance(branch, cst.Else):
                branch = branch.body
            if branch is None or isinstance(branch, cst.If):
                return self.statement(branch, bound, built, depth) if branch is not None else None
            for inner in branch.body:
                result = self.statement(inner, bound, built, depth)
                if result is not None:
                    return result
            return None
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            bound[statement.name.value] = UNKNOWN
            return None
        if isinstance(statement, cst.With) and all(item.asname is None for item in statement.items):
            # `with load_context: return build_model_with_cfg(...)` (timm's iformer.py: a context for loading
            # pretrained weights, which the port builds without): the body, as the construction runs it
            for inner in statement.body.body:
                result = self.statement(inner, bound, built, depth)
                if result is not None:
                    return result
            return None
        if _touches(statement, set(built)):
            raise Unread
        _forget_changed(statement, bound, built)
        return None

    def small_statement(self, small, bound, built, depth):
        if isinstance(small, cst.Return):
            if small.value is None:
                raise Unread
            return self.value_built(small.value, bound, built, depth)
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            if small.value is None:
                return None
            if len(targets) == 1 and isinstance(targets[0], cst.Name):
                name = targets[0].value
                small = small.with_changes(value=popped_from_displays(small.value, bound))  # (a caller's key)
                if _checks_weights(name, small.value, bound):
                    return None  # `weights = ResNet18_Weights.verify(weights)`: still none
                if name in built or any(isinstance(v, cst.Name) and v.value == KWARGS and k == name
                                        for k, v in bound.items()):
                    raise Unread  # a model or the keyword arguments rebound
                self.materialise(small.value, bound, built)
                found = self.construction_of(small.value, bound, depth)
                if found is not None:
                    built[name] = found
                    bound[name] = UNKNOWN
                elif (reads_default_keywords(small.value, bound) or hands_keywords(small.value, bound)) and \
                        dict_display(small.value) is None:
                    # `pretrained_strict = kwargs.pop("pretrained_strict", True)`, `act_layer = resolve_act_layer(
                    # kwargs, "relu")` (popping from the user's keyword arguments): a statement of the port's factory,
                    # run once where the source runs it (keyword arguments built as a dict are spread into the
                    # construction, where they pop)
                    try:
                        value = own_keywords(small.value, bound)
                    except Unread:
                        # `out_indices = kwargs.pop("out_indices", default_out_indices)` of a default porter does
                        # not read: the key is popped, the name unknown (what reads it later is unread)
                        popped = popped_key(small.value, bound)
                        if popped is None:
                            raise
                        self.prelude.append(cst.Expr(cst.parse_expression(f"{KWARGS}.pop({popped!r}, None)")))
                        bound[name] = UNKNOWN
                        return None
                    self.prelude.append(cst.Assign([cst.AssignTarget(cst.Name(self.fresh(name)))], value))
                    bound[name] = cst.Name(self.prelude[-1].targets[0].target.value)
                else:
                    try:
                        bound[name] = substituted(small.value, bound)
                    except Unread:
                        # a value porter does not read (`tuple(i for i, _ in enumerate(kwargs.get("depths",
                        # (1, 1, 3, 1))))`), changing nothing it reads: unknown (what reads it later is unread)
                        if _changed_in_place(small.value) & (set(built) | kwargs_names(bound)) or \
                                hands_keywords(small.value, bound):
                            raise
                        bound[name] = UNKNOWN
                return None
            if len(targets) == 1 and isinstance(targets[0], (cst.Tuple, cst.List)) and \
                    isinstance(small.value, cst.Call) and \
                    all(isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement)
                        for e in targets[0].elements):
                # `setting, last_channel = _conf("b0", width_mult=1.0)`: a statement of the port's factory too
                names = [element.value.value for element in targets[0].elements]
                if any(name in built or name in self.locals or name == KWARGS for name in names):
                    raise Unread
                self.materialise(small.value, bound, built)
                target = cst.Tuple([cst.Element(cst.Name(name)) for name in names], lpar=[], rpar=[])
                self.prelude.append(cst.Assign([cst.AssignTarget(target)], substituted(small.value, bound)))
                self.locals.update(names)
                bound.update({name: cst.Name(name) for name in names})
                return None
            if isinstance(targets[0], cst.Subscript):  # a module built into a local it stores: built first
                self.materialise(small.value, bound, built)
            if _keyword_set(small, bound):  # `kwargs["growth_rate"] = growth_rate` (timm's densenet.py): the
                # factory's keyword arguments as a display, the key set last (it wins over the user's, as in the source)
                bound[targets[0].value.value] = cst.Dict([cst.StarredDictElement(cst.Name(KWARGS))])
            if updated_display(small, bound):  # `cfg["block"] = SelecSlsBlock` on `cfg = {}`
                return None
            for target in targets:
                if _touches(target, set(built) | kwargs_names(bound)):
                    raise Unread  # `model.fc = ...`, `kwargs["width"] = 8`
                for name in target_names(target):
                    bound[name] = UNKNOWN
            return None
        if isinstance(small, cst.Expr):
            if _sets_a_default(small.value, bound):  # `kwargs.setdefault("img_size", 256)` (timm's byoanet.py)
                self.prelude.append(cst.Expr(substituted(small.value, bound)))
                return None
            if updated_display(small, bound):  # `feature_info.extend([...])` on `feature_info = [...]`
                return None
            if _touches(small, set(built) | kwargs_names(bound)):
                raise Unread  # `model.fc = ...`, `kwargs.pop("aux")`: the model or its arguments changed
            return None
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            self.local_import(small, bound)
            return None
        if isinstance(small, cst.Pass):
            return None
        if _touches(small, set(built) | kwargs_names(bound)):
            raise Unread
        return None

    def value_built(self, value, bound, built, depth):
        if isinstance(value, cst.Name) and value.value in built:
            if value.value in self.locals:
                raise Unread  # a module the factory read after building it, returned: not built anew
            return built[value.value]
        self.materialise(value, bound, built)
        found = self.construction_of(value, bound, depth)
        if found is None:
            raise Unread
        return found

    def materialise(self, value, bound, built):
        """A module the factory built into a local and `value` reads (`head = Head(encoder.out_channels, n)`, `return
        Model(encoder, head)`) becomes a statement of the port's factory (`encoder = Encoder(3, 8)`), built once
        where it was built and read by name, as in the source."""
        read = free_names([value])
        for name in list(built):  # (in the order the factory built them)
            if name not in read or bound.get(name) is not UNKNOWN:
                continue
            local = self.fresh(name)
            self.prelude.append(cst.Assign([cst.AssignTarget(cst.Name(local))], built[name][1]))
            bound[name] = cst.Name(local)

    def may_build(self, function, seen=frozenset()):
        """Whether `function` names a module class of the file or timm's builder, or calls an own function that
        may build: else it is a plain helper (timm's `resolve_act_layer(kwargs, "relu")`), its call a value."""
        if function in seen:
            return False
        known = self.builds.get(function.name.value)
        if known is not None:
            return known
        names = free_names([function.body])
        found = bool(names & set(self.source.classes)) or any(
            (self.source.imports.resolve(cst.Name(name)) or "").endswith(_TIMM_BUILDER) for name in names) or any(
            self.may_build(self.source.functions[name], seen | {function})
            for name in names if name in self.source.functions)
        if found or not seen:  # (a False reached inside a cycle may still turn True: kept only at the top)
            self.builds[function.name.value] = found
        return found

    def fresh(self, name):
        """A name for a local of the port's factory: `name`, or `name_2` where a helper's local of that name is there
        already (or names a class or function of the file)."""
        local = name
        for number in range(2, 100):
            if local not in self.locals and local != KWARGS and local not in self.source.classes and \
                    local not in self.source.functions:
                break
            local = f"{name}_{number}"
        self.locals.add(local)
        return local

    def construction_of(self, value, bound, depth):
        """(class, call bound) when `value` constructs a module class or calls an own function that does."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        callee = value.func.value
        if callee in bound:
            return None
        if (self.source.imports.resolve(value.func) or "").endswith(_TIMM_BUILDER):
            own = _TIMM_BUILDER_PARAMETERS - _TIMM_BUILDER_SWITCHES  # (what it takes for itself is never read)
            kept = [a for a in value.args[3:] if a.keyword is None or a.keyword.value not in own]
            return self.timm_built(unpacked(self.constant_items(substituted(
                value.with_changes(args=[*value.args[:3], *kept]), bound)), keep_merged=True))
        if callee in self.source.classes:
            return callee, unpacked(self.constant_items(substituted(value, bound)), keep_merged=True)
        function = self.source.functions.get(callee)
        if function is None or not self.may_build(function):
            return None
        return self.construction(function, self.bind(function, unpacked(substituted(value, bound),
                                                                          keep_merged=True)), depth + 1)

    def local_import(self, statement, bound):
        """An import inside the factory (pytorchcv's `from functools import reduce`): a statement of the port's
        factory too when it imports from the standard library; what anything else imports is unread."""
        if isinstance(statement, cst.ImportFrom) and isinstance(statement.names, cst.ImportStar):
            raise Unread
        names = [(alias.asname.name if alias.asname else alias.name) for alias in statement.names]
        bound_names = [name.value if isinstance(name, cst.Name) else node_code(name).split(".")[0] for name in names]
        module = statement.module if isinstance(statement, cst.ImportFrom) else statement.names[0].name
        top = node_code(module).split(".")[0] if module is not None and not getattr(statement, "relative", ()) else ""
        if top in KEPT_STDLIB and all(name not in self.locals for name in bound_names):
            self.prelude.append(statement)
            self.locals.update(bound_names)
            bound.update({name: cst.Name(name) for name in bound_names})
        else:
            bound.update({name: UNKNOWN for name in bound_names})

    def timm_built(self, call):
        """timm's `build_model_with_cfg(ResNet, variant, pretrained, feature_cfg=..., **kwargs)`, which builds
        `ResNet(**kwargs)` (`ResNet(cfg=model_cfg, **kwargs)` with a `model_cfg`), pretrained weights aside."""
        first = call.args[0] if call.args else None
        while first is not None and isinstance(first.value, cst.IfExp):
            # (deit.py: `model_cls = VisionTransformerDistilled if distilled else VisionTransformer`)
            taken = self.decided(first.value.test, {})
            if taken is None:
                raise Unread
            first = first.with_changes(value=first.value.body if taken else first.value.orelse)
        if first is None or first.keyword is not None or first.star or not isinstance(first.value, cst.Name) or \
                first.value.value not in self.source.classes:
            raise Unread
        arguments, filtered = [], []
        for argument in call.args[3:]:
            if argument.star or argument.keyword is None:
                if argument.star != "**":
                    raise Unread
                arguments.append(argument)
            elif argument.keyword.value == "model_cfg":
                arguments.append(argument.with_changes(keyword=cst.Name("cfg")))
            elif argument.keyword.value == "kwargs_filter" and isinstance(argument.value, cst.Tuple) and all(
                    isinstance(e.value, cst.SimpleString) for e in argument.value.elements):
                filtered = [e.value.evaluated_value for e in argument.value.elements]  # (the builder drops them)
            elif argument.keyword.value in _TIMM_BUILDER_SWITCHES:
                if self.decided(argument.value, {}) is not False:
                    raise Unread  # a feature extractor, or keyword arguments filtered: not the class built as is
            elif argument.keyword.value not in _TIMM_BUILDER_PARAMETERS:
                arguments.append(argument)
        if filtered:  # `kwargs_filter=("num_classes", ...)`: the builder pops them from the keyword arguments
            arguments = without_keywords(arguments, set(filtered))
            self.prelude.extend(cst.Expr(cst.parse_expression(f"{KWARGS}.pop({key!r}, None)")) for key in filtered)
        for key, value in self.builder_defaults(first.value.value, call).items():
            if not any(a.keyword is not None and a.keyword.value == key for a in arguments):
                arguments = _with_default(arguments, key, cst.parse_expression(repr(value)))
        return first.value.value, cst.Call(cst.Name(first.value.value), arguments)

    def builder_defaults(self, class_name, call):
        """{keyword: value} timm's builder sets from the variant's pretrained config (timm_pretrained_cfg.py) where
        the class's constructor takes it and its own default differs (a 768-class head, a ViT built for 384
        pixels); a required `in_chans` is 3 where no config says (every one of timm's: nextvit.py's NextViT)."""
        variant = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else None
        found = builder_defaults(self.source, variant.evaluated_value) if isinstance(variant, cst.SimpleString) \
            else {}
        init = constructor_of(self.source, class_name)
        if init is None:
            return {}
        params = {p.name.value: p.default for p in (*init.params.posonly_params, *init.params.params,
                                                    *init.params.kwonly_params)}
        defaults = {key: value for key, value in found.items() if key in params and (
            params[key] is None or literal_value(params[key]) != value)}
        if "in_chans" in params and params["in_chans"] is None:
            defaults.setdefault("in_chans", 3)
        return defaults

    def bind(self, function, call):
        """The helper's parameters bound to the call's (bound) arguments, its defaults, and `**kwargs` handed on."""
        parameters = function.params
        positional = [*parameters.posonly_params, *parameters.params]
        bound = bound_to_defaults(function)
        star_kwarg = parameters.star_kwarg.name.value if parameters.star_kwarg is not None else None
        if star_kwarg is not None:
            bound[star_kwarg] = UNKNOWN
        star_arg = parameters.star_arg.name.value if isinstance(parameters.star_arg, cst.Param) else None
        extra = []  # positional arguments past the named ones: `*args`
        keywords = []  # keyword arguments past them: `**kwargs` (`width=width`)
        handed_on = False  # the call hands the generated factory's `**kwargs` on
        index = 0
        defaults = []  # keys merged before the user's keyword arguments (`**dict(model_args, **kwargs)`)
        for argument in call.args:
            if argument.star == "**" and isinstance(argument.value, cst.Dict) and star_kwarg is not None and \
                    not handed_on:
                for element in argument.value.elements:
                    if isinstance(element, cst.StarredDictElement):
                        if not (isinstance(element.value, cst.Name) and element.value.value == KWARGS) or handed_on:
                            raise Unread
                        handed_on = True
                    elif not isinstance(element.key, cst.SimpleString):
                        raise Unread
                    elif element.key.evaluated_value in bound and element.key.evaluated_value not in (star_kwarg,
                                                                                                      star_arg):
                        bound[element.key.evaluated_value] = element.value  # (vitamin.py's `embed_cfg`; the user's
                        # keyword of that name, which would win, is taken not to be given)
                    else:
                        (keywords if handed_on else defaults).append(element)
            elif argument.star == "**":
                if not (isinstance(argument.value, cst.Name) and argument.value.value == KWARGS) or \
                        star_kwarg is None:
                    raise Unread
                handed_on = True
            elif argument.star:
                raise Unread
            elif argument.keyword is not None:
                name = argument.keyword.value
                if name in bound and name not in (star_kwarg, star_arg):
                    bound[name] = argument.value
                elif star_kwarg is not None:
                    keywords.append(cst.DictElement(cst.SimpleString(repr(name)), argument.value))
                else:
                    raise Unread
            elif index < len(positional):
                bound[positional[index].name.value] = argument.value
                index += 1
            elif star_arg is not None:
                extra.append(argument.value)
            else:
                raise Unread
        if star_arg is not None:
            bound[star_arg] = cst.Tuple([cst.Element(value) for value in extra])
        if any(value is UNKNOWN for name, value in bound.items() if name != star_kwarg):
            raise Unread  # a required parameter left unbound, or *args
        if star_kwarg is not None:
            # the generated `kwargs` itself while nothing is added to it, else `{**kwargs, "width": width}`
            # (the call's own keywords after the user's: given twice, they fail as the source's call does)
            bound[star_kwarg] = cst.Name(KWARGS) if handed_on and not keywords and not defaults else cst.Dict(
                [*defaults, *([cst.StarredDictElement(cst.Name(KWARGS))] if handed_on else []), *keywords])
        return bound

    def decided_by_default_keywords(self, test, bound):
        """True/False for a condition that reads keyword arguments of the generated factory the source does not
        give (`if kwargs.pop("features_only", False):` in timm's `_create_effnet`, over `dict(block_args=...,
        **kwargs)`): decided as the key's default, the construction porter follows. The port's factory runs the
        test too (popping what it pops) and refuses a value that would take the other branch. None when undecided."""
        test = test.visit(_BoundKeywordReads(bound, self.local_reads()))  # (`aux_logits = kwargs.get(
        # "aux_logits", False)`, then `if aux_logits:`: timm's inception_v3.py)
        defaults = _KeywordDefaults(bound)
        with_defaults = test.visit(defaults)
        keys = defaults.keys
        if not keys:
            return None
        taken = self.decided(with_defaults, bound)
        if taken is None:
            return None

        guarded = own_keywords(test, bound)
        refused = cst.UnaryOperation(cst.Not(), guarded.with_changes(
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])) if taken else guarded
        message = f"the port builds the model as the source's factory does without {', '.join(keys)}"
        self.prelude.append(cst.If(refused, cst.IndentedBlock([cst.SimpleStatementLine([cst.Raise(cst.Call(
            cst.Name("TypeError"), [cst.Arg(cst.SimpleString(repr(message)))]))])])))
        return taken

    def constant_items(self, node):
        """`node` with each item read of a module constant by a decided key (timm's levit.py: `model_cfgs[
        "levit_128"]`, a table of literal configurations) written as the literal it reads, so that `**dict(
        model_cfgs["levit_128"], **kwargs)` unpacks into keywords."""
        constants = module_constants(self.source.module)
        return node.visit(_ConstantItems(constants)) if constants else node

    def local_reads(self):
        """{local of the port's factory: the `kwargs.get(key, default)` its prelude binds it to}."""
        reads = {}
        for statement in self.prelude:
            if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and \
                    isinstance(statement.targets[0].target, cst.Name) and isinstance(statement.value, cst.Call) and \
                    isinstance(statement.value.func, cst.Attribute) and statement.value.func.attr.value == "get":
                reads[statement.targets[0].target.value] = statement.value
        return reads

    def decided(self, test, bound):
        """True/False for a condition the bound values decide (`weights is not None`, `pretrained`), else None."""
        try:
            value = substituted(test, bound) if not reads_unknown(test, bound) else None
        except Unread:  # `{..., **kwargs}.pop("key")`: see decided_by_default_keywords
            return None
        if value is None:
            return None
        try:
            code = cst.Module([]).code_for_node(value)
            with warnings.catch_warnings():  # (`variant is "b0"` compiles with a SyntaxWarning: not the user's)
                warnings.simplefilter("ignore", SyntaxWarning)
                # literals only, and the module's constants (`_USE_NAFLEX_DEFAULT`: module_constants.py)
                return bool(eval(code, {"__builtins__": {}}, dict(module_constants(self.source.module))))
        except (ArithmeticError, AttributeError, LookupError, NameError, SyntaxError, TypeError, ValueError):
            return None


def _checks_weights(name, value, bound):
    """Whether `name = X.verify(name)` rebinds a pretrained-weights switch left at None or False to what the check
    of it returns: the same (porter builds the model without pretrained weights, as torch's side does)."""
    default = bound.get(name)
    return (WEIGHTS_SWITCH.search(name) is not None and isinstance(default, cst.Name) and
            default.value in ("None", "False") and isinstance(value, cst.Call) and len(value.args) == 1 and
            isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == name)


def _keyword_set(small, bound):
    """Whether `small` is `NAME["key"] = value` on the generated factory's own keyword arguments."""
    target = string_key_target(small)
    if target is None:
        return False
    kwargs = bound.get(target.value.value)
    return isinstance(kwargs, cst.Name) and kwargs.value == KWARGS


def _sets_a_default(value, bound):
    """Whether `value` is `kwargs.setdefault(key, default)` of the generated factory's own keyword arguments (a
    statement of the port's factory too; on a dict a helper built, it stays unread)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
            value.func.attr.value == "setdefault" and isinstance(value.func.value, cst.Name)):
        return False
    kwargs = bound.get(value.func.value.value)
    return isinstance(kwargs, cst.Name) and kwargs.value == KWARGS and len(value.args) == 2 and \
        all(not arg.star and arg.keyword is None for arg in value.args)


_MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "popitem", "update", "setdefault", "clear",
                               "remove", "add", "discard", "sort", "reverse", "__setitem__", "__delitem__"})


def _forget_changed(statement, bound, built):
    """Names a statement the reader does not follow (an undecided `if`, a loop) assigns or changes in place
    (`return_layers["layer3"] = "aux"` under torchvision's `if aux:`, `cfg.update(...)`, `xs.append(...)`) are
    unknown after it; keyword arguments changed there make the factory unread."""
    changed = _assigned(statement) | _changed_in_place(statement)
    if changed & kwargs_names(bound):
        raise Unread
    for name in changed:
        bound[name] = UNKNOWN
        built.pop(name, None)


def _changed_in_place(node):
    """Names whose value `node` changes in place: the base of a subscript or attribute it assigns, augments or
    deletes, or whose mutating method it calls."""
    found = set()

    def base(expression):
        while isinstance(expression, (cst.Subscript, cst.Attribute)):
            expression = expression.value
        return expression.value if isinstance(expression, cst.Name) else None

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, target):
            if isinstance(target.target, (cst.Subscript, cst.Attribute)):
                found.add(base(target.target))

        def visit_AugAssign(self, node):
            found.add(base(node.target))

        def visit_AnnAssign(self, node):
            if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                found.add(base(node.target))

        def visit_Del(self, node):
            found.add(base(node.target))

        def visit_Call(self, call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in _MUTATING_METHODS:
                found.add(base(call.func.value))

    walk(node, Finder())
    return found - {None}


def _touches(node, names):
    return bool(names) and bool(free_names([node]) & names)


class _Assigned(cst.CSTVisitor):
    def __init__(self):
        self.names = set()

    def visit_AssignTarget(self, node):
        self.names.update(target_names(node.target))

    def visit_AugAssign(self, node):
        self.names.update(target_names(node.target))

    def visit_AnnAssign(self, node):
        self.names.update(target_names(node.target))

    def visit_For(self, node):
        self.names.update(target_names(node.target))


def _assigned(node):
    visitor = _Assigned()
    walk(node, visitor)
    return visitor.names


def _with_default(arguments, key, value):
    """`arguments` of a construction with `key=value` as a default of the user's keyword arguments (`**{"key":
    value, **kwargs}`, or first in a display merging them), else as a keyword argument."""
    default = cst.DictElement(cst.SimpleString(repr(key).replace("'", '"')), value)
    for index, argument in enumerate(arguments):
        if argument.star == "**" and isinstance(argument.value, cst.Name) and argument.value.value == KWARGS:
            return [*arguments[:index], argument.with_changes(value=cst.Dict([default, cst.StarredDictElement(
                argument.value)])), *arguments[index + 1:]]
        if argument.star == "**" and isinstance(argument.value, cst.Dict) and merges_keywords(argument.value):
            return [*arguments[:index], argument.with_changes(value=argument.value.with_changes(
                elements=[default, *argument.value.elements])), *arguments[index + 1:]]
    return [*arguments, cst.Arg(value, keyword=cst.Name(key))]


class _ConstantItems(cst.CSTTransformer):
    """`TABLE[key]` of a module constant holding literals, the key decided, as that item's literal where it is
    unpacked into keywords (`**TABLE[key]`, `dict(TABLE[key], ...)`): see FactoryReader.constant_items. Elsewhere
    the read stays as the source writes it."""

    def __init__(self, constants):
        super().__init__()
        self.constants = constants

    def leave_Call(self, original, updated):
        spreads = isinstance(updated.func, cst.Name) and updated.func.value == "dict"
        return updated.with_changes(args=[
            argument.with_changes(value=self.item(argument.value))
            if argument.star == "**" or (spreads and not argument.star and argument.keyword is None) else argument
            for argument in updated.args])

    def item(self, node):
        table = self.constants.get(node.value.value) if isinstance(node, cst.Subscript) and \
            isinstance(node.value, cst.Name) else None
        if not isinstance(table, dict) or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return node
        try:
            key = eval(cst.Module([]).code_for_node(node.slice[0].slice.value), {"__builtins__": {}},
                       dict(self.constants))
            text = repr(table[key])
            item = cst.parse_expression(text)
        except (ArithmeticError, AttributeError, LookupError, NameError, SyntaxError, TypeError, ValueError,
                cst.ParserSyntaxError):
            return node
        return item if ast.literal_eval(text) == table[key] else node


class _BoundKeywordReads(cst.CSTTransformer):
    """Names bound to a read of keyword arguments the user may give (`kwargs.get(key, default)`), directly or as a
    local of the port's factory its prelude binds, replaced by that read."""

    def __init__(self, bound, local_reads):
        super().__init__()
        self.bound, self.local_reads = bound, local_reads

    def leave_Name(self, original, updated):
        value = self.bound.get(original.value)
        if isinstance(value, cst.Name) and value.value in self.local_reads:  # a local of the port's factory
            value = self.local_reads[value.value]
        if isinstance(value, cst.Call) and default_keyword_read(value, self.bound) is not None:
            return value
        return updated


class _KeywordDefaults(cst.CSTTransformer):
    """Reads of keyword arguments the user may give replaced by their defaults; `keys`: the keys read. (A
    module-level class: see factory_values.py `_OwnKeywords`.)"""

    def __init__(self, bound):
        super().__init__()
        self.bound, self.keys = bound, []

    def leave_Call(self, original, updated):
        key = default_keyword_read(original, self.bound)
        if key is None:
            return updated
        self.keys.append(key)
        return original.args[1].value if len(original.args) == 2 else cst.Name("None")
