"""Translate whole module classes: `__init__`, `forward` -> `call`, helper methods, `get_config`.

Each class's `call` is translated once, for the layouts its first caller hands it (the main class gets its
example inputs in torch's layout); later callers convert to those layouts. That is how a convnet ends up with
one conversion at the boundary and none between blocks.
"""

import ast
import copy
import keyword
import re

import libcst as cst

from porter.frontend import gluon
from porter.frontend.annotations import declared_tensors
from porter.frontend.handed_functions import handed_functions
from porter.frontend.imports import dotted_name
from porter.frontend.returns import returns_once_at_end, returns_values_at_end
from porter.frontend.walk import descendants, walk
from porter.ir.layout import element_template
from porter.ir.lists import HeldTable, held_features, starred_images
from porter.ir.values import (
    ELEMENTWISE_CALLABLE,
    HANDED_CHANNELS,
    NONE_DEFAULT,
    UNKNOWN_MODULE,
    EinsumRecipe,
    ModuleRef,
    Value,
    is_permuted,
    python,
    stub_value,
    tensor,
)
from porter.passes.call_literals import static_value
from porter.passes.cleanup import clean_body
from porter.passes.context import DISPLAY_LIBRARIES, KERAS_RESERVED, ClassSignature
from porter.passes.conv_subclasses import conv_subclass_rank
from porter.passes.factory_models import FACTORY_SITE, handed_constructions, lay_out_factory_models
from porter.passes.function_attributes import HandedLambdas, LayoutFreeFunction, constructed_lambdas, same_arity
from porter.passes.held_recursion import held_alike_call
from porter.passes.lambda_signatures import classes_writing, translated_aside
from porter.passes.module_code import translate_class_statements, translate_module_assignments
from porter.passes.modules import (
    NAMES_OF_PATTERN,
    SET_BY_PATTERN,
    ModuleResolver,
    attribute_by_pattern,
    config_block_classes,
    constructed_without,
    name_pattern,
    stored_parameters,
)
from porter.passes.optional_values import holds_none
from porter.passes.order_wanted import PERMUTES, VIEWS
from porter.passes.rank_changing_rebinds import rank_changing_rebinds
from porter.passes.rank_inference import declared_params, infer_argument_ranks
from porter.passes.recursion import settled_output, settled_rank, widened_arguments
from porter.passes.statements import INDENT, BodyTranslator, handed_heads
from porter.passes.unhanded_flags import unhanded_defaults
from porter.passes.unhanded_params import UNHANDED, unhanded_none_params


class ClassBodyTranslator(BodyTranslator):
    """BodyTranslator with the class-level hooks: signatures of called classes/methods, init bookkeeping."""

    def __init__(self, translator, info, mode, env, output_layout=None, static_attrs=None):
        super().__init__(translator.ctx, info, mode, env, output_layout)
        self.translator = translator
        self.static_attrs = static_attrs or {}  # self attribute -> the literal value this specialisation has
        # following a factory's container as the model (factory_models.py): the owner of every class call's site
        self.construction_site = None
        self.function_name = None  # translating a module-level function: its name
        self.translates_call = False  # translating a class's `call` (its forward), not another method
        self.takes_held_tokens = False  # a method translated for a tensor held permuted (method_signature)

    def ctx_class_signature(self, class_name, args, kwargs, static=(), site=None):
        if self.construction_site is not None:
            return self.translator.class_signature(class_name, args, kwargs, static,
                                                   site=(self.construction_site, class_name))
        owner = self.ctx.ir.name if site is not None and self.ctx.ir is not None else None
        return self.translator.class_signature(class_name, args, kwargs, static,
                                               site=(owner, site) if owner is not None else None)

    def call_unknown_yet(self, class_name, args=(), kwargs=None):
        return self.translator.recursion_unknown(class_name, args, kwargs or {})

    def returns_held_orders(self):
        """A class's call that may take tokens held permuted may return them so (one the runtime may run, only where
        it takes them so itself: `call_module` and the Sequential convert both ways for a class declaring a
        permuted `porter_layout`); a method whose one return ends it, where it takes tokens so itself (its callers
        are the class's own code: `self._convolve(x)`)."""
        if self.output_layout is not None or self.mode != "forward":
            return False
        if self.translates_call:
            return self.translator.takes_held_orders(self.info) and (
                self.info.name not in self.translator.runtime_run or self.takes_held_tokens)
        return self.returns_pending_permute and self.takes_held_tokens

    def in_translation(self, class_name):
        return class_name in self.translator.in_progress

    def translation_mark(self):
        if self.ctx.ir is None or self.mode != "forward":
            return None
        return self.translator.trial_mark()

    def forget_translations(self, mark):
        if mark is not None:
            self.translator.undo_translation(*mark)

    def holds_recursion(self, refs):
        return not any(ref.class_name in self.translator.unheld_recursions for ref in refs)

    def note_held_recursions(self, calls):
        self.translator.held_recursions.extend(calls)

    def fixes_other_layout(self, class_name, args):
        translator = self.translator
        info = translator.source.classes.get(class_name)
        forward = info.find_method("forward") if info is not None else None
        if forward is None or class_name in self.ctx.signatures or not args or not args[0].is_tensor or \
                not args[0].channels_last or (args[0].rank is not None and args[0].rank <= 2):
            return False
        params = [p for p in declared_params(forward) if p.name.value != "self"]
        # (a first use porter cannot type, PreConvBlock's norm from a factory, takes a channels-last image as
        # well: `prefers_channels_last`; a block that, translated for the image as it lies, moves nothing: a
        # channel LayerNorm transposing the channels last itself, wav2vec2's, is kept so)
        return bool(params) and params[0].star not in ("*", "**") and \
            translator.layout_preference(info, params[0].name.value, depth=0) != "any" and \
            not translator.prefers_channels_last(info, params[0].name.value, depth=0, rank=args[0].rank) and \
            not translator.takes_as_handed(class_name, args)

    def takes_another_rank(self, class_name, value):
        return self.translator.takes_another_rank(class_name, [value])

    def takes_arguments(self, class_name, args, kwargs):
        info = self.translator.source.classes.get(class_name)
        forward = info.find_method("forward") if info is not None else None
        if forward is None:
            return True
        params = [p for p in declared_params(forward) if p.name.value != "self"]
        if any(p.star == "*" for p in params) or any(v.kind == "starred" for v in args):
            return True
        names = {p.name.value for p in params}
        required = [p.name.value for p in params[len(args):] if p.default is None and p.star not in ("*", "**")]
        if not any(k.startswith("**") for k in kwargs) and any(name not in kwargs for name in required):
            return False  # (`DPNFinalBlock(x1, x2)` never takes an ordinal child's one image)
        return len(args) <= len(params) and (any(p.star == "**" for p in params) or
                                              all(k.startswith("**") or k in names for k in kwargs))

    def self_attribute(self, attr):
        value = super().self_attribute(attr)
        if attr in self.static_attrs:  # a literal the constructor stored (never a module, whatever the scan made of
            return python(value.code, static=self.static_attrs[attr])  # a list argument)
        if value.kind == "python" and self.mode == "forward" and self.info is not None:
            free = self.translator.layout_free_function(self.info, attr, self)
            if free is not None:  # a lambda every construction hands in (computing alike in any layout, or not)
                return value.but(static=free)
        return value

    def ctx_method_signature(self, method, args, kwargs):
        return self.translator.method_signature(self.info, method, args, kwargs)

    def construction_code(self, class_name, code, node):
        """`code` building a `class_name` instance (at `node`), told the layouts a factory-built model runs it in
        when this is a function only factories use (factory_models.py)."""
        told = self.translator.factory_layouts(self.function_name, class_name)
        if told is None or id(node) in self.translator.factory_handed:
            return code
        return f"{code}.with_layouts({told[0]!r}, {told[1]!r})".replace("'", '"')

    def ctx_function_signature(self, name, args, kwargs):
        return self.translator.function_signature(name, args, kwargs)

    def init_assign(self, small, targets, pad):
        value = self.expr(small.value)
        ir = self.ctx.ir
        for target in targets:
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                    target.value.value == "self":
                name = target.attr.value
                self.note_attribute(name, value)
            elif isinstance(target, (cst.Tuple, cst.List)) and value.kind == "tuple" and value.items is not None and \
                    len(value.items) == len(target.elements) and _is_self_attribute(target.elements[0].value):
                for element, item in zip(target.elements, value.items):  # `self.head, self.output = a, b`
                    if _is_self_attribute(element.value):
                        self.note_attribute(element.value.attr.value, item)
                    else:
                        self.bind_target(element.value, item)
            else:
                self.bind_target(target, value)
        left = " = ".join(self.target_code(t) for t in targets)
        del ir
        return [f"{pad}{left} = {value.code}"]

    def note_attribute(self, name, value):
        ir = self.ctx.ir
        if name in KERAS_RESERVED and name not in ir.renamed.values():
            ir.renamed[f"{name}_"] = name
        ref = self.module_env.get(f"self.{name}")
        if isinstance(ref, list):  # a plain Python list of layers (torch does not register it; Keras tracks it)
            ref = ModuleRef("list", elements=tuple(ref), ordered=False)
        if value.kind == "module":
            ir.attributes[name] = ref if ref is not None and ref.kind != "unknown" else (
                value.module or ModuleRef("unknown"))
        elif ref == ELEMENTWISE_CALLABLE and value.kind == "python" and value.static is None and \
                name not in ir.attributes:  # `self._activation_fn = activation_fn` defaulting to F.relu (modules.py)
            ir.attributes[name] = ref
        elif value.is_tensor and value.code.startswith("self.parameter("):
            ir.attributes[name] = "parameter"
            ir.attributes[f"{name}#rank"] = value.rank
        elif name not in ir.attributes:
            ir.attributes[name] = "tensor" if value.is_tensor else "value"
        # a list of tensors (YOLO's `self.grid = [torch.empty(0) for _ in range(nl)]`, refilled in forward): its
        # items are tensors in torch's order, of a rank the refills decide (while every assignment binds one)
        template = element_template(value) if value.kind == "tuple" else None
        items = template.but(code="", rank=None, layout="source", static=None, varies_along=None, unit_dims=None) \
            if template is not None and template.is_tensor else None
        _note_agreed(ir.attributes, f"{name}#items", items)
        # a torch function the attribute holds (`self.pool = F.max_pool2d`, `partial(F.interpolate, scale_factor=2)`):
        # its calls are that function's, while
        # every assignment binds the same one
        function = value.static if isinstance(value.static, tuple) and value.static[:1] == ("rule-function",) \
            else None
        _note_agreed(ir.attributes, f"{name}#function", function)

    def note_init_call(self, node):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("register_buffer", "register_parameter") and \
                node.args and isinstance(node.args[0].value, cst.SimpleString):
            name = node.args[0].value.evaluated_value
            value = self.expr(node.args[1].value) if len(node.args) > 1 else python("None")
            kind = "buffer" if func.attr.value == "register_buffer" else "parameter"
            self.ctx.ir.attributes[name] = kind
            self.ctx.ir.attributes[f"{name}#rank"] = value.rank
        if isinstance(func, cst.Name) and func.value == "setattr" and len(node.args) == 3 and \
                dotted_name(node.args[0].value) == "self" and name_pattern(node.args[1].value) is not None:
            value = self.expr(node.args[2].value)  # `setattr(self, f"pos_embed{i + 1}", pos_embed)` of a Parameter:
            if value.is_tensor:  # what `getattr(self, f"pos_embed{i + 1}")` reads (tensor_by_pattern)
                self.ctx.ir.attributes[SET_BY_PATTERN + name_pattern(node.args[1].value)] = ("tensor", value.rank)
        if isinstance(func, cst.Attribute) and func.attr.value == "add_module" and len(node.args) == 2 and \
                isinstance(node.args[0].value, cst.SimpleString):
            name = node.args[0].value.evaluated_value
            self.ctx.ir.attributes[name] = self.module_env.get(f"self.{name}", ModuleRef("unknown"))


class FileTranslator:
    """Translates every module class of a SourceFile into Keras class code (text) and ModuleIRs."""

    def __init__(self, ctx, example_values=None):
        self.ctx = ctx
        self.source = ctx.source
        self.example_values = example_values or {}
        self.class_code = {}
        self.method_code = {}  # (class, method) -> code lines
        self.plain_method_code = {}  # (class, method) -> code lines of a method `forward` never calls
        self.config_method_code = {}  # (plain class, method) -> translated body of a method that uses torch
        self.function_code = {}
        self.specialised_code = {}  # class -> {static values: (call body, (arg layouts, output layout), ...)}
        self.layout_trials = {}  # (class, static values, arg layouts) -> the same, translated for other layouts
        self.function_trials = {}  # (function, arg layouts) -> (signature, body, runtime names it used)
        self.function_variant_code = {}  # function -> {arg layouts: (name, body)}: translations for other layouts
        self.held_variants = {}  # function read as a value -> its variant for channels-last images
        # module-level model functions the file hands its classes and functions as values (`Unit(c, shuffle)`):
        # whatever holds one calls it through call_module, which hands it torch's layout, so its own name is its
        # translation for that layout (frontend/handed_functions.py)
        self.function_values = handed_functions(self.source)
        self.layout_sites = {}  # layout trial key -> [(class, attribute)] whose instance runs that case of call
        self.bound_sites = {}  # (class, attribute) -> the signature of the case its instance is told to run
        self.speculative = 0  # > 0 while translating a case or trial that may be dropped: it tells no instance
        self.in_progress = set()
        self.recursive_methods = set()  # (class, method) of methods that call themselves
        self.kind_cases = {}  # class -> {kind handed ("tuple"/"tensor"): trial key}: cases `call` picks at run time
        self.generic_sites = set()  # (class, attribute) whose instance a translated call runs in the generic case
        self.function_attributes = {}  # (class, attribute) -> LayoutFreeFunction, HandedLambdas or None (function_attributes.py)
        self.recursive_calls = {}  # class -> [(args, kwargs)] its own call hands it while being translated
        self.recursion_outputs = {}  # class calling itself -> what its call is taken to return (recursion.py)
        self.held_recursions = []  # HeldRecursion calls a lambda run as written makes (held_recursion.py)
        self.unheld_recursions = set()  # classes whose call, reached so, does not take what it is handed as held
        self.generic_only = set()  # (class, static) whose case would mislead instances built with unknown values
        self.plain_returns = set()  # classes whose returns disagree (a tuple here, a tensor there): torch's layout
        # ((class, static) for a specialisation's)
        self.factory_functions = frozenset()  # functions whose constructions are told a factory model's layouts
        self.factory_handed = frozenset()  # ids of their constructor calls handed to other classes: not told
        self.argument_ranks = {}  # (scope, parameter) -> the rank its uses fix (rank_inference.py)
        self.runtime_run = frozenset()  # classes the runtime may call (`runtime_run_classes`)

    # --- entry point -------------------------------------------------------------------------------------
    def translate(self, main_class):
        self.param_hints = {}
        self.siblings = []  # groups of block classes handed in for one parameter (scan_constructions)
        self.scan_constructions()
        for _ in range(4):  # first passes: learn module-valued constructor arguments, handed down class to class
            learnt = repr(self.param_hints)  # (MaxVit -> MaxVitBlock -> MaxVitLayer -> MBConv's norm_layer); the
            # constructors' scans learn them: their bodies are translated once, in the pass below
            for info in self.source.classes.values():
                self.translate_init(info, learning=True)
            self.share_sibling_hints()
            if repr(self.param_hints) == learnt:
                break
        for info in self.source.classes.values():
            self.ctx.irs.pop(info.name, None)
        self.ctx.used_runtime.clear()
        self.ctx.function_signatures.clear()
        self.ctx.method_signatures.clear()
        self.function_code.clear()
        self.method_code.clear()
        self.specialised_code.clear()
        self.layout_trials.clear()
        self.function_trials.clear()
        self.function_variant_code.clear()
        self.layout_sites.clear()
        self.bound_sites.clear()
        self.kind_cases.clear()
        self.generic_sites.clear()
        self.generic_only.clear()
        self.module_code = translate_module_assignments(self, ClassBodyTranslator)  # `MEAN = torch.tensor(...)`
        for info in self.source.classes.values():
            self.translate_init(info)
        for name in sorted(self.function_values):  # (before any caller can fix them to its layouts: theirs are
            self.function_signature(name, [], {})  # variants, function_variant)
        self.class_statement_code = translate_class_statements(self, ClassBodyTranslator)
        self.argument_ranks = infer_argument_ranks(self)  # what the uses of untyped arguments fix
        self.siblings.extend(self.container_class_groups())
        self.runtime_run = frozenset(self.runtime_run_classes())
        if main_class is not None:
            args = self.example_values.get(main_class)
            self.translate_forward(self.source.classes[main_class], args, output_layout="io")
        self.specialise_siblings()
        held = self.held_classes()
        alone = self.outermost_first(self.source.classes.values())
        called = held - self.runtime_run  # held as attributes only translated code calls (`self.mlp(x)`): laid
        # out for what their holders hand them, not for images a layer somewhere inside might take (timm's Mlp
        # with its `partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear`, called on token sequences)
        for turn in ("first", "then", "last"):  # the blocks that take channels-last images first: the classes
            for info in alone:  # they call are laid out for them; those nobody's translation reached, last
                if info.name in self.ctx.signatures or turn != "last" and info.name in called:
                    continue
                handed = self.runtime_held_args(info) if info.name in held else None
                if handed is not None or turn != "first":
                    self.translate_forward(info, handed, output_layout="source" if handed is None else None)
        self.factory_functions = lay_out_factory_models(self, ClassBodyTranslator)
        self.factory_handed = handed_constructions(self.source, self.factory_functions)
        for name in self.factory_functions:  # (translated before the layouts were known: again, telling them)
            self.ctx.function_signatures.pop(name, None)
            self.function_code.pop(name, None)
        for name in self.source.model_functions():
            if name not in self.ctx.function_signatures:
                self.function_signature(name, [], {})
        self.held_variants = self.channels_last_variants()
        self.finish_specialisations()
        for info in classes_writing(self.source, self.ctx.lambda_signatures):  # (their lambdas, translated for
            self.translate_init(info)  # the layouts the calls hand them: lambda_signatures.py)
        self.translate_plain_methods()
        self.translate_config_methods()
        return self

    # --- __init__ ----------------------------------------------------------------------------------------
    def translate_init(self, info, learning=False):
        """The class's ModuleIR attributes and translated `__init__`; `learning`: only what scanning the constructor
        learns (the modules its parameters and attributes hold, `param_hints`), its body left untranslated (a third
        of translating a 3,500-line file went to bodies the learning passes translated and threw away)."""
        ir = self.ctx.ir_for(info)
        self.ctx.current.append(ir)
        try:
            init = info.methods.get("__init__")
            params = declared_params(init) if init is not None else []
            ir.init_params = [(p.name.value, self.source.code_of(p.default) if p.default is not None else None)
                              for p in params if p.name.value != "self"]
            resolver = ModuleResolver(self.source, self.ctx.module_rules, self.source.class_named, self.param_hints)
            module_env = self.parameter_modules(info, params, resolver)
            inherited = info.find_method("__init__") if init is None and self.param_hints.get(info.name) else None
            if inherited is not None:  # a subclass keeping its base's constructor (torchvision's FCN(backbone,
                # classifier) of `_SimpleSegmentationModel`): what its constructions hand in, as the base stores it
                module_env = self.parameter_modules(info, declared_params(inherited), resolver)
            for base in info.bases:  # attributes the in-file base classes create
                base_ir = self.ctx.irs.get(base)
                if base_ir is not None:
                    ir.attributes.update(base_ir.attributes)
                    ir.renamed.update(base_ir.renamed)
                    module_env.update({f"self.{k}": v for k, v in base_ir.attributes.items()
                                       if isinstance(v, ModuleRef)})
            ir.renamed.update(info.saved_names)  # a Gluon Block saving its parameters under other names
            if init is not None or inherited is not None:
                resolver.scan_body((init or inherited).body, module_env, info)
            for key, ref in module_env.items():
                if key.startswith("self."):
                    ir.attributes.setdefault(key[5:], ref)
                    if key[5:] in KERAS_RESERVED:
                        ir.renamed[key[5:] + "_"] = key[5:]
            lines = []
            if init is not None and not learning:
                translator = ClassBodyTranslator(self, info, "init", {p.name.value: python(p.name.value)
                                                                      for p in params})
                translator.module_env = module_env
                body, _ = translator.block(init.body, 2)
                lines = self.fix_super_init(info, body)
            self.class_code[(info.name, "__init__")] = lines
            for name, ref in module_env.items():
                if name.startswith("self.") and isinstance(ref, ModuleRef) and not (
                        ref.kind == "unknown" and ir.attributes.get(name[5:]) in ("parameter", "buffer")):
                    # (a Gluon parameter made under an `if`, `if use_bias: self.bias = self.params.get(...)`, is
                    # one: the translated constructor said so)
                    ir.attributes[name[5:]] = ref
            if module_env.get("#setattr"):
                ir.attributes["#setattr"] = _one_kind(module_env["#setattr"])
            for name, refs in module_env.items():
                if name.startswith(SET_BY_PATTERN):
                    ir.attributes[name] = list(refs)
                elif name.startswith(NAMES_OF_PATTERN):  # (a list of attribute names: its pattern)
                    ir.attributes[name] = refs
            if module_env.get("#children"):  # (a plain module's `self.add_module(f"b{i}", block)`: its children too)
                ir.attributes["#children"] = ModuleRef(info.container_base or "list",
                                                       elements=tuple(module_env["#children"]), ordered=False)
            elif info.container_base in ("list", "dict") and init is not None:  # `super().__init__({...})`
                children = resolver.sequential_subclass(info)
                if children.elements:
                    ir.attributes["#children"] = ModuleRef(info.container_base, elements=children.elements,
                                                           ordered=False)
            elif info.container_base == "sequential":  # the children its __init__ hands to super().__init__
                children = resolver.sequential_subclass(info)
                added = resolver.added_children(info)  # and those its owners add (`self.branches.add_module(...)`)
                if added and children.kind == "sequential" and (
                        children.elements or not (init is not None and isinstance(init.params.star_arg, cst.Param))):
                    ir.attributes["#children"] = ModuleRef(
                        "sequential", elements=tuple(dict.fromkeys((*children.elements, *added))), ordered=False)
                elif added is None:
                    pass  # (a child porter cannot see: call_module converts at run time)
                elif children.elements or resolver.handed_no_children(info):  # (none: `LambdaReduce(fn)` everywhere)
                    ir.attributes["#children"] = \
                        ModuleRef("sequential", elements=children.elements, ordered=False)
        finally:
            self.ctx.current.pop()

    def scan_constructions(self):
        """Constructor arguments in module-level code (`ResNet(BasicBlock, [2, 2])` in a factory or __main__),
        also through a factory's parameters (`_resnet(Bottleneck, ...)` calling `ResNet(block, ...)`). Classes
        handed in for the same parameter are alternatives: they get the same specialisation (`siblings`)."""
        resolver = ModuleResolver(self.source, self.ctx.module_rules, self.source.class_named, self.param_hints)
        classes, functions = self.source.classes, self.source.functions
        factories, module = self.source.factories, self.source.module
        passed = {}  # (callee, parameter) -> in-file classes handed to it, in source order
        calls = []  # (enclosing function or None, call node)
        loose = []  # (keyword, class) a `dict(...)` of constructor arguments names: for whichever class takes it

        class Finder(cst.CSTVisitor):
            def __init__(self):
                self.function = []

            def visit_ClassDef(self, node):
                return False

            def visit_FunctionDef(self, node):
                self.function.append(node.name.value)

            def leave_FunctionDef(self, node):
                self.function.pop()

            def visit_Call(self, node):
                name = node.func.value if isinstance(node.func, cst.Name) else None
                if name == "dict":  # `model_args = dict(..., block=DlaBasic)` handed on as `**kwargs` (timm)
                    loose.extend((a.keyword.value, a.value.value) for a in node.args if a.keyword is not None and
                                 isinstance(a.value, cst.Name) and a.value.value in classes)
                if name in classes or name in functions:
                    calls.append((self.function[-1] if self.function else None, node))
                elif self.function and self.function[-1] in factories:  # a Gluon model-zoo factory's
                    # `resnet_class(block_class, ...)`: the classes its tables name
                    calls.extend((self.function[-1], call) for call in gluon.table_calls(
                        node, functions[self.function[-1]], classes, module))

        walk(self.source.module, Finder())
        construction = self.entry_construction()
        if construction is not None:
            calls.append((None, construction))
        handed_up = []  # (base class, the call of its __init__ in a subclass's __init__, leading args to skip)
        for info in classes.values():
            init = info.methods.get("__init__")
            if info.bases and init is not None:
                handed_up.extend((info.bases[0], call, skip) for call, skip in _base_init_calls(init, info.bases[0]))
        for callee, node, skip in [(node.func.value, node, 0) for _, node in calls] + handed_up:
            # what each parameter of a factory or class receives (a subclass handing `block_cls=BlockB` to its
            # base's constructor too: the classes handed are alternatives of one parameter)
            definition = functions.get(callee) or (classes[callee].find_method("__init__") if callee in classes
                                                   else None)
            if definition is None:
                continue
            names = [p.name.value for p in definition.params.params]
            names = names[1:] if callee in classes else names
            for position, arg in enumerate(node.args[skip:]):
                parameter = arg.keyword.value if arg.keyword is not None else (
                    names[position] if position < len(names) and not arg.star else None)
                if parameter is not None and isinstance(arg.value, cst.Name) and arg.value.value in classes:
                    found = passed.setdefault((callee, parameter), [])
                    if arg.value.value not in found:
                        found.append(arg.value.value)
        for parameter, handed in loose:  # a class-valued keyword in a dict of constructor arguments: for each
            for name, info in classes.items():  # class whose constructor has that parameter
                init = info.find_method("__init__")
                if init is not None and parameter in [p.name.value for p in init.params.params[1:]]:
                    found = passed.setdefault((name, parameter), [])
                    if handed not in found:
                        found.append(handed)
        for function, node in calls:
            if node.func.value not in classes:
                continue
            env = {}
            for (callee, parameter), handed in passed.items():
                if callee == function:  # `ResNet(block, ...)` inside `_resnet(block, ...)`
                    env[parameter] = ModuleRef("classobj", elements=(ModuleRef("class", class_name=handed[0]),))
            if function in functions:
                env.update(_modules_built_before(resolver, functions[function], node, env))
            # (the port's own construction of the main class builds the model: what it hands is laid out for)
            resolver.note_constructor_args(node.func.value, node, env, None,
                                           keep_class_defaults=node is not construction)
        self.siblings = [handed for (callee, _), handed in passed.items() if len(handed) > 1]
        for name in functions:  # a function returning one of several subclasses of one torch layer
            alternatives = resolver.class_alternatives(name)
            if len(alternatives) > 1:
                self.siblings.append(alternatives)
        # block classes config objects carry (`cnf.block(...)`: MBConv or FusedMBConv) are alternatives too
        self.siblings.extend(list(group) for group in config_block_classes(self.source, self.source.class_named).values()
                             if len(group) > 1)
        for (callee, parameter), handed in passed.items():  # a factory's parameter passed on to a class
            for other_callee, other_parameter in list(passed):
                if other_callee in classes and callee in functions and \
                        self._passes_on(functions[callee], parameter, other_callee, other_parameter):
                    merged = passed[(other_callee, other_parameter)]
                    self.siblings.append(sorted(set(merged) | set(handed), key=(merged + handed).index))

    def entry_construction(self):
        """The construction of the main class the port's factory makes (model_entry.py), as a call node: what a
        factory reading found it handed (vitamin.py's `embed_layer=partial(HybridEmbed, backbone=...)` set into
        `kwargs` by a helper before timm's builder), or None."""
        entry = getattr(self.ctx, "model_entry", None)
        if entry is None or entry.as_written or entry.class_name not in self.source.classes:
            return None
        try:
            call = cst.parse_expression(f"{entry.class_name}({', '.join(entry.arguments)})")
        except cst.ParserSyntaxError:
            return None
        return call if isinstance(call, cst.Call) else None

    @staticmethod
    def _passes_on(function, parameter, class_name, class_parameter):
        """Whether `function` calls `class_name(...)` with its own `parameter` (positionally or by keyword)."""
        found = []

        class Finder(cst.CSTVisitor):
            def visit_Call(self, node):
                if isinstance(node.func, cst.Name) and node.func.value == class_name:
                    found.extend(a for a in node.args if isinstance(a.value, cst.Name) and a.value.value == parameter)

        walk(function, Finder())
        return bool(found)

    def share_sibling_hints(self):
        """Constructor arguments learnt for one block class hold for its alternatives (`_make_layer` calls
        `block(inplanes, planes, stride, downsample)` whichever block class it was handed)."""
        for group in self.siblings:
            for name in group:
                for other in group:
                    for parameter, ref in self.param_hints.get(other, {}).items():
                        self.param_hints.setdefault(name, {}).setdefault(parameter, ref)

    def container_class_groups(self):
        """Block classes held side by side in one container (NASNet's `norm_1`: a FirstCell, then NormalCells):
        a loop over the container (`for cell in self.norm_1: x, x_prev = cell(x, x_prev)`) is translated for the
        first, so the others take its specialisation (`specialise_siblings`)."""
        groups = []
        for ir in list(self.ctx.irs.values()):
            for ref in ir.attributes.values():
                if isinstance(ref, ModuleRef) and ref.kind in ("sequential", "list"):
                    names = list(dict.fromkeys(e.class_name for e in ref.elements
                                               if isinstance(e, ModuleRef) and e.kind == "class"))
                    if len(names) > 1 and names not in groups:
                        groups.append(names)
        return groups

    def held_classes(self):
        """Names of the classes another class's modules or constructor arguments hold (blocks, not models)."""
        held = set()

        def collect(ref):
            if isinstance(ref, ModuleRef):
                if ref.kind == "class":
                    held.add(ref.class_name)
                for inner in tuple(ref.elements) + tuple(ref.alternatives or ()):
                    collect(inner)

        for ir in self.ctx.irs.values():
            for ref in ir.attributes.values():
                collect(ref)
        for hints in self.param_hints.values():
            for ref in hints.values():
                collect(ref)
        for group in self.siblings:
            held.update(group)
        for statement in self.source.module.body:  # built or named by another class, a function or a table (a
            # stage builder, a layer factory and its `_NORM_ACT_MAP`); a model used alone still takes torch's
            # layout (TorchModule.__call__ converts for it)
            own = statement.name.value if isinstance(statement, (cst.ClassDef, cst.FunctionDef)) else None
            held.update(node.value for node in self.source.nodes_in(statement, cst.Name) if
                        node.value != own and node.value in self.source.classes)
        held.discard(self.ctx.main_class)
        return held

    def runtime_held_args(self, info):
        """The arguments a block no translated code calls (a factory or a helper function builds it, a container
        or `call_module` runs it) is translated for: its image channels-last when its first use of it is a
        channels-last layer, or one porter cannot type or one that does not care in a block that convolves images
        (pools and norms also run on (N, H, W, C) tensors in torch's order: a Swin stage's) (the containers and `call_module` read the layout its instances declare and convert
        only for another), else None (torch's layout in and out)."""
        forward = info.find_method("forward")
        params = [p for p in declared_params(forward) if p.name.value != "self"] if forward is not None else []
        if not params or params[0].star in ("*", "**") or params[0].default is not None:
            return None
        declared = declared_tensors(params[0])
        if declared is not None:  # (HRNet's exchange unit: a list of images, one per resolution)
            rank = self.spatial_rank(info, family="conv")
            if declared == "list" and (rank or 0) >= 4 and _tests_kind(forward, params[0].name.value):
                # an image or a list of them (SelecSLS's blocks: `[x]` first, then their predecessor's pair), held
                # channels-last either way, as `call_module(..., held="channels_last")` hands both over
                return [tensor(params[0].name.value, None, "channels_last")], {}
            if declared != "list" or (rank or 0) < 4:
                return None  # (taken in torch's layout)
            return [Value(params[0].name.value, "tuple", items=None,
                          static=("each", tensor("", rank, "channels_last")))], {}
        rank = self.spatial_rank(info) or self.permuted_image_rank(info, params[0].name.value)
        if (rank or 0) <= 2:
            return None
        if self.folds_sequence_first(info, forward, params[0].name.value):
            return None  # (tokens it folds into an image itself: taken as they lie)
        preference = self.layout_preference(info, params[0].name.value, depth=0)
        if preference != "channels_last" and (preference not in ("unknown", "any") or
                                              (self.spatial_rank(info, family="conv") or 0) < 4):
            return None  # (not known to take channels-last images: only a block convolving images is taken to)
        return [tensor(params[0].name.value, rank, "channels_last")], {}

    def outermost_first(self, infos):
        """Classes the main class does not reach, those no other class holds first (a second model in the file,
        such as GluonCV's cifar_ResidualAttentionModel): a block then takes the layouts its holder calls it with,
        not torch's order from being laid out alone before it."""
        held = set()

        def collect(ref):
            if isinstance(ref, ModuleRef):
                if ref.kind == "class":
                    held.add(ref.class_name)
                for element in ref.elements:
                    collect(element)

        for ir in self.ctx.irs.values():
            for ref in ir.attributes.values():
                collect(ref)
        infos = list(infos)
        return [i for i in infos if i.name not in held] + [i for i in infos if i.name in held]

    def specialise_siblings(self):
        """Block classes handed in for the same parameter take the specialisation the first one got: a Sequential
        of `Bottleneck`s then runs in the layouts the translator followed for `BasicBlock`."""
        for group in self.siblings:
            done = [name for name in group if name in self.ctx.signatures and self.ctx.signatures[name].arg_values]
            if not done:
                continue
            model = self.ctx.signatures[done[0]]
            for name in group:
                if name not in self.ctx.signatures and not self.takes_another_rank(name, model.arg_values):
                    self.class_signature(name, list(model.arg_values), {})

    def takes_another_rank(self, class_name, arg_values):
        """Whether `class_name`'s forward takes its first tensor in a rank other than the first of `arg_values`
        (rank_inference.py read it off its uses): EfficientFormer's token block (B, N, C) held in one Sequential
        with its image block (B, C, H, W) is no alternative of it, and keeps the layout its own uses want."""
        info = self.source.classes.get(class_name)
        forward = info.find_method("forward") if info is not None else None
        first = next((v for v in arg_values if isinstance(v, Value) and v.is_tensor), None)
        if forward is None or first is None or first.rank is None:
            return False
        params = [p.name.value for p in declared_params(forward) if p.name.value != "self"]
        rank = self.argument_ranks.get(((class_name, "forward"), params[0])) if params else None
        return rank is not None and rank != first.rank

    def parameter_modules(self, info, params, resolver):
        """Constructor parameters that hold modules or module classes: defaults, --init-args, call sites."""
        env = {}
        init_args = self.ctx.init_args if info.name == self.ctx.main_class else {}
        unhanded = unhanded_none_params(self.source, info, params, self.param_hints, self.ctx.main_class)
        if unhanded:
            env[UNHANDED] = unhanded
        for param in params:
            name = param.name.value
            hint = self.param_hints.get(info.name, {}).get(name)
            if name not in init_args and resolver.elementwise_default(info.name, param):
                # `activation_fn=F.relu` (I3D's Unit3D), every construction leaving it or handing None or another
                # elementwise function: called directly, the image's layout passed through
                env[name] = ELEMENTWISE_CALLABLE
                continue
            if hint is not None and not (name in init_args):
                env[name] = hint
                continue
            candidate = None
            if name in init_args and isinstance(init_args[name], str):
                # (a string naming a class of the file, `{"block": "Bottleneck"}`; not a keyword such as "class")
                candidate = cst.Name(init_args[name]) if init_args[name].isidentifier() and \
                    not keyword.iskeyword(init_args[name]) else None
            elif param.default is not None:
                candidate = param.default
            if candidate is not None:
                ref = resolver.class_ref(candidate, {})
                if ref is not None:
                    env[name] = ModuleRef("classobj", elements=(ref,))
                elif isinstance(candidate, cst.Call) and name not in init_args:
                    # a module built as the default (`activation_fn=nn.ReLU(inplace=True)`): the instance's kind
                    instance = resolver.ref_of(candidate, {}, info)
                    if instance is not None and instance.kind in ("rule", "class"):
                        env[name] = instance
        return env

    def fix_super_init(self, info, body):
        """`super().__init__()` -> pass Keras kwargs through; record constructor args for get_config."""
        lines, done = [], False
        init = info.methods.get("__init__")
        star = init.params.star_kwarg.name.value if init is not None and init.params.star_kwarg is not None else None
        # the source's own **kwargs are torch's; only Keras' layer keywords go on to Keras
        keras_kwargs = f"**{{k: v for k, v in {star}.items() if k in ('name', 'dtype', 'trainable')}}" if star \
            else "**kwargs"
        init_params = [p for p, _ in self.ctx.irs[info.name].init_params if not p.startswith("*")]
        config = ", ".join(f"{p!r}: {p}" for p in init_params)
        # `Base.__init__(self, ...)` (the pre-super() spelling) of an in-file base is the base's constructor too
        base_calls = tuple(f"{base}.__init__(self" for base in info.bases[:1])
        # `d2l.Module.__init__(self)` in GRU(RNN): an ancestor's constructor, skipping the direct base's
        ancestor_calls = tuple(f"{name}.__init__(self" for name in _further_ancestors(info))
        for line in body:
            stripped = line.strip()
            if not done and ancestor_calls and stripped.startswith(ancestor_calls) and stripped.endswith(")"):
                pad = line[:len(line) - len(stripped)]
                lines.append(f"{pad}{stripped[:stripped.rindex(')')].rstrip()}, {keras_kwargs})")
                lines.append(f"{pad}self.init_args = {{{config}}}")
                done = True
                continue
            explicit_base = stripped.startswith(base_calls) and stripped.endswith(")")
            if not done and (stripped.startswith("super(") and "__init__(" in stripped or explicit_base or
                             stripped.startswith("nn.Module.__init__(self")):
                pad = line[:len(line) - len(stripped)]
                if info.bases or info.container_base or info.layer_base:
                    inside = stripped[stripped.index("__init__(") + len("__init__("):stripped.rindex(")")]
                    if explicit_base:
                        inside = inside[len("self"):].lstrip().removeprefix(",").strip()
                    if (info.layer_base or info.bases) and star and f"**{star}" in inside.replace(" ", ""):
                        # a torch layer's subclass (or an in-file class's: timm's LayerNorm2dNoBias) hands its torch
                        # keywords on: the runtime layer, or the base's own filter, takes them (not twice)
                        call = f"super().__init__({inside})"
                    elif stripped.startswith("super()") or "super(" in stripped or explicit_base or \
                            info.layer_base:
                        call = f"super().__init__({inside + ', ' if inside.strip() else ''}{keras_kwargs})"
                    else:
                        call = f"super().__init__({keras_kwargs})"
                else:
                    call = f"super().__init__({keras_kwargs})"
                lines.append(pad + call)
                lines.append(f"{pad}self.init_args = {{{config}}}")
                done = True
                continue
            lines.append(line)
        if not done:
            lines.insert(0, f"{INDENT * 2}super().__init__({keras_kwargs})")
            lines.insert(1, f"{INDENT * 2}self.init_args = {{{config}}}")
        return lines

    def layout_free_function(self, info, attr, translator):
        """LayoutFreeFunction when every construction of `info` in the file hands the attribute `attr` a lambda
        whose body `translator` translates to the same code for tensors held channels-last as for tensors in
        torch's order (and keeps their layout); HandedLambdas when they are lambdas of one number of parameters
        that are not; else None (passes/function_attributes.py)."""
        key = (info.name, attr)
        if key not in self.function_attributes:
            lambdas = constructed_lambdas(self.source, info, stored_parameters(info)).get(attr)
            if lambdas is None or same_arity(lambdas) is None:
                self.function_attributes[key] = None
            elif all(self.lambda_layout_free(function, translator) for function in lambdas):
                self.function_attributes[key] = LayoutFreeFunction(lambdas)
            else:
                self.function_attributes[key] = HandedLambdas(lambdas)
        return self.function_attributes[key]

    def lambda_layout_free(self, function, translator):
        """Whether `function`'s body is the same code on images held channels-last and in torch's order, handing
        back an image in the layout it was given (`x`, `x + y`); translated aside: nothing it notes is kept."""
        count = len(function.params.params)
        results = [translated_aside(translator, function, [tensor("", 4, layout)] * count)
                   for layout in ("channels_last", "source")]
        last, plain = results
        return last.is_tensor and plain.is_tensor and last.code == plain.code and last.rank == plain.rank == 4 and \
            last.layout == "channels_last" and plain.layout == "source"

    # --- forward -----------------------------------------------------------------------------------------
    def recursion_unknown(self, class_name, args, kwargs):
        """Whether a call of `class_name` met while translating it cannot be followed yet: noted (with what it
        hands) so that the class is translated again with its recursion settled."""
        if class_name not in self.in_progress:
            return False
        self.recursive_calls.setdefault(class_name, []).append((list(args), dict(kwargs)))
        return class_name not in self.recursion_outputs

    def class_signature(self, class_name, args, kwargs, static=(), site=None):
        if class_name in self.in_progress:
            self.recursive_calls.setdefault(class_name, []).append((list(args), dict(kwargs)))
        if static:
            return self.specialised_signature(class_name, args, kwargs, static, site)
        if class_name in self.ctx.signatures:
            self.widen_optional(class_name, (), args)
            variant = self.kind_variant(class_name, self.ctx.signatures[class_name], args, kwargs)
            if variant is not None:
                return variant
            return self.layout_variant(class_name, self.ctx.signatures[class_name], args, kwargs, (), site)
        if class_name in self.in_progress or class_name not in self.source.classes:
            return None
        return self.first_translation(self.source.classes[class_name], args, kwargs)

    def specialised_signature(self, class_name, args, kwargs, static, site=None):
        """The signature of `class_name`'s call specialised for an instance built with the literal values `static`
        ((attribute, literal text) pairs): its forward translated with those attributes known, in the layouts
        this caller hands over. The generic translation (any other instance) is made first, as for any class."""
        generic = self.class_signature(class_name, args, kwargs)
        key = (class_name, static)
        if key in self.generic_only:
            return generic
        if key in self.ctx.signatures:
            self.widen_optional(class_name, static, args)
            return self.layout_variant(class_name, self.ctx.signatures[key], args, kwargs, static, site)
        if generic is None or class_name in self.in_progress:
            return generic
        signature = self.first_translation(self.source.classes[class_name], args, kwargs, static, generic)
        if signature is not None and self.case_misleads_unknown_instances(class_name, static):
            # instances built with unknown values may hold these at run time and run this case, where their
            # callers (translated for the generic call) expect the generic call's layouts: the generic call serves
            self.generic_only.add(key)
            self.specialised_code.get(class_name, {}).pop(static, None)
            self.ctx.signatures.pop(key, None)
            return generic
        return signature

    def case_misleads_unknown_instances(self, class_name, static):
        """Whether the case of `class_name`'s call for the literal values `static` takes or returns other layouts
        than the generic call, while some construction of the class may hold those values unknown to porter."""
        entry = self.specialised_code.get(class_name, {}).get(static)
        ir = self.ctx.irs.get(class_name)
        if entry is None or ir is None or not ir.arg_layouts:
            return False
        if entry[1] == (tuple(ir.arg_layouts), ir.layout_out):
            return False
        return constructed_without(self.param_hints, class_name, static)

    def widen_optional(self, class_name, static, args):
        """A caller handing an image for a parameter the class's call (its case for `static`) was translated with at
        its None default (a dual-path unit's x2, None from the container's first turn): that case translated again
        taking the image there (None at run time still reads as absent: `x2 is not None` is a run-time test), kept
        when it takes the other arguments and returns as before (its earlier callers' code holds), else dropped
        (optional_values.py)."""
        key = class_name if not static else (class_name, static)
        old = self.ctx.signatures.get(key)
        info = self.source.classes.get(class_name)
        if old is None or not old.done or info is None or class_name in self.in_progress or \
                self.speculative or not any(a.is_tensor and w.kind == "python" and holds_none(w)
                                            for a, w in zip(args, old.arg_values)):
            return
        handed = [a.but(channels=None, static=None) if a.is_tensor and w.kind == "python" and holds_none(w) else w
                  for a, w in zip(args, old.arg_values)] + list(old.arg_values[len(args):])
        code_key = (class_name, "call")
        kept = (old, self.class_code.get(code_key), dict(self.specialised_code.get(class_name, {})))
        del self.ctx.signatures[key]
        if static:
            self.specialised_code.get(class_name, {}).pop(static, None)
            new = self.translate_specialisation(info, (handed, {}), static)
        else:
            self.class_code.pop(code_key, None)
            new = self.translate_forward(info, (handed, {}), output_layout=None)
        if new is not None and new.done and _same_held(new.output, old.output) and all(
                _same_held(n, o) for n, o, a in zip(new.arg_values, old.arg_values, args)
                if not (a.is_tensor and holds_none(o))):
            return
        self.ctx.signatures[key] = kept[0]  # (another layout than its earlier callers were translated for)
        if kept[1] is not None:
            self.class_code[code_key] = kept[1]
        self.specialised_code[class_name] = kept[2]

    def kind_variant(self, class_name, signature, args, kwargs):
        """The signature for a caller handing a tuple where the class was translated for a tensor (or the other
        way round: a dual-path block chained in a Sequential takes the image first, its own (resid, dense) pair
        after): the class translated for what this caller hands, kept as a case of `call` chosen at run time by
        `isinstance(arg, (tuple, list))` when its code differs. None when the kinds agree."""
        info = self.source.classes.get(class_name)
        if info is None or not signature.done or class_name in self.in_progress or not signature.arg_values or \
                not args:
            return None
        handed, wanted = args[0], signature.arg_values[0]
        if {handed.kind, wanted.kind} == {"tensor", "tuple"}:
            trial, call_args = ("kind", handed.kind), self.handed_args(info, args)
        elif handed.is_tensor and wanted.is_tensor and handed.rank and wanted.rank and handed.rank != wanted.rank \
                and max(handed.rank, wanted.rank) > 2 and not handed.layout.startswith("permuted:"):
            # another rank (a block a Sequential runs on images and, elsewhere, on sequences): a case of its own,
            # taking the rank handed in the layout the class declares (containers convert to it)
            trial = ("kind", f"rank{handed.rank}")
            layout = "channels_last" if wanted.channels_last else "source"
            call_args = [handed.but(layout=layout, channels=None if layout != handed.layout else handed.channels)
                         ] + list(args[1:])
        else:
            return None
        key = (class_name, (), trial)
        if key not in self.layout_trials:
            self.translate_specialisation(info, _settled_values(call_args, kwargs), (), trial=trial)
        if key not in self.layout_trials:
            return None
        base = self.class_code.get((class_name, "call"))
        if base is not None and self.layout_trials[key][0] == base[1]:
            return self.ctx.signatures[key]  # the same code serves both kinds
        self.kind_cases.setdefault(class_name, {})[trial[1]] = key
        return self.ctx.signatures[key]

    def layout_variant(self, class_name, signature, args, kwargs, static, site=None):
        """The signature a caller handing `args` uses when the class was translated for other layouts: the class
        translated for the layouts handed over, when that gives the very same code (a layout-free body: any layout
        runs it, so nothing converts), or when the caller reaches the instance as its own attribute (`site`:
        (class, attribute)), which then tells the instance at construction which case of `call` it runs; else
        `signature`, which the caller converts to."""
        if site is not None and site in self.bound_sites:  # the instance was told its case: callers convert to it
            return self.bound_sites[site]
        info = self.source.classes.get(class_name)
        if info is None or not signature.done or class_name in self.in_progress or not signature.arg_values:
            return self.generic_use(site, signature)
        handed, handed_kwargs = self.handed_values(info, args, kwargs)
        swapped = [a for a, w in zip(handed, signature.arg_values) if a.is_tensor and w.is_tensor and
                   (a.rank is None or a.rank > 2) and {a.layout, w.layout} == {"source", "channels_last"}]
        held = [a for a, w in zip(handed, signature.arg_values) if a.is_tensor and w.is_tensor and is_permuted(a)
                and w.layout == "source"]
        if not swapped and not held:
            return self.generic_use(site, signature)
        if site is not None and site in self.generic_sites:
            return signature  # an earlier call of this instance runs the generic case: it cannot be told another
        layouts = tuple(v.layout if v.is_tensor else "python" for v in handed)
        key = (class_name, static, layouts)
        if key not in self.ctx.signatures:
            base = self.specialised_code.get(class_name, {}).get(static) if static else \
                self.class_code.get((class_name, "call"))
            if base is None:
                return signature
            self.translate_specialisation(info, (handed, handed_kwargs), static, trial=layouts)
        body, trial_layouts = self.layout_trials[key][:2]
        base = self.specialised_code[class_name][static][0] if static else self.class_code[(class_name, "call")][1]
        if body == base:
            return self.ctx.signatures[key]
        if held and not swapped:  # (tokens held permuted: only a body that runs on any order takes them as they lie)
            return self.ctx.signatures[key] if _without_notes(body) == _without_notes(base) else \
                self.generic_use(site, signature)
        if site is None or self.speculative or _conversions(body) >= _conversions(base) + len(swapped) or \
                info.container_base or info.layer_base or not self.built_by_init(site):
            return self.generic_use(site, signature)
        self.bound_sites[site] = self.ctx.signatures[key]
        sites = self.layout_sites.setdefault(key, [])
        if site not in sites:
            sites.append(site)
        return self.ctx.signatures[key]

    def generic_use(self, site, signature):
        """`signature` (the generic case), noting that the instance at `site` runs it: a later call of the same
        instance in other layouts then converts to it rather than telling the instance another case."""
        if site is not None and not self.speculative:
            self.generic_sites.add(site)
        return signature

    def first_translation(self, info, args, kwargs, static=(), generic=None):
        """`info`'s call (its case for `static`) translated for what its first caller hands. Tokens held permuted (a
        sequence-first model's `x.permute(1, 0, 2)` of batch-first tokens, left pending) are taken as they lie where
        that moves no more data than taking them in torch's order, counted over all the code the translation makes
        (the class and what it calls first): sequence-first attention blocks then run on the tokens where they lie,
        however they are reached (an attribute, a ModuleList's loop, a Sequential). Else that translation is taken
        back and the caller settles the order once (a CRNN's BiLSTM block viewing its output `recurrent.view(T * b,
        h)` would move the tokens inside at every use). A case for literal constructor values (`static`) takes
        tokens as the `generic` call does: it runs on every instance holding those values, whoever calls it."""
        handed = self.handed_values(info, args, kwargs)
        if generic is not None:
            held = [a.but(layout=w.layout) if a.is_tensor and w.is_tensor and a.rank == w.rank and (
                is_permuted(a) or is_permuted(w)) else a for a, w in zip(handed[0], generic.arg_values)]
            return self.translate_forward(info, (held + handed[0][len(held):], handed[1]), output_layout=None,
                                          static=static)
        if not any(is_permuted(v) for v in [*handed[0], *handed[1].values()]):
            return self.translate_forward(info, handed, output_layout=None, static=static)
        settled, before = _settled_values(*handed), self.trial_mark()
        signature = self.translate_forward(info, handed, output_layout=None, static=static)
        held_moves = self.moves_since(before)
        if signature is None:
            self.undo_translation(*before)
            return self.translate_forward(info, settled, output_layout=None, static=static)
        if held_moves == 0:
            return signature
        # (one move inside may save the caller's: where the result stays held, so that the next block takes it so)
        saved = 1 if signature.output is not None and is_permuted(signature.output) else 0
        self.undo_translation(*before)
        signature = self.translate_forward(info, settled, output_layout=None, static=static)
        if held_moves > self.moves_since(before) + saved:
            return signature
        self.undo_translation(*before)  # (fewer moves held: the tokens as they lie after all)
        return self.translate_forward(info, handed, output_layout=None, static=static)

    def takes_as_handed(self, class_name, args):
        """Whether `class_name`'s call, translated first for `args`, moves no data (that translation is kept); else
        it is taken back."""
        if self.speculative or class_name in self.in_progress:
            return False
        before = self.trial_mark()
        signature = self.class_signature(class_name, args, {})
        if signature is not None and signature.done and self.moves_since(before) == 0 and \
                [a.layout for a in signature.arg_values[:1]] == [args[0].layout]:
            return True
        self.undo_translation(*before)
        return False

    def trial_mark(self):
        """(the class being translated's IR, `translation_state`): what `undo_translation(*mark)` goes back to."""
        return self.ctx.ir, self.translation_state(self.ctx.ir)

    def moves_since(self, mark):
        """How many data-moving layout steps the code translated since `trial_mark` returned `mark` writes."""
        keys = mark[1][4]
        bodies = [table[key][1] for table, known in ((self.class_code, keys[3]), (self.method_code, keys[4]),
                                                     (self.function_code, keys[5]))
                  for key in set(table) - known if not (isinstance(key, tuple) and key[-1] == "__init__")]
        bodies += [self.specialised_code[name][static][0] for name, static in self.specialised_keys() - keys[-1]]
        return sum(_moves(body) for body in bodies)

    def handed_values(self, info, args, kwargs):
        """(args, kwargs) `info`'s call is translated for when a caller hands it `args` and `kwargs` (see
        `handed_args`); a tensor held permuted (a sequence-first `src.transpose(0, 1)`, stored batch-first) is
        taken as it lies by a class that may take it so (`first_translation` decides), else in torch's order."""
        args = self.handed_args(info, args)
        if self.takes_held_orders(info):
            return args, dict(kwargs)
        return _settled_values(args, kwargs)

    def takes_held_orders(self, info):
        """Whether `info`'s call may be translated for tensors in a permuted order: a plain module class (no layer
        or container base, not calling itself). The runtime's Sequential and `call_module` convert to the order a
        class declares in `porter_layout`."""
        return not (info.container_base or info.layer_base or info.name in self.recursive_calls)

    def runtime_run_classes(self):
        """Names of the classes the runtime may call: held in a container, among an attribute's alternatives, handed
        to a constructor, side by side with other blocks, or built by a module-level function."""
        found = set()

        def collect(ref, inside):
            if isinstance(ref, ModuleRef):
                if ref.kind == "class" and inside:
                    found.add(ref.class_name)
                for inner in tuple(ref.elements) + tuple(ref.alternatives or ()):
                    collect(inner, True)

        for ir in self.ctx.irs.values():
            for ref in ir.attributes.values():
                collect(ref, False)
        for hints in self.param_hints.values():
            for ref in hints.values():
                collect(ref, True)
        for group in self.siblings:
            found.update(group)
        for statement in self.source.module.body:  # (a stage builder, a layer factory, a table of classes)
            if not isinstance(statement, cst.ClassDef):
                found.update(node.value for node in self.source.nodes_in(statement, cst.Name)
                             if node.value in self.source.classes)
        return found

    def handed_args(self, info, args):
        """The argument Values `info`'s call is translated for when a caller hands it `args`: an image the block
        takes channels-last is converted once by the caller, so blocks chain without transposes."""
        args = list(args)
        rank = args[0].rank if args and args[0].is_tensor else None
        if rank is None and args and args[0].is_tensor and args[0].channels_last and \
                self.takes_source_first(info, known=True):
            args[0] = args[0].but(layout="source")  # a caller that lost track of the rank (an untyped module ran
            # on it: a sequence's norm) handing it to a block whose first layer porter knows works in torch's order
            # (a LayerNorm): converted once, whatever its rank, not laid out for images a later layer might take
            return args  # (timm's Mlp's `use_conv` Conv2d)
        if rank is None and args and args[0].is_tensor:
            rank = self.spatial_rank(info)  # a caller that lost track of the rank: the block's own layers tell
            if rank is not None and args[0].channels_last:
                args[0] = args[0].but(rank=rank)
        if args and args[0].is_tensor and not args[0].channels_last and (rank or 0) > 2:
            forward = info.find_method("forward")
            params = [p for p in declared_params(forward) if p.name.value != "self"] if forward is not None else []
            if params and self.prefers_channels_last(info, params[0].name.value, depth=0) and not (
                    rank == 3 and self.reorders_first(info, forward, params[0].name.value)):
                # the caller converts once; blocks then chain (not a sequence the block first transposes itself:
                # tokens folded into an image, `x.transpose(1, 2).view(B, C, H, W)`, a relabelling as they lie)
                args[0] = args[0].but(layout="channels_last", rank=rank)
        elif args and args[0].is_tensor and args[0].channels_last and rank == 3 and self.takes_source_first(info):
            # a sequence (N, L, C) held channels-last, handed to a block whose first layer works in torch's order
            # (LayerNorm, attention, Linear): the caller converts once instead of every layer inside converting
            args[0] = args[0].but(layout="source")
        return args

    def takes_source_first(self, info, known=False):
        """Whether `forward`'s first layer on its first parameter works in torch's order (LayerNorm, attention, a
        Linear: not one computing on a sequence held channels-last as it lies), the parameter not otherwise
        preferred channels-last; `known`: a layer porter knows so, not one it cannot type (a stage's `downsample`
        built from a norm factory and a conv, or an Identity)."""
        forward = info.find_method("forward")
        params = [p for p in declared_params(forward) if p.name.value != "self"] if forward is not None else []
        if not params or params[0].star in ("*", "**"):
            return False
        param = params[0].name.value
        first = self.first_layer(info, param)
        if known and not (hasattr(first, "kind") and self.ref_preference(first, 0) == "source"):
            return False
        return not self.prefers_channels_last(info, param, depth=0) and self.first_layer_layout(info, param) == \
            "source" and not _runs_on_held_sequence(first)

    def prefers_channels_last(self, info, param, depth, method="forward", rank=None):
        """Whether `forward`'s first real use of `param` is a channels-last layer (conv, norm, pool ...), looking
        into the class's own methods it is handed to (`scale = self._scale(input)`); or, for an image of rank 4 or
        more (no sequence), a module porter cannot type (a factory's layer, one handed in): `call_module` hands it
        the image in the layout it takes, and convnets' blocks, norms, pools and activations all take channels-last
        ones (the model's own input: a caller's rank-4 tensor in torch's layout may be one `permute(0, 2, 3, 1)`
        made channels-last already)."""
        preference = self.layout_preference(info, param, depth, method, rank=rank)
        return preference == "channels_last" or preference == "unknown" and (rank or 0) >= 4

    def layout_preference(self, info, param, depth, method="forward", function=None, rank=None):
        """The layout `forward`'s first real use of `param` works in: "channels_last" (a conv, norm, pool ...),
        "source", or "any" when nothing it does with it cares (a channel LayerNorm written with `torch.var(x,
        dim=1, keepdim=True)` and per-channel parameters): then whoever calls it decides, by what comes next.
        `function`: a module-level function of the file read instead of the method (a helper `forward` hands it to);
        `rank`: the parameter's, where known (a 2d pad handed a rank-3 tensor takes torch's unbatched form)."""
        if depth > 8:
            return "source"
        forward = function if function is not None else info.find_method(method)
        if forward is None:
            return "source"
        ir = self.ctx.irs.get(info.name)
        aliases = _plain_aliases(forward.body, param)
        calls = _calls_in_order(forward.body)
        bound = _loop_bound_modules(forward.body, ir.attributes if ir else {}, bool(info.container_base))
        rebinds = rank_changing_rebinds(forward.body, aliases)
        undecided = swapped = False
        for node in calls:
            if id(node) in rebinds:
                return "any"  # (`x = x.sum(1).mean(...)`: later layers take what the reduction made, not `param`)
            if isinstance(node.func, cst.Attribute) and _plain_receiver(node.func.value) in aliases and \
                    node.func.attr.value in PERMUTES and _sequence_reorder(node):
                swapped = True  # (`x = x.transpose(-2, -1)` before a Conv1d: wav2vec2's positional convolution)
                continue
            if _channels_last_permute_rank(node, aliases):
                return "channels_last"  # (`x.permute(0, 2, 3, 1)`: the image channels-last, then free to relabel)
            if _channels_first_permute_rank(node, aliases):
                return "source"  # (`x.permute(0, 3, 1, 2)`: torch's channels-last tensor, an image as it lies)
            if self.hands_to_lambda(info, node, aliases):
                return "unknown"  # (the children a kept lambda runs it through: `call_module`'s layouts, or held)
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("view", "reshape") and \
                    isinstance(node.func.value, cst.Name) and node.func.value.value in aliases:
                return "any"  # (DeepSpeech's SequenceWise: `x.view(t * n, -1)` before its BatchNorm1d: the layer
                # sees the view, whose layout the caller's holding decides)
            if not node.args or not (isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in aliases):
                continue
            if isinstance(node.func, cst.Name) and node.func.value in INTROSPECTION:
                continue  # `if not isinstance(x, list): x = [x]` (SelecSLS's blocks): reads no layout
            ref = None
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                ref = ir.attributes.get(func.attr.value) if ir else None
            elif isinstance(func, cst.Name) and func.value in bound:
                ref = bound[func.value]
            elif isinstance(func, cst.Call) and dotted_name(func.func) == "getattr" and len(func.args) == 2 and \
                    dotted_name(func.args[0].value) == "self" and ir is not None:
                ref = attribute_by_pattern(ir, func.args[1].value)  # `getattr(self, 'level{}'.format(i))(x)`
            elif isinstance(func, cst.Subscript) and ir is not None:
                items = _subscripted_items(func, ir)  # `self.layers[i](x)` (HarDNet's link layers), `self.convs[i][0]
                if items and len({self.ref_preference(e, depth + 1) for e in items}) == 1:  # (x)`: its items,
                    ref = items[0]  # when alike
            elif isinstance(func, cst.Attribute) and func.attr.value == "forward" and isinstance(func.value, cst.Call) \
                    and dotted_name(func.value.func) == "super" and info.container_base == "sequential" and ir:
                children = ir.attributes.get("#children")  # HarDNet's `ConvLayer(nn.Sequential)`: `super().forward(x)`
                ref = ModuleRef("sequential", elements=children.elements) if children is not None else None  # its
                # children in turn
            elif isinstance(func, cst.Attribute) and func.attr.value == "forward" and isinstance(func.value, cst.Call) \
                    and dotted_name(func.value.func) == "super" and info.layer_base in self.ctx.module_rules:
                ref = ModuleRef("rule", rule=self.ctx.module_rules[info.layer_base])  # a torch layer's subclass
                # (WaveNet's causal `nn.Conv1d` trimming its output): the layer's own layout
            if ref is None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                    func.value.value == "self" and func.attr.value not in ("forward", method) and \
                    info.find_method(func.attr.value) is not None:
                inner = [p for p in declared_params(info.find_method(func.attr.value)) if p.name.value != "self"]
                if not inner or inner[0].star in ("*", "**"):
                    return "source"
                return self.layout_preference(info, inner[0].name.value, depth + 1, method=func.attr.value)
            child_method = self.child_method_preference(func, ir, depth)
            if child_method is not None:  # `self.backbone.forward_features(x)`: the layout that method takes
                if child_method == "any":
                    undecided = True
                    continue
                return child_method
            helper = self.source.functions.get(func.value) if isinstance(func, cst.Name) and ref is None else None
            if isinstance(helper, cst.FunctionDef):  # a helper of the file (timm's `adaptive_avgmax_pool2d`):
                inner = declared_params(helper)  # the layout it takes its first argument in
                if not inner or inner[0].star in ("*", "**"):
                    return "source"
                layout = self.layout_preference(info, inner[0].name.value, depth + 1, function=helper)
                if layout == "any":
                    continue
                return layout
            if ref is None or not hasattr(ref, "kind"):
                canonical = self.source.imports.resolve(func)
                if canonical is None and isinstance(func, cst.Attribute):  # a method of another tensor handed the
                    canonical = f"Tensor.{func.attr.value}"  # parameter (`xx.type_as(x)`, `y.add(x)`)
                rule = self.ctx.function_rules.get(canonical) if canonical else None
                if rule is not None and rule.layout == "any":
                    undecided = True  # elementwise / cat: the parameter flows on under another name
                    break
                return "channels_last" if rule is not None and rule.layout == "channels_last" else "source"
            if ref.kind == "rule" and ref.rule.unbatched_in_order:  # a pad takes an image channels-last, and
                if rank is not None and ref.rule.rank == rank + 1:  # torch's unbatched form (one dim fewer) as it
                    return "source"  # lies: RWKV's time shift, `nn.ZeroPad2d((0, 0, 1, -1))` on a (B, T, C)
                if rank is None:  # sequence; of a rank not known here, what its result meets next decides
                    undecided = True
                    continue
            layout = self.ref_preference(ref, depth)
            if swapped and layout == "channels_last" and ref.kind == "rule" and ref.rule.rank == 3:
                return "source"  # (a sequence whose channels and length swapped feed a 1-D layer: the sequence
                # as it lies is that layer's channels-last input)
            if layout == "any":  # a layout-free block: what its result meets next decides, unless a later use
                undecided = True  # of the parameter itself does
                continue
            return layout
        if undecided:  # decide by the first layer the forward calls at all
            for node in calls:
                func = node.func
                first = node.args[0].value if node.args else None
                if isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute) and \
                        first.func.attr.value in VIEWS + ("flatten",):
                    continue  # (RetNet's `self.group_norm(Y.reshape(-1, self.hidden_size))`: what a view made)
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                        func.value.value == "self":
                    ref = ir.attributes.get(func.attr.value) if ir else None
                    if hasattr(ref, "kind") and not (ref.kind == "rule" and ref.rule.unbatched_in_order):
                        layout = self.ref_preference(ref, depth)
                        if layout != "any":
                            return layout
        return "any"

    def folds_sequence_first(self, info, function, param):
        """Whether `function`'s first use of `param` reads it as a sequence (B, N, C) and moves its dims
        (`x.transpose(1, 2)`, `x.permute(0, 2, 1)`, einops `rearrange(x, 'b (h w) c -> b c h w')`), through the
        class's own method it is handed to first: tokens a block folds into an image itself (CvT's convolutional
        projections), not an image, whatever its layers convolve."""
        return self.reorders_first(info, function, param, sequence=True)

    def reorders_first(self, info, function, param, depth=0, sequence=False):
        """Whether the first call `function` makes with `param` moves or regroups its dims (`x.transpose(1, 2)`,
        `x.permute(0, 2, 1)`, `x.reshape(B, H, W, C)`, einops `rearrange(x, 'b (h w) c -> b c h w')`), looking into
        the class's own method it is handed to first (`self.forward_conv(x, h, w)`): tokens the block folds into an
        image itself, whose layers it reaches under another name, in an order its own source picks."""
        for node in _calls_in_order(function.body) if depth < 4 else ():
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == param:
                if sequence:
                    return func.attr.value in PERMUTES and _sequence_reorder(node)
                return func.attr.value in PERMUTES + VIEWS + ("flatten", "unflatten")
            if not any(isinstance(a.value, cst.Name) and a.value.value == param for a in node.args):
                continue
            first = node.args[0].value
            if not (isinstance(first, cst.Name) and first.value == param):
                return False
            if (self.source.imports.resolve(func) or "").endswith("rearrange"):
                return not sequence or _pattern_input_axes(node) == 3
            method = info.find_method(func.attr.value) if isinstance(func, cst.Attribute) and dotted_name(
                func.value) == "self" else None
            inner = [p for p in declared_params(method) if p.name.value != "self"] if method is not None else []
            return bool(inner) and not inner[0].star and self.reorders_first(info, method, inner[0].name.value,
                                                                              depth + 1, sequence)
        return False

    def hands_to_lambda(self, info, node, aliases):
        """Whether call `node` hands one of `aliases` to `self.f(...)`, a function every construction of `info`
        hands in as a lambda (`self.dual_path_scheme(module, x1, x2)`: the child it runs takes the image)."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and any(
                isinstance(a.value, cst.Name) and a.value.value in aliases for a in node.args)):
            return False
        return func.attr.value in constructed_lambdas(self.source, info, stored_parameters(info))

    def permuted_image_rank(self, info, param):
        """The rank of the image `forward` moves channels-last with its first call on `param` (`x.permute(0, 2, 3,
        1)`: 4; timm's LayerNorm2d), else None."""
        forward = info.find_method("forward")
        for node in _calls_in_order(forward.body) if forward is not None else ():
            rank = _channels_last_permute_rank(node, {param})
            if rank or node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == param:
                return rank
        return None

    def first_layer_layout(self, info, param):
        """The layout the first layer `forward` hands `param` to works in ("source", "channels_last", "any"), or
        None when porter cannot tell."""
        ref = self.first_layer(info, param)
        layout = self.ref_preference(ref, 0) if hasattr(ref, "kind") else None
        return "source" if layout == "unknown" else layout

    def first_layer(self, info, param):
        """The ModuleRef of the layer `forward` first hands `param` to (`self.fc1(x)`), or None."""
        forward = info.find_method("forward")
        ir = self.ctx.irs.get(info.name)
        for node in _calls_in_order(forward.body) if forward is not None else ():
            if not (node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == param):
                continue
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                return ir.attributes.get(func.attr.value) if ir else None
            return None
        return None

    def spatial_rank(self, info, depth=0, family=None):
        """The tensor rank the first spatial layer `info` builds takes (Conv2d: 4), looking into its containers
        and blocks (a subclass of such a layer: the layer's), or None."""
        base = self.ctx.module_rules.get(info.layer_base) if info.layer_base else None
        if base is not None and base.layout == "channels_last" and family in (None, base.family):
            suffix = re.search(r"([123])d$", info.layer_base)  # (a rule of several ranks: the one the name says)
            said = conv_subclass_rank(self.source, info)  # (torch's `_ConvNd`: the source says it)
            if base.rank or suffix or said:
                return base.rank or (int(suffix.group(1)) if suffix else said) + 2
        ir = self.ctx.irs.get(info.name)
        stack = [ref for ref in (ir.attributes.values() if ir else ()) if hasattr(ref, "kind")]
        while stack and depth < 8:
            ref = stack.pop(0)
            if ref.kind == "rule" and ref.rule.layout == "channels_last" and ref.rule.rank and \
                    family in (None, ref.rule.family):
                return ref.rule.rank
            if ref.kind in ("sequential", "list", "dict"):
                stack[:0] = list(ref.elements)
            elif ref.kind == "unknown" and ref.alternatives and len({
                    a.rule.rank for a in ref.alternatives if a.kind == "rule" and a.rule.rank}) <= 1:
                stack[:0] = list(ref.alternatives)  # (one of several modules: those porter knows; layers of several
                # ranks, Conv1d/2d/3d chosen by a `dimension`, say nothing of the rank)
            elif ref.kind == "class" and ref.class_name in self.source.classes and ref.class_name != info.name:
                found = self.spatial_rank(self.source.classes[ref.class_name], depth + 1, family)
                if found:
                    return found
        return None

    def child_method_preference(self, func, ir, depth):
        """The layout `self.<child>.<method>(x)` takes `x` in, the child an instance of a class of the file (or a
        linked library's: timm's `forward_features`, efficientnet_pytorch's `extract_features`) and the method
        its own, not its forward; None for any other call."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and ir is not None and
                dotted_name(func.value.value) == "self" and func.attr.value not in ("forward", "__call__")):
            return None
        ref = ir.attributes.get(func.value.attr.value)
        if not (hasattr(ref, "kind") and ref.kind == "class" and ref.class_name in self.source.classes):
            return None
        child = self.source.classes[ref.class_name]
        method = child.find_method(func.attr.value)
        if method is None:
            return None
        inner = [p for p in declared_params(method) if p.name.value != "self"]
        if not inner or inner[0].star in ("*", "**"):
            return "source"
        return self.layout_preference(child, inner[0].name.value, depth + 1, method=func.attr.value)

    def ref_preference(self, ref, depth):
        if ref.kind == "rule":
            return ref.rule.layout
        if ref.kind == "elementwise":  # `self.act_fn = get_act_fn(name)`: any layout in, the same out
            return "any"
        if ref.kind == "class" and ref.class_name in self.source.classes:
            info = self.source.classes[ref.class_name]
            forward = info.find_method("forward")
            params = [p for p in declared_params(forward) if p.name.value != "self"] if forward is not None else []
            if not params:
                return "source"
            return self.layout_preference(info, params[0].name.value, depth + 1)
        if ref.kind == "sequential":
            for element in ref.elements:
                layout = self.ref_preference(element, depth + 1)
                if layout != "any":
                    return layout
            return "any"
        if ref.alternatives:  # one of several modules: the layout every one of them that has one prefers
            layouts = {self.ref_preference(a, depth + 1) for a in ref.alternatives} - {"any"}
            if ref.kind == "unknown" and (any(a.kind == "unknown" for a in ref.alternatives) or
                                          layouts != {"channels_last"}):
                # some of the modules it may be, and others porter does not know, or known ones not all taking
                return "unknown"  # channels-last images (`call_module` runs it: see `prefers_channels_last`)
            return layouts.pop() if len(layouts) == 1 else "any" if not layouts else "source"
        return "unknown" if ref.kind == "unknown" else "source"  # (a module porter cannot type: see
        # `prefers_channels_last`)

    def translate_forward(self, info, call_values, output_layout, static=()):
        if static:
            return self.translate_specialisation(info, call_values, static)
        signature = None
        for _ in range(3):  # again when it calls itself (the recursion settled) or its returns disagree
            signature = self.translate_generic_call(info, call_values, output_layout)
            if signature is not None:
                break
        return signature

    def translate_generic_call(self, info, call_values, output_layout):
        """The class's generic `call` (any instance), translated for the layouts `call_values` hand it; None when
        the translation showed the class calling itself and must be made again with that settled."""
        owner = info.owner_of("forward")
        forward = info.find_method("forward")
        if forward is not None and forward.asynchronous is not None:
            self.ctx.current.append(self.ctx.ir_for(info))
            try:
                message = self.ctx.unsupported(self.source.line_of(forward) or info.line, "async def forward",
                                               "a coroutine cannot be a Keras call; make forward a plain def")
            finally:
                self.ctx.current.pop()
            self.class_code[(info.name, "call")] = (forward, [f"{INDENT * 2}raise NotImplementedError({message!r})"])
            signature = ClassSignature(arg_values=())
            self.ctx.signatures[info.name] = signature
            return signature
        signature = ClassSignature(arg_values=())
        if forward is None:
            self.ctx.signatures[info.name] = signature
            return signature
        self.in_progress.add(info.name)
        ir = self.ctx.ir_for(info)
        self.ctx.current.append(ir)
        speculative, self.speculative = self.speculative, 0  # the generic call is always kept
        if info.name in self.plain_returns:
            output_layout = "source"  # its returns disagree: every one in torch's layout, callers take it so
        unsettled = output_layout is None and info.name not in self.recursion_outputs
        before = self.translation_state(ir) if output_layout is None else None
        held_from = len(self.held_recursions)
        try:
            params = [p for p in declared_params(forward) if p.name.value != "self"]
            env, arg_values = self.bind_call_values(params, call_values, (info.name, "forward"), class_call=True)
            env, arg_values = self.settle_recursion(info, params, env, arg_values, signature)
            signature.arg_values = tuple(arg_values)
            signature.kwarg_values = {p.name.value: env[p.name.value] for p in params}
            self.ctx.signatures[info.name] = signature
            io_inputs = self.boundary_inputs(info, params, env) if output_layout == "io" else []
            translator = ClassBodyTranslator(self, owner if owner is not None else info, "forward", env,
                                             output_layout)
            translator.info, translator.translates_call = info, True
            translator.takes_held_tokens = any(is_permuted(v) for v in arg_values)
            translator.calls_itself = self.recursion_image(info, arg_values)
            translator.return_template = signature.output if output_layout is None else None
            body, terminated = translator.block(forward.body, 2)
            if not self.recursion_held(info, (), held_from, signature, translator.return_template):
                if before is not None:  # again, its own call made at run time (held_recursion.py)
                    self.undo_translation(ir, before)
                return None
            if unsettled and info.name in self.recursive_calls:
                rank = settled_rank(translator.return_template, arg_values)
                if rank is not None:  # it calls itself: translated again, the recursion settled (recursion.py)
                    self.recursion_outputs[info.name] = rank
                    self.undo_translation(ir, before)  # (classes it called first: for what it handed)
                    return None
            if translator.returns_disagree and before is not None:  # made again, returning in torch's layout
                self.plain_returns.add(info.name)
                self.undo_translation(ir, before)
                return None
            if output_layout is None:  # (a call translated for a layout out keeps no return template: its returns
                # are brought to that layout, so a body whose every path returns is no stub's)
                _raising_output(translator, terminated)
            _declared_sequence_output(translator, forward)
            if io_inputs:  # the main class takes its images once, channels-last from here on
                at = _body_docstring_lines(body)  # (a docstring may be one element of `body`)
                body[at:at] = [f"{INDENT * 2}{name} = self.io_input({name})" for name in io_inputs]
            ir.io_inputs = tuple(p.name.value in io_inputs for p in params if p.star not in ("*", "**"))
            signature.output = translator.return_template if output_layout is None else None
            ir.arg_layouts = tuple(map(_arg_layout, arg_values))
            template = translator.return_template
            ir.layout_free = ModuleResolver(self.source, self.ctx.module_rules, self.source.class_named,
                                            self.param_hints).passes_layout_through(ModuleRef(
                                                "class", class_name=info.name)) and _runs_as_written(body)
            ir.layout_out = _layout_out(template)
            self.class_code[(info.name, "call")] = (forward, clean_body(body, ir.mappings))
            signature.done = True
            return signature
        finally:
            self.speculative = speculative
            self.ctx.current.pop()
            self.in_progress.discard(info.name)

    def recursion_held(self, info, static, start, signature, output):
        """Whether every call of `info` that a lambda run as written made while `info` (its case for `static`) was
        translated (noted from `start` on) meets its instance's case taking what it hands as held and returning
        images held channels-last (`signature`, `output`: the case just translated); else the class is marked to
        make such calls at run time (held_recursion.py)."""
        calls = [c for c in self.held_recursions[start:] if c.class_name == info.name]
        if not calls:
            return True
        # the call handing the most images first: a case is translated for all it may be handed (the ordinal
        # child's `module(x1)` leaves x2 at its default, where `module(x1, x2)` hands it)
        calls.sort(key=lambda call: -sum(1 for a in call.args if a.is_tensor))
        self.held_recursions[start:] = [c for c in self.held_recursions[start:] if c.class_name != info.name]
        self.in_progress.discard(info.name)  # (the instance's own case: translated now, for what it is handed)
        try:
            for call in calls:
                if call.static == static:
                    case, returned = signature, output
                else:
                    case = self.class_signature(info.name, list(call.args), dict(call.kwargs), call.static)
                    returned = case.output if case is not None else None
                if not held_alike_call(case, call, returned):
                    self.unheld_recursions.add(info.name)
                    return False
        finally:
            self.in_progress.add(info.name)
        return True

    def translation_state(self, ir):
        """What `undo_translation` goes back to: the IR's notes (`ir`: the class being translated, None outside
        one), the call sites and the translations made so far (the cases of `call` too)."""
        return (_ir_state(ir) if ir is not None else None, dict(self.bound_sites), set(self.generic_sites),
                {k: list(v) for k, v in self.layout_sites.items()}, self.translated_keys() + [self.specialised_keys()])

    def undo_translation(self, ir, before):
        """Back to the state `before` a translation (its IR notes, call sites and the translations made since), so
        that it is made again; `before` can be gone back to again."""
        if ir is not None:
            _restore_ir_state(ir, before[0])
        self.bound_sites, self.generic_sites = dict(before[1]), set(before[2])
        self.layout_sites = {k: list(v) for k, v in before[3].items()}
        self.forget_translations_since(before[4][:-1])
        for name, static in self.specialised_keys() - before[4][-1]:
            self.specialised_code[name].pop(static, None)

    def specialised_keys(self):
        return {(name, static) for name, cases in self.specialised_code.items() for static in cases}

    def recursion_image(self, info, arg_values):
        """For a class that builds itself and is called on a channels-last image: that image's template (lists
        its own calls hand down are taken to hold such images), else None."""
        first = next((v for v in arg_values if v.is_tensor), None)
        if first is None or not first.channels_last or (first.rank or 0) <= 2 or not self.constructs_itself(info):
            return None
        return first.with_code("").but(channels=None, static=None)

    def constructs_itself(self, info):
        """Whether the class's `__init__` builds an instance of the class itself (a recursive block: DLA's Tree)."""
        init = info.find_method("__init__")
        if init is None:
            return False
        return any(isinstance(call.func, cst.Name) and call.func.value == info.name
                   for call in self.source.nodes_in(init, cst.Call))  # the node index: no walk per question

    def translation_tables(self):
        return (self.ctx.signatures, self.ctx.method_signatures, self.ctx.function_signatures, self.class_code,
                self.method_code, self.function_code, self.specialised_code, self.layout_trials,
                self.function_trials, self.function_variant_code, self.kind_cases)

    def translated_keys(self):
        """The keys of every table of translations made so far (`forget_translations_since` drops the newer)."""
        return [set(table) for table in self.translation_tables()]

    def forget_translations_since(self, keys):
        """Drop the translations made since `translated_keys` returned `keys`: a translation made again must not
        find the classes it calls already fixed to what its first attempt handed them."""
        for table, known in zip(self.translation_tables(), keys, strict=True):
            for key in set(table) - known:
                del table[key]

    def settle_recursion(self, info, params, env, arg_values, signature):
        """For a class known to call itself (its recursion settled by a first translation): the parameters its own
        calls fill taken as images, and `signature.output` preset to what the call is taken to return."""
        if info.name not in self.recursion_outputs:
            return env, arg_values
        env, arg_values = widened_arguments(params, env, self.recursive_calls.get(info.name, ()))
        signature.output = settled_output(self.recursion_outputs[info.name], arg_values)
        return env, arg_values

    def translate_specialisation(self, info, call_values, static, trial=None):
        """`info`'s forward for instances built with the literal values `static`: translated like the generic call,
        with those `self` attributes known (`torch.permute(x, self.dims)` then relabels axes instead of moving
        data). Kept in `specialised_code`; `finish_specialisations` turns the ones that differ into cases of `call`."""
        signature = self._translate_specialisation(info, call_values, static, trial)
        if signature is None:  # its returns disagree: again, each in torch's layout
            signature = self._translate_specialisation(info, call_values, static, trial)
        return signature

    def _translate_specialisation(self, info, call_values, static, trial):
        forward = info.find_method("forward")
        owner = info.owner_of("forward")
        key = (info.name, static) if trial is None else (info.name, static, trial)
        ir = self.ctx.ir_for(info)
        self.in_progress.add(info.name)
        self.ctx.current.append(ir)
        state, runtime_before = _ir_state(ir), set(self.ctx.used_runtime)
        self.speculative += 1
        held_from = len(self.held_recursions)
        try:
            params = [p for p in declared_params(forward) if p.name.value != "self"]
            env, arg_values = self.bind_call_values(params, call_values, (info.name, "forward"), class_call=True)
            signature = ClassSignature(arg_values=())
            env, arg_values = self.settle_recursion(info, params, env, arg_values, signature)
            signature.arg_values = tuple(arg_values)
            signature.kwarg_values = {p.name.value: env[p.name.value] for p in params}
            self.ctx.signatures[key] = signature
            values = {attr: static_value(text) for attr, text in static}
            plain = (info.name, static) in self.plain_returns  # (the generic call's returns may disagree where
            # the instance's literals settle which one returns: `return x, x_pre_activ` under `if self.return_preact`)
            translator = ClassBodyTranslator(self, owner if owner is not None else info, "forward", env,
                                             "source" if plain else None, static_attrs=values)
            translator.info, translator.translates_call = info, True
            translator.takes_held_tokens = any(is_permuted(v) for v in arg_values)
            translator.calls_itself = self.recursion_image(info, arg_values)
            translator.return_template = signature.output
            body, terminated = translator.block(forward.body, 2)
            if not self.recursion_held(info, static, held_from, signature, translator.return_template):
                return None  # again, its own call made at run time (held_recursion.py)
            if translator.returns_disagree and not plain:
                self.plain_returns.add((info.name, static))
                return None
            if not plain:  # (returns in torch's layout keep no return template, as in the generic call)
                _raising_output(translator, terminated)
            _declared_sequence_output(translator, forward)
            signature.output = translator.return_template
            template = translator.return_template
            layouts = (tuple(map(_arg_layout, arg_values)), _layout_out(template))
            body = clean_body(body, ir.mappings)
            # what the translation noted on the class (adjustments, ops ...) counts only if the case is kept
            notes = _ir_state(ir)
            entry = (body, layouts, notes, self.ctx.used_runtime - runtime_before)
            if trial is not None:
                self.layout_trials[key] = entry
            else:
                self.specialised_code.setdefault(info.name, {})[static] = entry
            signature.done = True
            return signature
        finally:
            self.speculative -= 1
            _restore_ir_state(ir, state)
            self.ctx.current.pop()
            self.in_progress.discard(info.name)

    def finish_specialisations(self):
        """Classes whose call was specialised for literal constructor values: the specialisations that differ from
        the generic translation become cases of `call`, chosen by the attributes the constructor stored (checked
        in order, the generic body last for any other instance); an instance whose case takes or returns other
        layouts than the class declares says so in `__init__` (`porter_layout`, `layout_out`, which containers
        read)."""
        dropped, kept = set(), set()
        variants = {}  # class -> [(static, layouts, body)] of layout trials some attribute's instance runs
        kind_trials = {key for cases in self.kind_cases.values() for key in cases.values()}
        for (name, static, layouts), (body, trial_layouts, notes, runtime) in self.layout_trials.items():
            if layouts[:1] == ("kind",):
                (kept if (name, static, layouts) in kind_trials else dropped).update(runtime)
                continue
            base = self.specialised_code[name][static][0] if static else self.class_code[(name, "call")][1]
            used = body == base or (name, static, layouts) in self.layout_sites
            (kept if used else dropped).update(runtime)
            if body != base and used:
                variants.setdefault(name, []).append((static, trial_layouts, body, notes, layouts))
        for (name, layouts), (_, body, runtime) in self.function_trials.items():
            used = body == self.function_code[name][1] or layouts in self.function_variant_code.get(name, {})
            (kept if used else dropped).update(runtime)
        names = list(self.specialised_code) + [n for n in variants if n not in self.specialised_code]
        for name in names + [n for n in self.kind_cases if n not in names]:
            cases = self.specialised_code.get(name, {})
            ir = self.ctx.irs[name]
            entry = self.class_code.get((name, "call"))
            if entry is None or not ir.arg_layouts:
                continue
            forward, generic = entry
            generic_layouts = (tuple(ir.arg_layouts), ir.layout_out)
            groups = []  # [(body, layouts, [static, ...])] in the order callers met them
            for static, (body, layouts, notes, runtime) in cases.items():
                if layouts == generic_layouts and _conversions(body) >= _conversions(generic) or \
                        any(notes[field] != getattr(ir, field) for field in _WEIGHT_NOTES) or \
                        self.kind_case_takes(name, static):
                    dropped.update(runtime)  # no layout gained (or weights it would load otherwise): the generic
                    continue  # call serves such instances (or the case for the kind handed, which `call` tests first)
                kept.update(runtime)
                for field in ("adjustments", "unsupported"):
                    getattr(ir, field).extend(n for n in notes[field] if n not in getattr(ir, field))
                ir.ops.update(notes["ops"])
                for group in groups:
                    if group[0] == body and group[1] == layouts:
                        group[2].append(static)
                        break
                else:
                    groups.append((body, layouts, [static]))
            told = []  # (condition, body, layouts, statics) of the cases an attribute's instance is told to run
            for static, layouts, body, notes, key_layouts in variants.get(name, ()):
                for field in ("adjustments", "unsupported"):
                    getattr(ir, field).extend(n for n in notes[field] if n not in getattr(ir, field))
                ir.ops.update(notes["ops"])
                layout_in = next((p for p in layouts[0] if p in ("channels_last", "source")), "source")
                condition = f"self.porter_layout == {layout_in!r}".replace("'", '"')
                told.append(((f"{_case_condition([static])} and " if static else "") + condition, body, layouts,
                             [static] if static else []))
                self.tell_instances(name, static, key_layouts)
            kind_lines = self.kind_case_lines(name, forward, ir)
            if not groups and not told and not kind_lines:
                continue
            at = _body_docstring_lines(generic)
            lines = list(generic[:at]) + kind_lines
            init_lines = []
            names = {"channels_last": "channels-last", "source": "torch's order"}
            ordered = [t for t in told if t[3]] + [(None, body, layouts, statics) for body, layouts, statics in
                                                    groups] + [t for t in told if not t[3]]
            for told_condition, body, layouts, statics in ordered:
                if told_condition is not None:
                    taken = [names.get(p, p) for p in layouts[0] if p != "python"]
                    lines.append(f"{INDENT * 2}# porter: `call` specialised for instances called with "
                                 f"{', '.join(taken)} (told where they are built), {names.get(layouts[1], layouts[1])} "
                                 f"out")
                    lines.append(f"{INDENT * 2}if {told_condition}:")
                    case = body[_body_docstring_lines(body):]
                    lines.extend(INDENT + line if line.strip() else line for line in case)
                    if not _ends_in_return(case):
                        lines.append(f"{INDENT * 3}return None")
                    continue
                condition = _case_condition(statics)
                described = ", ".join(f"{attr}={text}" for attr, text in statics[0]) if len(statics) == 1 else \
                    "these constructor values"
                taken = [names.get(p, p) for p in layouts[0] if p != "python"]
                comment = f"{INDENT * 2}# porter: `call` specialised for {described}"
                if taken:
                    comment += f" ({', '.join(taken)} in, {names.get(layouts[1], layouts[1])} out)"
                lines.append(comment)
                lines.append(f"{INDENT * 2}if {condition}:")
                case = body[_body_docstring_lines(body):]
                lines.extend(INDENT + line if line.strip() else line for line in case)
                if not _ends_in_return(case):
                    lines.append(f"{INDENT * 3}return None")
                if layouts != generic_layouts:
                    layout_in = next((p for p in layouts[0] if p in ("channels_last", "source")), "source")
                    if not init_lines:
                        init_lines.append(f"{INDENT * 2}# porter: the layouts this instance's `call` takes and returns")
                    init_lines.append(f"{INDENT * 2}{'elif' if len(init_lines) > 1 else 'if'} {condition}:")
                    init_lines.append(f"{INDENT * 3}self.porter_layout, self.layout_out = {layout_in!r}, "
                                      f"{layouts[1]!r}".replace("'", '"'))
            lines.extend(generic[at:])
            self.class_code[(name, "call")] = (forward, lines)
            if init_lines:
                self.class_code[(name, "__init__")] = list(self.class_code.get((name, "__init__"), [])) + init_lines
            ir.specialisations = tuple(static for _, _, statics in groups for static in statics)
        self.forget_runtime(dropped - kept)

    def kind_case_takes(self, name, static):
        """Whether the instances built with `static` were handed another kind (a tuple where the generic call takes
        a tensor) than the generic call's: `call` tests for the kind cases first, so such a case would never run."""
        if not self.kind_cases.get(name):
            return False
        generic, case = self.ctx.signatures.get(name), self.ctx.signatures.get((name, static))
        if generic is None or case is None or not generic.arg_values or not case.arg_values:
            return False
        return generic.arg_values[0].kind != case.arg_values[0].kind

    def kind_case_lines(self, name, forward, ir):
        """`if isinstance(x, (tuple, list)):` cases of `call` for the kinds callers hand besides the generic one."""
        params = [p.name.value for p in declared_params(forward) if p.name.value != "self"]
        lines = []
        for kind, key in self.kind_cases.get(name, {}).items():
            body, trial_layouts, notes, _ = self.layout_trials[key]
            for field in ("adjustments", "unsupported"):
                getattr(ir, field).extend(n for n in notes[field] if n not in getattr(ir, field))
            ir.ops.update(notes["ops"])
            if kind.startswith("rank") and trial_layouts[1] != ir.layout_out:  # (call_module and containers read
                ir.rank_layouts_out[int(kind[4:])] = trial_layouts[1]  # it: a call of itself, a Sequential's)
            if kind.startswith("rank"):
                lines.append(f"{INDENT * 2}# porter: `call` specialised for callers handing {params[0]} with "
                             f"{kind[4:]} dimensions")
                lines.append(f"{INDENT * 2}if len({params[0]}.shape) == {kind[4:]}:")
            else:
                test = f"isinstance({params[0]}, (tuple, list))"
                lines.append(f"{INDENT * 2}# porter: `call` specialised for callers handing {params[0]} as a "
                             f"{'tuple' if kind == 'tuple' else 'tensor'}")
                lines.append(f"{INDENT * 2}if {test if kind == 'tuple' else 'not ' + test}:")
            case = body[_body_docstring_lines(body):]
            lines.extend(INDENT + line if line.strip() else line for line in case)
            if not _ends_in_return(case):
                lines.append(f"{INDENT * 3}return None")
        return lines

    def built_by_init(self, site):
        """Whether the attribute `site` ((class, Keras attribute)) is set by a top-level statement of that class's
        own __init__ (`self.drop = DropPath(p)`), so its __init__ can tell the instance its layouts after it (no
        in-file base or subclass of the class shares the attribute); a block a factory builds is told where it is
        constructed."""
        owner, attribute = site
        if owner == FACTORY_SITE:
            return True
        info = self.source.classes.get(owner)
        init = info.methods.get("__init__") if info is not None else None
        if init is None or not isinstance(init.body, cst.IndentedBlock) or info.bases or any(
                owner in other.bases for other in self.source.classes.values()):
            return False  # a base's __init__ or a subclass's call would not agree on the instance's case
        torch_name = self.ctx.irs[owner].renamed.get(attribute, attribute) if owner in self.ctx.irs else attribute
        for statement in init.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, cst.AnnAssign) else []
                if any(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
                       and t.attr.value == torch_name for t in targets):
                    return True
        return False

    def tell_instances(self, name, static, layouts):
        """The owners of the attributes whose `name` instance runs the layout case `layouts` set its layouts in
        their `__init__` (after building it): its call then takes that case, as their translated code expects."""
        trial_layouts = self.layout_trials[(name, static, layouts)][1]
        layout_in = next((p for p in trial_layouts[0] if p in ("channels_last", "source")), "source")
        for owner, attribute in self.layout_sites.get((name, static, layouts), ()):
            if owner == FACTORY_SITE:
                continue  # told where a factory constructs it (construction_code)
            keras_name = next((k for k, v in self.ctx.irs[owner].renamed.items() if v == attribute), attribute)
            line = (f"{INDENT * 2}self.{keras_name}.porter_layout, self.{keras_name}.layout_out = {layout_in!r}, "
                    f"{trial_layouts[1]!r}").replace("'", '"')
            init = list(self.class_code.get((owner, "__init__"), []))
            if line not in init:
                comment = f"{INDENT * 2}# porter: `{attribute}` runs the case of its call for the layouts `forward` " \
                          f"hands it"
                self.class_code[(owner, "__init__")] = init + [comment, line]

    def factory_layouts(self, function, class_name):
        """(layout in, layout out) the `class_name` instances function `function` builds are told (a factory-built
        model runs them in a case of their call for those layouts), or None."""
        if function not in self.factory_functions:
            return None
        site = (FACTORY_SITE, class_name)
        for (name, static, layouts), sites in self.layout_sites.items():
            if name == class_name and site in sites:
                trial_layouts = self.layout_trials[(name, static, layouts)][1]
                layout_in = next((p for p in trial_layouts[0] if p in ("channels_last", "source")), "source")
                return layout_in, trial_layouts[1]
        return None

    def forget_runtime(self, names):
        """Runtime definitions only dropped specialisations used: no longer needed (unless other code names them)."""
        if not names:
            return
        texts = [line for entry in self.class_code.values() for line in (entry[1] if isinstance(entry, tuple)
                                                                           else entry)]
        texts += [line for entry in self.method_code.values() for line in entry[1]]
        texts += [line for entry in self.function_code.values() for line in entry[1]]
        texts += [line for entry in self.function_variant_code.values() for _, body in entry.values() for line in body]
        code = "\n".join(texts)
        for name in names:
            emitted = self.ctx.renames.get(name, name)
            if not re.search(rf"\b{re.escape(emitted)}\b", code):
                self.ctx.used_runtime.discard(name)

    def boundary_inputs(self, info, params, env):
        """The main class's image arguments that it works on channels-last: bound channels-last here, converted
        by `self.io_input` at the top of `call` (a no-op when the model takes channels-last input)."""
        names = []
        for param in params:
            name = param.name.value
            value = env.get(name)
            if not (isinstance(value, Value) and value.is_tensor and value.layout == "source"):
                continue
            rank = value.rank or self.spatial_rank(info)
            if (rank or 0) > 2 and not _reshaped_first(info.find_method("forward"), name) and \
                    self.prefers_channels_last(info, name, depth=0, rank=rank):
                env[name] = value.but(layout="channels_last", rank=rank)
                names.append(name)
        return names

    def declared_tensors_value(self, param, scope):
        """The Value of parameter `param`, declared a list or a tuple of tensors (`declared_tensors`), in torch's
        layout: a list's images of the rank the class's layers take (`scope`: (class, "forward"))."""
        declared, name = declared_tensors(param), param.name.value
        if declared != "list":
            return Value(name, "tuple", items=tuple(tensor(f"{name}[{k}]") for k in range(declared)))
        rank = self.spatial_rank(self.source.classes[scope[0]]) if scope and scope[0] in self.source.classes \
            else None
        return Value(name, "tuple", items=None, static=("each", tensor("", rank, "source")))

    def bind_call_values(self, params, call_values, scope=None, class_call=False):
        """Forward parameters -> Values: what the first caller passes (positional, then keyword); a tensor of
        unknown rank takes the rank rank_inference.py read off the uses of parameter `name` in `scope`.
        `class_call`: binding a class's call: a tensor handed permuted is taken so (`handed_values` decided), else
        in torch's order; its first image's channel count is HANDED_CHANNELS."""
        env, arg_values = {}, []
        args, kwargs = call_values if call_values else ([], {})
        owner = self.source.classes.get(scope[0]) if class_call and scope and scope[1] == "forward" else None
        # (a parameter no call in the file hands holds its literal default: passes/unhanded_flags.py)
        unhanded = unhanded_defaults(self.source, owner, self.ctx.main_class) if owner is not None else {}
        starred = next((i for i, v in enumerate(args) if v.kind == "starred"), None)
        spread = starred_images(args[starred]) if starred is not None else None
        for position, param in enumerate(params):
            name = param.name.value
            if param.star == "*":  # `forward(self, x, *args)`: the further tensors, in torch's layout (callers
                env[name] = Value(name, "tuple", items=None)  # hand a starred list over in it), or the images
                gathered = _gathered_images(args, position, starred, spread)  # of a caller's `block(*features)`,
                if gathered is not None:  # `root(x2, x1, *children)` as they are
                    env[name] = env[name].but(static=("each", gathered))
                continue
            if param.star == "**":
                env[name] = python(name)
                continue
            if position < len(args) and args[position].kind != "starred" and (starred is None or position < starred):
                value = args[position]
            elif spread is not None and position >= starred and name not in kwargs and param.default is None:
                value = spread.with_code(name)  # `block(*features)`: the parameter takes one of its images
            elif name in kwargs:
                value = kwargs[name]
            elif param.default is not None:
                value = python(name, static=unhanded.get(name))
            elif declared_tensors(param) is not None:
                # no caller porter sees (a container's loop or `call_module` runs it) and the parameter is declared
                # a list of tensors (HRNet's `x: List[torch.Tensor]`) or a tuple of them (PiT's `(x, cls_tokens)`):
                # its tensors in torch's layout, as every list a caller could not type is handed over
                value = self.declared_tensors_value(param, scope if class_call else None)
            else:
                value = tensor(name)
            if value.kind == "tuple":
                # items are read through the parameter (`inputs[1]`), not the caller's expressions; what the first
                # caller's values are made of (a constant, a coordinate map) is not what later callers hand
                # (one that defaults to None, or that the caller may leave None, is converted only where it is one)
                optional = value.may_be_none or isinstance(param.default, cst.Name) and param.default.value == "None"
                value = Value(name, "tuple", items=tuple(
                    (i.but(layout="source") if i.is_tensor and not i.channels_last else i).but(
                        varies_along=None).with_code(f"{name}[{k}]")
                    for k, i in enumerate(value.items or ())), may_be_none=optional) if value.items else \
                    Value(name, "tuple", items=None, static=_without_variation(value.static), may_be_none=optional)
            if value.is_tensor:
                value = value.but(varies_along=None)
            if isinstance(value.static, HeldTable):  # the features a block returned by name, handed on (LR-ASPP's
                # head reads `input["low"]`): read by key as they lie
                env[name] = held_features(self.ctx, value.static.item, name)
                arg_values.append(env[name])
                continue
            if value.kind not in ("tensor", "tuple", "module"):
                items = tuple(i.but(static=None, varies_along=None).with_code(f"{name}[{k}]") for k, i in enumerate(
                    value.items)) if value.kind == "python" and value.items and not any(
                    i.is_tensor for i in value.items) else None  # (sizes: `size` of a patch embedding's (H, W),
                # each read through the parameter, known to be spatial sizes)
                value = python(name, static=NONE_DEFAULT if holds_none(value) or value.code == name and
                               dotted_name(param.default) == "None" else value.static if name in unhanded and
                               value.code == name else None).but(items=items)  # (the caller left
                # it None)
            # a tensor handed permuted (attention heads `q.view(b, t, h, d).transpose(1, 2)` handed to a rotary
            # embedding's helpers, to an `_attn` method) is taken as it lies: the body computes on it where it is
            # stored, and a later caller holding it otherwise converts to this order (to_value_layout)
            if isinstance(value.static, EinsumRecipe):  # the caller's operands are not the callee's names:
                value = value.but(static=None)  # re-emitting that einsum here would name undefined variables
            if value.is_tensor:  # `self.stem.out_channels` names the caller's layer: the callee's `self` has none
                # (its flatten converts first); a call returning its first image's count gives the caller's back
                value = value.but(channels=HANDED_CHANNELS if position == 0 and class_call and value.channels_last
                                  else None)
            if value.is_tensor and value.rank is None and (scope, name) in self.argument_ranks:
                value = value.but(rank=self.argument_ranks[(scope, name)])
            env[name] = value.with_code(name)
            arg_values.append(env[name])
        return env, arg_values

    def method_signature(self, info, method, args, kwargs):
        key = (info.name, method)
        if key in self.ctx.method_signatures:
            if key in self.in_progress:  # a method calling itself (an Hourglass' `_hour_glass_forward(n - 1, x)`):
                self.recursive_methods.add(key)  # it took the result in torch's order, so every return gives that
            return self.ctx.method_signatures[key]
        definition = info.find_method(method)
        if definition is None or key in self.in_progress:
            return None
        self.in_progress.add(key)
        speculative, self.speculative = self.speculative, 0  # a method is translated once, and kept
        try:
            params = [p for p in declared_params(definition) if p.name.value != "self"]
            ir = self.ctx.ir
            # (output layout, whether its own calls of itself hand `training`, the result they take)
            attempts = [(None, False, None)]
            while attempts:
                output_layout, hands_training, assumed = attempts.pop()
                before = self.translation_state(ir) if ir is not None else None
                env, arg_values = self.bind_call_values(params, (list(args), dict(kwargs)), key)
                signature = ClassSignature(arg_values=tuple(arg_values))
                signature.takes_training, signature.output = hands_training, assumed
                self.ctx.method_signatures[key] = signature
                translator = ClassBodyTranslator(self, info, "forward", env, output_layout)
                translator.returns_pending_permute = returns_once_at_end(definition)
                translator.takes_held_tokens = any(is_permuted(v) for v in arg_values)
                translator.handed_heads = handed_heads(arg_values)
                body, _ = translator.block(definition.body, 2)
                # (a method with a `training` parameter of its own, MONAI's `drop_path(self, x, p, training)`, is
                # handed the flag by its callers: it takes no second one)
                takes_training = _reads_training(body) and not _has_parameter(definition, "training")
                recursive = key in self.recursive_methods
                returned = translator.return_template
                if before is None:
                    break
                if output_layout is None and translator.returns_disagree:
                    # a list here, a tensor there (timm's `return outs` under `fork_feat`, else the image): made
                    # again, every return in torch's layout, and its callers take what it returns so
                    attempts.append(("source", hands_training, None))
                elif output_layout is None and recursive and not _same_template(returned, assumed):
                    # a method calling itself (an Hourglass' `_hour_glass_forward(n - 1, low1)`) took its own result
                    # as assumed: made again taking what it returned (channels-last images stay so), and where that
                    # does not settle, every return in torch's layout
                    attempts.append(("source", hands_training, None) if assumed is not None or _in_torch_order(
                        returned) else (None, hands_training, returned))
                elif recursive and takes_training and not hands_training:
                    attempts.append((output_layout, True, assumed))  # its calls of itself hand the flag on
                else:
                    break
                self.undo_translation(ir, before)
            signature.output = translator.return_template
            signature.takes_training = takes_training
            self.method_code[key] = (definition, clean_body(body, self.ctx.ir.mappings if self.ctx.ir else ()),
                                     signature.takes_training)
            return signature
        finally:
            self.speculative = speculative
            self.in_progress.discard(key)

    def function_signature(self, name, args, kwargs):
        if name in self.ctx.function_signatures:
            return self.function_variant(name, self.ctx.function_signatures[name], args, kwargs)
        if name in self.in_progress:
            return None
        self.in_progress.add(name)
        try:
            # tensors keep the first caller's layout (a channel shuffle runs on channels-last data); other
            # callers convert to it, as for methods, unless the function is layout-free (function_variant)
            signature, body = self.translate_function(name, args, kwargs,
                                                      lambda sig: self.ctx.function_signatures.__setitem__(name, sig))
            self.function_code[name] = (self.source.functions[name], body)
            return signature
        finally:
            self.in_progress.discard(name)

    def translate_function(self, name, args, kwargs, register):
        """(signature, body) of module-level function `name` translated for `args`; `register(signature)` runs
        before the body is translated (a recursive call finds it)."""
        definition = self.source.functions[name]
        params = list(declared_params(definition))
        env, arg_values = self.bind_call_values(params, (list(args), dict(kwargs)), (None, name))
        for position, param in enumerate(params):  # what no caller handed over is a plain Python value
            given = position < len(args) or param.name.value in kwargs
            if not given and param.star not in ("*", "**"):
                env[param.name.value] = python(param.name.value)
        arg_values = [env[p.name.value] for p in params if p.star not in ("*", "**")]
        signature = ClassSignature(arg_values=tuple(arg_values))
        signature.kwarg_values = {p.name.value: env[p.name.value] for p in params if p.name.value in env}
        register(signature)
        translator = ClassBodyTranslator(self, None, "function", env, None)
        translator.function_name = name
        translator.handed_heads = handed_heads(arg_values)
        # (a module-level function's returns all give a value: the first one's pending permute is the template the
        # others are brought to, shape_return)
        # (one read as a value returns what call_module expects: torch's layout, channels-last at most)
        translator.returns_pending_permute = returns_values_at_end(definition) and name not in self.function_values
        body, _ = translator.block(definition.body, 1)
        signature.output = translator.return_template
        return signature, clean_body(body)

    def function_variant(self, name, signature, args, kwargs):
        """As layout_variant, for a module-level function: a caller handing tensors in other layouts than the
        function was translated for uses a translation for its own layouts when that is the very same code."""
        if name in self.in_progress or name not in self.function_code or not signature.arg_values:
            return signature
        swapped = [a for a, w in zip(args, signature.arg_values) if isinstance(a, Value) and a.is_tensor and
                   (a.rank is None or a.rank > 2) and (w.is_tensor and {a.layout, w.layout} == {
                       "source", "channels_last"} or a.channels_last and _untyped_value_param(name, w, self))]
        # a tensor where the function was translated for a Python value, or the other way round (demucs'
        # `center_trim(tensor, reference)`, a tensor or a length, decided by `hasattr(reference, "size")`)
        kinds = [a.kind for a, w in zip(args, signature.arg_values) if isinstance(a, Value) and isinstance(w, Value)
                 and {a.kind, w.kind} == {"tensor", "python"} and _known_number(a if a.kind == "python" else w)]
        if not swapped and not kinds:
            return signature
        key = (name, tuple(a.layout if isinstance(a, Value) and a.is_tensor else "python" for a in args))
        if key not in self.function_trials:
            ir = self.ctx.ir
            state, runtime_before = (_ir_state(ir) if ir is not None else None), set(self.ctx.used_runtime)
            self.in_progress.add(name)
            try:
                trial, body = self.translate_function(name, args, kwargs, lambda sig: None)
            finally:
                self.in_progress.discard(name)
                if ir is not None:
                    _restore_ir_state(ir, state)
            self.function_trials[key] = (trial, body, self.ctx.used_runtime - runtime_before)
        trial, body, _ = self.function_trials[key]
        base = self.function_code[name][1]
        if body == base:
            return trial
        if not kinds and _conversions(body) >= _conversions(base) + len(swapped):
            return signature
        # a second translation of the function, for these layouts or kinds (its callers convert nothing)
        variants = self.function_variant_code.setdefault(name, {})
        if key[1] not in variants:
            layout = next(a.layout for a in swapped) if swapped else None
            variant = f"{name}_for_{'tensor' if kinds[0] == 'tensor' else 'value'}" if kinds else \
                f"{name}_{'channels_last' if layout == 'channels_last' else 'torch_order'}"
            taken = set(self.source.functions) | set(self.source.classes) | {
                n for entry in self.function_variant_code.values() for n, _ in entry.values()}
            while variant in taken:
                variant += "_"
            variants[key[1]] = (variant, body)
        trial.callee = variants[key[1]][0]
        return trial

    def channels_last_variants(self):
        """{function: its variant for a channels-last image} for the functions the file hands its blocks as values
        (`Unit(c, shuffle)`), where that variant converts less and returns a channels-last image: `call_module`,
        which runs `self.shuffle(y, 4)`, calls it on an image it holds so (the function's `held_variants`)."""
        found = {}
        for name in sorted(self.function_values):
            signature = self.ctx.function_signatures.get(name)
            params = [p for p in declared_params(self.source.functions[name]) if p.star not in ("*", "**")]
            if signature is None or not params:
                continue
            handed = [tensor(params[0].name.value, 4, "channels_last")] + [python(p.name.value) for p in params[1:]]
            trial = self.function_variant(name, signature, handed, {})  # (as a direct caller would hand them)
            output = trial.output if trial is not signature else None
            if getattr(trial, "callee", None) and output is not None and output.is_tensor and \
                    output.channels_last and output.rank == 4:
                found[name] = trial.callee
        return found

    # --- other methods -----------------------------------------------------------------------------------
    def translate_plain_methods(self):
        """Methods no translated code calls, in the order codegen places them (source order, class by class)."""
        for statement in self.source.module.body:
            info = self.source.classes.get(statement.name.value) if isinstance(statement, cst.ClassDef) else None
            if info is None:
                continue
            for name, definition in info.methods.items():
                key = (info.name, name)
                if name not in ("__init__", "forward") and key not in self.method_code:
                    self.plain_method_code[key] = self.translate_plain_method(info, definition)

    def translate_config_methods(self):
        """Methods of plain classes the model uses (configs such as `BlockParams.from_init_params`) that compute
        with torch or mxnet, or that draw: translated like module-level functions (torch.arange -> TensorFlow,
        eager in __init__; plotting calls become stubs that raise when called)."""
        for statement in self.source.module.body:
            if not (isinstance(statement, cst.ClassDef) and statement.name.value not in self.source.classes and
                    statement.name.value in self.source.model_names):
                continue
            autograd = any(self.source.imports.resolve(base.value) == "torch.autograd.Function"
                           for base in statement.bases)
            for item in statement.body.body:
                if not isinstance(item, cst.FunctionDef):
                    continue
                if autograd and item.name.value in ("forward", "backward"):
                    # forward(ctx, *inputs) / backward(ctx, *grads): the arguments after ctx are tensors
                    params = list(declared_params(item))
                    env = {p.name.value: (tensor(p.name.value) if index else python(p.name.value))
                           for index, p in enumerate(params)}
                    translator = ClassBodyTranslator(self, None, "function", env, None)
                    translator.autograd_ctx = params[0].name.value if params else None
                    body, _ = translator.block(item.body, 2)
                    self.config_method_code[(statement.name.value, item.name.value)] = clean_body(body)
                elif _uses_torch(item, self.source.imports, SOURCE_FRAMEWORKS + tuple(DISPLAY_LIBRARIES)):
                    env = {p.name.value: python(p.name.value) for p in declared_params(item)}
                    translator = ClassBodyTranslator(self, None, "function", env, None)
                    # a method that draws (d2l's ProgressBoard.draw): what it cannot translate is display code
                    self.ctx.display_code = _uses_torch(item, self.source.imports, DISPLAY_LIBRARIES)
                    try:
                        body, _ = translator.block(item.body, 2)
                    finally:
                        self.ctx.display_code = False
                    self.config_method_code[(statement.name.value, item.name.value)] = clean_body(body)

    def translate_plain_method(self, info, definition):
        params = declared_params(definition)
        env = {p.name.value: python(p.name.value) for p in params}
        translator = ClassBodyTranslator(self, info, "init", env)
        ir = self.ctx.ir_for(info)
        self.ctx.current.append(ir)
        try:
            body, _ = translator.block(definition.body, 2)
        finally:
            self.ctx.current.pop()
        return body


def _settled_values(args, kwargs):
    """(args, kwargs) with the tensors handed permuted taken in torch's order (the caller settles them)."""
    def settled(value):
        return value.but(layout="source") if is_permuted(value) else value

    return [settled(a) for a in args], {k: settled(v) for k, v in kwargs.items()}


def _raising_output(translator, terminated):
    """A call body every path of which raises (a stub) returns nothing a caller could convert: its value is a stub's,
    which takes any layout (GluonCV's DropBlock, stubbed, must not make the blocks around it convert)."""
    if translator.return_template is None and terminated:
        translator.return_template = stub_value("")


def _declared_sequence_output(translator, forward):
    """A call declared to return a list or a tuple of tensors (`-> List[torch.Tensor]`: timm's SequentialList, whose
    loop hands each block its predecessor's list through `call_module`; PiT's SequentialTuple) that porter typed as
    one tensor returns what the runtime hands back: a list or tuple, its tensors in the layout the loop held them."""
    template = translator.return_template
    declared = declared_tensors(forward)
    if template is None or declared is None or not (template.is_tensor or template.kind == "python" and
                                                    template.static is None):
        return
    # (images the caller held channels-last come back so: `call_module(..., held="channels_last")`)
    layout = "channels_last" if template.is_tensor and template.layout == "channels_last" else "source"
    translator.return_template = Value("", "tuple", items=None, static=(
        "each", tensor("", template.rank, layout))) if declared == "list" else \
        Value("", "tuple", items=tuple(tensor("", None, layout) for _ in range(declared)))


def _same_held(new, old):
    """Whether Value `new` is held as `old` is (kind, image layout, known ranks; item by item for tuples)."""
    if new is None or old is None:
        return new is old
    if new.kind != old.kind:
        return False
    if new.is_tensor:
        return new.layout == old.layout and (None in (new.rank, old.rank) or new.rank == old.rank)
    if new.kind == "tuple" and new.items is not None and old.items is not None:
        return len(new.items) == len(old.items) and all(_same_held(n, o) for n, o in zip(new.items, old.items))
    return new.kind != "tuple" or new.items is None and old.items is None

class _KindTests(cst.CSTVisitor):
    def __init__(self, name):
        self.name, self.found = name, False

    def visit_Call(self, node):
        if dotted_name(node.func) == "isinstance" and node.args and isinstance(node.args[0].value, cst.Name) and \
                node.args[0].value.value == self.name:
            self.found = True


def _tests_kind(function, name):
    """Whether `function` tests the kind of its parameter `name` (`isinstance(x, list)`): it takes either kind."""
    visitor = _KindTests(name)
    walk(function, visitor)
    return visitor.found


def _arg_layout(value):
    """The layout a class's call takes argument `value` in, as its `porter_layout` says: a tensor's, or that of the
    images of a list of alike images (HRNet's branches, which call_module converts item by item); else "python"."""
    if value.is_tensor:
        return value.layout
    each = element_template(value) if value.kind == "tuple" else None
    return "channels_last" if each is not None and each.is_tensor and each.channels_last else "python"


# builtins that look at a value without computing on it: a class's first use of its image is a later call
INTROSPECTION = frozenset({"isinstance", "len", "type", "callable", "id", "hasattr"})


def _subscripted_items(func, ir):
    """The modules `self.layers[i]` / `self.convs[i][j]` (`func`, subscripts of an attribute of self holding lists of
    modules) may be, or None."""
    base, levels = func, 0
    while isinstance(base, cst.Subscript):
        base, levels = base.value, levels + 1
    if not (isinstance(base, cst.Attribute) and dotted_name(base.value) == "self"):
        return None
    refs = [ir.attributes.get(base.attr.value)]
    for _ in range(levels):
        if not all(hasattr(r, "kind") and r.kind in ("list", "sequential") and r.elements for r in refs):
            return None
        refs = [element for r in refs for element in r.elements]
    return refs


def _plain_aliases(body, param):
    """`param` and the names the body's top-level statements bind to it as it is, before anything else uses it
    (U^2-Net's `hx = x`)."""
    aliases = {param}
    for statement in body.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name) and
                small.value.value in aliases and isinstance(small.targets[0].target, cst.Name)):
            break
        aliases.add(small.targets[0].target.value)
    for node in descendants(body):  # `x_in = x if i == 0 else feats[i - 1]` (UNet++'s first column): on its
        # first turn, the parameter as it is
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.IfExp) and any(isinstance(side, cst.Name) and side.value in aliases
                                                              for side in (node.value.body, node.value.orelse)):
            aliases.add(node.targets[0].target.value)
    return aliases


def _reshaped_first(forward, param):
    """Whether the first call `forward` makes with `param` reshapes it (`x.view((-1, 3) + x.size()[-2:])`: TSM's
    frames moved into the batch, `x.flatten(1)`): regrouped in torch's order, so the model converts what it makes
    of it, not its input (sizes read first, `x.size(0)`, decide nothing)."""
    aliases = _plain_aliases(forward.body, param) if forward is not None else ()
    for node in _calls_in_order(forward.body) if forward is not None else ():
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in aliases:
            if func.attr.value in ("size", "dim", "numel"):
                continue
            return func.attr.value in VIEWS + ("flatten", "view_as", "reshape_as")
        if any(isinstance(a.value, cst.Name) and a.value.value in aliases for a in node.args):
            return False
    return False


def _layout_out(template):
    """The layout a class's call returns its images in, as its `layout_out` says: a returned tuple's images count
    (call_module converts each for a caller that cannot follow them)."""
    if template is None:
        return "source"
    if is_permuted(template):  # (a class only translated code calls, returning a pending transpose)
        return template.layout
    if isinstance(template.static, HeldTable):  # a dict of channels-last features (call_module converts each value)
        return "channels_last"
    each = element_template(template) if template.kind == "tuple" and template.items is None else None
    images = [template] if template.is_tensor else [each] if each is not None and each.is_tensor else [
        i for i in template.items or () if i.is_tensor] if template.kind == "tuple" else []
    return "channels_last" if any(i.channels_last for i in images) else "source"


def _base_init_calls(init, base):
    """(call, leading arguments to skip) of `super().__init__(...)` / `super(Cls, self).__init__(...)` /
    `Base.__init__(self, ...)` in a subclass's `__init__`."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            func = node.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__"):
                return
            if isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and \
                    func.value.func.value == "super":
                found.append((node, 0))
            elif isinstance(func.value, cst.Name) and func.value.value == base and node.args and \
                    isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self":
                found.append((node, 1))

    walk(init.body, Finder())
    return found


def _gathered_images(args, position, starred, spread):
    """The template of the channels-last images a `*args` parameter at `position` gathers from a caller's `args`
    (the positional ones from there on, then a starred list's items): when every one is such an image of one
    rank; else None (torch's layout)."""
    if starred is not None and spread is None:
        return None
    if starred is not None and starred < position:  # (the starred list spreads over the parameters before too)
        return spread
    explicit = args[position:starred] if starred is not None else args[position:]
    templates = [a for a in explicit if a.is_tensor and a.channels_last and (a.rank or 0) > 2]
    if len(templates) != len(explicit) or (spread is None and not templates):
        return None
    every = templates + ([spread] if spread is not None else [])
    if len({t.rank for t in every}) != 1:
        return None
    return every[0].with_code("").but(channels=None, static=None)


def _is_self_attribute(node):
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _one_kind(refs):
    """What an attribute set by `setattr(self, name, ...)` with a computed name holds: the one module all those
    calls set, or one unordered container of all their children when each sets a container of one kind."""
    if all(ref == refs[0] for ref in refs):
        return refs[0]
    if len({ref.kind for ref in refs}) == 1 and refs[0].kind in ("sequential", "list", "dict"):
        return ModuleRef(refs[0].kind, elements=tuple(e for ref in refs for e in ref.elements), ordered=False)
    return ModuleRef("unknown")


# the source frameworks a plain class's method may compute with (translated like module-level functions)
SOURCE_FRAMEWORKS = ("torch", "mxnet")


def _uses_torch(node, imports, roots=("torch",)):
    """True when `node` reads a name that resolves into torch (`torch.arange`, `nn.Linear`, `F.relu`), or into
    one of the packages `roots` names."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, attribute):
            canonical = imports.resolve(attribute)
            if canonical is not None and canonical.split(".")[0] in roots:
                found.append(attribute)
            if not found:
                walk(attribute.value, self)  # `self.data`'s `data` is an attribute, not the module-level name
            return False

        def visit_Name(self, name):
            canonical = imports.resolve(name)
            if canonical is not None and canonical.split(".")[0] in roots:
                found.append(name)

    walk(node, Finder())
    return bool(found)


def _case_condition(statics):
    """`self.dims == [0, 2, 3, 1]` for one set of (attribute, literal) pairs; `in (...)` for several."""
    by_attrs = {}
    for static in statics:
        by_attrs.setdefault(tuple(attr for attr, _ in static), []).append(static)
    conditions = []
    for attrs, group in by_attrs.items():
        if len(attrs) == 1:
            left, values = f"self.{attrs[0]}", [static[0][1] for static in group]
        else:
            left = "(" + ", ".join(f"self.{a}" for a in attrs) + ")"
            values = ["(" + ", ".join(text for _, text in static) + ")" for static in group]
        conditions.append(f"{left} == {values[0]}" if len(values) == 1 else f"{left} in ({', '.join(values)})")
    return " or ".join(conditions)


# what a translation notes on a class's IR that changes how its weights load or its children run: a specialised case
# noting otherwise is dropped (the generic call serves its instances)
_WEIGHT_NOTES = ("flatten_inputs", "plain_linears", "image_rows", "held_reshapes")


def _ir_state(ir):
    """Copies of what translating a body notes on a class's IR."""
    return {"adjustments": list(ir.adjustments), "unsupported": list(ir.unsupported), "ops": set(ir.ops),
            "mappings": copy.deepcopy(ir.mappings), "flatten_inputs": dict(ir.flatten_inputs),
            "plain_linears": set(ir.plain_linears), "image_rows": dict(ir.image_rows),
            "held_reshapes": dict(ir.held_reshapes)}


def _restore_ir_state(ir, state):
    for field, value in state.items():
        setattr(ir, field, value)


def _runs_on_held_sequence(ref):
    """Whether the layer `ref` computes on a sequence held channels-last as it lies: a Linear (it contracts the
    features where they are stored), or a layer chosen at run time among such layers and channels-last ones
    (timm's Mlp: `partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear`)."""
    if not hasattr(ref, "kind"):
        return False
    if ref.kind == "rule":
        return ref.rule.runs_channels_last
    return ref.kind == "unknown" and bool(ref.alternatives) and any(_runs_on_held_sequence(a) for a in ref.alternatives) \
        and all(_runs_on_held_sequence(a) or a.kind == "rule" and a.rule.layout == "channels_last"
                for a in ref.alternatives)


def _untyped_value_param(name, handed, translator):
    """Whether `handed` is what function `name`, read as a value, was translated taking: an untyped parameter (torch's
    layout, as call_module hands it), which a caller's channels-last image may take in a variant of its own."""
    return name in translator.function_values and handed.kind == "python" and handed.static is None


CONVERTING_STEPS = ("to_channels_first(", "to_channels_last(", "permute(", "transpose(", "call_module(")
# (and the steps that move data only for some layouts: a trial for tokens held permuted counts these too)
MOVING_STEPS = CONVERTING_STEPS + ("permute_axes(", "broadcast_in_order(", "view_in_layout(", "flatten_in_layout(")


def _without_notes(body):
    """A translated body's lines but porter's own comments (`# porter: returned before its permute ...`)."""
    return [line for line in body if not line.strip().startswith("# porter:")]


def _moves(body):
    """How many steps that may move a tensor's data between layouts a translated body writes (a weight or buffer
    broadcast against tokens held permuted is not counted: a reshape where it moves size-1 axes only, a small
    constant per step otherwise)."""
    text = "\n".join(body)
    return sum(text.count(name) for name in MOVING_STEPS) - text.count("broadcast_in_order(self.")


def _conversions(body):
    """How many layout conversions a translated body writes (transposes it may trace)."""
    text = "\n".join(body)
    return sum(text.count(name) for name in CONVERTING_STEPS)


def _runs_as_written(body):
    """Whether a translated body of an elementwise class runs on any layout as it is (its `porter_layout` "any"):
    it converts nothing and broadcasts no operand for one layout (a learnable scale meeting an image of unknown
    rank: `broadcast_channels_last(self.scale, len(x.shape))` holds for a channels-last image only)."""
    text = "\n".join(body)
    return _conversions(body) == 0 and "broadcast_channels_last(" not in text and "broadcast_in_order(" not in text


def _ends_in_return(body):
    """True when the last statement at the top level of a translated body (8 spaces in) returns or raises."""
    top = [line for line in body if line.startswith(INDENT * 2) and not line.startswith(INDENT * 2 + " ") and
           line.strip() and not line.strip().startswith(("#", ")", "]", "}"))]
    return bool(top) and top[-1].strip().startswith(("return", "raise"))


def _body_docstring_lines(body):
    """How many lines the docstring opening a translated body takes (0 without one)."""
    first = body[0].strip() if body else ""
    if not first.lstrip("rRbBuU").startswith(('"', "'")):
        return 0
    for count in range(1, len(body) + 1):
        try:
            tree = ast.parse("\n".join(line.strip() if index == 0 else line for index, line in
                                       enumerate(body[:count])).strip())
        except SyntaxError:
            continue
        if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
            return count
        return 0
    return 0


_OWN_CHILDREN = ("self._modules.values", "self.children", "self.values")


def _modules_built_before(resolver, function, call, env):
    """The modules a factory's body binds to local names before the statement holding `call` (torchvision's
    `_fcn_resnet`: `backbone = IntermediateLayerGetter(backbone, ...)`, `classifier = FCNHead(2048, n)`, then
    `FCN(backbone, classifier, ...)`), as ModuleRefs; only plain assignments of the body's own statements, in order,
    and only modules porter can type."""
    built = {}
    for statement in function.body.body:
        if any(node is call for node in descendants(statement)):
            break
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                         cst.Name):
                name = small.targets[0].target.value
                ref = resolver.ref_of(small.value, {**env, **built}) if isinstance(small.value, cst.Call) else None
                built[name] = ref if ref is not None and ref.kind != "unknown" else UNKNOWN_MODULE
    return built


def _loop_bound_modules(body, attributes, container_subclass=False):
    """Names a forward binds to the layers of its own containers, with the ModuleRef each stands for: loop targets
    over `self.layers` (`for cel, transformer in self.layers:`, one per position of the elements; a comprehension's
    too) or over a
    container subclass's own children (`for module in self._modules.values():`; none: an empty Sequential, the loop
    never runs) and the parameter of `map(lambda conv: conv(x), self.convs)`; `container_subclass`: the class is
    a container subclass, whose own children porter may not see. A module porter cannot type is
    listed too (torchvision's IntermediateLayerGetter, a ModuleDict of `model.named_children()`): `call_module`
    runs it in the layout the loop holds its image in."""
    bound = {}

    def container(node):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            ref = attributes.get(node.attr.value)
            return ref if hasattr(ref, "kind") and ref.kind in ("list", "sequential", "dict") else None
        children = attributes.get("#children")  # a container subclass's own children, as its constructions hand them
        # (or those a plain module's `add_module` adds, when they are all its children)
        others = [ref for name, ref in attributes.items() if not name.startswith("#") and hasattr(ref, "kind") and
                  ref.kind != "classobj"]
        if hasattr(children, "kind") and children.kind == "list" and any(r not in children.elements for r in others):
            children = None
        own = dotted_name(node) == "self" or isinstance(node, cst.Call) and not node.args and \
            dotted_name(node.func) in _OWN_CHILDREN
        if own and not hasattr(children, "kind") and container_subclass:  # (children porter cannot see: timm's
            return ModuleRef("list", elements=(UNKNOWN_MODULE,), ordered=False)  # FeatureDictNet's `self.update`)
        return children if own and hasattr(children, "kind") else None

    def bind(target, ref):
        if isinstance(target, cst.Name) and ref.kind == "sequential" and not ref.elements:
            bound[target.value] = ref  # (a loop over no children never runs: what it calls takes no image)
        elif isinstance(target, cst.Name):
            bound[target.value] = ref
        elif isinstance(target, (cst.Tuple, cst.List)) and ref.kind in ("list", "sequential") and ref.ordered and \
                len(ref.elements) == len(target.elements):
            for element, item in zip(target.elements, ref.elements):
                bind(element.value, item)

    class Visitor(cst.CSTVisitor):
        def visit_For(self, node):
            target = node.target
            iterated = node.iter
            if isinstance(iterated, cst.Call) and dotted_name(iterated.func) == "enumerate" and \
                    len(iterated.args) == 1 and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                iterated, target = iterated.args[0].value, target.elements[1].value  # (`for i, (name, m) in
                # enumerate(self.items())`: timm's FeatureDictNet)
            if isinstance(iterated, cst.Call) and not iterated.args and dotted_name(iterated.func) in (
                    "self.items", "self._modules.items", "self.named_children") and isinstance(
                    target, cst.Tuple) and len(target.elements) == 2:
                ref = container(iterated.with_changes(func=cst.parse_expression("self.values")))
                target = target.elements[1].value  # `for name, layer in self.items():` binds the layer
            else:
                ref = container(iterated)
            if ref is not None:
                bind(target, ref if ref.kind == "sequential" and not ref.elements else ref.loop_element())

        def visit_CompFor(self, node):  # `[conv(x) for conv in self.convs]` (SKNet's branches)
            self.visit_For(node)

        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value == "map" and len(node.args) == 2 and \
                    isinstance(node.args[0].value, cst.Lambda) and len(node.args[0].value.params.params) == 1:
                ref = container(node.args[1].value)
                if ref is not None:
                    bind(node.args[0].value.params.params[0].name, ref.element())

    walk(body, Visitor())
    return bound


def _calls_in_order(body):
    """Call nodes of a function body in evaluation order (inner calls before the calls that use them)."""
    calls = []

    class Visitor(cst.CSTVisitor):
        def leave_Call(self, node):
            calls.append(node)

    walk(body, Visitor())
    return calls


# tensor methods that give the tensor's values as they are (no dim moved)
AS_IS_METHODS = frozenset({"contiguous", "clone", "detach", "float"})


def _plain_receiver(node):
    """The name `x` of `x`, `x.contiguous()`, `x.clone().detach()` ...: a tensor named as it is, else None."""
    while isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value in AS_IS_METHODS:
        node = node.func.value
    return node.value if isinstance(node, cst.Name) else None


def _sequence_reorder(node):
    """Whether transpose/permute call `node` swaps the last two dims of a rank-3 tensor: `transpose(1, 2)`,
    `transpose(-1, -2)`, `permute(0, 2, 1)`."""
    values = [a.value for a in node.args]
    if len(values) == 1 and isinstance(values[0], (cst.Tuple, cst.List)):
        values = [e.value for e in values[0].elements]
    dims = [cst.Module([]).code_for_node(v).replace(" ", "") for v in values]
    return dims in (["1", "2"], ["2", "1"], ["-1", "-2"], ["-2", "-1"], ["0", "2", "1"])


def _pattern_input_axes(node):
    """The number of axes the left side of an einops pattern (`rearrange(x, 'b (h w) c -> ...')`) names, or None."""
    if len(node.args) < 2 or not isinstance(node.args[1].value, cst.SimpleString):
        return None
    left = node.args[1].value.evaluated_value.split("->")[0]
    return len(re.findall(r"\([^)]*\)|[\w.]+", left))


def _channels_last_permute_rank(node, names):
    """The rank of `name.permute(0, 2, ..., 1)` / `torch.permute(name, (0, 2, ..., 1))` moving the channels of an
    image named in `names` last (torch's order of the channels-last tensor: a relabelling, no data moved), else
    None."""
    dims = _permuted_dims(node, names)
    rank = len(dims) if dims is not None else 0
    # (rank 3's `permute(0, 2, 1)` reads both ways: a sequence (N, L, C) made a Conv1d's input as much as an image
    # made tokens; held as it lies, the next op decides, never worse than converting first: `_channels_first_...`)
    return rank if rank > 3 and dims == [0] + list(range(2, rank)) + [1] else None


def _channels_first_permute_rank(node, names):
    """The rank of `name.permute(0, 3, 1, 2)` (and its other ranks) moving the last dim of a tensor named in `names`
    to dim 1: a channels-last tensor in torch itself (timm's MambaOut runs its stages so) made an image, which the
    port holds as it lies (a relabelling, no data moved), else None."""
    dims = _permuted_dims(node, names)
    rank = len(dims) if dims is not None else 0
    return rank if rank > 2 and dims == [0, rank - 1] + list(range(1, rank - 1)) else None


def _permuted_dims(node, names):
    """The dims of `name.permute(...)` / `torch.permute(name, ...)` of a tensor named in `names` (None for a dim that
    is not a literal), else None."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "permute" and isinstance(func.value, cst.Name) and \
            func.value.value in names:
        args = node.args
    elif dotted_name(func) == "torch.permute" and node.args and isinstance(node.args[0].value, cst.Name) and \
            node.args[0].value.value in names:
        args = node.args[1:]
    else:
        return None
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
        args = args[0].value.elements
    return [int(a.value.value) if isinstance(a.value, cst.Integer) else None for a in args]


def _further_ancestors(info):
    """In-file ancestors of a module class other than its first base (their bases, transitively)."""
    found, frontier = [], [info.family[b] for b in info.bases[:1] if b in (info.family or {})]
    while frontier:
        current = frontier.pop()
        for base in current.bases:
            if base not in found and base in current.family:
                found.append(base)
                frontier.append(current.family[base])
    return [name for name in found if name not in info.bases[:1]]


def _without_variation(static):
    """A list's static with its item template (`("each", template)`) no longer saying what the values are made of."""
    if isinstance(static, tuple) and len(static) == 2 and static[0] == "each" and isinstance(static[1], Value):
        return ("each", static[1].but(varies_along=None))
    return static


def _has_parameter(definition, name):
    parameters = definition.params
    return any(p.name.value == name for p in (*parameters.posonly_params, *parameters.params,
                                              *parameters.kwonly_params))


def _same_template(returned, assumed):
    """Whether a method's return template is the one its own recursive calls assumed (None: torch's order)."""
    if assumed is None:
        return _in_torch_order(returned)
    if not isinstance(returned, Value) or returned.kind != assumed.kind:
        return False
    if returned.is_tensor:
        return returned.layout == assumed.layout and returned.rank == assumed.rank
    items, assumed_items = returned.items or (), assumed.items or ()
    return len(items) == len(assumed_items) and all(_same_template(a, b) for a, b in zip(items, assumed_items))


def _in_torch_order(template):
    """Whether a return template (a method's result as its callers see it) holds no tensor out of torch's order."""
    if template is None or not isinstance(template, Value):
        return True
    if template.is_tensor:
        return template.layout == "source"
    return all(_in_torch_order(item) for item in template.items or ())


def _reads_training(lines):
    """Whether translated body `lines` read `training` (its code, not a comment: `# for training/inference`)."""
    return any(re.search(r"\btraining\b", line.split("#", 1)[0]) for line in lines)


def _note_agreed(table, key, value):
    """`table[key] = value` where every assignment noted so far agrees; None once two disagree."""
    table[key] = value if table.get(key, value) == value else None


def _known_number(value):
    """Whether a Python value is a number or string porter knows (`4`), not one of unknown kind (which a tensor
    may be)."""
    return isinstance(value.static, (int, float, str)) and value.static is not None
