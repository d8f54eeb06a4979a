"""Run in .venv-mxnet (by path, never imported by the tests): mxnet's outputs and NumPy-mode .params files of the
Blocks (or factories) of one source file, for tests/mxnet/numpy_mode_support.py.

`python numpy_mode_reference.py SOURCE REQUEST.json`. The request names the folder with each model's inputs
(`<name>_in.npz`), the models (name -> constructor arguments; a string naming an entry of "arguments" is built first:
d2l's RNNLM takes an RNN), "scratch" (name -> attribute paths of weights held as plain arrays, which save_parameters
does not write: set to drawn values and saved as `<name>_scratch.npz`) and "stand_ins" (modules the source imports
that this environment lacks, registered empty first: a library file's plotting imports). Each model is built,
initialized, called, its parameters moved off their defaults (statistics positive), saved as `<name>.params` when it
has any, and called again: the outputs, flattened, go to `<name>_out.npz`."""

import importlib.util
import json
import sys
import types

import numpy as onp

with open(sys.argv[2]) as _file:
    request = json.load(_file)
for _name in request.get("stand_ins", ()):
    try:
        __import__(_name)
    except ImportError:
        sys.modules[_name] = types.ModuleType(_name)
for _name in list(sys.modules):
    _parent, _, _child = _name.rpartition(".")
    if _parent in sys.modules and not hasattr(sys.modules[_parent], _child):
        setattr(sys.modules[_parent], _child, sys.modules[_name])
import mxnet as mx  # (after the stand-ins)
from mxnet import np, npx

_spec = importlib.util.spec_from_file_location("numpy_mode_reference_source", sys.argv[1])
source = importlib.util.module_from_spec(_spec)
sys.modules["numpy_mode_reference_source"] = source  # (d2l names itself through sys.modules[__name__])
_spec.loader.exec_module(source)
npx.set_np()
folder = request["folder"]


def flat(result):
    if isinstance(result, (list, tuple)):
        return [y for item in result for y in flat(item)]
    return [] if result is None else [result.asnumpy()]


def argument(value):
    if isinstance(value, str) and value in request.get("arguments", {}):
        name, given = request["arguments"][value]
        return getattr(source, name)(*given)
    return tuple(value) if isinstance(value, list) else value


for name, args in request["models"].items():
    mx.random.seed(0)
    model = getattr(source, name)(*[argument(a) for a in args])
    model.initialize()  # (a second call for the classes that initialize themselves only warns)
    arrays = onp.load(f"{folder}/{name}_in.npz")
    inputs = [np.array(arrays[f"arr_{i}"], dtype=arrays[f"arr_{i}"].dtype) for i in range(len(arrays.files))]
    model(*inputs)
    generator = onp.random.RandomState(0)
    for key, parameter in sorted(model.collect_params().items()):
        value = generator.rand(*parameter.shape) + 0.5 if key.endswith("var") else \
            generator.standard_normal(parameter.shape) * 0.5
        parameter.set_data(np.array(value.astype(onp.float32)))
    if list(model.collect_params().keys()):
        model.save_parameters(f"{folder}/{name}.params")
    scratch = {}
    for path in request.get("scratch", {}).get(name, ()):
        owner = model
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        value = (generator.standard_normal(getattr(owner, attribute).shape) * 0.5).astype(onp.float32)
        setattr(owner, attribute, np.array(value))
        scratch[path] = value
    if scratch:
        onp.savez(f"{folder}/{name}_scratch.npz", **scratch)
    onp.savez(f"{folder}/{name}_out.npz", *flat(model(*inputs)))
