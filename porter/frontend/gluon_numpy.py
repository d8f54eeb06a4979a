"""Whether a Gluon source uses mxnet's NumPy interface (`from mxnet import np, npx`, `from mxnet import numpy as np`):
then its ndarray methods have NumPy's semantics (`x.reshape(-1, 1)`, `x.sum()` of rank 0, `x.argmax(axis=1)` of
int64) and their rules live under `mxnet.np.ndarray.` (porter/rules/gluon_numpy_methods.py), read before the
legacy NDArray methods'."""

import functools

NUMPY_MODULES = ("mxnet.np", "mxnet.numpy", "mxnet.npx", "mxnet.numpy_extension")


@functools.lru_cache(maxsize=64)
def uses_numpy_interface(imports, text=""):
    """Whether the ImportTable `imports` binds a name to one of mxnet's NumPy modules or something in them, or the
    source `text` switches NumPy mode on (`mx.npx.set_np()` with only `import mxnet as mx`)."""
    for full in imports.aliases.values():
        if any(full == module or full.startswith(module + ".") for module in NUMPY_MODULES):
            return True
    return "set_np(" in text
