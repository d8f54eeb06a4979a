"""Rules: Linear, Identity and F.linear."""

from porter.rules.registry import function_rule, module_rule

module_rule("torch.nn.Linear", runtime="Linear", layout="source")
module_rule("torch.nn.Identity", runtime="Identity", layout="any")
function_rule("torch.nn.functional.linear", runtime="linear", signature="(input, weight, bias=None)", layout="source")
