"""Shared by the tests that compare ports of NumPy-mode Gluon files with real mxnet (tests/corpus/test_d2l_mxnet.py,
tests/mxnet/test_gluon_numpy_models.py): the reference runs in one mxnet process (tests/mxnet/numpy_mode_reference.py)
started before porter converts, so the two overlap; each port then loads mxnet's .params file (and any scratch
arrays) and must match mxnet within 1e-4 of the output's scale, eagerly and under XLA, within a Transpose bound."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import count_transposes
from porter.weights.gluon_params import read_gluon_params
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

SCRIPT = Path(__file__).resolve().with_name("numpy_mode_reference.py")


def model_inputs(make):
    """The inputs `make(rng)` draws, as both sides take them (float32, token ids int32)."""
    return [i.astype(np.float32) if i.dtype.kind == "f" else i.astype(np.int32) for i in make(np.random.default_rng(0))]


def convert_with_reference(source, folder, out, models, inputs, **request):
    """(conversion, the port's module): `source` converted into `out` while mxnet writes its outputs and .params
    files of `models` (name -> constructor args) on `inputs` (name -> arrays) into `folder`; `request`: the script's
    other keys (arguments, scratch, stand_ins)."""
    from porter.verify.mxnet_reference import mxnet_python

    for name in models:
        np.savez(folder / f"{name}_in.npz", *inputs[name])
    (folder / "request.json").write_text(json.dumps({"folder": str(folder), "models": models, **request}))
    process = subprocess.Popen([str(mxnet_python()), str(SCRIPT), str(source), str(folder / "request.json")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        conversion = convert(ConvertOptions(source, out))
        write_tree(out, conversion.files)
        module_name = f"numpy_mode_port_{Path(source).stem}"
        spec = importlib.util.spec_from_file_location(module_name, out / conversion.manifest["sources"][0]["module"])
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    finally:
        _, errors = process.communicate(timeout=600)
    assert process.returncode == 0, errors[-3000:]
    return conversion, module


def flat(result):
    """A model's outputs as a flat list of arrays (nested lists and tuples opened, None left out)."""
    if isinstance(result, (list, tuple)):
        return [y for item in result for y in flat(item)]
    return [] if result is None else [np.asarray(result)]


def assert_matches_mxnet(port, module, inputs, folder, name, most_transposes):
    """`port` (built, not yet called) loads mxnet's weights for `name` and matches its outputs eagerly and under
    XLA; returns the Transposes its graph traces (at most `most_transposes`)."""
    import tensorflow as tf

    port(*inputs)  # deferred shapes are sized at the first call
    if (folder / f"{name}.params").exists():  # (attention and positional encoding have no parameters)
        module.load_state_dict(port, read_gluon_params(folder / f"{name}.params"))
    if (folder / f"{name}_scratch.npz").exists():
        with np.load(folder / f"{name}_scratch.npz") as arrays:
            _set_scratch(port, arrays)
    with np.load(folder / f"{name}_out.npz") as archive:
        expected = [archive[f"arr_{i}"] for i in range(len(archive.files))]
    eager = flat(port(*inputs, training=False))
    xla = flat(tf.function(lambda *a: port(*a, training=False), jit_compile=True)(*[tf.constant(i) for i in inputs]))
    assert len(eager) == len(xla) == len(expected)
    for want, got, compiled in zip(expected, eager, xla, strict=True):
        assert want.shape == got.shape == compiled.shape, (name, want.shape, got.shape)
        assert_equivalent(want, got, tolerance=1e-4, what=name)
        assert_equivalent(want, compiled, tolerance=1e-4, what=f"{name} (XLA)")
    transposes = count_transposes(port, inputs)
    print(f"{name}: {transposes} Transposes")
    assert transposes <= most_transposes
    return transposes


def _set_scratch(port, arrays):
    """The scratch weights mxnet drew, set on the port (a variable is assigned, a plain array replaced)."""
    import tensorflow as tf

    for path in arrays.files:
        owner = port
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        current = getattr(owner, attribute)
        if hasattr(current, "assign"):
            current.assign(arrays[path])
        else:
            setattr(owner, attribute, tf.constant(arrays[path]))
