"""Tests of porter/frontend/library_idioms.py: the source rewrites keep every line where it is."""

import libcst as cst

from porter.frontend.imports import ImportTable
from porter.frontend.library_idioms import module_aliases, normalised_text

SOURCE = '''import sys
import torch
from torch import nn
nn_Module = nn.Module
d2l = sys.modules[__name__]


class Net(d2l.nn_Module):
    def __init__(self, a, b=2, *, c=3, _private=4):
        super().__init__()
        self.save_hyperparameters(ignore=['b'])
        y = d2l.astype(a == b, d2l.int64)


concat = torch.cat
concat = torch.cat
tanh = torch.tanh
tanh = torch.sigmoid
astype = lambda x, *args, **kwargs: x.type(*args, **kwargs)
int64 = torch.int64
'''


def test_rewrites_keep_lines():
    text = normalised_text(SOURCE)
    lines = text.splitlines()
    assert len(lines) == len(SOURCE.splitlines())
    assert lines[7] == "class Net(nn_Module):"
    assert lines[10].strip() == "self.a = a; self.c = c"  # ignore=['b'], underscored names are not saved
    assert lines[11].strip() == "y = (a == b).type(int64)"


def test_a_file_without_the_idioms_is_unchanged():
    plain = "import torch\nx = torch.zeros(3)\n"
    assert normalised_text(plain) is plain


def test_module_aliases_are_the_names_bound_only_to_one_framework_name():
    module = cst.parse_module(SOURCE)
    aliases = module_aliases(module, ImportTable.from_module(module))
    assert aliases["nn_Module"] == "torch.nn.Module"
    assert aliases["concat"] == "torch.cat"
    assert aliases["int64"] == "torch.int64"
    assert "tanh" not in aliases  # bound to two different names
    assert aliases.get("astype") is None  # Tensor.type has no torch.type function


def test_dunder_attribute_calls_become_the_builtins_on_the_same_lines():
    text = '''class Tree(nn.Module):
    def __init__(self, levels):
        super().__init__()
        for i in range(1, levels):
            self.__setattr__("level_%d" % i, nn.Identity())

    def forward(self, x):
        for i in range(1, self.levels):
            x = self.__getattr__("level_%d" % i)(x)
        return x

    def __getattr__(self, name):
        return super().__getattr__(name)
'''
    rewritten = normalised_text(text)
    assert rewritten.splitlines()[4].strip() == 'setattr(self, "level_%d" % i, nn.Identity())'
    assert rewritten.splitlines()[8].strip() == 'x = getattr(self, "level_%d" % i)(x)'
    assert "return super().__getattr__(name)" in rewritten  # a base's lookup is no builtin call
    assert rewritten.count("\n") == text.count("\n")


def test_dunder_attribute_calls_of_other_shapes_stay():
    text = "y = self.__getattr__(name, default)\nz = self.__setattr__(name)\nw = obj.__getattr__(*names)\n"
    assert normalised_text(text) == text


def test_torchscript_isinstance_is_the_builtin_unless_the_class_is_a_typing_generic():
    text = ("def f(x, y):\n    if torch.jit.isinstance(x, torch.Tensor) and jit.isinstance(y, (int, float)):\n"
            "        return x\n    return torch.jit.isinstance(y, List[torch.Tensor])\n")
    assert normalised_text(text) == (
        "def f(x, y):\n    if isinstance(x, torch.Tensor) and isinstance(y, (int, float)):\n"
        "        return x\n    return torch.jit.isinstance(y, List[torch.Tensor])\n")
