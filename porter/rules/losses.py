"""Rules: torch's loss functions and loss modules when model code computes its loss itself (GPT-style
`forward(idx, targets=None)` returning `(logits, loss)`, or an `nn.CrossEntropyLoss()` attribute).

Layout "source": predictions with their classes on torch's axis 1 (`cross_entropy` of (N, C, d1, ...)), targets as
given. The result is a scalar for reduction "mean"/"sum". The training script reads the source's training-loop
criterion separately (porter/training/losses.py).
"""

from porter.rules.registry import function_rule, module_rule

F = "torch.nn.functional."
_SIGNATURES = {
    "cross_entropy": "(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
                     "reduction='mean', label_smoothing=0.0)",
    "nll_loss": "(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean')",
    "mse_loss": "(input, target, size_average=None, reduce=None, reduction='mean')",
    "l1_loss": "(input, target, size_average=None, reduce=None, reduction='mean')",
    "smooth_l1_loss": "(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0)",
    "binary_cross_entropy_with_logits": "(input, target, weight=None, size_average=None, reduce=None, "
                                        "reduction='mean', pos_weight=None)",
    "binary_cross_entropy": "(input, target, weight=None, size_average=None, reduce=None, reduction='mean')",
}
for _name, _signature in _SIGNATURES.items():
    function_rule(F + _name, runtime=_name, signature=_signature, layout="source", rank=None)

for _module in ("CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "BCEWithLogitsLoss", "BCELoss"):
    module_rule(f"torch.nn.{_module}", runtime=_module, layout="source", rank_delta="unknown")
