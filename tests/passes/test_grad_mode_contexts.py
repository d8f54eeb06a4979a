"""torch's gradient-mode context managers (`torch.no_grad`, `inference_mode`, `set_grad_enabled`, their
torch.autograd names) run their block as plain code in the port (Keras' training argument and the GradientTape decide
what is differentiated): timm's patch_embed.py computes its resampling matrix under `torch.inference_mode(False)`."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)
        with torch.inference_mode(False), torch.autograd.set_grad_enabled(False):
            self.register_buffer("scale", torch.linspace(0.5, 2.0, 4))

    def forward(self, x):
        with torch.inference_mode(False), torch.set_grad_enabled(False):
            y = self.fc(x) * self.scale
        with torch.autograd.no_grad():
            z = y.relu()
        if torch.is_inference_mode_enabled():
            z = z * 0
        return z + y
'''


@pytest.fixture(scope="module")
def grad_mode_port(tmp_path_factory):
    return port(tmp_path_factory.mktemp("grad_mode"), textwrap.dedent(SOURCE), input_specs=("5",))


def test_no_construct_is_left_unsupported(grad_mode_port):
    assert "not_supported" not in (grad_mode_port.out_dir / "op_model_keras.py").read_text()


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_gradient_mode_blocks_run_as_torch_runs_them(grad_mode_port, batch, seed):
    assert_same_outputs(grad_mode_port, [random_input(seed, (batch, 5))], tolerance=1e-6, what="grad-mode blocks")
