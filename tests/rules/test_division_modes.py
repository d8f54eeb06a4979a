"""Property tests of torch.div / divide with `rounding_mode` ("floor", "trunc"; before, the mode was dropped and the
quotient came out unrounded: timm EdgeNeXt's Fourier positions) and torch.add / sub with `alpha` (dropped before),
against real torch on a Conv2d's channels-last output, eagerly and under XLA: float and integer operands, negative
quotients (floor and trunc differ), a Python float meeting an integer tensor, compound operands
(a binary op's operands are parenthesised: `torch.sub(y, y - 1)` was `y - y - 1`); and cumsum of a bool mask in a
dtype (EdgeNeXt's `inv_mask.cumsum(1, dtype=torch.float32)` raised) or without one (int64, as in torch)."""

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "div_floor": "y = torch.div(y, 0.7, rounding_mode='floor')",
    "div_trunc_method": "y = y.div(-0.3, rounding_mode='trunc')",
    "divide_floor_tensor": "y = torch.divide(y, y.abs() + 0.5, rounding_mode='floor')",
    "div_none_keyword": "y = torch.div(y, 2.0, rounding_mode=None)",
    "div_floor_int": "y = torch.div((y * 5).long(), 3, rounding_mode='floor').float()",
    "div_trunc_int": "y = torch.div((y * 5).long(), -3, rounding_mode='trunc').float()",
    "div_floor_int_by_float": "y = torch.div((y * 5).long(), 2.5, rounding_mode='floor')",
    "div_floor_compound": "y = torch.div(y + 1.0, y * y + 1.0, rounding_mode='floor')",
    "add_alpha": "y = torch.add(y, y - 1.0, alpha=2)",
    "sub_alpha_method": "y = y.sub(y + 1.0, alpha=0.5)",
    "sub_compound": "y = torch.sub(y, y - 1.0)",
    "subtract_alpha": "y = torch.subtract(y, 3.0, alpha=-1.5)",
    "mul_compound": "y = torch.mul(y + 1.0, y - 2.0)",
    "lt_compound": "y = torch.lt(y + 1.0, y * 2).float()",
    "cumsum_bool_in_float": "y = (~(y > 0)).cumsum(2, dtype=torch.float32) + (y > 0).cumsum(1)",
}

ported, test_division_modes_match_torch = op_family_tests(OPS)
