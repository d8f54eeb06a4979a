"""Rules: MXNet Gluon layers (`mxnet.gluon.nn.*`) -> the Gluon-semantics runtime layers in
porter/runtime/gluon_layers.py and gluon_containers.py (constructor arguments copied as written)."""

from porter.rules.registry import module_rule

GLUON_NN = "mxnet.gluon.nn."

module_rule(GLUON_NN + "Dense", runtime="GluonDense", layout="source", rank_delta="unknown")
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
