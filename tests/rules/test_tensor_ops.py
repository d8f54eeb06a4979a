"""Numeric tests of the tensor-op rules (porter/rules/tensor_ops.py) through the translator, against real torch.

Each op runs on the output of a Conv2d, i.e. on a channels-last tensor inside the port, so the layout logic
(axis remapping, pending transposes, flatten order) is what is tested; input sizes are drawn by hypothesis, only
from those torch accepts for the op, so every example compares outputs.
"""

import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair

OPS = {
    "view_flatten": "y = y.view(y.size(0), -1)",
    "reshape_split_channels": "y = y.reshape(y.shape[0], 2, 3, y.shape[2], y.shape[3]).sum(2)",
    "flatten_spatial": "y = torch.flatten(y, 2).transpose(1, 2)",
    "permute_nhwc": "y = y.permute(0, 2, 3, 1) * 2.0",
    "permute_roundtrip": "y = y.permute(0, 2, 3, 1).permute(0, 3, 1, 2) + 1.0",
    "transpose_hw": "y = y.transpose(2, 3)",
    "cat_channels": "y = torch.cat([y, y * 2], dim=1)",
    "stack_last": "y = torch.stack([y, -y], dim=-1)",
    "split_chunk": "a, b = y.chunk(2, dim=1)\n        y = a * torch.sigmoid(b)",
    "split_sizes": "a, b = torch.split(y, [2, 4], dim=1)\n        y = a.sum(1) + b.mean(1)",
    # the list a split returns, used whole (its pieces alike: channels-last inside the port)
    "stack_of_chunks": "y = torch.stack(y.chunk(2, dim=1)).mean(dim=0)",
    "cat_reversed_chunks": "y = torch.cat(y.chunk(3, dim=1)[::-1], dim=1)",
    "stack_of_split": "y = torch.stack(torch.split(y, 2, dim=1), dim=2).sum(1)",
    "chunk_index_dynamic": "i = y.shape[0] % 2\n        y = y.chunk(2, dim=1)[i] + y.unbind(1)[i].unsqueeze(1)",
    "mean_spatial_keepdim": "y = y - y.mean(dim=(2, 3), keepdim=True)",
    "var_mean_spatial": "v, m = torch.var_mean(y, dim=(2, 3), keepdim=True)\n        y = (y - m) / torch.sqrt(v + 1e-5)",
    "std_mean_channels": "s, m = torch.std_mean(y, dim=1, unbiased=False)\n        y = s * m",
    "is_contiguous": "y = y * 2.0 if y.is_contiguous() else y",
    "sum_channels": "y = y.sum(dim=1)",
    "amax_min": "y = y.amax(dim=2) - y.amin(dim=3)",
    "max_with_indices": "y = y.max(dim=1)[0]",
    "softmax_channels": "y = torch.softmax(y, dim=1)",
    "log_softmax_width": "y = F.log_softmax(y, dim=-1)",
    "masked_fill": "y = y.masked_fill(y < 0, 0.5)",
    "where_clamp": "y = torch.where(y > 0, y, y * 0.1).clamp(-1.0, 1.0)",
    "unsqueeze_squeeze": "y = y.unsqueeze(2).squeeze(2) * y.mean(1, keepdim=True)",
    "expand_broadcast": "y = y + y.mean(dim=(2, 3)).view(y.size(0), -1, 1, 1).expand_as(y)",
    # expanded to the sizes of an image item held channels-last (its torch sizes read, no transpose made for them)
    "expand_as_item": "y = y + y.mean(dim=(0, 2, 3))[:, None, None].expand_as(y[0])",
    "matmul_spatial": "y = y @ y.transpose(-2, -1)",
    "einsum_gram": "y = torch.einsum('bchw,bdhw->bcd', y, y)",
    "math_unary": "y = torch.exp(-y.abs()) + torch.sqrt(y * y + 1.0) - torch.rsqrt(y * y + 1.0)",
    "pow_tanh": "y = torch.tanh(y).pow(2) + y.sigmoid()",
    "repeat_interleave": "y = y.repeat_interleave(2, dim=1)",
    # along the spatial dims held channels-last (a nearest upsampling written out), a tensor of repeats, no dim
    "repeat_interleave_spatial": "y = y.repeat_interleave(2, dim=2).repeat_interleave(3, dim=-1)",
    "repeat_interleave_counts": "y = y.repeat_interleave(torch.tensor([1, 2, 1, 3, 1, 1]), dim=1)",
    "repeat_interleave_flat": "y = y.repeat_interleave(2).view(y.shape[0], -1)",
    "arange_scale": "y = y * torch.arange(y.shape[1], dtype=torch.float32).view(1, -1, 1, 1)",
    "size_unpack": "b, c, h, w = y.shape\n        y = y.reshape(b, c * h, w)",
    "new_zeros_cat": "y = torch.cat([y, y.new_zeros(y.shape[0], 1, y.shape[2], y.shape[3])], 1)",
    "tensor_new": "y = y.new(y) * 2.0 + y.new([0.5, 1.5]).sum() + y.new(y.size(0), 1, 1, 1).zero_() + "
                  "y.new().numel()",
    "tril_bmm": "z = y.flatten(2)\n        y = torch.bmm(z, z.transpose(1, 2)).tril()",
    "slice_channels_last": "y = y[:, 2:, 1:-1, ::2] * 2.0",
    "index_pending_permute": "z = y.permute(1, 0, 3, 2)\n        y = z[0] + z[1, ..., :1]",
    "index_ellipsis": "y = y[..., 0] + y[:, :, :, -1] * y[:, 0:1, :, 1]",
    "einsum_pending_permute": "z = y.permute(0, 2, 3, 1)\n        y = torch.einsum('b h w c, b h v c -> b c w v', z, z)",
    "einsum_then_permute": "y = torch.einsum('bchw,bdhw->bcdh', y, y).permute(0, 3, 1, 2)",
    # viewed to a size tuple made of the map's own sizes (huggingface's `x.size()[:-2] + (d,)`): its rank is known
    "view_size_tuple": "y = y.view(y.size()[:-2] + (-1,)).softmax(-1).view(y.size()) + y",
    "unpack_pending_permute": "a, b, c, d, e, f = y.permute(1, 0, 2, 3)\n        y = a * b + c - d * e + f",
}

TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        {op}
        return y
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            folder = tmp_path_factory.mktemp(name)
            source = folder / "op_model.py"
            source.write_text(textwrap.dedent(TEMPLATE).replace("{op}", OPS[name]))
            conversion = convert(ConvertOptions(source, folder / "out", input_specs=["3,8,8"]))
            assert conversion.exit_code == 0, conversion.manifest
            write_tree(folder / "out", conversion.files)
            cache[name] = PortedPair(folder / "out")
        return cache[name]

    return get


# Ops whose result only exists for square feature maps (amax over H minus amin over W broadcasts only if H == W).
SQUARE = {"amax_min"}
HEIGHTS, WIDTHS = [4, 5, 8], [3, 6, 8]


def input_sizes(name):
    """(height, width) pairs torch accepts for the op: any drawn pair, or a square one for the SQUARE ops."""
    if name in SQUARE:
        return st.sampled_from(HEIGHTS + WIDTHS).map(lambda side: (side, side))
    return st.tuples(st.sampled_from(HEIGHTS), st.sampled_from(WIDTHS))


def test_square_ops_reject_other_shapes():
    """SQUARE is not a blanket skip: each op in it does fail in torch on a non-square map, the others do not."""
    assert SQUARE <= set(OPS)
    x = torch.randn(1, 3, 4, 6)
    for name in sorted(OPS):
        namespace = {}
        exec(textwrap.dedent(TEMPLATE).replace("{op}", OPS[name]), namespace)  # noqa: S102 (our own template)
        model = namespace["OpModel"]()
        if name in SQUARE:
            with pytest.raises(RuntimeError):
                model(x)
        else:
            model(x)


@pytest.mark.parametrize("name", sorted(OPS))
@given(data=st.data(), batch=st.integers(1, 3), scale=st.integers(-2, 2), seed=st.integers(0, 2**16))
def test_op_matches_torch(ported, name, data, batch, scale, seed):
    pair = ported(name)
    height, width = data.draw(input_sizes(name), label="height, width")
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((batch, 3, height, width)) * 10.0 ** scale).astype(np.float32)
    expected = pair.run_torch([x])  # a RuntimeError here is a bad strategy: it fails, never passes silently
    actual = pair.run_keras([x])
    assert len(expected) == len(actual), f"{name}: {len(actual)} Keras outputs for {len(expected)} torch outputs"
    for want, got in zip(expected, actual, strict=True):
        assert_equivalent(want, got, tolerance=1e-4, what=f"{name} x{x.shape}")


torch.set_num_threads(1)
