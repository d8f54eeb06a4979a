"""Abstract values the translator tracks for every expression: what it is, its rank and its layout.

A tensor in "channels_last" layout is the torch tensor with dim 1 moved last; its `rank` is then known.
"""

from dataclasses import dataclass, field, replace

import libcst as cst


@dataclass(frozen=True)
class ModuleRef:
    """What a module-valued expression stands for.

    kind: "rule" (a runtime layer, `rule` set), "class" (an in-file module class, `class_name` set), "elementwise"
    (a plain callable porter can tell computes elementwise: `F.relu`, a registry's activation function; called
    directly, the layout passed through: passes/elementwise_callables.py),
    "sequential" / "list" / "dict" (containers with `elements`), "unknown"; in a "zipped" ref (`zip(...)` in a
    loop), "plain" marks a position that iterates plain values (`zip(range(n), self.blocks)`).
    `static`: for a class instance, the literal constructor values its `forward` reads back from `self`
    (`(("dims", "[0, 2, 3, 1]"),)` for `Permute([0, 2, 3, 1])`): the instance's `call` is specialised for them.
    `lead`: for an unordered container, how many of its first `elements` are known to come first, in this order
    (the stem appended before the loop that appends the stages).
    `alternatives`: for an unknown module that an if/else in `__init__` binds to one of several known modules (DPN's
    `c1x1_c`, a CatBnAct or a BnActConv2d), those modules: a call that every one of them takes and returns in the
    same layouts needs no conversion at run time.
    """

    kind: str
    rule: object = None
    class_name: str | None = None
    elements: tuple = ()
    ordered: bool = True
    static: tuple = ()
    lead: int = 0
    alternatives: tuple = ()

    def element(self):
        """A representative element (for iteration and indexing over ModuleList/Sequential)."""
        return self.elements[0] if self.elements else ModuleRef("unknown")

    def element_at(self, index):
        """The module `container[index]` is: the child there where the children are known in order and `index` is a
        literal int; else the representative element where they are all one module; else one of them (an unknown
        module with `alternatives`: timm's efficientvim.py `self.norm[-1]` of `[*[LayerNorm(d) for d in dims],
        LayerNorm2d(d)]`, laid out otherwise than the first)."""
        if self.ordered and self.elements and isinstance(index, int) and not isinstance(index, bool) and \
                -len(self.elements) <= index < len(self.elements):
            return self.elements[index]
        return self.element() if len(set(self.elements)) < 2 else self.alternative_element()

    def sliced(self, bounds):
        """The container `container[start:stop:step]` is (`bounds`: the three, each a literal int or None): the
        children it keeps, in order, where they are known in order; else the container itself."""
        if not (self.ordered and self.elements and self.kind in ("sequential", "list")) or not all(
                b is None or isinstance(b, int) and not isinstance(b, bool) for b in bounds) or bounds[2] == 0:
            return self
        return replace(self, elements=self.elements[slice(*bounds)], lead=0)

    def loop_element(self):
        """The module a loop over this container binds: its representative element; when the elements are ordered
        containers of one length (`ModuleList([ModuleList([attn, ff]), ...])`, unpacked by `for attn, ff in`), one
        of that length whose item at each position is the elements' common module there, unknown where they
        differ."""
        elements, first = self.elements, self.element()
        if not elements and self.alternatives and all(a.kind in ("list", "sequential") for a in self.alternatives):
            # one of several containers (`for stage in (self.stage1, self.stage2)`, then `for block in stage`):
            # what a loop over it binds is any of their children
            children = tuple(c for a in self.alternatives for c in a.elements)
            return ModuleRef("list", elements=children, ordered=False).loop_element()
        if len(elements) < 2 or not all(e.kind == first.kind and e.kind in ("list", "sequential") and e.ordered and
                                        len(e.elements) == len(first.elements) for e in elements):
            return first if len(set(elements)) < 2 else self.alternative_element()

        def same(a, b):
            return a.kind == b.kind and a.class_name == b.class_name and a.rule == b.rule

        items = tuple(column[0] if all(same(column[0], other) for other in column[1:]) else ModuleRef("unknown")
                      for column in zip(*(e.elements for e in elements)))
        if items != first.elements and first.kind == "sequential" and len(set(elements)) > 1:
            # Sequentials of one length but other layers (ConvNeXt's stem `[conv, norm]` beside its downsampling
            # `[norm, conv]`): each called whole, one each turn (a Sequential is not unpacked as a ModuleList is)
            return self.alternative_element()
        return first if items == first.elements else ModuleRef(first.kind, elements=items, ordered=True)

    def alternative_element(self):
        """The module a loop over children of different kinds binds (`for m in self.paths`, paths a Sequential of
        convs, a Conv2d and an Identity; `self._modules.values()`): one of them, each turn another, so a call on it
        is a plain call only when every child takes and returns what it is handed in the same layouts (see
        `alternatives`); a child porter does not know makes the binding unknown (call_module converts)."""
        distinct = tuple(dict.fromkeys(self.elements))
        if any(e.kind == "unknown" and not e.alternatives for e in distinct):
            return UNKNOWN_MODULE
        return ModuleRef("unknown", alternatives=distinct)


UNKNOWN_MODULE = ModuleRef("unknown")
ELEMENTWISE_CALLABLE = ModuleRef("elementwise")


@dataclass(frozen=True)
class Value:
    """One translated expression: its code text and what the translator knows about it."""

    code: str
    kind: str = "python"  # "tensor" | "module" | "tuple" | "python" | "size"
    rank: int | None = None
    layout: str = "source"
    module: ModuleRef | None = None
    items: tuple | None = None  # for "tuple": item Values (None: unknown tuple of source tensors)
    static: object = field(default=None, compare=False)  # literal Python value when known (ints, tuples)
    dtype: str | None = None  # "int" for integer tensors porter can see (arange, randint), else unknown
    channels: str | None = None  # channel count of a channels-last tensor as code (`self.conv2.out_channels`)
    # a Python size read from the dim a channels-last or permuted tensor stores last (`c` of `n, c, h, w = x.shape`):
    # a view given it at one place keeps the channels whole there (porter/rules/tensor_ops.py)
    channel_count: bool = field(default=False, compare=False)
    # a Python size read from a dim after an image's channels (`h` of `n, c, h, w = x.shape`, the items of
    # `x.size()[2:]`): a view given such sizes after its dim 1 splits the spatial dims, not the channels
    spatial_size: bool = field(default=False, compare=False)
    # a Python size made of an image's channel count and numbers (`c // g`, `c // 2` of `b, c, h, w = x.size()`): a
    # view given it before the spatial sizes splits the channels (rules/view_categories.py)
    channel_part: bool = field(default=False, compare=False)
    # the torch dims a tensor built from sizes differs along, copies along the rest (porter/ir/varying.py); None:
    # nothing known
    varies_along: tuple | None = field(default=None, compare=False)
    # torch dims believed to have size 1 (a one-layer GRU's h_n, (1, N, H)): a hint only, never relied on for the
    # numbers: a permute moving only them is settled at once by the runtime's `permute_axes`, a reshape when the
    # sizes it sees are 1 and a transpose otherwise (passes/recurrent_states.py)
    unit_dims: tuple | None = field(default=None, compare=False)
    # a tuple one path leaves None (`scale_shift = None`, then `scale_shift = t.chunk(2, 1)` under an `if`):
    # converted item by item only where it is one (passes/optional_values.py)
    may_be_none: bool = field(default=False, compare=False)
    # the TensorFlow dtype of an integer tensor that may be narrower than torch's default int64 (`t.int()`,
    # `.to(torch.int32)`, `dtype=torch.int32`): arithmetic with another integer tensor promotes the widths as torch
    # does, which TensorFlow refuses to (passes/expressions.py)
    int_width: str | None = field(default=None, compare=False)

    @property
    def is_tensor(self):
        return self.kind == "tensor"

    @property
    def channels_last(self):
        return self.kind == "tensor" and self.layout == "channels_last" and (self.rank is None or self.rank > 2)

    def with_code(self, code):
        return self.but(code=code)

    def but(self, **changes):
        """`dataclasses.replace(self, **changes)` without its per-call look at the fields (8,000 calls translating
        a 3,500-line file): the class has no __post_init__, so copying the fields is what its __init__ does."""
        if not changes.keys() <= _VALUE_FIELDS:
            return replace(self, **changes)  # its error for a name that is not a field
        made = object.__new__(type(self))
        made.__dict__.update(self.__dict__)
        made.__dict__.update(changes)
        return made


_VALUE_FIELDS = frozenset(Value.__dataclass_fields__)


def iterable_code(code):
    """`code` as the iterable of a comprehension: parenthesised when it is a conditional expression, a lambda or
    an assignment expression (`for _each in a if flag else b` would read `if flag` as the comprehension's filter:
    timm's `{...} if output_dict else intermediates`)."""
    try:
        expression = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return code
    return f"({code})" if isinstance(expression, (cst.IfExp, cst.Lambda, cst.NamedExpr)) and \
        not expression.lpar else code


_RECEIVERS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp,
              cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.SimpleString, cst.ConcatenatedString,
              cst.FormattedString)


def receiver_code(code):
    """`code` as the receiver of a method call or attribute: parenthesised unless it is an atom (`(np.sum(m, 0) >
    0).astype(int)` of MONAI's DiNTS lost its parentheses: `0.astype` does not compile; `(1).bit_length()` too)."""
    try:
        expression = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return code
    return code if expression.lpar or isinstance(expression, _RECEIVERS) else f"({code})"


def result_of(template, code):
    """`template` (what a call returns) as the value of the call `code`: a tuple's known items are read through it,
    `code[i]` (nested tuples too), never by the callee's own return expressions (`self.a(x)` of the block that
    returned `self.a(x), self.b(x)`)."""
    if template.kind == "tuple" and template.items is not None:
        items = tuple(result_of(item, f"{code}[{i}]") for i, item in enumerate(template.items))
        return template.but(code=code, items=items)
    return template.with_code(code)


def reads_through(value):
    """Whether tuple `value`'s items are read through its own code (`f(x)[0]`, `f(x)[1]`, as `result_of` gives them)
    where that code is an expression, not a name: listing the items one by one would evaluate it once per item."""
    return value.kind == "tuple" and bool(value.items) and not value.code.isidentifier() and all(
        item.code == f"{value.code}[{i}]" for i, item in enumerate(value.items))


NARROW_INTS = frozenset({"tf.int32", "tf.int16", "tf.int8", "tf.uint8"})


def tensor(code, rank=None, layout="source"):
    if rank is not None and rank <= 2 and layout == "channels_last":
        layout = "source"
    return Value(code, "tensor", rank, layout)


def untyped_as_tensor(value):
    """A value porter could not type (indices read back from a list of tuples) where a tensor is wanted: a tensor
    in torch's layout, as every untyped value is; any other value as it is."""
    return tensor(value.code) if value.kind == "python" and value.static is None else value


def stub_value(code):
    """The value of a `not_supported(...)` stub: it raises before anything reads it, so it takes any layout (a
    branch that only reaches a stub never makes the other branch convert)."""
    return Value(code, "tensor", None, "raises")


def permuted_layout(order):
    """Layout name of a tensor whose physical axes hold torch dims `order` (a transpose not yet performed)."""
    return "permuted:" + ",".join(str(d) for d in order)


def physical_order(value):
    """torch dims in the order the Keras tensor stores them (None when the rank is unknown)."""
    if value.layout.startswith("permuted:"):
        return [int(d) for d in value.layout.split(":", 1)[1].split(",")]
    if value.rank is None:
        return None
    if value.layout == "channels_last" and value.rank > 2:
        return [0] + list(range(2, value.rank)) + [1]
    return list(range(value.rank))


def stored_last_dim(value):
    """The torch dim a channels-last or permuted tensor (or its shape) stores last, its channels; None for a value in
    torch's order or of unknown rank."""
    order = physical_order(value) if value.kind in ("tensor", "size") else None
    return order[-1] if order is not None and order != list(range(len(order))) else None


def features_dim(value):
    """The torch dim whose size a size read from `value` marks as its channel count: the dim a channels-last or
    permuted tensor stores last, else the last dim of a rank-3 tensor held in torch's order (a sequence's features,
    (B, N, C) or (T, B, C): porter holds a Conv1d's (N, C, L) channels-last, so a rank-3 tensor in torch's order
    is tokens). `C` of `B, N, C = x.shape` then keeps the channels whole when the tokens fold back into an image
    (`x.transpose(1, 2).view(B, C, H, W)`, a hybrid vision transformer's depthwise conv)."""
    channels = stored_last_dim(value)
    if channels is None and value.kind in ("tensor", "size") and value.rank == 3 and value.layout == "source":
        return 2
    return channels


def is_permuted(value):
    return value.kind == "tensor" and value.layout.startswith("permuted:")


class EinsumRecipe:
    """How an einsum result was computed, so a later consumer can ask for another output order for free."""

    def __init__(self, inputs, operands, output, env=None):
        self.inputs, self.operands, self.output = inputs, operands, output  # output: physical subscript
        self.env = env  # the translator's variables: re-emitting is only valid while the operands are unchanged
        self.snapshot = {name: env.get(name) for name in operands if name.isidentifier()} if env is not None \
            else None

    def still_valid(self):
        if self.snapshot is None:
            return False
        return all(self.env.get(name) is value for name, value in self.snapshot.items()) and all(
            name.isidentifier() or name.startswith("self.") for name in self.operands)

    def code(self, output=None):
        spec = ",".join(self.inputs) + "->" + (output or self.output)
        return f"tf.einsum({spec!r}, {', '.join(self.operands)})"


@dataclass(frozen=True)
class NamePattern:
    """The static of a string naming attributes of a pattern (a regular expression): the loop variable of `for name
    in self.stage_names` whose names `self.add_module("stage%d" % i, ...)` registered (`many`: the list itself), so
    `getattr(self, name)` is one of the modules registered under that pattern (passes/modules.py
    `attribute_by_pattern`)."""

    pattern: str
    many: bool = False


@dataclass(frozen=True)
class LocalLambda:
    """The static of a name bound to a lambda written in the body (`merge = lambda t: t.reshape(b, n, h, -1)
    .transpose(1, 2)`): `map(merge, (k, v))` translates its body for each item as it does a lambda written in
    place (passes/calls.py `map_lambda`)."""

    node: object = field(compare=False)


@dataclass(frozen=True)
class KeyedItems:
    """The static of a dict display with string keys holding tensors (`{"low": low, "out": x}`, a block's result):
    each key's item as the display holds it (tensors in torch's order), which `d["low"]` reads back, in the caller
    too, so a tensor taken out of a dict a block returned is typed (untyped, it met a channels-last image as if it
    were one: a crash, or a silent mismatch where the sizes allow it)."""

    items: tuple  # ((key, Value), ...)

    def get(self, key):
        return next((value for name, value in self.items if name == key), None)


@dataclass(frozen=True)
class NoneDefault:
    """The static of a forward parameter the call being translated leaves at (or is handed) `None`: unlike an untyped
    value, known to be None there (falsy, as None is; no literal porter folds). passes/optional_values.py."""

    def __bool__(self):
        return False


NONE_DEFAULT = NoneDefault()


# the channel count of a class call's image parameter: whatever its caller hands in (a call returning it, as an
# attention gate's `x * scale` does, gives the caller's count back); no expression the callee can write
HANDED_CHANNELS = "<channels handed in>"


def written_channels(value):
    """The channel count of `value` as an expression the code may use (`self.conv2.out_channels`), or None."""
    return None if value.channels == HANDED_CHANNELS else value.channels


def python(code, static=None):
    return Value(code, "python", static=static)


def remap_axis(dim, rank):
    """torch dim -> axis of the channels-last tensor of `rank`."""
    dim = dim + rank if dim < 0 else dim
    if dim == 0:
        return 0
    if dim == 1:
        return rank - 1
    return dim - 1


class ImageOrImages:
    """The `static` of what callers take from a body returning a channels-last image on one path and a list of
    such images on another (sail-sg's PoolFormer: `if self.fork_feat: return outs`, else `return x`): a tensor
    Value (the image path's rank) that conversions turn item by item where it is a list (`each_image`), and that
    `isinstance(x, list)` does not decide."""

    def __repr__(self):
        return "IMAGE_OR_IMAGES"


IMAGE_OR_IMAGES = ImageOrImages()


def may_be_images(value):
    """Whether tensor Value `value` may be a list of images at run time (image_or_images)."""
    return value.static is IMAGE_OR_IMAGES
