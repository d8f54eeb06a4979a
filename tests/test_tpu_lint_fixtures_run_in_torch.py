"""Every TPU lint fixture (fixtures/tpu_lint/*.py) is a real torch model: it builds with default arguments and runs
a forward pass (and the batch-size fixture its training loop). tests/test_fixtures_run_in_torch.py covers only the
top-level fixtures."""

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

LINT_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tpu_lint"

# file -> (main class, function making the forward inputs, expected output shape)
FIXTURES = {
    "data_dependent_shapes.py": ("SparseFeatures", lambda: [torch.randn(4, 16)], (4, 16)),
    "tensor_control_flow.py": ("GatedResidual", lambda: [torch.randn(4, 16)], (4, 16)),
    "host_sync.py": ("NormalisedScores", lambda: [torch.randn(4, 16)], (4, 16)),
    "float64.py": ("PreciseCentering", lambda: [torch.randn(4, 16)], (4, 16)),
    "int64_index_math.py": ("BucketedEmbedding", lambda: [torch.randint(0, 32, (4, 10))], (4, 10, 8)),
    "xla_unsupported_ops.py": ("ScoreStatistics", lambda: [torch.randn(6, 16)], (6, 3)),
    "recompiling_shapes.py": ("LengthAwareEncoder",
                              lambda: [torch.randint(0, 50, (4, 12)), torch.tensor([12, 5, 7, 3])], (4, 16)),
    "mxu_feature_sizes.py": ("WideClassifier", lambda: [torch.randn(2, 3, 8, 8)], (2, 1000)),
    "mxu_batch_size.py": ("TinyRegressor", lambda: [torch.randn(4, 16)], (4, 1)),
}


def load(filename):
    name = f"porter_tpu_lint_fixture_{Path(filename).stem}"
    spec = importlib.util.spec_from_file_location(name, LINT_FIXTURES / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def test_table_covers_every_lint_fixture():
    assert {p.name for p in LINT_FIXTURES.glob("*.py")} == set(FIXTURES)


@pytest.mark.parametrize("filename", sorted(FIXTURES))
def test_lint_fixture_forward(filename):
    class_name, make_inputs, out_shape = FIXTURES[filename]
    torch.manual_seed(0)
    model = getattr(load(filename), class_name)().eval()
    with torch.no_grad():
        out = model(*make_inputs())
    assert tuple(out.shape) == out_shape
    assert torch.isfinite(out).all()


def test_batch_size_fixture_trains():
    torch.manual_seed(0)
    load("mxu_batch_size.py").train()
