"""Rules: `torch.cosine_similarity` / `F.cosine_similarity`, the cosine of two tensors along `dim` (torch's order;
the dim is reduced away, so the result has one dim fewer than the broadcast inputs); `F.pairwise_distance` /
`torch.pairwise_distance` and `nn.PairwiseDistance`, the p-norm of `x1 - x2 + eps` along the last dim (Siamese and
triplet heads)."""

from porter.rules.registry import function_rule, module_rule

function_rule("torch.cosine_similarity", "torch.nn.functional.cosine_similarity", runtime="cosine_similarity",
              signature="(x1, x2, dim=1, eps=1e-08)", layout="source", rank_delta=-1)
function_rule("torch.pairwise_distance", "torch.nn.functional.pairwise_distance", runtime="pairwise_distance",
              signature="(x1, x2, p=2.0, eps=1e-06, keepdim=False)", layout="source")
module_rule("torch.nn.PairwiseDistance", runtime="PairwiseDistance", layout="source", rank_delta="unknown")
