"""The TPU lint pass: one test per kind on the fixture made for it (fixtures/tpu_lint/*.py, where each expected
finding is marked `# tpu-lint: KIND` on its line), snippets that must stay quiet, and the clean fixtures."""

import re
import textwrap
from pathlib import Path

import pytest

from porter.convert import choose_main_class
from porter.frontend.source import parse_source
from porter.frontend.training_code import read_training_code
from porter.passes.classes import FileTranslator
from porter.passes.context import FileContext
from porter.passes.tpu_lint import lint_tpu
from porter.passes.tpu_lint_kinds import KINDS, summary_line

ROOT = Path(__file__).resolve().parents[2]
LINT_FIXTURES = ROOT / "fixtures" / "tpu_lint"
CLEAN_FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
MARKER = re.compile(r"#\s*tpu-lint:\s*([\w, -]+)$")
HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def lint_file(path, init_args=None):
    """The findings of `path`, from the same parse and translation `porter convert` runs (nothing written)."""
    source = parse_source(Path(path), Path(path).name)
    trained, _ = read_training_code(source)
    main_class = choose_main_class(source, None, trained)
    ctx = FileContext(source, main_class=main_class, init_args=init_args or {})
    FileTranslator(ctx, {}).translate(main_class)
    return lint_tpu(source, ctx)


def lint_snippet(tmp_path, code):
    path = tmp_path / "model.py"
    path.write_text(HEADER + textwrap.dedent(code).lstrip("\n"))
    return lint_file(path)


def marked(path):
    """{(line, kind)} the fixture marks with `# tpu-lint: KIND`."""
    expected = set()
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        found = MARKER.search(line)
        if found:
            expected |= {(number, kind.strip()) for kind in found.group(1).split(",")}
    return expected


def assert_fixture_findings(name, kind):
    path = LINT_FIXTURES / f"{name}.py"
    findings = lint_file(path)
    expected = marked(path)
    assert expected and {k for _, k in expected} == {kind}
    assert {(f.line, f.kind) for f in findings} == expected, [(f.line, f.kind, f.message) for f in findings]
    for finding in findings:
        assert finding.message and finding.suggestion, finding
        assert finding.kind in KINDS


def test_data_dependent_shapes():
    assert_fixture_findings("data_dependent_shapes", "data-dependent-shape")


def test_control_flow_on_tensor_values():
    assert_fixture_findings("tensor_control_flow", "tensor-control-flow")


def test_host_syncs():
    assert_fixture_findings("host_sync", "host-sync")


def test_float64():
    assert_fixture_findings("float64", "float64")


def test_int64_index_math():
    assert_fixture_findings("int64_index_math", "int64-index-math")


def test_ops_xla_cannot_compile():
    assert_fixture_findings("xla_unsupported_ops", "xla-unsupported-op")


def test_shapes_that_recompile():
    assert_fixture_findings("recompiling_shapes", "recompiling-shape")


def test_mxu_feature_sizes_suggest_the_padded_size():
    assert_fixture_findings("mxu_feature_sizes", "mxu-feature-size")
    by_line = {f.line: f for f in lint_file(LINT_FIXTURES / "mxu_feature_sizes.py")}
    assert "out_features 200 (the default of `hidden`) is padded to 256" in by_line[15].message
    assert "out_features=256" in by_line[15].suggestion
    assert "out_channels=256" in by_line[13].suggestion


def test_mxu_feature_sizes_follow_init_args():
    findings = lint_file(LINT_FIXTURES / "mxu_feature_sizes.py", init_args={"hidden": 256})
    assert 15 not in {f.line for f in findings}


def test_mxu_per_core_batch_size():
    assert_fixture_findings("mxu_batch_size", "mxu-batch-size")
    (finding,) = lint_file(LINT_FIXTURES / "mxu_batch_size.py")
    assert "batch size 12" in finding.message and "1.5 examples per core" in finding.message
    assert "--batch-size 16 on one chip" in finding.suggestion and "64 (8 per core)" in finding.suggestion
    assert finding.class_name is None


def test_constructor_default_overridden_by_a_caller_is_not_read(tmp_path):
    findings = lint_snippet(tmp_path, """
        class Block(nn.Module):
            def __init__(self, width=200):
                super().__init__()
                self.fc = nn.Linear(64, width)

            def forward(self, x):
                return self.fc(x)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block(width=256)

            def forward(self, x):
                return self.block(x)
    """)
    assert findings == []


def test_static_values_stay_quiet(tmp_path):
    findings = lint_snippet(tmp_path, """
        class Net(nn.Module):
            def __init__(self, features=16, use_gate=True):
                super().__init__()
                self.fc = nn.Linear(features, features)
                self.use_gate = use_gate

            def forward(self, x, mask=None, steps: int = 2):
                b, c = x.shape
                if x.dim() == 2 and x.size(1) > 3 and self.training:
                    x = x + 0
                if mask is not None and self.use_gate:
                    x = x * mask
                for _ in range(steps):
                    x = self.fc(x)
                while steps > 0:
                    steps -= 1
                assert x.shape[-1] == c, f"expected {c} features"
                print(x.shape)
                x[x < 0] = 0.0
                idx = torch.arange(b)
                return x.view(b, -1)[idx, : x.size(1) // 2]
    """)
    assert findings == [], [(f.line, f.kind, f.message) for f in findings]


def test_a_staticmethods_size_arguments_are_no_tensor_values(tmp_path):
    """A `@staticmethod` has no `self`: its second parameter (`groups`, handed `self.groups`) is not the data (it was
    taken for it: a false 'recompiling shape' on `x.view(b, c // groups, groups, h, w)`, a TSM's shift)."""
    findings = lint_snippet(tmp_path, """
        class Net(nn.Module):
            def __init__(self, groups=2):
                super().__init__()
                self.groups = groups

            @staticmethod
            def fold(x, groups):
                b, c, h, w = x.size()
                return x.view(b, c // groups, groups, h, w).mean(2)

            def forward(self, x):
                return self.fold(x, self.groups)
    """)
    assert findings == [], [(f.line, f.kind, f.message) for f in findings]


def test_a_fill_value_from_tensor_values_is_no_size(tmp_path):
    """GPT-2's `torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype)`: the fill value is no size; a size read
    from tensor values still is one."""
    findings = lint_snippet(tmp_path, """
        class Net(nn.Module):
            def forward(self, w):
                mask_value = torch.full([], w.max(), dtype=w.dtype)
                shift = w.new_full((2,), w.min())
                return w + mask_value + shift.sum() + torch.full((int(w.max()),), 1.0).sum()
    """)
    assert {(f.line, f.kind) for f in findings} == {(10, "host-sync"), (10, "recompiling-shape")}, \
        [(f.line, f.kind, f.message) for f in findings]


def test_host_syncs_outside_the_step_are_not_reported(tmp_path):
    findings = lint_snippet(tmp_path, """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                print(self.fc.weight.sum().item())

            def describe(self):
                return self.fc.weight.tolist()

            def forward(self, x):
                return self.fc(x)


        if __name__ == "__main__":
            model = Net()
            print(model(torch.randn(2, 4)).sum().item())
    """)
    assert findings == []


def test_helpers_called_by_forward_are_linted(tmp_path):
    findings = lint_snippet(tmp_path, """
        def count_active(h):
            return h.nonzero().shape[0]


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def gate(self, h):
                return h * h.max().item()

            def forward(self, x):
                h = self.gate(self.fc(x))
                return h + count_active(h)
    """)
    assert {(f.line - HEADER.count("\n"), f.kind) for f in findings} == {(2, "data-dependent-shape"),
                                                                         (11, "host-sync")}


# Clean fixtures whose training code uses a batch of 4 (large images / videos): misaligned on every TPU slice.
SMALL_BATCH_FIXTURES = {"unet", "conv3d_video"}


@pytest.mark.parametrize("path", CLEAN_FIXTURES, ids=lambda p: p.stem)
def test_clean_fixtures_report_none(path):
    findings = [(f.line, f.kind, f.message) for f in lint_file(path)]
    if path.stem in SMALL_BATCH_FIXTURES:
        assert [kind for _, kind, _ in findings] == ["mxu-batch-size"], findings
        assert "batch size 4 " in findings[0][2]
    else:
        assert findings == []


def test_summary_line_counts_by_kind():
    findings = [{"kind": "host-sync"}, {"kind": "float64"}, {"kind": "float64"}]
    assert summary_line(findings) == "TPU lint: 3 findings (host sync 1, float64 2); see PORTING.md"
    assert summary_line([]) is None
