"""Property tests of creation rules with no input tensor (porter/rules/tensor_ops.py: logspace, its base, one step,
a falling range, sizes read from the conv's output) against real torch, eagerly and under XLA."""

import torch

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "logspace": "y = torch.logspace(-1.0, 1.0, y.shape[3]) * y",
    "logspace_base": "y = y + torch.logspace(0, 3, steps=y.shape[2], base=2).view(1, 1, -1, 1)",
    "logspace_one_step": "y = torch.logspace(2, 3, 1) + y",
    "logspace_falling": "y = torch.logspace(1.5, -0.5, y.shape[3], base=3.0) * y",
    "logspace_keywords": "y = torch.logspace(start=-2, end=2, steps=5, base=10.0)[None, :, None, None] * y[:, :5]",
}

ported, test_creation_matches_torch = op_family_tests(OPS)


torch.set_num_threads(1)
