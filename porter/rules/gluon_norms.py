"""Rules: Gluon's LayerNorm, InstanceNorm and GroupNorm -> porter/runtime/gluon_norms.py.

LayerNorm's layout follows its `axis`: the default (-1, the last axis) runs in Gluon's order (sequence models trace
no Transpose); a literal other axis (`axis=1`, an image's channels) runs channels-last as GluonLayerNormChannelsLast.
"""

from porter.rules.registry import ModuleRule, module_rule

GLUON_NN = "mxnet.gluon.nn."

_LAYER_NORM_CHANNELS_LAST = ModuleRule((GLUON_NN + "LayerNorm",), "GluonLayerNormChannelsLast", "channels_last",
                                       family="gluon_norms")


def _layer_norm_variant(positional, keywords):
    axis = keywords.get("axis", positional[0] if positional else "-1").replace(" ", "")
    if axis.lstrip("-").isdigit() and axis != "-1":
        return _LAYER_NORM_CHANNELS_LAST
    return _LAYER_NORM_SOURCE


_LAYER_NORM_SOURCE = module_rule(GLUON_NN + "LayerNorm", runtime="GluonLayerNorm", layout="source",
                                 variant=_layer_norm_variant)
module_rule(GLUON_NN + "InstanceNorm", runtime="GluonInstanceNorm", layout="channels_last")
module_rule(GLUON_NN + "GroupNorm", runtime="GluonGroupNorm", layout="channels_last")
