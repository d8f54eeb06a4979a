"""A subclass of a torch layer with its own forward (`class LayerNorm2d(nn.LayerNorm)`) derives from the runtime
layer: torch's constructor, weights and state_dict keys, with the subclass's forward translated. A subclass of that
handing its `**kwargs` on (timm's LayerNorm2dNoBias) hands them once: its base filters Keras' own keywords."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import port

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm2d(nn.LayerNorm):
    def __init__(self, num_channels, eps=1e-6, affine=True, **kwargs):
        super().__init__(num_channels, eps=eps, elementwise_affine=affine, **kwargs)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class LayerNorm2dScaled(LayerNorm2d):
    def __init__(self, num_channels, **kwargs):
        super().__init__(num_channels, **kwargs)
        self.eps = kwargs.get('eps', 1e-6)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = LayerNorm2d(8, eps=1e-6)
        self.norm2 = LayerNorm2dScaled(8, eps=1e-3, dtype=None)  # (timm hands `**dd` on)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        x = self.norm2(self.norm(self.conv(x)))
        return self.head(x.mean([2, 3]))
'''


def test_layer_subclass_with_its_own_forward_matches_torch(tmp_path):
    pair = port(tmp_path, SOURCE, input_specs=("3,6,6",))
    assert "class LayerNorm2d(LayerNorm):" in (tmp_path / "out" / "op_model_keras.py").read_text()
    torch_model = pair.torch_module.Net().eval()
    with torch.no_grad():
        for norm in (torch_model.norm, torch_model.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    keras_model = pair.keras_module.Net()
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32")
    keras_model(x)
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert np.abs(np.asarray(keras_model(x, training=False)) - expected).max() <= 1e-5 * np.abs(expected).max()
    assert set(torch_model.state_dict()) >= {"norm.weight", "norm.bias"}


WITHOUT_FORWARD = '''
import torch
import torch.nn as nn


class GroupNorm(nn.GroupNorm):
    def __init__(self, num_channels, **kwargs):
        super().__init__(1, num_channels, **kwargs)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), Swish())

    def forward(self, x):
        return self.conv(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.norm = GroupNorm(8, eps=1e-5)
        self.block = Block(8)
        self.conv = nn.Sequential(nn.Conv2d(8, 6, 1), nn.BatchNorm2d(6), Swish())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = self.conv(self.block(self.norm(self.stem(x))))
        return self.fc(self.pool(x).view(x.size(0), -1))
'''


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), size=st.integers(5, 9), seed=st.integers(0, 2**16))
def test_layer_subclass_without_a_forward_runs_the_layer(tmp_path_factory, batch, size, seed):
    """`class GroupNorm(nn.GroupNorm)` fixing the groups in its __init__ (PoolFormer), no forward: it runs the
    runtime layer's call in the layer's layout (it was a `call` raising NotImplementedError). An elementwise class
    (Swish) closing a Sequential hands on the channel count the layer before it knows, as the caller's expression
    (it was rebased into the class: `self.conv[2].conv[1].num_features`, an AttributeError at build)."""
    from porter.verify.harness import count_transposes
    from tests.passes.snippet_ports import assert_built_matches_torch

    pair = _without_forward(tmp_path_factory)
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "has no forward" not in code and "conv[2]" not in code
    x = np.random.default_rng(seed).standard_normal((batch, 3, size, size)).astype("float32")
    keras_model = assert_built_matches_torch(pair, x)
    assert count_transposes(keras_model, [x]) <= 1


_PORTED = {}


def _without_forward(tmp_path_factory):
    if "pair" not in _PORTED:
        _PORTED["pair"] = port(tmp_path_factory.mktemp("without_forward"), WITHOUT_FORWARD, input_specs=("3,8,8",))
    return _PORTED["pair"]
