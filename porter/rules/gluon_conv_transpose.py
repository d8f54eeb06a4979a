"""Rules: Gluon's transposed convolutions (`gluon.nn.Conv1DTranspose`, `Conv2DTranspose`) ->
porter/runtime/gluon_conv_transpose.py, channels-last."""

from porter.rules.registry import module_rule

GLUON_NN = "mxnet.gluon.nn."

module_rule(GLUON_NN + "Conv1DTranspose", runtime="GluonConv1DTranspose", layout="channels_last", rank=3)
module_rule(GLUON_NN + "Conv2DTranspose", runtime="GluonConv2DTranspose", layout="channels_last", rank=4)
