"""Check a Gluon port against real mxnet 1.9.1: the Gluon counterpart of harness.PortedPair and checks.Equivalence.

mxnet 1.9.1 needs numpy < 1.24, which TensorFlow cannot share, so the reference runs in another interpreter
(`.venv-mxnet/bin/python`, `--mxnet-python`, $PORTER_MXNET_PYTHON) by subprocess, through mxnet_driver.py's batch
requests: one process builds the Gluon model, initializes it on a sample, moves parameters and normalisation
statistics off their defaults and saves them with save_parameters; the Keras port loads that file through its
load_state_dict; a second process (the file loaded again) runs every drawn case, eval-mode forward and backward and,
with BatchNorm, one training step. Starting mxnet costs seconds, so the cases are drawn first (`drawn_gluon_cases`,
the same hypothesis draws `porter verify` makes for torch) and sent together (`GluonEquivalence.prepare`).

The checks and tolerances are those of checks.Equivalence: outputs within 1e-4 of the output's scale (NaN/Inf
masks first; extreme magnitudes on masks only), gradients of sum_i sum(w_i * output_i) w.r.t. float inputs and every
parameter mxnet trains within 1e-3 of each tensor's max, and the training step's outputs, gradients and running
statistics. Shared by `porter verify` and the generated test_equivalence.py of Gluon ports (which carries a copy).
"""

import json
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path

import numpy as np

from porter.verify.checks import (
    FORWARD_TOLERANCE,
    GRADIENT_TOLERANCE,
    RUNNING_STAT_SUFFIXES,
    EquivalenceFailure,
    disable_keras_dropout,
    keras_gradients,
)
from porter.verify.compare import compare_arrays, gradient_errors
from porter.verify.harness import _flatten_outputs, import_path, read_manifest, smallest_embedding_size, source_path_of
from porter.verify.strategies import SIZE_FACTORS, Case, cases, input_arrays, size_variants, varied_shape

MXNET_VERSION = "1.9.1"
MXNET_PYTHON_VARIABLE = "PORTER_MXNET_PYTHON"


class MxnetReferenceError(Exception):
    """mxnet could not compute the reference. `stage` names the driver step that failed ("initialize the
    parameters", ...), None when the interpreter itself is missing or is not mxnet 1.9.1."""

    def __init__(self, message, stage=None):
        super().__init__(message)
        self.stage = stage


def mxnet_interpreter_problem(python):
    """None when `python` imports mxnet 1.9.1, else one line saying what is wrong."""
    python = Path(python)
    if not python.exists():
        return f"no mxnet interpreter at {python}"
    try:
        result = subprocess.run([str(python), "-I", "-c", "import mxnet; print(mxnet.__version__)"],
                                capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{python} cannot run ({error})"
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        return f"{python} cannot import mxnet ({lines[-1].strip()[:200] if lines else 'no message'})"
    if result.stdout.strip() != MXNET_VERSION:
        return f"{python} has mxnet {result.stdout.strip()}, not {MXNET_VERSION}"
    return None


def run_mxnet_batch(python, driver, directory, request, arrays, timeout=600):
    """Run one batch request of mxnet_driver.py in `directory`: `arrays` ({file name: {key: array}}) are written
    there first; returns the driver's info.json. MxnetReferenceError when the model fails in mxnet."""
    import os

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in arrays.items():
        np.savez(directory / name, **content)
    (directory / "request.json").write_text(json.dumps({**request, "out_dir": str(directory)}))
    # -I: the caller's PYTHONPATH and user site must not reach the mxnet venv; one thread: a small reference.
    # MKLDNN off: mxnet 1.9.1's MKLDNN convolution backward gives wrong, run-to-run varying weight gradients after a
    # forward recorded with train_mode=False (apache/mxnet#10994); the driver turns it on for fused RNN layers only.
    environment = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
                   "MXNET_MKLDNN_ENABLED": "0"}
    try:
        completed = subprocess.run([str(python), "-I", str(driver), str(directory / "request.json")],
                                   capture_output=True, text=True, timeout=timeout, env=environment, check=False)
    except subprocess.TimeoutExpired:
        raise MxnetReferenceError(f"the mxnet reference did not finish within {timeout} s", "run") from None
    if (directory / "error.json").exists():
        error = json.loads((directory / "error.json").read_text())
        raise MxnetReferenceError(f"mxnet {MXNET_VERSION} failed to {error['stage']}: {error['type']}: "
                                  f"{error['message']}", error["stage"])
    if completed.returncode != 0 or not (directory / "info.json").exists():
        lines = [line for line in completed.stderr.splitlines() if line.strip()]
        raise MxnetReferenceError(f"the mxnet driver exited with status {completed.returncode}: "
                                  f"{lines[-1].strip()[:300] if lines else 'no message'}", "run")
    return json.loads((directory / "info.json").read_text())


def _npz_dict(path):
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


class GluonPair:
    """A Gluon model run in real mxnet and its Keras port, with the same constructor arguments and parameters.

    `python` is the mxnet 1.9.1 interpreter, `driver` the path of mxnet_driver.py; `read_params` reads the .params
    file mxnet saved into {save_parameters name: array} (default: the parameters.npz the driver writes beside it,
    the same values). The main class gets the manifest's `init_args`, other classes their defaults.
    """

    def __init__(self, out_dir, python, driver, source_path=None, class_name=None, init_args=None, seed=0,
                 read_params=None):
        out_dir = Path(out_dir)
        self.out_dir = out_dir
        self.manifest = read_manifest(out_dir)
        entry = self.manifest["sources"][0]
        self.framework = entry.get("framework", "mxnet")
        self.source_path = source_path_of(out_dir, self.manifest, source_path)
        self.class_name = class_name or self.manifest["main_class"]
        if init_args is None:
            init_args = self.manifest.get("init_args") if self.class_name == self.manifest["main_class"] else None
        self.init_args = dict(init_args or {})
        self.class_entry = next(c for c in entry["classes"] if c["name"] == self.class_name)
        self.precision = "float32"
        self.python, self.driver, self.seed = Path(python), Path(driver), seed
        self.read_params = read_params
        self.keras_module = import_path(out_dir / entry["module"])
        self.scratch = Path(tempfile.mkdtemp(prefix="porter-gluon-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.scratch), True)
        self.params_path = self.scratch / "reference.params"
        self.reference_state = None
        self.batches = 0
        self.keras_model = getattr(self.keras_module, self.class_name)(**self.init_args)
        self.keras_model.channels_last_io = False  # compared with mxnet in Gluon's layout

    def close(self):
        self._cleanup()

    def _request(self, first):
        return {"model_path": str(self.source_path.resolve()), "class_name": self.class_name,
                "init_kwargs": self.init_args, "seed": self.seed, "hybridize": False, "perturb": first,
                "save_parameters": str(self.params_path) if first else None,
                "load_parameters": None if first else str(self.params_path)}

    def run_batch(self, sample, cases=(), probes=(), determinism=None, vanishing=None, capture=None,
                  float64_cases=()):
        """One driver process: {"info": info.json, "directory": where the case files are}. The first batch builds
        and perturbs the parameters, saves them and loads them into the Keras model; later ones load that file."""
        first = self.reference_state is None
        self.batches += 1
        directory = self.scratch / f"batch{self.batches}"
        arrays = {"sample.npz": {f"input_{i}": x for i, x in enumerate(sample)}}
        request = {**self._request(first), "sample": "sample.npz", "cases": [], "probe": [], "determinism": None}
        for index, inputs in enumerate(probes):
            arrays[f"probe{index}.npz"] = {f"input_{i}": x for i, x in enumerate(inputs)}
            request["probe"].append(f"probe{index}.npz")
        if determinism is not None:
            arrays["determinism.npz"] = {f"input_{i}": x for i, x in enumerate(determinism)}
            request["determinism"] = "determinism.npz"
        if float64_cases:
            request["float64_cases"] = []
        for name, inputs, seed, training in float64_cases:
            arrays[f"{name}_inputs.npz"] = {f"input_{i}": x for i, x in enumerate(inputs)}
            request["float64_cases"].append({"name": name, "inputs": f"{name}_inputs.npz", "seed": seed,
                                             "training": training})
        if capture is not None:
            arrays["capture.npz"] = {f"input_{i}": x for i, x in enumerate(capture)}
            request["capture"] = "capture.npz"
        if vanishing is not None:
            arrays["vanishing.npz"] = {f"input_{i}": x for i, x in enumerate(vanishing)}
            request["vanishing"] = "vanishing.npz"
        for name, inputs, seed, training, *parameters in cases:
            arrays[f"{name}_inputs.npz"] = {f"input_{i}": x for i, x in enumerate(inputs)}
            request["cases"].append({"name": name, "inputs": f"{name}_inputs.npz", "seed": seed,
                                     "training": training})
            if parameters:
                arrays[f"{name}_parameters.npz"] = parameters[0]
                request["cases"][-1]["parameters"] = f"{name}_parameters.npz"
        info = run_mxnet_batch(self.python, self.driver, directory, request, arrays)
        if first:
            saved = _npz_dict(directory / "parameters.npz")
            # a block without parameters saves an empty list, which .params readers refuse
            self.reference_state = self.read_params(self.params_path) if self.read_params and saved else saved
            self.load_reference()
        return {"info": info, "directory": directory}

    def load_reference(self):
        """The saved mxnet parameters into the Keras model (again: a training step moves its statistics)."""
        self.keras_module.load_state_dict(self.keras_model, self.reference_state)

    def run_keras(self, inputs):
        import tensorflow as tf

        result = self.keras_model(*[tf.constant(x) for x in inputs], training=False)
        return _flatten_outputs(result, lambda t: np.asarray(t))

    def input_specs(self):
        """The manifest's example inputs, an open integer range closed at the smallest Embedding's size (10 without
        an Embedding)."""
        specs = self.class_entry.get("example_inputs")
        if not specs:
            raise ValueError(f"{self.class_name} has no example inputs in the manifest (convert with --input-shape)")
        resolved = []
        for spec in specs:
            spec = dict(spec)
            if spec["dtype"].startswith(("int", "uint")) and spec.get("high") is None:
                spec["high"] = smallest_embedding_size(self.keras_model) or 10
            resolved.append(spec)
        return resolved


class GluonEquivalence:
    """The checks of checks.Equivalence on a GluonPair, mxnet computing the reference for a batch of cases at once.

    Building it runs the first batch: the parameters are made and saved, the scaled input sizes are probed, and
    training mode is tried twice for determinism (Dropout blocks at rate 0)."""

    bf16 = False

    def __init__(self, pair):
        self.pair = pair
        self.specs = pair.input_specs()
        self.notes, self.round_off = [], []
        self._results = {}  # (case, training) -> {"outputs", "gradients", "state"}
        base = [tuple(spec["shape"]) for spec in self.specs]
        candidates = []
        for factor in SIZE_FACTORS:
            shapes = [varied_shape(spec, factor) for spec in self.specs]
            if shapes != base and shapes not in candidates:
                candidates.append(shapes)
        sample = input_arrays(self.specs, base, Case(2, 0.0, 0, 0))
        batch = pair.run_batch(sample, probes=[input_arrays(self.specs, shapes, Case(2, 0.0, 0, 0))
                                               for shapes in candidates],
                               determinism=input_arrays(self.specs, base, Case(2, 0.0, 0, 12345)),
                               vanishing=sample)
        info = batch["info"]
        found = info.get("vanishing") or {}
        self.vanishing = {False: set(found.get("eval", ())), True: set(found.get("training", ()))}
        accepted = {tuple(shapes) for shapes, ok in zip(candidates, info["accepted"]) if ok}
        self.variants = size_variants(self.specs, lambda shapes: tuple(shapes) in accepted)
        disable_keras_dropout(pair.keras_model)
        self.trainable = set(info["trainable"])
        self.has_batch_norm = any(key.endswith("running_mean") for key in pair.reference_state)
        self.train_mode = False
        if self.has_batch_norm:
            if info["training_error"]:
                self.notes.append(f"train mode not compared: the mxnet model fails in training mode "
                                  f"({info['training_error']})")
            elif not info["deterministic"]:
                self.notes.append("train mode not compared: the mxnet model is not deterministic in training even "
                                  "with Dropout blocks at rate 0 (F.Dropout in hybrid_forward?)")
            else:
                self.train_mode = True

    # ---------------------------------------------------------------------------------------------- inputs
    def cases(self, max_batch=8):
        """Strategy of the Cases this class can be checked on."""
        return cases(len(self.variants), 1, max_batch)

    def baseline(self, seed=0):
        """The manifest's shapes, batch 2, unit magnitude: always checked first."""
        return Case(2, 0.0, 0, seed)

    def inputs(self, case):
        if not 0 <= case.variant < len(self.variants):
            raise ValueError(f"case {case}: variant must be below {len(self.variants)} (sizes "
                             f"{self.describe_variants()})")
        return input_arrays(self.specs, self.variants[case.variant], case)

    def describe_variants(self):
        return "; ".join(f"{i}: {', '.join('x'.join(map(str, s)) or '()' for s in shapes)}"
                         for i, shapes in enumerate(self.variants))

    # ---------------------------------------------------------------------------------------------- reference
    def _train_case(self, case):
        return Case(max(case.batch, 2), case.exponent, case.variant, case.seed)

    def prepare(self, drawn):
        """Compute mxnet's results for every case in `drawn` not computed yet, in one driver process."""
        wanted = []
        for case in drawn:
            wanted.append((case, False))
            if self.train_mode and not case.extreme:
                wanted.append((self._train_case(case), True))
        wanted = [key for key in dict.fromkeys(wanted) if key not in self._results]
        if not wanted:
            return
        requests = [(f"c{index}", self.inputs(case), case.seed, training)
                    for index, (case, training) in enumerate(wanted)]
        sample = input_arrays(self.specs, self.variants[0], Case(2, 0.0, 0, 0))
        directory = self.pair.run_batch(sample, cases=requests)["directory"]
        for (case, training), (name, *_) in zip(wanted, requests):
            outputs = _npz_dict(directory / f"{name}_outputs.npz")
            self._results[(case, training)] = {
                "outputs": [outputs[f"output_{i}"] for i in range(len(outputs))],
                "gradients": _npz_dict(directory / f"{name}_gradients.npz"),
                "state": _npz_dict(directory / f"{name}_state.npz")}

    def reference(self, case, training=False):
        key = (self._train_case(case) if training else case, training)
        if key not in self._results:
            try:
                self.prepare([case])
            except MxnetReferenceError as error:
                raise EquivalenceFailure("forward" if not training else "train", case, f"the mxnet model raised: "
                                                                                     f"{error}") from None
        return self._results[key]

    # ---------------------------------------------------------------------------------------------- checks
    def check(self, case):
        """All checks that apply to `case`: {"forward": {...}, "gradients": float|None, "train": float|None}."""
        return {"forward": self.check_forward(case), "gradients": self.check_gradients(case),
                "train": self.check_train_mode(case)}

    def check_forward(self, case):
        """Eval-mode outputs. Returns {"abs", "rel", "judged", "cosine", "argmax"} (the worst over outputs)."""
        inputs = self.inputs(case)
        expected = self.reference(case)["outputs"]
        try:
            actual = self.pair.run_keras(inputs)
        except Exception as error:
            raise EquivalenceFailure("forward", case, f"the Keras model raised {type(error).__name__}: "
                                                      f"{str(error).strip()[:500]}")
        if len(expected) != len(actual):
            raise EquivalenceFailure("forward", case, f"{len(actual)} outputs, mxnet returns {len(expected)}")
        result = {"abs": 0.0, "rel": 0.0, "judged": not case.extreme, "cosine": None, "argmax": None}
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            what = f"output {index}" if len(expected) > 1 else "output"
            comparison = compare_arrays(want, got, FORWARD_TOLERANCE, what, masks_only=case.extreme)
            if comparison.problem:
                raise EquivalenceFailure("forward", case, _says_mxnet(comparison.problem))
            result["abs"] = max(result["abs"], comparison.abs_error)
            result["rel"] = max(result["rel"], comparison.rel_error)
        return result

    def check_gradients(self, case):
        """Eval-mode gradients (non-extreme cases). Returns the worst relative error, or None."""
        if case.extreme:
            return None
        errors = self._compare_gradients(case, self.inputs(case), False, "gradients")
        return max(errors.values(), default=0.0)

    def check_train_mode(self, case):
        """One training step with batch >= 2: outputs, gradients, running statistics. None when not applicable."""
        if not self.train_mode or case.extreme:
            return None
        case = self._train_case(case)
        inputs = self.inputs(case)
        try:
            expected, actual = self._gradient_step(case, inputs, True, "train")
            state = self.reference(case, True)["state"]
            worst = 0.0
            for entry in self.pair.keras_model.torch_state():
                if not entry.key.endswith(RUNNING_STAT_SUFFIXES) or entry.key not in state:
                    continue
                want = state[entry.key]
                want = entry.to_keras(want) if entry.to_keras is not None else want
                comparison = compare_arrays(want, np.asarray(entry.variable.numpy()), FORWARD_TOLERANCE,
                                            f"{entry.key} after one training step", check_dtype=False)
                if comparison.problem:
                    raise EquivalenceFailure("train", case, _says_mxnet(comparison.problem),
                                             [entry.key.rpartition(".")[0]])
                worst = max(worst, comparison.rel_error)
            errors = self._judge_gradients(case, inputs, True, "train", expected, actual)
        finally:
            self.pair.load_reference()
        return max([worst, *errors.values()])

    def _arbitrate(self, case, inputs, training, expected, actual, bad):
        """Why float32 gradients beyond tolerance are still the same function (a line for the notes), or None.

        (a) Against mxnet's float64 gradients, the port is as precise as mxnet's own float32 on every such tensor
        (within 1e-3 of its max plus 10x mxnet's own float32 error): an ill-conditioned gradient. (b) Round-off can
        put an internal ReLU/max/clip input on the other side of its kink in one framework (a whole
        channel's gradient changes). With every parameter of both models moved by a relative 1e-3 (the same values
        on both sides; mxnet computes both moves in one process), a tie by round-off is resolved and the gradients
        agree; a port error would not go away. As in checks.Equivalence, two moves are tried."""
        moves = []
        for attempt in (1, 2):
            rng = np.random.default_rng([case.seed, 7, attempt])
            moves.append({key: (value * (1 + 1e-3 * rng.standard_normal(np.shape(value)))).astype(value.dtype)
                          if np.asarray(value).dtype.kind == "f" else value
                          for key, value in self.pair.reference_state.items()})
        sample = input_arrays(self.specs, self.variants[0], Case(2, 0.0, 0, 0))
        try:
            batch = self.pair.run_batch(sample, cases=[(f"move{i}", inputs, case.seed, training, moved)
                                                       for i, moved in enumerate(moves)],
                                        float64_cases=[("exact", inputs, case.seed, training)])
        except MxnetReferenceError:
            return None
        exact = _gradients_of({"gradients": _npz_dict(batch["directory"] / "exact_gradients.npz")}, self.trainable)
        for entry in self.pair.keras_model.torch_state():
            if entry.key in exact and entry.to_keras is not None:
                exact[entry.key] = entry.to_keras(exact[entry.key])
        if all(name in exact for name in bad):
            peak = max(float(np.abs(g).max(initial=0.0)) for g in exact.values())
            remaining = []
            for name in bad:
                want = exact[name]
                scale = peak if name in self.vanishing[training] else max(float(np.abs(want).max(initial=0.0)),
                                                                            1e-3 * peak)
                mxnet_error = float(np.abs(expected[name] - want).max(initial=0.0))
                port_error = float(np.abs(actual[name] - want).max(initial=0.0))
                if not port_error <= GRADIENT_TOLERANCE * scale + 10 * mxnet_error:
                    remaining.append(name)
            if not remaining:
                return "the port is as precise as mxnet's own float32 (both against mxnet in float64)"
        for index, moved in enumerate(moves):
            reference = {"gradients": _npz_dict(batch["directory"] / f"move{index}_gradients.npz")}
            expected = _gradients_of(reference, self.trainable)
            try:
                self.pair.keras_module.load_state_dict(self.pair.keras_model, moved)
                entries = [e for e in self.pair.keras_model.torch_state() if e.key in expected]
                for entry in entries:
                    if entry.to_keras is not None:
                        expected[entry.key] = entry.to_keras(expected[entry.key])
                _, actual = keras_gradients(self.pair.keras_model, entries, inputs, training, case.seed)
            except Exception:  # the mismatch stands
                continue
            finally:
                self.pair.load_reference()
            for key, value in expected.items():
                actual.setdefault(key, value)
            errors = gradient_errors(expected, actual, vanishing=self.vanishing[training])
            if all(error <= GRADIENT_TOLERANCE for error in errors.values()):
                return "a kink decided differently by round-off (equal with the weights moved by 1e-3)"
        return None

    def _compare_gradients(self, case, inputs, training, stage):
        expected, actual = self._gradient_step(case, inputs, training, stage)
        return self._judge_gradients(case, inputs, training, stage, expected, actual)

    def _gradient_step(self, case, inputs, training, stage):
        """(mxnet's gradients in the Keras layout, the port's), after checking the outputs in training mode."""
        reference = self.reference(case, training)
        expected = _gradients_of(reference, self.trainable)
        entries = [e for e in self.pair.keras_model.torch_state() if e.key in expected]
        untrainable = [e.key for e in entries if not e.variable.trainable]
        if untrainable:
            raise EquivalenceFailure(stage, case, f"parameters mxnet trains are not trainable in Keras: "
                                                  f"{', '.join(untrainable[:5])}",
                                     [key.rpartition(".")[0] for key in untrainable])
        for entry in entries:
            if entry.to_keras is not None:
                expected[entry.key] = entry.to_keras(expected[entry.key])
        mode = "training" if training else "eval"
        try:
            actual_outputs, actual = keras_gradients(self.pair.keras_model, entries, inputs, training, case.seed)
        except Exception as error:
            raise EquivalenceFailure(stage, case, f"the Keras model raised {type(error).__name__} in {mode} mode: "
                                                  f"{str(error).strip()[:500]}")
        if training:
            expected_outputs = [o for o in reference["outputs"] if o.dtype.kind == "f"]
            if len(expected_outputs) != len(actual_outputs):
                raise EquivalenceFailure(stage, case, f"{len(actual_outputs)} outputs in training mode, mxnet "
                                                      f"returns {len(expected_outputs)}")
            for index, (want, got) in enumerate(zip(expected_outputs, actual_outputs, strict=True)):
                comparison = compare_arrays(want, got, FORWARD_TOLERANCE, f"output {index} in training mode",
                                            check_dtype=False)
                if comparison.problem:
                    raise EquivalenceFailure(stage, case, _says_mxnet(comparison.problem))
        for key, value in expected.items():  # parameters the port lacks were reported by load_state_dict already
            actual.setdefault(key, value)
        return expected, actual

    def _judge_gradients(self, case, inputs, training, stage, expected, actual):
        mode = "training" if training else "eval"
        errors = gradient_errors(expected, actual, vanishing=self.vanishing[training])
        bad = sorted((name for name, error in errors.items() if not error <= GRADIENT_TOLERANCE),
                     key=lambda name: -errors[name] if np.isfinite(errors[name]) else -np.inf)
        verdict = self._arbitrate(case, inputs, training, expected, actual, bad) if bad else None
        if verdict is not None:
            self.round_off.append((case, stage, errors[bad[0]], bad[0], verdict))
            return {name: error for name, error in errors.items() if name not in bad}
        if bad:
            listed = ", ".join(f"{name} {errors[name]:.3g}" for name in bad[:4])
            more = f" and {len(bad) - 4} more" if len(bad) > 4 else ""
            raise EquivalenceFailure(stage, case, f"{mode}-mode gradients differ beyond {GRADIENT_TOLERANCE:g} of "
                                                  f"each tensor's max: {listed}{more}",
                                     [name.rpartition(".")[0] for name in bad if not name.startswith("input ")])
        return errors


def _gradients_of(reference, trainable):
    """mxnet's gradients keyed as the checks key them: "input i" and the trained parameters' names."""
    expected = {}
    for name, value in reference["gradients"].items():
        if name.startswith("input_"):
            expected[f"input {name[len('input_'):]}"] = value
        elif name in trainable:
            expected[name] = value
    return expected


def _says_mxnet(problem):
    """compare_arrays speaks of torch; here the reference is mxnet."""
    return problem.replace("!= torch", "!= mxnet").replace(": torch ", ": mxnet ")


def drawn_gluon_cases(equivalence, examples, seed):
    """The baseline and examples - 1 hypothesis-drawn cases, in the order `porter verify` checks them (drawn first,
    so that mxnet computes them in one process)."""
    from hypothesis import HealthCheck, Phase, example, given, settings
    from hypothesis import seed as hypothesis_seed

    baseline = equivalence.baseline(seed)
    if examples <= 1:
        return [baseline]
    drawn = []

    @settings(max_examples=examples - 1, database=None, deadline=None, derandomize=False,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, print_blob=False)
    @hypothesis_seed(seed)
    @example(case=baseline)
    @given(case=equivalence.cases())
    def draw(case):
        drawn.append(case)

    draw()
    return list(dict.fromkeys(drawn))


def gluon_failure_report(equivalence, failure, reproduce, find_block=None):
    """The text of a failed check: what differs, the case and its inputs, where the difference starts and a command
    that reproduces it. `find_block(equivalence, case)` (porter verify passes gluon_localise.localise_gluon)
    returns the first diverging block on the case's inputs; without it, or when every block's output matches, a
    gradient or training mismatch names the last block whose parameters' gradients differ."""
    pair = equivalence.pair
    lines = [f"MISMATCH in {pair.class_name}: {failure.stage}: {failure.message}"]
    try:
        inputs = equivalence.inputs(failure.case)
        lines.append(f"  case {failure.case}: inputs "
                     + ", ".join(f"{tuple(x.shape)} {x.dtype}" for x in inputs))
    except ValueError as error:
        lines.append(f"  {error}")
    localisation = None
    if find_block is not None:
        try:
            localisation = find_block(equivalence, failure.case)
        except Exception as error:  # the report must still say what failed and how to reproduce it
            lines.append(f"  (block capture failed: {type(error).__name__}: {str(error)[:300]})")
    failure.localisation = localisation
    if localisation is not None:
        lines.extend("  " + line for line in localisation.describe(pair.class_name).splitlines())
    elif failure.suspects:
        order = {entry.key.rpartition(".")[0]: index for index, entry in
                 enumerate(pair.keras_model.torch_state())}
        # gradients flow backwards: the last block (in parameter order) with wrong gradients is where they start
        suspect = max(failure.suspects, key=lambda name: order.get(name, -1))
        lines.append(f"  the {failure.stage} difference starts at block {suspect or pair.class_name}")
    lines.append(f"  reproduce: {reproduce}")
    return "\n".join(lines)
