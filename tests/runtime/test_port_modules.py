"""porter/runtime/port_modules.py: a package port's modules load their siblings by path, one instance per port."""

import sys

from porter.runtime.port_modules import load_port_module


def write_port(folder, value):
    (folder / "sub").mkdir(parents=True)
    (folder / "shared.py").write_text(f"VALUE = {value}\n\n\nclass Block:\n    pass\n")
    (folder / "sub" / "user.py").write_text("")
    return folder / "sub" / "user.py"


def test_siblings_load_by_relative_path_once_per_port_and_never_across_ports(tmp_path, monkeypatch):
    first, second = write_port(tmp_path / "a", 1), write_port(tmp_path / "b", 2)
    monkeypatch.chdir(tmp_path / "a" / "sub")  # any working directory: the path is taken from the anchor file
    loaded = load_port_module(str(first), "../shared.py")
    try:
        assert loaded.VALUE == 1 and load_port_module(str(first), "../shared.py") is loaded  # one per port
        other = load_port_module(str(second), "../shared.py")
        assert other.VALUE == 2 and other.Block is not loaded.Block  # two ports never share one
        assert loaded.__name__.startswith("shared_") and loaded.__name__ in sys.modules
        (tmp_path / "a" / "shared.py").write_text("VALUE = 3\n")  # a new version of the port: loaded afresh
        assert load_port_module(str(first), "../shared.py").VALUE == 3
    finally:
        for name in [n for n in sys.modules if n.startswith("shared_")]:
            del sys.modules[name]


def test_a_sibling_that_fails_to_load_is_not_left_half_loaded(tmp_path):
    user = write_port(tmp_path / "c", 1)
    (tmp_path / "c" / "shared.py").write_text("raise ImportError('broken')\n")
    for _ in range(2):  # the second call runs it again, it does not hand back the half-made module
        try:
            load_port_module(str(user), "../shared.py")
        except ImportError as error:
            assert str(error) == "broken"
        else:
            raise AssertionError("expected the sibling's ImportError")


def test_a_sibling_runtime_block_inside_the_model_keeps_the_compute_dtype():
    """A package port's model calls blocks its siblings' ports define, on runtimes of their own: only the model's
    own call returns float32 under mixed_bfloat16, whichever runtime a block comes from (torchvision's swin called a
    sibling's StochasticDepth, which took itself for the model and handed float32 to a bfloat16 residual add)."""
    import importlib.util
    from pathlib import Path

    import keras
    import numpy as np

    runtime_path = Path(__file__).resolve().parents[1] / "golden" / "mlp" / "mlp_keras_runtime.py"

    def load(name):
        spec = importlib.util.spec_from_file_location(name, runtime_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    own, sibling = load("own_runtime"), load("sibling_runtime")
    assert own.TorchModule is not sibling.TorchModule

    class Model(own.TorchModule):
        def __init__(self):
            super().__init__()
            self.inner = sibling.Linear(4, 3)

        def call(self, x, training=None):
            inner = self.inner(x)
            self.inner_dtype = inner.dtype
            return inner + x[:, :3]

    policy = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = Model()
        output = model(np.ones((2, 4), "float32"))
    finally:
        keras.mixed_precision.set_global_policy(policy)
    assert model.inner_dtype == "bfloat16" and output.dtype == "float32"
