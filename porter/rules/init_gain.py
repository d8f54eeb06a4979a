"""Rule: `nn.init.calculate_gain(nonlinearity, param=None)`, plain arithmetic on Python values."""

from porter.rules.registry import function_rule

function_rule("torch.nn.init.calculate_gain", runtime="calculate_gain", signature="(nonlinearity, param=None)",
              layout="source")
