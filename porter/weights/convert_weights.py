"""`porter convert --weights`: load a torch state dict into the generated Keras model and save `.weights.h5`.

This is the only path of `convert` that imports torch (to read a `.pt` with `weights_only=True`) and TensorFlow
(to build the generated model). It imports the *generated* module, written to a temporary directory, never the
user's source; building the model runs that module's translated constructors (and whatever class attributes and
defaults the translation carried over). Keys or shapes that do not fit the model are a `WeightsError` naming them.
"""

import collections
import contextlib
import inspect
import os
import re
import sys
import tempfile
from pathlib import Path

from porter.errors import UsageError, WeightsError
from porter.verify.harness import attribute_path
from porter.weights.readers import read_state_dict

WEIGHTS_SUFFIX = ".weights.h5"
# Suffixes dropped from the weights file's name to name the Keras file: model.pth.tar -> model.weights.h5.
SOURCE_SUFFIXES = (".tar", ".pt", ".pth", ".bin", ".ckpt", ".safetensors", ".params", ".pkl")


LOAD_ERRORS = (ValueError, TypeError, IndexError, KeyError)  # what a state dict that does not fit raises


class WeightsNotConverted(Exception):
    """The model has stubs where the weights would go: the rest of the output is still written, with a warning."""


class LayoutUnknown(Exception):
    """The regenerated model's parameter layout cannot be had (the model does not build)."""


def shape_text(shape):
    """(3, 4, 4) -> '3x4x4'; a scalar -> 'scalar' (one line per key in the manifest's weights record)."""
    return "x".join(str(int(size)) for size in shape) or "scalar"


def layout_of(entries):
    """{torch key: Keras variable shape text} of a model's state entries (`collect_state(model)`), sorted by key."""
    return {entry.key: shape_text(entry.variable.shape) for entry in sorted(entries, key=lambda e: e.key)}


def weights_file_name(weights_path):
    """`OUT/<name>.weights.h5` for a weights file: its name without weight-file suffixes, made filename-safe."""
    name = Path(weights_path).name
    changed = True
    while changed:
        changed = False
        for suffix in SOURCE_SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "model"
    return name + WEIGHTS_SUFFIX


def weights_file(conversion, weights_path, options):
    """(file name, bytes of the Keras `.weights.h5`, parameter layout) for `weights_path` loaded into the
    conversion's main class; the layout ({torch key: Keras shape}) goes into the manifest's weights record.

    Raises WeightsError when the file cannot be read safely or does not fit the model, and WeightsNotConverted
    when the model's stubs stand where weights would be loaded (the conversion itself is still written).
    """
    state_dict = read_state_dict(weights_path)
    display = str(weights_path)
    entry = conversion.manifest["sources"][0]
    module_name = entry["module"]
    init_args = dict(conversion.manifest.get("init_args") or {})
    main_class = conversion.main_class
    has_stubs = conversion.exit_code != 0
    with tempfile.TemporaryDirectory(prefix="porter-weights-") as workdir:
        module = _import_generated(Path(workdir), module_name, conversion.files)
        try:
            model_class = attribute_path(module, conversion.manifest.get("model_factory") or main_class)
            _check_init_args(model_class, main_class, init_args)
            try:
                with fresh_layer_names():
                    model = model_class(**init_args)
            except NotImplementedError as error:
                raise WeightsNotConverted(f"cannot build {main_class} to load the weights: {error}") from None
            state_dict = fill_tied_keys(module, model, state_dict)
            try:
                module.load_state_dict(model, state_dict)
            except LOAD_ERRORS as error:
                if not has_stubs:
                    raise WeightsError(_one_line(error), display, hint=_fit_hint(init_args)) from None
                skipped = load_around_stubs(module, model, state_dict, error)
                conversion.warnings.append(
                    f"{display}: {len(skipped)} weights belong to code porter stubbed and were not converted: "
                    f"{_one_line(', '.join(skipped), limit=300)}")
            # Every variable exists after __init__ (the strict load above found each one); Keras only wants to
            # hear that the model is built before it saves.
            model.built = True
            target = Path(workdir) / weights_file_name(weights_path)
            model.save_weights(str(target))
            return target.name, target.read_bytes(), layout_of(module.collect_state(model))
        finally:
            sys.modules.pop(module.__name__, None)


def model_layout(module_name, files, main_class, init_args):
    """{torch key: Keras shape} of `main_class` built from the generated files (for `porter diff`).

    Raises LayoutUnknown when the model does not build (stubs in its constructor, arguments that do not fit).
    """
    with tempfile.TemporaryDirectory(prefix="porter-layout-") as workdir:
        names = set(sys.modules)
        try:
            module = _import_generated(Path(workdir), module_name, files)
            with fresh_layer_names():
                model = attribute_path(module, main_class)(**init_args)
            return layout_of(module.collect_state(model))
        except Exception as error:  # noqa: BLE001 - generated code that does not build: say so, do not fail
            raise LayoutUnknown(f"the regenerated {main_class} does not build: {_one_line(error, 200)}") from None
        finally:
            for name in set(sys.modules) - names:
                if name.startswith("porter_generated_"):
                    sys.modules.pop(name, None)


def load_around_stubs(module, model, state_dict, error):
    """A model with stubs: load every weight the Keras model has when only keys of stubbed layers are left over.

    Returns the keys left over; raises WeightsNotConverted when weights are missing or mis-shaped (then the
    misfit is not the stubs' doing, or cannot be told apart from it).
    """
    collect_state = getattr(module, "collect_state", None)
    reason = f"{_one_line(error)} (the model has stubs, see PORTING.md)"
    if collect_state is None:
        raise WeightsNotConverted(reason)
    expected = {entry.key for entry in collect_state(model)}
    if not expected <= set(state_dict):
        raise WeightsNotConverted(reason)
    try:
        module.load_state_dict(model, {key: state_dict[key] for key in expected})
    except LOAD_ERRORS as second:
        raise WeightsNotConverted(f"{_one_line(second)} (the model has stubs, see PORTING.md)") from None
    return sorted(key for key in state_dict if key not in expected and not key.endswith("num_batches_tracked"))


def fill_tied_keys(module, model, state_dict):
    """Tied weights saved once (safetensors' `save_model` drops the duplicate): give every key of the variable.

    Tied torch parameters are one tensor under several keys, so the stored array serves for each of them.
    """
    collect_state = getattr(module, "collect_state", None)
    if collect_state is None:
        return state_dict
    keys_of = {}
    for entry in collect_state(model):
        keys_of.setdefault(id(entry.variable), []).append(entry.key)
    filled = dict(state_dict)
    for keys in keys_of.values():
        present = [key for key in keys if key in state_dict]
        for key in keys:
            if present and key not in filled:
                filled[key] = state_dict[present[0]]
    return filled


@contextlib.contextmanager
def fresh_layer_names():
    """Keras numbers automatic layer names process-wide (`linear_3`) and stores them in the .weights.h5: count
    from zero for the model built here, so the same input gives the same bytes, then restore the caller's count."""
    try:
        from keras.src.backend.common import global_state
    except ImportError:  # a Keras without this module: names may then depend on earlier models
        yield
        return
    saved = global_state.get_global_attribute("object_name_uids")
    global_state.set_global_attribute("object_name_uids", collections.defaultdict(int))
    try:
        yield
    finally:
        global_state.set_global_attribute("object_name_uids", saved)


# What the generated module's import of Keras and TensorFlow starts with, where the caller has not set it
_START_UP_ENVIRONMENT = {
    "TF_CPP_MIN_LOG_LEVEL": "3",  # TensorFlow's C++ start-up chatter
    "TF_ENABLE_ONEDNN_OPTS": "0",  # its start-up notice; nothing is computed here
    "KERAS_BACKEND": "tensorflow",  # the generated module is written against TensorFlow
}


@contextlib.contextmanager
def _start_up_environment():
    """_START_UP_ENVIRONMENT's variables the caller has not set, set only while the block runs: the caller's
    environment is as it was afterwards (a process that goes on to run TensorFlow itself gets its own settings)."""
    added = [name for name in _START_UP_ENVIRONMENT if name not in os.environ]
    os.environ.update({name: _START_UP_ENVIRONMENT[name] for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _import_generated(workdir, module_name, files):
    """Import the generated model module, written to `workdir` with the conversion's other Python files (the
    runtime module it loads from beside it, the ported siblings a package's module loads by relative path), under a
    private name (never the user's source)."""
    from porter.verify.harness import import_path

    for name, text in files.items():
        if name.endswith(".py") and isinstance(text, str):
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text, encoding="utf-8")
    path = workdir / module_name
    with _start_up_environment():  # the first import of Keras and TensorFlow in this process happens here
        return import_path(path, f"porter_generated_{Path(module_name).stem}_{os.getpid()}_{id(workdir)}")


def _check_init_args(model_class, main_class, init_args):
    """--init-args must bind to the constructor (a user error), before building runs any generated code."""
    try:
        signature = inspect.signature(model_class.__init__)
        signature.bind(None, **init_args)
    except TypeError as error:
        raise UsageError(f"--init-args do not fit {main_class}{_public_signature(model_class)}: {error}",
                         hint="pass the constructor arguments the weights were trained with") from None
    except ValueError:
        return


def _public_signature(model_class):
    try:
        parameters = list(inspect.signature(model_class.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return "(...)"
    shown = [p for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]
    return "(" + ", ".join(str(p) for p in shown) + ")"


def _one_line(error, limit=600):
    """The error on one line, cut at a list separator when it names more keys than a reader takes in."""
    text = " ".join(str(error).split())
    if len(text) <= limit:
        return text
    cut = max(text.rfind("; ", 0, limit), text.rfind(", ", 0, limit))
    return text[: cut if cut > 0 else limit] + " ... (shortened)"


def _fit_hint(init_args):
    if init_args:
        return "check that --init-args match the model the weights were trained with"
    return "pass the constructor arguments the weights were trained with as --init-args JSON"
