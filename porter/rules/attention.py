"""Rules: MultiheadAttention, the nn.Transformer family and F.scaled_dot_product_attention (all "source" layout)."""

from porter.rules.registry import function_rule, module_rule

module_rule("torch.nn.MultiheadAttention", runtime="MultiheadAttention", layout="source", training=True,
            outputs="tuple")
module_rule("torch.nn.TransformerEncoderLayer", runtime="TransformerEncoderLayer", layout="source", training=True)
module_rule("torch.nn.TransformerDecoderLayer", runtime="TransformerDecoderLayer", layout="source", training=True)
module_rule("torch.nn.TransformerEncoder", runtime="TransformerEncoder", layout="source", training=True)
module_rule("torch.nn.TransformerDecoder", runtime="TransformerDecoder", layout="source", training=True)
module_rule("torch.nn.Transformer", runtime="Transformer", layout="source", training=True)
function_rule("torch.nn.functional.scaled_dot_product_attention", runtime="scaled_dot_product_attention",
              signature="(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, "
                        "enable_gqa=False)",
              layout="source")
function_rule("torch.nn.Transformer.generate_square_subsequent_mask", runtime="generate_square_subsequent_mask",
              signature="(sz, device=None, dtype=None)", layout="source")
