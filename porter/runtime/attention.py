"""torch.nn.MultiheadAttention, the nn.Transformer family and F.scaled_dot_product_attention as Keras code.

Everything computes in torch's own axis order ("source" layout): (L, N, E) or, with batch_first, (N, L, E).
Heads are split with reshapes and contracted with tf.einsum, so the traced graph holds no Transpose op.

Masks follow torch: MultiheadAttention / Transformer masks are bool (True = masked out) or float (added to the
scores); scaled_dot_product_attention bool masks are the other way round (True = may attend). As in torch,
MultiheadAttention with need_weights=True gives NaN for a query row whose keys are all masked, while the
need_weights=False path (torch's SDPA) and scaled_dot_product_attention give 0 there.

TransformerEncoder in inference reproduces torch's eval/no_grad "nested tensor" fast path: when the encoder is
eligible (see `_transformer_nested_eligible`) and a left-aligned src_key_padding_mask (and no mask) is given, the
padded positions of the layer stack's output are zeros (before the final norm), exactly as torch returns them.
"""

import math

import keras
import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.linear import Linear, linear

# ---------------------------------------------------------------------------------------------------------------
# private helpers


def _attn_additive_mask(mask, dtype):
    """A torch MHA-style mask as an additive float mask: bool True -> -inf, floats unchanged; None stays None."""
    if mask is None:
        return None
    mask = tf.convert_to_tensor(mask)
    if mask.dtype == tf.bool:
        return tf.where(mask, tf.constant(-np.inf, dtype), tf.constant(0.0, dtype))
    return tf.cast(mask, dtype)


def _attn_causal_mask(target_len, source_len, dtype):
    """Additive causal mask (target_len, source_len): -inf where key index > query index (torch's top-left)."""
    rows = tf.range(target_len)[:, None]
    cols = tf.range(source_len)[None, :]
    return tf.where(cols > rows, tf.constant(-np.inf, dtype), tf.constant(0.0, dtype))


def _attn_add_mask(mask, extra):
    if mask is None:
        return extra
    if extra is None:
        return mask
    return mask + extra


def _attn_score_dtype(dtype):
    """The dtype attention scores, masks and softmax are computed in: float32 for half-precision compute (a bfloat16
    score keeps 3 significant digits, and exp amplifies the error), else the compute dtype itself.

    The q.k product itself takes float32 operands: on TPU a float32 matmul runs at XLA's default precision as one
    bfloat16 pass with float32 accumulation and a float32 result, the cost of the bfloat16 matmul it replaces.
    """
    dtype = tf.as_dtype(dtype)
    return tf.float32 if dtype in (tf.float16, tf.bfloat16) else dtype


def _attn_softmax(scores, safe):
    """Softmax over the last axis. safe=True: rows that are all -inf give 0 (torch SDPA); else NaN (torch MHA)."""
    dtype = scores.dtype
    if dtype in (tf.float16, tf.bfloat16):
        scores = tf.cast(scores, tf.float32)
    peak = tf.reduce_max(scores, axis=-1, keepdims=True)
    if safe:
        peak = tf.where(tf.math.is_finite(peak), peak, tf.zeros_like(peak))
    exp = tf.exp(scores - tf.stop_gradient(peak))
    total = tf.reduce_sum(exp, axis=-1, keepdims=True)
    weights = tf.math.divide_no_nan(exp, total) if safe else exp / total
    return tf.cast(weights, dtype)


def _attn_dropout(x, rate, seed=None):
    """Inverted dropout like torch: zero with probability `rate`, scale the rest by 1/(1-rate)."""
    if rate <= 0.0:
        return x
    if rate >= 1.0:
        return tf.zeros_like(x)
    return keras.random.dropout(x, rate, seed=seed)


def _attn_dims(x):
    """Static sizes where known, else scalar tensors (for tf.reshape)."""
    dynamic = tf.shape(x)
    return [size if size is not None else dynamic[i] for i, size in enumerate(x.shape)]


def _attn_pad_last(mask, amount=1):
    """Append `amount` zero columns to an additive mask's last axis (for add_bias_kv / add_zero_attn)."""
    if mask is None:
        return None
    paddings = [[0, 0]] * (len(mask.shape) - 1) + [[0, amount]]
    return tf.pad(mask, paddings)


def _transformer_activation(activation):
    """torch's `activation` argument: "relu" / "gelu" strings or any unary callable (kept as given)."""
    if isinstance(activation, str):
        if activation == "relu":
            return tf.nn.relu
        if activation == "gelu":
            return _transformer_gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _transformer_gelu(x):
    """Exact (erf) GELU, torch's F.gelu default."""
    return 0.5 * x * (1.0 + tf.math.erf(x * tf.cast(1.0 / math.sqrt(2.0), x.dtype)))


def _transformer_is_relu_or_gelu(activation):
    """torch's `activation_relu_or_gelu` test, for translated activations (strings, functions, layers)."""
    if isinstance(activation, str):
        return activation in ("relu", "gelu")
    if getattr(activation, "__name__", None) in ("relu", "gelu", "_transformer_gelu"):
        return True
    return type(activation).__name__ in ("ReLU", "GELU")


def _transformer_clone(layer):
    """torch's copy.deepcopy of a module, for runtime layers: rebuild from get_config, copy the torch state."""
    config = dict(layer.get_config())
    config.pop("name", None)
    for key, value in config.items():
        if isinstance(value, keras.layers.Layer):
            config[key] = _transformer_clone(value)
    clone = type(layer).from_config(config)
    if hasattr(layer, "torch_state") and hasattr(clone, "torch_state"):
        for source, target in zip(layer.torch_state(), clone.torch_state()):
            target.variable.assign(source.variable)
    return clone


def _transformer_state_of(layer, prefix):
    """torch_state of a sub-layer that may be a plain callable (activation) or a layer without torch state."""
    if layer is None or not hasattr(layer, "torch_state"):
        return []
    return layer.torch_state(prefix)


class _TransformerLayerNorm(TorchLayer):
    """torch.nn.LayerNorm over the last axis, (x - mean) * rsqrt(var + eps) computed directly (no Keras drift)."""

    porter_layout = "source"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, **kwargs):
        super().__init__(**kwargs)
        self.normalized_shape = int(normalized_shape)
        self.eps, self.elementwise_affine, self.use_bias = eps, elementwise_affine, bias
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = self.add_weight(shape=(self.normalized_shape,), initializer="ones", name="weight")
            if bias:
                self.bias = self.add_weight(shape=(self.normalized_shape,), initializer="zeros", name="bias")
        self.finish_init()

    def call(self, x):
        dtype = x.dtype
        work = tf.cast(x, tf.float32) if dtype in (tf.float16, tf.bfloat16) else x
        mean = tf.reduce_mean(work, axis=-1, keepdims=True)
        centered = work - mean
        variance = tf.reduce_mean(tf.square(centered), axis=-1, keepdims=True)
        y = centered * tf.math.rsqrt(variance + tf.cast(self.eps, work.dtype))
        if self.weight is not None:
            y = y * tf.cast(self.weight, work.dtype)
        if self.bias is not None:
            y = y + tf.cast(self.bias, work.dtype)
        return tf.cast(y, dtype)

    def torch_state(self, prefix=""):
        entries = []
        if self.weight is not None:
            entries.append(StateEntry(prefix + "weight", self.weight))
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), "normalized_shape": self.normalized_shape, "eps": self.eps,
                "elementwise_affine": self.elementwise_affine, "bias": self.use_bias}


class _TransformerDropout(TorchLayer):
    """torch.nn.Dropout inside the transformer layers (identity in inference)."""

    porter_layout = "any"

    def __init__(self, p=0.5, **kwargs):
        super().__init__(**kwargs)
        self.p = float(p)
        self.seed_generator = keras.random.SeedGenerator() if 0.0 < self.p < 1.0 else None
        self.finish_init()

    def call(self, x, training=None):
        if not training:
            return x
        return _attn_dropout(x, self.p, self.seed_generator)

    def get_config(self):
        return {**super().get_config(), "p": self.p}


# ---------------------------------------------------------------------------------------------------------------
# F.scaled_dot_product_attention


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False, layouts=None):
    """torch.nn.functional.scaled_dot_product_attention on (..., L, E) / (..., S, E) / (..., S, Ev) tensors.

    Bool attn_mask: True = may attend; float attn_mask is added to the scores. Query rows with no key to attend
    give 0, like torch. Dropout is applied whenever dropout_p > 0 (as in torch: the caller passes 0 in eval).
    enable_gqa: key/value have fewer heads (axis -3) than query; each serves a group of query heads.
    """
    query = tf.convert_to_tensor(query)
    dtype = query.dtype
    key, value = tf.cast(key, dtype), tf.cast(value, dtype)
    target_len, source_len, depth = query.shape[-2], key.shape[-2], query.shape[-1]
    if target_len is None:
        target_len = tf.shape(query)[-2]
    if source_len is None:
        source_len = tf.shape(key)[-2]
    factor = 1.0 / math.sqrt(depth) if scale is None else scale
    grouped = enable_gqa and query.shape[-3] != key.shape[-3]
    if grouped:  # query (..., Hq, L, E) -> (..., Hk, G, L, E); keys/values get a broadcast G axis
        heads_q, heads_k = query.shape[-3], key.shape[-3]
        dims = _attn_dims(query)
        query = tf.reshape(query, dims[:-3] + [heads_k, heads_q // heads_k] + dims[-2:])
        key, value = tf.expand_dims(key, -3), tf.expand_dims(value, -3)
    if layouts is not None:  # porter: q/k/v stored in other axis orders (pending transposes), as einsum subscripts
        q_axes, k_axes, v_axes, out_axes = layouts
        batch = q_axes.replace("l", "").replace("e", "")
        batch = "".join(sorted(batch))
        depth = query.shape[q_axes.index("e")]
        target_len, source_len = query.shape[q_axes.index("l")], key.shape[k_axes.index("s")]
        factor = 1.0 / math.sqrt(depth) if scale is None else scale
    score_dtype = _attn_score_dtype(dtype)
    scaled_query, score_key = tf.cast(query, score_dtype) * tf.cast(factor, score_dtype), tf.cast(key, score_dtype)
    if layouts is not None:
        scores = tf.einsum(f"{q_axes},{k_axes}->{batch}ls", scaled_query, score_key)
    else:
        scores = tf.matmul(scaled_query, score_key, transpose_b=True)
    if grouped:
        dims = _attn_dims(scores)
        scores = tf.reshape(scores, dims[:-4] + [heads_q] + dims[-2:])
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("scaled_dot_product_attention: explicit attn_mask should not be set when "
                               "is_causal=True")
        scores = scores + _attn_causal_mask(target_len, source_len, score_dtype)
    elif attn_mask is not None:
        attn_mask = tf.convert_to_tensor(attn_mask)
        if attn_mask.dtype == tf.bool:
            attn_mask = tf.logical_not(attn_mask)
        scores = scores + _attn_additive_mask(attn_mask, score_dtype)
    weights = tf.cast(_attn_softmax(scores, safe=True), dtype)
    if dropout_p > 0.0:
        weights = _attn_dropout(weights, dropout_p)
    if grouped:
        dims = _attn_dims(weights)
        weights = tf.reshape(weights, dims[:-3] + [heads_k, heads_q // heads_k] + dims[-2:])
        out = tf.matmul(weights, value)
        dims = _attn_dims(out)
        return tf.reshape(out, dims[:-4] + [heads_q] + dims[-2:])
    if layouts is not None:
        return tf.einsum(f"{batch}ls,{v_axes}->{out_axes}", weights, value)
    return tf.matmul(weights, value)


# ---------------------------------------------------------------------------------------------------------------
# nn.MultiheadAttention


def _multi_head_attention(query, key, value, project, out_project, heads, bias_k, bias_v, add_zero_attn,
                          dropout_p, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal,
                          batch_first, seed_generator=None):
    """torch's multi-head attention after the checks: `project(query, key, value, dtype)` gives q, k, v (embed dim
    E each), `out_project` the output projection; (L, N, E) tensors, (N, L, E) with `batch_first`, or unbatched
    (L, E). Returns (attn_output, attn_weights or None)."""
    query = tf.convert_to_tensor(query)
    dtype = query.dtype
    key, value = tf.cast(key, dtype), tf.cast(value, dtype)
    batched = len(query.shape) == 3
    if not batched:  # unbatched (L, E): a batch of one, batch axis first
        query, key, value = (tf.expand_dims(t, 0) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = tf.expand_dims(tf.convert_to_tensor(key_padding_mask), 0)
    batch_first = batch_first or not batched
    seq_axis = 1 if batch_first else 0

    q, k, v = project(query, key, value, dtype)
    embed = int(q.shape[-1])
    depth = embed // heads
    score_dtype = _attn_score_dtype(dtype)
    key_padding_mask = _attn_additive_mask(key_padding_mask, score_dtype)
    attn_mask = _attn_additive_mask(attn_mask, score_dtype)
    # torch: the is_causal hint replaces attn_mask on its SDPA path (need_weights=False, no key padding mask),
    # after bias_kv / zero_attn extended the keys; elsewhere torch requires attn_mask to be given anyway.
    causal = is_causal and (attn_mask is None or (key_padding_mask is None and not need_weights))
    if causal:
        attn_mask = None

    if bias_k is not None:
        batch = tf.shape(k)[1 - seq_axis]
        extra = [batch, 1, embed] if batch_first else [1, batch, embed]
        k = tf.concat([k, tf.broadcast_to(tf.reshape(tf.cast(bias_k, dtype), [1, 1, embed]), extra)], axis=seq_axis)
        v = tf.concat([v, tf.broadcast_to(tf.reshape(tf.cast(bias_v, dtype), [1, 1, embed]), extra)], axis=seq_axis)
        attn_mask, key_padding_mask = _attn_pad_last(attn_mask), _attn_pad_last(key_padding_mask)

    def split_heads(t):
        dims = _attn_dims(t)
        return tf.reshape(t, dims[:2] + [heads, depth])

    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    if add_zero_attn:
        dims = _attn_dims(k)
        dims[seq_axis] = 1
        zeros = tf.zeros(dims, dtype)
        k, v = tf.concat([k, zeros], axis=seq_axis), tf.concat([v, zeros], axis=seq_axis)
        attn_mask, key_padding_mask = _attn_pad_last(attn_mask), _attn_pad_last(key_padding_mask)

    if causal:
        attn_mask = _attn_causal_mask(_attn_dims(q)[seq_axis], _attn_dims(k)[seq_axis], score_dtype)
    q = tf.cast(q, score_dtype) * tf.cast(math.sqrt(1.0 / depth), score_dtype)
    if batch_first:
        scores = tf.einsum("blhd,bshd->bhls", q, tf.cast(k, score_dtype))
    else:
        scores = tf.einsum("lbhd,sbhd->bhls", q, tf.cast(k, score_dtype))

    mask = None
    if attn_mask is not None:
        if len(attn_mask.shape) == 3:  # (N * H, L, S) -> (N, H, L, S)
            dims = _attn_dims(attn_mask)
            attn_mask = tf.reshape(attn_mask, [-1, heads] + dims[1:])
        mask = attn_mask
    if key_padding_mask is not None:  # (N, S) -> (N, 1, 1, S)
        dims = _attn_dims(key_padding_mask)
        mask = _attn_add_mask(mask, tf.reshape(key_padding_mask, [-1, 1, 1, dims[-1]]))
    if mask is not None:
        scores = scores + mask

    weights = tf.cast(_attn_softmax(scores, safe=not need_weights), dtype)
    if dropout_p > 0.0:
        weights = _attn_dropout(weights, dropout_p, seed_generator)
    if batch_first:
        out = tf.einsum("bhls,bshd->blhd", weights, v)
    else:
        out = tf.einsum("bhls,sbhd->lbhd", weights, v)
    dims = _attn_dims(out)
    out = out_project(tf.reshape(out, dims[:2] + [embed]))
    if not batched:
        out = tf.squeeze(out, 0)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = tf.reduce_mean(weights, axis=1)
    if not batched:
        weights = tf.squeeze(weights, 0)
    return out, weights


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward on (L, N, E) (or unbatched (L, E)) tensors, its weights in
    torch's (out, in) orientation (CLIP's AttentionPool2d hands it three Linears' weights and their biases)."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not supported by the port")
    embed = int(tf.convert_to_tensor(query).shape[-1])
    if embed != embed_dim_to_check:
        raise ValueError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed}")
    if embed % num_heads:
        raise ValueError(f"embed_dim {embed} not divisible by num_heads {num_heads}")

    def project(q, k, v, dtype):
        bias = tf.cast(in_proj_bias, dtype) if in_proj_bias is not None else None
        b_q, b_k, b_v = (None, None, None) if bias is None else (bias[:embed], bias[embed:2 * embed],
                                                                 bias[2 * embed:])
        if use_separate_proj_weight:
            w_q, w_k, w_v = (tf.cast(w, dtype) for w in (q_proj_weight, k_proj_weight, v_proj_weight))
        else:
            weight = tf.cast(in_proj_weight, dtype)
            w_q, w_k, w_v = weight[:embed], weight[embed:2 * embed], weight[2 * embed:]
        return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)

    def out_project(x):
        return linear(x, tf.cast(out_proj_weight, x.dtype),
                      None if out_proj_bias is None else tf.cast(out_proj_bias, x.dtype))

    return _multi_head_attention(query, key, value, project, out_project, num_heads, bias_k, bias_v,
                                 add_zero_attn, dropout_p if training else 0.0, key_padding_mask, need_weights,
                                 attn_mask, average_attn_weights, is_causal, False)


class MultiheadAttention(TorchLayer):
    """torch.nn.MultiheadAttention: parameters in torch's layout and names, computed without Transpose ops.

    call(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None, average_attn_weights=True,
    is_causal=False) -> (attn_output, attn_weights or None), on (L, N, E) tensors, (N, L, E) with batch_first,
    or unbatched (L, E). attn_weights: (N, L, S) averaged over heads, or (N, H, L, S).
    """

    porter_layout = "source"

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise ValueError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.use_bias, self.batch_first = float(dropout), bias, batch_first
        self.add_bias_kv, self.add_zero_attn = add_bias_kv, add_zero_attn
        self.head_dim = embed_dim // num_heads
        xavier = keras.initializers.GlorotUniform()
        self.in_proj_weight = self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = self.add_weight(shape=(3 * embed_dim, embed_dim), initializer=xavier,
                                                  name="in_proj_weight")
        else:
            self.q_proj_weight = self.add_weight(shape=(embed_dim, embed_dim), initializer=xavier,
                                                 name="q_proj_weight")
            self.k_proj_weight = self.add_weight(shape=(embed_dim, self.kdim), initializer=xavier,
                                                 name="k_proj_weight")
            self.v_proj_weight = self.add_weight(shape=(embed_dim, self.vdim), initializer=xavier,
                                                 name="v_proj_weight")
        self.in_proj_bias = (self.add_weight(shape=(3 * embed_dim,), initializer="zeros", name="in_proj_bias")
                             if bias else None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, name="out_proj")
        if bias:
            self.out_proj.bias.assign(np.zeros((embed_dim,), np.float32))
        self.bias_k = self.bias_v = None
        if add_bias_kv:
            normal = keras.initializers.RandomNormal(stddev=math.sqrt(1.0 / embed_dim))
            self.bias_k = self.add_weight(shape=(1, 1, embed_dim), initializer=normal, name="bias_k")
            self.bias_v = self.add_weight(shape=(1, 1, embed_dim), initializer=normal, name="bias_v")
        self.seed_generator = keras.random.SeedGenerator() if 0.0 < self.dropout < 1.0 else None
        self.finish_init()

    def _project(self, query, key, value, dtype):
        embed = self.embed_dim
        bias = tf.cast(self.in_proj_bias, dtype) if self.in_proj_bias is not None else None
        b_q, b_k, b_v = (None, None, None) if bias is None else (bias[:embed], bias[embed:2 * embed],
                                                                 bias[2 * embed:])
        if self._qkv_same_embed_dim:
            weight = tf.cast(self.in_proj_weight, dtype)
            if query is key and key is value:  # self-attention: one matmul, as torch's packed projection
                return tf.split(linear(query, weight, bias), 3, axis=-1)
            w_q, w_k, w_v = weight[:embed], weight[embed:2 * embed], weight[2 * embed:]
        else:
            w_q, w_k, w_v = (tf.cast(w, dtype) for w in (self.q_proj_weight, self.k_proj_weight,
                                                          self.v_proj_weight))
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    def call(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
             average_attn_weights=True, is_causal=False, training=None, swapped=False):
        """`swapped`: the caller holds query, key and value with their first two axes swapped (a sequence-first
        input held batch-first): they are attended so and the output is held so."""
        return _multi_head_attention(
            query, key, value, self._project, self.out_proj, self.num_heads, self.bias_k, self.bias_v,
            self.add_zero_attn, self.dropout if training else 0.0, key_padding_mask, need_weights, attn_mask,
            average_attn_weights, is_causal, self.batch_first != bool(swapped), self.seed_generator)

    def torch_state(self, prefix=""):
        entries = []
        if self.in_proj_weight is not None:
            entries.append(StateEntry(prefix + "in_proj_weight", self.in_proj_weight))
        else:
            entries += [StateEntry(prefix + "q_proj_weight", self.q_proj_weight),
                        StateEntry(prefix + "k_proj_weight", self.k_proj_weight),
                        StateEntry(prefix + "v_proj_weight", self.v_proj_weight)]
        if self.in_proj_bias is not None:
            entries.append(StateEntry(prefix + "in_proj_bias", self.in_proj_bias))
        if self.bias_k is not None:
            entries += [StateEntry(prefix + "bias_k", self.bias_k), StateEntry(prefix + "bias_v", self.bias_v)]
        return entries + self.out_proj.torch_state(prefix + "out_proj.")

    def get_config(self):
        return {**super().get_config(), "embed_dim": self.embed_dim, "num_heads": self.num_heads,
                "dropout": self.dropout, "bias": self.use_bias, "add_bias_kv": self.add_bias_kv,
                "add_zero_attn": self.add_zero_attn, "kdim": self.kdim, "vdim": self.vdim,
                "batch_first": self.batch_first}


# ---------------------------------------------------------------------------------------------------------------
# nn.TransformerEncoderLayer / TransformerDecoderLayer


class TransformerEncoderLayer(TorchLayer):
    """torch.nn.TransformerEncoderLayer (post-norm, or pre-norm with norm_first); torch's submodule names."""

    porter_layout = "source"

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_p, self.layer_norm_eps, self.batch_first = float(dropout), layer_norm_eps, batch_first
        self.norm_first, self.use_bias, self.activation_arg = norm_first, bias, activation
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            name="self_attn")
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, name="linear1")
        self.dropout = _TransformerDropout(dropout, name="dropout")
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, name="linear2")
        self.norm1 = _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias, name="norm1")
        self.norm2 = _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias, name="norm2")
        self.dropout1 = _TransformerDropout(dropout, name="dropout1")
        self.dropout2 = _TransformerDropout(dropout, name="dropout2")
        self.activation = _transformer_activation(activation)
        self.activation_relu_or_gelu = _transformer_is_relu_or_gelu(activation)
        self.finish_init()

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal, training, swapped=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal, training=training, swapped=swapped)[0]
        return self.dropout1(x, training=training)

    def _ff_block(self, x, training):
        x = self.linear2(self.dropout(self.activation(self.linear1(x)), training=training))
        return self.dropout2(x, training=training)

    def call(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False, training=None, swapped=False):
        """`swapped`: the caller holds src with its first two axes swapped (see MultiheadAttention)."""
        x = tf.convert_to_tensor(src)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal, training, swapped)
            x = x + self._ff_block(self.norm2(x), training)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal, training, swapped))
            x = self.norm2(x + self._ff_block(x, training))
        return x

    def torch_state(self, prefix=""):
        entries = self.self_attn.torch_state(prefix + "self_attn.")
        for name in ("linear1", "linear2", "norm1", "norm2"):
            entries += getattr(self, name).torch_state(prefix + name + ".")
        return entries + _transformer_state_of(self.activation, prefix + "activation.")

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "nhead": self.nhead,
                "dim_feedforward": self.dim_feedforward, "dropout": self.dropout_p,
                "activation": self.activation_arg, "layer_norm_eps": self.layer_norm_eps,
                "batch_first": self.batch_first, "norm_first": self.norm_first, "bias": self.use_bias}


class TransformerDecoderLayer(TorchLayer):
    """torch.nn.TransformerDecoderLayer: self-attention, cross-attention (multihead_attn) and feed-forward."""

    porter_layout = "source"

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_p, self.layer_norm_eps, self.batch_first = float(dropout), layer_norm_eps, batch_first
        self.norm_first, self.use_bias, self.activation_arg = norm_first, bias, activation
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            name="self_attn")
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, name="multihead_attn")
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, name="linear1")
        self.dropout = _TransformerDropout(dropout, name="dropout")
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, name="linear2")
        self.norm1 = _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias, name="norm1")
        self.norm2 = _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias, name="norm2")
        self.norm3 = _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias, name="norm3")
        self.dropout1 = _TransformerDropout(dropout, name="dropout1")
        self.dropout2 = _TransformerDropout(dropout, name="dropout2")
        self.dropout3 = _TransformerDropout(dropout, name="dropout3")
        self.activation = _transformer_activation(activation)
        self.finish_init()

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal, training):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False, training=training)[0]
        return self.dropout1(x, training=training)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal, training):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False, training=training)[0]
        return self.dropout2(x, training=training)

    def _ff_block(self, x, training):
        x = self.linear2(self.dropout(self.activation(self.linear1(x)), training=training))
        return self.dropout3(x, training=training)

    def call(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
             memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False, training=None):
        x = tf.convert_to_tensor(tgt)
        memory = tf.cast(memory, x.dtype)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal, training)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal,
                                    training)
            x = x + self._ff_block(self.norm3(x), training)
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal, training))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal,
                                               training))
            x = self.norm3(x + self._ff_block(x, training))
        return x

    def torch_state(self, prefix=""):
        entries = self.self_attn.torch_state(prefix + "self_attn.")
        entries += self.multihead_attn.torch_state(prefix + "multihead_attn.")
        for name in ("linear1", "linear2", "norm1", "norm2", "norm3"):
            entries += getattr(self, name).torch_state(prefix + name + ".")
        return entries + _transformer_state_of(self.activation, prefix + "activation.")

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "nhead": self.nhead,
                "dim_feedforward": self.dim_feedforward, "dropout": self.dropout_p,
                "activation": self.activation_arg, "layer_norm_eps": self.layer_norm_eps,
                "batch_first": self.batch_first, "norm_first": self.norm_first, "bias": self.use_bias}


# ---------------------------------------------------------------------------------------------------------------
# nn.TransformerEncoder / TransformerDecoder / Transformer


def _transformer_nested_eligible(layer, enable_nested_tensor):
    """torch's TransformerEncoder.__init__ test for the nested-tensor (padding-dropping) inference path."""
    return (enable_nested_tensor and isinstance(layer, TransformerEncoderLayer) and not layer.norm_first
            and layer.batch_first and layer.use_bias and layer.activation_relu_or_gelu and layer.nhead % 2 == 0)


class TransformerEncoder(TorchLayer):
    """torch.nn.TransformerEncoder: num_layers clones of encoder_layer (layers.0, layers.1, ...) and an optional
    final norm. In inference, padded positions come out as torch's nested-tensor fast path returns them (zeros)."""

    porter_layout = "source"

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True, **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.enable_nested_tensor, self.mask_check = num_layers, enable_nested_tensor, mask_check
        self.layers = [_transformer_clone(encoder_layer) for _ in range(num_layers)]
        self.norm = norm
        self.use_nested_tensor = _transformer_nested_eligible(encoder_layer, enable_nested_tensor)
        self.finish_init()

    def call(self, src, mask=None, src_key_padding_mask=None, is_causal=None, training=None, swapped=False):
        """`swapped`: the caller holds src with its first two axes swapped (see MultiheadAttention)."""
        output = tf.convert_to_tensor(src)
        # is_causal=None: torch detects a causal mask only to pick a kernel; using the mask itself is the same.
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal), training=training, **({"swapped": True} if swapped else {}))
        if (self.use_nested_tensor and not training and src_key_padding_mask is not None and mask is None
                and len(output.shape) == 3):
            output = _transformer_zero_padding(output, src_key_padding_mask, swapped)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def torch_state(self, prefix=""):
        entries = []
        for index, layer in enumerate(self.layers):
            entries += layer.torch_state(f"{prefix}layers.{index}.")
        return entries + _transformer_state_of(self.norm, prefix + "norm.")

    def get_config(self):
        return {**super().get_config(), "encoder_layer": self.layers[0], "num_layers": self.num_layers,
                "norm": self.norm, "enable_nested_tensor": self.enable_nested_tensor, "mask_check": self.mask_check}


def _transformer_zero_padding(output, key_padding_mask, swapped=False):
    """torch's nested-tensor round trip: with a left-aligned padding mask (N, S), padded rows of (N, S, E) -> 0
    (of (S, N, E) when `swapped`: the output held with its first two axes swapped)."""
    key_padding_mask = tf.convert_to_tensor(key_padding_mask)
    padded = key_padding_mask if key_padding_mask.dtype == tf.bool else tf.not_equal(key_padding_mask, 0)
    steps = tf.cast(padded, tf.int32)
    left_aligned = tf.reduce_all(steps[:, 1:] >= steps[:, :-1])
    drop = tf.logical_and(padded, left_aligned)
    drop = (tf.transpose(drop) if swapped else drop)[:, :, None]
    return tf.where(drop, tf.zeros_like(output), output)


class TransformerDecoder(TorchLayer):
    """torch.nn.TransformerDecoder: num_layers clones of decoder_layer (layers.0, ...) and an optional norm."""

    porter_layout = "source"

    def __init__(self, decoder_layer, num_layers, norm=None, **kwargs):
        super().__init__(**kwargs)
        self.num_layers = num_layers
        self.layers = [_transformer_clone(decoder_layer) for _ in range(num_layers)]
        self.norm = norm
        self.finish_init()

    def call(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
             memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False, training=None):
        output = tf.convert_to_tensor(tgt)
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                           memory_is_causal=memory_is_causal, training=training)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def torch_state(self, prefix=""):
        entries = []
        for index, layer in enumerate(self.layers):
            entries += layer.torch_state(f"{prefix}layers.{index}.")
        return entries + _transformer_state_of(self.norm, prefix + "norm.")

    def get_config(self):
        return {**super().get_config(), "decoder_layer": self.layers[0], "num_layers": self.num_layers,
                "norm": self.norm}


def canonical_mask(mask, mask_name="mask", other_type=None, other_name="", target_type=None, check_other=True):
    """torch.nn.functional._canonical_mask (torch's MultiheadAttention and code copied from it): a bool mask as a
    float one of `target_type`, -inf where True and 0 elsewhere; a float mask unchanged; None stays None."""
    if mask is None:
        return None
    mask = tf.convert_to_tensor(mask)
    if mask.dtype == tf.bool:
        return _attn_additive_mask(mask, tf.as_dtype(target_type) if target_type is not None else tf.float32)
    if not mask.dtype.is_floating:
        raise TypeError(f"only bool and floating types of {mask_name} are supported")
    return mask


def none_or_dtype(input):
    """torch.nn.functional._none_or_dtype: None for None, else the tensor's dtype."""
    return None if input is None else tf.convert_to_tensor(input).dtype


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """torch.nn.Transformer.generate_square_subsequent_mask: (sz, sz) float mask, -inf above the diagonal."""
    return _attn_causal_mask(sz, sz, tf.float32 if dtype is None else dtype)


class Transformer(TorchLayer):
    """torch.nn.Transformer: encoder (TransformerEncoder + LayerNorm) and decoder (TransformerDecoder + LayerNorm),
    or custom_encoder / custom_decoder."""

    porter_layout = "source"

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.config_args = {
            "d_model": d_model, "nhead": nhead, "num_encoder_layers": num_encoder_layers,
            "num_decoder_layers": num_decoder_layers, "dim_feedforward": dim_feedforward, "dropout": dropout,
            "activation": activation, "custom_encoder": custom_encoder, "custom_decoder": custom_decoder,
            "layer_norm_eps": layer_norm_eps, "batch_first": batch_first, "norm_first": norm_first, "bias": bias}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args), num_encoder_layers,
                                              _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                                    name="norm"), name="encoder")
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args), num_decoder_layers,
                                              _TransformerLayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                                    name="norm"), name="decoder")
        xavier = keras.initializers.GlorotUniform()  # torch's _reset_parameters: xavier_uniform_ on every matrix
        for entry in self.torch_state():
            if len(entry.variable.shape) > 1:
                entry.variable.assign(xavier(entry.variable.shape))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self.finish_init()

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def call(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
             tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
             memory_is_causal=False, training=None):
        if len(src.shape) == 3 and src.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal, training=training)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal, training=training)

    def torch_state(self, prefix=""):
        return self.encoder.torch_state(prefix + "encoder.") + self.decoder.torch_state(prefix + "decoder.")

    def get_config(self):
        return {**super().get_config(), **self.config_args}
