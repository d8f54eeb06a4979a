"""Expression translation: one libcst expression -> Keras code text plus what it is (a Value).

Tracks rank and layout of tensors so that ops run channels-last inside and axis arguments are remapped.
Calls go through the rule registry; anything porter cannot translate becomes a `not_supported(...)` stub that
raises NotImplementedError naming file:line, so the generated module stays importable.
"""

import re

import libcst as cst

from porter.frontend.gluon import BLOCK_BASES
from porter.frontend.imports import dotted_name, mentions_torch
from porter.frontend.names import names_in
from porter.frontend.source import is_covered_by_a_rule
from porter.frontend.static_branches import torch_dir_membership
from porter.frontend.torch_version import version_comparison
from porter.frontend.walk import descendants, walk
from porter.ir.containers import CONTAINERS, container_runtime
from porter.ir.layout import (
    OuterNamesHoister,
    element_template,
    index_in_layout,
    kernel_layout,
    layout_of_order,
    to_layout,
    unify,
)
from porter.ir.lists import (
    HeldTable,
    growing_table,
    held_beside_untyped,
    held_features,
    holds_images,
    images_alike,
    images_held,
    images_with_starred,
    table_item,
)
from porter.ir.lists import read as read_list
from porter.ir.values import (
    NONE_DEFAULT,
    UNKNOWN_MODULE,
    KeyedItems,
    LocalLambda,
    ModuleRef,
    NamePattern,
    Value,
    features_dim,
    is_permuted,
    may_be_images,
    physical_order,
    python,
    stub_value,
    tensor,
)
from porter.ir.varying import joined
from porter.passes.calls import TRANSLATABLE_LIBRARIES, CallTranslator
from porter.passes.conv_subclasses import conv_subclass_rank
from porter.passes.kernel_buffers import kernel_buffers
from porter.passes.lambda_signatures import written_lambda
from porter.passes.modules import NAMES_OF_PATTERN, attribute_set_by_pattern
from porter.rules.constants import TORCH_BASE_CLASSES, TORCH_CONSTANTS
from porter.rules.context import RuleContext
from porter.rules.dtype_properties import DTYPE_PROPERTIES, constant_dtype_property, dtype_property_value
from porter.rules.tensor_ops import einsum_matmul, held_for_einsum

_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")

# the tensors a module holds that model code reads `.data` of (`m.weight.data`)
WEIGHT_NAMES = frozenset({"weight", "bias", "running_mean", "running_var", "weight_v", "weight_g", "in_proj_weight",
                          "in_proj_bias"})

BINARY_OPERATORS = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.BitAnd: "&", cst.BitOr: "|",
    cst.BitXor: "^", cst.LeftShift: "<<", cst.RightShift: ">>",
}
COMPARISONS = {
    cst.LessThan: "<", cst.GreaterThan: ">", cst.LessThanEqual: "<=", cst.GreaterThanEqual: ">=",
    cst.Equal: "==", cst.NotEqual: "!=", cst.Is: "is", cst.IsNot: "is not", cst.In: "in", cst.NotIn: "not in",
}
UNARY = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not "}
TRUE_DIVISION = re.compile(r"(?<!/)/(?!/)")  # `/`, not `//`
# integer arithmetic whose operands' widths torch promotes: the TensorFlow op each runs as
INT_ARITHMETIC = {"+": "tf.add", "-": "tf.subtract", "*": "tf.multiply", "//": "tf.math.floordiv",
                  "%": "tf.math.floormod"}

# a string or number literal written as one token (`"relu"`, `1e-5`): an atom, never parenthesised
_LITERAL_ATOM = re.compile(r"""[rRbBuU]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|\d[\w.]*(?:[eE][+-]?\d+)?""")


# the limits `torch.finfo(dtype)` / `torch.iinfo(dtype)` hold: Python numbers (rules/type_info.py)
TYPE_INFO_LIMITS = frozenset({"min", "max", "eps", "tiny", "resolution", "smallest_normal"})


def integer_value(text):
    """The value of an integer literal's text: int() with its base read from the prefix (`0x1F`, `1_000`); a
    decimal of leading zeros (`00`, which int(.., 0) refuses) is zero. libcst's evaluated_value compiles the text
    (ast.literal_eval): a tenth of translating a file of many layers."""
    try:
        return int(text, 0)
    except ValueError:
        return 0


def plain_string_value(text):
    """The value of a plain string literal's text (no prefix, backslash or carriage return): its quotes taken off;
    None for any other (libcst's evaluated_value compiles the text)."""
    if text[0] not in "'\"" or "\\" in text or "\r" in text:
        return None
    quotes = 3 if text[:3] in ('"""', "'''") and len(text) >= 6 else 1
    return text[quotes:-quotes]


_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary)


def _plain_literal(node):
    """Whether `node` is a literal (a string, a number, None, True or False): nothing to translate in it."""
    return isinstance(node, _LITERALS) or isinstance(node, cst.Name) and node.value in ("None", "True", "False")


class ExpressionTranslator(CallTranslator):
    """Translate expressions of one function body. Subclassed by the statement translator."""

    def __init__(self, ctx, info, mode, env):
        self.ctx, self.info, self.mode, self.env = ctx, info, mode, env
        self.source = ctx.source
        self.line = info.line if info is not None else 1
        self.rule_context = RuleContext(self)  # what rules see of this translator

    # --- helpers -----------------------------------------------------------------------------------------
    def code(self, node):
        return self.source.code_of(node)

    def stub(self, construct, reason, line=None):
        message = self.ctx.unsupported(line or self.line, construct, reason)
        return stub_value(f"not_supported({message!r})")

    def keras_attr(self, name):
        """Keras attribute name for torch attribute `name` (renamed when it clashes with keras.Model)."""
        ir = self.ctx.ir
        for keras_name, torch_name in (ir.renamed.items() if ir else []):
            if torch_name == name:
                return keras_name
        return name

    # --- dispatch ----------------------------------------------------------------------------------------
    def expr(self, node):
        handler = getattr(self, f"_expr_{type(node).__name__}", None)
        if handler is None:
            return python(self.code(node))
        value = handler(node)
        if getattr(node, "lpar", None) and "\n" in value.code and not value.code.startswith("("):
            value = value.with_code(f"({value.code})")  # the source's parentheses hold its line breaks together
        return value

    def _expr_Name(self, node):
        name = node.value
        if name in self.env:
            value = self.env[name]
            if isinstance(value, Value) and isinstance(value.static, HeldTable):
                return value  # (its code gives its values in torch's layout; `features["out"]` reads it as it lies)
            return read_list(value.with_code(name)) if isinstance(value, Value) else python(name)
        if name in ("True", "False", "None"):
            return python(name, static={"True": True, "False": False, "None": None}[name])
        if name in self.ctx.module_values:  # a module-level tensor the model uses (passes/module_code.py)
            return self.ctx.module_values[name]
        canonical = self.source.imports.resolve(node)
        if canonical is not None and canonical != name and not canonical.startswith("Tensor.") and (
                canonical in self.ctx.function_rules or canonical in TORCH_CONSTANTS or canonical in BLOCK_BASES or
                canonical in self.ctx.module_rules or self.source.imports.is_torch(canonical)):
            # `from torch import is_tensor` / `from torch.nn import Linear` used as a value (`partial(Linear, ...)`)
            return self.canonical_attribute(canonical, node)
        if canonical is not None and self.is_third_party(canonical):
            # a third-party class or function used as a value (`module_cls = SEModule` of a package file the linker
            # did not reach): its import is not carried over, so the port gets a stub that raises when called
            return self.third_party_value(canonical)
        return python(name)

    def _expr_Integer(self, node):
        return python(node.value, static=integer_value(node.value))

    def _expr_Float(self, node):
        return python(node.value, static=float(node.value))  # float() reads every float literal (`1_0.5e-3`)

    def _expr_Imaginary(self, node):
        return python(node.value, static=complex(node.value)).but(dtype="complex")

    def _expr_SimpleString(self, node):
        plain = plain_string_value(node.value)
        return python(node.value, static=node.evaluated_value if plain is None else plain)

    def _expr_Ellipsis(self, node):
        return python("...", static=Ellipsis)

    def _expr_Attribute(self, node):
        owner = node.value
        attr = node.attr.value
        if dotted_name(owner) == "self":
            return self.self_attribute(attr)
        if attr == "saved_tensors" and dotted_name(owner) == getattr(self, "autograd_ctx", None):
            # a custom autograd Function's ctx: what forward saved are tensors in torch's layout
            return Value(self.code(node), "tuple", items=None, static=("each", tensor("")))
        canonical = self.source.imports.resolve(node)
        if canonical is not None:
            return self.canonical_attribute(canonical, node)
        base = self.expr(owner)
        if base.is_tensor:
            return self.tensor_attribute(base, attr, node)
        if base.kind == "module":
            return self.module_attribute(base, attr)
        if base.kind == "tuple" and attr in ("values", "indices") and base.items is not None and \
                len(base.items) == 2 and all(i.is_tensor for i in base.items):  # `y.max(2).values`, `.topk(k).indices`:
            item = base.items[0 if attr == "values" else 1]  # the item as the op holds it
            return item.with_code(f"{base.code}.{attr}")
        if isinstance(owner, cst.Attribute) and owner.attr.value == "device" and base.code == "None" and \
                attr in ("type", "index"):  # `v.device.type != 'meta'` (efficientvit's autocast guard): the host
            return python('"cpu"', static="cpu") if attr == "type" else python("None")  # (Keras places the op)
        if base.kind == "python" and base.dtype in ("finfo", "iinfo") and attr in TYPE_INFO_LIMITS:
            return python(f"{base.code}.{attr}").but(dtype="float" if base.dtype == "finfo" else "int")
        if base.kind == "python" and attr in DTYPE_PROPERTIES:  # `dtype.is_floating_point`: a dtype's property
            return dtype_property_value(self.rule_context, base.code, attr)  # (a TensorFlow DType names it otherwise)
        if attr == "data" and base.kind == "python" and base.static is None and isinstance(owner, cst.Attribute) and \
                owner.attr.value in WEIGHT_NAMES:
            # `m.weight.data` of a module porter cannot type (DCGAN's `weights_init(m)`): the tensor itself (a
            # Keras variable has no `.data`)
            return tensor(base.code)
        return python(f"{base.code}.{attr}")

    def canonical_attribute(self, canonical, node):
        if canonical in TORCH_CONSTANTS:
            return python(TORCH_CONSTANTS[canonical])
        fact = constant_dtype_property(canonical)  # `torch.float16.itemsize`: decided here
        if fact is not None:
            return python(repr(fact), static=fact)
        if canonical == "torch.Tensor":  # the class as a value (`TypeVar("NT", np.ndarray, torch.Tensor)`, MONAI)
            return python("tf.Tensor")  # (isinstance's operand is TensorClasses: calls.py)
        if canonical in self.ctx.module_rules:  # a class used as a value: isinstance(m, nn.Conv2d)
            return python(self.ctx.use(self.ctx.module_rules[canonical].runtime))
        if canonical in TORCH_BASE_CLASSES:  # `nn.modules.batchnorm._BatchNorm`: the ported layers deriving from it
            runtimes = dict.fromkeys(self.ctx.use(self.ctx.module_rules[name].runtime)
                                     for name in TORCH_BASE_CLASSES[canonical] if name in self.ctx.module_rules)
            return python(f"({', '.join(runtimes)},)" if runtimes else self.ctx.use("NotTranslatedBase"))
        rule = self.ctx.function_rules.get(canonical)
        if rule is not None and not canonical.startswith("Tensor."):  # `act = F.Activation`, called later
            runtime = rule.runtime or rule.extra.get("value_runtime")  # (`partial(torch.var, unbiased=False)`
            # handed to einops' reduce: the runtime function with torch's signature; `torch.sin`: a lambda)
            code = self.ctx.use(runtime) if runtime else rule.extra["value_code"] if "value_code" in rule.extra \
                else self.code(node) if canonical.rsplit(".", 1)[-1][:1].isupper() \
                else self.raising_stub(canonical, "a torch function used as a value: porter translates its calls; "
                                                  "call it where it is used (a lambda)").code
            # (a class such as `Tensor` in `List[Tensor]` stays a name)
            return python(code, static=("rule-function", canonical))
        if canonical in CONTAINERS:
            return python(self.ctx.use(container_runtime(canonical)))
        if canonical in ("torch.nn.Module",):
            return python(self.ctx.use("TorchModule"))
        if canonical == "copy.deepcopy":  # `c = copy.deepcopy`, then `c(attn)` (the Annotated Transformer): a layer
            return python(self.ctx.use("clone_layer"))  # cloned as torch copies a module, the rest deep-copied
        if canonical in BLOCK_BASES:  # `isinstance(act, gluon.Block)`: any layer of the port
            return python(self.ctx.use("AnyLayer"))
        if canonical in ("mxnet.ndarray.zeros", "mxnet.ndarray.ones"):  # `begin_state(func=mx.nd.zeros)`: named
            return python(repr(canonical.rsplit(".", 1)[1]))
        if canonical.split(".")[0] in ("torch", "mxnet") and canonical.rsplit(".", 1)[-1][:1].isupper():
            # a framework class porter has no port of, as a value (`isinstance(params, gluon.ParameterDict)`): a
            # class no object of the port is an instance of, which raises when built
            return python(self.ctx.use("NotTranslatedBase"))
        if canonical.startswith("torch"):
            return python(self.ctx.use("not_supported") and repr(canonical))
        if self.is_third_party(canonical):
            return self.third_party_value(canonical)  # `load_fn=jnp.load`, jax imported inside the function
        return python(self.code(node))

    def is_third_party(self, canonical):
        """Whether an imported name is a library's that the port does not import (nor does a rule translate it)."""
        return canonical.split(".")[0] not in TRANSLATABLE_LIBRARIES | {"torch", "mxnet"} and \
            canonical not in self.ctx.module_rules and canonical not in self.ctx.function_rules

    def third_party_value(self, canonical):
        """A stub standing for a third-party class or function used as a value: it raises when called."""
        return self.raising_stub(canonical, "third-party code porter does not translate; port it by hand or replace "
                                            "it with torch ops")

    def raising_stub(self, construct, reason):
        """A callable standing for `construct` (listed unsupported with `reason`): it raises when called."""
        message = self.ctx.unsupported(self.line, construct, reason)
        return python(f"(lambda *args, **kwargs: {self.ctx.use('not_supported')}({message!r}))")

    def self_attribute(self, attr):
        if attr == "training":
            # a module's call reads its mode from Keras's `training` argument; `self` of a module-level function
            # (x-transformers' `eval_decorator`'s `inner(self, ...)`) is any module: its mode flag
            return python("training" if self.info is not None else "self.training")
        ir = self.ctx.ir
        kind = ir.attributes.get(attr) if ir else None
        if kind is None and ir is not None and ir.attributes.get("#setattr") is not None and not (
                self.info is not None and self.info.find_method(attr) is not None):
            kind = ir.attributes["#setattr"]  # an attribute only `setattr(self, name, ...)` sets
        if kind is None and self.info is not None and any(attr in _registered_tensors(info.node)
                                                          for info in _lineage(self.info)):
            kind = "buffer"  # registered by a helper method __init__ calls, not translated yet
        if kind is None and ir is not None:
            kind = attribute_set_by_pattern(ir, attr)  # (`self.stage2` of `add_module("stage%d" % i, ...)`)
        names = ir.attributes.get(NAMES_OF_PATTERN + attr) if ir is not None else None
        if names is not None:  # `self.stage_names`, names `add_module` registered modules under
            return python(f"self.{self.keras_attr(attr)}", static=NamePattern(names, many=True))
        if attr == "_modules" and kind is None:  # torch's name -> child dict: a loop binds any one of them
            return Value("self._modules", "module", module=ModuleRef("dict", elements=self.own_children(),
                                                                     ordered=False))
        keras_name = self.keras_attr(attr)
        conv_rank = conv_subclass_rank(self.source, self.info) if attr == "weight" and kind is None else None
        if conv_rank is not None:
            # a torch Conv subclass's forward reads its kernel, which the runtime keeps channels-last (k..., I/g,
            # O): a tensor in that layout (reductions and arithmetic on it stay there; a functional convolution
            # takes it as stored, through TorchKernel; any other op converts it to torch's order)
            return tensor("self.weight", conv_rank + 2, kernel_layout(conv_rank + 2))
        items = ir.attributes.get(f"{attr}#items") if ir is not None and kind not in ("parameter", "buffer") else None
        if items is not None and not (isinstance(kind, ModuleRef) and any(e.kind != "unknown" for e in kind.elements)):
            # a list of tensors (YOLO's `self.grid[i]`: a tensor in torch's order), not of modules
            return Value(f"self.{keras_name}", "tuple", items=None, static=("each", items))
        if isinstance(kind, ModuleRef):
            return Value(f"self.{keras_name}", "module", module=kind)
        kernel_rank = kernel_buffers(self.source, self.info).get(attr) if kind == "buffer" and self.info else None
        if kernel_rank is not None:
            # a filter read only as a functional convolution's weight (BlurPool's `self.filt`): stored as a Conv
            # layer stores its kernel (k..., I/g, O), which the convolution takes as it lies (kernel_buffers.py)
            return tensor(f"self.{keras_name}", kernel_rank, kernel_layout(kernel_rank))
        if kind in ("parameter", "buffer"):
            rank = ir.attributes.get(f"{attr}#rank")
            return tensor(f"self.{keras_name}", rank)
        function = ir.attributes.get(f"{attr}#function") if ir is not None and kind == "value" else None
        return python(f"self.{keras_name}", static=function)

    def own_children(self):
        """The modules `self.children()` / `self._modules` hold, as far as porter knows them: a container subclass's
        children, else the module attributes the constructor sets; an unknown one among them when some may be
        missing (set by `setattr` or handed to a Sequential base porter could not follow)."""
        ir = self.ctx.ir
        if ir is None or self.info is None:
            return (UNKNOWN_MODULE,)
        if self.info.container_base:
            children = ir.attributes.get("#children")
            return children.elements if children is not None else (UNKNOWN_MODULE,)  # (none: a known-empty one)
        refs = tuple(ref for name, ref in ir.attributes.items() if not name.startswith("#") and
                     isinstance(ref, ModuleRef) and ref.kind != "classobj")
        added = ir.attributes.get("#children")  # those `self.add_module(name, block)` adds
        refs = tuple(dict.fromkeys(refs + (added.elements if added is not None else ())))
        return refs + ((UNKNOWN_MODULE,) if ir.attributes.get("#setattr") is not None or not refs else ())

    def tensor_attribute(self, base, attr, node):
        if attr in ("shape",):
            return Value(base.code, "size", base.rank, base.layout)
        if attr == "size" and self.source.framework == "mxnet":  # an NDArray's element count (torch: a method)
            return python(f"math.prod({self.ctx.use('torch_size')}({base.code}))")
        if attr == "T":
            source = to_layout(self.ctx, base, "source")
            return tensor(f"tf.transpose({source.code})", source.rank)
        if attr in ("data",):
            return base
        if attr == "dtype":
            return python(f"{base.code}.dtype")
        if attr == "device":
            return python("None")
        if attr == "ndim":
            return python(f"len({base.code}.shape)", static=base.rank)
        if attr == "is_cuda":
            return python("False", static=False)
        if attr == "requires_grad":  # no tensor carries the flag in TensorFlow (a GradientTape watches what it is
            # told): the branch models test it for picks gradient checkpointing or not (`if self.use_checkpoint and
            # x.requires_grad: checkpoint(self.body, x)`), which compute the same
            return python("False", static=False)
        if attr in ("real", "imag"):  # a complex tensor's parts (an FFT's: FNet), elementwise where it lies
            return base.but(code=f"tf.math.{attr}({base.code})", dtype=None, static=None)
        if attr == "mT":
            source = to_layout(self.ctx, base, "source")
            return tensor(f"tf.linalg.matrix_transpose({source.code})", source.rank)
        return python(f"{base.code}.{attr}")

    def module_attribute(self, base, attr):
        ref = base.module
        if attr in ("weight", "bias", "in_proj_weight", "in_proj_bias") or attr.startswith(("weight_", "bias_")):
            return tensor(f"{base.code}.{attr}")
        named = None
        if ref is not None and ref.kind in ("list", "sequential", "dict") and base.code.startswith("self."):
            # the init scan keeps a container's `add_module`-named children as `path.pad` attributes
            attributes = self.ctx.ir.attributes if self.ctx.ir is not None else {}
            renamed = self.ctx.ir.renamed if self.ctx.ir is not None else {}
            holder = ".".join(renamed.get(part, part) for part in base.code[5:].split("."))  # torch's names
            named = getattr(self, "module_env", {}).get(f"self.{holder}.{attr}") or attributes.get(f"{holder}.{attr}")
        if isinstance(named, ModuleRef):  # a container's child `add_module` named (`self.path.pad`)
            return Value(f"{base.code}.{attr}", "module", module=named)
        if attr == "_modules" and ref is not None and ref.kind in ("list", "sequential", "dict"):
            # a container's name -> child dict (`self.blocks._modules.values()`): its children
            return Value(f"{base.code}._modules", "module", module=ModuleRef("dict", elements=ref.elements,
                                                                             ordered=ref.ordered, lead=ref.lead))
        if ref is not None and ref.kind == "class":
            inner_ir = self.ctx.irs.get(ref.class_name)
            if inner_ir is not None and isinstance(inner_ir.attributes.get(attr), ModuleRef):
                return Value(f"{base.code}.{attr}", "module", module=inner_ir.attributes[attr])
        return python(f"{base.code}.{attr}")

    def _expr_Tuple(self, node):
        items = tuple(self.element(e) for e in node.elements)
        code = ", ".join(i.code for i in items)
        code = f"({code},)" if len(items) == 1 else f"({code})"
        items = _spread(items)
        statics = tuple(i.static for i in items)
        static = statics if all(s is not None for s in statics) else None
        if any(i.is_tensor or i.kind == "tuple" for i in items):
            return Value(code, "tuple", items=items)
        if any(i.kind == "module" for i in items):  # `for stage in (self.stage1, self.stage2):` as over a list
            return Value(code, "module", module=ModuleRef("list", elements=tuple(
                i.module or UNKNOWN_MODULE for i in items)))
        if any(i.spatial_size or i.channel_count for i in items):  # `n_h, n_w = h // p, w // p`: unpacked,
            return python(code, static=static).but(items=items)  # each name is a spatial size still
        return python(code, static=static)

    def _expr_List(self, node):
        raw = [self.element(e) for e in node.elements]
        held = images_with_starred(raw)
        if held is not None:  # `[*x]`, `[x2, *children]` of channels-last images: a list of them, unknown length
            return Value("[" + ", ".join(i.code for i in raw) + "]", "tuple", items=None, static=("each", held))
        items = list(_spread(raw))
        if any(i.is_tensor and i.layout != "source" for i in items) and self.list_is_stored(node) and not (
                all(i.is_tensor and i.layout == "channels_last" for i in items) and
                len({i.rank for i in items} - {None}) <= 1):  # (a block's image of unknown rank beside a pool's)
            items = raw = [self.as_plain(i) for i in items]  # mixed layouts in a list that may grow: torch's order
        ranks = {i.rank for i in items if i.is_tensor and i.layout == "channels_last"} - {None}
        if len(ranks) == 1 and all(i.is_tensor and i.layout == "channels_last" for i in items):
            rank = ranks.pop()
            items = [i.but(rank=rank) if i.rank is None else i for i in items]  # images alike: one rank
        statics = [i.static for i in items]
        static = list(statics) if all(s is not None for s in statics) else None
        value = python("[" + ", ".join(i.code for i in raw) + "]", static=static)
        if any(i.is_tensor or i.kind == "tuple" for i in items):  # (a list of lists: `x = [x]` of a list handed)
            return Value(value.code, "tuple", items=tuple(items))
        if any(i.kind == "module" for i in items):
            return Value(value.code, "module", module=ModuleRef("list", elements=tuple(
                i.module or UNKNOWN_MODULE for i in items)))
        return value

    def list_is_stored(self, node):
        """True when a list literal is bound to a variable (mutable: later appends must agree on layout)."""
        return getattr(self, "storing_list", False)

    def element(self, element):
        value = self.expr(element.value)
        if value.kind == "size":  # `(x.shape, p)`: the sizes as torch reports them
            value = self.materialize_size(value)
        if isinstance(element, cst.StarredElement):
            return value.with_code("*" + value.code)
        return value

    def _expr_Dict(self, node):
        translated = [isinstance(e, cst.DictElement) and (self.names_layer_class(e.value) or mentions_torch(
            e.value, self.source.imports) or not _plain_literal(e.value)) for e in node.elements]
        if not any(translated):
            return python(self.code(node))
        # a table of layer classes (`{"lstm": rnn.LSTM, "gru": rnn.GRU}[mode]`), of torch values
        # (`{"scale": torch.tensor([1.0])}`) or of what the model computes (`{"out": self.cls(x)}`, a segmentation
        # model's outputs): each value names its port, tensors in torch's order (what reads the dict sees torch's)
        values = [self.expr(e.value) if translate else None for e, translate in zip(node.elements, translated)]
        item = images_alike(values) if all(translated) else None
        if item is not None:  # a dict of channels-last images (a backbone's stages): held as it lies, read by key
            # so, every value in torch's layout for any other reader
            return held_features(self.ctx, item, "{" + ", ".join(
                f"{self.code(e.key)}: {v.code}" for e, v in zip(node.elements, values)) + "}")
        parts, keyed = [], []
        for element, translate, value in zip(node.elements, translated, values):
            if not isinstance(element, cst.DictElement):
                parts.append(self.code(element))
                keyed = None
                continue
            value = self.as_plain(value) if translate else python(self.code(element.value))
            parts.append(f"{self.code(element.key)}: {value.code}")
            if keyed is not None and isinstance(element.key, cst.SimpleString):
                keyed.append((element.key.evaluated_value, value))
            else:
                keyed = None
        static = KeyedItems(tuple(keyed)) if keyed and any(v.is_tensor for _, v in keyed) else None
        return python("{" + ", ".join(parts) + "}", static=static)

    def names_layer_class(self, node):
        """Whether `node` is a reference to a layer or container class porter maps (`nn.LSTM`, not a call)."""
        if not isinstance(node, (cst.Attribute, cst.Name)):
            return False
        canonical = self.source.imports.resolve(node)
        return canonical is not None and (canonical in self.ctx.module_rules or canonical in CONTAINERS)

    def _expr_ListComp(self, node):
        return self.comprehension(node, "[", "]")

    def _expr_GeneratorExp(self, node):
        return self.comprehension(node, "(", ")")

    def _expr_DictComp(self, node):
        """{k: f(x) for x in xs}: as a list comprehension, its values' tensors in torch's order (as a dict literal's:
        what reads the dict sees torch's), `nn.ModuleDict({t: nn.Conv2d(...) for t in tasks})`'s layers ported."""
        return self.comprehension(node, "{", "}", key=node.key)

    def comprehension(self, node, open_, close, key=None):
        """[f(x) for x in xs]: the element translated with the loop variable bound (layouts forced to torch's); a
        dict comprehension's `key: value` where `key` is given."""
        clauses, env_backup = [], dict(self.env)
        pairs_wanted, self.keyed_pairs, held = getattr(self, "keyed_pairs", False), False, None  # (feature_dicts.py)
        for_in = node.for_in
        iterable = self.expr(for_in.iter)  # (the first iterable is read outside the comprehension's scope)
        # conversions of the comprehension's own names stay inside it; an outer name's (`cat([op(x) for op in
        # self.paths], 1)`: the image converted once, not once a turn) is hoisted before the statement
        hoister = getattr(self.ctx, "hoister", None)
        self.ctx.hoister = OuterNamesHoister(hoister, _comprehension_names(node)) if hoister is not None else None
        try:
            while for_in is not None:
                self.bind_loop_target(for_in.target, iterable)
                ifs = "".join(f" if {self.expr(test.test).code}" for test in for_in.ifs)
                clauses.append(f"for {self.code(for_in.target)} in {self.iterable_code(iterable)}{ifs}")
                for_in = for_in.inner_for_in
                iterable = self.expr(for_in.iter) if for_in is not None else None
            element = self.expr(node.elt if key is None else node.value)
            if key is not None:
                key_code = self.expr(key).code
                held = images_alike([element])  # (`{k: v for k, v in zip(names, feats)}` of channels-last images:
                element = self.as_plain(element) if held is None else element  # the dict is held as it lies)
                element = element.with_code(f"{key_code}: {element.code}")
            elif element.is_tensor and not holds_images(element) and not (is_permuted(element) and element.rank):
                # (images stay channels-last and permuted heads stay permuted, `[t.view(b, n, h, -1).transpose(1,
                # 2) for t in qkv]`: the list's template says so, and its readers take them as stored)
                element = to_layout(self.ctx, element, "source")
            elif element.kind == "tuple" and element.items and any(
                    i.is_tensor and i.layout != "source" for i in element.items):
                # `[(k, m(v)) for ...]` (an FPN's `OrderedDict` of its outputs): a tuple's tensors in torch's order,
                # as the list of tuples (untyped) is read; a dict built of them at once holds its images as they lie
                held = images_alike(element.items[1:]) if pairs_wanted and len(element.items) == 2 and \
                    not element.items[0].is_tensor else None
                element = self.as_plain(element) if held is None else element
        finally:
            self.ctx.hoister = hoister
        self.env.clear()
        self.env.update(env_backup)
        code = f"{open_}{element.code} {' '.join(clauses)}{close}"
        if held is not None:
            return held_features(self.ctx, held, code) if key is not None else \
                Value(code, "tuple", items=None, static=("pairs", held))
        if key is not None and element.kind != "module":
            return python(code)
        if element.is_tensor:
            return Value(code, "tuple", items=None, static=("each", element.with_code("")))
        if element.kind == "module":
            return Value(code, "module", module=ModuleRef("list", elements=(element.module,), ordered=False))
        return python(code)

    def _expr_Lambda(self, node):
        """`lambda t: body`: the body translated with the parameters bound to values of unknown kind (a tensor
        result in torch's layout); a lambda with defaults or star parameters is kept as written."""
        params = node.params
        if isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.kwonly_params or params.posonly_params \
                or isinstance(params.star_kwarg, cst.Param) or any(p.default is not None for p in params.params):
            return python(self.code(node))
        signature = self.ctx.lambda_signatures.get(id(node)) if self.mode == "init" else None
        if signature is not None:  # a lambda the class it is handed to calls on images (lambda_signatures.py)
            return python(written_lambda(self, node, signature))
        names = [p.name.value for p in params.params]
        env_backup, hoister = dict(self.env), getattr(self.ctx, "hoister", None)
        self.env.update({name: python(name) for name in names})
        # (a conversion of a parameter stays in the lambda; an outer name's goes before the statement)
        self.ctx.hoister = OuterNamesHoister(hoister, set(names)) if hoister is not None else None
        try:
            body = self.expr(node.body)
        finally:
            self.ctx.hoister = hoister
            self.env.clear()
            self.env.update(env_backup)
        body = to_layout(self.ctx, body, "source") if body.is_tensor else body
        return python(f"lambda {', '.join(names)}: {body.code}" if names else f"lambda: {body.code}").but(
            static=LocalLambda(node))

    def _expr_IfExp(self, node):
        test = self.expr(node.test)
        if test.static is True or test.static is False:
            return self.expr(node.body if test.static else node.orelse)  # decided statically
        body, orelse = self.expr(node.body), self.expr(node.orelse)
        if test.is_tensor:
            (body, orelse), layout, rank = unify(self.ctx, [body, orelse])
            return tensor(f"tf.where({test.code}, {body.code}, {orelse.code})", rank, layout)
        if body.is_tensor and orelse.is_tensor and body.layout != orelse.layout and {body.layout, orelse.layout} == {
                "source", "channels_last"} and body.rank == orelse.rank and body.rank is not None and body.rank > 2:
            # (`x if i == 0 else feats[i - 1]`: the input in torch's layout, an image a block stored channels-last)
            body, orelse = (to_layout(self.ctx, v, "channels_last", v.rank) for v in (body, orelse))
        elif body.is_tensor and orelse.is_tensor and body.layout != orelse.layout:
            body, orelse = to_layout(self.ctx, body, "source"), to_layout(self.ctx, orelse, "source")
        elif _structures_differ(body, orelse):
            # `x if self.training else (torch.cat(z, 1), x)` (YOLOv5's Detect): a list on one side, a tuple of
            # other items on the other; each in torch's layout, the result untyped (its callers cannot tell which)
            body, orelse = self.as_plain(body), self.as_plain(orelse)
            return python(f"({self.wrap(body.code)} if {test.code} else {self.wrap(orelse.code)})")
        elif body.kind == "tuple" and orelse.kind == "tuple" and not _lists_alike(body, orelse):
            # `output if output else input`: two lists whose images are held differently, both in torch's order
            body, orelse = self.as_plain(body), self.as_plain(orelse)
            return Value(f"{body.code} if {test.code} else {orelse.code}", "tuple", items=None)
        elif _dict_display(body) != _dict_display(orelse) and body.kind in ("tensor", "tuple", "python") and \
                orelse.kind in ("tensor", "tuple", "python") and "tuple" in (body.kind, orelse.kind):
            # `{"feats": feats} if output_dict else feats` (timm's forward_intermediates): a dict on one side, a
            # list of images on the other; each in torch's layout, so whichever is taken leaves as the source
            # returns it (a list or an image, `output if output else input`, keeps its layouts as it did)
            body, orelse = self.as_plain(body), self.as_plain(orelse)
            return python(f"({self.wrap(body.code)} if {test.code} else {self.wrap(orelse.code)})")
        held = held_beside_untyped(body, orelse)
        if held is not None:  # `self.stem(x) if i == 0 else feats[i - 1]`, a table porter could not type: its
            # value is in torch's layout, so the image goes there too
            plain = to_layout(self.ctx, held, "source") if held.is_tensor else self.as_plain(held)
            body, orelse = (plain, orelse) if held is body else (body, plain)
        # parentheses the source put around a part stay (`(lambda c: GroupNorm(2, c)) if gn else BatchNorm2d`:
        # without them the lambda takes the whole conditional as its body)
        parts = [f"({v.code})" if n.lpar and not v.code.startswith("(") else v.code
                 for n, v in ((node.body, body), (node.test, test), (node.orelse, orelse))]
        code = f"{parts[0]} if {parts[1]} else {parts[2]}"
        if {body.kind, orelse.kind} == {"module", "python"} and "None" not in (body.code, orelse.code):
            # `se_layer(ch) if se_layer else nn.Identity()`: the module one branch builds or one porter cannot
            # type (a factory's, a class handed in): unknown, so its calls convert at run time
            known = body if body.kind == "module" else orelse
            return known.but(module=UNKNOWN_MODULE).with_code(code)
        template = body if body.kind != "python" else orelse
        result = template.with_code(code)
        agree = type(body.static) is type(orelse.static) and body.static == orelse.static
        if result.kind == "python" and result.static is not None and not agree:  # `1 if self.batch_first else 0`:
            # a Python value is unknown unless both agree (a container's static says what it holds: kept)
            result = result.but(static=None)
        return result

    def _expr_UnaryOperation(self, node):
        operand = self.expr(node.expression)
        operator = UNARY[type(node.operator)]
        if operand.is_tensor:
            if operator == "not ":
                return tensor(f"tf.logical_not({operand.code})", operand.rank, operand.layout).but(dtype="bool")
            return operand.with_code(f"{operator}{self.wrap(operand.code)}")
        static = None
        if operator == "-" and isinstance(operand.static, (int, float)):
            static = -operand.static
        elif operator == "not " and isinstance(operand.static, (bool, int)):
            static = not operand.static  # `if not self.use_conv:` in a call specialised for use_conv=True
            if operand.code in ("False", "True"):  # `not x.is_cuda`: a fact of the port, written as one
                return python(repr(static), static=static)
        return python(f"{operator}{self.wrap(operand.code)}", static=static).but(
            dtype=operand.dtype if operator == "-" else None)

    def _expr_BinaryOperation(self, node):
        left, right = self.expr(node.left), self.expr(node.right)
        operator = BINARY_OPERATORS[type(node.operator)]
        if left.kind == "size" or right.kind == "size":
            left, right = self.materialize_size(left), self.materialize_size(right)
        if operator == "+" and "tuple" in (left.kind, right.kind) and {left.kind, right.kind} <= {"tuple", "python"}:
            # a list joined to a list the body holds as a plain value (`[x2, x1] + children`: its items in torch's
            # layout): the known items are converted to it
            left, right = (v if v.kind == "tuple" else Value(v.code, "tuple", items=self.literal_items(v, n))
                           for v, n in ((left, node.left), (right, node.right)))
            return self.concatenated_lists(left, right)
        repeated = left if left.kind == "tuple" else right
        if operator == "*" and {left.kind, right.kind} == {"tuple", "python"} and \
                element_template(repeated) is not None and element_template(repeated).is_tensor:
            # `[torch.zeros(1)] * nl` (YOLOv5's grids): a list of such tensors, as the one repeated
            return Value(f"{self.wrap(left.code)} * {self.wrap(right.code)}", "tuple", items=None,
                         static=("each", element_template(repeated)))
        if not (left.is_tensor or right.is_tensor):
            static = None
            if isinstance(left.static, int) and isinstance(right.static, int) and operator in "+-*//":
                static = {"+": left.static + right.static, "-": left.static - right.static,
                          "*": left.static * right.static,
                          "//": left.static // right.static if right.static else None}.get(operator)
            # a spatial size scaled, divided or multiplied by another (`h // p`, `h * w`) is one still; one met with
            # a channel count (`c * h * w`) is not
            spatial = (left.spatial_size or right.spatial_size) and not (left.channel_count or right.channel_count)
            channel_part = operator in ("*", "//") and (left.channel_count or left.channel_part) and not (
                right.spatial_size or right.channel_count or right.channel_part)
            # a number known to be a float (true division, `np.log(n) / k`) promotes an integer tensor it meets
            floating = "float" if operator == "/" or (operator in ("+", "-", "*", "//", "%", "**") and any(
                v.dtype == "float" or isinstance(v.static, float) for v in (left, right))) else None
            if left.code == self.code(node.left) and right.code == self.code(node.right):
                return python(self.code(node), static=static).but(spatial_size=spatial, dtype=floating,
                                                                  channel_part=channel_part)
            return python(f"{self.wrap(left.code)} {operator} {self.wrap(right.code)}", static=static).but(
                spatial_size=spatial, dtype=floating, channel_part=channel_part)
        if operator == "@":
            if held_for_einsum(left, right):  # (the same decision as torch.matmul's rule)
                return einsum_matmul(self.rule_context, left, right)
            left, right = to_layout(self.ctx, left, "source"), to_layout(self.ctx, right, "source")
            if left.rank is not None and right.rank is not None and min(left.rank, right.rank) >= 2:
                return tensor(f"{self.wrap(left.code)} @ {self.wrap(right.code)}", max(left.rank, right.rank))
            # a vector operand (`x @ w` with w of shape (d,)): torch.matmul's promotion, which tf.matmul lacks
            ranks = [r for r in (left.rank, right.rank) if r is not None]
            rank = (max(ranks) - 1 if min(ranks) == 1 else max(ranks)) if len(ranks) == 2 else None
            return tensor(f"{self.ctx.use('matmul')}({left.code}, {right.code})", rank)
        left, right = self.promote_int(left, right, operator), self.promote_int(right, left, operator)
        (left, right), layout, rank = unify(self.ctx, [left, right], unknown_rank=True)
        code = self.int_widths_promoted(left, right, operator) or \
            f"{self.wrap(left.code)} {operator} {self.wrap(right.code)}"
        result = tensor(code, rank, layout).but(varies_along=joined([left, right], rank))
        if result.channels_last and rank is not None:  # an image broadcast with a per-channel scale, a gate or
            # another image of its size keeps its channel count (the other's is the same or 1)
            counted = [v.channels for v in (left, right) if v.channels_last and v.rank == rank and v.channels]
            result = result.but(channels=counted[0] if counted else None)
        # integer tensors (and Python numbers promote_int left as they are) give one: `lengths * (n + int(t))`
        if operator in ("+", "-", "*", "//", "%") and all(v.dtype == "int" for v in (left, right) if v.is_tensor):
            result = result.but(dtype="int")
        if operator in INT_ARITHMETIC and all(v.dtype != "float" for v in (left, right)):
            result = result.but(int_width=left.int_width or right.int_width)  # (may still be the narrow width)
        if "complex" in (left.dtype, right.dtype):
            result = result.but(dtype="complex")
        tensors = [v for v in (left, right) if v.is_tensor]
        numbers = [v for v in (left, right) if not v.is_tensor and isinstance(v.static, (int, float))]
        if len(tensors) == 1 and len(numbers) == 1 and tensors[0].unit_dims and tensors[0].rank == rank:
            result = result.but(unit_dims=tensors[0].unit_dims)  # (a number broadcasts: `std + 1e-5` keeps them)
        return result

    def int_widths_promoted(self, left, right, operator):
        """`a + b` of two tensors, one a narrow integer (`lengths + t.int()`): torch promotes two integers to the
        wider (a 0-dim operand yields to a dimensioned one) and an integer meeting a float to the float; TensorFlow
        refuses mixed dtypes. The runtime's `ints_like_torch` casts as torch would where the dtypes differ when
        traced; None where no operand is known to be narrow, or one is known to be a float."""
        if operator not in INT_ARITHMETIC or not (left.is_tensor and right.is_tensor) or \
                left.int_width == right.int_width or any(v.dtype not in (None, "int") for v in (left, right)):
            return None
        return f"{INT_ARITHMETIC[operator]}(*{self.ctx.use('ints_like_torch')}({left.code}, {right.code}))"

    def literal_items(self, value, node):
        """The items of a plain Python tuple or list written out (`(self.num_heads, 3 * self.head_size)` added to
        `x.size()[:-1]`), so the sum's length is known; None for anything else."""
        if value.items is not None:
            return value.items
        if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement)
                                                               for e in node.elements):
            return tuple(self.element(e) for e in node.elements)
        return None

    def concatenated_lists(self, left, right):
        """[a] + rest for lists of tensors: the elements stay known when every element is alike (channels-last
        images stay so when both lists hold them)."""
        held = [images_held(v) for v in (left, right)]
        if None not in held and held[0].rank == held[1].rank:
            code = f"{self.wrap(left.code)} + {self.wrap(right.code)}"
            if left.items is not None and right.items is not None:
                return Value(code, "tuple", items=tuple(left.items) + tuple(right.items))
            return Value(code, "tuple", items=None, static=("each", held[0]))
        left, right = self.as_plain(left), self.as_plain(right)
        code = f"{self.wrap(left.code)} + {self.wrap(right.code)}"
        if left.items is not None and right.items is not None:
            return Value(code, "tuple", items=tuple(left.items) + tuple(right.items))
        templates = [element_template(v) for v in (left, right)]
        if None not in templates and all(t.rank == templates[0].rank for t in templates):
            return Value(code, "tuple", items=None, static=("each", templates[0]))
        return Value(code, "tuple", items=None)

    def promote_int(self, value, other, operator):
        """torch promotes an integer tensor meeting a float (or true division) to float32, and a real one meeting a
        complex number or tensor to complex (S4D's `-torch.exp(log_A_real) + 1j * A_imag`); TensorFlow refuses."""
        if value.is_tensor and value.dtype != "complex" and other.dtype == "complex" and \
                operator in ("+", "-", "*", "/"):
            return value.but(code=f"tf.cast({value.code}, tf.complex64)", dtype="complex")
        if value.is_tensor and value.dtype == "bool" and operator in ("+", "-", "*", "/", "//", "%", "**"):
            # TensorFlow would cast the *other* operand to bool; torch promotes the bool tensor instead
            if other.is_tensor and other.dtype != "bool":
                target = f"{other.code}.dtype" if other.code.isidentifier() else (
                    "tf.int64" if other.dtype == "int" else "tf.float32")
            else:
                target = "tf.int64" if isinstance(other.static, int) and operator != "/" else "tf.float32"
            return value.but(code=f"tf.cast({value.code}, {target})",
                             dtype="int" if target == "tf.int64" else None)
        if value.is_tensor and value.dtype is None and operator in ("+", "-", "*") and other.kind == "python" and \
                isinstance(other.static, float) and \
                value.code.startswith(f"{self.ctx.renames.get('tensor_from', 'tensor_from')}("):
            # a tensor made from data porter cannot type (`torch.tensor([i % 3 for i in range(n)]) * 0.5`): int64
            # where the data are ints, which torch promotes meeting a float
            return value.but(code=f"{self.ctx.use('promote_like_torch')}({value.code}, {other.code})")
        if not (value.is_tensor and value.dtype == "int"):
            return value
        float_other = other.kind == "python" and not isinstance(other.static, int) and (
            isinstance(other.static, float) or other.dtype == "float" or "." in other.code or TRUE_DIVISION.search(other.code) is not None)
        if operator in ("+", "-", "*") and other.kind == "python" and other.static is None and \
                other.code.isidentifier():  # `arange(n) * w_a`: torch promotes to float when w_a is a float
            return value.but(code=f"{self.ctx.use('promote_like_torch')}({value.code}, {other.code})", dtype=None)
        if value.int_width and other.is_tensor and other.dtype is None and operator != "/":
            return value  # (a narrow integer meeting a tensor of unknown dtype: `int_widths_promoted` at run time)
        if operator in ("+", "-", "*", "//", "%") and other.is_tensor and other.dtype is None and \
                _DOTTED_NAME.fullmatch(other.code) and not other.code.isidentifier():
            # `x + self.offset`, a buffer of a dtype porter does not know (`torch.tensor([...]).cumsum(-1)`: int64):
            # promoted as torch would, by the dtypes met at run time
            return value.but(code=f"{self.ctx.use('promote_like_torch')}({value.code}, {other.code})", dtype=None)
        if operator == "/" or float_other or (other.is_tensor and other.dtype != "int"):
            # to the float operand's own dtype when it is a named tensor: bfloat16 under mixed precision
            target = f"{other.code}.dtype" if other.is_tensor and other.dtype is None and \
                other.code.isidentifier() else "tf.float32"
            return value.but(code=f"tf.cast({value.code}, {target})", dtype=None)
        return value

    def promote_compared(self, value, other):
        """`arange(n, dtype=torch.float32)[None, :] < valid_len[:, None]`: torch compares an integer tensor with a
        float one in float; TensorFlow refuses, so the side whose dtype is not known float is promoted."""
        if other.is_tensor and other.dtype == "float" and value.is_tensor and value.dtype in (None, "int"):
            return value.but(code=f"{self.ctx.use('promote_like_torch')}({value.code}, {other.code})", dtype=None)
        if value.is_tensor and value.dtype == "bool" and not other.is_tensor and \
                isinstance(other.static, (int, float)) and not isinstance(other.static, bool):
            # `mask == 0` of a bool mask: torch counts True as 1; TensorFlow will not compare a bool with a number
            number = "float" if isinstance(other.static, float) else "int"
            return value.but(code=f"tf.cast({value.code}, tf.{number}32)", dtype=number)
        if value.is_tensor and value.dtype is None and not other.is_tensor and isinstance(other.static, int) and \
                not isinstance(other.static, bool) and value.code in getattr(self, "parameter_names", ()):
            # `mask == 0` of a parameter (the Annotated Transformer's `attention(..., mask)`), bool or not: counted
            # as numbers where it is bool, as torch does
            return value.but(code=f"{self.ctx.use('bool_as_int')}({value.code})")
        return value

    def _expr_BooleanOperation(self, node):
        operator = "and" if isinstance(node.operator, cst.And) else "or"
        left = self.expr(node.left)
        if left.kind == "python" and left.code in ("False", "True") and left.static is (left.code == "True"):
            # a fact of the port (`input.is_cuda and self.ngpu > 1`: no TensorFlow tensor is on CUDA): short-circuit
            # as Python does, so the right side (and a branch only it would open) is never translated
            if (operator == "and") != left.static:
                return left
            return self.expr(node.right)
        right = self.expr(node.right)
        if left.is_tensor or right.is_tensor:
            # (Keras hands `training=None` outside fit: torch's `self.training and ...` is False then)
            left, right = [v.with_code(f"bool({v.code})") if v.kind == "python" and v.code == "training" else v
                           for v in (left, right)]
            (left, right), layout, rank = unify(self.ctx, [left, right])
            function = "tf.logical_and" if operator == "and" else "tf.logical_or"
            return tensor(f"{function}({left.code}, {right.code})", rank, layout)
        return python(f"{self.wrap(left.code)} {operator} {self.wrap(right.code)}")

    def _expr_Comparison(self, node):
        listed = torch_dir_membership(node, self.source.imports.resolve, is_covered_by_a_rule)
        if listed is not None:  # `_has_silu = "silu" in dir(F)`: decided by what the port covers
            return python(repr(listed), static=listed)
        compared = version_comparison(node, self.source.imports.resolve)  # `version.parse(torch.__version__) < ...`
        if compared is not None:
            return python(repr(compared), static=compared)
        left = self.expr(node.left)
        parts, values = [], [left]
        for target in node.comparisons:
            values.append(self.expr(target.comparator))
        if any(v.kind == "size" for v in values):
            values = [self.materialize_size(v) for v in values]
        if any(v.is_tensor for v in values) and len(values) == 2:
            operator = COMPARISONS[type(node.comparisons[0].operator)]
            if operator in ("is", "is not"):
                return python(f"{values[0].code} {operator} {values[1].code}")
            (a, b), layout, rank = unify(self.ctx, values)
            a, b = self.promote_compared(a, b), self.promote_compared(b, a)
            return tensor(f"{self.wrap(a.code)} {operator} {self.wrap(b.code)}", rank, layout).but(dtype="bool")
        parts.append(self.wrap(values[0].code))
        for target, value in zip(node.comparisons, values[1:]):
            parts.append(COMPARISONS[type(target.operator)])
            parts.append(self.wrap(value.code))
        return python(" ".join(parts), static=_static_comparison(node, values))

    def wrap(self, code):
        """Parenthesise `code` unless it is a single atom."""
        stripped = code.strip()
        if stripped.replace("_", "").replace(".", "").isalnum() or _LITERAL_ATOM.fullmatch(stripped) or (
                stripped.endswith((")", "]")) and _balanced_call(stripped)):
            return stripped
        return f"({stripped})"

    def _expr_Subscript(self, node):
        places = getattr(self, "places", None)
        if places and self.code(node).replace(" ", "") in places:  # an item this body stored and kept
            return places[self.code(node).replace(" ", "")]  # (stored_places.py)
        keyed = self.table_keys(node)
        if keyed is not None:  # a value of a table used only by key (`dense_x[f"x_{i}_{j}"]`, `grid[i][j]`)
            item = table_item(*keyed)
            if item is not None:
                return item
        base = self.expr(node.value)
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if isinstance(base.static, HeldTable) and isinstance(index, cst.Index):  # `features["out"]` of the dict
            return base.static.read(self.expr(index.value).code)  # of channels-last images a block returned
        if isinstance(base.static, KeyedItems) and isinstance(index, cst.Index) and isinstance(
                index.value, cst.SimpleString):
            item = base.static.get(index.value.evaluated_value)  # `f["low"]` of a dict a block returned
            if item is not None:
                return item.with_code(f"{base.code}[{self.code(index.value)}]")
        children = self.ctx.ir.attributes.get("#children") if self.ctx.ir is not None and self.info is not None and \
            self.info.container_base and dotted_name(node.value) == "self" else None
        if isinstance(children, ModuleRef):  # `self[name]` in a ModuleDict subclass: one of its own children
            element = ModuleRef("list", elements=children.elements, ordered=False).loop_element()
            return Value(f"self[{self.slice_code(node)}]", "module", module=element)
        if base.kind == "size":
            return self.size_subscript(base, node)
        if base.kind == "module":
            index = self.expr(node.slice[0].slice.value) if isinstance(node.slice[0].slice, cst.Index) else None
            element = base.module.element_at(index.static if index is not None else None) if base.module else \
                UNKNOWN_MODULE
            if isinstance(node.slice[0].slice, cst.Slice):
                element = self.module_slice(base.module, node.slice[0].slice) if base.module else UNKNOWN_MODULE
            return Value(f"{base.code}[{self.slice_code(node)}]", "module", module=element) if index or \
                isinstance(node.slice[0].slice, cst.Slice) else Value(self.code(node), "module", module=element)
        if base.kind == "tuple":
            return self.tuple_subscript(base, node)
        if base.is_tensor and may_be_images(base):  # `x[0]` of an image or a list of images: torch's layout,
            # read as Python reads it either way
            return python(f"{to_layout(self.ctx, base, 'source').code}[{self.slice_code(node)}]")
        if base.is_tensor:
            return self.tensor_subscript(base, node)
        if base.kind == "python" and len(node.slice) > 1 and any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.List) for e in node.slice):
            return self.tensor_subscript(base.but(kind="tensor"), node)  # `v[:, [-1]]`: only arrays take lists
        return python(f"{base.code}[{self.slice_code(node)}]")

    def module_slice(self, ref, part):
        """`self.features[2:]`: the children a literal slice of an ordered container keeps (in order; a later
        channel count reads `self.features[2:][0]`, not the whole container's third child); the container itself
        for a slice porter cannot read."""
        return ref.sliced([self.expr(b).static if b is not None else None for b in (part.lower, part.upper,
                                                                                      part.step)])

    def table_keys(self, node):
        """(GrowingTable, code) when `node` reads or stores a value of a table the body uses only by key
        (frontend/names.py keyed_depth): a chain of as many keys as the table takes on its variable; else None."""
        levels, current = [], node
        while isinstance(current, cst.Subscript):
            levels.append(current)
            current = current.value
        root = self.env.get(current.value) if isinstance(current, cst.Name) else None
        cells = growing_table(root)
        if cells is None or len(levels) != cells.depth:
            return None
        code = current.value
        for level in reversed(levels):
            code = f"{code}[{self.slice_code(level)}]"
        return cells, code

    def slice_code(self, node, plain=False):
        """The index of subscript `node` as code; `plain`: for a tensor in torch's layout, its tensor indices (a
        mask `x < 0` of a channels-last `x`) brought to torch's layout too."""
        parts = []
        for element in node.slice:
            item = element.slice
            if isinstance(item, cst.Index):
                value = self.expr(item.value)
                parts.append(self.as_plain(value).code if plain and value.is_tensor else value.code)
            else:
                parts.append(self.slice_item_code(item))
        return ", ".join(parts)

    def slice_item_code(self, item):
        lower = self.expr(item.lower).code if item.lower is not None else ""
        upper = self.expr(item.upper).code if item.upper is not None else ""
        step = f":{self.expr(item.step).code}" if item.step is not None else ""
        return f"{lower}:{upper}{step}"

    def subscript_in_layout(self, base, items, index_values):
        """Basic indexing (integers, slices, one `...`) of a channels-last or permuted tensor: each index goes to
        the axis that holds its torch dim, and the result keeps the layout (`qkv[0]` of a pending permute, the
        crop of a channels-last map): nothing transposes. None when the index is anything else."""
        if base.channels_last and base.rank is None and len(items) == 2 and all(
                isinstance(i, cst.Slice) for i in items) and self.slice_item_code(items[0]) == ":":
            # `x[:, :c]` of an image of unknown rank (a factory's norm made it): its channels, the last axis
            return tensor(f"{self.wrap(base.code)}[..., {self.slice_item_code(items[1])}]", None,
                          "channels_last").but(dtype=base.dtype)
        found = self.physical_index(base, items, index_values)
        if found is None:
            return None
        physical, result_order = found
        code = f"{self.wrap(base.code)}[{', '.join(code for code, _ in physical)}]" if physical else base.code
        return tensor(code, len(result_order)).but(layout=layout_of_order(result_order), dtype=base.dtype)

    def physical_index(self, base, items, index_values):
        """(index items in stored order, stored order of the result's torch dims) for basic indexing (integers,
        slices, one `...`) of a channels-last or permuted tensor `base`; None for a tensor in torch's order or any
        other index."""
        order = physical_order(base) if base.rank is not None else None
        if order is None or order == list(range(base.rank)):
            return None
        values, parts, ellipsis, new_axes = iter(index_values), [], None, []
        for item in items:
            if isinstance(item, cst.Slice):
                parts.append((self.slice_item_code(item), False))
                continue
            value = next(values)
            if value.static is Ellipsis and ellipsis is None:
                ellipsis = len(parts)
            elif isinstance(value.static, int) and not isinstance(value.static, bool) or _counted_int(value):
                parts.append((value.code, True))  # (a count a loop hands: `y[:, :, i]` of `for i in range(h)`)
            elif value.code == "None" and is_permuted(base):
                new_axes.append((len(parts), ellipsis is None))  # (the dims written before it, before any `...`)
            else:
                return None
        if len(parts) > base.rank:
            return None
        if ellipsis is not None:
            filler = base.rank - len(parts)
            new_axes = [(before + (0 if ahead else filler), True) for before, ahead in new_axes]
            parts[ellipsis:ellipsis] = [(":", False)] * filler
        if new_axes:
            return _index_with_new_axes(order, parts, [before for before, _ in new_axes])
        physical, result_order = index_in_layout(order, parts)
        while physical and physical[-1] == (":", False):
            physical.pop()
        return physical, result_order

    def tuple_subscript(self, base, node):
        item = node.slice[0].slice
        if len(node.slice) == 1 and isinstance(item, cst.Index):
            index = self.expr(item.value)
            if base.items is not None and isinstance(index.static, int) and -len(base.items) <= index.static < len(
                    base.items):
                return base.items[index.static].with_code(f"{base.code}[{index.code}]")
            template = element_template(base)  # every item alike (`x.chunk(2, 1)[i]` of a channels-last x)
            return template.with_code(f"{base.code}[{index.code}]") if template is not None else \
                tensor(f"{base.code}[{index.code}]")
        template = element_template(base)  # a slice of a list of alike items (`x.chunk(4, 1)[::-1]`) keeps them
        return Value(f"{base.code}[{self.slice_code(node)}]", "tuple", items=None,
                     static=("each", template) if template is not None else None)

    def tensor_subscript(self, base, node):
        """x[...] in torch order: tensor indices become gathers; layouts go back to torch's order first."""
        items = [e.slice for e in node.slice]
        index_values = [self.expr(i.value) for i in items if isinstance(i, cst.Index)]
        if any(v.is_tensor for v in index_values):
            if len(items) == 1 and isinstance(items[0], cst.Index):
                index = index_values[0]
                source = to_layout(self.ctx, base, "source")
                if index.code.startswith("(") is False and "bool" in index.code:
                    return self.stub("boolean mask indexing", "the result's size depends on the data (not XLA)")
                self.ctx.use("index_select_first")
                return tensor(f"index_select_first({source.code}, {index.code})").but(dtype=base.dtype)
            return self.advanced_subscript(base, node, index_values)
        kept = self.subscript_in_layout(base, items, index_values)
        if kept is not None:
            whole_channels = len(items) < 2 or (isinstance(items[1], cst.Slice) and items[1].lower is None and
                                                items[1].upper is None and items[1].step is None)
            if base.channels_last and kept.channels_last and whole_channels and base.channels is not None:
                kept = kept.but(channels=base.channels)  # `x[:, :, 1:, 1:]` keeps the channel count
            return kept
        source = to_layout(self.ctx, base, "source")
        lists = [i for i in items if isinstance(i, cst.Index) and isinstance(i.value, cst.List)]
        if len(lists) == 1 and not any(v.static is Ellipsis for v in index_values):  # `x[:, [-1], :]`
            rank = source.rank - sum(1 for v in index_values if isinstance(v.static, int) and not isinstance(
                v.static, bool)) + sum(1 for v in index_values if v.code == "None") if source.rank is not None \
                else None
            helper = self.ctx.use("getitem_list")
            return tensor(f"{helper}({source.code}, np.s_[{self.slice_code(node)}])", rank).but(dtype=base.dtype)
        dropped = sum(1 for v in index_values if v.static is not None and not isinstance(v.static, type(None))
                      and isinstance(v.static, int))
        added = sum(1 for v in index_values if v.code == "None")
        rank = source.rank - dropped + added if source.rank is not None and not any(
            v.static is Ellipsis for v in index_values) else None
        if source.rank is not None and any(v.static is Ellipsis for v in index_values):
            rank = source.rank - dropped + added
        counts = sum(1 for v in index_values if _counted_int(v))  # (`attn_bias[head_idx]` in an enumerate loop)
        if rank is not None and counts:
            rank -= counts
        non_static_ints = [v for v in index_values if v.static is None and v.code not in ("None",) and
                           not _counted_int(v)]
        if non_static_ints:
            rank = None
        return tensor(f"{self.wrap(source.code)}[{self.slice_code(node)}]", rank).but(dtype=base.dtype)  # kept

    def advanced_subscript(self, base, node, index_values):
        """x[i, j] with several index tensors (ints, lists and slices beside them): one gather in torch's order."""
        source = to_layout(self.ctx, base, "source")
        if any(v.code == "None" or (v.kind == "tensor" and v.dtype == "bool") for v in index_values):
            return self.stub("advanced tensor indexing", "None or boolean masks beside index tensors are not mapped")
        parts, advanced_ranks = [], []
        for element in node.slice:
            item = element.slice
            if isinstance(item, cst.Index):
                value = self.expr(item.value)
                if value.is_tensor:
                    value = to_layout(self.ctx, value, "source")
                    advanced_ranks.append(value.rank)
                elif isinstance(value.static, int) and not isinstance(value.static, bool):
                    advanced_ranks.append(0)
                elif value.static is Ellipsis:
                    advanced_ranks.append(None)  # (how many axes it spans is known to the runtime)
                else:
                    advanced_ranks.append(None)
                parts.append(value.code)
            else:
                lower = self.expr(item.lower).code if item.lower is not None else ""
                upper = self.expr(item.upper).code if item.upper is not None else ""
                step = f":{self.expr(item.step).code}" if item.step is not None else ""
                parts.append(f"{lower}:{upper}{step}")
        rank = None
        if source.rank is not None and None not in advanced_ranks:
            rank = source.rank - len(advanced_ranks) + max(advanced_ranks)
        helper = self.ctx.use("advanced_index")
        return tensor(f"{helper}({source.code}, np.s_[{', '.join(parts)}])", rank).but(dtype=base.dtype)

    def size_subscript(self, base, node):
        """x.shape[i] / x.size()[i]: the torch dim read from the right axis, static when known."""
        item = node.slice[0].slice
        if len(node.slice) == 1 and isinstance(item, cst.Index):
            index = self.expr(item.value)
            if isinstance(index.static, int):
                return self.dim_size(base, index.static)
        if base.layout.startswith("permuted:"):  # (a pending transpose: its sizes read in torch's dim order)
            sliced = python(f"{self.materialize_size(base.but(kind='size')).code}[{self.slice_code(node)}]")
        else:
            self.ctx.use("torch_size")
            sliced = python(f"torch_size({base.code}{self.layout_flag(base)})[{self.slice_code(node)}]")
        dims = _sliced_dims(node, base.rank)
        if dims is None:
            return sliced
        # `x.size()[2:]` of a tensor of known rank: a tuple whose items are known (`*` of it gives a view its count)
        channels = features_dim(base)
        return Value(sliced.code, "tuple", items=tuple(
            python(f"{sliced.code}[{k}]").but(channel_count=d == channels, spatial_size=d > 1 and base.rank > 2)
            for k, d in enumerate(dims)))

    def layout_flag(self, value):
        return ", channels_last=True" if value.channels_last or (
            value.kind == "size" and value.layout == "channels_last" and (value.rank or 3) > 2) else ""

    def dim_size(self, value, dim):
        """torch's size of `value`'s dim `dim`, read from the axis that holds it (marked when it is the channels)."""
        size = self._dim_size(value, dim)
        channels = features_dim(value)
        if value.rank is not None and value.rank > 2 and dim % value.rank > 1:
            size = size.but(spatial_size=True)
        return size.but(channel_count=True) if channels is not None and dim % value.rank == channels else size

    def _dim_size(self, value, dim):
        axis = dim
        if value.layout.startswith("permuted:"):
            order = physical_order(value)
            self.ctx.use("dim_size")
            return python(f"dim_size({value.code}, {order.index(dim % len(order))})")
        if value.layout == "channels_last" and (value.rank is None or value.rank > 2):
            if value.rank is None:
                self.ctx.use("torch_size")
                return python(f"torch_size({value.code}, channels_last=True)[{dim}]")
            from porter.ir.values import remap_axis
            axis = remap_axis(dim, value.rank)
        self.ctx.use("dim_size")
        return python(f"dim_size({value.code}, {axis})")

    def materialize_size(self, value):
        if value.kind != "size":
            return value
        if value.layout.startswith("permuted:"):
            sizes = [self.dim_size(value, d).code for d in range(value.rank)]
            return python("(" + ", ".join(sizes) + ",)")
        self.ctx.use("torch_size")
        code = f"torch_size({value.code}{self.layout_flag(value)})"
        if value.rank is None or value.layout != "channels_last" or value.rank < 3:
            return python(code)
        # `sizes = x.size()` of an image held channels-last: a tuple whose items say which is the channel count and
        # which are spatial sizes (DeepSpeech2's `x.view(sizes[0], sizes[1] * sizes[2], sizes[3])` then keeps the
        # image's layout as far as the sizes allow)
        return Value(code, "tuple", items=tuple(
            python(f"{code}[{d}]").but(channel_count=d == 1, spatial_size=d > 1) for d in range(value.rank)))

    def iterable_code(self, value):
        if value.kind == "size":
            return self.materialize_size(value).code
        if value.is_tensor:
            self.ctx.use("unstack_first")
            return f"unstack_first({to_layout(self.ctx, value, 'source').code})"
        if value.kind == "tuple" and value.items and not all(
                i.kind == value.items[0].kind and i.layout == value.items[0].layout and i.rank == value.items[0].rank
                for i in value.items):
            return self.as_plain(value).code  # unlike items: each in torch's order (see bind_loop_target)
        return value.code

    def bind_loop_target(self, target, iterable):
        """Bind the loop variable(s) of `for target in iterable`."""
        if iterable.kind == "python" and iterable.code == "self" and self.info is not None and \
                self.info.container_base == "sequential":
            # `for mod in self:` in a Sequential subclass's forward: its children
            children = self.module_ref_resolver().sequential_subclass(self.info)
            iterable = Value("self", "module", module=ModuleRef("list", elements=children.elements,
                                                                ordered=children.ordered))
        if iterable.kind == "module" and iterable.module is not None and (
                iterable.module.kind in ("enumerated", "zipped") or (iterable.module.kind == "dict" and isinstance(
                    target, (cst.Tuple, cst.List)))):
            element = iterable  # unpacked into (index or key, module) by bind_target
        elif iterable.kind == "tuple" and isinstance(iterable.static, tuple) and iterable.static[:1] == (
                "enumerated",):
            element = iterable
        elif iterable.kind == "module" and iterable.module is not None:
            element = Value("", "module", module=iterable.module.loop_element())
        elif iterable.is_tensor:
            element = tensor("", None if iterable.rank is None else iterable.rank - 1)
        elif iterable.kind == "tuple" and iterable.items and all(
                i.kind == iterable.items[0].kind and i.layout == iterable.items[0].layout and
                i.rank == iterable.items[0].rank for i in iterable.items):
            element = iterable.items[0]  # items alike (q, k, v of one chunk): each as it is stored
        elif iterable.kind == "tuple" and iterable.items:
            # items unlike: iterable_code hands them over in torch's order
            element = to_layout(self.ctx, iterable.items[0], "source") if iterable.items[0].is_tensor else \
                iterable.items[0]
        elif iterable.kind == "tuple" and element_template(iterable) is not None:
            element = element_template(iterable)  # a list of alike items (channels-last images): each as stored
        elif iterable.kind == "tuple":
            element = tensor("")
        elif iterable.kind == "python" and iterable.code.startswith("range(") and self.env.get("range") is None:
            element = python("").but(dtype="int")  # (`for i in range(y.size(2))`: `y[:, :, i]` drops the dim)
        elif isinstance(iterable.static, NamePattern) and iterable.static.many:
            element = python("", static=NamePattern(iterable.static.pattern))  # (`for name in self.stage_names`)
        else:
            element = python("")
        self.bind_target(target, element, loop=True)

    def bind_target(self, target, value, loop=False):
        if isinstance(target, cst.Name):
            if value.kind == "tuple" and value.items is not None:
                # the variable holds the container: its items are read through it from now on
                value = value.but(items=tuple(item.with_code(f"{target.value}[{i}]")
                                              for i, item in enumerate(value.items)))
            if value.kind == "python" and value.code == "None" and value.static is None and not loop:
                value = value.but(static=NONE_DEFAULT)  # `y = None`, an image on later turns of a loop (the sum
                # of HRNet's fused branches): known None here, as a parameter left at its None default is
            self.env[target.value] = value.with_code(target.value)
            for key in [k for k in getattr(self, "hoisted", {}) if k[0] == target.value]:
                del self.hoisted[key]
            if getattr(self, "rebound", None) is not None:
                self.rebound.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            if value.kind == "size":
                for position, element in enumerate(elements):
                    if isinstance(element.value, cst.Name):
                        self.env[element.value.value] = python(element.value.value)
                return
            items = value.items if value.kind in ("tuple", "python") and value.items is not None and len(
                value.items) == len(elements) else None  # (a Python tuple's items: sizes that say what they are)
            for position, element in enumerate(elements):
                if items is not None:
                    item = items[position]
                elif value.kind == "tuple" and isinstance(value.static, tuple) and value.static[:1] == ("each",):
                    item = value.static[1]  # q, k, v = map(lambda t: ..., qkv): each as the lambda makes it
                elif value.kind == "tuple" and isinstance(value.static, tuple) and value.static[:1] == (
                        "enumerated",):
                    item = python("").but(dtype="int") if position == 0 else value.static[1]  # (a count, then
                    # the item)
                elif value.is_tensor and value.rank is None and value.layout == "channels_last":
                    # what `call_module(..., held="channels_last")` returns: a tuple comes back with its images
                    # channels-last, as the caller holds them (runtime/module.py `call_module`)
                    item = tensor("", None, "channels_last")
                elif value.kind == "tuple" or value.is_tensor:
                    item = tensor("")
                elif value.kind == "module" and value.module is not None and value.module.kind == "zipped":
                    zipped = value.module.elements[position] if position < len(value.module.elements) else None
                    item = python("") if zipped is None else Value("", "module", module=zipped) \
                        if zipped.kind != "plain" else zipped.static[0] if zipped.static else python("")
                elif value.kind == "module" and value.module is not None and value.module.kind in ("dict",
                                                                                                  "enumerated"):
                    count = python("").but(dtype="int") if value.module.kind == "enumerated" else python("")
                    item = count if position == 0 else Value("", "module", module=value.module.element())
                elif value.kind == "module" and value.module is not None and value.module.kind in (
                        "list", "sequential") and value.module.ordered and len(value.module.elements) == len(elements):
                    item = Value("", "module", module=value.module.elements[position])  # for a, b in [[A, B], ...]
                elif value.kind == "module" and value.module is not None and value.module.kind in ("list",
                                                                                                  "sequential"):
                    item = Value("", "module", module=UNKNOWN_MODULE)  # a layer porter cannot tell: call_module
                else:
                    item = python("")
                self.bind_target(element.value, item, loop)


def _spread(items):
    """Items of a tuple/list display with each `*xs` whose items are known spread into them (`(q, *chunk(kv, 2))`
    holds three tensors, each in its own layout); an item's code reads it from the starred value."""
    spread = []
    for item in items:
        if item.code.startswith("*") and item.kind == "tuple" and item.items:
            inner = item.code[1:]
            spread.extend(i.with_code(f"{inner}[{n}]") for n, i in enumerate(item.items))
        else:
            spread.append(item)
    return tuple(spread)


def _static_comparison(node, values):
    """True/False for a comparison of literals porter knows (`self.data_format == "channels_last"` in a call
    specialised for one constructor value), else None."""
    import operator

    ops = {cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt, cst.LessThanEqual:
           operator.le, cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge,
           cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b}
    plain = (bool, int, float, str, tuple, list)
    if not all(v.kind == "python" and isinstance(v.static, plain) for v in values) or \
            not all(type(t.operator) in ops for t in node.comparisons):
        return None
    try:
        return all(ops[type(t.operator)](a.static, b.static)
                   for t, a, b in zip(node.comparisons, values, values[1:]))
    except TypeError:
        return None


def _balanced_call(code):
    """True when `code` is one call/subscript expression like f(a, b) or x[1] (not `f(a) + g(b)`)."""
    depth = 0
    for position, char in enumerate(code):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0 and position != len(code) - 1:
                rest = code[position + 1:]
                if not rest.startswith(("(", "[", ".")):
                    return False
        elif depth == 0 and char in " +-*/%<>=!&|^~,":
            return False
    return depth == 0


_REGISTERED = {}
# torch Conv layers a class may derive from -> spatial rank (their subclasses read `self.weight` in torch's order)
def _lineage(info):
    """A class and its in-file base classes (methods it inherits register tensors too)."""
    found, pending = [], [info]
    while pending:
        current = pending.pop()
        if current not in found:
            found.append(current)
            pending.extend(current.family[base] for base in current.bases if base in current.family)
    return found


def _registered_tensors(class_node):
    """Names a class registers anywhere in its body with `register_buffer("name", ...)` /
    `register_parameter("name", ...)` (literal names) or assigns an `nn.Parameter(...)` to."""
    if id(class_node) in _REGISTERED and _REGISTERED[id(class_node)][0] is class_node:
        return _REGISTERED[id(class_node)][1]
    names = set()

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("register_buffer",
                                                                                 "register_parameter") and \
                    call.args and isinstance(call.args[0].value, cst.SimpleString):
                names.add(call.args[0].value.evaluated_value)

        def visit_Assign(self, node):  # `self.table = nn.Parameter(...)` in a helper method
            value = node.value
            if isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "Parameter":
                names.update(t.target.attr.value for t in node.targets if isinstance(t.target, cst.Attribute)
                             and dotted_name(t.target.value) == "self")

    walk(class_node, Finder())
    _REGISTERED[id(class_node)] = (class_node, frozenset(names))
    return _REGISTERED[id(class_node)][1]


def _dict_display(value):
    """Whether `value` is a dict display porter keeps as Python code (`{"feats": feats}`)."""
    return value.kind == "python" and value.code.lstrip().startswith("{")


def _structures_differ(first, second):
    """Whether the two sides of a conditional expression are tuples of different known structures (a list of
    images beside a pair of other items); an image beside a list of images (`output if output else input`) is
    not."""
    if {first.kind, second.kind} != {"tuple"}:
        return False
    if first.items is not None and second.items is not None:
        return len(first.items) != len(second.items) or any(
            a.kind != b.kind for a, b in zip(first.items, second.items))
    known, listed = (first, second) if first.items is not None else (second, first)
    template = element_template(listed)
    return known.items is not None and template is not None and any(
        i.kind != template.kind or i.layout != template.layout for i in known.items)


def _lists_alike(first, second):
    """False for two list Values each holding images of one state, in different layouts; True otherwise (what
    porter cannot tell of their items stays as it was)."""
    a, b = element_template(first), element_template(second)
    return not (a is not None and b is not None and a.is_tensor and b.is_tensor and a.layout != b.layout)


def _sliced_dims(node, rank):
    """The dims `x.shape[a:b]` (a Subscript with one slice of integer literals, or none) selects of a tensor of
    `rank`, or None."""
    if rank is None or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
        return None
    part = node.slice[0].slice
    bounds = []
    for bound in (part.lower, part.upper, part.step):
        if bound is None:
            bounds.append(None)
        elif isinstance(bound, cst.Integer):
            bounds.append(int(bound.value))
        elif isinstance(bound, cst.UnaryOperation) and isinstance(bound.operator, cst.Minus) and isinstance(
                bound.expression, cst.Integer):
            bounds.append(-int(bound.expression.value))
        else:
            return None
    return list(range(rank))[slice(*bounds)]


def _index_with_new_axes(order, parts, new_axes):
    """(index items in stored order, stored order of the result's torch dims) for basic indexing with `None`s of a
    tensor stored in `order`: `parts` index its dims (integers drop them), `new_axes` give, for each None, how many
    dims are written before it. A new axis is stored right after the dim before it (at the front when it comes
    first): LLaMA's `hidden_states[:, :, None, :, :]` of heads held (B, T, H, D) is held (B, T, H, 1, D), so
    expanding and merging the new axis with the heads moves no data."""
    parts = list(parts) + [(":", False)] * (len(order) - len(parts))
    torch_items = []  # the result's torch dims in order: ("dim", d) kept, ("new", k) inserted
    for position in range(len(parts) + 1):
        torch_items += [("new", position)] * new_axes.count(position)
        if position < len(parts) and not parts[position][1]:
            torch_items.append(("dim", position))
    result_dim = {item: index for index, item in enumerate(torch_items) if item[0] == "dim"}
    news = [index for index, item in enumerate(torch_items) if item[0] == "new"]
    physical, stored = [], []
    leading = [index for index in news if torch_items[index][1] == 0]
    physical += [("None", False)] * len(leading)
    stored += leading
    for dim in order:
        physical.append(parts[dim])
        if not parts[dim][1]:
            stored.append(result_dim[("dim", dim)])
        following = [index for index in news if torch_items[index][1] == dim + 1 and index not in leading]
        physical += [("None", False)] * len(following)
        stored += following
    codes = [(code, drops) for code, drops in physical]
    return codes, stored


def _counted_int(value):
    """Whether `value` is a Python int porter cannot read but knows is one (the count `enumerate` hands a loop): as an
    index it drops its dim, as a static int does."""
    return value.kind == "python" and value.static is None and value.dtype == "int"


def _comprehension_names(node):
    """Every name a comprehension's `for` targets bind, and any it assigns with `:=`."""
    names, for_in = set(), node.for_in
    while for_in is not None:
        names |= names_in(for_in.target)
        for_in = for_in.inner_for_in
    names |= {n.target.value for n in descendants(node) if isinstance(n, cst.NamedExpr) and
              isinstance(n.target, cst.Name)}
    return names
