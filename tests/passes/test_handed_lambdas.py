"""A container keeping a function on `self` that its constructor takes with a lambda default and calls with each
child (`Residuals(scheme=(lambda module, x: module(x) + x))`, as pytorchcv's `DualPathSequential` keeps
`dual_path_scheme`): no construction hands it, so the default is the function every instance holds
(passes/function_attributes.py). Called with the loop's child (any one of the container's children) and an image
held channels-last, the lambda translated for each child is the code it is written as, so the instance's own
function runs on the image as it is held. Before, the function was called on an image in torch's layout and handed
it to channels-last children as it was: the port ran and gave wrong numbers."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
from torch import nn


class Residuals(nn.Sequential):
    def __init__(self, scheme=(lambda module, x: module(x) + x)):
        super().__init__()
        self.scheme = scheme

    def forward(self, x):
        for module in self._modules.values():
            x = self.scheme(module, x)
        return x


class Block(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return self.norm(self.conv(x)).relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.body = Residuals()
        self.body.add_module("block1", Block(8, 1))
        self.body.add_module("block2", Block(8, 2))
        self.body.add_module("mix", nn.Conv2d(8, 8, 1))
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.body(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("handed_lambdas"), MODEL, input_specs=("3,8,8",))


def test_a_default_lambda_calling_each_child_runs_channels_last_and_matches_torch(net):
    x = random_input(0, (2, 3, 8, 8))
    keras_model = assert_built_matches_torch(net, x)
    assert count_transposes(keras_model, [x]) <= 1
    assert "x = self.scheme(module, x)" in (net.out_dir / "op_model_keras.py").read_text()
