"""Module-level functions the file reads as values (`Unit(c, shuffle)`, a block keeping `self.shuffle = shuffle` and
calling `self.shuffle(y, 4)`): whatever holds one calls it through `call_module`, which hands it an image in torch's
layout, so the function's own name is its translation for torch's layout returning it so (before: a shuffle whose
permute was returned pending, or one translated for the channels-last image a direct caller handed it, gave wrong
numbers: 0.13 and 0.26 relative error); a caller handing a channels-last image directly calls a variant translated
for it (`shuffle_channels_last`), which `call_module` also calls on a channels-last image (`held_variants`: the
blocks holding the function convert nothing; a shuffle net built through a factory traced 5 to 9 Transposes, now
the boundary's). Both match torch, held by a factory function too (`net(shuffle)`)."""

import pytest

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


def shuffle(x, groups):
    b, c, h, w = x.shape
    return x.reshape(b, groups, -1, h, w).permute(0, 2, 1, 3, 4).reshape(b, c, h, w)


class Direct(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x):
        return shuffle(self.conv(x), 2)


class Handed(nn.Module):
    def __init__(self, c, fn):
        super().__init__()
        self.fn = fn
        self.conv = nn.Conv2d(c, c, 3, padding=1, groups=2)

    def forward(self, x):
        return self.conv(self.fn(x, 2))


def stage(fn, c):
    return nn.Sequential(Handed(c, fn), Handed(c, fn))


class Net(nn.Module):
    def __init__(self, order="direct_first"):
        super().__init__()
        self.order = order
        self.stem = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.direct = Direct(4)
        self.handed = Handed(4, shuffle)
        self.stage = stage(shuffle, 4)

    def forward(self, x):
        x = self.stem(x)
        if self.order == "direct_first":
            x = self.handed(self.direct(x))
        else:
            x = self.direct(self.handed(x))
        return self.stage(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "3,9,10", "order")


@pytest.mark.parametrize("order", ["direct_first", "handed_first"])
def test_a_function_read_as_a_value_matches_torch(ported, order):
    pair = PortedPair(ported(order), seed=2)
    for batch in (1, 2):
        x = random_input(batch, (batch, 3, 9, 10))
        assert_same_outputs(pair, [x], tolerance=1e-5)
        assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
        assert count_transposes(pair.keras_model, [x]) <= 2  # (the boundary's)


def test_its_direct_caller_takes_a_variant_for_its_layout(ported):
    code = (ported("direct_first") / "op_model_keras.py").read_text()
    assert "def shuffle_channels_last(" in code and "return shuffle_channels_last(self.conv(x), 2)" in code, code
    assert "returned before its permute" not in code
    assert 'shuffle.held_variants = {("channels_last", 4): shuffle_channels_last}' in code
