"""Property tests of the selection rules (porter/rules/selection_ops.py: median (torch's lower median), kthvalue,
cummax/cummin (ties and indices), logcumsumexp, searchsorted/bucketize (both sides, ties), scatter/scatter_add
(in place too), count_nonzero, empty_like) against real torch, on a Conv2d's channels-last output."""

import torch

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "median_all": "y = torch.median(y) * y",
    "median_all_even": "y = y[:, :2].median() + y",
    "median_dim_values": "y = torch.median(y, dim=1).values",
    "median_keepdim_indices": "v, i = y.median(-1, keepdim=True)\n        y = v + i.float()",
    "median_rounded_values": "y = torch.median(torch.round(y), 1)[0]",
    "kthvalue": "v, i = torch.kthvalue(y, 2, 1)\n        y = v + i.float()",
    "kthvalue_default_dim": "y = y.kthvalue(1, keepdim=True).values",
    "cummax": "v, i = torch.cummax(y, dim=1)\n        y = v + i.float()",
    "cummin_width": "y = y.cummin(-1).values",
    "cummax_ties": "v, i = torch.cummax(torch.round(y), 3)\n        y = v + i.float()",
    "cummin_ties_indices": "y = torch.cummin(torch.round(y), 1).indices.float()",
    # (NaN where y < 0; kept off 0 elsewhere: the log of a value near 0 magnifies float32's rounding past 1e-5)
    "cummax_nan": "v, i = torch.cummax(torch.log(y + (y > 0).float() * 0.1), 1)\n"
                  "        y = torch.nan_to_num(v, 9.0) + i.float()",
    "logcumsumexp": "y = torch.logcumsumexp(y, dim=2)",
    "logcumsumexp_channels": "y = y.logcumsumexp(1)",
    "searchsorted": "y = torch.searchsorted(torch.sort(y, dim=-1).values, y[:, :, :, :2]).float()",
    "searchsorted_right_ties": "s = torch.sort(torch.round(y), dim=-1).values\n"
                               "        y = torch.searchsorted(s, s, right=True).float()",
    "searchsorted_side_left_ties": "s = torch.sort(torch.round(y), dim=-1).values\n"
                                   "        y = torch.searchsorted(s, s, side='left').float()",
    "searchsorted_vector": "y = torch.searchsorted(torch.tensor([-1.0, 0.0, 0.5]), y).float()",
    "bucketize": "y = torch.bucketize(y, torch.tensor([-1.0, 0.0, 0.5])).float()",
    "bucketize_right_ties": "y = torch.bucketize(torch.round(y), torch.tensor([-1.0, 0.0, 1.0]), right=True).float()",
    "scatter": "y = torch.zeros_like(y).scatter(1, torch.argsort(y, dim=1), y)",
    "scatter_value": "y = y.scatter(3, torch.zeros_like(y[:, :, :, :1]).long(), 5.0)",
    "scatter_smaller_index": "y = y.scatter(1, torch.argsort(y, dim=1)[:, :2], y * 10)",
    "scatter_in_place": "y = y.clone()\n        y.scatter_(1, torch.argsort(y, dim=1)[:, :2], 0.0)",
    "scatter_reduce_add": "y = torch.zeros_like(y).scatter(1, (y > 0).long(), y, reduce='add')",
    "scatter_add": "y = torch.zeros_like(y[:, :2]).scatter_add(1, (y > 0).long(), y)",
    "scatter_add_in_place": "z = torch.ones_like(y[:, :3])\n        z.scatter_add_(1, (y > 0).long() * 2, y)\n"
                            "        y = z",
    "count_nonzero": "y = torch.count_nonzero(torch.relu(y), dim=1).float()",
    "count_nonzero_all": "y = torch.relu(y).count_nonzero() * y",
    "empty_like": "y = torch.zeros(torch.empty_like(y).shape) + y",
}


ported, test_selection_matches_torch = op_family_tests(OPS)


torch.set_num_threads(1)
