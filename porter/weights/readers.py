"""Read a weights file into `{torch key: numpy array}` without ever unpickling arbitrary objects.

torch files go through `torch.load(weights_only=True)`, whose unpickler only rebuilds tensors and plain
containers; a file that needs more (a whole pickled `nn.Module`, custom classes) is refused with the reason.
safetensors files go through the safetensors package; MXNet Gluon `.params` files through gluon_params, which
reads them without mxnet and keeps the names `save_parameters` wrote. Checkpoints that nest the state dict under
`state_dict`/`model` (and similar) and the `module.` prefix that DataParallel adds are unwrapped.
"""

import re
import warnings
from pathlib import Path

import numpy as np

from porter.errors import WeightsError
from porter.weights.gluon_params import LIST_MAGIC, read_gluon_params

SAFETENSORS_SUFFIXES = (".safetensors",)
GLUON_PARAMS_SUFFIXES = (".params",)
# Keys under which training scripts commonly nest the model's state dict in a checkpoint, most specific first.
NESTING_KEYS = ("state_dict", "model_state_dict", "model_state", "model", "module", "net", "network")
# Prefixes that wrappers add to every key: DataParallel/DistributedDataParallel, torch.compile.
WRAPPER_PREFIXES = ("module.", "_orig_mod.")
PICKLE_REFUSAL = ("needs Python's pickle to rebuild arbitrary objects ({detail}); porter reads weights with "
                  "torch.load(weights_only=True) only, because unpickling arbitrary objects can run any code")
PICKLE_HINT = "save the weights with torch.save(model.state_dict(), PATH) or as .safetensors"


def read_state_dict(path):
    """`{key: numpy array}` from a torch state_dict/checkpoint file, a safetensors file or a Gluon .params file."""
    path = Path(path)
    display = str(path)
    if not path.exists():
        raise WeightsError("no such weights file", display, hint="check the --weights path")
    if path.is_dir():
        raise WeightsError("is a directory, not a weights file", display)
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError as error:
        raise WeightsError(f"cannot read the weights file ({error.strerror})", display) from None
    if not head:
        raise WeightsError("empty weights file", display)
    if _looks_like_gluon_params(path, head):
        return read_gluon_params(path)
    if path.suffix.lower() in SAFETENSORS_SUFFIXES or _looks_like_safetensors(path):
        tensors = _read_safetensors(path, display)
    elif not head.startswith((b"PK", b"\x80")):  # torch writes a zip archive, or a pickle (protocol >= 2)
        raise WeightsError("not a torch weights file (neither a zip archive nor a pickle)", display,
                           hint="porter reads torch state_dict files (.pt/.pth), .safetensors and Gluon .params")
    else:
        tensors = unwrap_state_dict(_read_torch(path, display), display)
    if not tensors:
        raise WeightsError("the weights file holds no tensors", display)
    return {key: to_numpy(value) for key, value in strip_wrapper_prefix(tensors).items()}


def _looks_like_gluon_params(path, head):
    """mxnet's NDArray-list magic, or a .params name on a file torch did not write (zip or pickle)."""
    if head == LIST_MAGIC.to_bytes(8, "little"):
        return True
    return path.suffix.lower() in GLUON_PARAMS_SUFFIXES and not head.startswith((b"PK", b"\x80"))


def _looks_like_safetensors(path):
    """safetensors files start with an 8-byte little-endian header length, then a JSON object."""
    try:
        with open(path, "rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            return 2 <= size <= 100_000_000 and handle.read(1) == b"{"
    except OSError:
        return False


def _read_safetensors(path, display):
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError:
        raise WeightsError("reading .safetensors needs the safetensors package", display,
                           hint="pip install 'porter[verify]'") from None
    framework = "pt" if _torch_available() else "np"  # numpy cannot hold bfloat16; torch can, then we upcast
    try:
        with safe_open(str(path), framework=framework) as handle:
            return {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118 - safe_open is no dict
    except (SafetensorError, OSError, ValueError, TypeError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise WeightsError(f"not a readable safetensors file ({message})", display) from None


def _torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _read_torch(path, display):
    try:
        import torch
    except ImportError:
        raise WeightsError("reading a torch weights file needs torch", display,
                           hint="pip install 'porter[verify]', or convert the file to .safetensors") from None
    import pickle

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about pickle protocols; the outcome is what matters
            return torch.load(str(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        detail = _unpickling_detail(str(error))
        if detail is None:
            raise WeightsError(f"not a torch weights file ({_first_line(error)})", display) from None
        raise WeightsError(PICKLE_REFUSAL.format(detail=detail), display, hint=PICKLE_HINT) from None
    except Exception as error:  # noqa: BLE001 - a corrupt or foreign file fails in many ways inside torch
        raise WeightsError(f"not a torch weights file ({type(error).__name__}: {_first_line(error)})",
                           display, hint="porter reads torch state_dict files (.pt/.pth) and .safetensors") \
            from None


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else "unreadable"


def _unpickling_detail(message):
    """What the weights-only unpickler refused (e.g. `__main__.Net`), or None when the file is merely corrupt."""
    match = re.search(r"Unsupported global: GLOBAL (\S+)", message)
    if match:
        return f"it refers to {match.group(1)}"
    if "Weights only load failed" in message:
        return "it uses pickle instructions beyond tensors and plain containers"
    return None


def is_tensor(value):
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, (dict, list, tuple))


def unwrap_state_dict(loaded, display):
    """The state dict inside what torch.load returned: the dict itself, or nested under a checkpoint key."""
    if isinstance(loaded, dict) and loaded and all(is_tensor(v) for v in loaded.values()):
        return dict(loaded)
    if isinstance(loaded, dict):
        for key in NESTING_KEYS:
            inner = loaded.get(key)
            if isinstance(inner, dict) and inner:
                tensors = {k: v for k, v in inner.items() if is_tensor(v)}
                if tensors and len(tensors) >= len(inner) / 2:
                    return tensors
        tensors = {k: v for k, v in loaded.items() if isinstance(k, str) and is_tensor(v)}
        if tensors:
            return tensors
        keys = ", ".join(sorted(str(k) for k in loaded)[:8])
        raise WeightsError(f"no state dict found in the checkpoint (top-level keys: {keys or 'none'})", display,
                           hint="expected tensors keyed by parameter name, or nested under 'state_dict'/'model'")
    raise WeightsError(f"the file holds a {type(loaded).__name__}, not a state dict", display,
                       hint="save model.state_dict()")


def strip_wrapper_prefix(tensors):
    """Drop `module.` (DataParallel) or `_orig_mod.` (torch.compile) when every key carries it."""
    changed = True
    while changed:
        changed = False
        for prefix in WRAPPER_PREFIXES:
            if tensors and all(isinstance(k, str) and k.startswith(prefix) for k in tensors):
                tensors = {k[len(prefix):]: v for k, v in tensors.items()}
                changed = True
    return tensors


def to_numpy(value):
    """A torch tensor or numpy array as numpy; bfloat16 (which numpy lacks) becomes float32."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return np.asarray(value)
