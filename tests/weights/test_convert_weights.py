"""`porter convert --weights`: the .weights.h5, loaded into a fresh Keras model, reproduces torch's outputs.

Real torch checkpoints of the fixtures (parameters and BatchNorm statistics off their defaults) are saved as a
plain state_dict, a nested DataParallel checkpoint and safetensors; weights that do not fit are named.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from porter.cli import main
from porter.convert import ConvertOptions
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair, import_path
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

torch = pytest.importorskip("torch")
pytest.importorskip("tensorflow")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def torch_model(name, init_args=None, seed=0):
    """The fixture's main class built in torch, parameters and statistics off their defaults."""
    from porter.verify.torch_bridge import perturb_torch_module

    main_class = convert(ConvertOptions(FIXTURES / f"{name}.py")).main_class
    module = import_path(FIXTURES / f"{name}.py")
    torch.manual_seed(seed)
    model = getattr(module, main_class)(**(init_args or {}))
    return perturb_torch_module(model, seed).eval()


def save(model_or_state, path, form):
    state = model_or_state if isinstance(model_or_state, dict) else model_or_state.state_dict()
    if form == "safetensors":  # save_model stores tied weights once, as Hugging Face checkpoints do
        from safetensors.torch import save_file, save_model

        if isinstance(model_or_state, dict):
            save_file({k: v.contiguous() for k, v in state.items()}, path)
        else:
            save_model(model_or_state, path)
    elif form == "checkpoint":  # what a DataParallel training loop saves
        torch.save({"epoch": 3, "optimizer": {"lr": 0.1}, "state_dict": {f"module.{k}": v for k, v in state.items()}},
                   path)
    else:
        torch.save(state, path)
    return path


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.err


class WeightsFilePair(PortedPair):
    """The torch model whose weights were saved, and a fresh Keras model given only the .weights.h5."""

    def __init__(self, out_dir, torch_model, weights_h5):
        self.given_torch_model, self.weights_h5 = torch_model, weights_h5
        super().__init__(out_dir)

    def build(self):
        self.torch_model = self.given_torch_model
        self.keras_model = getattr(self.keras_module, self.class_name)(**self.init_args)
        # Keras only loads weights into a built model: one call on a sample builds it.
        self.run_keras(self.example_inputs(batch=1, seed=99))
        self.keras_model.load_weights(str(self.weights_h5))


CASES = [("resnet", "pt"), ("resnet", "checkpoint"), ("resnet", "safetensors"), ("lenet", "pt"),
         ("gru_encoder", "checkpoint"), ("gpt_mini", "safetensors"), ("recommender", "pt")]


@pytest.mark.parametrize("name, form", CASES)
def test_weights_h5_reproduces_torch(tmp_path, capsys, name, form):
    model = torch_model(name)
    suffix = {"pt": ".pt", "checkpoint": ".pth", "safetensors": ".safetensors"}[form]
    weights = save(model, tmp_path / f"trained{suffix}", form)
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / f"{name}.py", "-o", out, "--weights", weights], capsys)
    assert code == 0, err
    h5 = out / "trained.weights.h5"
    assert h5.is_file() and "trained.weights.h5" in (out / "porter-manifest.json").read_text()
    pair = WeightsFilePair(out, model, h5)
    inputs = pair.example_inputs(batch=2, seed=1)
    for index, (want, got) in enumerate(zip(pair.run_torch(inputs), pair.run_keras(inputs), strict=True)):
        assert_equivalent(want, got, tolerance=1e-4, what=f"{name} output {index}")


def test_weights_output_is_deterministic(tmp_path, capsys):
    weights = save(torch_model("lenet").state_dict(), tmp_path / "w.pt", "pt")
    payloads = []
    for attempt in ("a", "b"):
        code, err = run(["convert", FIXTURES / "lenet.py", "-o", tmp_path / attempt, "--weights", weights], capsys)
        assert code == 0, err
        payloads.append({p.name: p.read_bytes() for p in (tmp_path / attempt).iterdir()})
    assert payloads[0] == payloads[1]


def test_the_callers_environment_is_left_as_it_was(tmp_path, capsys, monkeypatch):
    """TensorFlow's start-up settings hold only while the generated module is imported: a variable the caller set
    keeps its value throughout, one it had not set is unset again afterwards."""
    from porter.verify import harness

    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")
    for name in ("TF_ENABLE_ONEDNN_OPTS", "KERAS_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    before = dict(os.environ)
    during = []

    def recording_import(*args, **kwargs):
        during.append({name: os.environ.get(name) for name in ("TF_CPP_MIN_LOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS",
                                                               "KERAS_BACKEND")})
        return real_import(*args, **kwargs)

    real_import = harness.import_path
    monkeypatch.setattr(harness, "import_path", recording_import)
    weights = save(torch_model("lenet").state_dict(), tmp_path / "w.pt", "pt")
    code, err = run(["convert", FIXTURES / "lenet.py", "-o", tmp_path / "out", "--weights", weights], capsys)
    assert code == 0, err
    assert during and all(seen == {"TF_CPP_MIN_LOG_LEVEL": "1", "TF_ENABLE_ONEDNN_OPTS": "0",
                                   "KERAS_BACKEND": "tensorflow"} for seen in during), during
    assert dict(os.environ) == before


def test_init_args_reach_the_weights(tmp_path, capsys):
    model = torch_model("resnet", {"width": 8})
    weights = save(model.state_dict(), tmp_path / "w8.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / "resnet.py", "-o", out, "--weights", weights,
                     "--init-args", '{"width": 8}'], capsys)
    assert code == 0, err
    pair = WeightsFilePair(out, model, out / "w8.weights.h5")
    inputs = pair.example_inputs(batch=1)
    assert_equivalent(pair.run_torch(inputs)[0], pair.run_keras(inputs)[0])


def assert_refused(out, code, err, *needles):
    assert code == 2
    assert err.startswith("porter: error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err
    assert not out.exists(), "nothing may be written when the weights do not fit"


def test_mis_shaped_weights_are_named(tmp_path, capsys):
    weights = save(torch_model("resnet", {"width": 16}).state_dict(), tmp_path / "w16.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / "resnet.py", "-o", out, "--weights", weights,
                     "--init-args", '{"width": 8}'], capsys)
    assert_refused(out, code, err, "conv1.weight", "(16, 3, 3, 3)", "shortened")


def test_missing_and_unexpected_keys_are_named(tmp_path, capsys):
    state = torch_model("lenet").state_dict()
    del state["fc3.bias"]
    state["head.weight"] = torch.zeros(3)
    weights = save(state, tmp_path / "w.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / "lenet.py", "-o", out, "--weights", weights], capsys)
    assert_refused(out, code, err, "missing keys ['fc3.bias']", "unexpected keys ['head.weight']")


def test_weights_of_another_model(tmp_path, capsys):
    weights = save(torch_model("lenet").state_dict(), tmp_path / "lenet.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / "mlp.py", "-o", out, "--weights", weights], capsys)
    assert_refused(out, code, err, "missing keys", "conv1.weight")


def test_pickled_module_is_refused(tmp_path, capsys):
    torch.save(torch_model("lenet"), tmp_path / "whole.pt")
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / "lenet.py", "-o", out, "--weights", tmp_path / "whole.pt"], capsys)
    assert_refused(out, code, err, "LeNet5", "weights_only=True", "state_dict()")


def test_missing_weights_file(tmp_path, capsys):
    out = tmp_path / "out"
    code, err = run(["convert", FIXTURES / "lenet.py", "-o", out, "--weights", tmp_path / "absent.pt"], capsys)
    assert_refused(out, code, err, "absent.pt", "no such weights file")


def test_required_constructor_arguments(tmp_path, capsys):
    source = tmp_path / "needs_args.py"
    source.write_text("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self, width):\n"
                      "        super().__init__()\n        self.fc = nn.Linear(4, width)\n\n"
                      "    def forward(self, x):\n        return self.fc(x)\n")
    weights = save({"fc.weight": torch.ones(3, 4), "fc.bias": torch.zeros(3)}, tmp_path / "w.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", source, "-o", out, "--weights", weights], capsys)
    assert_refused(out, code, err, "--init-args", "width")
    code, err = run(["convert", source, "-o", out, "--weights", weights, "--init-args", '{"width": 3}'], capsys)
    assert code == 0, err


def test_stub_in_forward_keeps_the_weights(tmp_path, capsys):
    """A stub in `forward` does not stop the weights: they load, the output says exit 1 (partial)."""
    source = tmp_path / "custom_op.py"
    source.write_text("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x):\n"
                      "        return torch.ops.mylib.scale(self.fc(x), 2.0)\n")
    weight, bias = torch.arange(12.0).reshape(3, 4), torch.tensor([1.0, -2.0, 3.0])
    weights = save({"fc.weight": weight, "fc.bias": bias}, tmp_path / "w.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", source, "-o", out, "--weights", weights, "--input-shape", "4"], capsys)
    assert code == 1, err
    assert (out / "w.weights.h5").is_file()
    module = import_path(out / "custom_op_keras.py")
    model = module.Net()
    model.built = True
    model.load_weights(str(out / "w.weights.h5"))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(model.fc(x)), x @ weight.numpy().T + bias.numpy(), rtol=1e-6)


def test_stubbed_layer_weights_are_skipped_with_a_warning(tmp_path, capsys):
    """A layer porter stubs (here AdaptiveLogSoftmaxWithLoss) has torch weights the Keras model has no place for:
    the rest load, the output is written with exit 1, and a warning names the skipped keys."""
    source = tmp_path / "odd_layer.py"
    source.write_text("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
                      "        self.odd = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])\n\n"
                      "    def forward(self, x):\n        return self.fc(x)\n")
    torch.manual_seed(0)
    model = import_path(source).Net().eval()
    weights = save(model, tmp_path / "odd.pt", "pt")
    out = tmp_path / "out"
    code, err = run(["convert", source, "-o", out, "--weights", weights, "--input-shape", "4"], capsys)
    assert code == 1, err
    assert "not converted" in err and "odd.head.weight" in err and "Traceback" not in err
    keras_model = import_path(out / "odd_layer_keras.py").Net()
    keras_model.built = True
    keras_model.load_weights(str(out / "odd.weights.h5"))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(keras_model(x)))
