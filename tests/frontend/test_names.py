"""porter/frontend/names.py keyed_depth: which variables a body uses only as tables of values by key (a dict of
feature maps `dense_x[f"x_{i}_{j}"]`, a grid `grid[i][j]`), whose values the translator may hold in one layout;
names_bound_in: the names a body's statements bind."""

import libcst as cst
import pytest

from porter.frontend.names import keyed_depth, names_bound_in

CASES = {
    # a dict filled in a loop and read by key (segmentation_models_pytorch's UNet++ decoder)
    """
d = {}
for i in range(3):
    if i == 0:
        d[f"a{i}"] = x
    else:
        c = [d[f"a{k}"] for k in range(i)]
        d[f"a{i}"] = c[0]
out = d["a2"]
""": 1,
    "d = dict()\nd[0] = x\ny = d[0] + 1\n": 1,
    "d = [None] * n\nd[1] = x\ny = d[1]\n": 1,
    "d = [None for _ in range(n)]\nd[i] = x\n": 1,
    "d = [[None] * 3 for _ in range(3)]\nd[1][2] = x\ny = d[1][2]\n": 2,
    # not tables used only by key: handed on whole, iterated, sliced, read partially, bound twice, bound to values
    "d = {}\nd[1] = x\nreturn_it(d)\n": None,
    "d = {}\nfor v in d.values():\n    pass\n": None,
    "d = [None] * 3\nd[1] = x\ny = d[1:]\n": None,
    "d = [[None] * 3 for _ in range(3)]\nd[1][2] = x\ny = d[1]\n": None,
    "d = {}\nd = {}\n": None,
    "d = {'a': x}\ny = d['a']\n": None,
    "d = [x] * 3\ny = d[0]\n": None,
    "e = {}\n": None,
}


@pytest.mark.parametrize("code", list(CASES))
def test_keyed_depth(code):
    body = cst.parse_module(code)
    assert keyed_depth(body, "d") == CASES[code]


def test_attribute_and_keyword_names_are_not_the_variable():
    body = cst.parse_module("d = {}\nd[0] = self.d\nf(d=1)\ny = d[0]\n")
    assert keyed_depth(body, "d") == 1


def test_names_bound_in_reads_every_assignment_and_loop_targets_on_request():
    body = cst.parse_module("a = b = f()\nc, (d, [e]) = g\nh += 1\ni: int = 2\nfor j, k in z:\n    m = j\nx[0] = 1\n")
    assert names_bound_in(body) == {"a", "b", "c", "d", "e", "h", "i", "m"}
    assert names_bound_in(body, loop_targets=True) == {"a", "b", "c", "d", "e", "h", "i", "m", "j", "k"}


REGISTRY = '''
import torch
import torch.nn as nn
from somewhere import register_model

Conv = LayerFactory(name="conv")
Act = LayerFactory(name="act")


@Conv.factory_function("conv")
def conv_factory(dim):
    return (nn.Conv1d, nn.Conv2d, nn.Conv3d)[dim - 1]


Act.add_factory_class("relu", nn.ReLU)
torch.manual_seed(0)


@register_model
def resnet(): ...
'''


def test_registrations_fill_the_registry_they_call_into():
    """MONAI's `@Conv.factory_function(...)` definitions and `Act.add_factory_class(...)` calls register into a
    name the module assigns: they come with it. A bare decorator (`@register_model`) and a call on an imported name
    (`torch.manual_seed(0)`) fill nothing the module binds."""
    from porter.frontend.names import registered_names, top_level_bindings

    module = cst.parse_module(REGISTRY)
    bindings = top_level_bindings(module)
    code = {name: [module.code_for_node(s).strip().splitlines()[0] for s in statements]
            for name, statements in bindings.items()}
    assert code["Conv"] == ['Conv = LayerFactory(name="conv")', '@Conv.factory_function("conv")']
    assert code["Act"] == ['Act = LayerFactory(name="act")', 'Act.add_factory_class("relu", nn.ReLU)']
    assert "torch" not in bindings and "register_model" not in bindings
    assert [registered_names(s) for s in module.body][-3:] == [["Act"], ["torch"], []]
