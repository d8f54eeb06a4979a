"""The one loader of generated modules by file path, and its text for the generated files that carry it.

A model module loads the runtime module beside it with `load_port_module`, a package port's modules load their
siblings' ports with it (`from ..common.blocks import ConvBNReLU` -> `OUT/common/blocks_keras.py`), and train_tpu.py
loads the model module and train_support.py with it. Codegen copies the function's source into those files (under a
name the file leaves free): it is not part of the runtime, which is what it loads, and a port needs neither porter
nor a sys.path entry, from any working directory. The name a loaded module is registered under is unique to its path
and text: the modules of one port share one instance of each module they load, and two ports (or two versions of
one) never share one.
"""

import importlib.util
import inspect
import os
import sys
import zlib

LOADER = "load_port_module"
LOADER_IMPORTS = ("import importlib.util", "import os", "import sys", "import zlib")  # what the function reads


def load_port_module(anchor, relative):
    """The generated module at `relative` (a POSIX path from the folder of the file `anchor`, usually `__file__`)."""
    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(anchor)), *relative.split("/")))
    with open(path, "rb") as handle:
        key = zlib.crc32(handle.read(), zlib.crc32(path.encode()))  # the path, then the text
    name = f"{os.path.splitext(os.path.basename(path))[0]}_{key:08x}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before it runs: classes find their module by name (dataclasses, pickle)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return module


def loader_source(name=LOADER):
    """The text of `load_port_module`, defined as `name`."""
    return inspect.getsource(load_port_module).replace(f"def {LOADER}(", f"def {name}(", 1).rstrip("\n")
