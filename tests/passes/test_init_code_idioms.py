"""Weight-initialisation code as real files write it, which the port runs when it builds the model: DCGAN's
`weights_init(m)` applied to every module (`nn.init.normal_(m.weight.data, 0.0, 0.02)`: `.data` of a module's
weight, an AttributeError on a Keras variable), a detection head's `for l in layer.modules()` over a leaf layer (no
`modules()` on the runtime's layers), `apply(init_weights)` on a ModuleList (HiFi-GAN: no `apply` on the runtime's
containers), `nn.init` on a weight-normed conv's computed `weight` (no `assign`; in torch it fills a temporary),
and a `torch.__version__` feature check (written as the string "torch.__version__", which a version comparison
refused). Each port builds and, holding torch's weights, matches torch on drawn inputs."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from distutils.version import LooseVersion

import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

NEW_TORCH = LooseVersion(torch.__version__) >= LooseVersion("1.8.0")


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pred = nn.Conv2d(8, 4, 3, padding=1)
        self.normed = weight_norm(nn.Conv2d(4, 4, 1))
        self.apply(weights_init)
        for modules in [self.tower, self.pred]:
            for layer in modules.modules():
                if isinstance(layer, nn.Conv2d):
                    nn.init.normal_(layer.weight, std=0.01)
                    nn.init.constant_(layer.bias, 0)
        nn.init.xavier_uniform_(self.normed.weight)
        self.convs = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 1)])
        self.convs.apply(weights_init)  # (HiFi-GAN's `self.ups.apply(init_weights)` on a ModuleList)

    def forward(self, x):
        y = self.normed(self.pred(self.tower(x)))
        for conv in self.convs:
            y = y + conv(y)
        return y * 2 if NEW_TORCH else y
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("init_idioms"), textwrap.dedent(SOURCE), input_specs=("3,9,11",))


def test_the_version_check_reads_a_version(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert '"torch.__version__"' not in code


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([5, 9]),
       width=st.sampled_from([7, 12]))
def test_model_with_init_code_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
