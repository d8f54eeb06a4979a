"""Rules: `F.affine_grid` and `F.grid_sample`, the sampling grid and the sampler of spatial transformer networks.

- affine_grid: layout "source". theta (N, 2, 3) or (N, 3, 4) and the size (N, C, H, W) or (N, C, D, H, W) are
  read in torch's order (an image's `x.size()` materialised in torch's order), and the grid comes out in torch's
  order, (N, H, W, 2) of (x, y) coordinates: it has no channel axis, so no layout to choose. Its rank is the
  size's length where porter knows it.
- grid_sample: layout "channels_last", as a convolution: the image is taken channels-last and the samples come out
  channels-last, (N, H_out, W_out, C), so a convnet around the sampler stays channels-last; the grid (any
  argument after the image) is handed over in torch's order.
"""

from porter.ir.values import tensor
from porter.rules.registry import Signature, function_rule

AFFINE_GRID_SIGNATURE = Signature.parse("(theta, size, align_corners=None)")


def _grid_rank(size):
    """The rank of the grid for the output size Value `size` (the length of the size), or None when unknown."""
    if size.kind == "size" and size.rank is not None:
        return size.rank
    if isinstance(size.static, (tuple, list)):
        return len(size.static)
    if size.kind == "tuple" and size.items is not None and not any(i.kind == "starred" for i in size.items):
        return len(size.items)
    return None


def translate_affine_grid(ctx, call):
    bound = call.bind(AFFINE_GRID_SIGNATURE)
    arguments = [ctx.plain(bound["theta"]), ctx.plain(bound["size"])]
    keywords = {"align_corners": ctx.plain(bound["align_corners"])} if "align_corners" in bound else {}
    code = f"{ctx.runtime('affine_grid')}({ctx.join_args(arguments, keywords)})"
    return tensor(code, _grid_rank(bound["size"]))


function_rule("torch.nn.functional.affine_grid", "torch.affine_grid_generator", translate=translate_affine_grid,
              layout="source")
function_rule("torch.nn.functional.grid_sample", runtime="grid_sample",
              signature="(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)",
              layout="channels_last", keeps_channels=True)
