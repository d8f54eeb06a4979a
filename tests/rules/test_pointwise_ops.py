"""Property tests of the pointwise rules (porter/rules/pointwise_ops.py: addcmul/addcdiv, lerp, logaddexp, log10,
lgamma, erfinv, hypot, xlogy, logit, nan_to_num, signbit, heaviside) against real torch, on a Conv2d's channels-last
output, operands broadcast across layouts, NaN/inf/-0.0 inputs made on purpose."""

import inspect

import torch

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "addcmul": "y = torch.addcmul(y, y.sin(), y.cos(), value=0.5)",
    "addcdiv_method": "y = y.addcdiv(y, y.exp() + 1.0)",
    "addcmul_in_place": "z = y.clone()\n        z.addcmul_(y, y[:, :1], value=-2)\n        y = z",
    "lerp_scalar": "y = torch.lerp(y, y.flip(1), 0.3)",
    "lerp_tensor_weight": "y = y.lerp(torch.zeros_like(y), torch.sigmoid(y) * 2 - 0.5)",
    "logaddexp": "y = torch.logaddexp(y, 2 * y[:, :1])",
    # one operand -inf on each side of 0 (well conditioned: `log(relu(y))` of a tiny y magnified the conv's rounding
    # under XLA past the tolerance), and both -inf, whose NaN would show through the exp
    "logaddexp_infinities": "y = torch.logaddexp(torch.log((y > 0).float() * (1 + y)),"
                            " torch.log((y <= 0).float() * (1 - y)))"
                            " + torch.logaddexp(torch.log(0 * y.abs()), torch.log(0 * y.abs())).exp()",
    "log10": "y = torch.log10(y.abs() + 1e-3)",
    "lgamma": "y = torch.lgamma(y.abs() + 0.1)",
    "erfinv": "y = torch.erfinv(torch.tanh(y) * 0.9)",
    "special_aliases": "y = torch.special.gammaln(y.abs() + 0.1)"
                       " + torch.special.xlogy(y.abs(), torch.special.logit(torch.sigmoid(y)).abs())",
    "hypot": "y = torch.hypot(y, y.mean(1, keepdim=True))",
    "xlogy": "y = torch.xlogy(torch.relu(y), y.abs() + 0.5)",
    "logit_eps": "y = torch.logit(torch.sigmoid(3 * y), eps=1e-3)",
    "logit_method": "y = torch.sigmoid(y).logit()",
    "nan_to_num": "y = torch.nan_to_num(torch.log(torch.floor(y)), posinf=7.0, neginf=-3.0)"
                  # 1/0 = inf and 0/0 = nan on whole numbers (floor): the same on both sides, unlike 1/y near 0
                  " + torch.nan_to_num(1.0 / torch.floor(y), 2.0, 7.0)"
                  " + torch.nan_to_num(torch.floor(y) / torch.floor(y), 2.0, 7.0)",
    "nan_to_num_default_max": "y = (torch.nan_to_num(1.0 / torch.relu(y)) == 3.4028234663852886e38).float() + torch.relu(y)",
    "nan_to_num_default_min": "y = (torch.nan_to_num(-1.0 / torch.relu(y)) == -3.4028234663852886e38).float() + torch.relu(y)",
    "signbit": "y = torch.signbit(y).float() + torch.signbit(-torch.relu(y)).float()",
    "heaviside": "y = torch.heaviside(torch.relu(y), y[:, :1])",
}


ported, test_pointwise_matches_torch = op_family_tests(OPS)


def test_keeps_channels_last(ported):
    """An elementwise op on the conv's output runs on its channels-last layout: nothing converted before it."""
    source = inspect.getsource(ported("log10").keras_module.OpModel.call)
    assert "log10(" in source and "to_channels_first" not in source.split("log10(")[1].split(")")[0], source


torch.set_num_threads(1)
