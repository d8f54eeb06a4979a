"""Rules: elementwise math (`torch.special` twins included) without a one-line TensorFlow twin (`torch.addcmul`/`addcdiv`, `lerp`, `logaddexp`,
`log10`, `lgamma`, `erfinv`, `hypot`, `xlogy`, `logit`, `nan_to_num`, `signbit`, `heaviside`).

Layout "any": they run on whatever layout arrives, several tensor operands brought to one layout first, so a
channels-last tensor stays channels-last. Dtype: float results (integer inputs give float32, as torch does);
signbit gives bool. In-place methods (`x.addcmul_(...)`) are the translator's: they rebind the name.
"""

from porter.rules.op_helpers import declarative_with_dtype
from porter.rules.registry import pointwise_rule

SIGNATURES = {
    "addcmul": "(input, tensor1, tensor2, value=1)",
    "addcdiv": "(input, tensor1, tensor2, value=1)",
    "lerp": "(input, end, weight)",
    "logaddexp": "(input, other)",
    "log10": "(input)",
    "lgamma": "(input)",
    "erfinv": "(input)",
    "hypot": "(input, other)",
    "xlogy": "(input, other)",
    "logit": "(input, eps=None)",
    "nan_to_num": "(input, nan=0.0, posinf=None, neginf=None)",
    "heaviside": "(input, values)",
}
SPECIAL_ALIASES = {"erfinv": ("torch.special.erfinv",), "logit": ("torch.special.logit",),
                   "xlogy": ("torch.special.xlogy",), "lgamma": ("torch.special.gammaln",)}
for _name, _signature in SIGNATURES.items():
    pointwise_rule(f"torch.{_name}", f"Tensor.{_name}", *SPECIAL_ALIASES.get(_name, ()), runtime=_name,
                   signature=_signature, layout="any")
pointwise_rule("torch.signbit", "Tensor.signbit", runtime="signbit", signature="(input)", layout="any",
              translate=declarative_with_dtype("bool"))
