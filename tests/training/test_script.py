"""The generated train_tpu.py as a program: its imports, determinism, XLA compilation of the step, the TPU
connection logic (with a fake cluster resolver, the one stand-in allowed: there is no TPU here), and main()'s
checkpoints, resume, export, TensorBoard logs and metrics on the tiny model."""

import ast
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.training.helpers import FIXTURES, convert_source, load_module

ALLOWED_IMPORTS = {"argparse", "contextlib", "importlib", "json", "math", "os", "re", "sys", "tempfile", "time",
                   "zlib", "keras", "numpy", "tensorflow"}
BANNERS = ("oneDNN custom operations", "absl::InitializeLog", "cpu_feature_guard", "To enable the following",
           "XLA service", "StreamExecutor")


@pytest.fixture(scope="module")
def fixtures_converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("script")
    return {name: (root / name, convert_source(FIXTURES / f"{name}.py", root / name))
            for name in ("train_mnist", "train_lm")}


def top_level_imports(text):
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


def test_generated_files_import_only_tensorflow_keras_numpy_and_stdlib(fixtures_converted):
    for out, manifest in fixtures_converted.values():
        assert {"train_tpu.py", "train_support.py", "requirements-tpu.txt"} <= set(manifest["files"])
        for name in ("train_tpu.py", "train_support.py"):
            text = (out / name).read_text()
            assert top_level_imports(text) <= ALLOWED_IMPORTS, (name, top_level_imports(text))
            assert str(out) not in text and "/work/" not in text and "/tmp/" not in text
        requirements = (out / "requirements-tpu.txt").read_text()
        assert "tensorflow-tpu==" in requirements and "libtpu" in requirements and "tensorboard" in requirements


def test_output_is_deterministic(tmp_path):
    first = convert_source(FIXTURES / "train_lm.py", tmp_path / "a")
    second = convert_source(FIXTURES / "train_lm.py", tmp_path / "b")
    assert first == second
    for name in ("train_tpu.py", "train_support.py", "requirements-tpu.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_source_flags_are_kept_with_their_defaults(fixtures_converted):
    out, _ = fixtures_converted["train_mnist"]
    train = load_module(out / "train_tpu.py")
    args = train.parse_args([])
    assert (args.lr, args.gamma, args.batch_size, args.epochs, args.seed, args.log_interval) == (1.0, 0.7, 64, 3,
                                                                                                 1, 10)
    assert args.test_batch_size == 1000 and args.dry_run is False
    assert train.parse_args(["--lr", "0.5", "--batch-size", "32"]).lr == 0.5


@pytest.mark.parametrize("fixture", ["train_mnist", "train_lm"])
def test_train_step_compiles_with_xla_on_cpu(fixtures_converted, fixture):
    import tensorflow as tf

    out, _ = fixtures_converted[fixture]
    train = load_module(out / "train_tpu.py")
    model = train.build_model()
    inputs = [tf.zeros((1, *s["shape"]), s["dtype"]) for s in train.EXAMPLE_INPUTS]
    model(*inputs, training=False)
    optimizer = train.build_optimizer(model)
    optimizer.build(model.trainable_variables)
    loss_fn = train.build_loss()
    x, y = next(iter(train.make_dataset(8, synthetic=train.synthetic_data(16, seed=0))))
    step = tf.function(lambda x, y: train.train_step(model, optimizer, loss_fn, x, y), jit_compile=True)
    first = float(step(x, y))
    assert np.isfinite(first)
    assert step.experimental_get_compiler_ir(x, y)(stage="hlo")  # XLA accepted the whole step
    assert int(optimizer.iterations.numpy()) == 1


class FakeResolver:
    """Stands for TPUClusterResolver (no TPU exists here): records its arguments; `fail` makes it raise."""

    calls = []
    fail = None

    def __init__(self, tpu=None, zone=None, project=None):
        FakeResolver.calls.append({"tpu": tpu, "zone": zone, "project": project})
        if FakeResolver.fail is not None:
            raise FakeResolver.fail

    def cluster_spec(self):
        raise ValueError("fake resolver: no TPU workers")

    def master(self, *args, **kwargs):
        raise ValueError("fake resolver: no TPU master")


@pytest.fixture
def train_mnist(fixtures_converted):
    FakeResolver.calls, FakeResolver.fail = [], None
    return load_module(fixtures_converted["train_mnist"][0] / "train_tpu.py")


def test_tpu_resolver_arguments(train_mnist):
    args = train_mnist.tpu_resolver_args
    assert args(environ={}) == {"tpu": "local", "zone": None, "project": None}
    assert args("my-pod", "us-central2-b", "proj", environ={}) == {"tpu": "my-pod", "zone": "us-central2-b",
                                                                    "project": "proj"}
    assert args(environ={"COLAB_TPU_ADDR": "10.0.0.2:8470"})["tpu"] == "grpc://10.0.0.2:8470"
    assert args(environ={"TPU_NAME": "v4-32"}, zone="z")["tpu"] == "v4-32"


def test_batch_tiling_warning_names_the_per_core_batch_and_a_batch_that_fills_the_tiles(train_mnist):
    warn = train_mnist.batch_tiling_warning
    assert warn(64, 8) is None and warn(16, 1) is None and warn(1024, 32) is None
    text = warn(32, 8)
    assert "4 examples per core on 8 TPU cores" in text and "--batch-size 64 (8 per core)" in text
    assert "--batch-size 24 (8 per core)" in warn(20, 3)
    assert "1 example per core on 4 TPU cores" in warn(4, 4)


def test_named_tpu_is_connected_through_the_resolver(train_mnist):
    with pytest.raises(train_mnist.TPUUnavailable, match="my-pod"):
        train_mnist.connect_tpu("my-pod", "us-central2-b", "proj", resolver_class=FakeResolver, environ={})
    assert FakeResolver.calls == [{"tpu": "my-pod", "zone": "us-central2-b", "project": "proj"}]


def test_auto_falls_back_to_cpu_and_tpu_strategy_raises(train_mnist):
    import tensorflow as tf

    FakeResolver.fail = ValueError("Please provide a TPU Name to connect to.")
    strategy = train_mnist.resolve_strategy("auto", resolver_class=FakeResolver)
    assert strategy.num_replicas_in_sync == 1 and not isinstance(strategy, tf.distribute.TPUStrategy)
    assert FakeResolver.calls[-1]["tpu"] == "local"
    with pytest.raises(train_mnist.TPUUnavailable, match="Please provide a TPU Name"):
        train_mnist.resolve_strategy("tpu", resolver_class=FakeResolver)
    assert train_mnist.resolve_strategy("cpu", resolver_class=FakeResolver).num_replicas_in_sync == 1


def test_main_checkpoints_resumes_exports_and_writes_metrics(tiny_models, tmp_path):
    tiny = tiny_models["logits"]
    setup = ("optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
             "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)\n"
             "criterion = nn.CrossEntropyLoss()")
    train, _ = tiny.training_script(tmp_path / "out", setup, "criterion(out, y)", schedule_step="scheduler.step()")
    assert train.DEFAULT_STEPS == 5  # the source's loop runs five steps on one batch
    run = tmp_path / "run"
    metrics = tmp_path / "m.json"
    common = ["--batch-size", "8", "--strategy", "cpu", "--output-dir", str(run), "--metrics-json", str(metrics)]
    assert train.main(["--steps", "12", "--steps-per-execution", "4", "--no-export", *common]) == 0
    first = json.loads(metrics.read_text())
    assert first["steps"] == 12 and first["replicas"] == 1 and first["jit_compile"] is True
    assert first["strategy"] == "default" and first["loss_window"] == 5
    assert first["last_loss_window_mean"] < first["first_loss_window_mean"]
    assert (run / "checkpoints" / "checkpoint").is_file() and any((run / "logs").iterdir())
    assert train.main(["--steps", "14", *common]) == 0  # resumes at step 12, runs 2 more, exports
    assert json.loads(metrics.read_text())["steps"] == 2
    assert (run / "export" / "model.keras").is_file() and (run / "export" / "saved_model").is_dir()


def test_main_refuses_unknown_example_inputs(tiny_models, tmp_path, capsys):
    tiny = tiny_models["logits"]
    train, _ = tiny.training_script(tmp_path, "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
                                    "F.cross_entropy(out, y)")
    train.EXAMPLE_INPUTS = None
    assert train.main(["--steps", "1", "--strategy", "cpu", "--output-dir", str(tmp_path / "run")]) == 2
    assert "--input-shape" in capsys.readouterr().err


def test_init_weights_from_npz_state_dict_and_weights_h5(tiny_models, tmp_path):
    import torch

    tiny = tiny_models["logits"]
    train, _ = tiny.training_script(tmp_path / "out", "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
                                    "F.cross_entropy(out, y)")
    torch.manual_seed(3)
    state = {k: v.numpy() for k, v in tiny.torch_module.Tiny().state_dict().items()}
    np.savez(tmp_path / "state.npz", **state)
    model = train.build_model()
    model(np.zeros((1, 2, 4, 4), np.float32), training=False)
    train.load_initial_weights(model, str(tmp_path / "state.npz"))
    entries = {e.key: e for e in train.model_lib.collect_state(model)}
    for key, value in state.items():
        expected = entries[key].to_keras(value) if entries[key].to_keras else value
        np.testing.assert_array_equal(entries[key].variable.numpy(), expected)
    model.save_weights(str(tmp_path / "w.weights.h5"))
    other = train.build_model()
    other(np.zeros((1, 2, 4, 4), np.float32), training=False)
    train.load_initial_weights(other, str(tmp_path / "w.weights.h5"))
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_train_tpu_is_executable(fixtures_converted):
    out, _ = fixtures_converted["train_mnist"]
    script = out / "train_tpu.py"
    assert script.read_text().startswith("#!/usr/bin/env python3\n")
    assert os.access(script, os.X_OK) and script.stat().st_mode & 0o111 == 0o111
    assert not os.access(out / "train_support.py", os.X_OK)


def test_short_run_is_quiet_and_names_its_strategy(fixtures_converted, tmp_path):
    """Three steps as a program: no TensorFlow start-up notes on stderr (with or without TF_CPP_MIN_LOG_LEVEL),
    no private strategy class name, a line before the compile and one per logged step, metrics that say what they
    average."""
    out, _ = fixtures_converted["train_mnist"]
    metrics = tmp_path / "m.json"
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, str(out / "train_tpu.py"), "--steps", "3", "--batch-size", "8",
                             "--log-interval", "2", "--no-export", "--output-dir", str(tmp_path / "run"),
                             "--metrics-json", str(metrics)], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    noise = [line for line in result.stderr.splitlines() if any(banner in line for banner in BANNERS)]
    assert not noise, noise
    assert "_Default" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train_tpu.py: Net on the default strategy (1 replica), global batch 8, 3 steps")
    first_step = next(i for i, line in enumerate(lines) if line.startswith("step 1/3 "))
    assert lines.index("train_tpu.py: compiling the training step...") < first_step
    assert [line.split(" (")[0] for line in lines if line.startswith("step ")] == ["step 1/3", "step 2/3",
                                                                                   "step 3/3"]
    written = json.loads(metrics.read_text())
    assert written["strategy"] == "default" and written["loss_window"] == 1 and "last_loss" not in written
    assert written["first_loss_window_mean"] != written["last_loss_window_mean"]  # one step each, not the same 3
    assert written["final_loss"] == written["last_loss_window_mean"]
