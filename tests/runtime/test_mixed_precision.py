"""The runtime under mixed_bfloat16 (float32 variables, bfloat16 compute): the numerically sensitive parts run in
float32 (softmax and log_softmax, attention scores and their masks) and the model's own outputs are float32, while
every other op keeps the bfloat16 compute dtype. References are torch in float32 on the same bfloat16-rounded
inputs, so what is measured is the runtime's own error, not the rounding of the inputs.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch

from porter.runtime.activation import log_softmax, softmax
from porter.runtime.attention import MultiheadAttention, scaled_dot_product_attention
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module
from tests.rules.op_ports import port

BFLOAT16_STEP = 2.0 ** -8  # relative spacing of bfloat16 numbers: the rounding of one result


@pytest.fixture
def mixed_policy():
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    yield
    keras.config.set_dtype_policy(previous)


def rounded_to_bfloat16(array):
    return tf.cast(tf.cast(array, tf.bfloat16), tf.float32).numpy()


@pytest.mark.parametrize("function, reference", [(log_softmax, torch.log_softmax), (softmax, torch.softmax)])
def test_softmax_family_rounds_once(function, reference):
    """Large logits (a log-sum-exp near 40, where bfloat16 steps by 0.25): computed in float32, the result is off by
    one bfloat16 rounding of itself; computed in bfloat16, log_softmax is off by ~5%."""
    rng = np.random.default_rng(0)
    logits = rounded_to_bfloat16(40 + 3 * rng.standard_normal((16, 100)).astype(np.float32))
    expected = reference(torch.from_numpy(logits), dim=1).numpy()
    actual = function(tf.constant(logits, tf.bfloat16), 1)
    assert actual.dtype == tf.bfloat16  # the ops after it keep the compute dtype
    relative = np.abs(tf.cast(actual, tf.float32).numpy() - expected) / np.abs(expected)
    assert relative.max() <= BFLOAT16_STEP * 1.01


def test_attention_scores_run_in_float32():
    """F.scaled_dot_product_attention on bfloat16 q, k, v with a mask: scores, mask and softmax in float32 leave the
    error of the bfloat16 weights and the p.v product (~0.3% of the output's scale where the CPU kernels accumulate
    it in float32, 0.66% on a host whose kernels without oneDNN accumulate in bfloat16); scores in bfloat16
    (rounded in steps of 2**-5 at +-20) are off by ~2%."""
    rng = np.random.default_rng(1)
    q, k, v = (rounded_to_bfloat16(3 * rng.standard_normal((2, 2, 12, 16)).astype(np.float32)) for _ in range(3))
    mask = rng.random((12, 12)) > 0.2
    mask[:, 0] = True
    expected = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(t) for t in (q, k, v)),
                                                                attn_mask=torch.from_numpy(mask)).numpy()
    actual = scaled_dot_product_attention(*(tf.constant(t, tf.bfloat16) for t in (q, k, v)), attn_mask=mask)
    assert actual.dtype == tf.bfloat16
    error = np.abs(tf.cast(actual, tf.float32).numpy() - expected).max()
    assert error <= 0.01 * np.abs(expected).max(), error


def test_multihead_attention_under_mixed_bfloat16_follows_torch(mixed_policy):
    """torch.nn.MultiheadAttention with a key padding mask and peaked weights: the port's bfloat16 attention weights
    stay within a few bfloat16 steps of torch's float32 weights."""
    torch.manual_seed(0)
    embed, heads = 16, 2
    reference = perturb_torch_module(torch.nn.MultiheadAttention(embed, heads, batch_first=True), 0).eval()
    with torch.no_grad():  # weights that bfloat16 holds exactly: the error left is the runtime's own
        for parameter in reference.parameters():
            parameter.copy_(torch.from_numpy(rounded_to_bfloat16(parameter.numpy())))
    ported = copy_torch_weights(reference, MultiheadAttention(embed, heads, batch_first=True))
    rng = np.random.default_rng(1)
    query = rounded_to_bfloat16(4 * rng.standard_normal((2, 12, embed)).astype(np.float32))
    padding = np.zeros((2, 12), bool)
    padding[1, -3:] = True
    _, expected = reference(*(torch.from_numpy(query),) * 3, key_padding_mask=torch.from_numpy(padding),
                            need_weights=True, average_attn_weights=False)
    _, actual = ported(*(tf.constant(query),) * 3, key_padding_mask=padding, need_weights=True,
                       average_attn_weights=False)
    assert ported.compute_dtype == "bfloat16" and actual.dtype == tf.bfloat16
    expected = expected.detach().numpy()
    assert np.abs(expected).max() > 0.9  # peaked rows: where bfloat16 scores would hurt most
    error = np.abs(tf.cast(actual, tf.float32).numpy() - expected)
    assert error.max() <= 0.03, error.max()


NESTED = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        h = self.block(x) + x
        return self.head(torch.log_softmax(self.norm(h), dim=-1))
'''


def test_model_outputs_are_float32_and_blocks_keep_bfloat16(tmp_path):
    """The model's own call returns float32 logits; a block called inside it returns bfloat16 (else `block(x) + x`
    would meet float32 and bfloat16, which TensorFlow refuses)."""
    pair = port(tmp_path, NESTED, input_specs=("8",))
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        model = type(pair.keras_model)()
    finally:
        keras.config.set_dtype_policy(previous)
    pair.keras_module.load_state_dict(model, pair.reference_state)
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    output = model(tf.constant(x), training=False)
    assert output.dtype == tf.float32
    assert {v.dtype for v in model.weights} == {"float32"}
    assert model.block(tf.constant(x)).dtype == tf.float32  # called on its own, a block is the model
    expected = pair.run_torch([x])[0]
    assert np.abs(output.numpy() - expected).max() <= 0.05 * np.abs(expected).max()


def test_a_sibling_runtime_block_inside_the_model_keeps_the_compute_dtype():
    """A package port's model calls blocks its siblings' ports define, on runtimes of their own: only the model's
    own call returns float32 under mixed_bfloat16, whichever runtime a block comes from (torchvision's swin called a
    sibling's StochasticDepth, which took itself for the model and handed float32 to a bfloat16 residual add)."""
    import importlib.util
    from pathlib import Path

    runtime_path = Path(__file__).resolve().parents[1] / "golden" / "mlp" / "mlp_keras_runtime.py"

    def load(name):
        spec = importlib.util.spec_from_file_location(name, runtime_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    own, sibling = load("own_runtime"), load("sibling_runtime")
    assert own.TorchModule is not sibling.TorchModule

    class Model(own.TorchModule):
        def __init__(self):
            super().__init__()
            self.inner = sibling.Linear(4, 3)

        def call(self, x, training=None):
            inner = self.inner(x)
            self.inner_dtype = inner.dtype
            return inner + x[:, :3]

    policy = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = Model()
        output = model(np.ones((2, 4), "float32"))
    finally:
        keras.mixed_precision.set_global_policy(policy)
    assert model.inner_dtype == "bfloat16" and output.dtype == "float32"
