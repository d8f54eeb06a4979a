"""Channel counts of channels-last tensors, as expressions on the model (`self.conv2.out_channels`).

They let a flatten of a channels-last tensor stay a plain reshape: the Linear that consumes it gets its
weight columns permuted once at load time (torch flattens (C, H, W), the port flattens (H, W, C)).
What each layer or function does to the channel count is its rule's declaration (porter/rules: a module rule's
`channels`, a function rule's `keeps_channels` or `pointwise`); this pass only follows it through the calls.
"""

from porter.ir.values import HANDED_CHANNELS
from porter.rules.registry import KEEPS_CHANNELS, keeps_channels


def counts_channels(rule):
    """True when layers of module rule `rule` hold their output's channel count in an attribute (a conv's
    `out_channels`)."""
    return rule.channels not in (None, KEEPS_CHANNELS)


def passes_channels(rule):
    """True when layers of module rule `rule` give out as many channels as they take (pools, pads, elementwise)."""
    return rule.layout == "any" or rule.channels == KEEPS_CHANNELS


def channels_after_rule(rule, layer_code, incoming):
    """Channel expression after module `layer_code` (a runtime layer of `rule`) given the incoming Value."""
    if passes_channels(rule):
        return incoming.channels
    if counts_channels(rule):
        return f"{layer_code}.{rule.channels}"
    return None


def rebase(expression, target_code, handed=None):
    """A callee's `self.x.out_channels` seen from its caller, where the callee is `target_code`; HANDED_CHANNELS (the
    count of the image the callee was handed) is that of `handed`, the caller's first argument."""
    if expression == HANDED_CHANNELS:
        return handed.channels if handed is not None and handed.is_tensor and handed.channels_last else None
    if expression is None or not expression.startswith("self.") or not target_code.startswith("self."):
        # (a loop's `block(x)`: no expression the model's `__init__` and weight loading can read)
        return None
    return target_code + expression[4:]


def channels_after_function(rule, incoming):
    """Channel expression after a channels-last call of function rule `rule` on the incoming Value."""
    return incoming.channels if keeps_channels(rule) else None
