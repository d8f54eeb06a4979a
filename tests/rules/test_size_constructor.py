"""Property tests of the `torch.Size(...)` rule (porter/rules/size_constructor.py) against real torch: shapes built
by hand from an image's sizes and literals, handed to a reshape (spread too), a factory and affine_grid; eager and under XLA."""

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "reshape": "y = y.reshape(torch.Size([y.size(0), -1]))",
    "factory": "y = torch.zeros(torch.Size((y.shape[0], 3))) + y.mean()",
    "affine_grid": "theta = y.mean(dim=(2, 3))[:, :6].view(-1, 2, 3)\n        "
                   "y = F.affine_grid(theta, torch.Size([y.size(0), 1, 4, 3]), align_corners=False)",
    "empty": "y = y + len(torch.Size())",
    "spread": "y = y.flatten(1).view(y.size(0), *torch.Size([6, -1]))",
}

ported, test_size_matches_torch = op_family_tests(OPS, tolerance=1e-6)
