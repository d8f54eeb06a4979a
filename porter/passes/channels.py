"""Channel counts of channels-last tensors, as expressions on the model (`self.conv2.out_channels`).

They let a flatten of a channels-last tensor stay a plain reshape: the Linear that consumes it gets its
weight columns permuted once at load time (torch flattens (C, H, W), the port flattens (H, W, C)).
"""

import re

CHANNEL_ATTRIBUTES = {
    "Conv1d": "out_channels", "Conv2d": "out_channels", "Conv3d": "out_channels",
    "ConvTranspose1d": "out_channels", "ConvTranspose2d": "out_channels", "ConvTranspose3d": "out_channels",
    "BatchNorm1d": "num_features", "BatchNorm2d": "num_features", "BatchNorm3d": "num_features",
    "SyncBatchNorm": "num_features", "InstanceNorm1d": "num_features", "InstanceNorm2d": "num_features",
    "InstanceNorm3d": "num_features", "GroupNorm": "num_channels",
}
CHANNELS_KEPT = re.compile(r"^(MaxPool|AvgPool|AdaptiveAvgPool|AdaptiveMaxPool|Upsample|UpsamplingNearest|"
                           r"UpsamplingBilinear|Dropout[123]d|FeatureAlphaDropout|PReLU|LocalResponseNorm|"
                           r"ZeroPad|ConstantPad|ReflectionPad|ReplicationPad|CircularPad)")


def channels_after_rule(rule, layer_code, incoming):
    """Channel expression after module `layer_code` (a runtime layer of `rule`) given the incoming Value."""
    if rule.layout == "any":
        return incoming.channels
    attribute = CHANNEL_ATTRIBUTES.get(rule.runtime)
    if attribute is not None:
        return f"{layer_code}.{attribute}"
    if CHANNELS_KEPT.match(rule.runtime):
        return incoming.channels
    return None


def rebase(expression, target_code):
    """A callee's `self.x.out_channels` seen from its caller, where the callee is `target_code`."""
    if expression is None or not expression.startswith("self."):
        return None
    return target_code + expression[4:]


FUNCTIONS_KEEPING_CHANNELS = re.compile(r"^(max_pool|avg_pool|adaptive_|interpolate|upsample|dropout|pad$|"
                                        r"relu|leaky_relu|gelu|silu|hardswish|elu|selu|celu|sigmoid|tanh|mish|"
                                        r"hardsigmoid|hardtanh|softplus|prelu|local_response_norm)")


def channels_after_function(runtime, incoming):
    return incoming.channels if FUNCTIONS_KEEPING_CHANNELS.match(runtime) else None
