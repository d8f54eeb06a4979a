"""Rule: `nn.init._calculate_fan_in_and_fan_out(tensor)` (timm's `variance_scaling_` / `lecun_normal_` read it):
(fan_in, fan_out) of a weight as torch counts them, Python ints, with the same shape convention as the runtime's
other initialisers (runtime/init_fans.py).

Layout "source": the weight is read in torch's order.
"""

from porter.rules.registry import function_rule

function_rule("torch.nn.init._calculate_fan_in_and_fan_out", runtime="calculate_fan_in_and_fan_out",
              signature="(tensor)", layout="source", outputs="python")
