"""The manifest's record of OUT/<name>.weights.h5: the model code and parameter layout the weights were written for.

`convert --weights` writes the record (`"weights"` in porter-manifest.json): the file's name, where it was converted
from, a fingerprint of the model code (model and runtime modules, main class, constructor arguments) and the
parameter layout (torch key -> Keras variable shape). With it:

- `convert --force` without `--weights` keeps the weights file and its record (it is the user's result, not
  something a re-conversion can rebuild) and warns when the model code changed since the weights were written;
- `porter diff` compares what `convert --force` would write, weights record included, and says whether the file
  still fits the regenerated model (the layout check builds the model, so it imports TensorFlow, only then).

Everything here but `regenerated_layout` (which imports porter.weights.convert_weights) is static: no torch or
TensorFlow import.
"""

import hashlib
import json
import os
from pathlib import Path, PurePosixPath

from porter.codegen.runtime_bundle import runtime_file_name
from porter.output import MANIFEST, listed_files, manifest_text, safe_relative

RECORD = "weights"
SHOWN_CHANGES = 5  # layout differences named in one message


def model_fingerprint(files, module, main_class, init_args):
    """What the weights depend on: the generated model module and the runtime module beside it (`files` holds
    their texts), the class built and its constructor arguments."""
    texts = [files.get(name, "") for name in (module, runtime_file_name(module))]
    payload = json.dumps([texts, main_class, init_args or {}], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def make_record(name, weights_path, out, conversion, layout):
    """The manifest record for `OUT/name` converted from `weights_path` into the conversion's main class."""
    module = conversion.manifest["sources"][0]["module"]
    try:
        origin = os.path.relpath(Path(weights_path).resolve(), Path(out).resolve())
    except ValueError:  # another drive
        origin = Path(weights_path).name
    return {"file": name, "converted_from": PurePosixPath(Path(origin)).as_posix(),
            "model_fingerprint": model_fingerprint(conversion.files, module, conversion.main_class,
                                                   conversion.manifest.get("init_args")),
            "layout": layout}


def with_weights(files, name, record):
    """`files` with porter-manifest.json listing the weights file `name` and holding its record (a new dict)."""
    files = dict(files)
    manifest = json.loads(files[MANIFEST])
    manifest["files"] = listed_files([*manifest["files"], name])
    if record is not None:
        manifest[RECORD] = record
    else:
        manifest.pop(RECORD, None)
    files[MANIFEST] = manifest_text(manifest)
    return files


def previous_weights(out):
    """(file name, record or None) of the weights file OUT's manifest lists and OUT still holds; None without one."""
    try:
        manifest = json.loads((Path(out) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    record = manifest.get(RECORD) if isinstance(manifest.get(RECORD), dict) else None
    names = [record.get("file")] if record else []
    names += [f for f in manifest.get("files", []) if isinstance(f, str) and f.endswith(".weights.h5")]
    for name in names:
        if safe_relative(name) and (Path(out) / name).is_file():
            return name, (record if record and record.get("file") == name else None)
    return None


def fingerprint_of(files):
    """The model fingerprint of a conversion's files (module text, main class, init args from its manifest)."""
    manifest = json.loads(files[MANIFEST])
    module = manifest["sources"][0]["module"]
    return model_fingerprint(files, module, manifest.get("main_class"), manifest.get("init_args"))


def keep_previous_weights(out, files):
    """`convert --force` without `--weights`: keep OUT's weights file and its record.

    Returns (files with the manifest listing it, path of the kept file or None, warning or None). The warning says
    when the model code changed since the weights were written, or when porter cannot tell (no record).
    """
    previous = previous_weights(out)
    if previous is None:
        return files, None, None
    name, record = previous
    path = Path(out) / name
    files = with_weights(files, name, record)
    if record is None:
        return files, path, (f"kept {path} from the previous conversion; porter cannot tell whether it still fits "
                             f"the model (it predates porter's weights record): re-convert it with --weights FILE")
    if record.get("model_fingerprint") == fingerprint_of(files):
        return files, path, None
    return files, path, (f"kept {path} from the previous conversion{_from(out, record)}, but the model code "
                         f"changed since, so it may no longer fit: `porter diff` checks it; --weights FILE "
                         f"converts weights for the new code")


def weights_misfit(out, files, source_display):
    """`porter diff`: (fits, message) for OUT's weights file against the regenerated `files`.

    fits: True (or no weights file; message None), False (message says what no longer fits), None (porter cannot
    tell; message says why). Unchanged model code fits without further ado; changed code is checked by building the
    regenerated model (TensorFlow) and comparing its parameter layout with the recorded one.
    """
    previous = previous_weights(out)
    if previous is None:
        return True, None
    name, record = previous
    path = Path(out) / name
    fix = (f"it was written for the previous model code{_from(out, record)}; convert weights that fit with "
           f"porter convert {source_display} -o {out} --force --weights FILE")
    if record is None:
        return None, (f"porter cannot tell whether {path} fits the model: its manifest holds no weights record "
                      f"(an output of an older porter); {fix}")
    if record.get("model_fingerprint") == fingerprint_of(files):
        return True, None
    layout = regenerated_layout(files)
    if isinstance(layout, str):
        return None, f"{path} may no longer fit: the model code changed since it was written ({layout}); {fix}"
    changes = layout_changes(record.get("layout") or {}, layout)
    if not changes:
        return True, None
    shown = "; ".join(changes[:SHOWN_CHANGES]) + (f"; and {len(changes) - SHOWN_CHANGES} more"
                                                   if len(changes) > SHOWN_CHANGES else "")
    return False, f"{path} no longer fits the regenerated model ({shown}); {fix}"


def _from(out, record):
    """' (converted from PATH)', PATH as seen from here (the record holds it relative to OUT), or ''."""
    origin = (record or {}).get("converted_from")
    return f" (converted from {os.path.normpath(Path(out) / origin)})" if origin else ""


def layout_changes(recorded, current):
    """Differences between two layouts, one phrase each, in key order."""
    changes = []
    for key in sorted(set(recorded) | set(current)):
        old, new = recorded.get(key), current.get(key)
        if old == new:
            continue
        if old is None:
            changes.append(f"{key} {new} is new")
        elif new is None:
            changes.append(f"{key} is gone")
        else:
            changes.append(f"{key} {old} -> {new}")
    return changes


def regenerated_layout(files):
    """The parameter layout of the regenerated main class, built with the manifest's constructor arguments; a
    string saying why when it cannot be had here (no TensorFlow, or the model does not build)."""
    try:
        from porter.weights.convert_weights import LayoutUnknown, model_layout
    except ImportError as error:  # a static-only install
        return f"{error.name or 'TensorFlow'} is not installed to check it"
    manifest = json.loads(files[MANIFEST])
    module = manifest["sources"][0]["module"]
    try:
        return model_layout(module, files, manifest.get("model_factory") or manifest.get("main_class"),
                            manifest.get("init_args") or {})
    except LayoutUnknown as reason:
        return str(reason)


def load_hint(out, files, name):
    """How to load OUT/name in Keras (the convert summary): build the main class, then `load_weights`."""
    manifest = json.loads(files[MANIFEST])
    module = Path(manifest["sources"][0]["module"]).stem
    main = manifest.get("model_factory") or manifest.get("main_class")
    arguments = ", ".join(f"{key}={value!r}" for key, value in (manifest.get("init_args") or {}).items())
    return (f"load the weights in Keras with `from {module} import {main.split('.')[0]}; model = {main}({arguments}); "
            f"model.load_weights({str(Path(out) / name)!r})` (with {out} on sys.path)")


CHECKPOINTS = ("tpu_run", "checkpoints")  # train_tpu.py's default checkpoint directory, relative to OUT


def stale_checkpoints(out, files):
    """`convert --force`: a warning (list of one) when OUT holds train_tpu.py checkpoints of other model code.

    train_tpu.py resumes from its default checkpoint directory; after the model code changes, those checkpoints may
    no longer fit. They are the user's training state, so porter leaves them where they are and says so.
    """
    directory = Path(out).joinpath(*CHECKPOINTS)
    if not (directory / "checkpoint").is_file():
        return []
    previous = previous_fingerprint(out)
    if previous is None or previous == fingerprint_of(files):
        return []
    return [(f"{directory} holds checkpoints of the previous model code; train_tpu.py resumes from them and stops "
             f"if they no longer fit: move them away, or pass train_tpu.py another --output-dir")]


def previous_fingerprint(out):
    """The model fingerprint of what OUT holds now (its module and manifest), or None when unreadable."""
    try:
        manifest = json.loads((Path(out) / MANIFEST).read_text(encoding="utf-8"))
        module = manifest["sources"][0]["module"]
        names = [name for name in (module, runtime_file_name(module)) if safe_relative(name)]
        texts = {name: (Path(out) / name).read_text(encoding="utf-8") for name in names
                 if (Path(out) / name).is_file()}
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    if module not in texts:
        return None
    return model_fingerprint(texts, module, manifest.get("main_class"), manifest.get("init_args"))


def replaced_weights(out, name):
    """`convert --force --weights`: a warning (list of one) when OUT's previous weights file has another name and
    goes (the new output lists only the new one)."""
    previous = previous_weights(out)
    if previous is None or previous[0] == name:
        return []
    return [(f"removed {Path(out) / previous[0]}, the weights of the previous conversion: {Path(out) / name} "
             f"replaces it")]


def weights_step(conversion, files, out, weights, force, options, warnings):
    """The weights part of `porter convert`: convert `weights` (a torch state dict) into OUT/<name>.weights.h5 with
    its manifest record, or, with `force` and no new weights, keep OUT's previous weights file.

    Appends to `warnings`. Returns (files, the kept file's path or None, the name of a weights file that fits the
    model, for the loading advice, or None).
    """
    if weights is not None:
        from porter.weights.convert_weights import WeightsNotConverted, weights_file

        try:
            name, payload, layout = weights_file(conversion, weights, options)
        except WeightsNotConverted as reason:
            warnings.append(f"{weights}: no .weights.h5 written: {reason}")
        else:
            warnings += replaced_weights(out, name)
            files = with_weights({**files, name: payload}, name, make_record(name, weights, out, conversion, layout))
            return files, None, name
    if not force:
        return files, None, None
    files, kept, warning = keep_previous_weights(out, files)  # no new weights: the previous ones are the user's
    if warning:
        warnings.append(warning)
    return files, kept, kept.name if kept is not None and warning is None else None
