"""The Gluon fixtures (fixtures/gluon/*.py) and how to run them: the single table of each fixture's main class or
factory, the inputs its example feeds it and the output shape, plus the skip marker for tests that need the mxnet
venv (scripts/setup.sh creates it)."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from porter.verify.mxnet_reference import mxnet_unavailable_reason

GLUON_FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "gluon"

_reason = mxnet_unavailable_reason()
needs_mxnet = pytest.mark.skipif(_reason is not None, reason=_reason or "")


@dataclass(frozen=True)
class GluonCase:
    """One way to build and run a fixture: `main` is a Block class or a factory function in the file."""

    main: str
    inputs: list  # (dtype, shape, (low, high) for integer values or None for standard normal floats)
    output_shape: tuple
    init_kwargs: dict = field(default_factory=dict)


def f32(*shape):
    return ("float32", shape, None)


def integers(*shape, low=0, high, dtype="int32"):
    return (dtype, shape, (low, high))


GLUON_FIXTURES = {
    "mlp_hybrid.py": GluonCase("MLP", [f32(8, 1, 28, 28)], (8, 10)),
    "lenet.py": GluonCase("LeNet", [f32(8, 1, 28, 28)], (8, 10)),
    "resnet_v1.py": GluonCase("resnet8_v1", [f32(4, 3, 32, 32)], (4, 10)),
    "mobilenet_v1.py": GluonCase("MobileNet", [f32(4, 3, 32, 32)], (4, 10)),
    "batchnorm_variants.py": GluonCase("NormVariantsNet", [f32(8, 3, 16, 16)], (8, 10)),
    "text_rnn_classifier.py": GluonCase("TextClassifier", [integers(8, 12, high=500)], (8, 4)),
    "lstm_cell_unroll.py": GluonCase("CellTagger", [f32(4, 10, 16)], (4, 10, 5)),
    "token_mlp_forward.py": GluonCase("TokenMLP", [f32(4, 8, 12)], (4, 3)),
    "masked_attention.py": GluonCase("MaskedSelfAttention",
                                     [f32(4, 6, 16), integers(4, low=1, high=7, dtype="float32")], (4, 6, 16)),
    "pooling_variants.py": GluonCase("PoolingNet", [f32(2, 3, 23, 23)], (2, 5)),
    "activations.py": GluonCase("ActivationZoo", [f32(4, 12)], (4, 3)),
    "upsampling_decoder.py": GluonCase("UpsamplingDecoder", [f32(2, 8, 6, 6)], (2, 3, 24, 24)),
    "squeezenet_concurrent.py": GluonCase("SqueezeNet", [f32(4, 3, 32, 32)], (4, 10)),
    "densenet_small.py": GluonCase("DenseNet", [f32(4, 3, 32, 32)], (4, 10)),
    "train_mlp.py": GluonCase("MLP", [f32(8, 1, 28, 28)], (8, 10)),
}

# Other constructor arguments and factories the fixtures offer, run the same way.
GLUON_VARIANTS = {
    "text_rnn_classifier.py gru TNC": ("text_rnn_classifier.py", GluonCase(
        "TextClassifier", [integers(8, 12, high=500)], (8, 4), {"mode": "gru", "layout": "TNC"})),
    "text_rnn_classifier.py lstm one-way": ("text_rnn_classifier.py", GluonCase(
        "TextClassifier", [integers(8, 12, high=500)], (8, 4), {"bidirectional": False, "num_layers": 1})),
    "resnet_v1.py get_resnet(1, 14)": ("resnet_v1.py", GluonCase(
        "get_resnet", [f32(2, 3, 32, 32)], (2, 7), {"version": 1, "num_layers": 14, "classes": 7})),
    "mobilenet_v1.py relu6": ("mobilenet_v1.py", GluonCase(
        "get_mobilenet", [f32(2, 3, 32, 32)], (2, 10), {"multiplier": 0.5, "relu6": True})),
}


def make_inputs(specs, seed=0):
    """numpy inputs for a case: standard normal floats, or uniform integers in [low, high) of the given dtype."""
    generator = np.random.default_rng(seed)
    inputs = []
    for dtype, shape, bounds in specs:
        if bounds is None:
            inputs.append(generator.standard_normal(shape).astype(dtype))
        else:
            inputs.append(generator.integers(bounds[0], bounds[1], size=shape).astype(dtype))
    return inputs


def port_gluon_snippet(folder, text, class_name, x):
    """Convert the Gluon source `text` (written to folder/<lowercase class name>.py), load real mxnet 1.9.1's
    perturbed parameters into the port of `class_name`, assert its output on `x` matches mxnet's within 1e-4 of the
    output's scale (eager and XLA) and return the Keras model (to count its Transposes)."""
    import tensorflow as tf

    from porter.convert import ConvertOptions
    from porter.output import write_tree
    from porter.verify.mxnet_reference import run_gluon_reference
    from porter.weights.gluon_params import read_gluon_params
    from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

    source = folder / f"{class_name.lower()}.py"
    source.write_text(text)
    conversion = convert(ConvertOptions(source, folder / "out", class_name=class_name))
    assert conversion.exit_code == 0
    write_tree(folder / "out", conversion.files)
    module = _import_port(folder / "out" / f"{source.stem}_keras.py", f"{source.stem}_port")
    params = folder / "net.params"
    reference = run_gluon_reference(source, class_name, [x], perturb=True, save_parameters=params)
    model = getattr(module, class_name)()
    model(tf.constant(x))
    module.load_state_dict(model, read_gluon_params(params))
    expected = reference.outputs[0]
    scale = float(np.max(np.abs(expected))) or 1.0
    for run in (lambda a: model(a, training=False),
                tf.function(lambda a: model(a, training=False), jit_compile=True)):
        got = np.asarray(run(tf.constant(x)))
        assert float(np.max(np.abs(got - expected))) / scale <= 1e-4
    return model


def port_gluon_source(folder, source, stem, *convert_args):
    """Write Gluon `source` to folder/`stem`.py, convert it with `porter convert ... *convert_args` (exit 0 required)
    and return (the imported port module, its text)."""
    import subprocess
    import sys

    path = folder / f"{stem}.py"
    path.write_text(source)
    out = folder / "out"
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(path), "-o", str(out), *convert_args],
                               capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=False)
    assert completed.returncode == 0, completed.stderr
    text = (out / f"{stem}_keras.py").read_text()
    return _import_port(out / f"{stem}_keras.py", f"gluon_{stem}_port"), text


def _import_port(path, name):
    """The generated model module at `path`, imported by file path under the module name `name`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
