"""Call translation: module calls, rule-registered functions and tensor methods, in-file helpers, builtins."""

import ast
import re
from dataclasses import replace

import libcst as cst

from porter.frontend.gluon_numpy import uses_numpy_interface
from porter.frontend.imports import KEPT_STDLIB, dotted_name
from porter.frontend.static_branches import ALWAYS_IN_PORT, decided_getattr, torch_has, value_has
from porter.frontend.walk import descendants
from porter.frontend.weight_loading import WEIGHT_DOWNLOADS
from porter.ir.containers import CONTAINERS, container_runtime
from porter.ir.layout import (
    OuterNamesHoister,
    element_template,
    kernel_layout,
    layout_of_order,
    separable_order,
    settle,
    to_layout,
    unify,
)
from porter.ir.lists import HeldTable, held_features, holds_images, images_held, starred_images
from porter.ir.op_nodes import record
from porter.ir.values import (
    UNKNOWN_MODULE,
    EinsumRecipe,
    LocalLambda,
    ModuleRef,
    NamePattern,
    Value,
    is_permuted,
    iterable_code,
    may_be_images,
    physical_order,
    python,
    reads_through,
    receiver_code,
    remap_axis,
    result_of,
    stub_value,
    tensor,
    untyped_as_tensor,
    written_channels,
)
from porter.ir.varying import varying_after
from porter.passes.call_literals import HandedFunction
from porter.passes.channels import (
    channels_after_function,
    channels_after_rule,
    counts_channels,
    passes_channels,
    rebase,
)
from porter.passes.feature_dicts import builds_a_dict, keyed_features
from porter.passes.function_attributes import HandedLambdas, LayoutFreeFunction
from porter.passes.held_recursion import held_channels_last, recursive_calls
from porter.passes.held_reshapes import held_step
from porter.passes.image_views import image_views
from porter.passes.kernel_buffers import kernel_buffers
from porter.passes.lambda_signatures import call_with_signature, decided_signature, only_called
from porter.passes.method_aliases import aliased_methods
from porter.passes.modules import ModuleResolver, attribute_by_pattern, tensor_by_pattern
from porter.passes.optional_values import holds_none
from porter.passes.pointwise_convs import pointwise_conv_attribute
from porter.passes.recurrent_states import one_unidirectional_layer
from porter.passes.super_forward import super_forward_owner, translate_super_forward
from porter.rules.constants import TENSOR_CLASS_NAMES, TORCH_HOST_CALLS
from porter.rules.gluon_numpy import NUMPY_METHODS
from porter.rules.registry import is_pointwise, keeps_rank, module_rule_for_call, with_kept_dtype

PASSTHROUGH_BUILTINS = {"range", "int", "float", "str", "bool", "list", "tuple", "dict", "zip", "enumerate",
                        "isinstance", "min", "max", "abs", "round", "sum", "print", "hasattr", "getattr",
                        "setattr", "sorted", "reversed", "any", "all", "divmod", "type", "id", "repr", "format",
                        "map", "filter", "iter", "next", "set", "frozenset", "super", "slice", "callable", "pow"}
# torch.nn.Module's methods that walk its parameters, buffers and children (the port's TorchModule has them too)
MODULE_ITERATORS = {"parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                    "modules", "named_modules"}
# canonical-id roots of the frameworks whose calls go through the rule registry
RULE_FRAMEWORKS = ("torch", "mxnet", "einops", "timm")  # canonical prefixes whose names rules translate
GLUON_OPS = "mxnet.ndarray."  # where the rules of NDArray methods live, for Gluon sources
# activation checkpointing, `checkpoint(f, *args)`: torch's and timm's wrapper of it, and timm's `checkpoint_seq(
# functions, x)` over a Sequential (a list literal of stages goes to its runtime function, rules/timm.py)
SEQUENCE_CHECKPOINTS = frozenset({"timm.models._manipulate.checkpoint_seq", "timm.models.checkpoint_seq"})
CHECKPOINTS = frozenset({"torch.utils.checkpoint.checkpoint", "timm.models._manipulate.checkpoint",
                         "timm.models.checkpoint"}) | SEQUENCE_CHECKPOINTS

# torch's gradient-mode switches used as context managers (`with torch.no_grad():`, timm's `with
# torch.inference_mode(False), torch.autocast(...)`): a plain block in the port (Keras' training argument and the
# GradientTape decide what is differentiated)
GRAD_MODE_CONTEXTS = frozenset({"torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
                                "torch.autograd.no_grad", "torch.autograd.enable_grad",
                                "torch.autograd.inference_mode", "torch.autograd.set_grad_enabled",
                                "torch.jit.ignore", "torch.jit.unused"})


NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}  # NumPy's spellings torch accepts for its own


class Call:
    """A call bound for a rule: positional and keyword argument Values, in source order."""

    def __init__(self, canonical, args, kwargs, line, receiver=None):
        if canonical.startswith(("torch.", "Tensor.")) and any(k in NUMPY_KEYWORDS for k in kwargs):
            # torch takes NumPy's names for its own (`torch.mean(w, axis=[1, 2, 3], keepdims=True)`, an NFNet port)
            kwargs = {NUMPY_KEYWORDS[k] if k in NUMPY_KEYWORDS and NUMPY_KEYWORDS[k] not in kwargs else k: v
                      for k, v in kwargs.items()}
        self.canonical, self.args, self.kwargs, self.line = canonical, args, kwargs, line
        self.receiver = receiver

    def all_args(self):
        return ([self.receiver] if self.receiver is not None else []) + _spread(self.args)

    def bind(self, signature):
        """Map parameters of `signature` to Values (receiver first for Tensor methods)."""
        bound, positional = {}, self.all_args()
        params = list(signature.params)
        for index, value in enumerate(positional):
            if index < len(params):
                bound[params[index]] = value
            elif signature.vararg:
                bound.setdefault(signature.vararg, []).append(value)
        for name, value in self.kwargs.items():
            bound[name] = value
        return bound


def _spread(args):
    """Positional arguments with a starred one whose value porter knows (`x.transpose(*self.shape)` in a class built
    with `shape=(1, 2)`) spelt out item by item, so a rule reads its dims as it reads literal ones."""
    spread = []
    for value in args:
        items = value.static if value.kind == "starred" and value.code[1:].replace(".", "").replace("_", "") \
            .isalnum() else None
        if isinstance(items, (tuple, list)) and all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            spread.extend(python(f"{value.code[1:]}[{index}]", static=item) for index, item in enumerate(items))
        else:
            spread.append(value)
    return spread


class CallTranslator:
    """Mixin for ExpressionTranslator: everything about `f(...)`."""

    sequential_code = None  # the Sequential being simulated (its children are indexed from it)
    nested_sequential = False  # simulating a Sequential inside the one called
    positions_kept = False  # translating a lambda to be run as written: class calls keep their positional arguments

    def _expr_Call(self, node):
        func = node.func
        line = self.source.line_of(node) or self.line
        self.line = line
        if isinstance(func, cst.Lambda):  # `(lambda t: t * 2.0)(f)`: called where it is written, on torch's layout
            args = [self.as_plain(self.expr(a.value)) for a in node.args]
            code = f"({self.expr(func).code})({', '.join(_argument_text(a, v) for a, v in zip(node.args, args))})"
            return tensor(code) if any(v.is_tensor for v in args) else python(code)
        if isinstance(func, cst.Name) and func.value in self.source.downloaders and func.value not in self.env:
            # a function of the file that downloads or reads pretrained weights (not carried: weight_loading.py)
            return stub_value(f"not_supported({self.ctx.pretrained_weights(line, func.value + '()')!r})")
        if isinstance(func, cst.Attribute) and func.attr.value == "forward" and dotted_name(func.value) == "self" \
                and self.info is not None and self.info.find_method("forward") is not None and \
                not aliased_methods(self.source, self.info, "forward"):
            # `self.forward(x)` (a helper measuring its own output, `sequence_length()`): the port's forward is
            # `call`, reached through call_module so the class's own layouts apply
            return self.module_call(Value("self", "module", module=UNKNOWN_MODULE), node)
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
            aliases = aliased_methods(self.source, self.info, func.attr.value) if self.info is not None else None
            if aliases and self.mode == "forward":
                applied = self.method_alias_call(func.attr.value, aliases, node)
                if applied is not None:
                    return applied
            if func.attr.value == "register_buffer" and self.mode == "init" and self.kernel_buffer_registered(node):
                # a filter the class reads only as a convolution's weight: held as a Conv layer holds its kernel
                return python(f"self.register_buffer({self.plain_args(node)}, kernel=True)")
            target = self.self_attribute(func.attr.value)
            if target.kind == "module":
                return self.module_call(target, node)
            if isinstance(target.static, HandedFunction) and self.mode == "forward":
                # `self.partition_function(x, ws)` of an instance built with `window_partition`: that function's call
                return self._expr_Call(node.with_changes(func=cst.Name(target.static.name)))
            if isinstance(target.static, tuple) and target.static[:1] == ("rule-function",) and self.mode == "forward":
                # `self.pool = F.max_pool2d`, then `self.pool(y, 2)`
                return self.torch_call(target.static[1], partial_applied(node, target.static))
            method = self.info.find_method(func.attr.value) if self.info is not None else None
            if method is not None and self.mode == "forward" and _is_property(method):
                # `self.norm(x)` through mmcv's `@property def norm(self): return getattr(self, self.norm_name)`:
                # a module chosen at run time (call_module converts for the layout it declares)
                return self.module_call(Value(f"self.{func.attr.value}", "module", module=UNKNOWN_MODULE), node)
            if method is not None:
                return self.method_call(func.attr.value, node)
            container_methods = {"items", "keys", "values", "__iter__", "__len__", "__getitem__", "children",
                                 "modules", "parameters", "named_children", "named_modules"}
            if self.info is not None and not self.info.container_base and func.attr.value in (
                    "children", "named_children") and target.kind != "module":
                # a plain module's children: the module attributes its constructor sets (one of them per turn)
                kind = "dict" if func.attr.value == "named_children" else "list"
                return Value(f"self.{func.attr.value}()", "module", module=ModuleRef(kind, elements=self.own_children(),
                                                                                   ordered=False))
            if self.info is not None and self.info.container_base and func.attr.value in container_methods:
                children = self.ctx.ir.attributes.get("#children") if self.ctx.ir else None
                code = f"self.{func.attr.value}({self.plain_args(node)})"
                if func.attr.value in ("items", "values", "children", "__iter__"):
                    kind = "dict" if func.attr.value == "items" else "list"
                    # (children porter cannot see are modules still: called through call_module)
                    elements = children.elements if children is not None else (UNKNOWN_MODULE,)
                    return Value(code, "module", module=ModuleRef(kind, elements=elements, ordered=False))
                return python(code)
            if isinstance(target.static, (LayoutFreeFunction, HandedLambdas)):  # lambdas every construction hands in
                applied = self.layout_free_call(target, node)
                if applied is None and isinstance(target.static, HandedLambdas) and self.info is not None and \
                        only_called(self.info, func.attr.value):
                    applied = self.signature_call(target, node)
                if applied is not None:
                    return applied
            if func.attr.value in MODULE_ITERATORS and target.kind == "python" and target.static is None and \
                    target.code == f"self.{func.attr.value}":  # torch.nn.Module's own (`next(self.parameters())`)
                code = f"self.{func.attr.value}({self.plain_args(node)})"
                return Value(code, "tuple", items=None, static=("each", tensor(""))) if func.attr.value in (
                    "parameters", "buffers") else python(code)
            if self.mode == "forward":  # an attribute porter could not type (a module passed in): torch layout
                return self.module_call(target.but(kind="module", module=UNKNOWN_MODULE), node)
        if isinstance(func, cst.Call) and dotted_name(func.func) == "super":
            return python(self.code(node))
        owner = super_forward_owner(self, node) if self.mode == "forward" else None
        parent_call = translate_super_forward(self, owner, node) if owner is not None else None
        if parent_call is not None:
            return parent_call
        by_name = self.module_ref_resolver().layer_by_name(func) if isinstance(func, cst.Call) else None
        if by_name is not None:  # `getattr(nn, rnn_type)(...)`: the layers the file names, chosen at run time
            candidates, ref = by_name
            table = ", ".join(f"{name!r}: {self.ctx.use(rule.runtime)}" for name, rule in candidates.items())
            chooser = f"{{{table}}}[{self.expr(func.args[1].value).code}]"
            return Value(f"{chooser}({self.plain_args(node)})", "module", module=ref)
        if self.mode == "forward" and isinstance(func, cst.Call) and dotted_name(func.func) == "getattr" and len(
                func.args) == 2 and dotted_name(func.args[0].value) == "self":
            # `getattr(self, "level{}".format(i))(x)` (DLA): a child chosen at run time, one of the attributes the
            # name pattern matches (laid out for each where they agree; else an unknown module)
            chosen = attribute_by_pattern(self.ctx.ir, func.args[1].value, self.name_pattern_of(func.args[1].value)) \
                if self.ctx.ir else UNKNOWN_MODULE
            return self.module_call(python(self.code(func)).but(kind="module", module=chosen), node)
        if self.mode == "forward" and dotted_name(func) == "getattr" and self.env.get("getattr") is None and len(
                node.args) == 2 and dotted_name(node.args[0].value) == "self" and self.ctx.ir is not None:
            # `res_layer = getattr(self, layer_name)` (mmdet's ResNet) then `res_layer(x)`: a child chosen at run
            # time, called as `getattr(self, name)(x)` is (laid out for the attributes a pattern names, else
            # through call_module); a tensor attribute it may name reads as itself in any expression
            rank = tensor_by_pattern(self.ctx.ir, node.args[1].value)
            if rank is not False:  # (`pos_embed = getattr(self, f"pos_embed{i + 1}")`: a Parameter)
                return tensor(self.code(node), rank)
            chosen = attribute_by_pattern(self.ctx.ir, node.args[1].value, self.name_pattern_of(node.args[1].value))
            return python(self.code(node)).but(kind="module", module=chosen)
        canonical = self.source.imports.resolve(func)
        if canonical in SEQUENCE_CHECKPOINTS and len(node.args) >= 2 and all(a.keyword is None and not a.star
                                                                             for a in node.args[:2]) and \
                isinstance(node.args[0].value, (cst.List, cst.Tuple)) and node.args[0].value.elements and all(
                    not isinstance(e, cst.StarredElement) and not isinstance(e.value, (cst.List, cst.Tuple))
                    for e in node.args[0].value.elements):
            # timm's `checkpoint_seq([self.layer1, ..., self.layer4], x)`: the modules in turn on x, called as the
            # translation calls each (laid out as on the path without checkpointing, which it joins)
            self.ctx.adjust(line, "checkpoint_seq([f, g, ...], x) computes ...g(f(x)) directly (same values; wrap the "
                                  "stages in tf.recompute_grad if activation memory matters)")
            direct = node.args[1].value.with_changes(comma=cst.MaybeSentinel.DEFAULT) \
                if hasattr(node.args[1].value, "comma") else node.args[1].value
            for element in node.args[0].value.elements:
                direct = cst.Call(func=element.value, args=[cst.Arg(direct)])
            return self._expr_Call(direct)
        if canonical in CHECKPOINTS and node.args and node.args[0].keyword is None and not (
                canonical in SEQUENCE_CHECKPOINTS and (len(node.args) < 2 or node.args[1].keyword is not None or
                                                       isinstance(node.args[0].value, (cst.List, cst.Tuple)))):
            # activation checkpointing recomputes `function` in the backward pass to save memory: the forward
            # values are `function(*args)`'s, so the port calls it directly
            self.ctx.adjust(line, f"{canonical.rsplit('.', 1)[-1]}(f, *args) computes f(*args) directly "
                                  "(same values; wrap f in tf.recompute_grad if activation memory matters)")
            handed = node.args[1:2] if canonical in SEQUENCE_CHECKPOINTS else node.args[1:]  # (functions, x, every..)
            direct = cst.Call(func=node.args[0].value,
                              args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in handed
                                    if a.keyword is None])
            return self._expr_Call(direct)
        if canonical is not None and (canonical.startswith(RULE_FRAMEWORKS) or canonical in self.ctx.module_rules or
                                      canonical in self.ctx.function_rules):  # (`typing.cast`: a rule names it)
            return self.torch_call(canonical, node)  # (a library layer a rule covers: torchvision's FrozenBatchNorm2d)
        if isinstance(func, cst.Attribute) and func.attr.value == "apply" and \
                dotted_name(func.value) in self.source.autograd_functions:
            # a torch.autograd.Function: tensors in torch's layout, one tensor out (tf.custom_gradient inside);
            # an elementwise one takes its tensors in the layout they have when they share one
            values = self.arg_values(node)[0]
            tensors = [v for v in values if v.is_tensor]
            if tensors and all(v.layout == tensors[0].layout and v.rank == tensors[0].rank for v in tensors) and \
                    not tensors[0].layout.startswith("permuted:") and \
                    self.elementwise_function(dotted_name(func.value)):
                code = f"{dotted_name(func.value)}.apply({self.join_args(values, {})})"
                return tensors[0].but(code=code, dtype=None, channels=None)
            args = [self.as_plain(v) for v in values]
            rank = next((v.rank for v in args if v.is_tensor), None)
            return tensor(f"{dotted_name(func.value)}.apply({self.join_args(args, {})})", rank)
        if canonical in ("copy.deepcopy", "copy.copy") and node.args:
            argument = self.expr(node.args[0].value)
            if argument.kind == "module":
                return argument.but(code=f"{self.ctx.use('clone_layer')}({argument.code})")
            if canonical == "copy.deepcopy" and len(node.args) == 1 and argument.kind == "python" and \
                    argument.static is None:  # a value porter cannot type (`clones(module, N)`'s parameter): a
                # layer is cloned as torch copies a module, anything else deep-copied as written
                return python(f"{self.ctx.use('clone_layer')}({argument.code})")
        if builds_a_dict(self, node, canonical):
            held = keyed_features(self, node)  # (a dict of channels-last images, held as it lies)
            if held is not None:
                return held
        if canonical == "functools.partial":
            held = self.partial_of_rule_function(node)
            if held is not None:
                return held
        if canonical is not None and canonical.split(".")[0] not in TRANSLATABLE_LIBRARIES:
            message = self.ctx.unsupported(self.line, canonical, "third-party code porter does not translate; "
                                                                 "port it by hand or replace it with torch ops")
            if self.mode == "init":
                return Value(f"{self.ctx.use('UnsupportedModule')}({message!r})", "module", module=UNKNOWN_MODULE)
            return stub_value(f"{self.ctx.use('not_supported')}({message!r})")
        if isinstance(func, cst.Attribute):
            base = self.expr(func.value)
            if isinstance(base.static, HeldTable) and func.attr.value == "keys" and not node.args:
                return python(f"{base.static.raw}.keys()")  # (its keys: no value converted for them)
            if isinstance(base.static, HeldTable) and func.attr.value == "values" and not node.args:
                # `d.values()` of a dict of channels-last features (timm's FeatureListNet: `list(self._collect(x)
                # .values())`): its images as they lie, alike
                return Value(f"{base.static.raw}.values()", "tuple", items=None, static=("each", base.static.item))
            if func.attr.value in LIST_ONLY_METHODS and base.is_tensor:
                # a method torch.Tensor lacks: the value is a list whatever porter last bound to the name
                return python(f"{receiver_code(base.code)}.{func.attr.value}({self.plain_args(node)})")
            if (base.is_tensor or base.kind == "python") and _string_method_call(node):
                # `name.split("-")`
                return python(f"{receiver_code(base.code)}.{func.attr.value}({self.plain_args(node)})")
            if base.is_tensor or (base.kind == "python" and self.tensor_only_method(func.attr.value, canonical) and
                                  not self.numpy_result(func.value)):
                return self.tensor_method(base.but(kind="tensor") if not base.is_tensor else base, func.attr.value,
                                          node)
            if base.kind == "size":
                return self.size_method(base, func.attr.value, node)
            if func.attr.value == "numel" and base.kind == "tuple" and base.items is not None and not node.args:
                # `self.weight.shape[1:].numel()` (torch.Size's product; an NFNet's fan-in): the sizes multiplied
                return python(f"math.prod({base.code})")
            if func.attr.value in ("append", "insert", "extend") and images_held(base) is not None:
                return self.put_in_list(base, func.attr.value, node)
            if func.attr.value in ("pop", "copy") and base.kind == "tuple" and element_template(base) is not None:
                # an item taken out of a list of alike items (`skips.pop()`), or a copy of it: as the list holds it
                code = f"{receiver_code(base.code)}.{func.attr.value}({self.plain_args(node)})"
                return element_template(base).with_code(code) if func.attr.value == "pop" else \
                    Value(code, "tuple", items=None, static=("each", element_template(base)))
            if base.kind == "module":
                if func.attr.value in ("parameters", "modules", "children", "named_parameters", "keys",
                                       "values", "items", "named_children"):
                    return self.module_iteration(base, func.attr.value, node)
                if func.attr.value == "forward":  # `self.block.forward(x)` is the block's call
                    return self.module_call(base, node)
                child = self.module_attribute(base, func.attr.value)
                if child.kind == "module" and child.module is not None:  # `self.path.pad(x)`: a named child
                    return self.module_call(child, node)
                if self.mode == "forward" and base.module is not None and base.module.kind == "class":
                    called = self.child_method_call(base, func.attr.value, node)
                    if called is not None:
                        return called
                return python(f"{receiver_code(base.code)}.{func.attr.value}({self.plain_args(node)})")
            if func.attr.value == "forward" and base.kind == "python" and base.static is None and \
                    self.mode == "forward":  # `down.forward(y)` of a module porter could not type: its call
                return self.module_call(Value(base.code, "module", module=UNKNOWN_MODULE), node)
            return python(f"{receiver_code(base.code)}.{func.attr.value}({self.plain_args(node)})")
        callee = self.expr(func)
        if callee.kind == "module":
            return self.module_call(callee, node)
        if isinstance(callee.static, tuple) and callee.static[:1] == ("rule-function",):
            # a local bound to a rule's function (`act(x)`)
            return self.torch_call(callee.static[1], partial_applied(node, callee.static))
        if isinstance(callee.static, tuple) and callee.static[:1] == ("local-function",):
            return self.local_function_call(callee.static[1], node)  # a function defined in this body
        name = dotted_name(func)
        if name == "next" and len(node.args) == 1 and self.env.get(name) is None:
            items = self.expr(node.args[0].value)
            template = element_template(items) if items.kind == "tuple" else None
            if template is not None and template.is_tensor:  # `next(self.parameters())`: a parameter
                return template.with_code(f"next({items.code})")
        if name in self.source.functions:
            return self.function_call(name, node)
        if name in self.source.classes:
            return Value(self.construction_code(name, f"{name}({self.plain_args(node)})", node), "module",
                         module=ModuleRef("class", class_name=name))
        if name == "isinstance" and len(node.args) == 2:
            subject = self.expr(node.args[0].value)
            kinds = self.code(node.args[1].value)
            if subject.is_tensor and subject.rank is not None and not may_be_images(subject) and \
                    kinds.strip("() ").replace(" ", "") in ("list", "tuple", "list,tuple", "tuple,list"):
                # a tensor is never a list: the branch is decided here (one of unknown rank may be a list of
                # images held alike: what `call_module` returned, a block's image or list)
                return python("False", static=False)
            if self.source.imports.resolve(node.args[1].value) in TENSOR_CLASS_NAMES:
                if subject.is_tensor and subject.rank is not None and not may_be_images(subject):  # a tensor a
                    # caller handed over (rank known)
                    return python("True", static=True)
                if subject.kind in ("tuple", "module") or subject.static is not None and not holds_none(subject):
                    return python("False", static=False)
                return python(f"tf.is_tensor({subject.code})")
            return python(f"isinstance({subject.code}, {self.class_test_operand(node.args[1].value)})")
        if name == "issubclass" and len(node.args) == 2:
            return python(f"issubclass({self.code(node.args[0].value)}, {self.class_test_operand(node.args[1].value)})")
        if name == "enumerate" and node.args:
            inner = self.expr(node.args[0].value)
            rest = "".join(f", {self.code(a)}" for a in node.args[1:])
            if inner.kind == "module" and inner.module is not None:
                # `enumerate(zip(self.convs, self.bns))`: each item is the zipped layers, unpacked by the target
                ref = ModuleRef("enumerated", elements=(
                    inner.module if inner.module.kind == "zipped" else inner.module.loop_element(),))
                return Value(f"enumerate({inner.code}{rest})", "module", module=ref)
            if inner.kind == "tuple":
                template = inner.items[0] if inner.items else (
                    inner.static[1] if isinstance(inner.static, tuple) and inner.static[:1] == ("each",) else None)
                if template is not None:
                    return Value(f"enumerate({inner.code}{rest})", "tuple", items=None,
                                 static=("enumerated", template))
        if name == "getattr":  # `getattr(torch, "compiler", None)`: decided as hasattr is
            decided = decided_getattr(node, self.source.imports.resolve, self.ctx.covers_name, self.ctx.rule_namespace)
            if decided is not None:
                return self.expr(decided)
        if name == "getattr" and len(node.args) == 2 and not any(a.star or a.keyword for a in node.args):
            chosen = self.function_by_name(node)
            if chosen is not None:
                return chosen
        if name == "hasattr" and len(node.args) == 2 and isinstance(node.args[1].value, cst.SimpleString):
            # `hasattr(F, "scaled_dot_product_attention")`: decided by what the port supports, as top-level ifs are
            found = torch_has(self.source.imports.resolve(node.args[0].value), node.args[1].value.evaluated_value,
                              self.ctx.covers_name)
            if found is None:
                found = value_has(self.expr(node.args[0].value), node.args[1].value.evaluated_value,
                                  self.ctx.covers_name)
            if found is not None:
                return python(str(found), static=found)
        if name == "zip" and node.args and not any(a.star or a.keyword for a in node.args):
            inners = [self.expr(a.value) for a in node.args]
            modules = [i.kind == "module" and i.module is not None and i.module.kind in ("list", "sequential")
                       for i in inners]
            lists = all(i.kind in ("tuple", "python") for i in inners) and any(
                i.kind == "tuple" and element_template(i) is not None for i in inners)  # (`zip(names, results)`)
            if lists or any(modules) and all(m or i.kind in ("python", "tuple") for m, i in zip(modules, inners)):
                # `for conv, norm in zip(self.convs, self.norms)`: one layer of each (plain values beside them);
                # `zip(self.seg_blocks, [p5, p4])`: images beside the layers, each bound as the list holds it;
                # `zip(attens, splits)` (ResNeSt): an item of each list, as that list holds its items
                codes, refs = [], []
                for module, inner in zip(modules, inners):
                    template = element_template(inner) if inner.kind == "tuple" else None
                    if inner.kind == "tuple" and template is None:
                        inner, template = self.as_plain(inner), tensor("")  # unlike items: torch's order
                    codes.append(inner.code)
                    refs.append(inner.module.loop_element() if module else ModuleRef(
                        "plain", static=(template,) if template is not None else ()))
                return Value(f"zip({', '.join(codes)})", "module", module=ModuleRef("zipped", elements=tuple(refs)))
        if self.source.imports.resolve(node.func) == "functools.reduce":
            reduced = self.reduce_lambda(node)
            if reduced is not None:
                return reduced
        if name == "sum" and self.env.get("sum") is None and len(node.args) == 1 and not node.args[0].star and \
                not node.args[0].keyword:
            items = self.expr(node.args[0].value)
            template = element_template(items)
            if template is not None and template.is_tensor:  # `sum(outs)` of images alike: added as they are stored
                return template.with_code(f"sum({items.code})").but(static=None)
        if name == "map" and self.env.get("map") is None:
            mapped = self.map_lambda(node)
            if mapped is not None:
                return mapped
        if name in ("tuple", "list") and len(node.args) == 1 and not node.args[0].star and \
                self.env.get(name) is None:
            argument = self.expr(node.args[0].value)
            if argument.kind == "tuple" and isinstance(argument.static, tuple) and argument.static[:1] == ("each",):
                return argument.with_code(f"{name}({argument.code})")  # tuple(map(lambda t: ..., xs))
            template = element_template(argument)
            if argument.kind == "tuple" and argument.items is not None and template is not None and \
                    not any(i.code for i in argument.items):  # `list(x.chunk(2, 1))`: pieces alike, as held
                return Value(f"{name}({argument.code})", "tuple", items=None, static=("each", template))
            if argument.kind == "module":
                return argument.with_code(f"{name}({argument.code})")
            values_of = node.args[0].value
            if argument.kind == "python" and argument.static is None and self.source.framework == "torch" and \
                    isinstance(values_of, cst.Call) and isinstance(values_of.func, cst.Attribute) and \
                    values_of.func.attr.value == "values" and isinstance(values_of.func.value, cst.Name):
                # `list(feats.values())` of a local dict porter could not type (its tensors stored in torch's
                # order): a list of them, not a tensor (a callee's `len(x)`, `x[-1]`)
                return Value(f"{name}({argument.code})", "tuple", items=None)
        if name == "reversed" and len(node.args) == 1 and not node.args[0].star and self.env.get(name) is None:
            argument = self.expr(node.args[0].value)  # `for f in reversed(laterals[:-1])` (an FPN's top-down
            template = element_template(argument)  # path): images alike, iterated as they are held
            if argument.kind == "tuple" and template is not None:
                return Value(f"reversed({argument.code})", "tuple", items=None, static=("each", template))
            if argument.kind == "module" and argument.module is not None and argument.module.kind in (
                    "list", "sequential"):
                return argument.with_code(f"reversed({argument.code})")
        if name == "len" and node.args:
            argument = self.expr(node.args[0].value)
            if argument.is_tensor:
                return self.dim_size(argument, 0)
            if argument.kind == "size":
                return python(f"len({self.materialize_size(argument).code})", static=argument.rank)
            if argument.kind == "tuple":  # a list's length whatever layout its images are held in
                return python(f"len({argument.code})",
                              static=len(argument.items) if argument.items is not None else None)
            held = argument.module if argument.kind == "module" else None
            if held is not None and held.kind in ("list", "sequential") and held.ordered and \
                    "unknown" not in {element.kind for element in held.elements}:  # layers built in the constructor
                return python(f"len({argument.code})", static=len(held.elements))
        if name in ("float", "int", "bool") and node.args:
            argument = self.expr(node.args[0].value)
            if argument.is_tensor:
                # torch reads the value on the host: a Python number (the tensor is the only argument)
                self.ctx.use("python_scalar")
                # traced, a scalar tensor of that kind: an int64 `int` is promoted where it meets a float
                return tensor(f"python_scalar({to_layout(self.ctx, argument, 'source').code}, {name})", 0).but(
                    dtype=name)
        if self.mode == "forward" and callee.kind == "python" and callee.static is None and (
                isinstance(func, cst.Subscript) or isinstance(func, cst.Name) and func.value in self.env) and \
                node.args and not node.args[0].star and not node.args[0].keyword:
            # `self.lateral_convs[0](x)` of a plain list of layers, `lateral_conv(x)` of a zip over two: a layer
            # porter cannot type, or a function; call_module hands it the layout it declares (a function: torch's)
            return self.module_call(callee.but(kind="module", module=UNKNOWN_MODULE), node)
        return python(f"{callee.code}({self.plain_args(node)})")

    def kernel_buffer_registered(self, node):
        """Whether `self.register_buffer("name", ...)` registers a buffer the class reads only as a functional
        convolution's weight (passes/kernel_buffers.py)."""
        if not (node.args and isinstance(node.args[0].value, cst.SimpleString) and self.info is not None):
            return False
        return node.args[0].value.evaluated_value in kernel_buffers(self.source, self.info)

    def class_test_operand(self, node):
        """The class (or tuple of classes) of an isinstance/issubclass check: torch's nn.Module, as any of the
        port's layers (its own classes and its built-in layers alike), else the expression as it translates."""
        if isinstance(node, cst.Tuple):
            items = [self.class_test_operand(element.value) for element in node.elements]
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        canonical = self.source.imports.resolve(node)
        if canonical == "torch.nn.Module":
            return self.ctx.use("AnyLayer")
        if canonical in TENSOR_CLASS_NAMES:  # (one of a tuple: `(np.ndarray, torch.Tensor)`)
            return self.ctx.use("TensorClasses")
        return self.expr(node).code

    def construction_code(self, class_name, code, node):
        """The code building an instance of the in-file class `class_name` (`code`: its constructor call `node`)."""
        return code

    def put_in_list(self, base, method, node):
        """`xs.append(t)`, `xs.insert(i, t)`, `xs.extend(ts)` on a list of channels-last images: what goes in is
        converted to that layout (the list's readers take its items as stored)."""
        held = images_held(base)
        args, kwargs = self.arg_values(node)
        if kwargs or len(args) != (2 if method == "insert" else 1) or any(v.kind == "starred" for v in args):
            return python(f"{base.code}.{method}({self.plain_args(node)})")
        item = args[-1]
        if method == "extend":
            item = self.list_in_layout(item if item.kind == "tuple" else Value(item.code, "tuple", items=None),
                                       Value("", "tuple", items=(held,)))
        else:
            item = to_layout(self.ctx, item if item.is_tensor else tensor(item.code), "channels_last", held.rank)
        return python(f"{base.code}.{method}({self.join_args([*args[:-1], item], {})})")

    def numpy_result(self, node):
        """Whether `node` is a numpy call (`np.arange(dim)` in `np.arange(dim).reshape((1, -1))`): its methods are
        numpy's, not a tensor's."""
        return isinstance(node, cst.Call) and (self.source.imports.resolve(node.func) or "").startswith("numpy.")

    def tensor_only_method(self, method, canonical):
        """True when `value.method(...)` on a value of unknown kind can only be a tensor's method: a name porter
        knows only tensors to have, or any Tensor method no Python built-in type has (`b_k.sum(dim=-2)` on an
        item of `map(bucket_fn, (q, k, v))`, `v.masked_fill_(...)` on a helper's argument); never on a name the
        imports resolve (`math.floor(x)`, `np.exp(x)`)."""
        rules = self.ctx.function_rules
        if method in TENSOR_ONLY_METHODS or getattr(rules.get(f"Tensor.{method}"), "extra", {}).get("tensor_only"):
            return True
        if self.source.framework == "mxnet" and \
                getattr(rules.get(f"{GLUON_OPS}{method}"), "extra", {}).get("tensor_only"):
            return True  # an NDArray method no Python value has (`masked_positions.astype('int32')`)
        if canonical is not None or method.startswith("__") or method in PYTHON_BUILTIN_METHODS:
            return False
        return f"Tensor.{method}" in rules or method.endswith("_") and f"Tensor.{method[:-1]}" in rules

    def function_by_name(self, node):
        """`getattr(F, act)` (`act` chosen at run time): the functions (for `nn`, the layer classes) of that torch
        module which the file names in string literals (`act='silu'`) and a rule ports to a runtime function, in a table the name picks
        (`{"relu": relu, "silu": silu}[act]`, a KeyError for a name the file never wrote); None when `node` is not
        such a lookup."""
        owner = self.source.imports.resolve(node.args[0].value)
        if owner not in ("torch", "torch.nn.functional", "torch.nn") or \
                isinstance(node.args[1].value, cst.SimpleString):
            return None
        # (`act = getattr(nn, activation)`, called later as `act(**activation_params)`: the layer classes)
        rules = self.ctx.module_rules if owner == "torch.nn" else self.ctx.function_rules
        found = {n: rules[f"{owner}.{n}"] for n in sorted(self.source.string_literals)
                 if f"{owner}.{n}" in rules and rules[f"{owner}.{n}"].runtime}
        if not found:
            return None
        table = ", ".join(f"{n!r}: {self.ctx.use(rule.runtime)}" for n, rule in found.items())
        return python(f"{{{table}}}[{self.as_plain(self.expr(node.args[1].value)).code}]")

    def map_lambda(self, node):
        """`map(lambda t: body, xs, ...)`: the body translated with each parameter bound as a loop over its
        iterable binds it (a layer of a ModuleList, a tensor of a tuple), so `map(lambda conv: conv(x), self.convs)`
        calls layers and `map(lambda t: rearrange(t, ...), qkv)` knows its ranks; None when not of that form."""
        if len(node.args) < 2 or any(a.star or a.keyword for a in node.args):
            return None
        function, function_code = self.lambda_of(node.args[0].value)
        if function is None:
            return None
        params = function.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or params.posonly_params \
                or params.star_kwarg is not None or any(p.default is not None for p in params.params) or \
                len(params.params) != len(node.args) - 1:
            return None
        iterables = [self.expr(a.value) for a in node.args[1:]]
        env_backup, hoister = dict(self.env), getattr(self.ctx, "hoister", None)
        own = {p.name.value for p in params.params}  # (their conversions stay in the lambda)
        self.ctx.hoister = OuterNamesHoister(hoister, own) if hoister is not None else None
        try:
            for param, iterable in zip(params.params, iterables):
                self.bind_loop_target(param.name, iterable)
            body = self.expr(function.body)
        finally:
            self.ctx.hoister = hoister
            self.env.clear()
            self.env.update(env_backup)
        if function_code is not None:  # the instance's own (layout-free) function: each item as it is held
            if not body.is_tensor:
                return python(f"map({function_code}, {', '.join(self.as_plain(i).code for i in iterables)})")
        elif body.is_tensor and not is_permuted(body) and not (body.channels_last and body.rank is not None):
            body = to_layout(self.ctx, body, "source")  # (a pending transpose stays pending, a channels-last image
            # channels-last: each item has it, and a consumer in torch's order converts every item)
        names = ", ".join(p.name.value for p in params.params)
        function_code = function_code or f"lambda {names}: {body.code}"
        code = f"map({function_code}, {', '.join(self.iterable_code(i) for i in iterables)})"
        if body.is_tensor:
            return Value(code, "tuple", items=None, static=("each", body.with_code("")))
        return python(code)

    def reduce_lambda(self, node):
        """`functools.reduce(lambda a, b: body, items)` over a list variable whose items share one state
        (channels-last images from `[m(x) for m in self.paths]`): the body translated with both parameters bound to that item; when
        it gives back an item of that state (`a + b`, `torch.maximum(a, b)`) the items stay as they are stored and
        so does the result, else None (the call takes the items in torch's order, as any function does)."""
        if len(node.args) != 2 or any(a.star or a.keyword for a in node.args):
            return None
        function, function_code = self.lambda_of(node.args[0].value)
        if function is None or not isinstance(node.args[1].value, cst.Name) and function_code is None:
            return None  # (a variable: reading it twice, here and in the plain call when this gives up, records nothing)
        params = function.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or params.posonly_params \
                or params.star_kwarg is not None or len(params.params) != 2 or \
                any(p.default is not None for p in params.params):
            return None
        items = self.expr(node.args[1].value)
        template = element_template(items)
        body = None
        if function_code is not None and template is not None and template.is_tensor:
            # a layout-free function (function_attributes.py) hands back an image as its items are held
            return template.with_code(f"{self.code(node.func)}({function_code}, {items.code})").but(static=None)
        if template is not None and template.is_tensor:
            env_backup = dict(self.env)
            try:
                for param in params.params:
                    self.env[param.name.value] = template.with_code(param.name.value)
                body = self.expr(function.body)
            finally:
                self.env.clear()
                self.env.update(env_backup)
        if body is None or not (body.is_tensor and body.layout == template.layout and body.rank == template.rank):
            if function_code is None:
                return None
            # the instance's own function on items in torch's order (read once: no second reading below)
            return tensor(f"{self.code(node.func)}({function_code}, {self.as_plain(items).code})")
        names = ", ".join(p.name.value for p in params.params)
        return body.with_code(f"{self.code(node.func)}({function_code or f'lambda {names}: {body.code}'}, "
                              f"{items.code})").but(channels=template.channels, static=None)

    def lambda_body(self, function, args, as_written):
        """What lambda `function`'s body gives for `args` bound to its parameters; with `as_written`, None unless
        that is the code the body is written as (see lambda_body_as_written)."""
        if not as_written:
            env = dict(self.env)
            try:
                for param, arg in zip(function.params.params, args):
                    self.env[param.name.value] = arg.with_code(param.name.value)
                return self.expr(function.body)
            finally:
                self.env.clear()
                self.env.update(env)
        if any(a.kind == "python" and a.static is None and not holds_none(a)
               for a in args):
            return None  # (a value porter cannot type, None here and an image there: a class called on it would be
            # laid out for the one it meets first)
        choices = [args]
        for index, arg in enumerate(args):  # a module that is one of several (a container's child in a loop)
            ref = arg.module if arg.kind == "module" else None
            if ref is not None and ref.kind == "unknown" and ref.alternatives:
                ref = replace(ref, alternatives=_flat_alternatives(ref))
                name = function.params.params[index].name.value
                itself = [a for a in ref.alternatives if a.kind == "class" and self.in_translation(a.class_name)]
                if itself and not self.holds_recursion(itself):
                    return None  # (the container itself one level down, its call not run as written)
                for alternative in itself:  # taken to take what it is handed as held: checked when translated
                    for chosen in choices:
                        if self.module_takes(alternative, function, name, chosen):
                            self.note_held_recursions(recursive_calls(alternative, function, name, chosen))
                choices = [[*chosen[:index], arg.but(module=alternative), *chosen[index + 1:]]
                           for chosen in choices for alternative in ref.alternatives if alternative not in itself
                           and self.module_takes(alternative, function, name, chosen)]
        results = [self.lambda_body_as_written(function, chosen) for chosen in choices]
        return None if not results or None in results else held_alike(results)

    def module_takes(self, ref, function, name, args):
        """Whether module `ref`, bound to the lambda's parameter `name`, can take each call the lambda's body makes
        of it (`module(x1, x2)`: not a one-image layer, not a Sequential, not a class whose forward takes one
        argument); the lambda's parameters bound to `args`."""
        calls = [node for node in descendants(function.body) if isinstance(node, cst.Call) and
                 isinstance(node.func, cst.Name) and node.func.value == name]
        for call in calls:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if ref.kind == "class":
                bound = dict(zip((p.name.value for p in function.params.params), args))
                handed = [bound.get(a.value.value, python("x")) if isinstance(a.value, cst.Name) else python("x")
                          for a in positional]
                if not self.takes_arguments(ref.class_name, handed, {a.keyword.value: python("x") for a in
                                                                     call.args if a.keyword is not None}):
                    return False
            elif len(positional) > 1 and (ref.kind == "sequential" or ref.kind == "rule" and ref.rule is not None and
                                          ref.rule.layout == "channels_last"):
                return False  # (a Sequential or an image layer takes one input)
        return True

    def lambda_body_as_written(self, function, args):
        """Lambda `function`'s body for `args` bound to its parameters when that is the code it is written as (less
        `training=training`, which Keras hands on by itself), else None; nothing the translation noted is kept when
        it is not (a conversion hoisted, a runtime helper used)."""
        env, pending, used = dict(self.env), list(self.pending), set(self.ctx.used_runtime)
        hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), None
        result, kept, self.positions_kept = None, self.positions_kept, True  # (a None stays where it is handed)
        try:
            for param, arg in zip(function.params.params, args):
                self.env[param.name.value] = arg.with_code(param.name.value)
            result = self.expr(function.body)
        finally:
            self.env.clear()
            self.env.update(env)
            self.ctx.hoister, self.positions_kept = hoister, kept
            if result is None or _without_training(result.code) != self.code(function.body):
                self.pending[:] = pending
                self.ctx.used_runtime.clear()
                self.ctx.used_runtime.update(used)
                result = None
        return result

    def name_pattern_of(self, node):
        """The attribute-name pattern a variable holds (`name` of `for name in self.stage_names`), or None."""
        value = self.env.get(node.value) if isinstance(node, cst.Name) else None
        return value.static.pattern if isinstance(value, Value) and isinstance(value.static, NamePattern) else None

    def lambda_of(self, node):
        """(lambda, None) for a lambda written in place; (one of the lambdas, the attribute's code) for `self.f`
        holding a layout-free lambda in every construction (passes/function_attributes.py); (None, None) else."""
        if isinstance(node, cst.Lambda):
            return node, None
        if isinstance(node, cst.Name) and isinstance(self.env.get(node.value), Value) and isinstance(
                self.env[node.value].static, LocalLambda):  # `merge = lambda t: ...`, then `map(merge, (k, v))`
            return self.env[node.value].static.node, None
        if isinstance(node, cst.Attribute) and dotted_name(node.value) == "self":
            value = self.self_attribute(node.attr.value)
            if isinstance(value.static, LayoutFreeFunction):
                return value.static.lambdas[0], value.code
        return None, None

    def signature_call(self, target, node):
        """`self.f(args)` of lambdas every construction writes in a constructor, called with the layouts their
        signature takes (fixed by the first such call: lambda_signatures.py); None when they have none."""
        args, kwargs = self.arg_values(node)
        if kwargs or any(a.kind == "starred" for a in args):
            return None
        signature = decided_signature(self, target.static.lambdas, args)
        return call_with_signature(self, target.code, args, signature) if signature is not None else None

    def layout_free_call(self, target, node):
        """`self.f(args)` where every construction hands the instance a lambda, layout-free or (HandedLambdas) each
        translated for these values to the very code it is written as (a child called on what it takes as held):
        called on the values as they are held; the result is what the lambdas' bodies give (one state for all of
        them), else None."""
        args, kwargs = self.arg_values(node)
        if kwargs or any(a.kind == "starred" for a in args):
            return None
        as_written = isinstance(target.static, HandedLambdas)
        results = []
        for function in target.static.lambdas:
            if len(function.params.params) != len(args):
                return None
            result = self.lambda_body(function, args, as_written)
            if result is None:
                return None
            results.append(result)
        first = results[0]
        if any(r.kind != first.kind or r.layout != first.layout for r in results[1:]):
            return None
        if any(r.rank != first.rank for r in results[1:]):
            first = first.but(rank=None)
        code = f"{target.code}({', '.join(a.code for a in args)})"
        if as_written and first.kind == "tuple" and first.items is not None:
            return result_of(first, code)  # (its items read through the result, not by the lambda's own names)
        if first.kind == "tuple":  # (its items are read through the result, not the lambda's own names)
            template = element_template(first)
            return Value(code, "tuple", items=None, static=("each", template) if template is not None else None)
        return first.with_code(f"{target.code}({', '.join(a.code for a in args)})").but(channels=None)

    # --- arguments ---------------------------------------------------------------------------------------
    def arg_values(self, node):
        args, kwargs = [], {}
        for arg in node.args:
            value = self.expr(arg.value)
            if arg.star == "*":
                if value.kind == "size":
                    value = self.materialize_size(value)
                args.append(value.but(code="*" + value.code, kind="starred"))
            elif arg.star == "**":
                kwargs["**" + value.code] = value.with_code("**" + value.code)
            elif arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            else:
                args.append(value)
        return args, kwargs

    def plain_args(self, node, layout="source"):
        """Arguments as code for a call porter does not map: tensors go back to torch's layout."""
        args, kwargs = self.arg_values(node)
        return self.join_args([self.as_plain(v, layout) for v in args],
                              {k: self.as_plain(v, layout) for k, v in kwargs.items()})

    def as_plain(self, value, layout="source"):
        if value.kind == "size":
            return self.materialize_size(value)
        if value.kind == "starred" and value.code.startswith("*"):  # `f(*xs)`: xs's items in torch's layout
            plain = self.as_plain(value.but(code=value.code[1:], kind="tuple"), layout)
            return plain.but(code="*" + plain.code, kind="starred")
        if value.is_tensor:
            return to_layout(self.ctx, value, layout)
        # the items of a call's result (`x.chunk(2, 1)`) are element templates without code: converted as one
        template = element_template(value) if value.kind == "tuple" and (value.items is None or not any(
            i.code for i in value.items)) else None
        if template is not None and template.is_tensor and template.layout != "source":
            element = to_layout(self.ctx, template.with_code("_each"), "source")  # every item converted
            return _unless_none(value, Value(_converted_items(element.code, value.code), "tuple", items=None,
                                             static=("each", element.with_code(""))))
        if value.kind == "tuple" and value.items:
            return _unless_none(value, self.tuple_in_layouts(value, [self.as_plain(i) for i in value.items]))
        return value

    @staticmethod
    def tuple_in_layouts(value, items):
        """Tuple `value` with its items replaced by `items` (the same values, converted): its code rebuilt when
        any item's code changed."""
        if [i.code for i in items] == [i.code for i in value.items]:
            return value.but(items=tuple(items))
        if reads_through(value):  # `torch.cat(self.features(x), 1)`: the call evaluated once, its items converted
            bodies = {item.code.replace(f"{value.code}[{i}]", "_each") for i, item in enumerate(items)}
            code = f"tuple({bodies.pop()} for _each in {iterable_code(value.code)})" if len(bodies) == 1 else \
                f"(lambda _items: ({', '.join(i.code.replace(value.code, '_items') for i in items)},))({value.code})"
            return result_of(value.but(items=tuple(items)), code)
        opener, closer = ("[", "]") if value.code.startswith("[") else ("(", ")")
        code = opener + ", ".join(i.code for i in items) + ("," if len(items) == 1 and opener == "(" else "") + closer
        return value.but(code=code, items=tuple(items))

    @staticmethod
    def join_args(args, kwargs):
        parts = [a.code for a in args]
        for name, value in kwargs.items():
            parts.append(value.code if name.startswith("**") else f"{name}={value.code}")
        return ", ".join(parts)

    # --- modules -----------------------------------------------------------------------------------------
    def module_call(self, target, node):
        self.node_of_call = node
        ref = target.module or UNKNOWN_MODULE
        args, kwargs = self.arg_values(node)
        self.node_of_call = node  # calls among the arguments (`self.head(self.body(x))`) set it too
        # (`self.up(y, output_size=x.size())`: the sizes torch reports, not the tensor they were read from)
        args = [self.materialize_size(a) for a in args]
        kwargs = {k: self.materialize_size(v) for k, v in kwargs.items()}
        ref = _own_class(ref)
        if ref.kind in ("rule", "class", "sequential"):
            if args and args[0].kind == "python" and not _literal(args[0].code) and not (
                    ref.kind == "class" and isinstance(args[0].static, HeldTable)) and not (
                    ref.kind == "class" and any(a.is_tensor for a in args[1:])):
                # (a block handed a tensor after it takes the untyped value for something else: an ODE function's
                # time `self.f(t, x)`)
                # a value porter could not type (read from a dict of features) handed to a layer: a tensor in
                # torch's layout, converted for the layer as any other
                args = [tensor(args[0].code), *args[1:]]
            if ref.kind == "rule":
                result = self.rule_module_call(target.code, ref.rule, args, kwargs)
                kind, op = "layer", ref.rule.runtime
            elif ref.kind == "class":
                result = self.class_call(target.code, ref.class_name, args, kwargs, ref.static)
                kind, op = "class", ref.class_name
            else:
                result = self.sequential_call(target.code, ref, args, kwargs)
                kind, op = "sequential", f"Sequential({len(ref.elements)})"
            record(self.ctx, kind, op, target.code, list(args) + list(kwargs.values()), result)
            return result
        if ref.kind == "classobj" or self.mode == "init" and ref.kind == "unknown" and not any(
                v.is_tensor or v.kind == "tuple" for v in list(args) + list(kwargs.values())):
            # (a constructor: `conv_nd(c, c // 2, 1)` of `conv_nd, bn = nn.Conv2d, nn.BatchNorm2d` an if/elif chose)
            return python(f"{target.code}({self.join_args(args, kwargs)})")
        if ref.kind == "elementwise" and args and args[0].is_tensor:
            # a plain callable computing elementwise (timm's GammaAct's `self.act_fn(x, inplace=...)`): called as
            # it is, on the tensor as it lies, which the result keeps
            rest = [self.as_plain(v) for v in args[1:]]
            kw = {k: self.as_plain(v) for k, v in kwargs.items()}
            return args[0].but(code=f"{target.code}({self.join_args([args[0]] + rest, kw)})", static=None)
        if ref.alternatives:
            result = self.alternatives_call(target.code, ref, args, kwargs)
            if result is not None:
                record(self.ctx, "class", " | ".join(_module_name(a) for a in ref.alternatives),
                       target.code, list(args) + list(kwargs.values()), result)
                return result
        kw = {k: self.as_plain(v) for k, v in kwargs.items()}
        helper = self.ctx.use("call_module")
        if args and (holds_images(args[0]) or images_held(args[0]) is not None) and \
                not any(v.is_tensor or v.kind == "tuple" for v in list(args[1:]) + list(kwargs.values())):
            # an image the caller holds channels-last (of unknown rank: what such a call returned; a tensor of
            # rank <= 2 has no other layout), or a list of such (HRNet's branches handed from stage to stage through
            # a Sequential subclass's `for module in self: x = module(x)`): the runtime converts only for a module
            # of another layout, and hands back what it returns channels-last (an image, or a list of them)
            extra = self.training_kwarg(kwargs) + ', held="channels_last"'
            rank = args[0].rank if args[0].is_tensor and _keeps_rank(ref, args[0].rank) else None
            return tensor(self.call_text(helper, self.join_args([target] + list(args), kw), extra), rank,
                          "channels_last")
        if args and is_permuted(args[0]) and not any(v.is_tensor or v.kind == "tuple" for v in list(args[1:]) +
                                                     list(kwargs.values())):
            # a pending permute (attention's q before its optional `q_norm`): an elementwise module (Identity)
            # takes it as it lies, the runtime permutes for any other and back, so it stays pending
            extra = self.training_kwarg(kwargs) + f", held={physical_order(args[0])}"
            return args[0].but(code=self.call_text(helper, self.join_args([target] + list(args), kw), extra),
                               static=None)
        converted = [self.as_plain(v) for v in args]
        return tensor(self.call_text(helper, self.join_args([target] + converted, kw), self.training_kwarg(kwargs)))

    def alternatives_call(self, code, ref, args, kwargs):
        """See `_alternatives_call`; an image in torch's layout that the alternatives lay out differently is handed
        to them channels-last when they then agree (ASPP's branches, ASPPPooling's pool, conv, norm and activation
        met in turn): converted once, as a channels-last image of unknown kind would be."""
        result = self._alternatives_call(code, ref, args, kwargs)
        first = args[0] if args else None
        if result is not None or first is None or not first.is_tensor or first.layout != "source" or (
                first.rank is not None and first.rank <= 2):
            return result
        hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), None  # the conversion stays in the call
        try:
            converted = to_layout(self.ctx, first, "channels_last", first.rank)
        finally:
            self.ctx.hoister = hoister
        return self._alternatives_call(code, ref, [converted, *args[1:]], kwargs)

    def _alternatives_call(self, code, ref, args, kwargs):
        """A module an if/else in `__init__` chose among known ones (DPN's `c1x1_c`: a CatBnAct or a BnActConv2d):
        each alternative translated for what this caller hands (a class for channels-last images then runs
        channels-last whichever it is); when they all take the arguments as the same code and return one layout,
        the call is a plain call, else None (call_module converts at run time)."""
        ref = replace(ref, alternatives=tuple(_own_class(a) for a in ref.alternatives))
        rank = args[0].rank if args and args[0].is_tensor else None
        fitting = tuple(a for a in ref.alternatives if a.rule.rank == rank) if all(
            a.kind == "rule" and a.rule is not None and a.rule.rank for a in ref.alternatives) else ()
        if rank is not None and fitting:  # layers of several ranks a `dimension` chose (Conv1d/2d/3d): only the
            ref = replace(ref, alternatives=fitting)  # one of the input's rank can run on it
        if any(a.kind not in ("class", "sequential", "rule") or a.kind == "rule" and a.rule is None
               for a in ref.alternatives):
            return None  # one porter cannot tell (a module handed in, a container): converted at run time
        if any(a.kind == "class" and self.call_unknown_yet(a.class_name, args, kwargs) for a in ref.alternatives):
            return None  # (a class calling itself: what its call takes and returns is not known yet)
        if any(a.kind == "class" and self.fixes_other_layout(a.class_name, args) for a in ref.alternatives):
            return None  # (an alternative not laid out yet that works in another layout: its own uses decide it)
        passing = [a for a in ref.alternatives if a.kind == "rule" and a.rule.layout == "any" and
                   a.rule.rank_delta == 0 and a.rule.outputs == "tensor" or
                   a.kind == "sequential" and not a.elements]  # (`nn.Identity()`, an empty Sequential)
        active = [a for a in ref.alternatives if a not in passing] or passing
        active = [a for a in active if a.kind != "class" or self.takes_arguments(a.class_name, args, kwargs)] or \
            active  # (a block that cannot take these arguments is not the one this call runs)
        results = []
        # conversions stay inside the call's text (nothing hoisted into the body): a call that falls back leaves none
        hoister, self.ctx.hoister = getattr(self.ctx, "hoister", None), None
        try:
            for alternative in active:
                if alternative.kind == "class":  # (no site: an instance of one class cannot be told another's case)
                    results.append(self.class_call(code, alternative.class_name, args, kwargs, alternative.static,
                                                   at_site=False))
                elif alternative.kind == "sequential":  # (its runtime converts between its children as this does)
                    if not alternative.elements or not _fully_known(alternative) or len(args) != 1:
                        return None
                    results.append(self.sequential_call(code, alternative, args, kwargs))
                else:
                    results.append(self.rule_module_call(code, alternative.rule, args, kwargs))
        finally:
            self.ctx.hoister = hoister
        # a runtime layer ignores `training` (Keras passes it only to a call that takes it): the class's call text
        first = next((r for r in results if "training=" in r.code), results[0])
        if any(_without_training(r.code) != _without_training(first.code) or not _alike_state(r, first) or
               r.kind == "tuple" and (
                r.items is None or first.items is None or len(r.items) != len(first.items) or
                not all(_same_state(a, b) for a, b in zip(r.items, first.items))) for r in results):
            return None
        if first.is_tensor and not first.channels_last:  # (logits beside images: as images)
            first = _images_lead(results, first).but(code=first.code)
        if len(active) < len(ref.alternatives) and not self.passes_through(active[0], args, kwargs, first):
            return None  # a pass-through alternative hands back what it takes: so must the others
        if len(active) < len(ref.alternatives) and first.is_tensor and args[0].rank is None:
            first = first.but(rank=None)  # what the pass-through hands back
        if first.is_tensor and any(r.channels != first.channels for r in results[1:]):
            first = first.but(channels=None)
        if first.is_tensor and any(r.rank != first.rank for r in results[1:]):
            first = first.but(rank=None)  # one image, its rank known to some of them only
        return first

    def passes_through(self, alternative, args, kwargs, result):
        """Whether module `alternative`, called on `args`, returns a tensor in the layout and rank it takes them in
        (what a pass-through module such as nn.Identity returns)."""
        if not (args and args[0].is_tensor and result.is_tensor and (
                None in (args[0].rank, result.rank) or result.rank == args[0].rank)):
            return False  # (an image whose rank porter does not know: a pass-through hands it back as it is)
        if alternative.kind == "rule":
            return alternative.rule.rank_delta == 0 and result.layout == (
                args[0].layout if alternative.rule.layout == "any" else alternative.rule.layout)
        if alternative.kind == "sequential":
            layout_in = self.sequential_layout_in(alternative, args[0])
            return result.layout == (args[0].layout if layout_in == "any" else layout_in)
        signature = self.ctx_class_signature(alternative.class_name, args, kwargs, alternative.static)
        wanted = signature.arg_values[0] if signature is not None and signature.arg_values else None
        return wanted is not None and wanted.is_tensor and result.layout == (
            "channels_last" if wanted.channels_last else "source")

    def takes_arguments(self, class_name, args, kwargs):
        """Whether `class_name`'s call accepts these arguments (ClassBodyTranslator reads its signature)."""
        return True

    def takes_another_rank(self, class_name, value):
        """Whether `class_name`'s forward takes its first tensor in a rank other than tensor `value`'s
        (ClassBodyTranslator knows what rank_inference.py read)."""
        return False

    def in_translation(self, class_name):
        """Whether `class_name`'s call is being translated (ClassBodyTranslator knows)."""
        return False

    def holds_recursion(self, refs):
        """Whether a lambda run as written may call the classes `refs`, whose call is being translated, taking
        their call to hand back what it is handed as held (held_recursion.py; ClassBodyTranslator knows)."""
        return False

    def note_held_recursions(self, calls):
        """Note the HeldRecursion `calls` taken so, for a check once their class is translated."""

    def call_unknown_yet(self, class_name, args=(), kwargs=None):
        """Whether `class_name`'s call is being translated and what it returns is not known yet (a class calling
        itself, before its recursion is settled: ClassBodyTranslator knows)."""
        return False

    def fixes_other_layout(self, class_name, args):
        """Whether translating `class_name` for `args` here would fix its call to an image layout it does not
        prefer (ClassBodyTranslator knows): a call that may fall back to `call_module` must not decide it."""
        return False

    def training_kwarg(self, kwargs):
        return "" if "training" in kwargs else ", training=training" if self.mode == "forward" else ""

    @staticmethod
    def call_text(callee, arguments, extra=""):
        """`callee(arguments, extra)` without a dangling comma when there are no arguments."""
        if not arguments.strip():
            extra = extra.lstrip(", ")
        return f"{callee}({arguments}{extra})"

    def rule_module_call(self, code, rule, args, kwargs):
        args, kwargs = _leading_by_position(rule.params, args, kwargs)
        if not args:  # (tensors by keywords porter cannot place: in the layout the layer takes)
            wanted = rule.layout if rule.layout != "any" else "source"
            kwargs = {k: to_layout(self.ctx, v, wanted) if v.is_tensor else v for k, v in kwargs.items()}
            return tensor(f"{code}({self.join_args(args, kwargs)})", None, wanted)
        if rule.runtime == "Linear" and args[0].layout == "flat_channels_last" and not kwargs:
            return self.linear_after_flatten(code, rule, args[0])
        if rule.runtime == "Linear" and len(args) == 1 and not kwargs:
            viewed = self.linear_viewed_as_image(code, rule, args[0])
            if viewed is not None:
                return viewed
        if rule.runtime == "Linear" and code.startswith("self.") and self.ctx.ir is not None:
            self.ctx.ir.plain_linears.add(code[5:])
        if rule.runtime == "Flatten" and args[0].channels_last and written_channels(args[0]) and not kwargs and \
                len(args) == 1 \
                and self.flatten_module_defaults(code):
            from porter.rules.tensor_ops import flatten_channels_last

            return flatten_channels_last(self.rule_context, args[0])
        if rule.spatial_order_free and len(args) == 1 and not kwargs and is_permuted(args[0]):
            pooled = self.pool_in_stored_order(code, rule, args[0])
            if pooled is not None:
                return pooled
        if _runs_as_held(rule.runs_channels_last, args[0]) and len(args) == 1 and not kwargs:
            self.record_module_op(rule)
            return args[0].but(code=self.call_text(code, args[0].code, ', layout="channels_last"'), static=None)
        if rule.last_axis_only and len(args) == 1 and not kwargs and is_permuted(args[0]) and \
                physical_order(args[0])[-1] == args[0].rank - 1:  # (Linear on `out.permute(1, 0, 2)`)
            self.record_module_op(rule)
            return args[0].but(code=self.call_text(code, args[0].code), static=None, channels=None)
        if rule.takes_held_order and len(args) == 1 and not kwargs and is_permuted(args[0]):
            self.record_module_op(rule)  # (a LayerNorm on tokens held batch-first for a sequence-first model;
            # `call_held`: the Identity an if/else may build instead takes them as they lie)
            held = f"{self.ctx.use('call_held')}({code}, {args[0].code}, {physical_order(args[0])})"
            return args[0].but(code=held, static=None, channels=None)
        if rule.unbatched_in_order and rule.rank and len(args) == 1 and not kwargs and args[0].is_tensor and (
                args[0].rank == rule.rank - 1 or args[0].rank is None and args[0].layout == "source"):
            # torch's unbatched form (a 2d pad on (C, H, W)): its trailing dims padded as they lie; a tensor of
            # unknown rank in torch's order is padded so (`layout="source"`), whatever its rank turns out to be
            first = to_layout(self.ctx, args[0], "source")
            self.record_module_op(rule)
            told = ', layout="source"' if first.rank is None else ""
            return first.but(code=self.call_text(code, first.code, told), static=None, channels=None)
        recurrent = bool({"state", "states"} & set(rule.items or ()))  # (its initial state, hx, goes as torch's)
        attention = rule.runtime == "MultiheadAttention" and len(args) == 3 and all(
            a.is_tensor and a.layout == args[0].layout for a in args)  # (query, key and value held alike)
        if (len(args) == 1 or len(args) == 2 and recurrent or attention) and is_permuted(args[0]) and (
                rule.gathers or rule.swaps_batch_axis):
            held = self.permuted_module_call(code, rule, args[0], kwargs, args[1:])
            if held is not None:
                return held
        if rule.runtime == "Conv1d" and len(args) == 1 and not kwargs and args[0].is_tensor and \
                args[0].layout == "source" and args[0].rank == 3 and own_attribute(code) is not None and \
                pointwise_conv_attribute(self.source, self.info, own_attribute(code), "torch.nn.Conv1d"):
            # a 1x1 Conv1d over the tokens of a sequence (gMLP's spatial gating): a matmul over axis 1 in place
            self.record_module_op(rule)
            return args[0].but(code=self.call_text(code, args[0].code, ', layout="source", layout_out="source"'),
                               static=None, channels=None)
        first = args[0]
        if rule.layout == "channels_last":
            first = untyped_as_tensor(first)  # what porter cannot type (a class's unknown result): torch's layout
        first = to_layout(self.ctx, first, rule.layout, rule.rank)
        rest = [to_layout(self.ctx, untyped_as_tensor(a), rule.layout, rule.rank) if position < rule.image_args
                else to_layout(self.ctx, a, "source") for position, a in enumerate(args[1:], 1)]
        kw = {k: to_layout(self.ctx, v, "source") for k, v in kwargs.items()}
        if rule.image_args > 1:  # (what follows the images goes by name: Keras takes only tensors by position)
            kw.update({rule.params[position]: a for position, a in enumerate(rest, 1)
                       if rule.image_args <= position < len(rule.params)})
            rest = rest[:rule.image_args - 1]
        training = self.training_kwarg(kwargs) if rule.training else ""
        call = self.call_text(code, self.join_args([first] + rest, kw), training)
        self.record_module_op(rule)
        if rule.outputs == "tuple" and rule.items is not None:
            one_layer = self.one_layer_recurrent(code, rule)
            return result_of(Value(call, "tuple", items=tuple(_rule_item(kind, first.rank, one_layer, rule.layout)
                                                              for kind in rule.items)), call)
        if rule.outputs == "tuple" or (rule.outputs == "tensor_or_tuple" and len(args) + len(kwargs) > 1):
            return Value(call, "tuple", items=None)  # tensor_or_tuple: Gluon's RNN layers given begin states
        if rule.layout == "any":
            return first.with_code(call)
        result = tensor(call, self.rule_rank(rule, first), rule.layout)
        if rule.layout == "channels_last":
            result = result.but(channels=channels_after_rule(rule, code, first))
        return result

    def permuted_module_call(self, code, rule, value, kwargs, rest=()):
        """A layer that takes a permuted tensor as it lies: an Embedding of indices `src.transpose(0, 1)` (its vectors
        stored after them), a sequence-first Transformer encoder or recurrent layer on that sequence held batch-first
        (told `swapped=True`: it runs batch-first and hands its result back so; a recurrent layer's initial state,
        `rest`, is (layers, N, H) either way). None for any other case."""
        order = physical_order(value)
        kw = {k: to_layout(self.ctx, v, "source") for k, v in kwargs.items()}
        training = self.training_kwarg(kwargs) if rule.training else ""
        if rule.gathers and not kwargs and not rest:
            result = tensor(self.call_text(code, value.code), value.rank + 1)
            self.record_module_op(rule)
            return result.but(layout=layout_of_order(order + [value.rank]))
        if rule.swaps_batch_axis and order == [1, 0, 2]:
            swapped_rest = rule.runtime == "MultiheadAttention"  # (key and value held as the query is)
            call = self.call_text(code, self.join_args([value] + [a if swapped_rest else self.as_plain(a)
                                                                  for a in rest], kw), training + ", swapped=True")
            self.record_module_op(rule)
            if rule.outputs == "tuple" and rule.items is not None:  # a recurrent layer: (output swapped alike, h_n)
                one_layer = self.one_layer_recurrent(code, rule)
                items = tuple(tensor("", 3).but(layout=value.layout) if kind == "input" else
                              _rule_item(kind, 3, one_layer) for kind in rule.items)
                return result_of(Value(call, "tuple", items=items), call)
            return tensor(call, 3).but(layout=value.layout)
        return None

    def one_layer_recurrent(self, code, rule):
        """Whether layer `code` (`self.gru`) is a recurrent layer its constructor builds with one layer, one
        direction (passes/recurrent_states.py)."""
        attribute = own_attribute(code)
        return bool({"state", "states"} & set(rule.items or ())) and attribute is not None and \
            one_unidirectional_layer(self.source, self.info, attribute, rule.names[0])

    def pool_in_stored_order(self, code, rule, value):
        """A per-axis layer (a pool) on a permuted tensor: the channel axis moved last where it is not (a reshape
        when it has size 1, as after `unsqueeze(1)`), the spatial axes pooled in the order they are stored, the
        result in that order (AvgPool3d over `x.pow(2).unsqueeze(1)` of a channels-last image: pooled across the
        channels where they lie)."""
        order = physical_order(value)
        target = separable_order(order)
        if target is None:  # (a rank the rule does not declare: the layer an if/else in `__init__` chose among
            return None  # pools of several ranks, as SpatialCrossMapLRN's AvgPool3d or AvgPool2d)
        stored = value.code
        if target != order:
            self.ctx.use("permute_axes")
            stored = f"permute_axes({stored}, {[order.index(d) for d in target]})"
        spatial = [d - 2 for d in target[1:-1]]
        extra = f", axis_order={tuple(spatial)}" if spatial != sorted(spatial) else ""
        self.record_module_op(rule)
        result = tensor(f"{code}({stored}{extra})", len(order))
        return result.but(layout=layout_of_order(target), rank=len(order))

    @staticmethod
    def rule_rank(rule, first):
        if rule.rank is not None:
            return rule.rank
        if rule.rank_delta == "unknown" or first.rank is None:
            return None
        return first.rank + rule.rank_delta

    def linear_after_flatten(self, code, rule, flat):
        """Linear on a channels-last flatten: the weight columns are permuted at load time, not the data."""
        ir = self.ctx.ir
        attribute = own_attribute(code)
        known = ir.flatten_inputs.get(self.torch_path(attribute)) if attribute else None
        if attribute is None or (known is not None and known != flat.channels) or attribute in ir.plain_linears:
            return self.rule_module_call(code, rule, [to_layout(self.ctx, flat, "source")], {})
        self.record_flatten_input(attribute, flat.channels)
        self.ctx.adjust(self.line, f"Linear `{attribute}` after a flatten: torch flattens (C, H, W), the port "
                                   f"(H, W, C); its weight columns are permuted once at load time")
        self.record_module_op(rule)
        return tensor(f"{code}({flat.code})", 2)

    def linear_viewed_as_image(self, code, rule, value):
        """A Linear whose output forward views as an image (passes/image_views.py): its weight rows are permuted at
        load time and its output is the image flattened channels-last (`flat_channels_last`), which the view splits
        as it lies; None where forward does otherwise."""
        attribute = own_attribute(code)
        channels = self.image_view_channels(attribute)
        if channels is None or not value.is_tensor or value.rank not in (2, None) or \
                value.layout == "flat_channels_last":
            return None
        path = self.torch_path(attribute)
        if self.ctx.ir.image_rows.get(path, channels) != channels:
            return None
        self.ctx.ir.image_rows[path] = channels
        self.ctx.adjust(self.line, f"Linear `{attribute}` viewed as an image: its weight rows are permuted once at "
                                   f"load time, so the view gives the image channels-last")
        self.record_module_op(rule)
        return tensor(f"{code}({value.code})", 2, "flat_channels_last").but(channels=channels)

    def image_view_channels(self, attribute):
        """The port's code of the channel size forward views attribute `attribute`'s output with, as an image
        (passes/image_views.py), or None."""
        if attribute is None or self.info is None or self.ctx.ir is None:
            return None
        size = image_views(self.info.node).get(attribute)
        channels = self.expr(size) if size is not None else None
        return channels.code if channels is not None and channels.kind == "python" and channels.code else None

    def record_module_op(self, rule):
        """A layer called: its op, unless the class already lists it under the name its source built it with."""
        if self.ctx.ir is not None and not self.ctx.ir.ops & set(rule.names):
            self.ctx.ir.ops.add(rule.names[0])

    def torch_path(self, attribute):
        return self.ctx.ir.renamed.get(attribute, attribute)

    def record_flatten_input(self, path, channels):
        self.ctx.ir.flatten_inputs[self.torch_path(path.split(".")[0]) + path[len(path.split(".")[0]):]] = channels

    def flatten_module_defaults(self, code):
        """True when nn.Flatten() at `code` flattens everything after the batch (the default)."""
        return True

    def class_call(self, code, class_name, args, kwargs, static=(), at_site=True):
        site = own_attribute(code) if at_site and self.mode == "forward" else None
        # an image flattened as it lies, (H, W, C), goes in torch's order: its channel count is an expression of
        # this class (`self.conv_head.out_channels`), which the class called cannot read
        args = [to_layout(self.ctx, v, "source") if v.is_tensor and v.layout == "flat_channels_last" else v
                for v in _unstarred(args)]
        kwargs = {k: to_layout(self.ctx, v, "source") if v.is_tensor and v.layout == "flat_channels_last" else v
                  for k, v in kwargs.items()}
        signature = self.ctx_class_signature(class_name, args, kwargs, static, site=site)
        starred = next((i for i, v in enumerate(args) if v.kind == "starred"), None)
        fits = starred is not None and signature is not None and self.starred_fits(class_name, signature, starred,
                                                                                   args[starred])
        if starred is not None and signature is not None and not fits and any(
                w.is_tensor and w.channels_last for w in signature.arg_values[starred:]):
            # a starred list of unknown length hands its items in torch's layout, where the call takes an image
            # channels-last: the runtime converts (call_module)
            return self.module_call(Value(code, "module", module=UNKNOWN_MODULE), self.node_of_call)
        converted = []
        gathered = self.star_parameter_images(class_name, signature)  # (position, template) of `*args` images
        for position, value in enumerate(args):
            wanted = signature.arg_values[position] if signature and position < len(signature.arg_values) else None
            if wanted is None and gathered is not None and position >= gathered[0]:
                wanted = gathered[1]  # an item `*args` takes as a channels-last image
            converted.append(value if fits and position == starred else self.to_value_layout(value, wanted))
        kw = {}
        for name, value in kwargs.items():
            wanted = signature.kwarg_values.get(name) if signature and hasattr(signature, "kwarg_values") else None
            kw[name] = self.to_value_layout(value, wanted)
        converted, kw = self.plain_values_by_keyword(class_name, converted, kw)
        arguments = self.join_args(converted, kw)
        if self.mode == "init":  # (no model call is open in a constructor: the block would take what it is handed
            # for a model's input and convert it again)
            arguments, code = ", ".join(part for part in (code, arguments) if part.strip()), \
                self.ctx.use("call_in_constructor")
        call = self.call_text(code, arguments, self.training_kwarg(kwargs))
        output = signature.output if signature is not None and signature.output is not None else tensor("")
        return self.output_value(call, _rebased_channels(output, code, converted[0] if converted else None))

    def star_parameter_images(self, class_name, signature):
        """(position, template) when the class's call gathers channels-last images in its `*args` parameter (its
        first caller handed them so), else None."""
        info = self.source.classes.get(class_name)
        forward = info.find_method("forward") if info is not None else None
        star = forward.params.star_arg if forward is not None else None
        if signature is None or not isinstance(star, cst.Param):
            return None
        rest = getattr(signature, "kwarg_values", {}).get(star.name.value)
        template = element_template(rest) if rest is not None and rest.kind == "tuple" else None
        if template is None or not template.is_tensor or not template.channels_last:
            return None
        return len([p for p in forward.params.params if p.name.value != "self"]), template

    def starred_fits(self, class_name, signature, starred, value):
        """Whether the starred list `value` a caller hands at position `starred` (`stage(*features)`) holds
        channels-last images where the class's call takes every parameter from there on, its `*args` included, as
        channels-last images: the list goes in as it is."""
        images = starred_images(value)
        info = self.source.classes.get(class_name)
        forward = info.find_method("forward") if info is not None else None
        if images is None or forward is None:
            return False
        wanted = list(signature.arg_values[starred:])
        star = forward.params.star_arg
        if isinstance(star, cst.Param):
            rest = getattr(signature, "kwarg_values", {}).get(star.name.value)
            wanted.append(element_template(rest) if rest is not None and rest.kind == "tuple" else None)
        return bool(wanted) and all(w is not None and w.is_tensor and w.channels_last and
                                    (w.rank is None or images.rank is None or w.rank == images.rank) for w in wanted)

    def plain_values_by_keyword(self, class_name, args, kwargs):
        """Keras takes only tensors positionally in a layer call: `self.partition_op(x, self.p)` passes `p=...`
        by the name the class's forward gives it (from the first plain value on; tensors stay where they are)."""
        info = self.source.classes.get(class_name)
        forward = info.find_method("forward") if info is not None else None
        if forward is None or isinstance(forward.params.star_arg, cst.Param) or self.positions_kept:
            return args, kwargs  # (`*args`: positions matter; a lambda run as written hands them by position)
        names = [p.name.value for p in forward.params.params][1:]
        # a parameter named `mask` goes by keyword too, tensor or None: Keras fills `mask=` itself when a layer
        # called with one tensor has it (GluonNLP's `cell(inputs, mask)`: "multiple values for argument 'mask'")
        first_plain = next((i for i, v in enumerate(args) if i > 0 and (
            v.kind not in ("tensor", "tuple", "starred") or i < len(names) and names[i] == "mask")), None)
        if first_plain is None or len(args) > len(names) or any(v.kind == "starred" for v in args):
            return args, kwargs
        moved = {names[i]: v for i, v in enumerate(args) if i >= first_plain}
        return args[:first_plain], {**moved, **kwargs}

    def output_value(self, call, template):
        """What a call of a method or function gives (`template`: what its body returned) as the value of `call`;
        an einsum's recipe stays behind (it names the callee's variables, not the caller's)."""
        if template.kind == "tuple" and template.items is not None:
            items = tuple(i.but(static=None) if isinstance(i.static, EinsumRecipe) else i for i in template.items)
            return result_of(Value(call, "tuple", items=items), call)
        if isinstance(template.static, EinsumRecipe):
            template = template.but(static=None)
        if isinstance(template.static, HeldTable):  # a dict of channels-last features: read by key as it lies,
            # every value in torch's layout for any other reader
            return held_features(self.ctx, template.static.item, call)
        return template.with_code(call)

    def to_value_layout(self, value, wanted):
        held = wanted is not None and isinstance(wanted.static, HeldTable)
        if isinstance(value.static, HeldTable) or held:  # a dict of features a block returned by name
            return self.features_as_wanted(value, wanted.static if held else None)
        if value.kind == "starred":  # `block(*xs)`: the items go in torch's layout, which `*args` takes them in
            plain = self.as_plain(value.but(code=value.code[1:], kind="tuple"))
            return plain.but(code="*" + plain.code, kind="starred")
        if value.is_tensor and wanted is not None and is_permuted(wanted):  # a call translated for a permuted
            if value.layout == wanted.layout:  # tensor (its first caller held it so): handed as it lies
                return value
            value = to_layout(self.ctx, value, "source").but(rank=wanted.rank)
            return tensor(settle(value, physical_order(wanted), self.ctx), wanted.rank).but(layout=wanted.layout,
                                                                                            dtype=value.dtype)
        if value.is_tensor and value.layout.startswith("permuted:") and not (
                wanted is not None and wanted.is_tensor and wanted.channels_last):
            value = to_layout(self.ctx, value, "source")  # a channels-last parameter takes it in one transpose
        if value.kind == "tuple" and value.items is None and wanted is not None and wanted.kind == "tuple" and \
                wanted.items:
            return self.list_in_layout(value, wanted)
        if value.kind == "tuple" and value.items is not None and wanted is not None and wanted.kind == "tuple" and \
                wanted.items is not None and len(value.items) == len(wanted.items):
            return self.tuple_in_layouts(value, [self.to_value_layout(v, w) for v, w in zip(value.items,
                                                                                             wanted.items)])
        if value.kind == "tuple" and wanted is not None and wanted.kind == "tuple" and wanted.items is None:
            # a list of unknown length where the callee was translated for one: its items as that one held them
            held = images_held(wanted)
            return self.list_in_layout(value, Value("", "tuple", items=(held,))) if held is not None else \
                self.as_plain(value)
        if wanted is None or not value.is_tensor:
            # (a list handed where the call was translated for a plain value, `cur_state=[h, c]` first handed values
            # porter could not type: the call reads its items in torch's layout)
            return self.as_plain(value) if wanted is None or value.kind == "tuple" and wanted.kind == "python" and \
                wanted.static is None and not holds_none(wanted) else value
        if not wanted.is_tensor:
            return self.as_plain(value)  # translated for a plain value (a None default): torch's order
        return to_layout(self.ctx, value, "channels_last" if wanted.channels_last else "source", wanted.rank)

    def list_in_layout(self, value, wanted):
        """A list of unknown length (its items in torch's layout unless its element template says otherwise) where
        `wanted` holds images channels-last (a block's first return `[x]`, its other `return x_fuse`): each item
        converted in a comprehension."""
        held = element_template(value)
        targets = [i for i in wanted.items if i.is_tensor]
        if len(targets) != len(wanted.items) or not all(holds_images(t) for t in targets) or \
                len({t.rank for t in targets}) != 1:
            return self.as_plain(value)
        if held is not None and held.is_tensor and held.channels_last:
            return value
        if value.items is not None:  # items of their own layouts (`[x, y]`): each converted as it needs
            return self.tuple_in_layouts(value, [to_layout(self.ctx, i, "channels_last", targets[0].rank)
                                                 if i.is_tensor else i for i in value.items])
        self.ctx.use("to_channels_last")
        return Value(_converted_items("to_channels_last(_each)", value.code), "tuple", items=None,
                     static=("each", targets[0].with_code("")))

    def to_parameter_layout(self, value, wanted):
        """A function argument in the layout the function was translated for (torch's when it took no tensor; a
        list's items as the function's translation held them)."""
        if wanted is not None and wanted.kind == "tuple" and value.kind == "tuple":
            return self.to_value_layout(value, wanted)
        if wanted is None or not wanted.is_tensor or value.kind == "starred":
            return self.as_plain(value)
        return self.to_value_layout(value, wanted)

    def elementwise_function(self, name):
        """Whether the file's autograd Function `name` computes elementwise (porter/passes/elementwise_function)."""
        from porter.passes.elementwise_function import elementwise_function_named

        return elementwise_function_named(self.source, name)

    def sequential_call(self, code, ref, args, kwargs, explicit=False):
        """A Sequential: the runtime converts layouts between children; follow the same steps statically.
        `explicit`: the call names the layouts it hands and wants (a Sequential subclass's own forward reaching its
        children through `super().forward`: the instance's `porter_layout` is its forward's)."""
        value = args[0] if args else tensor("")
        if not _fully_known(ref) or len(args) != 1:
            return self.module_call(Value(code, "module", module=UNKNOWN_MODULE), self.node_of_call)
        layout_in = self.sequential_layout_in(ref, value)
        if value.layout == "flat_channels_last" and ref.ordered and own_attribute(code) is not None:
            linear = next((i for i, e in enumerate(ref.elements) if not (e.kind == "rule" and e.rule.layout == "any")),
                          None)
            element = ref.elements[linear] if linear is not None else None
            if element is not None and element.kind == "rule" and element.rule.runtime == "Linear":
                self.record_flatten_input(f"{code[5:]}.{linear}", value.channels)
                self.ctx.adjust(self.line, f"Linear `{code[5:]}[{linear}]` after a flatten: its weight columns "
                                           f"are permuted once at load time for the channels-last order")
                rest = ModuleRef("sequential", elements=ref.elements[linear + 1:], ordered=True)
                out = self.simulate_sequential(rest, tensor("", 2))
                return result_of(out, f"{code}({value.code}{self.training_kwarg(kwargs)})")
        incoming = to_layout(self.ctx, value.with_code(""), layout_in) if layout_in not in ("any", value.layout) \
            else value
        self.sequential_code = code
        try:
            out = self.simulate_sequential(ref, incoming.with_code(""))
        finally:
            self.sequential_code = None
        if out is None:  # converted at run time: nothing converted here
            return self.module_call(Value(code, "module", module=UNKNOWN_MODULE), self.node_of_call)
        first = to_layout(self.ctx, value, layout_in) if layout_in not in ("any", value.layout) else value
        layouts = ""
        explicit = explicit or (first.channels_last and any(
            e.kind == "rule" and e.rule.runs_channels_last for e in ref.elements))  # the runtime's default: source
        told = layout_in == first.layout or any(e.kind == "rule" and e.rule.takes_held_order for e in ref.elements)
        if explicit and {first.layout, out.layout} <= {"channels_last", "source"} or is_permuted(first) and told and \
                out.is_tensor and (is_permuted(out) or out.layout in ("channels_last", "source")):
            # (tokens held permuted: the runtime converts for any child declaring another order)
            layouts = f", layout={first.layout!r}, layout_out={out.layout!r}".replace("'", '"')
        return result_of(out, f"{code}({first.code}{self.training_kwarg(kwargs)}{layouts})")

    def element_layouts(self, ref, incoming):
        """(layout wanted, Value after) for one module element given the incoming Value."""
        ref = _own_class(ref)
        if ref.kind == "rule":
            rule = ref.rule
            if rule.layout == "any" or _runs_as_held(rule.runs_channels_last, incoming) or (
                    rule.last_axis_only and is_permuted(incoming) and
                    physical_order(incoming)[-1] == incoming.rank - 1) or (  # (a Linear on tokens held batch-first)
                    rule.takes_held_order and is_permuted(incoming) and not self.nested_sequential):
                # (a LayerNorm a Sequential called in the tokens' held order tells that order: runtime Sequential)
                return "any", incoming
            after = tensor("", self.rule_rank(rule, incoming), rule.layout) if rule.outputs in (
                "tensor", "tensor_or_tuple") else Value("", "tuple", items=None)
            return rule.layout, after
        if ref.kind == "class":
            signature = self.ctx_class_signature(ref.class_name, [incoming], {}, ref.static)
            wanted = signature.arg_values[0] if signature and signature.arg_values else None
            layout = "channels_last" if wanted is not None and wanted.channels_last else "source"
            if wanted is not None and is_permuted(wanted) and wanted.layout == incoming.layout:
                layout = incoming.layout  # (tokens held batch-first, as the child was translated for them)
            output = signature.output if signature and signature.output is not None else tensor("")
            if self.module_ref_resolver().passes_layout_through(ref):
                return "any", incoming  # an elementwise class (porter_layout "any"): as the runtime, no conversion
            return layout, output.with_code("")  # a template: the code it carries is the callee's
        if ref.kind == "sequential":
            # (a Sequential inside one: the outer converts to the layout it declares, its children are not told an
            # order)
            nested, self.nested_sequential = self.nested_sequential, True
            try:
                layout = self.sequential_layout_in(ref, incoming)
                return layout, self.simulate_sequential(ref, to_layout(self.ctx, incoming, layout))
            finally:
                self.nested_sequential = nested
        if ref.alternatives:
            return self.alternatives_layouts(ref, incoming)
        return "source", tensor("")

    def alternatives_layouts(self, ref, incoming):
        """`element_layouts` of a child that is one of several modules (a block class chosen at run time): theirs
        when they all take and hand on one layout (pass-through ones agreeing), else a child whose output porter
        cannot tell (None: the container converts at run time)."""
        if any(a.kind == "class" and self.call_unknown_yet(a.class_name, [incoming], {}) for a in ref.alternatives):
            return "source", None
        taking = [a for a in ref.alternatives if a.kind != "class" or self.takes_arguments(a.class_name, [incoming], {})]
        # (a block that takes two images is not the child a Sequential hands one: SelecSLS's unit in a stage built
        # as `DualPathSequential() if k < 0 else nn.Sequential()`)
        found = [(a, *self.element_layouts(a, incoming)) for a in taking or ref.alternatives]
        active = [(layout, after) for _, layout, after in found if layout != "any"]
        if not active:
            return "any", incoming
        layout, after = active[0]
        if after is None or any(other is None or other_layout != layout or not _same_state(other, after)
                                for other_layout, other in active[1:]):
            return "source", None
        if len(active) < len(found) and not (incoming.is_tensor and after.is_tensor and
                                             incoming.layout == layout == after.layout and after.rank == incoming.rank):
            return "source", None  # a pass-through child hands back what it takes: so must the others
        return layout, after.but(channels=None) if after.is_tensor else after

    def sequential_layout_in(self, ref, incoming):
        incoming = incoming.with_code("")  # asking converts nothing
        for element in ref.elements:
            layout, _ = self.element_layouts(element, incoming)
            if layout != "any":
                return layout
        return "any"

    def simulate_sequential(self, ref, value):
        current = self.simulate_in_order(ref, value) if ref.ordered else self.simulate_unordered(ref, value)
        layers = _layers_within(ref)
        if current is not None and current.is_tensor and current.channels_last and not current.channels and \
                self.sequential_code and layers and all(
                e.kind == "rule" and (counts_channels(e.rule) or passes_channels(e.rule))
                for e in layers) and any(counts_channels(e.rule) for e in layers):
            current = current.but(channels=f"{self.ctx.use('last_channels')}({self.sequential_code})")
        return current

    def simulate_in_order(self, ref, value):
        current = value
        for index, element in enumerate(ref.elements):
            held = held_step(self, ref, index, current) if self.sequential_code is not None else None
            if held is not None:  # a Flatten or Unflatten on the image held channels-last, a Linear permuted
                current = held
                continue
            if element.kind == "sequential" and element.ordered and ref.ordered and self.sequential_code is not None:
                # a Sequential inside (a VAE encoder's `Sequential(Conv2d, BatchNorm2d, LeakyReLU)` blocks): its
                # children's channel counts are read through it
                outer, self.sequential_code = self.sequential_code, f"{self.sequential_code}[{index}]"
                try:
                    layout, after = self.element_layouts(element, current)
                finally:
                    self.sequential_code = outer
            else:
                layout, after = self.element_layouts(element, current)
            if layout != "any" and current.is_tensor and layout != current.layout:
                current = to_layout(self.ctx, current, layout)
            channels = None
            if ref.ordered and self.sequential_code is not None and current.is_tensor:
                if element.kind == "rule":
                    channels = channels_after_rule(element.rule, f"{self.sequential_code}[{index}]", current)
                elif element.kind == "class" and layout == "any":
                    channels = current.channels  # an elementwise class hands the incoming channels on, as they are
                elif element.kind == "class" and after is not None and after.is_tensor:
                    channels = rebase(after.channels, f"{self.sequential_code}[{index}]", current)
                elif element.kind == "sequential" and after is not None and after.is_tensor:
                    channels = after.channels  # (read through the nested one's code, above)
            current = after if layout != "any" else current
            if current is None:
                return None  # a child whose output porter cannot tell: the call goes through call_module
            if current.is_tensor:
                current = current.but(channels=channels if current.channels_last else None)
        return current

    def simulate_unordered(self, ref, value):
        """A Sequential whose children porter knows but not their order (appended in a loop): its `lead` children
        run first, in order; then any other child may follow any state reached so far, so every state reachable
        that way is followed (a stage handed the stem's output, then the next stage handed that stage's). The
        output is known when every reachable state has one layout; otherwise (None) the call converts at run
        time."""
        lead = ModuleRef("sequential", elements=ref.elements[:ref.lead], ordered=True)
        start = self.simulate_in_order(lead, value) if ref.lead else value
        if start is None:
            return None
        states, frontier = [start], [start]
        for _ in range(4):
            reached = []
            for state in frontier:
                for element in ref.elements[ref.lead:]:
                    if element.kind == "class" and state.is_tensor and self.takes_another_rank(element.class_name,
                                                                                              state):
                        continue  # (EfficientFormer's token block never follows an image: torch would fail there)
                    layout, after = self.element_layouts(element, state)
                    out = after if layout != "any" else state
                    if out is None:
                        return None  # a child whose output porter cannot tell: the call goes through call_module
                    out = out.but(channels=None) if out.is_tensor else out
                    if not any(_same_state(out, known) for known in states + reached):
                        reached.append(out)
            if not reached:
                break
            states += reached
            frontier = reached
        else:
            return None  # the states never settle: the call goes through call_module
        if len({(s.kind, s.layout if s.is_tensor else None) for s in states}) > 1:
            return None  # order unknown statically and the layouts differ: the call goes through call_module
        if len(ref.elements) == ref.lead:
            return start
        if len(states) == 1:  # the loop's children keep the state, but not the channel count the lead left
            return start.but(channels=None) if start.is_tensor else start
        ranks = {s.rank for s in states}
        return states[-1].but(rank=ranks.pop() if len(ranks) == 1 else None, channels=None)

    def module_iteration(self, base, method, node):
        ref = base.module or UNKNOWN_MODULE
        if base.code == "self._modules" and not ref.elements and method in ("values", "items"):
            return Value(f"{base.code}.{method}()", "module", module=ModuleRef("list", elements=()))  # (none at all)
        if method in ("values", "children", "modules"):
            # every child: a loop over them binds one of them (ModuleRef.loop_element)
            return Value(f"{base.code}.{method}()", "module", module=ModuleRef("list", elements=ref.elements or (
                ref.element(),), ordered=ref.ordered))
        if method in ("items", "named_children"):  # (name, child) pairs (CSAIL's UPerNet: `for name, module in
            # self.body.named_children(): x = module(x)`)
            return Value(f"{base.code}.{method}()", "module", module=ModuleRef("dict", elements=ref.elements or (
                ref.element(),), ordered=ref.ordered))
        return python(f"{base.code}.{method}()")

    # --- torch functions and tensor methods --------------------------------------------------------------
    def partial_of_rule_function(self, node):
        """`partial(F.interpolate, scale_factor=2, mode="nearest")` (a rule's function with constant arguments): the
        partial as written, known as that function with those arguments (static `("rule-function", canonical,
        ((keyword or None, constant code), ...))`), so a call of it is the rule's; None for any other partial."""
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return None
        function = self.expr(node.args[0].value)
        if not (isinstance(function.static, tuple) and function.static[:1] == ("rule-function",) and
                len(function.static) == 2):
            return None
        held = []
        for argument in node.args[1:]:
            value = self.expr(argument.value)
            if argument.star or not isinstance(value.static, (bool, int, float, str, tuple)) or value.kind != "python":
                return None
            held.append((argument.keyword.value if argument.keyword else None, repr(value.static)))
        return python(f"{self.code(node.func)}({self.plain_args(node)})",
                      static=(*function.static, tuple(held)))

    def torch_call(self, canonical, node):
        rules = self.ctx.function_rules
        if canonical in rules:
            args, kwargs = self.arg_values(node)
            # a starred list's items go to a rule in torch's layout (`F.concat(*features, dim=1)`: the rule reads
            # its axis against them; one of channels-last images is converted item by item)
            if not rules[canonical].extra.get("starred_images"):  # (unless the rule takes them as they are)
                args = [self.as_plain(v) if v.kind == "starred" and starred_images(v) is not None else v
                        for v in args]
            return self.apply_rule(rules[canonical], Call(canonical, args, kwargs, self.line))
        if canonical in self.ctx.module_rules:
            rule = module_rule_for_call(self.ctx.module_rules[canonical], node)
            name = self.ctx.use(rule.runtime)
            if self.ctx.ir is not None:
                self.ctx.ir.ops.add(canonical)  # a layer built here is an op of this class, named as the source does
            return Value(f"{name}({self.plain_args(node)})", "module", module=ModuleRef("rule", rule=rule))
        if canonical in CONTAINERS:
            kind = CONTAINERS[canonical]
            name = self.ctx.use(container_runtime(canonical))
            ref = self.module_ref_of(node)
            return Value(f"{name}({self.plain_args(node)})", "module", module=ref)
        if canonical in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return self.parameter_call(node)
        if canonical.startswith("torch.nn.init."):
            return self.init_call(canonical, node)
        if canonical in GRAD_MODE_CONTEXTS:
            return python("contextlib.nullcontext()")
        if canonical in ALWAYS_IN_PORT:  # (the port runs traced: static_branches.py)
            return python("True", static=True)
        if canonical in ("torch.jit.is_scripting", "torch.is_grad_enabled", "torch.compiler.is_compiling",
                         "torch.is_inference_mode_enabled",
                         "torch.compiler.is_exporting"):
            return python("False", static=False)
        if canonical in TORCH_HOST_CALLS:  # `torch.device(...)`, `torch.cuda.is_available()`
            host = TORCH_HOST_CALLS[canonical]
            return python(host, static={"False": False, "0": 0}.get(host))
        if canonical in WEIGHT_DOWNLOADS:  # `torch.load(path)`, `load_state_dict_from_url(url)`: I/O, not the model
            return stub_value(f"not_supported({self.ctx.pretrained_weights(self.line, canonical)!r})")
        kind = "layer" if canonical.startswith("torch.nn.") and canonical[9:10].isupper() else "op"
        message = self.ctx.unsupported(self.line, canonical, f"no rule for this {kind} yet")
        if kind == "layer" or self.mode == "init":
            name = self.ctx.use("UnsupportedModule")
            return Value(f"{name}({message!r})", "module", module=UNKNOWN_MODULE)
        return stub_value(f"not_supported({message!r})")

    def module_ref_resolver(self):
        return ModuleResolver(self.source, self.ctx.module_rules, self.source.class_named)

    def module_ref_of(self, node):
        resolver = self.module_ref_resolver()
        module_env = {k: v for k, v in getattr(self, "module_env", {}).items()}
        return resolver.ref_of(node, module_env, self.info)

    def tensor_method(self, base, method, node):
        rules = self.ctx.function_rules
        canonical = f"Tensor.{method}"
        args, kwargs = self.arg_values(node)
        if self.source.framework == "mxnet":  # NDArray methods are mxnet's operators (`x.reshape((0, -1))`)
            numpy_method = f"{NUMPY_METHODS}{method}"  # under npx.set_np(), NumPy's (`x.reshape(-1, 1)`)
            if numpy_method in rules and uses_numpy_interface(self.source.imports, self.source.text):
                return self.apply_rule(rules[numpy_method], Call(numpy_method, args, kwargs, self.line,
                                                                 receiver=base))
            gluon = f"{GLUON_OPS}{method}"
            if gluon in rules:
                return self.apply_rule(rules[gluon], Call(gluon, args, kwargs, self.line, receiver=base))
        if canonical in rules:
            return self.apply_rule(rules[canonical], Call(canonical, args, kwargs, self.line, receiver=base))
        if method.endswith("_") and f"Tensor.{method[:-1]}" in rules:
            rule = rules[f"Tensor.{method[:-1]}"]
            return self.apply_rule(rule, Call(f"Tensor.{method[:-1]}", args, kwargs, self.line, receiver=base))
        if method in DICT_METHODS and not args and not kwargs and base.layout == "source":
            # no tensor has them: a dict porter took for a tensor (a block's `x.keys()` of the OrderedDict of
            # features its caller hands it, its tensors in torch's order, as a dict's are)
            return python(f"{base.code}.{method}()")
        message = self.ctx.unsupported(self.line, f"Tensor.{method}", "no rule for this tensor method yet")
        return stub_value(f"not_supported({message!r})")

    def size_method(self, base, method, node):
        if method == "numel":
            self.ctx.use("torch_size")
            return python(f"math.prod(torch_size({base.code}))")
        return python(f"{self.materialize_size(base).code}.{method}({self.plain_args(node)})")

    def apply_rule(self, rule, call):
        """Translate `call` with `rule`: its own translate callable, or the declarative layout behaviour."""
        if self.ctx.ir is not None:
            self.ctx.ir.ops.add(call.canonical)  # the name the source used (torch.chunk), not the rule's first
        try:
            result = rule.translate(self.rule_context, call) if rule.translate is not None else \
                self.declarative_rule(rule, call)
            record(self.ctx, "op", call.canonical, "", call.all_args() + list(call.kwargs.values()), result)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
            # malformed call (missing required arguments ...): torch would raise too; keep the port importable
            return self.stub(call.canonical.replace("Tensor.", "tensor ."), f"arguments porter cannot map "
                             f"({type(error).__name__}); check the call against torch's signature")
        result = with_kept_dtype(rule, call, result)
        if result.is_tensor:  # (set on every result: a rule may hand back its operand's Value, marked for it)
            result = result.but(varies_along=varying_after(call.canonical, is_pointwise(rule), call.all_args() + list(
                call.kwargs.values()), result))
            tensors = [v for v in call.all_args() + list(call.kwargs.values()) if v.is_tensor]
            if len(tensors) == 1 and tensors[0].unit_dims and keeps_rank(rule) and result.rank == tensors[0].rank \
                    and not result.unit_dims:  # (`softmax(w, dim=1)` of (B, M, C, 1, 1): its size-1 dims kept)
                result = result.but(unit_dims=tensors[0].unit_dims)
        return result

    def declarative_rule(self, rule, call):
        positional = call.all_args()
        params = rule.signature.params if rule.signature else ()
        kwargs = dict(call.kwargs)
        primary = positional[0] if positional else next(iter(kwargs.values()), None)
        primary_key = 0 if positional else (next(iter(kwargs)) if kwargs else None)
        if primary is None:
            return tensor(f"{self.ctx.use(rule.runtime)}()")
        if primary_key == 0 and _runs_as_held(rule.extra.get("runs_channels_last"), primary):
            return self.function_as_held(rule, positional, kwargs)
        layout = rule.layout
        axis_names = set(rule.axis_params)
        dim_at = list(params).index("dim") if "dim" in params else 1
        if rule.extra.get("implicit_dim_needs_source") and "dim" not in kwargs and len(positional) <= dim_at:
            layout = "source"
        if layout == "any" and primary.is_tensor and primary.layout.startswith("permuted:") and axis_names:
            from porter.ir.values import physical_order

            order = physical_order(primary)
            remapped = self.remap_axis_args(rule, positional, kwargs, primary.rank,
                                            mapper=lambda d, r: order.index(d % r))
            if remapped is None:
                layout = "source"
            else:
                positional, kwargs = remapped
        elif layout == "any" and primary.channels_last and axis_names:
            remapped = self.remap_axis_args(rule, positional, kwargs, primary.rank)
            if remapped is None:
                layout = "source"
            else:
                positional, kwargs = remapped
        if layout == "any":
            # index arguments (`index_select`'s `index`) are positions, not operands the image broadcasts with
            indices = _index_arguments(rule, positional, kwargs)
            positional = [self.as_plain(v) if ("#", i) in indices else v for i, v in enumerate(positional)]
            kwargs = {k: self.as_plain(v) if k in indices else v for k, v in kwargs.items()}
            operands = [v for i, v in enumerate(positional) if ("#", i) not in indices] + \
                [v for k, v in kwargs.items() if k not in indices]
            tensors = [v for v in operands if v.is_tensor]
            result_layout, result_rank = ("channels_last", primary.rank) if primary.channels_last else (
                primary.layout if primary.is_tensor else "source", primary.rank)
            if len(tensors) > 1:
                unified, out_layout, rank = unify(self.ctx, operands)
                converted = iter(unified)
                positional = [v if ("#", i) in indices else next(converted) for i, v in enumerate(positional)]
                kwargs = {k: v if k in indices else next(converted) for k, v in kwargs.items()}
                if out_layout == "channels_last" and not primary.channels_last or (
                        out_layout.startswith("permuted:") and out_layout != primary.layout):  # another operand led
                    result_layout, result_rank = out_layout, rank
        elif layout == "channels_last":
            # a value porter could not type (read from a dict) is a tensor in torch's layout to an image op
            operand = tensor(primary.code, rule.rank) if primary.kind == "python" else primary
            converted = to_layout(self.ctx, operand, "channels_last", rule.rank)
            if rule.extra.get("implicit_dim_needs_source"):
                pass
            kernel = self.kernel_argument(rule, params)
            if primary_key == 0:
                positional = [converted] + [kernel(v, i) for i, v in enumerate(positional[1:], 1)]
            else:
                kwargs[primary_key] = converted
            kwargs = {k: (v if k == primary_key else kernel(v, k)) for k, v in kwargs.items()}
            result_layout, result_rank = "channels_last", rule.rank if rule.rank is not None else primary.rank
            channels_out = channels_after_function(rule, primary)
        else:
            positional = [self.as_plain(v) for v in positional]
            kwargs = {k: self.as_plain(v) for k, v in kwargs.items()}
            result_layout, result_rank = "source", rule.rank if rule.rank is not None else None
            if rule.extra.get("same_rank"):
                result_rank = primary.rank
            if isinstance(rule.extra.get("rank_delta"), int) and primary.rank is not None:
                result_rank = primary.rank + rule.extra["rank_delta"]
        del params
        name = self.ctx.use(rule.runtime)
        code = f"{name}({self.join_args(positional, kwargs)})"
        if rule.outputs == "tuple" and rule.extra.get("result_pair"):  # (values, indices), held as the input is
            values = tensor(f"{code}[0]", result_rank, result_layout)
            return Value(code, "tuple", items=(values, values.with_code(f"{code}[1]").but(dtype="int")))
        if rule.outputs == "tuple":
            return Value(code, "tuple", items=None)
        if rule.outputs == "python":  # `.tolist()`: plain Python values
            return python(code)
        carried = primary.channels if result_layout == primary.layout and layout == "any" else None
        if layout == "channels_last":
            carried = channels_out
        return tensor(code, result_rank, result_layout).but(channels=carried)

    def function_as_held(self, rule, positional, kwargs):
        """A function that also computes on a channels-last tensor of rank > 2 as it lies (F.linear contracts torch's
        last dim where channels-last stores it), told so: its other arguments in torch's order, the result
        channels-last."""
        primary = positional[0]
        rest = [self.as_plain(v) for v in positional[1:]]
        kwargs = {**{k: self.as_plain(v) for k, v in kwargs.items()}, "layout": python('"channels_last"')}
        code = f"{self.ctx.use(rule.runtime)}({self.join_args([primary] + rest, kwargs)})"
        return tensor(code, primary.rank, "channels_last")

    def kernel_argument(self, rule, params):
        """(value, position or keyword) -> the argument as a channels-last rule's runtime takes it: torch's order,
        except the rule's `kernel_param` (a functional convolution's weight) when it is held as a Conv layer stores
        its kernel: handed over as stored, in the runtime's TorchKernel view (no Transpose)."""
        name = rule.extra.get("kernel_param")
        position = list(params).index(name) if name in params else None

        def argument(value, key):
            if name is not None and key in (name, position) and value.is_tensor and value.rank is not None and \
                    value.layout == kernel_layout(value.rank):
                return value.with_code(f"{self.ctx.use('TorchKernel')}({value.code})")
            return self.as_plain(value)

        return argument

    def remap_axis_args(self, rule, positional, kwargs, rank, mapper=remap_axis):
        """Remap literal axis arguments for a channels-last (or permuted) tensor; None when not literal."""
        remap_axis = mapper
        if rank is None:
            return None
        params = list(rule.signature.params)
        positional = list(positional)
        kwargs = dict(kwargs)
        for name in rule.axis_params:
            index = params.index(name) if name in params else None
            holder, key = (positional, index) if index is not None and index < len(positional) else (kwargs, name)
            if key not in (holder if isinstance(holder, dict) else range(len(holder))):
                default = rule.signature.defaults.get(name)
                if default in (None, "None"):
                    continue
                kwargs[name] = python(default, static=_literal(default))
                holder, key = kwargs, name
            value = holder[key]
            if isinstance(value.static, int) and not isinstance(value.static, bool):
                holder[key] = python(str(remap_axis(value.static, rank)), static=remap_axis(value.static, rank))
            elif isinstance(value.static, (tuple, list)) and all(isinstance(v, int) for v in value.static):
                axes = [remap_axis(v, rank) for v in value.static]
                holder[key] = python(repr(tuple(axes)) if isinstance(value.static, tuple) else repr(axes),
                                     static=tuple(axes))
            elif value.static is None and value.code == "None":
                continue
            else:
                return None
        return positional, kwargs

    # --- parameters, init, helpers -----------------------------------------------------------------------
    def parameter_call(self, node):
        args, kwargs = self.arg_values(node)
        if not args:
            return self.stub("nn.Parameter()", "a parameter without a value")
        value = self.as_plain(args[0])
        extra = ""
        if "requires_grad" in kwargs:
            extra = f", requires_grad={kwargs['requires_grad'].code}"
        if self.info is None:  # a module-level helper (`def embed_init(*shape): return nn.Parameter(...)`)
            return tensor(f"{self.ctx.use('new_parameter')}({value.code}{extra})", value.rank)
        return tensor(f"self.parameter({value.code}{extra})", value.rank).but(kind="tensor")

    def init_call(self, canonical, node):
        """A torch.nn.init function no rule covers (porter/rules/init_functions.py has those that are)."""
        message = self.ctx.unsupported(self.line, canonical, "no rule for this initialiser yet")
        return python(f"not_supported({message!r})")

    def method_call(self, method, node):
        args, kwargs = self.arg_values(node)
        if self.mode == "init":
            return self.init_method_call(method, node)
        signature = self.ctx_method_signature(method, args, kwargs)
        return self.translated_method_call(f"self.{method}", signature, args, kwargs)

    def translated_method_call(self, target, signature, args, kwargs):
        """The call of method `target` (code) translated as `signature` (None: while it is being translated): its
        arguments in the layouts it was translated for, what it returns as it returns it."""
        arg_values = signature.arg_values if signature is not None else ()
        converted = [self.to_value_layout(v, arg_values[i] if i < len(arg_values) else None)
                     for i, v in enumerate(args)]
        # a tensor handed by keyword (`self.channel_shuffle(data=x)`) takes the layout the method was translated for
        by_name = {w.code: w for w in arg_values}
        kw = {k: self.to_value_layout(v, by_name[k]) if k in by_name else self.as_plain(v) for k, v in kwargs.items()}
        needs_training = signature is not None and getattr(signature, "takes_training", False)
        extra = self.training_kwarg(kwargs) if needs_training else ""
        call = self.call_text(target, self.join_args(converted, kw), extra)
        output = signature.output if signature is not None and signature.output is not None else tensor("")
        return self.output_value(call, output)

    def features_as_wanted(self, value, wanted):
        """A dict of features handed to a call translated for `wanted` (a HeldTable: its values channels-last
        images, read by key as they lie; None: a dict in torch's layout)."""
        if wanted is None:
            return python(value.code)  # (a HeldTable's code gives every value in torch's layout)
        if isinstance(value.static, HeldTable) and value.static.item.layout == wanted.item.layout:
            return python(value.static.raw)
        return python(f"{self.ctx.use('each_image')}({self.ctx.use('to_channels_last')}, {value.code})")

    def child_method_call(self, base, method, node):
        """`self.cell.init_hidden(b, (h, w))`: a method of an in-file class's instance other than its forward, as
        that class's method was translated (what it returns: ConvLSTM's zero states, tensors in torch's order);
        None when the class has no such method."""
        info = self.source.classes.get(base.module.class_name)
        if info is None or method in ("forward", "__init__") or info.find_method(method) is None:
            return None
        args, kwargs = self.arg_values(node)
        signature = self.translator.method_signature(info, method, args, kwargs)
        if signature is None:
            return None
        return self.translated_method_call(f"{base.code}.{method}", signature, args, kwargs)

    def method_alias_call(self, attribute, methods, node):
        """`self.<attribute>(...)`, the attribute bound by `__init__` to one of `methods`: each method translated
        for the arguments as they are held; when they all take them as the same code and return alike, the call
        keeps those layouts (else None: a callable porter cannot see, converted at run time)."""
        if any(arg.star or not isinstance(arg.value, (cst.Name, cst.Attribute)) for arg in node.args):
            return None  # (arguments translated once per method: only plain names, which translate the same)
        results = [self.method_call(method, node) for method in methods]
        codes = {r.code.replace(f"self.{m}(", f"self.{attribute}(", 1) for r, m in zip(results, methods)}
        first = results[0]
        if len(codes) > 1 or any((r.kind, r.layout, r.rank) != (first.kind, first.layout, first.rank)
                                 for r in results):
            return None
        return first.but(code=codes.pop())

    def init_method_call(self, method, node):
        ref = self.module_ref_of(node)
        code = f"self.{method}({self.plain_args(node)})"
        if ref.kind != "unknown":
            return Value(code, "module", module=ref)
        return python(code)

    def function_call(self, name, node):
        args, kwargs = self.arg_values(node)
        signature = self.ctx_function_signature(name, args, kwargs)
        wanted = list(signature.arg_values) if signature is not None else []
        wanted_kw = getattr(signature, "kwarg_values", {}) if signature is not None else {}
        converted = [self.to_parameter_layout(v, wanted[i] if i < len(wanted) else None) for i, v in enumerate(args)]
        kw = {k: self.to_parameter_layout(v, wanted_kw.get(k)) for k, v in kwargs.items()}
        callee = signature.callee if signature is not None and signature.callee else name
        call = f"{callee}({self.join_args(converted, kw)})"
        output = signature.output if signature is not None else None
        if output is not None and (output.kind == "tuple" or output.is_tensor and output.layout != "raises"):
            return self.output_value(call, output)
        if output is not None and output.kind == "python" and (isinstance(output.static, bool) or re.search(
                r"\bis\b|\bisinstance\(|\bnot\b|\bin\b|[=!<>]=|[<>]", output.code)):
            return python(call)  # `exists(t)` (`return val is not None`): a Python truth value, not a tensor
        return tensor(call) if any(v.is_tensor for v in args) else python(call)


def _unstarred(args):
    """Call arguments with a starred literal list (`block(*[a, b])`) spelled out (`block(a, b)`)."""
    spelled = []
    for value in args:
        if value.kind == "starred" and value.items is not None and value.code[1:2] in ("[", "("):
            spelled.extend(value.items)
        else:
            spelled.append(value)
    return spelled


def _rebased_channels(output, code, handed):
    """What a class's call returns as its caller sees it: each image's channel count (an expression of the callee)
    rebased onto the instance `code` (`rebase`), the images of a returned list or tuple too; a count the caller
    cannot name (FPN's `[s(l) for s, l in zip(self.smooth, laterals)]`: `s.out_channels`) is dropped."""
    if output.is_tensor:
        return output.but(channels=rebase(output.channels, code, handed)) if output.channels else output
    if output.kind != "tuple":
        return output
    if output.items is not None:
        return output.but(items=tuple(_rebased_channels(item, code, handed) for item in output.items))
    if isinstance(output.static, tuple) and len(output.static) == 2 and output.static[0] == "each" and \
            isinstance(output.static[1], Value):
        return output.but(static=("each", _rebased_channels(output.static[1], code, handed)))
    return output


def _leading_by_position(params, args, kwargs):
    """(args, kwargs) with a layer's leading parameters `params` handed by keyword moved to their positions
    (`attn(query=x, key=x, value=x)` as `attn(x, x, x)`), as far as they run on from the positional ones."""
    args, kwargs = list(args), dict(kwargs)
    while len(args) < len(params) and params[len(args)] in kwargs and not any(a.kind == "starred" for a in args):
        args.append(kwargs.pop(params[len(args)]))
    return args, kwargs


def _runs_as_held(runs_channels_last, value):
    """Whether an op that also computes on channels-last tensors of rank > 2 as they lie (a rule's
    `runs_channels_last`) does so on `value`."""
    return bool(runs_channels_last) and value.is_tensor and value.channels_last and value.rank is not None


def _module_name(ref):
    """A short name of module `ref` for the op log: its class, its layer or its container."""
    if ref.kind == "class":
        return ref.class_name
    if ref.kind == "rule":
        return ref.rule.runtime
    return f"{ref.kind.capitalize()}({len(ref.elements)})"


def _keeps_rank(ref, rank):
    """Whether module `ref` hands back a tensor of the rank `rank` it takes, whichever of its alternatives runs
    (a non-local block's `g`: a Conv2d, or a Sequential of it and a MaxPool2d; layers of another rank, a Conv1d
    or Conv3d a `dimension` chose, cannot run on it)."""
    if rank is None:
        return False
    if ref.kind == "rule":
        return ref.rule.rank_delta == 0 and ref.rule.outputs == "tensor" and ref.rule.rank in (None, rank)
    if ref.kind == "sequential":
        return not ref.class_name and all(_keeps_rank(e, rank) for e in ref.elements)
    if ref.kind == "unknown" and ref.alternatives:
        fitting = [a for a in ref.alternatives if not (a.kind == "rule" and a.rule.rank not in (None, rank))]
        return bool(fitting) and all(_keeps_rank(a, rank) for a in fitting)
    return False


def _fully_known(ref):
    """True when every element of a container (recursively) is a rule, an in-file class or a known container."""
    if ref.kind == "unknown":  # one of several known modules: known when each of them is
        return bool(ref.alternatives) and all(_fully_known(a) for a in ref.alternatives)
    if ref.kind == "sequential" and ref.class_name:  # a subclass running its own forward (its children may be
        return True  # unknown: that forward calls them through call_module)
    return all(_fully_known(element) for element in ref.elements) if ref.kind in ("sequential", "list", "dict") \
        else True


# libraries whose calls stay as written (the generated module imports them or they are stdlib)
TRANSLATABLE_LIBRARIES = KEPT_STDLIB | {"numpy"}

# methods of Python's built-in types (and numbers): `xs.index(t)`, `x.conjugate()` stay as written on a value of
# unknown kind
PYTHON_BUILTIN_METHODS = frozenset(name for kind in (str, bytes, list, tuple, dict, set, frozenset, int, float, complex,
                                                     bool, range, slice) for name in dir(kind))

def _string_method_call(node):
    """`s.split("-")`, `s.replace("_", "")`: a method of str (some, like `split`, a Tensor's too) whose first argument
    is a string literal, which no Tensor method takes there: the receiver is a string."""
    first = node.args[0] if node.args else None
    return isinstance(node.func, cst.Attribute) and node.func.attr.value in STR_METHODS and first is not None and \
        first.keyword is None and not first.star and isinstance(first.value, (cst.SimpleString,
                                                                             cst.ConcatenatedString, cst.FormattedString))


STR_METHODS = frozenset(dir(str))

# list methods torch.Tensor does not have (`x.extend(...)` is a list's, even where porter typed `x` as a tensor)
LIST_ONLY_METHODS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "count", "reverse"})

TENSOR_ONLY_METHODS = {
    "view", "reshape", "permute", "transpose", "contiguous", "unsqueeze", "squeeze", "flatten", "size", "softmax",
    "masked_fill", "float", "long", "detach", "expand", "expand_as", "view_as", "repeat", "chunk", "split",
}


def _literal(text):
    try:
        import ast

        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _without_training(code):
    return code.replace(", training=training", "").replace("training=training", "")


def _same_state(first, second):
    """Whether two Values a Sequential's children may hand on are one state for the layout reasoning."""
    return (first.kind, first.rank, first.layout if first.is_tensor else None) == (
        second.kind, second.rank, second.layout if second.is_tensor else None)


def _flat_alternatives(ref):
    """The modules `ref` (one of several) may be, those that are one of several themselves spelt out."""
    flat = []
    for alternative in ref.alternatives:
        for module in _flat_alternatives(alternative) if alternative.kind == "unknown" and \
                alternative.alternatives else (alternative,):
            if module not in flat:
                flat.append(module)
    return tuple(flat)


def held_alike(results):
    """One Value for what a call gives when it is any one of `results` (the lambda run on one of a container's
    children): their state where they share it; an image held channels-last (of unknown rank) where each is one or
    a tuple of such images (a child returning `(x, None)`, another an image: the caller unpacks what it runs); item by
    item for tuples of one length; None where they disagree otherwise."""
    first = results[0]
    if all(_alike_state(r, first) for r in results[1:]) and not (first.kind == "tuple" and first.items is not None):
        lead = _images_lead(results, first)
        return lead if all(r.rank == lead.rank for r in results) else lead.but(rank=None)
    if all(r.kind == "tuple" and r.items is not None and len(r.items) == len(first.items) for r in results):
        items = [held_alike([r.items[i] for r in results]) for i in range(len(first.items))]
        return None if None in items else first.but(items=tuple(items))
    if all(held_channels_last(r) or r.kind == "python" for r in results) and \
            any(held_channels_last(r) for r in results):
        ranks = {r.rank for r in results if r.kind != "python"}  # (None where one is a tuple or of unknown rank)
        return tensor(first.code, ranks.pop() if len(ranks) == 1 else None, "channels_last")
    return None


def _images_lead(results, first):
    """The first of `results` that is an image held channels-last (what results alike by `_alike_state` are, a
    head's logits beside a stage's images), else `first`."""
    return next((r for r in results if r.is_tensor and r.channels_last), first)


def _alike_state(first, second):
    """_same_state, a rank one of them does not know matching any; a tensor of rank 2 or less matching an image
    held channels-last (its layout is torch's either way: pycls' `for module in self.children()`, the head's logits
    beside the stages' images)."""
    if first.is_tensor and second.is_tensor and any(
            a.rank is not None and a.rank <= 2 and b.channels_last for a, b in ((first, second), (second, first))):
        return True
    if first.is_tensor and second.is_tensor and None in (first.rank, second.rank):
        return first.layout == second.layout
    return _same_state(first, second)


def _converted_items(element, container):
    """Code of the items of `container` (code) each converted by `element` (code over `_each`): a tuple when the
    container is written as one (`(x2, x1) + tuple(extra)` adds a tuple to a tuple), a generator when it is one
    (`y.extend(m(y[-1]) for m in self.m)` reads each item appended before the next is made), else a list."""
    if container.startswith("*"):  # `[*segments, *rest]`'s `*rest`: its items converted, still spread
        return f"*{_converted_items(element, container[1:])}"
    comprehension = f"{element} for _each in {iterable_code(container)}"
    if _is_generator(container):
        return f"({comprehension})"
    return f"tuple({comprehension})" if container.startswith(("tuple(", "(")) else f"[{comprehension}]"


def _is_generator(code):
    """Whether expression `code` is a generator expression (evaluated lazily, item by item)."""
    try:
        return isinstance(ast.parse(code.strip(), mode="eval").body, ast.GeneratorExp)
    except SyntaxError:
        return False


def _literal(code):
    """Whether expression `code` is a Python literal (a number, a string, None ...)."""
    try:
        ast.literal_eval(code)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _layers_within(ref):
    """The elements of container `ref`, those of Sequentials inside it in their place (None where one is unknown)."""
    layers = []
    for element in ref.elements:
        if element.kind == "sequential":
            inner = _layers_within(element)
            if inner is None:
                return None
            layers.extend(inner)
        else:
            layers.append(element)
    return layers


def partial_applied(node, static):
    """Call `node` with the arguments a partial of a rule's function holds (static `("rule-function", canonical,
    held)`) put where `partial` puts them: positional ones first, keywords after the call's own."""
    if len(static) < 3:
        return node
    held = static[2]
    positional = [cst.Arg(cst.parse_expression(code)) for keyword, code in held if keyword is None]
    keywords = [cst.Arg(cst.parse_expression(code), keyword=cst.Name(keyword)) for keyword, code in held if keyword]
    own = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in node.args]
    overridden = {a.keyword.value for a in own if a.keyword is not None}
    return node.with_changes(args=[*positional, *own, *(a for a in keywords if a.keyword.value not in overridden)])


def _is_property(method):
    """Whether the method node `method` is decorated `@property` (read as an attribute, not called)."""
    return any(dotted_name(d.decorator) in ("property", "functools.cached_property", "cached_property")
               for d in method.decorators)


_READ_THROUGH = re.compile(r"[A-Za-z_][\w.]*(\[\d+\])*")  # `present`, `outputs[1]`, `self.cache`: read twice freely


def _unless_none(value, converted):
    """`converted` (tuple `value` with its items converted), left None where `value` may be None and is (HF GPT-2's
    `present`, None without `use_cache`, returned as `outputs[1]`)."""
    if not value.may_be_none or converted.code == value.code or not _READ_THROUGH.fullmatch(value.code):
        return converted
    return converted.but(code=f"(None if {value.code} is None else {converted.code})")


DICT_METHODS = frozenset({"keys", "values", "items"})


def own_attribute(code):
    """`name` for the code `self.name` of one of the class's own attributes, else None."""
    return code[5:] if code.startswith("self.") and code[5:].isidentifier() else None


def _rule_item(kind, input_rank, one_layer=False, layout="source"):
    """The Value of one item of a tuple-output layer's result, as its rule's `items` says; `one_layer`: a recurrent
    layer of one layer, one direction, whose states' first dim is 1 (Value.unit_dims); `layout`: the layer's (an
    "image" item is held so)."""
    if kind == "image":
        return tensor("", input_rank, layout)
    if kind == "tuple":
        return Value("", "tuple", items=None)
    if kind in ("state", "states"):
        state = tensor("", input_rank).but(unit_dims=(0,) if one_layer and input_rank is not None else None)
        return state if kind == "state" else Value("", "tuple", items=(state, state))
    return tensor("", input_rank if kind == "input" else None)


def _own_class(ref):
    """A Sequential subclass with a forward of its own (ref naming its class) runs that forward: called as its
    class (`ASPPPooling`: pool, conv, then resized back to its input's size; `forward(self, *features)`)."""
    return ModuleRef("class", class_name=ref.class_name) if ref.kind == "sequential" and ref.class_name else ref


def _index_arguments(rule, positional, kwargs):
    """The arguments of a call of `rule` that its `index_params` name: ("#", position) for positional ones, the
    keyword for the others."""
    names = rule.extra.get("index_params", ())
    if not names or rule.signature is None:
        return set()
    params = list(rule.signature.params)
    return {("#", params.index(n)) for n in names if n in params and params.index(n) < len(positional)} | \
        {n for n in names if n in kwargs}


def _argument_text(argument, value):
    """One argument of a call as written (`*xs`, `key=v`), with its translated value's code."""
    star = argument.star if isinstance(argument.star, str) else ""
    keyword = f"{argument.keyword.value}=" if argument.keyword is not None else ""
    return f"{star}{keyword}{value.code}"
