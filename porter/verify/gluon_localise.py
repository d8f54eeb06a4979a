"""Find where a Gluon port first diverges from mxnet: every block's first input and outputs captured on both sides.

The mxnet side is captured by the driver (forward hooks on every block, paths as save_parameters names them, in the
order calls complete); the Keras side by localise.keras_capture, which finds the layer standing for each block by
the same attribute path. The first block whose output differs while its input does not is where the difference
arises; the source lines are found by reading the Gluon file (it is never imported in porter's process).
"""

import re
from pathlib import Path

import numpy as np

from porter.verify.localise import Localisation, Step, aligned_error, display_path, keras_capture
from porter.verify.strategies import Case, input_arrays


def localise_gluon(equivalence, case, tolerance=1e-4):
    """Localisation of the first divergence on `case` (inference mode), or None when every captured output
    matches."""
    pair = equivalence.pair
    inputs = equivalence.inputs(case)
    sample = input_arrays(equivalence.specs, equivalence.variants[0], Case(2, 0.0, 0, 0))
    batch = pair.run_batch(sample, capture=inputs)
    order = batch["info"].get("capture") or []
    with np.load(batch["directory"] / "capture.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    keras_side = keras_capture(pair.keras_model, list(dict.fromkeys(name for name, *_ in order)), inputs)
    steps = []
    for index, (name, call, type_name, count) in enumerate(order):
        calls = keras_side.get(name, [])
        if call >= len(calls):
            continue
        other = calls[call]
        want_input = arrays.get(f"{index}.in")
        in_error = aligned_error(want_input, other.input, other.layout_in)[0] \
            if want_input is not None and want_input.dtype.kind == "f" else None
        expected = [arrays[f"{index}.out{k}"] for k in range(count)]
        actual = [o for o in other.outputs if o is not None]
        out_error = out_abs = 0.0 if len(expected) == len(actual) else np.inf
        for want, got in zip(expected, actual):
            layout = other.layout_out if other.layout_out != "any" else other.layout_in
            rel, abs_ = aligned_error(want, got, layout)
            out_error, out_abs = max(out_error, rel), max(out_abs, abs_)
        steps.append(Step(name, call, type_name, in_error, out_error, out_abs, tolerance))
    return locate_gluon(steps, Path(pair.source_path))


def locate_gluon(steps, source):
    """The Localisation of the first step whose output diverges while its input does not (else the first that
    diverges), with the source lines of its attribute and its class."""
    culprit = next((s for s in steps if s.output_diverged and not s.input_diverged), None)
    culprit = culprit or next((s for s in steps if s.output_diverged), None)
    if culprit is None:
        return None
    prefix = culprit.name + "." if culprit.name else ""
    inside = [s for s in steps[:steps.index(culprit)] if s.name.startswith(prefix) and s.name != culprit.name]
    last_good = next((s for s in reversed(inside) if not s.output_diverged), None)
    try:
        text = source.read_text()
    except (OSError, UnicodeDecodeError):
        text = ""
    return Localisation(culprit, attribute_line(culprit.name, text, source), class_line(culprit.type_name, text,
                                                                                         source),
                        last_good, None, forward_line(culprit.type_name, text, source) if not culprit.name else None)


def attribute_line(name, text, source):
    """'file:line `code`' where the block's attribute (its last identifier in the path) is assigned, or None."""
    for part in reversed(name.split(".") if name else []):
        if not part.isidentifier():
            continue
        pattern = re.compile(rf"self\.{re.escape(part)}\s*=(?!=)")
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                return f"{display_path(source)}:{number} `{line.strip()}`"
    return None


def class_line(type_name, text, source):
    """'file:line' of `class type_name` in the source, or None (a Gluon layer)."""
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(rf"class\s+{re.escape(type_name)}\b", line):
            return f"{display_path(source)}:{number}"
    return None


def forward_line(type_name, text, source):
    """'file:line' of the hybrid_forward/forward of `class type_name` in the source, or None."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(rf"class\s+{re.escape(type_name)}\b", line)), None)
    if start is None:
        return None
    for number in range(start + 1, len(lines)):
        if re.match(r"\S", lines[number]):
            break
        if re.match(r"\s+def\s+(hybrid_forward|forward)\b", lines[number]):
            return f"{display_path(source)}:{number + 1}"
    return None
