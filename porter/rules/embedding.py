"""Rules: Embedding, EmbeddingBag, F.embedding, F.embedding_bag, F.one_hot (all on torch's axis order)."""

from porter.rules.registry import function_rule, module_rule

# Embedding's result has the index rank + 1 (a rule cannot say so yet: rank=None makes the translator assume the
# input's rank); EmbeddingBag's is always (bags, embedding_dim).
module_rule("torch.nn.Embedding", runtime="Embedding", layout="source", rank_delta=1, gathers=True)
module_rule("torch.nn.EmbeddingBag", runtime="EmbeddingBag", layout="source", rank=2)

F = "torch.nn.functional."
function_rule(F + "embedding", runtime="embedding", layout="source",
              signature="(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, "
                        "sparse=False)", rank_delta=1)
function_rule(F + "embedding_bag", runtime="embedding_bag", layout="source", rank=2,
              signature="(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, "
                        "mode='mean', sparse=False, per_sample_weights=None, include_last_offset=False, "
                        "padding_idx=None)")
# num_classes must be a literal int (the runtime raises otherwise: -1 would need a data-dependent shape).
function_rule(F + "one_hot", runtime="one_hot", signature="(tensor, num_classes=-1)", layout="source",
              rank_delta=1)
