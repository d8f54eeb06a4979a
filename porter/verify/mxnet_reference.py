"""Reference results for Gluon models from real mxnet 1.9.1, run in its own venv by subprocess.

mxnet 1.9.1 needs numpy < 1.24, which TensorFlow cannot share, so it lives in `.venv-mxnet` (scripts/setup.sh
creates it) and porter never imports it: `run_gluon_reference` writes the inputs and a JSON request into a temporary
directory, runs mxnet_driver.py with that venv's Python and reads the outputs, gradients and parameters back.
"""

import json
import os
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from porter.errors import SourceError, UsageError
from porter.verify import mxnet_resident

DRIVER = Path(__file__).resolve().with_name("mxnet_driver.py")
REPOSITORY_VENV = Path(__file__).resolve().parents[2] / ".venv-mxnet"
PYTHON_VARIABLE = "PORTER_MXNET_PYTHON"
SETUP_HINT = "run `bash scripts/setup.sh`, which creates .venv-mxnet with mxnet 1.9.1 (or set PORTER_MXNET_PYTHON)"


@dataclass(frozen=True)
class GluonReference:
    """What mxnet computed: outputs in order, d sum(outputs)/d input (None for integer inputs), and the parameters
    and their gradients keyed as `save_parameters` names them."""

    outputs: list
    input_gradients: list
    parameters: dict
    parameter_gradients: dict


def mxnet_python(explicit=None):
    """The mxnet venv's Python: `explicit`, else $PORTER_MXNET_PYTHON, else the repository's .venv-mxnet."""
    if explicit:
        return Path(explicit)
    if os.environ.get(PYTHON_VARIABLE):
        return Path(os.environ[PYTHON_VARIABLE])
    return REPOSITORY_VENV / "bin" / "python"


@cache
def mxnet_unavailable_reason(python=None):
    """None when `python` imports mxnet 1.9.1, else one line saying what is missing and how to fix it."""
    python = mxnet_python(python)
    if not python.exists():
        return f"no mxnet environment at {python}: {SETUP_HINT}"
    check = "import mxnet; print(mxnet.__version__)"
    try:
        result = subprocess.run([str(python), "-I", "-c", check], capture_output=True, text=True, timeout=120,
                                check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{python} cannot run ({error}): {SETUP_HINT}"
    if result.returncode != 0:
        return f"{python} cannot import mxnet ({_last_line(result.stderr)}): {SETUP_HINT}"
    if result.stdout.strip() != "1.9.1":
        return f"{python} has mxnet {result.stdout.strip()}, not 1.9.1: {SETUP_HINT}"
    return None


def run_gluon_reference(model_path, class_name, inputs, *, init_kwargs=None, seed=0, training=False,
                        hybridize=False, perturb=False, load_parameters=None, save_parameters=None, python=None,
                        timeout=600):
    """Build `class_name(**init_kwargs)` from the Gluon file `model_path` in mxnet, initialize it with `seed`, run
    it on `inputs` (numpy arrays) and return a GluonReference; `save_parameters` writes a .params file there.

    Raises UsageError when the mxnet venv is missing and SourceError when the model fails in mxnet (the stage and
    mxnet's message, last line)."""
    request = {"model_path": str(Path(model_path).resolve()), "class_name": class_name,
               "init_kwargs": init_kwargs or {}, "seed": seed, "inputs": "inputs.npz", "training": training,
               "hybridize": hybridize, "perturb": perturb, "load_parameters": _absolute(load_parameters),
               "save_parameters": _absolute(save_parameters)}
    with driven(request, {"inputs.npz": inputs}, model_path, python=python, timeout=timeout) as scratch:
        return _read_results(scratch, len(inputs))


@contextmanager
def driven(request, archives, model_path, *, python=None, timeout=600):
    """Run the mxnet driver on `request` (a JSON-able dict; `out_dir` is added) in a scratch directory holding
    `archives` ({file name: [numpy arrays]}, saved as input_0, input_1 ...); yields the scratch directory with the
    driver's results, removed afterwards.

    Raises UsageError when the mxnet venv is missing and SourceError when the model fails in mxnet (the stage and
    mxnet's message) or the driver dies (its last line)."""
    python = mxnet_python(python)
    reason = mxnet_unavailable_reason(str(python))
    if reason is not None:
        raise UsageError(reason)
    with tempfile.TemporaryDirectory(prefix="porter-mxnet-") as scratch:
        scratch = Path(scratch)
        for name, arrays in archives.items():
            np.savez(scratch / name, **{f"input_{i}": np.asarray(x) for i, x in enumerate(arrays)})
        (scratch / "request.json").write_text(json.dumps({**request, "out_dir": str(scratch)}))
        completed = _run_driver(python, scratch / "request.json", timeout, model_path)
        if (scratch / "error.json").exists():
            error = json.loads((scratch / "error.json").read_text())
            raise SourceError(f"mxnet 1.9.1 failed to {error['stage']}: {error['type']}: {error['message']}",
                              str(model_path))
        if completed.returncode != 0:
            raise SourceError(f"the mxnet driver exited with status {completed.returncode}: "
                              f"{_last_line(completed.stderr)}", str(model_path))
        yield scratch


def _run_driver(python, request_path, timeout, model_path):
    # -I: the main venv's PYTHONPATH and user site must not reach the mxnet venv; one thread: a small reference.
    # MKLDNN off: in mxnet 1.9.1 its convolution backward after a forward recorded with train_mode=False gives wrong,
    # run-to-run varying weight gradients (apache/mxnet#10994; measured on the LeNet fixture against torch); the
    # plain CPU kernels match torch within 1e-7 and are deterministic. The driver turns it back on for models with
    # fused RNN layers, which run on the CPU only through MKLDNN.
    # $PORTER_MXNET_RESIDENT (the test suite sets it): one resident process, mxnet imported once, forks per run.
    environment = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
                   "MXNET_MKLDNN_ENABLED": "0"}
    try:
        if os.environ.get(mxnet_resident.SWITCH_VARIABLE):
            return _resident_driver(str(python), environment["OMP_NUM_THREADS"]).run(request_path, timeout)
        return subprocess.run([str(python), "-I", str(DRIVER), str(request_path)], capture_output=True, text=True,
                              timeout=timeout, env=environment, check=False)
    except (subprocess.TimeoutExpired, mxnet_resident.ResidentTimeout):
        raise SourceError(f"the mxnet reference did not finish within {timeout} s", str(model_path)) from None


@cache
def _resident_driver(python, threads):
    environment = {**os.environ, "OMP_NUM_THREADS": threads, "MXNET_MKLDNN_ENABLED": "0"}
    return mxnet_resident.ResidentDriver(python, DRIVER, environment)


def _read_results(scratch, input_count):
    outputs = load_archive(scratch / "outputs.npz")
    gradients = load_archive(scratch / "input_gradients.npz")
    return GluonReference(
        outputs=[outputs[f"output_{i}"] for i in range(len(outputs))],
        input_gradients=[gradients.get(f"input_{i}") for i in range(input_count)],
        parameters=load_archive(scratch / "parameters.npz"),
        parameter_gradients=load_archive(scratch / "parameter_gradients.npz"))


def load_archive(path):
    """{name: array} of an .npz file the driver wrote."""
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def _absolute(path):
    return None if path is None else str(Path(path).resolve())


def _last_line(text):
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"
