"""Property test of the autograd-Function rule (porter/rules/autograd_function.py): a `torch.autograd.Function`
with its own backward (save_for_backward, ctx attributes, a None gradient) and a `@torch.jit.script` helper port to
`tf.custom_gradient`; outputs and input gradients equal torch's, on the channels-last output of a Conv2d."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.compare import assert_equivalent
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class ClampStraightThrough(torch.autograd.Function):
    """forward clamps; backward passes half the gradient where the input was inside the limits"""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return torch.clamp(x, -limit, limit)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() < ctx.limit).float() * 0.5, None


@torch.jit.script
def shifted(x):
    return x + 0.25


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = ClampStraightThrough.apply(shifted(self.conv(x)), 0.5)
        return y.mean(dim=(2, 3))
'''


# the base as lucidrains' reversible layers import it: `from torch.autograd.function import Function`
FUNCTION_IMPORTED = SOURCE.replace("import torch.nn as nn\n", "import torch.nn as nn\nfrom torch.autograd.function import "
                                   "Function\n").replace("(torch.autograd.Function)", "(Function)")


# torch's old name for the saved tensors, as EfficientDet's SwishImplementation reads them
SAVED_VARIABLES = SOURCE.replace("ctx.saved_tensors", "ctx.saved_variables")


@pytest.fixture(scope="module", params=["attribute", "imported", "saved_variables"])
def pair(request, tmp_path_factory):
    source = {"attribute": SOURCE, "imported": FUNCTION_IMPORTED, "saved_variables": SAVED_VARIABLES}[request.param]
    assert request.param != "imported" or "(Function):" in source
    return port(tmp_path_factory.mktemp("autograd_function"), source)


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 3), size=st.sampled_from([1, 4, 7]), seed=st.integers(0, 2**16))
def test_custom_function_outputs_and_gradients_match_torch(pair, batch, size, seed):
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    torch_x = torch.from_numpy(x).requires_grad_()
    pair.torch_model(torch_x).sum().backward()
    keras_x = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(pair.keras_model(keras_x, training=False))
    assert_equivalent(torch_x.grad.numpy(), np.asarray(tape.gradient(loss, keras_x)), tolerance=1e-5,
                      what="input gradient through the custom backward")
