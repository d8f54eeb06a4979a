"""Rules: nn.Flatten / nn.Unflatten (torch's axis order) and nn.Softmax2d (channels-last, softmax over channels)."""

from porter.rules.registry import module_rule

# Flatten / Unflatten change the rank (start..end merge; one axis splits): a rule cannot state that yet.
module_rule("torch.nn.Flatten", runtime="Flatten", layout="source", rank_delta="unknown")
module_rule("torch.nn.Unflatten", runtime="Unflatten", layout="source", rank_delta="unknown")
module_rule("torch.nn.Softmax2d", runtime="Softmax2d", layout="channels_last")
