"""Loading another module of the same port by its path: a package's modules import their ported siblings.

A module of a ported package (`OUT/models/net_keras.py`) uses the classes its source imported from other files of
the package (`from ..common.blocks import ConvBNReLU`) from their ports (`OUT/common/blocks_keras.py`). It loads them
by path, relative to its own file, so no folder needs to be on sys.path and the port loads from any working
directory; the name a loaded module is registered under is unique to its path and text, so every module of one port
shares one instance of a sibling and two ports (or two versions of one) never share one.
"""

import sys


def load_port_module(anchor, relative):
    """The generated module at `relative` (a POSIX path from the folder of the file `anchor`, usually `__file__`)."""
    import importlib.util
    import os
    import zlib

    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(anchor)), *relative.split("/")))
    with open(path, "rb") as handle:
        text = handle.read()
    stem = os.path.splitext(os.path.basename(path))[0]
    key = zlib.crc32(text, zlib.crc32(path.encode()))  # the path, then the text
    name = f"{stem}_{key:08x}"
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
