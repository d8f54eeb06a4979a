"""Optional modules found by name: each command or output producer lives in its own module and is picked up
when present, so features can be added without editing a central list elsewhere."""

import importlib


def load_present(module_names):
    """The modules of `module_names` that exist, in order (a missing dependency inside one still raises)."""
    loaded = []
    for name in module_names:
        try:
            loaded.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
    return loaded
