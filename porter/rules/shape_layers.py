"""Rules: nn.Flatten / nn.Unflatten (torch's axis order) and nn.Softmax2d (channels-last, softmax over channels).

A Flatten of every dim after the batch, and an Unflatten of a matrix's features into an image, are variants of their
own: inside an nn.Sequential, beside a Linear, they may run on the image held channels-last while the Linear's weight
is permuted once at load time (passes/calls.py `simulate_in_order`, runtime/module.py `TorchModule.held_reshapes`).
"""

import ast

from porter.rules.registry import ModuleRule, module_rule

# (Flatten / Unflatten change the rank: start..end merge, one axis splits)
_FLATTEN_TRAILING = ModuleRule(("torch.nn.Flatten",), "Flatten", "source", family="shape_layers",
                               rank_delta="unknown", flattens_trailing=True)


def _flatten_variant(positional, keywords):
    """`nn.Flatten()` / `nn.Flatten(1)` / `nn.Flatten(1, -1)`: every dim after the batch merged."""
    start = keywords.get("start_dim", positional[0] if positional else "1").strip()
    end = keywords.get("end_dim", positional[1] if len(positional) > 1 else "-1").strip()
    return _FLATTEN_TRAILING if (start, end) == ("1", "-1") and len(positional) + len(keywords) <= 2 else _FLATTEN


def _image_sizes(text):
    """How many sizes a literal tuple or list of sizes (`(64, 7, 7)`, `[c, h, w]`) names, or None; None also where
    the channel count is left to be inferred (-1: the load-time permutation needs it)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, (ast.Tuple, ast.List)) or not node.elts or any(
            isinstance(e, ast.Starred) for e in node.elts) or isinstance(node.elts[0], ast.UnaryOp):
        return None
    return len(node.elts)


def _unflatten_variant(positional, keywords):
    """`nn.Unflatten(1, (C, H, W))` (or a 3d image's four sizes): a matrix's features split into an image."""
    dim = keywords.get("dim", positional[0] if positional else None)
    sizes = keywords.get("unflattened_size", positional[1] if len(positional) > 1 else None)
    count = _image_sizes(sizes) if dim is not None and sizes is not None and dim.strip() in ("1", "-1") else None
    return _IMAGE_SPLITS.get(count, _UNFLATTEN)


_IMAGE_SPLITS = {count: ModuleRule(("torch.nn.Unflatten",), "Unflatten", "source", family="shape_layers",
                                   rank_delta="unknown", splits_to_image=count + 1) for count in (3, 4)}
_FLATTEN = module_rule("torch.nn.Flatten", runtime="Flatten", layout="source", rank_delta="unknown",
                       variant=_flatten_variant)
_UNFLATTEN = module_rule("torch.nn.Unflatten", runtime="Unflatten", layout="source", rank_delta="unknown",
                         variant=_unflatten_variant)
module_rule("torch.nn.Softmax2d", runtime="Softmax2d", layout="channels_last")
