"""Idioms of sequence models written outside porter (held-out batch seq3), each against real torch with drawn sizes:

- a wrapper module `Transpose(shape=(1, 2))` inside a Sequential before a Conv1d (sooftware's Conformer conv module):
  the starred `x.transpose(*self.shape)` is read with the dims its construction fixes, so the class hands the Conv1d
  its channels-last sequence as it lies (was 2 Transposes per block);
- an einsum handed to a local function whose body first transposes it (HF T5's `unshape(torch.matmul(w, v))`): the
  einsum is written in that order once, not re-emitted inside the function beside the caller's;
- `np.log(n) / k * torch.arange(m)` (Whisper's sinusoids): a Python number known to be a float promotes the integer
  tensor as torch does (was an int64 `tf.exp`: InvalidArgumentError);
- `torch.get_default_dtype()` (GPT-NeoX's norm factor): float32 (was a stub, exit 1);
- `x.view(*shape)` with `shape = x.size()[:-1] + (h, 3 * d)`: the view's rank is known, so the slices after it
  index the right axes of a pending permute;
- attention heads held (B, T, H, D) handed to module-level helpers (LLaMA's `rotate_half`, `apply_rotary_pos_emb`,
  `repeat_kv` with `[:, :, None, :, :].expand(...).reshape(...)`) and to an `_attn` method (GPT-NeoX, with
  `torch.where(mask, scores, torch.tensor(torch.finfo(dtype).min))`): taken and returned as they lie, so the model
  traces no Transpose (LLaMA was 4 per layer).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import assert_same_outputs, port, random_input

CONFORMER_CONV = '''
import torch
from torch import nn


class Transpose(nn.Module):
    def __init__(self, shape: tuple):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.transpose(*self.shape)


class Net(nn.Module):
    def __init__(self, dim=8, kernel_size=3):
        super().__init__()
        self.sequential = nn.Sequential(
            nn.LayerNorm(dim),
            Transpose(shape=(1, 2)),
            nn.Conv1d(dim, dim * 2, kernel_size=1),
            nn.GLU(dim=1),
            nn.Conv1d(dim, dim, kernel_size, padding=(kernel_size - 1) // 2, groups=dim, bias=False),
            nn.BatchNorm1d(dim),
            nn.SiLU(),
        )
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(self.sequential(x).transpose(1, 2)) + x
'''

T5_UNSHAPE = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim=12, heads=3):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)

    def forward(self, hidden_states):
        batch_size = hidden_states.shape[0]

        def shape(states):
            return states.view(batch_size, -1, self.heads, self.head_dim).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.heads * self.head_dim)

        query, key, value = shape(self.q(hidden_states)), shape(self.k(hidden_states)), shape(self.v(hidden_states))
        weights = torch.matmul(query, key.transpose(3, 2)).softmax(dim=-1)
        return self.o(unshape(torch.matmul(weights, value)))
'''

SINUSOIDS = '''
import numpy as np
import torch
from torch import nn


def sinusoids(length, channels, max_timescale=10000):
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class Net(nn.Module):
    def __init__(self, n_ctx=6, dim=8):
        super().__init__()
        self.register_buffer("positional_embedding", sinusoids(n_ctx, dim), persistent=False)
        self.norm_factor = torch.sqrt(torch.tensor(dim, dtype=torch.float32)).to(torch.get_default_dtype())

    def forward(self, x):
        return (x + self.positional_embedding) / self.norm_factor
'''

FUSED_QKV = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim=12, heads=3):
        super().__init__()
        self.heads, self.head_size = heads, dim // heads
        self.query_key_value = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        qkv = self.query_key_value(x)
        new_qkv_shape = qkv.size()[:-1] + (self.heads, 3 * self.head_size)
        qkv = qkv.view(*new_qkv_shape)
        query = qkv[..., : self.head_size].permute(0, 2, 1, 3)
        key = qkv[..., self.head_size : 2 * self.head_size].permute(0, 2, 1, 3)
        value = qkv[..., 2 * self.head_size :].permute(0, 2, 1, 3)
        attn = torch.matmul(query, key.transpose(-1, -2)).softmax(dim=-1)
        out = torch.matmul(attn, value).permute(0, 2, 1, 3).contiguous()
        return out.view(out.size(0), out.size(1), self.heads * self.head_size)
'''

ROTARY_GQA = '''
import torch
import torch.nn.functional as F
from torch import nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos = cos.unsqueeze(0).unsqueeze(0)
    sin = sin.unsqueeze(0).unsqueeze(0)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Net(nn.Module):
    def __init__(self, dim=16, n_heads=4, n_kv_heads=2, max_len=12):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(max_len).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        q = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, self.cos_cached[:seqlen], self.sin_cached[:seqlen])
        n_rep = self.n_heads // self.n_kv_heads
        out = F.scaled_dot_product_attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(bsz, seqlen, -1))
'''

NEOX_ATTN = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim=12, heads=3, max_positions=8):
        super().__init__()
        self.heads, self.head_size = heads, dim // heads
        self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
            1, 1, max_positions, max_positions))
        self.norm_factor = torch.sqrt(torch.tensor(self.head_size, dtype=torch.float32)).to(torch.get_default_dtype())
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, self.heads, 3 * self.head_size).permute(0, 2, 1, 3).split(
            self.head_size, dim=-1)
        out = self._attn(q, k, v).permute(0, 2, 1, 3).contiguous()
        return out.view(b, t, self.heads * self.head_size)

    def _attn(self, query, key, value):
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
        scores = torch.matmul(query, key.transpose(-1, -2)) / self.norm_factor
        mask_value = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(causal_mask, scores, mask_value)
        return torch.matmul(scores.softmax(dim=-1), value)
'''


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    made = {}

    def get(name, source, spec):
        if name not in made:
            made[name] = port(tmp_path_factory.mktemp(name), source, input_specs=(spec,))
        return made[name]

    return get


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(2, 7), seed=st.integers(0, 2**16), kernel=st.sampled_from([1, 3, 5]))
def test_transpose_module_in_a_sequential_hands_the_conv_its_sequence_as_it_lies(ports, batch, length, seed, kernel):
    pair = ports("conformer_conv", CONFORMER_CONV, "5,8")
    x = random_input(seed, (batch, length, 8))
    keras_model = assert_built_matches_torch(pair, x, kernel_size=kernel)
    assert count_transposes(keras_model, [x]) == 0


def test_transpose_module_call_is_specialised_for_its_dims(ports):
    pair = ports("conformer_conv", CONFORMER_CONV, "5,8")
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "if self.shape == (1, 2):" in code


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_einsum_handed_to_a_local_function_is_written_once_in_its_order(ports, batch, length, seed):
    pair = ports("t5_unshape", T5_UNSHAPE, "4,12")
    x = random_input(seed, (batch, length, 12))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 0


def test_local_function_body_does_not_recompute_the_callers_einsum(ports):
    pair = ports("t5_unshape", T5_UNSHAPE, "4,12")
    code = (pair.out_dir / "op_model_keras.py").read_text()
    unshape = code[code.index("def unshape"):code.index("query, key, value")]
    assert "einsum" not in unshape
    assert code.count("tf.einsum(") == 2


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), n_ctx=st.integers(2, 9), half=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_float_number_promotes_an_integer_arange_and_default_dtype_is_float32(ports, batch, n_ctx, half, seed):
    pair = ports("sinusoids", SINUSOIDS, "6,8")
    x = random_input(seed, (batch, n_ctx, 2 * half))
    assert_built_matches_torch(pair, x, n_ctx=n_ctx, dim=2 * half)


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_view_of_a_size_tuple_plus_literal_sizes(ports, batch, length, seed):
    pair = ports("fused_qkv", FUSED_QKV, "4,12")
    x = random_input(seed, (batch, length, 12))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert np.isfinite(count_transposes(pair.keras_model, [x]))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 12), seed=st.integers(0, 2**16), kv_heads=st.sampled_from([1, 2, 4]))
def test_attention_heads_go_through_rotary_and_repeat_kv_helpers_as_they_lie(ports, batch, length, seed, kv_heads):
    pair = ports("rotary_gqa", ROTARY_GQA, "6,16")
    x = random_input(seed, (batch, length, 16))
    keras_model = assert_built_matches_torch(pair, x, n_kv_heads=kv_heads)
    assert count_transposes(keras_model, [x]) == 0


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_method_takes_heads_as_they_lie_and_a_type_limit_is_a_number(ports, batch, length, seed):
    pair = ports("neox_attn", NEOX_ATTN, "5,12")
    x = random_input(seed, (batch, length, 12))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 1  # (the method's result, written before the caller's permute)
