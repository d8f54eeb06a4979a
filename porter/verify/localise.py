"""Find where a port first diverges: per-submodule capture on both sides, compared in torch's execution order.

Torch side: a forward hook on every named module records its first tensor input and its outputs, call by call,
in the order calls complete (children before their parent). Keras side: the layer found by the same attribute
path (`_torch_children` and `torch_names` of generated classes, Sequential/ModuleList/ModuleDict items, plain
attributes of runtime layers) has its `call` wrapped for the run. Keras tensors of rank > 2 may be channels-last
(a layer's `porter_layout` / `layout_out`); they are compared in the declared layout, or in whichever layout
fits best where the layer works in "any" layout.

The first diverging submodule is the first call, in completion order, whose output differs while its input
does not: the change happened inside it. Inside it, the last child whose output still matched and the first
child whose input no longer did bracket the source lines responsible.
"""

import inspect
import os
import re
from pathlib import Path

import numpy as np
import tensorflow as tf
import torch

from porter.verify.compare import explained_by_round_off, in_float64, relative_error
from porter.verify.harness import _flatten_outputs


class Capture:
    """One call of one submodule: first tensor input and tensor outputs, as numpy."""

    __slots__ = ("name", "call", "input", "outputs", "layout_in", "layout_out")

    def __init__(self, name, call, input, outputs, layout_in="source", layout_out="source"):
        self.name, self.call, self.input, self.outputs = name, call, input, outputs
        self.layout_in, self.layout_out = layout_in, layout_out


class Step:
    """A torch capture compared with its Keras counterpart: errors of the input and of the outputs."""

    __slots__ = ("name", "call", "type_name", "in_error", "out_error", "out_abs", "tolerance", "round_off")

    def __init__(self, name, call, type_name, in_error, out_error, out_abs, tolerance):
        self.name, self.call, self.type_name = name, call, type_name
        self.in_error, self.out_error, self.out_abs, self.tolerance = in_error, out_error, out_abs, tolerance
        self.round_off = False  # beyond tolerance, but as precise as torch's own float32 (compare_submodules)

    @property
    def input_diverged(self):
        return self.in_error is not None and not self.in_error <= self.tolerance

    @property
    def output_diverged(self):
        return not self.out_error <= self.tolerance and not self.round_off


def _first_tensor(values):
    for value in values:
        if isinstance(value, (torch.Tensor, tf.Tensor, tf.Variable, np.ndarray)) or (
                hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "numpy")):
            return value
    return None


def _to_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()  # a copy: in-place ops (ReLU(inplace=True)) run after the hook
    array = np.asarray(value)
    return array.astype(np.float32) if array.dtype.kind == "V" or str(array.dtype) == "bfloat16" else array


def torch_capture(model, inputs, training=False):
    """Run the torch model on numpy `inputs` with hooks on every named module; captures in completion order.

    Inputs are copied by a pre-hook, before the module runs (an in-place module overwrites its input).

    In inference torch's fast path hands a TransformerEncoder's layers nested tensors (a padding mask drops the
    padded positions), which no hook can read, and skips their submodules. The reference output is the fast
    path's, so its readable calls are kept; every other call comes from a second run without the fast path,
    whose layers compute what the port's layers compute."""
    captures, nested = _capture_run(model, inputs, training)
    if not nested:
        return captures
    fast = {(c.name, c.call): c for c in captures if (c.name, c.call) not in nested}
    previous = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        slow, _ = _capture_run(model, inputs, training)
    finally:
        torch.backends.mha.set_fastpath_enabled(previous)
    return [fast.get((c.name, c.call), c) for c in slow]


class _NestedTensor(Exception):
    """A hook met a nested tensor (torch's Transformer fast path)."""


def _readable(value):
    """numpy of a captured value (None for non-tensors); _NestedTensor for a nested tensor."""
    if isinstance(value, torch.Tensor) and value.is_nested:
        raise _NestedTensor
    return _to_numpy_or_none(value)


def _capture_run(model, inputs, training):
    """(captures in completion order, {(name, call)} of calls that saw nested tensors)."""
    captures, counts, pending, handles, nested = [], {}, {}, [], set()

    def pre_hook_for(name):
        def pre_hook(module, args):
            first = _first_tensor(args)
            try:
                pending.setdefault(name, []).append(None if first is None else _readable(first))
            except _NestedTensor:
                pending[name].append(_NestedTensor)
        return pre_hook

    def hook_for(name):
        def hook(module, args, output):
            stack = pending.get(name) or [None]
            first = stack.pop()
            call = counts.get(name, 0)
            counts[name] = call + 1
            try:
                outputs = _flatten_outputs(output, _readable)
            except _NestedTensor:
                outputs, first = [], _NestedTensor
            if first is _NestedTensor:
                nested.add((name, call))
                first = None
            captures.append(Capture(name, call, first, outputs))
        return hook

    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(pre_hook_for(name)))
        handles.append(module.register_forward_hook(hook_for(name)))
    model.train(training)
    try:
        with torch.no_grad():
            model(*[torch.from_numpy(np.array(x)) for x in inputs])
    finally:
        model.train(False)
        for handle in handles:
            handle.remove()
    return captures, nested


def _to_numpy_or_none(value):
    return _to_numpy(value) if hasattr(value, "shape") else None


def keras_layer_at(model, name):
    """The Keras layer standing for torch module `name` (dotted path), or None when the port has no such layer."""
    layer = model
    for part in name.split(".") if name else []:
        layer = _keras_child(layer, part)
        if layer is None:
            return None
    return layer


def _keras_child(layer, part):
    children = layer.__dict__.get("_torch_children")
    if children is not None:
        renames = getattr(layer, "torch_names", {}) or {}
        for attribute, child in children.items():
            if renames.get(attribute, attribute) == part:
                return child
    names, items = getattr(layer, "names", None), getattr(layer, "items", None)
    if isinstance(names, list) and isinstance(items, list) and part in names:  # Sequential
        return items[names.index(part)]
    keys = getattr(layer, "keys_", None)
    if isinstance(keys, list) and part in keys:  # ModuleDict
        return layer.items_[keys.index(part)]
    if isinstance(items, list) and part.isdigit() and int(part) < len(items):  # ModuleList
        return items[int(part)]
    if isinstance(layer, (list, tuple)) and part.isdigit() and int(part) < len(layer):
        return layer[int(part)]
    value = getattr(layer, part, None) if part.isidentifier() else None
    if value is None and part.isdigit() and isinstance(layer, (list, tuple)):
        return None
    return value if _is_layer(value) or isinstance(value, (list, tuple)) else None


def _is_layer(value):
    return hasattr(value, "call") and hasattr(value, "trainable_variables")


def _layout(layer, attribute):
    value = getattr(layer, attribute, None)
    if isinstance(value, str) and value.startswith("permuted:"):
        return value  # (torch's dims stored in another order: attention heads, stacked paths returned held so)
    return value if value in ("source", "channels_last", "any") else None


def keras_capture(model, names, inputs, training=False):
    """Run the Keras model on numpy `inputs`, capturing the layers standing for torch modules `names`."""
    captures, counts, wrapped = {}, {}, []
    for name in names:
        layer = keras_layer_at(model, name) if name else model
        if layer is None or not _is_layer(layer) or any(layer is other for other, _ in wrapped):
            continue
        original = layer.call
        layout_in = _layout(layer, "porter_layout") or "source"
        layout_out = _layout(layer, "layout_out") or layout_in

        def wrapper(*args, _name=name, _original=original, _in=layout_in, _out=layout_out, **kwargs):
            result = _original(*args, **kwargs)
            first = _first_tensor(args)
            call = counts.get(_name, 0)
            counts[_name] = call + 1
            captures.setdefault(_name, []).append(Capture(
                _name, call, None if first is None else _to_numpy(first),
                _flatten_outputs(result, _to_numpy_or_none), _in, _out))
            return result

        layer.call = wrapper
        wrapped.append((layer, name))
    try:
        model(*[tf.constant(x) for x in inputs], training=training)
    finally:
        for layer, _ in wrapped:
            try:
                del layer.call
            except AttributeError:
                pass
    return captures


def aligned_error(expected, actual, layout):
    """(relative error, abs error) of a Keras tensor against torch's, in the layout it is declared to be in.

    "channels_last" tensors of rank > 2 are moved back to channels-first; "any" (and a declared layout that does
    not fit torch's shape) takes whichever of the two fits best; "permuted:0,3,4,1,2" (a block returning its result
    before a permute its callers fold) is put back into torch's order. A shape that fits in no layout is infinite.
    """
    if expected is None or actual is None:
        return None, None
    expected, actual = np.asarray(expected), np.asarray(actual)
    candidates = [actual]
    order = _stored_dims(layout)
    if order is not None and len(order) == actual.ndim:  # the axes hold torch's dims in `order`
        candidates = [np.transpose(actual, [order.index(d) for d in range(len(order))]), actual]
        layout = "source"
    elif actual.ndim > 2:
        moved = np.moveaxis(actual, -1, 1)
        candidates = [moved, actual] if layout == "channels_last" else [actual, moved]
    best = None
    for candidate in candidates:
        if candidate.shape != expected.shape:
            continue
        if expected.dtype.kind not in "fc":
            error = 0.0 if np.array_equal(expected, candidate) else np.inf
            result = (error, error)
        elif not np.array_equal(np.isnan(expected), np.isnan(candidate.astype(np.float64))):
            result = (np.inf, np.inf)
        else:
            finite = np.isfinite(expected) & np.isfinite(candidate.astype(np.float64))
            diff = np.abs(expected[finite].astype(np.float64) - candidate[finite].astype(np.float64))
            result = (relative_error(expected, candidate), float(diff.max()) if diff.size else 0.0)
        if layout in ("source", "channels_last") and candidate is candidates[0] and result[0] == 0.0:
            return result
        if best is None or result[0] < best[0]:
            best = result
    return best if best is not None else (np.inf, np.inf)


def _stored_dims(layout):
    """The torch dims a layout "permuted:0,3,4,1,2" stores in order, None for any other layout."""
    if not isinstance(layout, str) or not layout.startswith("permuted:"):
        return None
    return [int(d) for d in layout.split(":", 1)[1].split(",")]


def float64_capture(float64_model, inputs, training=False):
    """{(name, call): outputs} of the source model in float64 (`float64_model()` gives it) on `inputs`, or None
    where it does not run so."""
    try:
        captures = torch_capture(float64_model(), in_float64(inputs), training)
    except Exception:  # noqa: BLE001 - a source that does not run in float64 is judged in float32 alone
        return None
    return {(c.name, c.call): c.outputs for c in captures}


def _as_precise_as_torch(torch_outputs, exact_outputs, port_outputs, layout, tolerance):
    """Whether the port's outputs of a call are as precise as torch's own float32 ones against torch in float64
    (compare.py `explained_by_round_off`, as checks.py judges a model's output): an attention's softmax over large
    logits magnifies the round-off of its input in either framework."""
    exact = [o for o in exact_outputs if o is not None]
    if len(exact) != len(torch_outputs) or len(exact) != len(port_outputs):
        return False
    for want, truth, got in zip(torch_outputs, exact, port_outputs):
        truth = np.asarray(truth, np.float64)
        if np.shape(truth) != np.shape(want) or truth.dtype.kind != "f" or not np.isfinite(truth).all():
            return False
        port_error = aligned_error(truth, np.asarray(got, np.float64), layout)[1]
        torch_error = float(np.abs(np.asarray(want, np.float64) - truth).max(initial=0.0))
        if not explained_by_round_off(port_error, torch_error, float(np.abs(truth).max(initial=0.0)), tolerance):
            return False
    return True


def compare_submodules(torch_model, keras_model, inputs, tolerance=1e-4, training=False, exact=None):
    """Steps (torch completion order) for every torch module call that has a captured Keras counterpart. `exact()`
    (float64_capture's, asked for once, where a call's output alone diverges): such a call as precise as torch's own
    float32 is round-off."""
    modules = dict(torch_model.named_modules())
    truths, asked = None, False
    torch_side = torch_capture(torch_model, inputs, training)
    keras_side = keras_capture(keras_model, list(modules), inputs, training)
    steps = []
    for capture in torch_side:
        calls = keras_side.get(capture.name, [])
        if capture.call >= len(calls):
            continue
        other = calls[capture.call]
        in_error = aligned_error(capture.input, other.input, other.layout_in)[0] \
            if capture.input is not None and capture.input.dtype.kind == "f" else None
        out_error, out_abs = 0.0, 0.0
        expected = [o for o in capture.outputs if o is not None]
        actual = [o for o in other.outputs if o is not None]
        if len(expected) != len(actual):
            out_error = out_abs = np.inf
        for want, got in zip(expected, actual):
            layout = other.layout_out if other.layout_out != "any" else other.layout_in
            rel, abs_ = aligned_error(want, got, layout)
            out_error, out_abs = max(out_error, rel), max(out_abs, abs_)
        step = Step(capture.name, capture.call, type(modules[capture.name]).__name__, in_error, out_error, out_abs,
                    tolerance)
        if exact is not None and step.output_diverged and not step.input_diverged:
            truths = truths if asked else exact()  # (the float64 run, once, only where a call diverges)
            asked = True
            truth = truths.get((capture.name, capture.call)) if truths is not None else None
            step.round_off = truth is not None and _as_precise_as_torch(expected, truth, actual, layout, tolerance)
        steps.append(step)
    return steps


class Localisation:
    """The first diverging submodule on one input and what surrounds it."""

    def __init__(self, step, where, defined, last_good=None, first_bad=None, forward_at=None):
        self.step, self.where, self.defined = step, where, defined
        self.last_good, self.first_bad, self.forward_at = last_good, first_bad, forward_at

    @property
    def name(self):
        return self.step.name

    def diverged_at(self, root_class):
        """The structured summary reports keep: submodule, "file.py:line" (no directories), errors around it."""
        where = self.where or self.defined if self.step.name else self.forward_at or self.where
        return {"submodule": self.step.name or f"{root_class}.forward", "source": short_location(where),
                "error_before": self.step.in_error, "error_after": self.step.out_error}

    def describe(self, root_class):
        step = self.step
        call = f", call {step.call + 1}" if step.call else ""
        forward = f"{step.type_name}.forward" + (f" ({self.forward_at})" if self.forward_at else "")
        if step.name:
            lines = [f"first diverging submodule: {step.name} ({step.type_name}{call})"
                     + (f" at {self.where}" if self.where else "")]
            if self.defined:
                lines.append(f"  {step.type_name} is defined at {self.defined}")
        else:
            lines = [f"first diverging submodule: none; the difference arises in {root_class} itself, in {forward}"]
        before = "n/a (no tensor input)" if step.in_error is None else f"{step.in_error:.3g}"
        lines.append(f"  error before it (its input): {before}; after it (its output): {step.out_error:.3g} "
                     f"relative, {step.out_abs:.3g} abs (tolerance {step.tolerance:g})")
        if self.first_bad is not None:
            good = f"the output of {self.last_good.name} still matches, " if self.last_good is not None else ""
            lines.append(f"  inside it, {good}the input of {self.first_bad.name} already differs "
                         f"({self.first_bad.in_error:.3g}): look at {forward} between them")
        elif self.last_good is not None:
            lines.append(f"  inside it, every submodule matches up to {self.last_good.name}: look at {forward} "
                         f"after it")
        elif self.forward_at:
            lines.append(f"  no submodule inside it diverges first: look at {forward}")
        return "\n".join(lines)


def localise(pair, inputs, tolerance=1e-4, training=False):
    """Localisation of the first divergence of `pair` on `inputs`, or None when every captured output matches."""
    try:
        steps = compare_submodules(pair.torch_model, pair.keras_model, inputs, tolerance, training)
    finally:
        if training:
            pair.reset()
    return locate(steps, pair)


def locate(steps, pair):
    culprit = next((s for s in steps if s.output_diverged and not s.input_diverged), None)
    if culprit is None:
        culprit = next((s for s in steps if s.output_diverged), None)
    if culprit is None:
        return None
    prefix = culprit.name + "." if culprit.name else ""
    inside = [s for s in steps[:steps.index(culprit)] if s.name.startswith(prefix) and s.name != culprit.name]
    first_bad = next((s for s in inside if s.input_diverged or s.output_diverged), None)
    last_good = None
    for step in inside:
        if step is first_bad:
            break
        if not step.output_diverged:
            last_good = step
    if first_bad is not None and not first_bad.input_diverged:
        first_bad = None  # a child with a clean input diverged: it would have been the culprit; keep it simple
    where, defined = module_origin(pair, culprit.name)
    module = dict(pair.torch_model.named_modules()).get(culprit.name)
    forward_at = _forward_line(type(module), Path(pair.source_path)) if module is not None else None
    return Localisation(culprit, where, defined, last_good, first_bad, forward_at)


def display_path(path):
    """`path` relative to the working directory when it lies below it, else as it is."""
    path = Path(path)
    try:
        relative = os.path.relpath(path.resolve(), Path.cwd())
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def module_origin(pair, name):
    """(where, defined) for torch module `name`: where = "file:line `self.x = ...` in Class" of the attribute that
    holds it (its nearest ancestor's, for items of containers), plus the line that constructs it when that is
    elsewhere (a helper, a list comprehension) and unique in the source; defined = "file:line" of its class when
    the source defines it."""
    modules = dict(pair.torch_model.named_modules())
    source = Path(pair.source_path)
    module = modules.get(name)
    defined = _class_line(type(module), source) if module is not None else None
    parts = name.split(".") if name else []
    for end in range(len(parts), 0, -1):
        parent = modules.get(".".join(parts[:end - 1]))
        found = _assignment(type(parent), parts[end - 1], source) if parent is not None else None
        if found is not None:
            type_name = type(module).__name__
            if f"{type_name}(" not in found:
                built = _constructor_line(type_name, source)
                if built is not None:
                    found += f"; built by {built}"
            return found, defined
    return (defined, None) if not parts else (None, defined)


def short_location(text):
    """'dir/model.py:29 `code` ...' -> 'model.py:29' (None when `text` holds no location)."""
    match = re.match(r"(\S+):(\d+)", text or "")
    return f"{Path(match.group(1)).name}:{match.group(2)}" if match else None


def _constructor_line(type_name, source):
    """'file:line `code`' of the only line of the source that calls `type_name(`, else None."""
    try:
        lines = Path(source).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(rf"(?<![\w]){re.escape(type_name)}\(")
    hits = [(number, line) for number, line in enumerate(lines, 1)
            if pattern.search(line.split("#")[0]) and not line.lstrip().startswith(("class ", "def "))]
    if len(hits) != 1:
        return None
    number, line = hits[0]
    return f"{display_path(source)}:{number} `{line.strip()}`"


def _defined_in(cls, source):
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return False
    try:
        return path is not None and Path(path).resolve() == source.resolve()
    except OSError:
        return False


def _class_line(cls, source):
    if not _defined_in(cls, source):
        return None
    try:
        _, start = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return None
    return f"{display_path(source)}:{start}"


def _forward_line(cls, source):
    """'file:line' of `cls.forward` when the source defines it."""
    forward = getattr(cls, "forward", None)
    if forward is None or not _defined_in(forward, source):
        return None
    try:
        _, start = inspect.getsourcelines(forward)
    except (OSError, TypeError):
        return None
    return f"{display_path(source)}:{start}"


def _assignment(cls, attribute, source):
    """'file:line `code` (in Class)' where a method of `cls` assigns `self.<attribute>`, searching base classes."""
    for klass in cls.__mro__:
        if not _defined_in(klass, source):
            continue
        try:
            lines, start = inspect.getsourcelines(klass)
        except (OSError, TypeError):
            continue
        pattern = re.compile(rf"self\.{re.escape(attribute)}\s*(:[^=]+)?=(?!=)|add_module\(\s*['\"]"
                             rf"{re.escape(attribute)}['\"]|register_module\(\s*['\"]{re.escape(attribute)}['\"]")
        for offset, line in enumerate(lines):
            if pattern.search(line):
                return f"{display_path(source)}:{start + offset} `{line.strip()}` in {klass.__name__}"
    return None


def failure_report(equivalence, failure, reproduce, tolerance=None):
    """The text of a failed check: what differs, the case and its inputs, the first diverging submodule, and a
    command that reproduces it."""
    pair = equivalence.pair
    case = failure.case
    tolerance = tolerance if tolerance is not None else (5e-2 if equivalence.bf16 else 1e-4)
    lines = [f"MISMATCH in {pair.class_name}: {failure.stage}: {failure.message}"]
    try:
        inputs = equivalence.inputs(case)
    except ValueError as error:
        return "\n".join(lines + [f"  {error}"])
    shapes = ", ".join(f"{tuple(x.shape)} {x.dtype}" for x in inputs)
    lines.append(f"  case {case}: inputs {shapes}")
    try:
        localisation = localise(pair, inputs, tolerance, training=failure.stage == "train")
    except Exception as error:  # the report must still say what failed and how to reproduce it
        localisation = None
        lines.append(f"  (submodule capture failed: {type(error).__name__}: {error})")
    failure.localisation = localisation
    if localisation is not None:
        lines.extend("  " + line for line in localisation.describe(pair.class_name).splitlines())
    elif failure.suspects:
        modules = dict(pair.torch_model.named_modules())
        order = {name: index for index, name in enumerate(modules)}
        # gradients flow backwards: the last module (in definition order) with wrong gradients is where they start
        suspect = max(failure.suspects, key=lambda name: order.get(name, -1))
        where, _ = module_origin(pair, suspect)
        failure.localisation = Localisation(Step(suspect, 0, type(modules.get(suspect)).__name__, None, np.nan, np.nan,
                                                 tolerance), where, None)
        lines.append(f"  every submodule's forward output matches on this input; the {failure.stage} difference "
                     f"starts at {suspect or pair.class_name} ({type(modules.get(suspect)).__name__})"
                     + (f" at {where}" if where else ""))
    else:
        lines.append("  every submodule's forward output matches on this input")
    lines.append(f"  reproduce: {reproduce}")
    return "\n".join(lines)
