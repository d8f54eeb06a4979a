"""`super().forward(x)` in a forward (porter/passes/super_forward.py): the parent's computation, whether the parent
is a class of the same file or a torch layer the class derives from, numerically the same as torch on drawn image
sizes (batch 1, odd and 1x1 images)."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import port

USER_BASE = '''
import torch
from torch import nn


class BaseNet(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(BaseNet):
    def __init__(self, channels=4):
        super().__init__(channels)
        self.head = nn.Conv2d(channels, 2, 1)

    def forward(self, x):
        y = super().forward(x)
        return self.head(y) + super(Net, self).forward(x)[:, :2] * 0.5


class Deeper(Net):
    pass
'''
LAYER_BASE = '''
import torch
from torch import nn


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = super().forward(x)
        return x.permute(0, 3, 1, 2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = LayerNorm2d(4, eps=1e-5)

    def forward(self, x):
        return self.norm(self.conv(x))
'''


def _moved_off_defaults(model):
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if tensor.dtype.is_floating_point and not name.endswith("running_var"):
                tensor.add_(torch.rand_like(tensor) * 0.5 - 0.25)
            elif name.endswith("running_var"):
                tensor.uniform_(0.5, 1.5)
    return model.eval()


def _loaded_pair(pair, class_name):
    """(torch model, Keras model) of `class_name`, parameters and statistics moved off their defaults, Keras loaded
    from torch's state dict."""
    torch_model = _moved_off_defaults(getattr(pair.torch_module, class_name)())
    keras_model = getattr(pair.keras_module, class_name)()
    keras_model(np.zeros((1, 3, 5, 5), "float32"))
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    return torch_model, keras_model


# batch 1 and odd, non-square image sizes down to 1x1
IMAGES = st.tuples(st.integers(1, 3), st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**31 - 1))


def _assert_matches(pair, class_name):
    torch_model, keras_model = _loaded_pair(pair, class_name)

    @settings(max_examples=8, deadline=None)
    @given(IMAGES)
    def matches(image):
        batch, height, width, seed = image
        x = np.random.default_rng(seed).standard_normal((batch, 3, height, width)).astype("float32")
        with torch.no_grad():
            expected = torch_model(torch.from_numpy(x)).numpy()
        got = np.asarray(keras_model(x, training=False))
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() <= 1e-4 * max(np.abs(expected).max(), 1.0)

    matches()
    assert count_transposes(keras_model, [np.zeros((2, 3, 6, 6), "float32")]) <= 2


def test_super_forward_calls_the_user_base_class(tmp_path):
    pair = port(tmp_path, USER_BASE, input_specs=("3,6,6",))
    text = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "super().forward" not in text and "super(Net, self).call(" in text
    _assert_matches(pair, "Net")
    _assert_matches(pair, "Deeper")  # the forward it inherits still reaches BaseNet's


def test_super_forward_calls_the_torch_layer(tmp_path):
    pair = port(tmp_path, LAYER_BASE, input_specs=("3,6,6",))
    assert "super(LayerNorm2d, self).call(" in (tmp_path / "out" / "op_model_keras.py").read_text()
    _assert_matches(pair, "Net")


UNFOLLOWED_SEQUENTIAL = '''
import torch
import torch.nn as nn


def conv_type(dims):
    return [nn.Conv1d, nn.Conv2d, nn.Conv3d][dims - 1]


class Convolution(nn.Sequential):
    def __init__(self, dims=2, cin=3, cout=6):
        super().__init__()
        self.add_module("conv", conv_type(dims)(cin, cout, 3, 1, 1))
        self.add_module("norm", nn.BatchNorm2d(cout))


class Patch(Convolution):
    def forward(self, x):
        x = super().forward(x)
        return torch.relu(x) * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = Patch()
        self.head = nn.Conv2d(6, 2, 1)

    def forward(self, x):
        return self.head(self.patch(x))
'''


def test_super_forward_of_a_sequential_whose_children_porter_cannot_follow(tmp_path):
    """MONAI's `class OverlapPatchEmbed(Convolution)` (a Sequential whose children come from registries) calling
    `super().forward(x)`: porter crashed (AttributeError: no attribute 'node_of_call'; restormer.py, quicknat.py).
    The parent's call is left to the runtime, which converts to the instance's layout and hands it its training
    flag."""
    pair = port(tmp_path, UNFOLLOWED_SEQUENTIAL, input_specs=("3,6,6",))
    assert "call_module(super(Patch, self).call," in (tmp_path / "out" / "op_model_keras.py").read_text()
    _assert_matches(pair, "Net")
