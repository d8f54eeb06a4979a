"""torch._assert in forward: the port raises AssertionError with torch's message exactly when torch does."""

import numpy as np
import pytest
import torch

from porter.runtime.assertions import torch_assert
from tests.rules.op_ports import port

SOURCE = '''
import torch
import torch.nn as nn


class SizeChecked(nn.Module):
    def __init__(self, size=8):
        super().__init__()
        self.size = size
        self.fc = nn.Linear(size, 2)

    def forward(self, x):
        torch._assert(x.shape[-1] == self.size, f"expected {self.size} features")
        return self.fc(x)
'''


def test_runtime_assert_raises_on_false_python_conditions_only():
    torch_assert(True, "fine")
    with pytest.raises(AssertionError, match="too small"):
        torch_assert(False, "too small")
    torch_assert(np.zeros(2) == 1, "a tensor-valued check is not made")


@pytest.mark.parametrize("features", [8, 5])
def test_port_asserts_like_torch(features, tmp_path):
    pair = port(tmp_path, SOURCE, input_specs=("8",))
    torch_model = pair.torch_module.SizeChecked()
    keras_model = pair.keras_module.SizeChecked()
    x = np.ones((2, features), "float32")
    if features == 8:
        keras_model(x)
        pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
        expected = torch_model(torch.from_numpy(x)).detach().numpy()
        assert np.allclose(np.asarray(keras_model(x)), expected, atol=1e-6)
    else:
        with pytest.raises(AssertionError, match="expected 8 features"):
            torch_model(torch.from_numpy(x))
        with pytest.raises(AssertionError, match="expected 8 features"):
            keras_model(x)
