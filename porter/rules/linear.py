"""Rules: Linear, Bilinear, Identity, F.linear and F.bilinear."""

from porter.rules.registry import function_rule, module_rule

module_rule("torch.nn.Linear", runtime="Linear", layout="source", runs_channels_last=True, last_axis_only=True)
module_rule("torch.nn.Identity", runtime="Identity", layout="any")
function_rule("torch.nn.functional.linear", runtime="linear", signature="(input, weight, bias=None)", layout="source",
              runs_channels_last=True)
module_rule("torch.nn.Bilinear", runtime="Bilinear", layout="source")
function_rule("torch.nn.functional.bilinear", "torch.bilinear", runtime="bilinear",
              signature="(input1, input2, weight, bias=None)", layout="source")
