"""A block running the children of a container it holds through the container's name -> child dict, zipped with a
plain list (pytorchcv's HarDNet unit: `for links_i, layer_i in zip(self.links_list, self.blocks._modules.values())`),
then picking some of the images it kept by their index (`for i, out in enumerate(layer_outs): if i % 2 == 1: ...`).

`self.blocks._modules` holds the Sequential's children, so each turn's `layer_i` is one of them, called on the image
as it is held (channels-last), and `enumerate` over a list of channels-last images binds a plain count and an image:
the `if` on the count stays a Python `if` and the images picked are joined on their channel axis. Before, the
children were called on an image in torch's layout, the count was taken for a tensor (the `if` became tf.cond) and
the images were joined on torch's channel axis: the port failed or gave wrong numbers."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
from torch import nn


class Unit(nn.Module):
    def __init__(self, links_list, channels):
        super().__init__()
        self.links_list = links_list
        self.blocks = nn.Sequential()
        for i in range(len(links_list)):
            self.blocks.add_module("block{}".format(i + 1), nn.Sequential(
                nn.Conv2d(channels * len(links_list[i]), channels, 3, padding=1), nn.BatchNorm2d(channels)))
        self.conv = nn.Conv2d(channels * (1 + len(links_list) // 2), channels, 1)

    def forward(self, x):
        layer_outs = [x]
        for links_i, layer_i in zip(self.links_list, self.blocks._modules.values()):
            layer_in = []
            for idx_ij in links_i:
                layer_in.append(layer_outs[idx_ij])
            if len(layer_in) > 1:
                x = torch.cat(layer_in, dim=1)
            else:
                x = layer_in[0]
            out = layer_i(x)
            layer_outs.append(out)
        outs = []
        for i, layer_out_i in enumerate(layer_outs):
            if (i == len(layer_outs) - 1) or (i % 2 == 1):
                outs.append(layer_out_i)
        x = torch.cat(outs, dim=1)
        return self.conv(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.unit = Unit([[0], [0, 1], [2]], 8)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.unit(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("container_child_dicts"), MODEL, input_specs=("3,8,8",))


def test_children_zipped_from_the_child_dict_run_channels_last_and_match_torch(net):
    x = random_input(0, (2, 3, 8, 8))
    keras_model = assert_built_matches_torch(net, x)
    assert count_transposes(keras_model, [x]) <= 1
    code = (net.out_dir / "op_model_keras.py").read_text()
    assert "tensor_cond" not in code and "tf.cond" not in code
    assert "x = cat(outs, 3)" in code
