"""A dict literal of what the model computes (`result = {"out": self.cls(x)}`, torchvision's segmentation models'
outputs) holds its tensors in torch's order, as an item assigned later does: the port returned the channels-last
image in it (and `result["out"][:, :1]` sliced the wrong axis). A tensor's `requires_grad`, which models test to pick
gradient checkpointing, is False in the port (no TensorFlow tensor carries the flag; the branches compute the same):
`x.requires_grad` raised. A dict comprehension is translated as a list comprehension is (`nn.ModuleDict({t:
nn.Conv2d(...) for t in tasks})` kept torch's `nn.Conv2d`: porter's own check refused the port), its values in torch's
order. Compared with torch on drawn sizes, eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp


class Body(nn.Module):
    def __init__(self, channels, use_checkpoint=True):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        if self.use_checkpoint and x.requires_grad:
            return cp.checkpoint(self.convs, x)
        return self.convs(x)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.body = Body(6)
        self.cls = nn.Conv2d(6, 4, 1)
        self.aux = nn.Conv2d(6, 2, 1)

    def forward(self, x):
        f = self.body(self.stem(x))
        result = {"out": self.cls(f), "features": [f, f * 2.0], "scale": 2, "name": None}
        result["aux"] = F.interpolate(self.aux(f), size=x.shape[-2:], mode="bilinear", align_corners=False)
        result["out"] = result["out"][:, :3] + result["aux"].mean((2, 3), keepdim=True)[:, :1]
        return {key: value for key, value in result.items() if key in ("out", "aux", "features")}
'''


COMPREHENSIONS = '''
from collections import OrderedDict
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, tasks=("seg", "depth")):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.heads = nn.ModuleDict({t: nn.Conv2d(8, 2 if t == "seg" else 1, 1) for t in tasks})
        self.fpn = nn.ModuleList([nn.Conv2d(8, 4, 1), nn.Conv2d(8, 4, 3, padding=1)])

    def forward(self, x):
        f = self.backbone(x)
        outs = {name: F.interpolate(head(f), scale_factor=2, mode="nearest") for name, head in self.heads.items()}
        feats = OrderedDict()
        for i, conv in enumerate(self.fpn):
            feats["p%d" % i] = conv(f)
        outs["fpn"] = torch.cat(list(feats.values()), 1).sum(1, keepdim=True)
        return outs
'''
SOURCES = {"dicts": MODEL, "comprehensions": COMPREHENSIONS}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), SOURCES[name]))


@pytest.mark.parametrize("name", sorted(SOURCES))
@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 4, 7]), width=st.sampled_from([2, 5, 8]),
       seed=st.integers(0, 2**16))
def test_dict_outputs_match_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], what=f"{name} x{x.shape}")
    assert_same_outputs(ported(name), [x], what=f"{name} XLA x{x.shape}", jit=True)


def test_dict_outputs_convert_once_each(ported):
    x = random_input(0, (2, 3, 8, 6))
    # the input's, and each image's on its way into the dict (out, aux, the two features)
    assert count_transposes(ported("dicts").keras_model, [x]) <= 5
