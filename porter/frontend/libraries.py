"""Installed torch model libraries a model file builds on, found without importing them.

User code derives its blocks from a library's model classes (`class Backbone(torchvision.models.resnet.ResNet)`,
segmentation-models-pytorch's `ResNetEncoder(ResNet, EncoderMixin)`) and builds backbones with its factories
(`self.backbone = torchvision.models.resnet18(weights=None)`). The port needs those definitions as code: the linker
(frontend/linker.py) takes them from the library's own files, as it takes a package's own modules. This module
says where a library lies (the folder holding its top-level package, on `sys.path`, found by file lookups: importing
torchvision would import torch, which the static convert path never does) and which libraries qualify: a
third-party package whose module the file imports from, or whose top-level package, reads torch itself (`import
torch`, `from torch ...`), so einops-style helpers that work on any framework stay the imports they are.
"""

import functools
import importlib.machinery
import importlib.metadata
import re
import sys
from pathlib import Path

# top-level packages never linked: the frameworks (rules map them), libraries porter treats as imports, and
# frameworks around torch models whose classes carry training loops, hubs and hooks porter does not port (a
# LightningModule base, a Hugging Face `PreTrainedModel`): what a model file reads from them stays as it was
NOT_LINKED = frozenset({"torch", "mxnet", "numpy", "scipy", "tensorflow", "keras", "jax", "einops", "gluoncv",
                        "typing_extensions", "six", "porter", "pytorch_lightning", "lightning", "lightning_fabric",
                        "transformers", "diffusers", "accelerate", "peft", "huggingface_hub", "sentence_transformers"})
# a library's data-pipeline modules (their transforms are nn.Modules too): what model code reads from them stays
# as it was (a stub where the model runs it), never linked
DATA_MODULES = ("torchvision.transforms", "torchvision.datasets", "torchvision.io", "timm.data")
_READS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.MULTILINE)


_IMPORTED_TOPS = re.compile(r"^[ \t]*(?:from|import)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


def may_import_a_library(text):
    """Whether the text of a file imports an installed package porter might link from (read from the import
    lines, before any parse: most files import torch and the standard library only)."""
    return any(library_root(top) is not None for top in set(_IMPORTED_TOPS.findall(text)))


@functools.lru_cache(maxsize=256)
def library_root(top):
    """The folder holding installed package `top` (its `__init__.py` there), or None: not installed, a namespace or
    single-file module, the standard library, or one of NOT_LINKED."""
    if top in NOT_LINKED or top in sys.stdlib_module_names or not top.isidentifier():
        return None
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.submodule_search_locations:
        return None
    init = Path(spec.origin)
    return init.parent.parent if init.name == "__init__.py" else None


def module_file(root, dotted):
    """The file of module `dotted` under `root` (`a/b.py` or `a/b/__init__.py`), or None."""
    relative = dotted.replace(".", "/")
    for candidate in (root / f"{relative}.py", root / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=1024)
def _package_imports(path, package):
    """The modules of its own a package's `__init__.py` imports from (`from .model import EfficientNet`, `from
    denoising_diffusion_pytorch.denoising_diffusion_pytorch import Unet`)."""
    written = re.compile(rf"^from (?:\.|{re.escape(package)}\.)(\w+) import", re.MULTILINE)
    try:
        return tuple(dict.fromkeys(written.findall(Path(path).read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError):
        return ()


@functools.lru_cache(maxsize=1024)
def _reads_torch(path):
    try:
        return bool(_READS_TORCH.search(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False


def torch_libraries(modules, own_top):
    """{top-level package: the folder holding it} of the installed libraries among `modules` (the absolute modules
    a file imports, or imports from) whose named module, or top-level package, or a module a named package's
    `__init__.py` imports from, reads torch (`import torchvision.models as models`: torchvision's `__init__.py`
    does; `from efficientnet_pytorch import EfficientNet`: its model.py does); the file's own package excluded."""
    found = {}
    for dotted in modules:
        top = dotted.split(".")[0]
        if not top or top == own_top or top in found:
            continue
        root = library_root(top)
        paths = [module_file(root, dotted), module_file(root, top)] if root is not None else []
        paths += [module_file(root, f"{dotted}.{sibling}") for path in paths[:1] if path is not None
                  and path.name == "__init__.py" for sibling in _package_imports(str(path), dotted)]
        if any(path is not None and _reads_torch(str(path)) for path in paths):
            found[top] = root
    return found


def linked_libraries(paths):
    """{top-level package: (its version or None, sorted module paths under its folder)} of the installed libraries
    among `paths` (the files linked definitions come from)."""
    found = {}
    for path in paths:
        path = Path(path)
        package = next((folder for folder in reversed(path.parents) if (folder / "__init__.py").is_file()), None)
        if package is None or library_root(package.name) != package.parent:
            continue
        _, modules = found.setdefault(package.name, (_version(package.name), set()))
        modules.add(path.relative_to(package.parent).as_posix())
    return {top: (version, sorted(modules)) for top, (version, modules) in sorted(found.items())}


def _version(top):
    try:
        return importlib.metadata.version(top)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None
