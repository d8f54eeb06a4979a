"""Modules copied with `copy.deepcopy` as the Annotated Transformer builds its layers (`clones(module, N)`:
`nn.ModuleList([copy.deepcopy(module) for _ in range(N)])` on a parameter porter cannot type, and `c =
copy.deepcopy; c(attn)`), a layer handed to another's constructor cloned with it, and `mask == 0` on a bool mask
handed to a module-level `attention(query, key, value, mask)`. The copies raised in the port (Keras pickled the
layer through its saving library, which cannot find a port's classes), then the comparison did (TensorFlow will not
compare a bool with a number). Now the runtime's `clone_layer` builds each copy again from its config, cloning the
layers among its arguments, its weights equal to the original's as torch's copies start; the port matches torch
eagerly and under XLA and holds as many weights as torch has parameters."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port

SOURCE = '''
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return torch.matmul(scores.softmax(dim=-1), value)


class SelfAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.linears = clones(nn.Linear(d_model, d_model), 3)

    def forward(self, x, mask):
        q, k, v = [lin(x) for lin in self.linears]
        return attention(q, k, v, mask)


class Layer(nn.Module):
    def __init__(self, attn, size):
        super().__init__()
        self.attn = attn
        self.norm = nn.LayerNorm(size)

    def forward(self, x, mask):
        return x + self.attn(self.norm(x), mask)


class Net(nn.Module):
    def __init__(self, vocab=20, d_model=8, N=2):
        super().__init__()
        c = copy.deepcopy
        self.embed = nn.Embedding(vocab, d_model)
        self.layers = clones(Layer(c(SelfAttention(d_model)), d_model), N)
        self.out = nn.Linear(d_model, 3)

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-2)
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x, mask)
        return self.out(x)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("clones"), SOURCE, input_specs=("7:int64:0:20",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_cloned_layers_match_torch(pair, batch, length, seed):
    ids = np.random.default_rng(seed).integers(0, 20, (batch, length))
    assert_same_outputs(pair, [ids], tolerance=1e-5)
    assert_same_outputs(pair, [ids], tolerance=1e-5, jit=True)


def test_each_clone_has_weights_of_its_own(pair):
    torch_count = sum(1 for _ in pair.torch_model.parameters())
    assert len(pair.keras_model.trainable_weights) == torch_count
    first, second = pair.keras_model.layers_[0], pair.keras_model.layers_[1]
    assert first.attn.linears[0].weight is not second.attn.linears[0].weight


def test_clones_of_a_handed_layer_are_its_class(pair):
    """`clones(Layer(c(SelfAttention(d)), d), N)` builds Layers: the loop calls each as the class it is (typed, laid
    out by porter), not through `call_module`, which converts for a module porter cannot see."""
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "call_module(" not in code, code
