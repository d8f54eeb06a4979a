"""TPU lint findings reach every output: the manifest's `tpu_lint` list, PORTING.md's "TPU lint" section (linked to
the side-by-side row), report.html, and the one-line summary of `porter convert` (which keeps its exit code)."""

import functools
import json
import shutil
from pathlib import Path

import pytest

from porter.convert import ConvertOptions, convert
from tests.robustness.conftest import run_porter

ROOT = Path(__file__).resolve().parents[2]
FLOAT64_FIXTURE = ROOT / "fixtures" / "tpu_lint" / "float64.py"


@pytest.fixture(scope="module")
def conversion(tmp_path_factory):
    out = tmp_path_factory.mktemp("lint") / "float64_keras"
    return convert(ConvertOptions(FLOAT64_FIXTURE, out))


def test_manifest_lists_findings_per_source(conversion):
    (source,) = conversion.manifest["sources"]
    lint = source["tpu_lint"]
    assert [(f["line"], f["kind"]) for f in lint] == [(14, "float64"), (18, "float64"), (20, "float64")]
    assert all(set(f) == {"line", "kind", "class", "message", "suggestion"} for f in lint)
    assert lint[1]["class"] == "PreciseCentering" and "float32" in lint[1]["suggestion"]
    assert set(source["classes"][0]) == {"name", "source_line", "status", "example_inputs", "unsupported"}
    assert json.loads(conversion.files["porter-manifest.json"])["sources"][0]["tpu_lint"] == lint


def test_porting_md_has_a_tpu_lint_section_with_anchors(conversion):
    text = conversion.files["PORTING.md"]
    section = text[text.index("## <a id=\"tpu-lint\"></a>TPU lint"):]
    assert "3 findings (float64 3)" in section
    assert "[float64.py:18](#PreciseCentering-L18) in `PreciseCentering`" in section
    assert "- float64 (`float64`): TPUs have no float64 arithmetic" in section
    assert '<a id="PreciseCentering-L18"></a>' in text  # the link lands on the side-by-side row
    assert "| TPU lint | [3 findings (float64 3)](#tpu-lint) |" in text


def test_report_html_lists_findings(conversion):
    page = conversion.files["report.html"]
    section = page[page.index('<section id="tpu">'):]
    section = section[:section.index("</section>")]
    assert section.count('<tr data-line=') == 3
    assert '<tr data-line="18" data-kind="float64"><td><a href="#PreciseCentering-L18">float64.py:18</a>' in section
    assert '<div class="value" id="count-tpu">3</div>' in page


def test_clean_conversion_says_none(tmp_path):
    source = tmp_path / "net.py"
    source.write_text("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n"
                      "    def forward(self, x):\n        return self.fc(x)\n")
    result = convert(ConvertOptions(source, tmp_path / "out"))
    assert result.manifest["sources"][0]["tpu_lint"] == []
    assert "None: nothing in the model code is known to compile badly" in result.files["PORTING.md"]
    assert "| TPU lint | no findings |" in result.files["PORTING.md"]


def test_convert_prints_one_summary_line_and_keeps_the_exit_code(capsys, tmp_path):
    source = tmp_path / "float64.py"
    shutil.copy(FLOAT64_FIXTURE, source)
    result = functools.partial(run_porter, capsys)("convert", source, "-o", tmp_path / "out")
    assert result.code == 0, result.err
    assert "porter: TPU lint: 3 findings (float64 3); see PORTING.md" in result.out.splitlines()
