"""Tests of the main-class choice without `--class` (porter/frontend/main_class.py): the class the file's factory
functions return wins over blocks and helpers, in the shapes torchvision, timm and user files write factories."""

import textwrap

import pytest

from porter.frontend.main_class import default_main_class
from porter.frontend.source import parse_source

HEADER = '''
import torch.nn as nn
from somewhere import build_model_with_cfg


class Block(nn.Module):
    def forward(self, x):
        return x


class Net(nn.Module):
    def __init__(self, block=Block):
        super().__init__()
        self.block = block()

    def forward(self, x):
        return self.block(x)


class NetFeatures(nn.Module):
    def forward(self, x):
        return x


class Head(nn.Module):
    def forward(self, x):
        return x
'''

CASES = {
    # torchvision: public factories hand a block to a private builder returning the model
    "private builder": ('''
def _net(block, **kwargs):
    model = Net(block, **kwargs)
    return model

def net18(**kwargs):
    return _net(Block, **kwargs)

def net34(**kwargs):
    return _net(Block, **kwargs)
''', "Net"),
    # timm: the class handed first to a builder the file does not define; a features class only on request
    "external builder, conditional features class": ('''
def _create(variant, pretrained=False, **kwargs):
    model_cls = Net
    if kwargs.pop("features_only", False):
        model_cls = NetFeatures
    model = build_model_with_cfg(model_cls, variant, pretrained, **kwargs)
    return model

def net_a(pretrained=False, **kwargs):
    return _create("net_a", pretrained, **kwargs)
''', "Net"),
    # levit / deit: `A if flag else B`, A the default
    "conditional expression": ('''
def create(variant, distilled=True, **kwargs):
    return build_model_with_cfg(NetFeatures if distilled else Net, variant, **kwargs)

def net_b(**kwargs):
    return create("net_b", **kwargs)
''', "NetFeatures"),
    # SSD: a private helper returning a part loses to the model the public factory returns
    "part from a private helper": ('''
def _head(channels):
    return Head()

def detector(**kwargs):
    head = _head(8)
    model = Net(Block)
    return model
''', "Net"),
    # no factories: the last class nothing uses or derives from (today's rule)
    "no factories": ("", "Head"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_main_class_is_what_the_factories_return(tmp_path, name):
    body, expected = CASES[name]
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(HEADER) + textwrap.dedent(body))
    assert default_main_class(parse_source(path)) == expected


def test_a_subclass_the_training_code_builds_wins_over_the_class_a_factory_returns(tmp_path):
    """kuangliu-style files: `def ResNet8(): return ResNet(BasicBlock, [1, 1])` and `class Net(ResNet)` built by the
    script with no arguments: Net is the model (ResNet needs a block class no --init-args can give)."""
    from porter.convert import choose_main_class

    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(HEADER) + textwrap.dedent('''
        def net_small():
            return Net(Block)


        class TinyNet(Net):
            def __init__(self):
                super().__init__(Block)
    '''))
    source = parse_source(path)
    assert choose_main_class(source, None, "TinyNet") == "TinyNet"
    assert choose_main_class(source, None, "Head") == "Net"  # not a subclass: the factory's class still wins
    assert choose_main_class(source, None, None) == "Net"


LOSS_LAST = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x


class MaskedCELoss(nn.CrossEntropyLoss):
    def forward(self, pred, label):
        return super().forward(pred, label)


def train(net):
    loss = MaskedCELoss()
    for x, y in []:
        loss(net(x), y).backward()
'''


def test_a_loss_closing_the_file_is_not_the_model(tmp_path):
    from porter.convert import choose_main_class

    path = tmp_path / "lib.py"
    path.write_text(LOSS_LAST)
    source = parse_source(path)
    assert default_main_class(source) == "Model"
    assert choose_main_class(source, None, "MaskedCELoss") == "Model"  # what the training code builds


EXPORTED = """
import torch.nn as nn

__all__ = ["Net", "Merging"]


class Net(nn.Module):
    def __init__(self, mode="merging"):
        super().__init__()
        self.merge = MODES[mode]()

    def forward(self, x):
        return self.merge(x)


class MergingV2(nn.Module):
    def forward(self, x):
        return x


class Merging(MergingV2):
    pass


MODES = {"merging": Merging, "mergingv2": MergingV2}
"""


def test_the_first_class_the_file_exports_is_the_model(tmp_path):
    """MONAI's swin_unetr.py: `PatchMerging`, constructed only through a dict of modes, read as no one's part and
    came last, so it was the main class; the file's `__all__` names SwinUNETR first."""
    path = tmp_path / "exported.py"
    path.write_text(EXPORTED)
    assert default_main_class(parse_source(path)) == "Net"
