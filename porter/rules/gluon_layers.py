"""Rules: MXNet Gluon layers (`mxnet.gluon.nn.*`) -> the Gluon-semantics runtime layers in
porter/runtime/gluon_layers.py and gluon_containers.py (constructor arguments copied as written)."""

from porter.rules.registry import ModuleRule, module_rule

GLUON_NN = "mxnet.gluon.nn."

# Dense(flatten=False) contracts the last axis only, as torch's Linear: on a channels-last tensor of rank > 2 it
# contracts where that axis is stored (`layer(x, layout="channels_last")`), the rank kept
_DENSE_ON_LAST_AXIS = ModuleRule((GLUON_NN + "Dense",), "GluonDense", "source", family="gluon_layers",
                                 runs_channels_last=True)


def _dense_variant(positional, keywords):
    flatten = keywords.get("flatten", positional[3] if len(positional) > 3 else "True").strip()
    return _DENSE_ON_LAST_AXIS if flatten == "False" else _DENSE


_DENSE = module_rule(GLUON_NN + "Dense", runtime="GluonDense", layout="source", rank_delta="unknown",
                     variant=_dense_variant)
module_rule(GLUON_NN + "Conv1D", runtime="GluonConv1D", layout="channels_last", rank=3)
module_rule(GLUON_NN + "Conv2D", runtime="GluonConv2D", layout="channels_last", rank=4)
module_rule(GLUON_NN + "Conv3D", runtime="GluonConv3D", layout="channels_last", rank=5)
module_rule(GLUON_NN + "BatchNorm", runtime="GluonBatchNorm", layout="channels_last", training=True)
module_rule(GLUON_NN + "Activation", runtime="GluonActivation", layout="any")
module_rule(GLUON_NN + "LeakyReLU", runtime="GluonLeakyReLU", layout="any")
module_rule(GLUON_NN + "Dropout", runtime="GluonDropout", layout="any", training=True)
module_rule(GLUON_NN + "Flatten", runtime="GluonFlatten", layout="source", rank=2)
for _dims in (1, 2, 3):
    for _kind in ("MaxPool", "AvgPool", "GlobalAvgPool", "GlobalMaxPool"):
        module_rule(f"{GLUON_NN}{_kind}{_dims}D", runtime=f"Gluon{_kind}{_dims}D", layout="channels_last",
                    rank=_dims + 2)
module_rule(GLUON_NN + "PReLU", runtime="GluonPReLU", layout="channels_last")
for _name in ("ELU", "SELU", "GELU", "Swish"):
    module_rule(GLUON_NN + _name, runtime=f"Gluon{_name}", layout="any")
