"""Detection heads that return per-level lists (RetinaNet / FCOS style: `cls_logits, bbox_reg = [], []`, appended
per FPN level, `return cls_logits, bbox_reg`; the caller flattens each level with `permute(0, 2, 3, 1).reshape(B,
-1, K)` and concatenates). The head converted every level to torch's order at its return and the caller's permutes
moved them back (a RetinaNet: 13 Transposes, an FCOS head: 8; the tuple-unpacked empty lists were not even taken
for lists the first item decides). Lists of channels-last images in a returned tuple now stay as they are held
(the caller reads their layout from the template), and `a, b = [], []` makes each a list its first item decides: 1
Transpose (the model's entry), the permutes and reshapes free."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, c=8, num_anchors=2, num_classes=3):
        super().__init__()
        self.num_classes = num_classes
        self.cls_tower = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.cls_logits = nn.Conv2d(c, num_anchors * num_classes, 3, padding=1)
        self.bbox_pred = nn.Conv2d(c, num_anchors * 4, 3, padding=1)

    def forward(self, features):
        logits, bbox_reg = [], []
        for feature in features:
            logits.append(self.cls_logits(self.cls_tower(feature)))
            bbox_reg.append(torch.relu(self.bbox_pred(feature)))
        return logits, bbox_reg


def permute_to_N_HWA_K(tensor, K):
    N, _, H, W = tensor.shape
    tensor = tensor.view(N, -1, K, H, W)
    tensor = tensor.permute(0, 3, 4, 1, 2)
    return tensor.reshape(N, -1, K)


class OpModel(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.num_classes = num_classes
        self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
        self.c2 = nn.Conv2d(8, 8, 3, 2, 1)
        self.head = Head(8, 2, num_classes)

    def forward(self, x):
        f1 = self.c1(x)
        f2 = self.c2(f1)
        logits, boxes = self.head([f1, f2])
        B = x.shape[0]
        cls = torch.cat([permute_to_N_HWA_K(f, self.num_classes) for f in logits], dim=1)
        box = torch.cat([f.permute(0, 2, 3, 1).reshape(B, -1, 4) for f in boxes], dim=1)
        return cls, box
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("head_lists"), textwrap.dedent(SOURCE), input_specs=("3,16,16",))


def test_levels_stay_channels_last(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "to_channels_first(self.cls_logits" not in code
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 16, 16))) <= 1


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([8, 12, 16]),
       width=st.sampled_from([4, 16]))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
