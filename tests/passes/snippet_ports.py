"""Ports of a test's torch snippet (main class Net), one per set of constructor arguments, made once per module."""

import numpy as np

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.harness import PortedPair
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)
from tests.rules.op_ports import assert_same_outputs, cached, random_input


def snippet_ports(tmp_path_factory, source, input_spec, argument=None):
    """value -> output folder of `source` converted with `Net(**{argument: value})`, or with Net's defaults when
    `argument` is None (the value then only names the port); cached, a failure is kept."""

    def port(value):
        folder = tmp_path_factory.mktemp("snippet")
        (folder / "op_model.py").write_text(source)
        conversion = convert(ConvertOptions(folder / "op_model.py", folder / "out", class_name="Net",
                                            input_specs=[input_spec], init_args={argument: value} if argument else {}))
        assert conversion.exit_code == 0, conversion.manifest
        write_tree(folder / "out", conversion.files)
        return folder / "out"

    return cached(port)


def assert_matches_torch(out, seed, shape, tolerance=1e-4):
    """The port in `out` matches torch on a drawn input of `shape`, eagerly and under XLA."""
    pair = PortedPair(out, seed=seed)
    x = random_input(seed, shape)
    assert_same_outputs(pair, [x], tolerance=tolerance)
    assert_same_outputs(pair, [x], tolerance=tolerance, jit=True)


def assert_built_matches_torch(pair, x, tolerance=1e-5, **init_args):
    """`Net(**init_args)` built on both sides of the ported `pair`, torch's weights loaded, matches torch on `x`
    (eagerly); returns the Keras model."""
    import torch

    torch_model = pair.torch_module.Net(**init_args).eval()
    keras_model = pair.keras_module.Net(**init_args)
    keras_model(x)
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert np.abs(got - expected).max() <= tolerance * max(1.0, float(np.abs(expected).max()))
    return keras_model
