"""porter.passes.elementwise_callables: which callables an attribute may hold and still pass its input's layout
through (timm's GammaAct: `self.act_fn = get_act_fn(act_type)`, a function from a module-level registry), and which
it may not: a registry holding an op that names an axis, one grown where porter does not follow it, a function that
hands back whatever callable it was given."""

import textwrap

import libcst as cst
import pytest

from porter.frontend.source import parse_source
from porter.passes.elementwise_callables import is_elementwise_reference, returns_elementwise_callable

SOURCE = '''
from torch import nn
import torch
import torch.nn.functional as F


class SwishFn(torch.autograd.Function):
    @staticmethod
    def symbolic(g, x):
        return g.op("Mul", x, g.op("Sigmoid", x))

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.saved_tensors[0]
        s = torch.sigmoid(x)
        return grad_output * (s * (1 + x * (1 - s)))


def swish_me(x, inplace=False):
    return SwishFn.apply(x)


def swish(x, inplace: bool = False):
    return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())


def hard_mish(x, inplace=False):
    return 0.5 * x * (x + 2).clamp(min=0, max=2)


def channel_softmax(x, inplace=False):
    return F.softmax(x, dim=1)


def flattened(x, inplace=False):
    return x.reshape(x.shape[0], -1)


ACTS = dict(silu=F.silu if HAS_SILU else swish, me=swish_me, hard_mish=hard_mish, relu=F.relu)
WITH_AXIS = {"relu": F.relu, "softmax": channel_softmax}
GROWN = dict(relu=F.relu)
GROWN["flat"] = flattened


def get_act(name="relu"):
    if not name:
        return None
    if callable(name):
        return name
    return ACTS[name.lower()]


def get_with_axis(name):
    return WITH_AXIS[name]


def get_grown(name):
    return GROWN[name]


def nothing(name):
    return None


class Holder(nn.Module):
    def __init__(self, act: str = "relu", other="relu"):
        super().__init__()
        self.a = get_act(act)
        self.b = get_act("silu")
        self.c = get_act(other)
        self.d = get_with_axis(act)
        self.e = get_grown(act)
        self.f = nothing(act)

    def forward(self, x):
        return x
'''


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("callables") / "acts.py"
    path.write_text(textwrap.dedent(SOURCE))
    return parse_source(path)


def _expression(code):
    return cst.parse_expression(code)


@pytest.mark.parametrize("code, expected", [
    ("F.relu", True), ("torch.sigmoid", True), ("swish", True), ("hard_mish", True),
    ("swish_me", True),  # an autograd Function applied: its ONNX `symbolic` is not run
    ("F.silu if HAS_SILU else swish", True),
    ("F.softmax", False), ("channel_softmax", False), ("flattened", False), ("F.silu if HAS_SILU else flattened", False),
    ("undefined_name", False),
])
def test_elementwise_references(source, code, expected):
    assert is_elementwise_reference(source, _expression(code)) is expected


@pytest.mark.parametrize("attribute, expected", [
    ("a", True),  # a `str` parameter: the `return name` of a callable handed in is not taken
    ("b", True),  # a string literal
    ("c", False),  # an unannotated parameter: a callable may come in, and comes back as it is
    ("d", False),  # the registry holds a softmax over dim 1
    ("e", False),  # the registry grows by `GROWN["flat"] = ...`
    ("f", False),  # None only: no activation
])
def test_registry_functions_returned(source, attribute, expected):
    init = source.classes["Holder"].find_method("__init__")
    call = next(s.body[0].value for s in init.body.body
                if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign) and
                s.body[0].targets[0].target.attr.value == attribute)
    assert returns_elementwise_callable(source, call, init) is expected
