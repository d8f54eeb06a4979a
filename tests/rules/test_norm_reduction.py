"""Property tests of `torch.norm` / `Tensor.norm` (rules/tensor_ops.py `_reduction`) against real torch. Its second
parameter is the order `p`, not the dim: the port passes the dim by keyword (before, `torch.norm(y, dim=1,
keepdim=True)` of a channels-last image was written `norm(y, 3, keepdim=True)`, the 3-norm of everything: wrong
numbers in a CoordConv-style block). Cases: over the channels kept and dropped, the order written positionally or by
keyword (1, 2, 3, inf), over the spatial dims, over everything, and a flattened tensor in torch's order with the dim
positional; odd sizes and batch 1 drawn by hypothesis."""

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "channels_keepdim": "y = y / torch.norm(y, dim=1, keepdim=True).clamp(min=1e-3)",
    "channels_dropped": "y = y.norm(dim=1)",
    "positional_order_and_dim": "y = torch.norm(y, 2, 1, True) + y",
    "order_one_spatial": "y = y.norm(p=1, dim=(2, 3))",
    "order_three_last": "y = y.norm(3, dim=-1, keepdim=True) * y",
    "order_inf_channels": "y = torch.norm(y, float('inf'), dim=1)",
    "everything": "y = torch.norm(y) + y",
    "flat_positional_dim": "y = torch.norm(y.reshape(y.size(0), -1), 2, 1)",
}

ported, test_norm_matches_torch = op_family_tests(OPS)
