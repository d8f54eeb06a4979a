"""Build the source (torch) and ported (Keras) models side by side and compare them on example inputs.

Used by porter's own fixture tests, the generated test_equivalence.py and `porter verify`. Importing the
source model executes the user's file: that is what verification means, and only these commands do it.
"""

import importlib.util
import json
import os
import sys
import weakref
from pathlib import Path

import numpy as np

from porter.verify.torch_bridge import perturb_torch_module, torch_state_numpy


def import_path(path, name=None, skip_lines=()):
    """Import a Python file by path as a fresh module. `skip_lines` ([[first, last], ...], the manifest's
    `script_lines`): top-level script code (training loops, downloads) blanked out, line numbers kept; when the
    file no longer fits them (edited since the conversion) it is imported as it is."""
    path = Path(path).resolve()
    name = name or f"porter_loaded_{path.stem}_{abs(hash(str(path))) % 10**8}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        code = _without_lines(path, skip_lines) if skip_lines else None
        if code is None:
            spec.loader.exec_module(module)
        else:
            exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _without_lines(path, ranges):
    """The code object of `path` with the lines of `ranges` blank, or None when that no longer compiles."""
    lines = path.read_text().splitlines(keepends=True)
    for first, last in ranges:
        for index in range(first - 1, min(last, len(lines))):
            lines[index] = "\n"
    try:
        return compile("".join(lines), str(path), "exec")
    except SyntaxError:
        return None


def read_manifest(out_dir):
    """OUT/porter-manifest.json as a dict (FileNotFoundError / ValueError when missing or not JSON)."""
    return json.loads((Path(out_dir) / "porter-manifest.json").read_text())


def source_path_of(out_dir, manifest, source_path=None):
    """The source file: `source_path`, else $PORTER_SOURCE, else the manifest's path relative to OUT."""
    chosen = source_path or os.environ.get("PORTER_SOURCE")
    if chosen:
        return Path(chosen)
    return Path(os.path.normpath(Path(out_dir).resolve() / manifest["sources"][0]["path"]))


class PortedPair:
    """The torch model and its Keras port, same constructor arguments, weights copied torch -> Keras.

    `precision="mixed_bfloat16"` builds the Keras model under that Keras dtype policy (variables stay float32);
    the torch reference is always float32. The main class gets the manifest's `init_args`, other classes their
    defaults.
    """

    def __init__(self, out_dir, source_path=None, class_name=None, init_args=None, seed=0, precision="float32"):
        out_dir = Path(out_dir)
        self.out_dir = out_dir
        self.manifest = read_manifest(out_dir)
        entry = self.manifest["sources"][0]
        self.framework = entry.get("framework", "torch")
        self.source_path = source_path_of(out_dir, self.manifest, source_path)
        self.class_name = class_name or self.manifest["main_class"]
        if init_args is None:
            init_args = self.manifest.get("init_args") if self.class_name == self.manifest["main_class"] else None
        self.init_args = dict(init_args or {})
        # what builds it: the class, or for the main class the factory porter chose (frontend/model_entry.py)
        self.builder = self.class_name
        if self.class_name == self.manifest["main_class"]:
            self.builder = self.manifest.get("model_factory") or self.class_name
        self.class_entry = next(c for c in entry["classes"] if c["name"] == self.class_name)
        self.precision = precision
        self.keras_module = import_path(out_dir / entry["module"])
        self.torch_module = import_path(self.source_path, skip_lines=entry.get("script_lines", ()))
        self.seed = seed
        self.build()

    def build(self):
        import torch

        torch.manual_seed(self.seed)
        # (a factory's pretrained-weights switch whose default loads weights is handed None: manifest)
        torch_arguments = self.manifest.get("model_factory_torch_arguments") or {} \
            if self.builder == self.manifest.get("model_factory") else {}
        self.torch_model = attribute_path(self.torch_module, self.builder)(**{**torch_arguments, **self.init_args})
        lazy = _has_lazy_modules(self.torch_model)
        if lazy:  # nn.LazyLinear & co. make their weights at the first call: one on example inputs, both sides
            self.run_torch(self.example_inputs(batch=1))
        perturb_torch_module(self.torch_model, self.seed)
        self.torch_model.eval()
        self.reference_state = torch_state_numpy(self.torch_model)
        self.keras_model = self.keras_port(self.precision, first_call=lazy)

    def keras_port(self, precision, first_call=False):
        """A Keras model built as the torch one (same builder and arguments) under Keras dtype policy `precision`,
        holding the reference state, in torch's layout at its boundary; `first_call`: called once on example inputs
        first (lazy layers make their weights then)."""
        import keras
        import tensorflow as tf

        previous = keras.config.dtype_policy()
        keras.config.set_dtype_policy(precision)
        try:
            model = attribute_path(self.keras_module, self.builder)(**self.init_args)
            model.channels_last_io = False  # compared with torch in torch's layout
            if first_call:
                model(*[tf.constant(i) for i in self.example_inputs(batch=1)], training=False)
        finally:
            keras.config.set_dtype_policy(previous)
        self.keras_module.load_state_dict(model, self.reference_state)
        return model

    def reset(self):
        """Both models back to the state `build` gave them (after a train-mode step changed running statistics)."""
        self.load_state(self.reference_state)

    def load_state(self, state):
        """Load one state_dict (numpy arrays keyed like torch's) into both models; torch is left in eval mode."""
        import torch

        self.torch_model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
        self.torch_model.eval()
        self.keras_module.load_state_dict(self.keras_model, state)

    def input_specs(self, strict=True):
        """The manifest's example inputs, with an open integer range closed at the smallest Embedding's size
        (without an Embedding: ValueError when `strict`, else 10)."""
        specs = self.class_entry.get("example_inputs")
        if not specs:
            raise ValueError(f"{self.class_name} has no example inputs in the manifest (convert with --input-shape)")
        resolved = []
        for spec in specs:
            spec = dict(spec)
            if spec["dtype"].startswith(("int", "uint")) and spec.get("high") is None:
                spec["high"] = smallest_embedding_size(self.keras_model)
                if spec["high"] is None and not strict:
                    spec["high"] = 10
                elif spec["high"] is None:
                    raise ValueError(f"{self.class_name}: the value range of an integer input is unknown (convert "
                                     f"with --input-shape SHAPE:{spec['dtype']}:LOW:HIGH)")
            resolved.append(spec)
        return resolved

    def example_inputs(self, batch=2, seed=0, scale=1.0):
        """Random inputs shaped like the manifest's example inputs (numpy)."""
        rng = np.random.default_rng(seed)
        inputs = []
        for spec in self.input_specs(strict=False):
            shape = (batch, *spec["shape"])
            if spec["dtype"].startswith("int"):
                low = int(spec["low"]) if spec.get("low") is not None else 0
                inputs.append(rng.integers(low, int(spec["high"]), size=shape).astype(spec["dtype"]))
            elif spec["dtype"] == "bool":
                inputs.append(rng.random(shape) > 0.5)
            else:
                inputs.append((rng.standard_normal(shape) * scale).astype(np.float32))
        return inputs

    def run_torch(self, inputs):
        import torch

        with torch.no_grad():
            result = self.torch_model(*[torch.from_numpy(np.asarray(i)) for i in inputs])
        return _flatten_outputs(result, lambda t: t.detach().numpy())

    def run_keras(self, inputs, jit=False):
        import tensorflow as tf

        if jit:
            function = tf.function(lambda *xs: self.keras_model(*xs, training=False), jit_compile=True)
            result = function(*[tf.constant(i) for i in inputs])
        else:
            result = self.keras_model(*[tf.constant(i) for i in inputs], training=False)
        return _flatten_outputs(result, lambda t: np.asarray(t))


def attribute_path(module, dotted):
    """`module.A.b` for "A.b": a class, a factory function, or a classmethod building the model."""
    value = module
    for name in dotted.split("."):
        value = getattr(value, name)
    return value


def _has_lazy_modules(torch_model):
    """Whether a torch model holds lazy modules whose parameters are not made yet."""
    from torch.nn.modules.lazy import LazyModuleMixin

    return any(isinstance(m, LazyModuleMixin) and m.has_uninitialized_params() for m in torch_model.modules())


def smallest_embedding_size(keras_model):
    """The smallest `num_embeddings` among the model's layers (None without embeddings): valid ids for all."""
    sizes = [layer.num_embeddings for layer in keras_layers(keras_model)
             if isinstance(getattr(layer, "num_embeddings", None), int)]
    return min(sizes) if sizes else None


def keras_layers(keras_model):
    """Every layer of a Keras model, itself included (torch-style `modules()` where the port has it)."""
    if hasattr(keras_model, "_flatten_layers"):
        return list(keras_model._flatten_layers(include_self=True, recursive=True))
    return list(keras_model.modules())


def _flatten_outputs(result, to_numpy):
    if isinstance(result, (tuple, list)):
        flat = []
        for item in result:
            flat.extend(_flatten_outputs(item, to_numpy))
        return flat
    if isinstance(result, dict):
        flat = []
        for key in sorted(result):
            flat.extend(_flatten_outputs(result[key], to_numpy))
        return flat
    if result is None:
        return []
    return [to_numpy(result)]


def count_transposes(keras_model, inputs):
    """Transpose ops in the traced inference graph of `keras_model` on `inputs` (a trace made for an XLA run on
    inputs of those shapes is counted as it is: its graph is the plain trace's)."""
    try:
        known = _TRACES.get(keras_model, {})
    except TypeError:  # an object that takes no weak reference: never kept
        known = {}
    key = _trace_key(keras_model, inputs)
    trace = known.get((key, True)) or known.get((key, False)) or inference_trace(keras_model, inputs)
    return transposes_in(trace[1])


def inference_trace(keras_model, inputs, jit_compile=False):
    """(the tf.function running `keras_model(*inputs, training=False)`, its concrete function traced for the shapes
    and dtypes of `inputs`). Calling the function on inputs of those shapes reuses that trace: a check that runs the
    model under XLA (`jit_compile=True`) and counts its Transposes traces a full-size network once, not twice.

    Traces are kept per model (while it lives) and input signature: a second run or count on inputs of the same
    shapes, with the model's `channels_last_io` unchanged, reuses the first's trace and XLA compilation."""
    import tensorflow as tf

    key = (_trace_key(keras_model, inputs), jit_compile)
    try:
        known = _TRACES.setdefault(keras_model, {})
    except TypeError:  # a plain function or an object that takes no weak reference: traced afresh
        known = {}
    if key not in known:
        model = _weak_callable(keras_model)
        function = tf.function(lambda *xs: model()(*xs, training=False), jit_compile=jit_compile)
        concrete = function.get_concrete_function(*[tf.TensorSpec(np.asarray(i).shape, tf.as_dtype(
            np.asarray(i).dtype)) for i in inputs])
        known[key] = (function, concrete)
    return known[key]


_TRACES = weakref.WeakKeyDictionary()  # keras model -> {(input signature, io layout), jit_compile): trace}


def _trace_key(keras_model, inputs):
    signature = tuple((np.asarray(i).shape, str(np.asarray(i).dtype)) for i in inputs)
    return signature, getattr(keras_model, "channels_last_io", None)


def _weak_callable(keras_model):
    """A callable returning `keras_model`, weakly where it can be: the kept trace must not keep its model alive."""
    try:
        return weakref.ref(keras_model)
    except TypeError:
        return lambda: keras_model


def transposes_in(concrete_function):
    """Transpose ops in a concrete function's graph."""
    return sum(1 for op in concrete_function.graph.get_operations()
               if op.type in ("Transpose", "ConjugateTranspose"))
