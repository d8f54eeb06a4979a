"""`python OUT/train_tpu.py --steps 30 --batch-size 16 --simulate-replicas 2 --metrics-json m.json` for the
fixture training scripts (MNIST: argparse + Adadelta + StepLR + nll_loss; LM: AdamW groups, label smoothing,
clipping, per-batch cosine): 2 replicas and a falling loss, in float32 and mixed_bfloat16. Also: `--strategy tpu`
without a TPU exits 2 before any work (no model, no output directory); no wall-clock bounds here (timeouts only
stop a hang).
"""

import json
import os
import subprocess
import sys

import pytest

from tests.full_corpus import full_corpus_only
from tests.training.helpers import FIXTURES, convert_source

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "KERAS_BACKEND": "tensorflow"}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    outs = {}
    for name in ("train_mnist", "train_lm"):
        out = root / name
        convert_source(FIXTURES / f"{name}.py", out)
        outs[name] = out
    return outs


def run_script(out, *args, timeout=600):
    """Run OUT/train_tpu.py; `timeout` only stops a hang (subprocess.TimeoutExpired), it is no performance bound."""
    return subprocess.run([sys.executable, str(out / "train_tpu.py"), *args], cwd=out, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


RUNS = [("train_mnist", "float32"), ("train_mnist", "mixed_bfloat16"), ("train_lm", "float32"),
        # bfloat16 on a CPU is emulated: 191 s for 30 steps of the language model, whose mixed-precision path
        # (float32 logits and loss under a bfloat16 policy) train_mnist's run takes too
        pytest.param("train_lm", "mixed_bfloat16", marks=full_corpus_only(
            "train_mnist's mixed_bfloat16 run and train_lm's float32 run"))]


@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "precision"), RUNS)
def test_fixture_trains_on_two_simulated_replicas(converted, fixture, precision):
    out = converted[fixture]
    metrics_path = out / f"m-{precision}.json"
    args = ["--steps", "30", "--batch-size", "16", "--simulate-replicas", "2", "--metrics-json", str(metrics_path),
            "--precision", precision, "--output-dir", str(out / f"run-{precision}")]
    export = fixture == "train_mnist" and precision == "float32"
    if not export:
        args.append("--no-export")
    if fixture == "train_lm" and precision == "float32":
        args += ["--steps-per-execution", "5"]  # several steps per tf.function call under MirroredStrategy
    result = run_script(out, *args)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    metrics = json.loads(metrics_path.read_text())
    assert metrics["strategy"] == "MirroredStrategy" and metrics["replicas"] == 2
    assert metrics["global_batch_size"] == 16 and metrics["steps"] == 30
    assert metrics["precision"] == precision
    assert metrics["last_loss_window_mean"] < metrics["first_loss_window_mean"], metrics
    assert metrics["examples_per_sec"] > 0
    run = out / f"run-{precision}"
    assert (run / "checkpoints" / "checkpoint").is_file()
    assert any((run / "logs").iterdir())
    if export:
        assert (run / "export" / "model.keras").is_file()
        assert (run / "export" / "saved_model" / "saved_model.pb").is_file()


def test_strategy_tpu_without_a_tpu_exits_2_before_any_work(converted, tmp_path):
    """The TPU is looked for first: no model built, nothing trained or written (a count of work, not a clock)."""
    output = tmp_path / "tpu_run"
    result = run_script(converted["train_mnist"], "--strategy", "tpu", "--steps", "1", "--output-dir", str(output),
                        timeout=120)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "no TPU reachable" in result.stderr
    assert "replica" not in result.stdout and "step" not in result.stdout, result.stdout[-2000:]
    assert not output.exists()
