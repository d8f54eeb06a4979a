"""Build the source (torch) and ported (Keras) models side by side and compare them on example inputs.

Used by porter's own fixture tests, the generated test_equivalence.py and `porter verify`. Importing the
source model executes the user's file: that is what verification means, and only these commands do it.
"""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np


def import_path(path, name=None):
    """Import a Python file by path as a fresh module."""
    path = Path(path).resolve()
    name = name or f"porter_loaded_{path.stem}_{abs(hash(str(path))) % 10**8}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class PortedPair:
    """The torch model and its Keras port, same constructor arguments, weights copied torch -> Keras."""

    def __init__(self, out_dir, source_path=None, class_name=None, init_args=None, seed=0):
        out_dir = Path(out_dir)
        self.manifest = json.loads((out_dir / "porter-manifest.json").read_text())
        entry = self.manifest["sources"][0]
        self.source_path = Path(source_path) if source_path else (out_dir / entry["path"]).resolve()
        self.class_name = class_name or self.manifest["main_class"]
        self.init_args = dict(self.manifest.get("init_args") or {}) if init_args is None else init_args
        self.class_entry = next(c for c in entry["classes"] if c["name"] == self.class_name)
        self.keras_module = import_path(out_dir / entry["module"])
        self.torch_module = import_path(self.source_path)
        self.seed = seed
        self.build()

    def build(self):
        import torch

        from porter.verify.torch_bridge import perturb_torch_module, torch_state_numpy

        torch.manual_seed(self.seed)
        self.torch_model = getattr(self.torch_module, self.class_name)(**self.init_args)
        perturb_torch_module(self.torch_model, self.seed)
        self.torch_model.eval()
        self.keras_model = getattr(self.keras_module, self.class_name)(**self.init_args)
        self.keras_module.load_state_dict(self.keras_model, torch_state_numpy(self.torch_model))

    def example_inputs(self, batch=2, seed=0, scale=1.0):
        """Random inputs shaped like the manifest's example inputs (numpy)."""
        specs = self.class_entry.get("example_inputs")
        if not specs:
            raise ValueError(f"{self.class_name} has no example inputs in the manifest (convert with --input-shape)")
        rng = np.random.default_rng(seed)
        inputs = []
        for spec in specs:
            shape = (batch, *spec["shape"])
            if spec["dtype"].startswith("int"):
                low = int(spec["low"]) if spec.get("low") is not None else 0
                high = int(spec["high"]) if spec.get("high") is not None else 10
                inputs.append(rng.integers(low, high, size=shape).astype(spec["dtype"]))
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
    """Transpose ops in the traced inference graph of `keras_model` on `inputs`."""
    import tensorflow as tf

    function = tf.function(lambda *xs: keras_model(*xs, training=False))
    concrete = function.get_concrete_function(*[tf.TensorSpec(np.asarray(i).shape, tf.as_dtype(
        np.asarray(i).dtype)) for i in inputs])
    return sum(1 for op in concrete.graph.get_operations() if op.type in ("Transpose", "ConjugateTranspose"))
