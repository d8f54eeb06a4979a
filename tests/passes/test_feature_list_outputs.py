"""A main class returning a list of feature maps (a backbone's stages: SegFormer's MiT, an FPN's inputs) hands each
through `self.io_output`: in torch's layout by default, channels-last for a model told it exchanges channels-last
images (`channels_last_io = True`). Before, the list was converted item by item to torch's layout whatever the
model was told."""

import numpy as np

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([nn.Conv2d(3, 4, 3, 2, 1), nn.Conv2d(4, 8, 3, 2, 1), nn.Conv2d(8, 8, 3, 2, 1)])

    def forward(self, x):
        outs = []
        for stage in self.stages:
            x = torch.relu(stage(x))
            outs.append(x)
        return outs
'''


def test_feature_maps_follow_the_models_io_layout(tmp_path_factory):
    out = snippet_ports(tmp_path_factory, SOURCE, "3,16,16")(None)
    pair = PortedPair(out, seed=1)
    x = random_input(1, (2, 3, 16, 13))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    model = pair.keras_model
    plain = [np.asarray(t) for t in model(x)]
    model.channels_last_io = True
    held = [np.asarray(t) for t in model(np.transpose(x, (0, 2, 3, 1)))]
    for torch_order, channels_last in zip(plain, held, strict=True):
        np.testing.assert_allclose(np.transpose(torch_order, (0, 2, 3, 1)), channels_last, atol=1e-6)
