"""Import torchvision's pure-Python model code on the CPU build of torch.

torchvision's compiled ops (nms, roi_align ...) need CUDA libraries that the CPU torch lacks; its import registers
fake kernels for `torchvision::nms`/`qnms`, which fails unless their schemas exist. The model files need none of
those kernels, so defining the two schemas first is enough.
"""

import importlib
from pathlib import Path


def import_torchvision():
    """The torchvision package, or None when it (or Pillow, which its datasets import) is not installed."""
    import torch

    if importlib.util.find_spec("torchvision") is None:
        return None
    if not hasattr(import_torchvision, "library"):
        library = torch.library.Library("torchvision", "DEF")
        for schema in ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
                       "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"):
            try:
                library.define(schema)
            except RuntimeError:  # already defined (a real build, or a second import)
                pass
        import_torchvision.library = library  # the schemas live as long as the library object
    try:
        return importlib.import_module("torchvision")
    except ImportError:
        return None


def model_file(torchvision, name):
    return Path(torchvision.__file__).parent / "models" / f"{name}.py"
