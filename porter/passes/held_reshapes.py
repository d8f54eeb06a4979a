"""Flatten and Unflatten children of an nn.Sequential run on images held channels-last, the Linear beside them
loading its weight permuted, so a conv stack's image reaches a Linear, and a Linear's output reaches a
(transposed) conv stack, with no Transpose between them.

- `Sequential(..., conv, nn.Flatten(), [elementwise...], nn.Linear(C*H*W, n), ...)`: the Flatten merges the image
  as it lies, (H, W, C), and the Linear's weight columns are permuted once at load time (its path goes into the
  class's `flatten_inputs`, as for a Linear after a flatten in forward's code). A Flatten ending the Sequential
  hands the caller the flattened image held so (`flat_channels_last`: a Linear there permutes its columns, anything
  else converts), where forward calls that Sequential once.
- `Sequential(..., nn.Linear(n, C*H*W), [elementwise...], nn.Unflatten(1, (C, H, W)), [elementwise...],
  conv_transpose, ...)`: the Linear's weight rows (and bias) are permuted once at load time (`image_rows`: C read
  off the Unflatten) and the Unflatten splits its output into the image channels-last (VAE and GAN decoders).

The runtime tells the children so before the first call (`torch_held_reshapes`, runtime/module.py); a child so
told runs held whatever the caller hands, and the simulation here follows it from then on, so the port computes
what torch does whichever call decided it.
"""

import re

from porter.frontend.factory_values import node_code
from porter.ir.values import tensor

_OWN_PATH = re.compile(r"self\.([A-Za-z_]\w*)((?:\[\d+\])*)")


def sequential_path(translator, code):
    """The torch path (`encoder`, `encoder.3`) of the Sequential at `code` (`self.encoder`, `self.encoder[3]`), one
    of the class's own attributes or a child of one by index; None otherwise."""
    match = _OWN_PATH.fullmatch(code or "")
    if match is None or translator.ctx.ir is None:
        return None
    indexes = re.findall(r"\d+", match.group(2))
    return ".".join([translator.torch_path(match.group(1)), *indexes])


def held_step(translator, ref, index, current):
    """The Value after element `index` of the ordered Sequential `ref` (at `translator.sequential_code`) when that
    element runs held or loads permuted as this module describes, with the class's IR noted; None where it runs as
    its rule says."""
    element = ref.elements[index]
    if element.kind != "rule" or not current.is_tensor or not ref.ordered:
        return None
    path = sequential_path(translator, translator.sequential_code)
    if path is None:
        return None
    ir, rule = translator.ctx.ir, element.rule
    here = f"{path}.{index}"
    if rule.flattens_trailing:
        return _flatten(translator, ref, index, current, here)
    if rule.splits_to_image and here in ir.held_reshapes:
        return tensor("", rule.splits_to_image, "channels_last")
    if rule.runtime != "Linear":
        return None
    if current.layout == "flat_channels_last" and ir.flatten_inputs.get(here) == current.channels:
        return tensor("", 2, "source")  # (the held Flatten before it noted its columns)
    viewed = _viewed_as_image(translator, ref, index, path)
    if viewed is not None:
        return viewed
    split = _image_split_after(translator, ref, index)
    if split is None or current.layout == "flat_channels_last" or current.rank not in (2, None):
        return None
    channels = _split_channels(translator, split)
    if ir.image_rows.get(here, channels) != channels:
        return None  # (its rows are permuted at load time for one image only)
    ir.image_rows[here] = channels
    ir.held_reshapes[f"{path}.{split}"] = ""
    translator.ctx.adjust(translator.line, f"Linear `{here}` before Unflatten `{path}.{split}`: its weight rows are "
                                           f"permuted once at load time, so the image comes out channels-last")
    return tensor("", 2, "source")


def _flatten(translator, ref, index, current, here):
    ir = translator.ctx.ir
    channels = ir.held_reshapes.get(here)
    if channels is None:
        if _next_active(ref, -1) == index:
            return None  # (the Sequential's first layer: held, it would change the layout the Sequential takes)
        following = _next_active(ref, index)
        linear = following is not None and ref.elements[following].rule is not None and \
            ref.elements[following].rule.runtime == "Linear"
        if not (current.channels_last and (current.rank or 0) >= 3 and current.channels) or not (
                linear or following is None and _called_once(translator)):
            return None
        if linear and ir.flatten_inputs.get(f"{here.rsplit('.', 1)[0]}.{following}", current.channels) != \
                current.channels:
            return None
        channels = ir.held_reshapes[here] = current.channels
        if linear:
            ir.flatten_inputs[f"{here.rsplit('.', 1)[0]}.{following}"] = channels
            translator.ctx.adjust(translator.line, f"Flatten `{here}` flattens the image as it lies, channels-last: "
                                                   f"Linear `{here.rsplit('.', 1)[0]}.{following}`'s weight columns "
                                                   f"are permuted once at load time")
    # (told once, it takes any image channels-last: the Sequential converts what comes in another layout)
    return tensor("", 2, "flat_channels_last").but(channels=channels, dtype=current.dtype)


def _viewed_as_image(translator, ref, index, path):
    """The Linear ending the class's own Sequential attribute (`self.l1 = nn.Sequential(nn.Linear(z, C * s * s))`),
    whose output forward views as an image (passes/image_views.py): its rows permuted at load time, the
    Sequential's output the image flattened channels-last; None otherwise."""
    if "." in path or _next_active(ref, index) is not None:
        return None
    channels = translator.image_view_channels(_OWN_PATH.fullmatch(translator.sequential_code).group(1))
    here = f"{path}.{index}"
    if channels is None or translator.ctx.ir.image_rows.get(here, channels) != channels:
        return None
    translator.ctx.ir.image_rows[here] = channels
    translator.ctx.adjust(translator.line, f"Linear `{here}` viewed as an image: its weight rows are permuted once "
                                           f"at load time, so the view gives the image channels-last")
    return tensor("", 2, "flat_channels_last").but(channels=channels)


def _next_active(ref, index):
    """The index of the first element after `index` that is not elementwise (a rule of layout "any"), or None."""
    for after in range(index + 1, len(ref.elements)):
        element = ref.elements[after]
        if not (element.kind == "rule" and element.rule.layout == "any"):
            return after
    return None


def _image_split_after(translator, ref, index):
    """The index of an Unflatten into an image that follows the Linear at `index` (elementwise layers between),
    itself followed by a layer that takes that image channels-last; None otherwise."""
    split = _next_active(ref, index)
    if split is None or ref.elements[split].kind != "rule" or not ref.elements[split].rule.splits_to_image:
        return None
    consumer = _next_active(ref, split)
    if consumer is None:
        return None
    image = tensor("", ref.elements[split].rule.splits_to_image, "channels_last")
    layout, _ = translator.element_layouts(ref.elements[consumer], image)
    return split if layout == "channels_last" else None


def _split_channels(translator, split):
    return f"{translator.sequential_code}[{split}].unflattened_size[0]"


def _called_once(translator):
    """Whether the class reads its Sequential attribute once outside `__init__` (one call: the flattened image it
    hands back held channels-last meets one caller, translated with it)."""
    info = translator.info
    name = _OWN_PATH.fullmatch(translator.sequential_code).group(1)
    if info is None:
        return False
    pattern = re.compile(rf"\bself\.{re.escape(name)}\b")
    return sum(len(pattern.findall(node_code(node))) for method, node in info.methods.items()
               if method != "__init__") == 1
