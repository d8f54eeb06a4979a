"""Numeric tests of porter.runtime.attention against real torch (MultiheadAttention, Transformer*, F.sdpa)."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.attention import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    _TransformerLayerNorm,
    scaled_dot_product_attention,
)
from porter.runtime.base import collect_state
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module, torch_state_numpy

MASKS = ("none", "causal", "bool_attn", "kpm_bool", "kpm_float", "causal+kpm", "attn3d")


def _rng(seed):
    return np.random.default_rng(seed)


def _causal(target_len, source_len):
    return np.triu(np.full((target_len, source_len), -np.inf, np.float32), 1)


def _padding(rng, batch, source_len):
    """Bool key padding mask (True = pad) that leaves the first key of every row visible."""
    mask = rng.random((batch, source_len)) < 0.4
    mask[:, 0] = False
    return mask


def _ops(function, *specs):
    graph = tf.function(function).get_concrete_function(*specs).graph
    return {op.type for op in graph.get_operations()}


def _same_keys(torch_module, keras_layer):
    assert sorted(entry.key for entry in collect_state(keras_layer)) == sorted(torch_state_numpy(torch_module))


@given(batch_first=st.booleans(), batch=st.integers(1, 3), target_len=st.integers(1, 5),
       source_len=st.integers(1, 6), heads=st.sampled_from([1, 2, 3]), head_dim=st.integers(1, 4),
       self_attention=st.booleans(), other_dims=st.booleans(), bias=st.booleans(), masks=st.sampled_from(MASKS),
       need_weights=st.booleans(), average=st.booleans(), unbatched=st.booleans(), extra_kv=st.booleans(),
       seed=st.integers(0, 2**16))
def test_multihead_attention_matches_torch(batch_first, batch, target_len, source_len, heads, head_dim,
                                           self_attention, other_dims, bias, masks, need_weights, average,
                                           unbatched, extra_kv, seed):
    rng = _rng(seed)
    embed = heads * head_dim
    kdim, vdim = (embed + 1, embed + 2) if other_dims and not self_attention else (None, None)
    add_bias_kv = extra_kv and seed % 2 == 0
    add_zero_attn = extra_kv and seed % 3 == 0
    if self_attention:
        source_len = target_len
    if unbatched:
        batch = 1
    args = {"bias": bias, "kdim": kdim, "vdim": vdim, "batch_first": batch_first, "add_bias_kv": add_bias_kv,
            "add_zero_attn": add_zero_attn}
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch.nn.MultiheadAttention(embed, heads, **args), seed).eval()
    ported = copy_torch_weights(reference, MultiheadAttention(embed, heads, **args))
    _same_keys(reference, ported)

    def sequence(length, width):
        shape = (batch, length, width) if batch_first else (length, batch, width)
        return rng.standard_normal(shape).astype(np.float32)

    query = sequence(target_len, embed)
    key = query if self_attention else sequence(source_len, kdim or embed)
    value = query if self_attention else sequence(source_len, vdim or embed)
    kwargs, is_causal = {}, False
    if masks in ("causal", "causal+kpm"):
        kwargs["attn_mask"] = _causal(target_len, source_len)
        is_causal = self_attention and seed % 2 == 1
    if masks == "bool_attn":
        bool_mask = rng.random((target_len, source_len)) < 0.4
        bool_mask[:, 0] = False
        kwargs["attn_mask"] = bool_mask
    if masks == "attn3d":
        kwargs["attn_mask"] = rng.standard_normal((batch * heads, target_len, source_len)).astype(np.float32)
    if masks in ("kpm_bool", "kpm_float", "causal+kpm"):
        padding = _padding(rng, batch, source_len)
        kwargs["key_padding_mask"] = (np.where(padding, -np.inf, 0).astype(np.float32)
                                      if masks != "kpm_bool" else padding)
    if unbatched:
        query, key, value = (t[0] if batch_first else t[:, 0] for t in (query, key, value))
        if "key_padding_mask" in kwargs:
            kwargs["key_padding_mask"] = kwargs["key_padding_mask"][0]
    options = {"need_weights": need_weights, "average_attn_weights": average, "is_causal": is_causal}

    expected, expected_weights = reference(*(torch.from_numpy(t) for t in (query, key, value)), **options,
                                           **{k: torch.from_numpy(v) for k, v in kwargs.items()})
    actual, actual_weights = ported(query, key, value, **options, **kwargs)
    assert_equivalent(expected.detach().numpy(), np.asarray(actual))
    if need_weights:
        assert_equivalent(expected_weights.detach().numpy(), np.asarray(actual_weights), what="attn_weights")
    else:
        assert actual_weights is None


def test_multihead_attention_fully_masked_rows_follow_torch():
    torch.manual_seed(0)
    reference = perturb_torch_module(torch.nn.MultiheadAttention(4, 2)).eval()
    ported = copy_torch_weights(reference, MultiheadAttention(4, 2))
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype(np.float32)
    padding = np.zeros((2, 3), bool)
    padding[1] = True
    for need_weights in (True, False):  # torch: NaN with need_weights, SDPA's zeros (-> out_proj bias) without
        expected = reference(*(torch.from_numpy(x),) * 3, key_padding_mask=torch.from_numpy(padding),
                             need_weights=need_weights)[0].detach().numpy()
        actual = ported(x, x, x, key_padding_mask=padding, need_weights=need_weights)[0]
        assert_equivalent(expected, np.asarray(actual))


@given(batch=st.lists(st.integers(1, 3), min_size=0, max_size=2), target_len=st.integers(1, 5),
       source_len=st.integers(1, 6), depth=st.integers(1, 5), value_depth=st.integers(1, 4),
       mask=st.sampled_from(["none", "bool", "float", "causal", "bool_empty_rows"]), scale=st.sampled_from([None, 0.3]),
       gqa=st.booleans(), seed=st.integers(0, 2**16))
def test_scaled_dot_product_attention_matches_torch(batch, target_len, source_len, depth, value_depth, mask, scale,
                                                    gqa, seed):
    rng = _rng(seed)
    heads_q, heads_k = (4, 2) if gqa else (2, 2)
    lead = [*batch, heads_q] if gqa or batch else list(batch)
    lead_k = [*batch, heads_k] if gqa or batch else list(batch)
    query = rng.standard_normal((*lead, target_len, depth)).astype(np.float32)
    key = rng.standard_normal((*lead_k, source_len, depth)).astype(np.float32)
    value = rng.standard_normal((*lead_k, source_len, value_depth)).astype(np.float32)
    kwargs = {"scale": scale, "enable_gqa": gqa}
    if mask == "causal":
        kwargs["is_causal"] = True
    elif mask in ("bool", "bool_empty_rows"):
        allowed = rng.random((target_len, source_len)) < 0.6
        if mask == "bool":
            allowed[:, 0] = True
        kwargs["attn_mask"] = allowed
    elif mask == "float":
        kwargs["attn_mask"] = rng.standard_normal((target_len, source_len)).astype(np.float32)
    expected = F.scaled_dot_product_attention(
        *(torch.from_numpy(t) for t in (query, key, value)),
        **{k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}).numpy()
    assert_equivalent(expected, np.asarray(scaled_dot_product_attention(query, key, value, **kwargs)))


@given(batch_first=st.booleans(), norm_first=st.booleans(), activation=st.sampled_from(["relu", "gelu"]),
       bias=st.booleans(), batch=st.integers(1, 3), length=st.integers(1, 6), heads=st.sampled_from([1, 2]),
       head_dim=st.integers(2, 4), feedforward=st.integers(1, 9), masks=st.sampled_from(MASKS[:2] + MASKS[3:4] +
                                                                                       MASKS[5:6]),
       seed=st.integers(0, 2**16))
def test_transformer_encoder_layer_matches_torch(batch_first, norm_first, activation, bias, batch, length, heads,
                                                 head_dim, feedforward, masks, seed):
    rng = _rng(seed)
    d_model = heads * head_dim
    args = {"dim_feedforward": feedforward, "dropout": 0.1, "activation": activation, "layer_norm_eps": 1e-5,
            "batch_first": batch_first, "norm_first": norm_first, "bias": bias}
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch.nn.TransformerEncoderLayer(d_model, heads, **args), seed).eval()
    ported = copy_torch_weights(reference, TransformerEncoderLayer(d_model, heads, **args))
    _same_keys(reference, ported)
    shape = (batch, length, d_model) if batch_first else (length, batch, d_model)
    src = (3.0 + rng.standard_normal(shape)).astype(np.float32)  # offset mean: LayerNorm must not drift
    kwargs = {}
    if "causal" in masks:
        kwargs["src_mask"] = _causal(length, length)
    if "kpm" in masks:
        kwargs["src_key_padding_mask"] = _padding(rng, batch, length)
    with torch.no_grad():
        expected = reference(torch.from_numpy(src), **{k: torch.from_numpy(v) for k, v in kwargs.items()}).numpy()
    assert_equivalent(expected, np.asarray(ported(src, **kwargs)))


@given(batch_first=st.booleans(), norm_first=st.booleans(), layers=st.integers(1, 2), final_norm=st.booleans(),
       batch=st.integers(1, 3), length=st.integers(2, 6), masks=st.sampled_from(["none", "causal", "kpm", "both"]),
       no_grad=st.booleans(), seed=st.integers(0, 2**16))
def test_transformer_encoder_matches_torch(batch_first, norm_first, layers, final_norm, batch, length, masks,
                                           no_grad, seed):
    rng = _rng(seed)
    torch.manual_seed(seed)
    args = {"dim_feedforward": 6, "batch_first": batch_first, "norm_first": norm_first}
    norm = torch.nn.LayerNorm(4) if final_norm else None
    reference = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, **args), layers, norm=norm,
                                            enable_nested_tensor=True)
    reference = perturb_torch_module(reference, seed).eval()
    ported = TransformerEncoder(TransformerEncoderLayer(4, 2, **args), layers,
                                norm=_TransformerLayerNorm(4) if final_norm else None)
    copy_torch_weights(reference, ported)
    _same_keys(reference, ported)
    shape = (batch, length, 4) if batch_first else (length, batch, 4)
    src = rng.standard_normal(shape).astype(np.float32)
    kwargs = {}
    if masks in ("causal", "both"):
        kwargs["mask"] = _causal(length, length)
    if masks in ("kpm", "both"):
        padding = np.zeros((batch, length), bool)  # left-aligned (torch's nested-tensor case) or scattered
        for row in range(batch):
            padding[row, rng.integers(1, length + 1):] = True
        if seed % 3 == 0:
            padding = _padding(rng, batch, length)
        kwargs["src_key_padding_mask"] = padding
    torch_kwargs = {k: torch.from_numpy(v) for k, v in kwargs.items()}
    if no_grad:  # torch inference: nested-tensor fast path zeroes padded positions; the port reproduces it
        with torch.no_grad():
            expected = reference(torch.from_numpy(src), **torch_kwargs).numpy()
        assert_equivalent(expected, np.asarray(ported(src, **kwargs)))
    else:  # grad-enabled torch takes the plain path: equal wherever a position is not padding
        expected = reference(torch.from_numpy(src), **torch_kwargs).detach().numpy()
        actual = np.asarray(ported(src, **kwargs))
        if "src_key_padding_mask" in kwargs:
            keep = ~kwargs["src_key_padding_mask"] if batch_first else ~kwargs["src_key_padding_mask"].T
            expected, actual = expected[keep], actual[keep]
        assert_equivalent(expected, actual)


@given(batch_first=st.booleans(), norm_first=st.booleans(), activation=st.sampled_from(["relu", "gelu"]),
       layers=st.integers(1, 2), batch=st.integers(1, 2), target_len=st.integers(1, 5), source_len=st.integers(1, 5),
       masks=st.booleans(), seed=st.integers(0, 2**16))
def test_transformer_decoder_matches_torch(batch_first, norm_first, activation, layers, batch, target_len,
                                           source_len, masks, seed):
    rng = _rng(seed)
    torch.manual_seed(seed)
    args = {"dim_feedforward": 7, "activation": activation, "batch_first": batch_first, "norm_first": norm_first}
    reference = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(6, 3, **args), layers,
                                            norm=torch.nn.LayerNorm(6))
    reference = perturb_torch_module(reference, seed).eval()
    ported = TransformerDecoder(TransformerDecoderLayer(6, 3, **args), layers, norm=_TransformerLayerNorm(6))
    copy_torch_weights(reference, ported)
    _same_keys(reference, ported)

    def sequence(length):
        shape = (batch, length, 6) if batch_first else (length, batch, 6)
        return rng.standard_normal(shape).astype(np.float32)

    tgt, memory = sequence(target_len), sequence(source_len)
    kwargs = {}
    if masks:
        kwargs = {"tgt_mask": _causal(target_len, target_len),
                  "tgt_key_padding_mask": _padding(rng, batch, target_len),
                  "memory_key_padding_mask": _padding(rng, batch, source_len)}
    with torch.no_grad():
        expected = reference(torch.from_numpy(tgt), torch.from_numpy(memory),
                             **{k: torch.from_numpy(v) for k, v in kwargs.items()}).numpy()
    assert_equivalent(expected, np.asarray(ported(tgt, memory, **kwargs)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first):
    rng = _rng(1)
    torch.manual_seed(1)
    args = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1, "dim_feedforward": 12,
            "batch_first": batch_first}
    reference = perturb_torch_module(torch.nn.Transformer(**args), 1).eval()
    ported = copy_torch_weights(reference, Transformer(**args))
    _same_keys(reference, ported)
    src = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8)).astype(np.float32)
    tgt = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8)).astype(np.float32)
    padding = np.zeros((2, 5), bool)
    padding[1, 3:] = True
    tgt_mask = Transformer.generate_square_subsequent_mask(4)
    assert_equivalent(torch.nn.Transformer.generate_square_subsequent_mask(4).numpy(), np.asarray(tgt_mask))
    with torch.no_grad():
        expected = reference(torch.from_numpy(src), torch.from_numpy(tgt), tgt_mask=torch.from_numpy(
            np.asarray(tgt_mask)), src_key_padding_mask=torch.from_numpy(padding)).numpy()
    actual = ported(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=padding)
    assert_equivalent(expected, np.asarray(actual))


def test_encoder_clones_layer_like_torch_deepcopy():
    template = TransformerEncoderLayer(4, 2, dim_feedforward=6, activation="gelu", batch_first=True)
    encoder = TransformerEncoder(template, 3)
    for layer in encoder.layers:
        assert layer is not template and layer.activation_arg == "gelu"
        for mine, source in zip(layer.torch_state(), template.torch_state()):
            assert mine.variable is not source.variable
            assert np.array_equal(np.asarray(mine.variable), np.asarray(source.variable))
    keys = [entry.key for entry in encoder.torch_state()]
    assert "layers.2.self_attn.in_proj_weight" in keys and "layers.0.norm2.bias" in keys


def test_encoder_inference_with_scattered_padding():
    """Not left-aligned padding: torch (no_grad) skips nested tensors but runs its fused layer kernel."""
    rng = _rng(11)
    torch.manual_seed(11)
    reference = perturb_torch_module(torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 4, 16, batch_first=True), 2), 11).eval()
    ported = copy_torch_weights(reference, TransformerEncoder(TransformerEncoderLayer(8, 4, 16, batch_first=True), 2))
    src = rng.standard_normal((3, 6, 8)).astype(np.float32)
    padding = np.zeros((3, 6), bool)
    padding[0, [1, 4]] = True
    padding[2, 5] = True
    with torch.no_grad():
        expected = reference(torch.from_numpy(src), src_key_padding_mask=torch.from_numpy(padding)).numpy()
    assert_equivalent(expected, np.asarray(ported(src, src_key_padding_mask=padding)))
    padding[0] = [False, False, False, False, True, True]  # left-aligned: torch nests, padded rows are zeros
    with torch.no_grad():
        expected = reference(torch.from_numpy(src), src_key_padding_mask=torch.from_numpy(padding)).numpy()
    actual = np.asarray(ported(src, src_key_padding_mask=padding))
    assert_equivalent(expected, actual)
    assert not actual[padding].any()


def test_callable_activation():
    rng = _rng(9)
    torch.manual_seed(9)
    reference = perturb_torch_module(torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(4, 2, 6, activation=F.silu, batch_first=True), 2), 9).eval()
    ported = copy_torch_weights(reference, TransformerEncoder(
        TransformerEncoderLayer(4, 2, 6, activation=tf.nn.silu, batch_first=True), 2))
    src = rng.standard_normal((2, 3, 4)).astype(np.float32)
    padding = np.array([[False, False, True], [False, False, False]])
    with torch.no_grad():  # not relu/gelu: torch takes no nested-tensor path, padded rows are computed
        expected = reference(torch.from_numpy(src), src_key_padding_mask=torch.from_numpy(padding)).numpy()
    assert_equivalent(expected, np.asarray(ported(src, src_key_padding_mask=padding)))


def test_no_transpose_and_xla_compile():
    rng = _rng(3)
    torch.manual_seed(3)
    encoder_ref = perturb_torch_module(torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=False, activation="gelu"), 2), 3).eval()
    encoder = copy_torch_weights(encoder_ref, TransformerEncoder(TransformerEncoderLayer(8, 2, 16, activation="gelu"),
                                                                 2))
    src = rng.standard_normal((5, 3, 8)).astype(np.float32)
    mask, padding = _causal(5, 5), _padding(rng, 3, 5)
    with torch.no_grad():
        expected = encoder_ref(torch.from_numpy(src), mask=torch.from_numpy(mask),
                               src_key_padding_mask=torch.from_numpy(padding)).numpy()

    def run(x, pad):
        return encoder(x, mask=mask, src_key_padding_mask=pad)

    assert_equivalent(expected, np.asarray(tf.function(run, jit_compile=True)(src, padding)))
    ops = _ops(run, tf.TensorSpec([5, None, 8]), tf.TensorSpec([None, 5], tf.bool))
    assert "Transpose" not in ops and "Einsum" in ops

    mha_ref = perturb_torch_module(torch.nn.MultiheadAttention(6, 3, kdim=4, vdim=5, batch_first=True)).eval()
    mha = copy_torch_weights(mha_ref, MultiheadAttention(6, 3, kdim=4, vdim=5, batch_first=True))
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 6), (2, 4, 4), (2, 4, 5)))
    expected = [t.detach().numpy() for t in mha_ref(torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
                                                    average_attn_weights=False)]

    def attend(q, k, v):
        return mha(q, k, v, average_attn_weights=False)

    for want, got in zip(expected, tf.function(attend, jit_compile=True)(q, k, v)):
        assert_equivalent(want, np.asarray(got))
    assert "Transpose" not in _ops(attend, tf.TensorSpec([None, 3, 6]), tf.TensorSpec([None, 4, 4]),
                                   tf.TensorSpec([None, 4, 5]))

    decoder_ref = perturb_torch_module(torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(6, 2, 8, batch_first=True, norm_first=True), 1)).eval()
    decoder = copy_torch_weights(decoder_ref, TransformerDecoder(
        TransformerDecoderLayer(6, 2, 8, batch_first=True, norm_first=True), 1))
    tgt, memory = rng.standard_normal((2, 3, 6)).astype(np.float32), rng.standard_normal((2, 4, 6)).astype(np.float32)
    with torch.no_grad():
        expected = decoder_ref(torch.from_numpy(tgt), torch.from_numpy(memory),
                               tgt_mask=torch.from_numpy(_causal(3, 3))).numpy()

    def decode(t, m):
        return decoder(t, m, tgt_mask=_causal(3, 3))

    assert_equivalent(expected, np.asarray(tf.function(decode, jit_compile=True)(tgt, memory)))
    assert "Transpose" not in _ops(decode, tf.TensorSpec([None, 3, 6]), tf.TensorSpec([None, 4, 6]))

    q, k, v = (rng.standard_normal((2, 2, n, 4)).astype(np.float32) for n in (3, 5, 5))
    expected = F.scaled_dot_product_attention(*(torch.from_numpy(t) for t in (q, k, v)), is_causal=True).numpy()
    sdpa = tf.function(lambda q, k, v: scaled_dot_product_attention(q, k, v, is_causal=True), jit_compile=True)
    assert_equivalent(expected, np.asarray(sdpa(q, k, v)))


def test_training_mode():
    torch.manual_seed(5)
    rng = _rng(5)
    src = rng.standard_normal((2, 4, 8)).astype(np.float32)
    # dropout 0: torch's training mode is deterministic and must match
    reference = perturb_torch_module(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True))
    ported = copy_torch_weights(reference, TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True))
    expected = reference.train()(torch.from_numpy(src)).detach().numpy()
    assert_equivalent(expected, np.asarray(ported(src, training=True)))
    # dropout > 0: training perturbs the output, inference is deterministic and equals torch eval
    reference = perturb_torch_module(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, batch_first=True))
    ported = copy_torch_weights(reference, TransformerEncoderLayer(8, 2, 16, dropout=0.5, batch_first=True))
    with torch.no_grad():
        expected = reference.eval()(torch.from_numpy(src)).numpy()
    assert_equivalent(expected, np.asarray(ported(src)))
    assert_equivalent(expected, np.asarray(ported(src, training=False)))
    assert np.abs(np.asarray(ported(src, training=True)) - expected).max() > 1e-3
    trained = tf.function(lambda x: ported(x, training=True), jit_compile=True)(src)
    assert np.all(np.isfinite(np.asarray(trained)))
    # MHA attention-weight dropout: weights rows no longer sum to 1 but stay finite
    mha = MultiheadAttention(8, 2, dropout=0.5)
    _, weights = mha(src, src, src, average_attn_weights=False, training=True)
    assert not np.allclose(np.asarray(weights).sum(-1), 1.0)


def test_mixed_precision_policy():
    rng = _rng(7)
    torch.manual_seed(7)
    reference = perturb_torch_module(torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)).eval()
    src = rng.standard_normal((2, 4, 8)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(src), src_mask=torch.from_numpy(_causal(4, 4))).numpy()
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        ported = copy_torch_weights(reference, TransformerEncoderLayer(8, 2, 16, batch_first=True))
        half = ported(src, src_mask=_causal(4, 4), is_causal=True)
        mha = MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)
        out, weights = mha(src, src[..., :3], src[..., :5], key_padding_mask=_padding(rng, 4, 2))
    finally:
        keras.config.set_dtype_policy(previous)
    assert half.dtype == tf.float16 and out.dtype == tf.float16 and weights.dtype == tf.float16
    assert_equivalent(expected, np.asarray(half, np.float32), tolerance=1e-2)
