"""Statement translation: augmented item assignment on tensors, after a pending transpose too."""

import numpy as np
import torch

from tests.rules.op_ports import port

SOURCE = '''
import torch
import torch.nn as nn


class RelativeIndex(nn.Module):
    def __init__(self, height=3, width=4):
        super().__init__()
        self.height, self.width = height, width
        self.layers = nn.ModuleList()
        self.layers += [nn.Linear(4, 4), nn.Linear(4, 4)]

    def forward(self, x):
        coords = torch.stack(torch.meshgrid([torch.arange(self.height), torch.arange(self.width)], indexing="ij"))
        flat = torch.flatten(coords, 1)
        relative = flat[:, :, None] - flat[:, None, :]
        relative = relative.permute(1, 2, 0).contiguous()
        relative[:, :, 0] += self.height - 1
        relative[:, :, 1] += self.width - 1
        relative[:, :, 0] *= 2 * self.width - 1
        index = relative.sum(-1)
        for layer in self.layers:
            x = layer(x)
        return x * index[:4, :4].float()
'''


def test_item_augmented_assignment_after_a_permute_matches_torch(tmp_path):
    pair = port(tmp_path, SOURCE, input_specs=("4",))
    torch_model = pair.torch_module.RelativeIndex()
    keras_model = pair.keras_module.RelativeIndex()
    x = np.random.default_rng(0).standard_normal((4, 4)).astype("float32")
    keras_model(x)
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert np.abs(got - expected).max() <= 1e-5 * np.abs(expected).max()
