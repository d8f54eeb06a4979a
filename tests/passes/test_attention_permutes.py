"""timm's attention: `qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0)` leaves q, k and v permutes
pending (a `q_norm` / `k_norm` porter cannot type takes them through `call_module`: an Identity as they lie, another
module permuted for and back at run time; timm's ViT traces no Transpose there, tests/corpus/test_timm.py), and a
variable an if/else assigns on both paths (SDPA, or the einsums written out on a scaled q) is not re-emitted from one
path's einsum afterwards: every choice matches torch."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim=16, num_heads=2, qk_norm=False, fused=True, norm_layer=nn.LayerNorm):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.fused = fused
        self.qkv = nn.Linear(dim, dim * 3)
        self.q_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        if self.fused:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            q = q * self.scale
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            x = attn @ v
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Net(nn.Module):
    def __init__(self, qk_norm=False, fused=True, norm_layer=None):
        super().__init__()
        self.attn = Attention(qk_norm=qk_norm, fused=fused, norm_layer=norm_layer or nn.LayerNorm)

    def forward(self, x):
        return x + self.attn(x)
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("attention_permutes"), MODEL, input_specs=("5,16",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16), qk_norm=st.booleans(), fused=st.booleans())
def test_every_choice_matches_torch(net, batch, seed, qk_norm, fused):
    assert_built_matches_torch(net, random_input(seed, (batch, 5, 16)), qk_norm=qk_norm, fused=fused)



COMPREHENSION_MODEL = '''
import torch
from torch import nn


class PatchAttention(nn.Module):
    def __init__(self, dim=12, heads=3):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, p, n, _ = x.shape
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = [t.reshape(b, p, n, self.heads, -1).transpose(2, 3) for t in qkv]
        attn = (torch.matmul(q, k.transpose(-1, -2)) * self.scale).softmax(dim=-1)
        out = torch.matmul(attn, v).transpose(2, 3).reshape(b, p, n, -1)
        return self.to_out(out)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(12)
        self.attn = PatchAttention()

    def forward(self, x):
        return x + self.attn(self.norm(x))
'''


@pytest.fixture(scope="module")
def comprehension_net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("head_comprehension"), COMPREHENSION_MODEL, input_specs=("4,5,12",))


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_heads_split_in_a_list_comprehension_stay_permuted(comprehension_net, batch, seed):
    """`[t.reshape(b, p, n, h, -1).transpose(2, 3) for t in qkv]` (MobileViT's attention over patches): the list's
    items keep the pending transpose, which the attention einsums fold in; they were materialised item by item (4
    Transposes an attention, a held-out MobileViT traced 12, now 4: the patch unfold and fold torch does itself)."""
    from porter.verify.harness import count_transposes

    x = random_input(seed, (batch, 4, 5, 12))
    keras_model = assert_built_matches_torch(comprehension_net, x)
    assert count_transposes(keras_model, [x]) == 0


METHOD_MODEL = '''
import math
import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, hidden=16, heads=4):
        super().__init__()
        self.heads, self.head_size = heads, hidden // heads
        self.all_head_size = heads * self.head_size
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.heads, self.head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        probs = nn.functional.softmax(scores + mask, dim=-1)
        context = torch.matmul(probs, v)
        context = context.permute(0, 2, 1, 3).contiguous()
        new_shape = context.size()[:-2] + (self.all_head_size,)
        return context.view(new_shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention()
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        mask = (x[:, :, 0] > 0).float()[:, None, None, :] * -1e4
        return self.norm(x + self.attn(x, mask))
'''


@pytest.fixture(scope="module")
def method_net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("method_permutes"), METHOD_MODEL, input_specs=("7,16",))


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_a_method_returning_a_permute_hands_it_on_pending(method_net, batch, seed):
    """HuggingFace BERT's `transpose_for_scores` (a method whose one return is `x.permute(0, 2, 1, 3)`): the method
    returns the heads before the permute and its callers fold it into the attention einsums; the context's
    `matmul` then `permute(0, 2, 1, 3)` before the merging view is one einsum written in the merged order (it was
    written twice: once for the sizes read after the permute). A held-out BERT traced 8 Transposes, now 0."""
    from porter.verify.harness import count_transposes

    x = random_input(seed, (batch, 7, 16))
    keras_model = assert_built_matches_torch(method_net, x)
    assert count_transposes(keras_model, [x]) == 0
    code = (method_net.out_dir / "op_model_keras.py").read_text()
    assert code.count("einsum(") == 2


SAGAN_MODEL = '''
import torch
from torch import nn


class SelfAttn(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.query_conv = nn.Conv2d(in_dim, in_dim // 4, 1)
        self.key_conv = nn.Conv2d(in_dim, in_dim // 4, 1)
        self.value_conv = nn.Conv2d(in_dim, in_dim, 1)
        self.gamma = nn.Parameter(torch.zeros(1) + 0.5)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        m_batchsize, C, width, height = x.size()
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        attention = self.softmax(torch.bmm(proj_query, proj_key))
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention.permute(0, 2, 1))
        out = out.view(m_batchsize, C, width, height)
        return self.gamma * out + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.attn = SelfAttn(8)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return self.head(self.attn(self.stem(x)))
'''


@pytest.fixture(scope="module")
def sagan_net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("sagan_attention"), SAGAN_MODEL, input_specs=("3,5,6",))


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(2, 7), width=st.integers(2, 7), seed=st.integers(0, 2**16))
def test_an_attention_result_viewed_back_to_an_image_is_written_channels_last(sagan_net, batch, height, width, seed):
    """SAGAN's `out = torch.bmm(value, attention.permute(0, 2, 1))` then `out.view(b, C, w, h)`: the einsum is
    written (N, L, C), so the view splits L into the image's spatial axes held channels-last and the residual meets
    x as it lies (the einsum came out (N, C, L) and the image converted back: a held-out SAGAN traced 3, now 2)."""
    from porter.verify.harness import count_transposes

    x = random_input(seed, (batch, 3, height, width))
    keras_model = assert_built_matches_torch(sagan_net, x)
    assert count_transposes(keras_model, [x]) <= 2
    assert "to_channels_last(" not in (sagan_net.out_dir / "op_model_keras.py").read_text().split("class Net")[0]


MASK_MODEL = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def generate_square_subsequent_mask(self, sz):
        mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
        return mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))

    def forward(self, x):
        mask = self.generate_square_subsequent_mask(x.size(1))
        scores = torch.matmul(self.proj(x), x.transpose(1, 2)) + mask
        return torch.matmul(scores.softmax(-1), x)
'''


@pytest.fixture(scope="module")
def mask_net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("mask_method"), MASK_MODEL, input_specs=("6,8",))


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_a_mask_method_returns_the_mask_torch_makes(mask_net, batch, length, seed):
    """The PyTorch tutorial's `generate_square_subsequent_mask` (a `(triu(...) == 1).transpose(0, 1)`, then
    `mask == 0` on that bool mask): a method callers outside `forward` use (a training loop) returns what torch's
    returns; only a rank-4 permute (attention heads) is handed on pending. Comparing a bool mask with a number casts
    it as torch counts True (TensorFlow refused: a TypeError)."""
    import numpy as np

    assert_built_matches_torch(mask_net, random_input(seed, (batch, length, 8)))
    keras_model = mask_net.keras_module.Net()
    expected = mask_net.torch_module.Net().generate_square_subsequent_mask(length).numpy()
    assert np.array_equal(np.asarray(keras_model.generate_square_subsequent_mask(length)), expected)
