"""Property tests of the reorder rules (porter/rules/reorder_ops.py: flip, narrow, movedim, tile, broadcast_to,
diagonal/diag/diag_embed/trace, take, h/v/dstack, kron, rot90, block_diag) against real torch, on a Conv2d's
channels-last output, every dim form (positive, negative, keyword, method, varargs)."""

import inspect

import pytest
import torch

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "flip_channels": "y = torch.flip(y, [1])",
    "flip_method_varargs": "y = y.flip(-1, 2)",
    "flip_keyword_dims": "y = torch.flip(y, dims=(0, 3))",
    "flip_after_transpose": "y = y.transpose(1, 3).flip(1) * 2.0",
    "fliplr": "y = torch.fliplr(y)",
    "flipud_method": "y = y.flipud()",
    "narrow_channels": "y = torch.narrow(y, 1, 1, 4)",
    "narrow_width_negative_start": "y = y.narrow(-1, -1, 1)",
    "narrow_height_keyword": "y = y.narrow(dim=2, start=0, length=1)",
    "movedim": "y = torch.movedim(y, 1, -1)",
    "moveaxis_tuple": "y = y.moveaxis((1, 2), (3, 0))",
    "tile_fewer_dims": "y = torch.tile(y, (2,))",
    "tile_method_more_dims": "y = y.tile(2, 1, 1, 1, 3)",
    "broadcast_to": "y = torch.broadcast_to(y[:, :1], (y.shape[0], 4, y.shape[2], y.shape[3]))",
    "broadcast_to_keep": "y = y[:, :, :1].broadcast_to((2, -1, -1, 3, -1))",
    "diagonal_spatial": "y = torch.diagonal(y, 0, 2, 3)",
    "diagonal_offset_method": "y = y.diagonal(offset=1, dim1=-1, dim2=1)",
    "diagonal_negative_offset": "y = y.diagonal(-1, 1, 0)",
    "diag_embed": "y = torch.diag_embed(y.mean(dim=(2, 3)))",
    "diag_embed_dims": "y = torch.diag_embed(y.mean(dim=3), offset=-1, dim1=0, dim2=2)",
    "diag_vector": "y = torch.diag(y[0, :, 0, 0], 1)",
    "diag_matrix": "y = y[0, 0].diag()",
    "trace": "y = torch.trace(y[0, 0]) * y",
    "take": "y = torch.take(y, torch.tensor([[0, 5], [-1, 3]]))",
    "hstack": "y = torch.hstack([y, y[:, :2]])",
    "hstack_vectors": "y = torch.hstack((y[0, 0, 0], y[0, 1, 0]))",
    "vstack": "y = torch.vstack([y[0, 0], y[-1, 1]])",
    "vstack_vectors": "y = torch.vstack((y[0, 0, 0], y[0, 1, 0]))",
    "dstack": "y = torch.dstack([y[0, 0], y[0, 1]])",
    "dstack_vectors": "y = torch.dstack([y[0, 0, 0], y[0, 1, 0]])",
    "kron": "y = torch.kron(y[0, :2], y[0, 2:4])",
    "kron_ranks_differ": "y = y[0, 0].kron(y[0, 1:3])",
    "rot90": "y = torch.rot90(y, 1, (2, 3))",
    "rot90_three": "y = y.rot90(3, [1, 3])",
    "rot90_negative": "y = torch.rot90(y, -2, [3, 2])",
    "rot90_default": "y = torch.rot90(y)",
    "block_diag": "y = torch.block_diag(y[0, 0], y[-1, 1, :1], y[0, 2, 0, 0])",
    "block_diag_vector_first": "y = torch.block_diag(y[0, 0, 0], y[0, 1]) * 2.0",
    "block_diag_promoted": "y = torch.block_diag(torch.round(y[0, 0]).long(), y[0, 1].transpose(0, 1))",
    "block_diag_one": "y = torch.block_diag(y[0, 3])",
}


ported, test_reorder_matches_torch = op_family_tests(OPS)


@pytest.mark.parametrize("name, call", [("flip_channels", "flip(y, (3,))"), ("narrow_channels", "narrow(y, 3, 1, 4)")])
def test_keeps_channels_last(ported, name, call):
    """flip with literal dims and narrow run on the conv's channels-last output (torch dim 1 is stored last): no
    conversion before them."""
    source = inspect.getsource(ported(name).keras_module.OpModel.call)
    assert call in source, source


torch.set_num_threads(1)
