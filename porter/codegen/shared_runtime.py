"""One runtime module for every model module of a port made of several files (`porter convert DIR`, or a file whose
package siblings are converted beside it).

Each module is first rendered with a runtime module of its own beside it. Two runtime modules define two sets of
classes, and the user's code compares them: `assert isinstance(self.bn, nn.BatchNorm2d)` in one file about a layer
another file's factory built (pytorchcv's `conv1x1_block(normalization=lambda_batchnorm2d())`) fails when each file
loads its own `BatchNorm2d`, and a layer of one runtime is not a `TorchLayer` of the other. So a port of several
files keeps one runtime module, the main module's (its definitions: what all the modules use), and every other
module loads that file by its relative path; `load_port_module` keys a module by path and text, so all of them get
the same classes.
"""

import json
import posixpath
import re

from porter import __version__
from porter.codegen.runtime_bundle import bundle, runtime_file_name, runtime_modules_used
from porter.codegen.templates import environment


def share_runtime(files, modules, runtime_names):
    """`files` (relative POSIX path -> text) with one runtime module for all `modules` (model module paths, the
    main one first): the first module's runtime path holds the definitions every module uses (`runtime_names`:
    module -> the runtime names it binds), the others' runtime files are gone, and each other module loads the
    shared file. A port of one module is returned as it is."""
    if len(modules) < 2:
        return files
    shared = runtime_file_name(modules[0])
    names = sorted({name for module in modules for name in runtime_names.get(module, ())})
    files = dict(files)
    files[shared] = runtime_module_text(names, [posixpath.basename(module) for module in modules])
    for module in modules[1:]:
        own = runtime_file_name(module)
        files.pop(own, None)
        relative = posixpath.relpath(shared, posixpath.dirname(module) or ".")
        files[module] = with_runtime_path(files[module], posixpath.basename(own), relative)
    return files


def runtime_module_text(names, model_modules):
    """The runtime module holding the definitions `names` need, for the model modules named."""
    from porter.codegen.emit import format_code  # the formatter every generated file goes through

    definitions = bundle(names)
    text = environment().get_template("runtime_module.py.j2").render(
        model_module=_listed(model_modules), version=__version__, imports=runtime_modules_used(definitions),
        definitions=definitions, shared=len(model_modules) > 1)
    return format_code(text)


def with_runtime_path(text, own, shared):
    """A model module's text loading `shared` (a path relative to its folder) instead of its own runtime `own`."""
    loader_call = re.compile(r"\(__file__,\s*" + re.escape(json.dumps(own)) + r"\s*\)")
    text, count = loader_call.subn(lambda _: f"(__file__, {json.dumps(shared)})", text, count=1)
    if count != 1:
        raise ValueError(f"no runtime loader for {own} in the model module")
    return text.replace(f"come from {own} beside this file.", f"come from {shared}, the port's runtime module.", 1)


def _listed(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
