"""Rules: activation modules, their functional forms, torch.* and Tensor.* aliases and in-place variants.

In-place forms (`F.relu_`, `Tensor.relu_`, ...) map to the same runtime function and carry `inplace=True` in
their rule's `extra`: the runtime returns the result, the translator rebinds the mutated name. `inplace=` arguments
are accepted and ignored by the runtime.
"""

from porter.rules.registry import KEEPS_CHANNELS, function_rule, module_rule, pointwise_rule

# Elementwise modules: any layout.
for _name in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardswish",
              "Hardsigmoid", "Hardtanh", "Sigmoid", "Tanh", "Softplus", "Softsign", "Tanhshrink", "LogSigmoid",
              "Threshold", "Hardshrink", "Softshrink"):
    module_rule(f"torch.nn.{_name}", runtime=_name, layout="any")
module_rule("torch.nn.RReLU", runtime="RReLU", layout="any", training=True)
# Channel-wise weight on torch dim 1 = the last axis of a channels-last tensor. (A single-parameter PReLU is
# elementwise; its runtime instance reports porter_layout "any", but a rule has one layout.)
module_rule("torch.nn.PReLU", runtime="PReLU", layout="channels_last", channels=KEEPS_CHANNELS)
# `dim` is a constructor argument in torch's axis order; on a channels-last tensor the runtime reads it where that
# layout stores the dim (no conversion)
for _name in ("Softmax", "LogSoftmax", "Softmin", "GLU"):
    module_rule(f"torch.nn.{_name}", runtime=_name, layout="source", runs_channels_last=True)

F = "torch.nn.functional."

pointwise_rule(F + "relu", "torch.relu", "Tensor.relu", runtime="relu", signature="(input, inplace=False)")
pointwise_rule(F + "relu_", "torch.relu_", "Tensor.relu_", runtime="relu", signature="(input)", inplace=True)
pointwise_rule(F + "relu6", runtime="relu6", signature="(input, inplace=False)")
pointwise_rule(F + "leaky_relu", runtime="leaky_relu", signature="(input, negative_slope=0.01, inplace=False)")
pointwise_rule(F + "leaky_relu_", runtime="leaky_relu", signature="(input, negative_slope=0.01)", inplace=True)
function_rule(F + "prelu", "torch.prelu", "Tensor.prelu", runtime="prelu", signature="(input, weight)",
              layout="channels_last", keeps_channels=True)
pointwise_rule(F + "rrelu", "torch.rrelu", runtime="rrelu",
               signature="(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False)",
               training_param="training")
pointwise_rule(F + "rrelu_", "torch.rrelu_", runtime="rrelu", signature="(input, lower=1.0 / 8, upper=1.0 / 3, "
               "training=False)", training_param="training", inplace=True)
pointwise_rule(F + "elu", runtime="elu", signature="(input, alpha=1.0, inplace=False)")
pointwise_rule(F + "elu_", runtime="elu", signature="(input, alpha=1.0)", inplace=True)
pointwise_rule(F + "selu", "torch.selu", runtime="selu", signature="(input, inplace=False)")
pointwise_rule(F + "selu_", "torch.selu_", runtime="selu", signature="(input)", inplace=True)
pointwise_rule(F + "celu", "torch.celu", runtime="celu", signature="(input, alpha=1.0, inplace=False)")
pointwise_rule(F + "celu_", "torch.celu_", runtime="celu", signature="(input, alpha=1.0)", inplace=True)
pointwise_rule(F + "gelu", runtime="gelu", signature="(input, approximate='none')")
pointwise_rule(F + "silu", runtime="silu", signature="(input, inplace=False)")
pointwise_rule(F + "mish", runtime="mish", signature="(input, inplace=False)")
pointwise_rule(F + "hardswish", runtime="hardswish", signature="(input, inplace=False)")
pointwise_rule(F + "hardsigmoid", runtime="hardsigmoid", signature="(input, inplace=False)")
pointwise_rule(F + "hardtanh", runtime="hardtanh", signature="(input, min_val=-1.0, max_val=1.0, inplace=False)")
pointwise_rule(F + "hardtanh_", runtime="hardtanh", signature="(input, min_val=-1.0, max_val=1.0)", inplace=True)
pointwise_rule(F + "sigmoid", "torch.sigmoid", "Tensor.sigmoid", "torch.special.expit", runtime="sigmoid",
               signature="(input)")
pointwise_rule("torch.sigmoid_", "Tensor.sigmoid_", runtime="sigmoid", signature="(input)", inplace=True)
pointwise_rule(F + "tanh", "torch.tanh", "Tensor.tanh", runtime="tanh", signature="(input)")
pointwise_rule("torch.tanh_", "Tensor.tanh_", runtime="tanh", signature="(input)", inplace=True)
pointwise_rule(F + "softplus", runtime="softplus", signature="(input, beta=1.0, threshold=20.0)")
pointwise_rule(F + "softsign", runtime="softsign", signature="(input)")
pointwise_rule(F + "tanhshrink", runtime="tanhshrink", signature="(input)")
pointwise_rule(F + "logsigmoid", runtime="logsigmoid", signature="(input)")
pointwise_rule(F + "threshold", "torch.threshold", runtime="threshold",
               signature="(input, threshold, value, inplace=False)")
pointwise_rule(F + "threshold_", "torch.threshold_", runtime="threshold", signature="(input, threshold, value)",
               inplace=True)
pointwise_rule(F + "hardshrink", "torch.hardshrink", "Tensor.hardshrink", runtime="hardshrink",
               signature="(input, lambd=0.5)")
pointwise_rule(F + "softshrink", runtime="softshrink", signature="(input, lambd=0.5)")

# Softmax family: the runtime receives `dim` remapped to the tensor's actual layout. dim=None means torch's legacy
# implicit dim (0 for ranks 0, 1, 3, else 1), which the runtime applies on torch's axis order only: a call without
# dim on a channels-last tensor must be converted to "source" first (extra `implicit_dim_needs_source`).
_SOFTMAX = "(input, dim=None, _stacklevel=3, dtype=None)"
function_rule(F + "softmax", "torch.softmax", "Tensor.softmax", "torch.special.softmax", runtime="softmax",
              signature=_SOFTMAX, axis_params=("dim",), implicit_dim_needs_source=True, same_rank=True)
function_rule(F + "log_softmax", "torch.log_softmax", "Tensor.log_softmax", "torch.special.log_softmax",
              runtime="log_softmax", signature=_SOFTMAX, axis_params=("dim",), implicit_dim_needs_source=True,
              same_rank=True)
function_rule(F + "softmin", runtime="softmin", signature=_SOFTMAX, axis_params=("dim",),
              implicit_dim_needs_source=True, same_rank=True)
function_rule(F + "glu", runtime="glu", signature="(input, dim=-1)", axis_params=("dim",), same_rank=True)
