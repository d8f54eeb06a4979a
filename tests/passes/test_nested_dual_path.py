"""A dual-path container nested in another (pytorchcv's `DualPathSequential`: DPN and SelecSLS keep their stages,
DualPathSequentials, in the features, a DualPathSequential too) runs each child through a lambda kept on `self`
(`lambda module, x1, x2: module(x1, x2)`), so the container reaches itself through that lambda while its own call is
being translated, and x2 is None until the first dual-path child returns it.

The lambda runs as written: the container one level down is taken to take what it is handed as held, then checked
once translated (passes/held_recursion.py); x2, None on entry and an image after the body, enters the loop as that
image on a second translation of the body, and the units first translated for x2 at its None default are widened
to take it (passes/optional_values.py). Before, the containers were called through `call_module` on torch's layout
and handed it to channels-last children as it was: the port failed when built (dpn68, selecsls42)."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
from torch import nn


class DualPathSequential(nn.Sequential):
    def __init__(self, return_two=True, first_ordinals=0, last_ordinals=0,
                 dual_path_scheme=(lambda module, x1, x2: module(x1, x2)),
                 dual_path_scheme_ordinal=(lambda module, x1, x2: (module(x1), x2))):
        super().__init__()
        self.return_two = return_two
        self.first_ordinals = first_ordinals
        self.last_ordinals = last_ordinals
        self.dual_path_scheme = dual_path_scheme
        self.dual_path_scheme_ordinal = dual_path_scheme_ordinal

    def forward(self, x1, x2=None):
        length = len(self._modules.values())
        for i, module in enumerate(self._modules.values()):
            if (i < self.first_ordinals) or (i >= length - self.last_ordinals):
                x1, x2 = self.dual_path_scheme_ordinal(module, x1, x2)
            else:
                x1, x2 = self.dual_path_scheme(module, x1, x2)
        if self.return_two:
            return x1, x2
        else:
            return x1


class Unit(nn.Module):
    def __init__(self, in_channels, out_channels, project):
        super().__init__()
        self.project = project
        if project:
            self.proj = nn.Conv2d(in_channels, out_channels, 1)
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(out_channels)

    def forward(self, x1, x2=None):
        x_in = torch.cat((x1, x2), dim=1) if x2 is not None else x1
        y = self.norm(self.conv(x_in)).relu()
        if self.project:
            return y, self.proj(x_in)
        return y + x1, x2[:, :y.size(1)] + y


class Final(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x1, x2):
        return self.norm(torch.cat((x1, x2), dim=1)), None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = DualPathSequential(return_two=False, first_ordinals=1, last_ordinals=0)
        self.features.add_module("stem", nn.Conv2d(3, 8, 3, padding=1))
        for i in range(2):
            stage = DualPathSequential()
            stage.add_module("unit1", Unit(8 if i == 0 else 16, 8, True))
            stage.add_module("unit2", Unit(16, 8, False))
            self.features.add_module("stage{}".format(i + 1), stage)
        self.features.add_module("final", Final(16))
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        x = self.features(x)
        return self.head(x.mean(dim=(2, 3)))
'''

# SelecSLS's way: its stages are `DualPathSequential() if k < 0 else nn.Sequential()`, each filled by add_module with
# a two-image unit (`forward(self, x, x0)`) or a one-image block, chosen by the same test
EITHER_STAGE = MODEL.split("class Unit")[0] + '''
class Unit(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.resize = stride == 2
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1)

    def forward(self, x, x0):
        y = self.conv(x)
        if self.resize:
            return y, y
        return torch.cat((y, x0), dim=1), x0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = DualPathSequential(return_two=False, first_ordinals=1, last_ordinals=2)
        self.features.add_module("stem", nn.Conv2d(3, 8, 3, padding=1))
        channels = 8
        for k in (-1, 0):
            stage = DualPathSequential() if k < 0 else nn.Sequential()
            for j in range(2):
                unit = Unit(channels, 8, 2 if j == 0 else 1) if k < 0 else nn.Conv2d(channels, 16, 1)
                stage.add_module("unit{}".format(j + 1), unit)
                channels = 16 if k >= 0 or j == 1 else 8
            self.features.add_module("stage{}".format(k + 2), stage)
        self.features.add_module("pool", nn.AvgPool2d(4))
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        x = self.features(x)
        return self.head(x.view(x.size(0), -1))
'''


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    return port(tmp_path_factory.mktemp("nested_dual_path"), MODEL, input_specs=("3,8,8",))


@pytest.fixture(scope="module")
def either(tmp_path_factory):
    return port(tmp_path_factory.mktemp("either_stage"), EITHER_STAGE, input_specs=("3,8,8",))


def test_a_dual_path_container_nested_in_itself_runs_channels_last_and_matches_torch(nested):
    x = random_input(0, (2, 3, 8, 8))
    keras_model = assert_built_matches_torch(nested, x)
    assert count_transposes(keras_model, [x]) <= 2
    assert "x1, x2 = self.dual_path_scheme(module, x1, x2)" in (nested.out_dir / "op_model_keras.py").read_text()


def test_a_stage_that_is_one_of_two_containers_matches_torch(either):
    x = random_input(1, (2, 3, 8, 8))
    keras_model = assert_built_matches_torch(either, x)
    assert count_transposes(keras_model, [x]) <= 2
