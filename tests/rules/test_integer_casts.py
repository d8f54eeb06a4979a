"""`.long()` / `.to(torch.long)`-style casts to int64 mark the tensor as an integer (rules/tensor_ops.py `cast_to`;
before only the narrow widths were): arithmetic with a float tensor then promotes it as torch does. Masked mean
pooling, `mask = (tokens != 0).long()`, `(x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)`,
raised in TensorFlow (a float32 times an int64). Each case matches torch on drawn token ids (padding included)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port

TEMPLATE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 4)

    def forward(self, tokens):
        x = self.emb(tokens)
        {op}
'''

OPS = {
    "masked_mean": "mask = (tokens != 0).long()\n"
                   "        return (x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)",
    "indexed_mask": "mask = tokens.gt(0).long()\n        return (x * mask[:, :, None]).mean(1) + mask.sum(1, True) * 0.5",
    "count_plus_float": "n = (tokens > 5).long().sum(1)\n        return x.sum(1) + n.unsqueeze(1)",
    "int_then_divided": "steps = torch.cumsum((tokens != 0).long(), 1)\n        return x[:, :, 0] / steps.clamp(min=1)",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), TEMPLATE.replace("{op}", OPS[name]),
                                    input_specs=("7:int64:0:20",)))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([1, 4, 7]), seed=st.integers(0, 2**16))
def test_integer_casts_promote_like_torch(ported, name, batch, length, seed):
    tokens = np.random.default_rng(seed).integers(0, 20, (batch, length)).astype(np.int64)
    tokens[:, -1] = 0  # (a padded position in every row)
    assert_same_outputs(ported(name), [tokens], tolerance=1e-6, what=f"{name} {tokens.shape}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_integer_casts_compile_with_xla(ported, name):
    tokens = np.array([[3, 0, 7, 1, 0, 0, 9], [0, 0, 0, 0, 0, 0, 0]], dtype=np.int64)
    assert_same_outputs(ported(name), [tokens], tolerance=1e-6, what=f"{name} XLA", jit=True)
