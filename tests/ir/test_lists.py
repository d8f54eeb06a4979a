"""Growing lists (porter/ir/lists.py): the first item put in decides the layout every item shares; a read before
any item went in keeps torch's layout; the decision is shared by every copy of the variable's Value."""

from porter.ir.lists import GrowingList, decide, growing, images_held, read, resolved, starred_images
from porter.ir.values import Value, python, tensor


def _empty(name="xs"):
    return python(name).but(static=GrowingList())


def test_a_channels_last_image_first_makes_a_list_of_images():
    xs = _empty()
    assert decide(growing(xs), tensor("conv(x)", 4, "channels_last")).channels_last
    copy = xs.with_code("ys")  # (the environment saved before a branch holds the same list)
    seen = read(copy)
    assert seen.kind == "tuple" and seen.items is None and images_held(seen).rank == 4
    assert decide(growing(xs), tensor("t", 4)).channels_last  # later items: converted to the list's layout


def test_other_first_items_or_an_early_read_keep_torch_layout():
    for first in (tensor("t", 4), tensor("v", 2, "channels_last"), python("3")):
        xs = _empty()
        assert decide(growing(xs), first) is None and images_held(read(xs)) is None
    xs = _empty()
    assert read(xs) is xs  # read while empty: plain from now on
    assert decide(growing(xs), tensor("conv(x)", 4, "channels_last")) is None


def test_resolving_decides_nothing():
    xs = _empty()
    assert resolved(xs) is xs and not growing(xs).decided


def test_a_starred_list_of_images_hands_its_template():
    images = Value("*xs", "starred", static=("each", tensor("", 4, "channels_last")))
    assert starred_images(images).rank == 4
    assert starred_images(Value("*xs", "starred")) is None
    assert starred_images(Value("*xs", "starred", static=("each", tensor("", 4)))) is None
