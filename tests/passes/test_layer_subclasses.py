"""A subclass of a torch layer with its own forward (`class LayerNorm2d(nn.LayerNorm)`) derives from the runtime
layer: torch's constructor, weights and state_dict keys, with the subclass's forward translated. A subclass of that
handing its `**kwargs` on (timm's LayerNorm2dNoBias) hands them once: its base filters Keras' own keywords."""

import numpy as np
import torch

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
