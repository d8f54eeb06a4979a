"""Check one ported class against its torch source on a drawn Case: forward, gradients, train-mode BatchNorm.

`Equivalence(pair)` wraps a PortedPair; each `check_*` method takes a Case, returns the errors it measured and
raises EquivalenceFailure (an AssertionError) naming what differs. Shared by `porter verify` and the generated
test_equivalence.py (which carries a copy of this module).

- forward (eval mode): shapes, dtypes, NaN/Inf masks, then max abs / rel error (relative to the output's scale)
  within 1e-4; extreme magnitudes (|exponent| > 2.5) are judged on masks only. In mixed_bfloat16 the Keras output
  must keep a cosine >= 0.99 with torch's float32 output; argmax agreement is reported for classifiers.
- gradients (float32 only): the gradient of sum_i sum(w_i * output_i) (w_i fixed random) w.r.t. every float input
  and every trainable parameter, torch's mapped through the weight transform of its StateEntry, within 1e-3 of
  each tensor's max (floored at 1e-3 of the largest gradient; gradients that are zero in exact arithmetic, found
  once with torch in float64, are judged against the largest gradient: their float32 value is round-off).
- train mode (models with BatchNorm running statistics, batch >= 2): outputs, gradients and the running
  statistics after one step. Dropout is switched off (p = 0) in both models so that training is deterministic;
  a source that is still not deterministic (functional dropout) skips this check with a note.

A float32 gradient mismatch is arbitrated, because two float32 results can both be right: an ill-conditioned
gradient is imprecise in torch's own float32 too, and round-off can put an internal ReLU/max input on the other
side of its kink in one framework (a whole channel's gradient changes). The case counts as equal, and is listed
in `round_off`, when the port is as precise as torch's own float32 against torch in float64, when the port built
in float64 gives torch's float64 gradients (large inputs hold so many ReLU inputs that round-off flips some kink
in either framework), or when the check passes with the weights of both models moved by a relative 1e-3 (which
resolves a tie by round-off but not a port error); otherwise the mismatch stands. An eval-mode output beyond
tolerance counts as equal when it is as precise as torch's own float32 against torch in float64 (a saturating gate
magnifies round-off); a training-mode output or running statistic, when the port in float64 gives torch's float64
one (BatchNorm over a few values per channel magnifies round-off).
"""

import copy
import traceback
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
import torch

from porter.verify.compare import (
    argmax_agreement,
    compare_arrays,
    cosine_similarity,
    explained_by_round_off,
    gradient_errors,
    in_float64,
    is_classifier_output,
)
from porter.verify.harness import _flatten_outputs, _has_lazy_modules, keras_layers
from porter.verify.strategies import Case, cases, input_arrays, output_weights, size_variants

FORWARD_TOLERANCE = 1e-4
GRADIENT_TOLERANCE = 1e-3
BF16_MIN_COSINE = 0.99
RUNNING_STAT_SUFFIXES = ("running_mean", "running_var")

_AS_PRECISE = "the port is as precise as torch's own float32 (both against torch in float64)"
_FEW_VALUES = ("the port in float64 equals torch in float64 (BatchNorm over a few values per channel magnifies "
               "round-off)")


class EquivalenceFailure(AssertionError):
    """A difference between the port and its source: `stage`, the Case, and the torch modules it points at."""

    def __init__(self, stage, case, message, suspects=()):
        super().__init__(f"{stage} (case {case}): {message}")
        self.stage, self.case, self.message, self.suspects = stage, case, message, list(suspects)
        self.localisation = None  # filled in by localise.failure_report


class Equivalence:
    """Checks of one PortedPair; `variants` are the input shapes (the manifest's first) the torch model accepts."""

    def __init__(self, pair, vary_sizes=True):
        self.pair = pair
        self.bf16 = pair.precision == "mixed_bfloat16"
        self.specs = pair.input_specs()
        base = [tuple(spec["shape"]) for spec in self.specs]
        self.variants = size_variants(self.specs, self._torch_accepts) if vary_sizes else [base]
        disable_dropout(pair.torch_model, pair.keras_model)
        self.has_batch_norm = any(getattr(m, "running_mean", None) is not None
                                  for m in pair.torch_model.modules())
        self.notes = []
        self.round_off = []  # (case, stage, float32 error, worst tensor, explanation) of arbitrated mismatches
        self._torch64 = None  # torch in float64, built on first need
        self._keras64 = None  # the port in float64, built on first need
        self._step64 = None  # (case, what _train_step_in_float64 gave on it)
        self._vanishing = {}  # training flag -> names of gradients that are zero in exact arithmetic
        self.train_mode = self.has_batch_norm and not self.bf16 and self._train_is_deterministic()

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

    def _torch_accepts(self, shapes):
        try:
            self.pair.run_torch(input_arrays(self.specs, shapes, Case(2, 0.0, 0, 0)))
        except Exception:  # the source rejects these sizes (a fixed Linear after flatten, a max length, ...)
            return False
        return True

    def _train_is_deterministic(self):
        # a batch of 8: randomness drawn per example (stochastic depth's `torch.rand([batch, 1, 1, 1])` with p
        # about 0.1, efficientnet_pytorch's drop_connect) left two runs of 2 examples equal one time in 20
        inputs = self.inputs(Case(8, 0.0, 0, 12345))
        results = []
        try:
            for _ in range(2):
                self.pair.torch_model.train()
                with torch.no_grad():
                    outputs = self.pair.torch_model(*[torch.from_numpy(np.array(x)) for x in inputs])
                results.append(_flatten_outputs(outputs, lambda t: t.detach().numpy()))
                self.pair.reset()
        except Exception as error:
            self.pair.reset()
            self.notes.append(f"train mode not compared: the torch model fails in training mode "
                              f"({type(error).__name__}: {error})")
            return False
        if all(np.array_equal(a, b, equal_nan=True) for a, b in zip(*results)):
            return True
        self.notes.append("train mode not compared: the torch model is not deterministic in training even with "
                          "dropout modules at p=0 (functional dropout?)")
        return False

    # ---------------------------------------------------------------------------------------------- checks
    def check(self, case):
        """All checks that apply to `case`: {"forward": {...}, "gradients": float|None, "train": float|None}."""
        return {"forward": self.check_forward(case), "gradients": self.check_gradients(case),
                "train": self.check_train_mode(case)}

    def check_forward(self, case):
        """Eval-mode outputs. Returns {"abs", "rel", "judged", "cosine", "argmax"} (the worst over outputs)."""
        inputs = self.inputs(case)
        try:
            expected = self.pair.run_torch(inputs)
        except Exception as error:
            raise EquivalenceFailure("forward", case, f"the torch model raised {type(error).__name__}: {error}")
        try:
            actual = self.pair.run_keras(inputs)
        except Exception as error:
            raise EquivalenceFailure("forward", case, f"the Keras model raised {type(error).__name__}"
                                                      f"{self._raised_at(error)}: {str(error).strip()[:500]}")
        if len(expected) != len(actual):
            raise EquivalenceFailure("forward", case, f"{len(actual)} outputs, torch returns {len(expected)}")
        result = {"abs": 0.0, "rel": 0.0, "judged": not case.extreme, "cosine": None, "argmax": None}
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            what = f"output {index}" if len(expected) > 1 else "output"
            if self.bf16:
                self._bf16_output(case, what, want, got, result)
                continue
            comparison = compare_arrays(want, got, FORWARD_TOLERANCE, what, masks_only=case.extreme)
            if comparison.problem:
                if not (np.isfinite(comparison.rel_error) and
                        self._as_precise_as_torch(case, inputs, index, want, got, len(expected))):
                    raise EquivalenceFailure("forward", case, comparison.problem)
                self.round_off.append((case, "forward", comparison.rel_error, what, _AS_PRECISE))
            result["abs"] = max(result["abs"], comparison.abs_error)
            result["rel"] = max(result["rel"], comparison.rel_error)
        return result

    def _bf16_output(self, case, what, want, got, result):
        got = np.asarray(got)
        if want.dtype.kind != "f":
            return  # integer/bool outputs of a bf16 model are reported through the float ones
        got = got.astype(np.float32)
        comparison = compare_arrays(want, got, FORWARD_TOLERANCE, what, masks_only=True, check_dtype=False)
        if comparison.problem:
            raise EquivalenceFailure("forward", case, comparison.problem)
        result["abs"] = max(result["abs"], comparison.abs_error)
        result["rel"] = max(result["rel"], comparison.rel_error)
        if case.extreme:
            return
        cosine = cosine_similarity(want, got)
        result["cosine"] = cosine if result["cosine"] is None else min(result["cosine"], cosine)
        if is_classifier_output(want):
            agreement = argmax_agreement(want, got)
            result["argmax"] = agreement if result["argmax"] is None else min(result["argmax"], agreement)
        if not cosine >= BF16_MIN_COSINE:
            raise EquivalenceFailure("forward", case, f"{what}: cosine similarity {cosine:.4f} with the float32 "
                                                      f"source is below {BF16_MIN_COSINE}")

    def check_gradients(self, case):
        """Eval-mode gradients (float32, non-extreme cases). Returns the worst relative error, or None."""
        if self.bf16 or case.extreme:
            return None
        inputs = self.inputs(case)
        errors = self._compare_gradients(case, inputs, training=False, stage="gradients")
        return max(errors.values(), default=0.0)

    def check_train_mode(self, case):
        """One training step with batch >= 2: outputs, gradients, running statistics. None when not applicable."""
        if not self.train_mode or case.extreme:
            return None
        case = Case(max(case.batch, 2), case.exponent, case.variant, case.seed)
        inputs = self.inputs(case)
        try:
            expected, actual = self._gradient_step(case, inputs, True, "train")
            worst = 0.0
            torch_state = {k: v.detach().numpy() for k, v in self.pair.torch_model.state_dict().items()}
            for entry in self.pair.keras_model.torch_state():
                if not entry.key.endswith(RUNNING_STAT_SUFFIXES) or entry.key not in torch_state:
                    continue
                want = torch_state[entry.key]
                want = entry.to_keras(want) if entry.to_keras is not None else want
                got = np.asarray(entry.variable.numpy())
                what = f"{entry.key} after one training step"
                comparison = compare_arrays(want, got, FORWARD_TOLERANCE, what, check_dtype=False)
                if comparison.problem:
                    if not self._train_step_equal_in_float64(case, inputs, entry.key):
                        raise EquivalenceFailure("train", case, comparison.problem, [_module_of(entry.key)])
                    self.round_off.append((case, "train", comparison.rel_error, what, _FEW_VALUES))
                    continue
                worst = max(worst, comparison.rel_error)
            errors = self._judge_gradients(case, inputs, True, "train", expected, actual)
        finally:
            self.pair.reset()
        return max([worst, *errors.values()])

    def _raised_at(self, error):
        """' (under module.py:123 in function)': the innermost frame of the generated module in `error`'s traceback,
        else the innermost frame (a gradient function, during backpropagation)."""
        module_file = getattr(self.pair.keras_module, "__file__", None)
        frames = traceback.extract_tb(error.__traceback__)
        ours = [frame for frame in frames if module_file and frame.filename == module_file]
        frame = ours[-1] if ours else frames[-1] if frames else None
        return f" (under {Path(frame.filename).name}:{frame.lineno} in {frame.name})" if frame else ""

    # ---------------------------------------------------------------------------------------------- gradients
    def _compare_gradients(self, case, inputs, training, stage):
        expected, actual = self._gradient_step(case, inputs, training, stage)
        return self._judge_gradients(case, inputs, training, stage, expected, actual)

    def _gradient_step(self, case, inputs, training, stage):
        """(torch gradients in the Keras layout, Keras gradients), after checking outputs in training mode."""
        mode = "training" if training else "eval"
        try:
            expected_outputs, expected = torch_gradients(self.pair.torch_model, inputs, training, case.seed)
        except Exception as error:
            raise EquivalenceFailure(stage, case, f"the torch model raised {type(error).__name__} in {mode} mode: "
                                                  f"{error}")
        entries = [e for e in self.pair.keras_model.torch_state() if e.key in expected]
        untrainable = [e.key for e in entries if not e.variable.trainable]
        if untrainable:
            raise EquivalenceFailure(stage, case, f"parameters trainable in torch are not trainable in Keras: "
                                                  f"{', '.join(untrainable[:5])}", map(_module_of, untrainable))
        expected = to_keras_layout(expected, entries)
        try:
            actual_outputs, actual = keras_gradients(self.pair.keras_model, entries, inputs, training, case.seed)
        except Exception as error:
            raise EquivalenceFailure(stage, case, f"the Keras model raised {type(error).__name__} in {mode} mode"
                                                  f"{self._raised_at(error)}: {str(error).strip()[:500]}")
        if training:
            if len(expected_outputs) != len(actual_outputs):
                raise EquivalenceFailure(stage, case, f"{len(actual_outputs)} outputs in training mode, torch "
                                                      f"returns {len(expected_outputs)}")
            for index, (want, got) in enumerate(zip(expected_outputs, actual_outputs, strict=True)):
                what = f"output {index} in training mode"
                comparison = compare_arrays(want, got, FORWARD_TOLERANCE, what, check_dtype=False)
                if comparison.problem:
                    if not self._train_step_equal_in_float64(case, inputs, index):
                        raise EquivalenceFailure(stage, case, comparison.problem)
                    self.round_off.append((case, stage, comparison.rel_error, what, _FEW_VALUES))
        for key in expected:  # parameters the port lacks were reported by load_state_dict already
            actual.setdefault(key, expected[key])
        return expected, actual

    def _bad_gradients(self, expected, actual, training):
        errors = gradient_errors(expected, actual, vanishing=self._vanishing_gradients(training))
        bad = sorted((name for name, error in errors.items() if not error <= GRADIENT_TOLERANCE),
                     key=lambda name: -errors[name] if np.isfinite(errors[name]) else -np.inf)
        return errors, bad

    def _judge_gradients(self, case, inputs, training, stage, expected, actual):
        errors, bad = self._bad_gradients(expected, actual, training)
        if not bad:
            return errors
        listed = ", ".join(f"{name} {errors[name]:.3g}" for name in bad[:4])
        more = f" and {len(bad) - 4} more" if len(bad) > 4 else ""
        mode = "training" if training else "eval"
        message = f"{mode}-mode gradients differ beyond {GRADIENT_TOLERANCE:g} of each tensor's max: {listed}{more}"
        suspects = [_module_of(name) for name in bad if not name.startswith("input ")]
        verdict = self._arbitrate(case, inputs, training, expected, actual, bad)
        if verdict is None:
            raise EquivalenceFailure(stage, case, message, suspects)
        self.round_off.append((case, stage, errors[bad[0]], bad[0], verdict))
        return {name: error for name, error in errors.items() if name not in bad}

    def _arbitrate(self, case, inputs, training, expected, actual, bad):
        """Why float32 gradients beyond tolerance are still the same function (a line for the notes), or None.

        (a) Against torch's float64 gradients, the port is as precise as torch's own float32 on every such tensor
        (within 1e-3 of its max plus 10x torch's own float32 error): an ill-conditioned gradient. (b) Else, with
        the weights moved by a relative 1e-3 (the same in both models), the gradients agree: float32 round-off put
        an internal ReLU/max input on the other side of its kink in one framework (a tie by round-off, which the
        move resolves; a port error would not go away). Two moves are tried."""
        try:
            exact = self._float64_gradients(case, inputs, training)
        except Exception:
            exact = None
        if exact is not None:
            peak = max(float(np.abs(g).max(initial=0.0)) for g in exact.values())
            vanishing = self._vanishing_gradients(training)
            remaining = []
            for name in bad:
                want = exact[name]
                scale = peak if name in vanishing else max(float(np.abs(want).max(initial=0.0)), 1e-3 * peak)
                torch_error = float(np.abs(expected[name] - want).max(initial=0.0))
                port_error = float(np.abs(actual[name] - want).max(initial=0.0))
                if not port_error <= GRADIENT_TOLERANCE * scale + 10 * torch_error:
                    remaining.append(name)
            if not remaining:
                return _AS_PRECISE
            if self._equal_in_float64(case, inputs, training, exact, remaining):
                return ("the port in float64 equals torch in float64 (a float32 round-off put a ReLU/max input on "
                        "the other side of its kink)")
        for attempt in (1, 2):
            rng = np.random.default_rng([case.seed, 7, attempt])
            moved = {key: (value * (1 + 1e-3 * rng.standard_normal(np.shape(value)))).astype(value.dtype)
                     if np.asarray(value).dtype.kind == "f" else value
                     for key, value in self.pair.reference_state.items()}
            try:
                self.pair.load_state(moved)
                again_expected, again_actual = self._gradient_step(case, inputs, training, "recheck")
                _, again_bad = self._bad_gradients(again_expected, again_actual, training)
            except EquivalenceFailure:
                again_bad = ["failed"]
            finally:
                self.pair.reset()
            if not again_bad:
                return "a kink decided differently by round-off (equal with the weights moved by 1e-3)"
        return None

    def _as_precise_as_torch(self, case, inputs, index, want, got, outputs):
        """Whether the port's eval-mode output `index` (`got`, torch's float32 `want`) is as precise as torch's own
        float32 against torch in float64 (within 1e-4 of its scale plus 10x torch's own error): large inputs through
        a saturating gate (MobileNetV3's hard-sigmoid squeeze-excite) magnify float32 round-off in either framework.
        False where the source does not run in float64."""
        try:
            exact, _, _ = self._torch64_step(inputs, False, case.seed)
        except Exception:  # noqa: BLE001 - a source that does not run in float64 is judged in float32 alone
            return False
        if len(exact) != outputs or np.shape(exact[index]) != np.shape(want):
            return False
        exact = np.asarray(exact[index], np.float64)
        if not np.isfinite(exact).all():
            return False
        scale = float(np.abs(exact).max(initial=0.0))
        torch_error = float(np.abs(np.asarray(want, np.float64) - exact).max(initial=0.0))
        port_error = float(np.abs(np.asarray(got, np.float64) - exact).max(initial=0.0))
        return explained_by_round_off(port_error, torch_error, scale, FORWARD_TOLERANCE)

    def _train_step_equal_in_float64(self, case, inputs, name):
        """Whether `name` (an output's index, or a running statistic's state_dict key) after one training step of
        the port built in float64 is torch's in float64 within 1e-6 of its scale. BatchNorm normalising a few values
        per channel (batch 3 at 1x1 deep in a convnet) divides by a standard deviation close to their round-off:
        float32 results differ in either framework; in float64 they agree, and a port error stays."""
        if self._step64 is None or self._step64[0] != case:
            self._step64 = (case, self._train_step_in_float64(inputs))
        results = self._step64[1]
        if results is None or name not in results[0] or name not in results[1]:
            return False
        want, got = np.asarray(results[0][name], np.float64), np.asarray(results[1][name], np.float64)
        if want.shape != got.shape or not np.isfinite(want).all():
            return False
        scale = max(float(np.abs(want).max(initial=0.0)), 1e-30)
        return float(np.abs(got - want).max(initial=0.0)) <= 1e-6 * scale

    def _train_step_in_float64(self, inputs):
        """({output index or running statistic's key: value (Keras layout)} of torch, the same of the port), both in
        float64 after one training step from the reference state (restored after), or None."""
        try:
            outputs, _, torch_state = self._torch64_step(inputs, True, 0, keep_state=True)
            actual, _, statistics = self._keras64_step(inputs, True, 0)
        except Exception:  # noqa: BLE001 - a model that does not run in float64 is judged in float32 alone
            return None
        want, got = dict(enumerate(outputs)), dict(enumerate(actual))
        for entry in self._float64_keras().torch_state():
            if entry.key in statistics and entry.key in torch_state:
                value = torch_state[entry.key]
                want[entry.key] = entry.to_keras(value) if entry.to_keras is not None else value
                got[entry.key] = statistics[entry.key]
        return want, got

    def _equal_in_float64(self, case, inputs, training, exact, names):
        """Whether the port built in float64 (Keras's float64 policy) gives torch's float64 gradients on `inputs`
        for `names`, within 1e-6 of each tensor's max. Large inputs hold so many ReLU/max inputs that float32
        round-off puts some on the other side of their kink in one framework and not the other (torchvision's
        ResNet-18 at 224x224: 5% off on one layer's gradients, torch's own float32 as far off on another's); in
        float64 none is that close, and a port error stays. False where the port cannot run in float64."""
        try:
            _, actual, _ = self._keras64_step(inputs, training, case.seed)
        except Exception:  # noqa: BLE001 - a port that does not run in float64 is judged in float32 alone
            return False
        peak = max(float(np.abs(g).max(initial=0.0)) for g in exact.values())
        for name in names:
            if name not in actual:
                return False
            scale = max(float(np.abs(exact[name]).max(initial=0.0)), 1e-3 * peak)
            if not float(np.abs(np.asarray(actual[name], np.float64) - exact[name]).max(initial=0.0)) <= 1e-6 * scale:
                return False
        return True

    def _keras64_step(self, inputs, training, seed):
        """(float outputs, gradients, {running statistic's key: value}) of the port in float64 on `inputs`; its
        variables are restored after (a training-mode call moved its BatchNorm statistics: the next case meets the
        reference's)."""
        model = self._float64_keras()
        entries = list(model.torch_state())
        state = [variable.numpy() for variable in model.variables]
        try:
            outputs, gradients = keras_gradients(model, entries, in_float64(inputs), training, seed)
            statistics = {e.key: np.asarray(e.variable.numpy()) for e in entries
                          if e.key.endswith(RUNNING_STAT_SUFFIXES)}
        finally:
            for variable, value in zip(model.variables, state):
                variable.assign(value)
        return outputs, gradients, statistics

    def _torch64_step(self, inputs, training, seed, keep_state=False):
        """(float outputs, gradients, the state_dict after as numpy where `keep_state`, else None) of torch in float64
        on `inputs`, from the reference state (restored after)."""
        torch64 = self.float64_torch()
        try:
            outputs, gradients = torch_gradients(torch64, in_float64(inputs), training, seed)
            state = {k: v.detach().numpy().copy() for k, v in torch64.state_dict().items()} if keep_state else None
        finally:
            torch64.load_state_dict(self._reference_tensors)
        return outputs, gradients, state

    def _float64_keras(self):
        """The port built under Keras's float64 policy with the reference state (built once)."""
        if self._keras64 is None:
            model = self.pair.keras_port("float64", first_call=_has_lazy_modules(self.pair.torch_model))
            disable_keras_dropout(model)  # as the float32 pair's
            self._keras64 = model
        return self._keras64

    def _float64_gradients(self, case, inputs, training):
        """torch's gradients in float64 (Keras layout) on `inputs`, from the reference state."""
        _, exact, _ = self._torch64_step(inputs, training, case.seed)
        entries = [e for e in self.pair.keras_model.torch_state() if e.key in exact]
        return to_keras_layout(exact, entries)

    def _vanishing_gradients(self, training):
        """Names of the gradients that are zero in exact arithmetic, found once (per mode) with torch in float64 on
        the baseline case: gradients below 1e-10 of the largest."""
        if training not in self._vanishing:
            names = set()
            try:
                case = self.baseline()
                _, exact, _ = self._torch64_step(self.inputs(case), training, case.seed)
                peak = max([float(np.abs(g).max(initial=0.0)) for g in exact.values()] + [0.0])
                names = {name for name, g in exact.items() if float(np.abs(g).max(initial=0.0)) <= 1e-10 * peak}
            except Exception:  # the source does not run in float64: every gradient is judged on its own max
                pass
            self._vanishing[training] = names
        return self._vanishing[training]

    def float64_torch(self):
        """The source model in float64 with the reference state (built once; what the float64 checks run, and the
        submodule round-off arbitration, verify/localise.py `float64_capture`)."""
        if self._torch64 is None:
            self._torch64 = copy.deepcopy(self.pair.torch_model).double()
            self._reference_tensors = {k: torch.from_numpy(np.array(v)).double() if np.asarray(v).dtype.kind == "f"
                                       else torch.from_numpy(np.array(v)) for k, v in
                                       self.pair.reference_state.items()}
            self._torch64.load_state_dict(self._reference_tensors)
        return self._torch64


def torch_gradients(model, inputs, training, seed):
    """(float outputs, {"input i" / state_dict key: gradient}) of sum_i sum(w_i * output_i) in torch."""
    tensors = [torch.from_numpy(np.array(x)) for x in inputs]
    for tensor in tensors:
        if tensor.is_floating_point():
            tensor.requires_grad_(True)
    parameters = {key: p for key, p in model.named_parameters(remove_duplicate=False) if p.requires_grad}
    model.train(training)
    try:
        outputs = [o for o in _flatten_outputs(model(*tensors), lambda t: t) if o.is_floating_point()]
    finally:
        model.train(False)
    outputs_numpy = [o.detach().numpy() for o in outputs]
    weights = output_weights([o.shape for o in outputs_numpy], seed)
    wanted = [t for t in tensors if t.requires_grad]
    unique = list({id(p): p for p in parameters.values()}.values())
    if outputs:
        loss = sum((o * torch.from_numpy(w).to(o.dtype)).sum() for o, w in zip(outputs, weights))
        grads = torch.autograd.grad(loss, wanted + unique, allow_unused=True)
    else:
        grads = [None] * (len(wanted) + len(unique))
    by_id = {id(p): g for p, g in zip(unique, grads[len(wanted):])}
    result = {}
    float_index = [i for i, t in enumerate(tensors) if t.requires_grad]
    for i, grad in zip(float_index, grads[:len(wanted)]):
        result[f"input {i}"] = np.zeros(tensors[i].shape, np.float32) if grad is None else grad.numpy()
    for key, p in parameters.items():
        grad = by_id[id(p)]
        result[key] = np.zeros(tuple(p.shape), np.float32) if grad is None else grad.numpy()
    return outputs_numpy, result


def keras_gradients(model, entries, inputs, training, seed):
    """(float outputs, {"input i" / state_dict key: gradient in the Keras variable's layout}) in Keras."""
    tensors = [tf.constant(x) for x in inputs]
    float_index = [i for i, x in enumerate(inputs) if np.asarray(x).dtype.kind == "f"]
    variables = list({id(e.variable): e.variable for e in entries}.values())
    with tf.GradientTape() as tape:
        for i in float_index:
            tape.watch(tensors[i])
        for variable in variables:
            tape.watch(getattr(variable, "value", variable))
        outputs = [o for o in _flatten_outputs(model(*tensors, training=training), lambda t: t)
                   if tf.as_dtype(o.dtype).is_floating]
        weights = output_weights([tuple(o.shape) for o in outputs], seed)
        dtype = tf.float64 if any(o.dtype == tf.float64 for o in outputs) else tf.float32
        loss = tf.add_n([tf.reduce_sum(tf.cast(o, dtype) * tf.cast(w, dtype)) for o, w in zip(outputs, weights)]) \
            if outputs else tf.constant(0.0)
    grads = tape.gradient(loss, [tensors[i] for i in float_index] + [getattr(v, "value", v) for v in variables])
    result = {}
    for i, grad in zip(float_index, grads[:len(float_index)]):
        result[f"input {i}"] = np.zeros(inputs[i].shape, np.float32) if grad is None else _dense(grad)
    by_id = {id(v): g for v, g in zip(variables, grads[len(float_index):])}
    for entry in entries:
        grad = by_id[id(entry.variable)]
        result[entry.key] = np.zeros(tuple(entry.variable.shape), np.float32) if grad is None else _dense(grad)
    return [np.asarray(o) for o in outputs], result


def to_keras_layout(gradients, entries):
    """torch gradients keyed like the state_dict, moved through each StateEntry's weight transform."""
    moved = dict(gradients)
    for entry in entries:
        if entry.to_keras is not None and entry.key in moved:
            moved[entry.key] = entry.to_keras(moved[entry.key])
    return moved


def _dense(grad):
    if isinstance(grad, tf.IndexedSlices):
        grad = tf.convert_to_tensor(grad)
    return np.asarray(grad)


def _module_of(key):
    """The torch module name a state_dict key belongs to ('layer1.0.bn1.weight' -> 'layer1.0.bn1')."""
    return key.rpartition(".")[0]


def disable_dropout(torch_model, keras_model):
    """Dropout off (p = 0) in both models: modules of the Dropout family and modules with a float `dropout`."""
    disable_torch_dropout(torch_model)
    disable_keras_dropout(keras_model)


def disable_torch_dropout(torch_model):
    for module in torch_model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
        elif isinstance(getattr(module, "dropout", None), float):
            module.dropout = 0.0


def disable_keras_dropout(keras_model):
    for layer in keras_layers(keras_model):
        if "Dropout" in type(layer).__name__ and isinstance(getattr(layer, "p", None), (int, float)):
            layer.p = 0.0
        elif isinstance(getattr(layer, "dropout", None), float):
            layer.dropout = 0.0
        elif isinstance(layer, keras.layers.Dropout):
            layer.rate = 0.0
