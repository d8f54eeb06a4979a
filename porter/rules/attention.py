"""Rules: MultiheadAttention, the nn.Transformer family, F.scaled_dot_product_attention,
F.multi_head_attention_forward (CLIP's AttentionPool2d) and the private mask helpers torch's MultiheadAttention calls,
`F._canonical_mask` / `F._none_or_dtype` (all "source" layout)."""

from porter.ir.values import EinsumRecipe, Value, is_permuted, physical_order, python, result_of, tensor
from porter.rules.registry import Signature, function_rule, module_rule

module_rule("torch.nn.MultiheadAttention", runtime="MultiheadAttention", layout="source", training=True,
            outputs="tuple", items=("input", "tensor"),  # (the output: the query's rank; the weights or None)
            swaps_batch_axis=True,  # (query, key and value held batch-first for a sequence-first layer: swapped)
            params=("query", "key", "value"))
module_rule("torch.nn.TransformerEncoderLayer", runtime="TransformerEncoderLayer", layout="source", training=True,
            swaps_batch_axis=True)
module_rule("torch.nn.TransformerDecoderLayer", runtime="TransformerDecoderLayer", layout="source", training=True)
module_rule("torch.nn.TransformerEncoder", runtime="TransformerEncoder", layout="source", training=True,
            swaps_batch_axis=True)
module_rule("torch.nn.TransformerDecoder", runtime="TransformerDecoder", layout="source", training=True)
module_rule("torch.nn.Transformer", runtime="Transformer", layout="source", training=True)
SDPA_SIGNATURE = "(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False)"


class AttentionRecipe(EinsumRecipe):
    """An SDPA call whose output axis order is chosen by its consumer (pending transposes cost nothing)."""

    def __init__(self, name, operands, rest, layouts, env):
        super().__init__(layouts[:3], operands, layouts[3], env)
        self.name, self.rest = name, rest

    def code(self, output=None):
        layouts = tuple(self.inputs) + (output or self.output,)
        return f"{self.name}({', '.join(self.operands)}{self.rest}, layouts={layouts!r})"


def translate_sdpa(ctx, call):
    """F.scaled_dot_product_attention on q/k/v in whatever axis order they lie: einsum subscripts, no transposes."""
    bound = call.bind(Signature.parse(SDPA_SIGNATURE))
    query, key, value = (bound.get(n) for n in ("query", "key", "value"))
    name = ctx.runtime("scaled_dot_product_attention")
    ranks = {v.rank for v in (query, key, value) if v is not None}
    if None in (query, key, value) or len(ranks) != 1 or None in ranks or next(iter(ranks)) < 3 or \
            "enable_gqa" in bound or not any(is_permuted(v) for v in (query, key, value)):
        args = [ctx.plain(v) for v in call.all_args()]
        kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
        return tensor(f"{name}({ctx.join_args(args, kwargs)})", query.rank if query is not None else None)
    rank = next(iter(ranks))
    batch = "abcdefgh"[:rank - 2]
    torch_axes = {"query": batch + "le", "key": batch + "se", "value": batch + "sf"}
    layouts = tuple("".join(torch_axes[n][d] for d in physical_order(v))
                    for n, v in (("query", query), ("key", key), ("value", value))) + (batch + "lf",)
    rest = ""
    for param in ("attn_mask", "dropout_p", "is_causal", "scale"):
        if param in bound:
            rest += f", {param}={ctx.plain(bound[param]).code}"
    recipe = AttentionRecipe(name, [query.code, key.code, value.code], rest, layouts, ctx.variables())
    return tensor(recipe.code(), rank).but(static=recipe)


function_rule("torch.nn.functional.scaled_dot_product_attention", translate=translate_sdpa, layout="source")
function_rule("torch.nn.Transformer.generate_square_subsequent_mask", runtime="generate_square_subsequent_mask",
              signature="(sz, device=None, dtype=None)", layout="source")


def translate_canonical_mask(ctx, call):
    """F._canonical_mask: the mask in torch's order as a float mask (None stays None, so a None mask is code too)."""
    bound = call.bind(Signature.parse(CANONICAL_MASK_SIGNATURE))
    mask = bound.get("mask")
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    code = f"{ctx.runtime('canonical_mask')}({ctx.join_args(args, kwargs)})"
    if mask is None or not mask.is_tensor:
        return python(code)
    return tensor(code, mask.rank)


def translate_none_or_dtype(ctx, call):
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    return python(f"{ctx.runtime('none_or_dtype')}({ctx.join_args(args, kwargs)})")


CANONICAL_MASK_SIGNATURE = "(mask, mask_name, other_type, other_name, target_type, check_other=True)"
function_rule("torch.nn.functional._canonical_mask", translate=translate_canonical_mask, layout="source")
function_rule("torch.nn.functional._none_or_dtype", translate=translate_none_or_dtype, layout="source")


MHA_FORWARD_SIGNATURE = (
    "(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, "
    "dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None, need_weights=True, "
    "attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, "
    "static_k=None, static_v=None, average_attn_weights=True, is_causal=False)")


def translate_mha_forward(ctx, call):
    """F.multi_head_attention_forward on tensors in torch's order: (attn_output of the query's rank, the weights
    or None)."""
    query = call.bind(Signature.parse(MHA_FORWARD_SIGNATURE)).get("query")
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    code = f"{ctx.runtime('multi_head_attention_forward')}({ctx.join_args(args, kwargs)})"
    rank = query.rank if query is not None else None
    return result_of(Value(code, "tuple", items=(tensor("", rank), tensor("", None))), code)


function_rule("torch.nn.functional.multi_head_attention_forward", translate=translate_mha_forward, layout="source",
              outputs="tuple")
