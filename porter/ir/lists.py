"""Lists a body starts empty and fills (`x_list = []`, then `x_list.append(...)`): the layout their items share.

A list that starts empty has no items to read a layout from. The first item put in decides it: a channels-last
image makes the list hold channels-last images (every later item is converted to that layout when it goes in, and
readers get the image as it is stored); anything else, or a read before any item went in (a loop reading what an
earlier iteration appended), makes it a plain list in torch's layout, as before. The decision is shared by every
copy of the variable's Value (the environments saved around branches and loops hold the same `GrowingList`), so
every path of the body puts items in and reads them in one layout.

A table a body starts empty and uses only through keys (segmentation_models_pytorch's UNet++ decoder:
`dense_x = {}`, `dense_x[f"x_{i}_{j}"] = block(...)`, read back by key; `outs = [None] * n`; a grid
`[[None] * n for _ in range(m)]` used as `grid[i][j]`) is decided the same way by its first stored value
(`GrowingTable`). A dict table of channels-last images a body returns whole (torchvision's IntermediateLayerGetter:
`out = OrderedDict()`, `out[name] = x`, `return out`) reaches its callers as a `HeldTable`: they read its values
by key as they lie; any other use of it sees the dict with every value in torch's layout.
"""

from dataclasses import dataclass

from porter.ir.layout import element_template
from porter.ir.values import IMAGE_OR_IMAGES, Value, python


class GrowingList(list):
    """The `static` of an empty list literal a body binds to a variable: an empty Python list (what `[]` is to
    code reading statics) that also records the layout its items get once decided."""

    def __init__(self):
        super().__init__()
        self.template = None  # the Value every item shares (channels-last images), once decided
        self.plain = False  # decided: items in torch's layout (not a list of channels-last images)
        self.plain_items = None  # a plain list's shared item: a tuple of tensors in torch's layout (`states.append(
        # cell.init_hidden(...))` of (h, c) pairs), while every item put in is alike

    @property
    def decided(self):
        return self.plain or self.template is not None


class GrowingTable:
    """The `static` of an empty table a body binds to a variable it uses only through `depth` keys (`d[key]`,
    `grid[i][j]`, stores and reads: frontend/names.py keyed_depth): the layout its values get once decided (as
    GrowingList's)."""

    def __init__(self, depth):
        self.depth = depth
        self.template = None
        self.plain = False
        self.read_first = False  # decided plain by a read before any value went in
        self.first_image = None  # then, the template of the first value stored, where it is a channels-last image

    @property
    def decided(self):
        return self.plain or self.template is not None


@dataclass(frozen=True)
class HeldTable:
    """The static of a dict a block returned whose values are channels-last images (torchvision's
    IntermediateLayerGetter's features): `item`, the Value each of its values is (code empty); `raw`, the code of
    the dict as it lies, which `d[key]` reads. The Value's own code gives the dict with every value in torch's
    layout (`each_image(to_channels_first, d)`), so a reader porter does not follow (`d.items()`, `list(d.values())`,
    a call handed `d`) is never handed channels-last images."""

    item: Value
    raw: str

    def read(self, key_code):
        """What `d[key]` reads: the item template, as it lies in the dict."""
        return self.item.with_code(f"{self.raw}[{key_code}]")


def features_in_torch_layout(ctx, code):
    """Code giving the dict `code` holds with every value in torch's layout (its channels-last images converted)."""
    return f"{ctx.use('each_image')}({ctx.use('to_channels_first')}, {code})"


def held_features(ctx, item, raw):
    """The Value of a dict of channels-last features held as it lies under code `raw` (a HeldTable whose own code
    gives it in torch's layout)."""
    return python(features_in_torch_layout(ctx, raw), static=HeldTable(item, raw))


def held_beside_untyped(value_a, value_b):
    """The one of two paths' Values that is a tensor held out of torch's order, or a list of channels-last images
    (an FPN's `results`, rebound on one path by `results, names = self.extra_blocks(...)`), where the other is a
    value porter cannot type (not a tensor, a tuple, None or a constant), else None."""
    if not (isinstance(value_a, Value) and isinstance(value_b, Value)):
        return None
    for held, other in ((value_a, value_b), (value_b, value_a)):
        unknown = other.kind == "python" and other.static is None and other.code not in ("None",) and \
            other.layout != "raises" and not other.may_be_none
        if unknown and held.is_tensor and held.layout != "source":
            return held
        if (unknown or other.is_tensor and other.layout == "source" and other.rank is None) and \
                images_held(held) is not None:  # (what `results, names = call_module(...)` unpacks: a tensor)
            return held
    return None


def images_alike(values):
    """The template the values of a dict built in one go share (`{"a": a, "b": b}`, `OrderedDict([("a", a), ...])`
    of a backbone's stages) when each is an image held channels-last, else None: such a dict is held as it lies
    (a HeldTable)."""
    values = list(values)
    if not values or not all(holds_images(v) for v in values):
        return None
    ranks = {v.rank for v in values}
    return values[0].with_code("").but(channels=None, static=None, rank=ranks.pop() if len(ranks) == 1 else None)


def returned_table(value):
    """The channels-last item template of the growing table `value` holds, when a body may return it to callers
    reading it by key (a table of depth 1 whose values are channels-last images), else None."""
    cells = growing_table(value)
    return cells.template if cells is not None and cells.depth == 1 and cells.template is not None else None


def growing_table(value):
    """The GrowingTable `value` (a variable bound to an empty table) holds, or None."""
    return value.static if isinstance(value, Value) and isinstance(value.static, GrowingTable) else None


def table_item(cells, code):
    """What `d[key]` (code `code`) reads from a growing table: its template where its values are channels-last
    images; a read before any value went in makes it a plain table (None: a plain value)."""
    if not cells.decided:
        cells.plain = cells.read_first = True
    return cells.template.with_code(code) if cells.template is not None else None


def relaid_in_loop(tables):
    """The growing tables of `tables` (undecided when a loop began) that its body decided plain by reading before
    storing (`x_in = stem(x) if i == 0 else feats[i - 1]`, then `feats[i] = conv(x_in)`: the read is of what an
    earlier turn stored) though the first value stored is a channels-last image: they now hold such images, for the
    body to be translated again."""
    relaid = [t for t in tables if t.plain and t.read_first and t.first_image is not None]
    for table in relaid:
        table.plain, table.read_first, table.template = False, False, table.first_image
    return relaid


def growing(value):
    """The GrowingList `value` (a variable bound to `[]`) holds, or None."""
    return value.static if isinstance(value, Value) and isinstance(value.static, GrowingList) else None


def holds_images(item):
    """Whether `item` is an image a growing list keeps channels-last (a tensor of rank > 2, or of unknown rank as a
    module call's channels-last result)."""
    return item.is_tensor and item.layout == "channels_last" and (item.rank is None or item.rank > 2)


def decide(cells, item):
    """The first item put in a growing list decides its layout: returns the template the item goes in as (None: a
    plain list, the item in torch's layout)."""
    if isinstance(cells, GrowingTable) and cells.read_first and cells.first_image is None and holds_images(item):
        cells.first_image = item.with_code("").but(channels=None, static=None)
    if not cells.decided:
        if holds_images(item):
            cells.template = item.with_code("").but(channels=None, static=None)
        else:
            cells.plain = True
            cells.plain_items = _tensor_pair(item) if isinstance(cells, GrowingList) else None
    elif getattr(cells, "plain_items", None) is not None and _held_as(_tensor_pair(item)) != _held_as(
            cells.plain_items):
        cells.plain_items = None  # (items of other kinds: read as plain values)
    return cells.template


def _tensor_pair(item):
    """The template of `item` when it is a tuple of known items, each a tensor of known rank in torch's layout (a
    recurrent cell's `(h, c)`), else None."""
    if item.kind != "tuple" or not item.items or not all(
            i.is_tensor and i.layout == "source" and i.rank is not None for i in item.items):
        return None
    return Value("", "tuple", items=tuple(i.with_code("").but(channels=None, static=None) for i in item.items))


def _held_as(template):
    """What a tuple template holds, item by item (rank, layout); None for none."""
    return None if template is None else tuple((i.rank, i.layout) for i in template.items)


def resolved(value):
    """`value` as a read would see it, without deciding anything (a growing list still empty stays as it is)."""
    cells = growing(value)
    if cells is None or cells.template is None:
        return value
    return Value(value.code, "tuple", items=None, static=("each", cells.template))


def images_held(value):
    """The template of the channels-last images list-valued `value` holds (every item alike), or None."""
    value = resolved(value) if isinstance(value, Value) else value
    if not isinstance(value, Value) or value.kind != "tuple":
        return None
    template = element_template(value)
    return template if template is not None and holds_images(template) else None


def image_or_images(first, second):
    """The Value callers take from a body returning Values `first` and `second`, one a channels-last image and the
    other a list of such images (of a length porter does not know: one it grew): the image, held channels-last and
    marked IMAGE_OR_IMAGES (None where the two are not so)."""
    image, images = (first, second) if first.is_tensor else (second, first)
    if not image.is_tensor or not holds_images(image) or images_held(images) is None or \
            resolved(images).items is not None:  # (a tuple of known items is unpacked: `return x, x_pre_activ`)
        return None
    return Value("", "tensor", rank=image.rank, layout="channels_last", static=IMAGE_OR_IMAGES)


def read(value):
    """What a read of variable `value` gives: a growing list of channels-last images as a list of unknown length
    whose items share its template; a growing list read before any item went in becomes a plain list (what
    earlier code emitted for it reads torch's layout)."""
    cells = growing(value)
    if cells is None:
        return value
    if not cells.decided:
        cells.plain = True
    if cells.template is None:
        if cells.plain_items is not None:  # (a list of tuples of tensors in torch's layout: `h, c = states[i]`)
            return Value(value.code, "tuple", items=None, static=("each", cells.plain_items))
        return value
    return Value(value.code, "tuple", items=None, static=("each", cells.template))


def starred_images(value):
    """The template of the channels-last images a starred argument hands over (`block(*features)` of a list that
    holds them), or None (its items in torch's layout)."""
    template = element_template(value.but(kind="tuple"))
    return template if template is not None and holds_images(template) else None


def images_with_starred(items):
    """The template of the channels-last images a list display holds when one of its items is a starred list of
    unknown length holding them and every other item is such an image (of one rank), else None."""
    starred = [i for i in items if i.code.startswith("*") and i.kind in ("tuple", "starred") and i.items is None]
    if not starred or any(not i.code.startswith("*") and not (i.is_tensor and i.channels_last) for i in items):
        return None
    templates = [element_template(i.but(kind="tuple")) if i in starred else i for i in items]
    if any(t is None or not t.is_tensor or not t.channels_last or (t.rank or 0) <= 2 for t in templates) or \
            len({t.rank for t in templates}) != 1:
        return None
    return templates[0].with_code("").but(channels=None, static=None)
