"""A method with a `training` parameter of its own (MONAI's DropPath: `def drop_path(self, x, drop_prob, training,
scale_by_keep)`, called `self.drop_path(x, self.drop_prob, self.training, ...)`) is handed the flag by its caller:
porter added a second `training=None` (a duplicate argument: swin_unetr.py and hyena_nd_unetr.py did not compile)."""

import numpy as np

from tests.rules.op_ports import assert_same_outputs, port

SOURCE = '''
import torch
import torch.nn as nn


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def drop_path(self, x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
        if drop_prob == 0.0 or not training:
            return x
        keep_prob = 1 - drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
        if keep_prob > 0.0 and scale_by_keep:
            random_tensor.div_(keep_prob)
        return x * random_tensor

    def forward(self, x):
        return self.drop_path(x, self.drop_prob, self.training, self.scale_by_keep)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.drop = DropPath(0.2)

    def forward(self, x):
        return x + self.drop(self.fc(x))
'''


def test_a_methods_own_training_parameter_is_not_added_again(tmp_path):
    pair = port(tmp_path, SOURCE, ("5",))
    text = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "training=None)" not in text.split("def drop_path(", 1)[1].split("\n", 1)[0]
    x = np.random.default_rng(0).standard_normal((3, 5)).astype("float32")
    assert_same_outputs(pair, [x], tolerance=1e-6)
    assert_same_outputs(pair, [x], tolerance=1e-6, jit=True)
