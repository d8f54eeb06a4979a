"""Rule: `torch.cosine_similarity` / `F.cosine_similarity`, the cosine of two tensors along `dim` (torch's order;
the dim is reduced away, so the result has one dim fewer than the broadcast inputs)."""

from porter.rules.registry import function_rule

function_rule("torch.cosine_similarity", "torch.nn.functional.cosine_similarity", runtime="cosine_similarity",
              signature="(x1, x2, dim=1, eps=1e-08)", layout="source", rank_delta=-1)
