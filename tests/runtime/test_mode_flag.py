"""torch's mode flag on ported modules: `module.training`, `train(mode)`, `eval()`. timm's HybridEmbed sizes its
projection by running its backbone in its constructor, in eval mode, restoring each module's flag after
(`training = [(m, m.training) for m in self.backbone.modules()]`, `self.backbone.eval()`, ...): the port raised
"'MbConvStages' object has no attribute 'training'" (vitamin.py). The flag decides nothing in the port (a call's
mode is Keras' `training` argument); it is there for model code that reads or sets it. The block run in the
constructor (on a tensor the translation converted channels-last) took it for a model's input and converted it again
(a conv raised on (1, 16, 3, 16)): a class called in a constructor runs as a call inside the model
(`call_in_constructor`)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(6)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class OpModel(nn.Module):
    def __init__(self, img_size=16):
        super().__init__()
        self.backbone = Backbone()
        training = [(m, m.training) for m in self.backbone.modules()]
        try:
            self.backbone.eval()
            o = self.backbone(torch.zeros(1, 3, img_size, img_size))
        finally:
            for module, was_training in training:
                module.training = was_training
        self.feature_dim = o.shape[1]
        self.head = nn.Linear(self.feature_dim, 5)

    def forward(self, x):
        return self.head(self.backbone(x).mean((2, 3)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("mode_flag"), textwrap.dedent(SOURCE), input_specs=("3,16,16",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.sampled_from([1, 2]))
def test_a_model_sizing_itself_in_eval_mode_matches_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, 16, 16))], tolerance=1e-4)


def test_train_and_eval_set_the_flag_on_every_submodule(pair):
    model = pair.keras_model
    assert model.training and model.backbone.bn.training  # torch's modules start in training mode
    assert model.eval() is model
    assert not model.training and not model.backbone.training and not model.backbone.conv.training
    model.train()
    assert model.training and model.head.training
    model.backbone.train(False)
    assert model.training and not model.backbone.bn.training
