"""Rules: spectral normalisation of a layer, `torch.nn.utils.spectral_norm` (legacy: `weight_orig`, buffers
`weight_u`/`weight_v`) and `torch.nn.utils.parametrizations.spectral_norm` (`parametrizations.weight.original`,
`...0._u`, `...0._v`). Like weight_norm, each call hands back the layer it wraps (its layout behaviour kept); the
runtime (porter/runtime/spectral_norm.py) matches torch in evaluation, with u and v as loaded, and in training, where
each forward runs torch's power iteration and stores the new u and v."""

from porter.rules.registry import Signature, function_rule
from porter.rules.weight_norm import translate_module_wrapper

SIGNATURE = Signature.parse("(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None)")

function_rule("torch.nn.utils.spectral_norm", "torch.nn.utils.spectral_norm.spectral_norm",
              translate=translate_module_wrapper("spectral_norm", SIGNATURE), layout="source",
              returns_module_argument=True)
function_rule("torch.nn.utils.parametrizations.spectral_norm",
              translate=translate_module_wrapper("parametrized_spectral_norm", SIGNATURE), layout="source",
              returns_module_argument=True)
