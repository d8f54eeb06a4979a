"""A return that is a dict on one side of a conditional expression and a list of images on the other (timm's
`forward_intermediates`: `{"image_intermediates": intermediates} if output_dict else intermediates`).

Before: the dict's images were converted to torch's layout inside it, then the whole expression went through the
list's conversion (`each_image(..., {...} if flag else feats)`), which iterated the dict's keys (an AttributeError
when the dict was returned); where the list was converted by a comprehension the expression stood unparenthesised
as its iterable (`for _each in {...} if flag else feats` reads `if flag` as the comprehension's filter: the port did
not compile, a porter internal error on timm's deepseek_vit.py). Each part is now in torch's layout on its own, and
a conditional iterable is parenthesised (porter/ir/values.py `iterable_code`). A list or an image on either side
(`output if output else input`, pretrainedmodels' LambdaMap) keeps its layouts as before: a first version made those
plain too and cost pretrainedmodels' ResNeXt 158 Transposes.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.ir.values import iterable_code
from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, as_dict=False):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 5, 3, stride=2, padding=1)])
        self.as_dict = as_dict

    def forward(self, x):
        feats = []
        for conv in self.convs:
            x = torch.relu(conv(x))
            feats.append(x)
        return {"feats": feats} if self.as_dict else feats
'''


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "3,9,9", argument="as_dict")


@pytest.mark.parametrize("as_dict", [False, True])
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2**16), size=st.sampled_from([5, 9, 12]))
def test_either_side_returns_what_torch_returns(ports, as_dict, seed, size):
    pair = PortedPair(ports(as_dict), seed=seed, init_args={"as_dict": as_dict})
    x = random_input(seed, (1, 3, size, size))
    assert_same_outputs(pair, [x])
    assert_same_outputs(pair, [x], jit=True)


def test_a_conditional_iterable_is_parenthesised():
    assert iterable_code("a if flag else b") == "(a if flag else b)"
    assert iterable_code("lambda: x") == "(lambda: x)"
    assert iterable_code("(a if flag else b)") == "(a if flag else b)"
    assert iterable_code("self.items") == "self.items"
