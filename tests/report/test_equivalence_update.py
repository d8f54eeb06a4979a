"""`update_reports`: porter verify's results fill the marked sections of PORTING.md and report.html, nothing else."""

import json

import pytest

from porter.cli import main
from porter.report import update_reports
from porter.report.equivalence import normalize_results, region_pattern
from tests.report.helpers import ROOT, parse_side_by_side

RESULTS = {
    "results": [
        {"class": "LeNet5", "verdict": "pass", "examples": 25, "max_abs_error": 1.234e-06, "max_rel_error": 3.1e-07,
         "grad_error": 2e-06, "tolerance": 1e-4},
        {"class": "Helper", "status": "failed", "max_rel_error": 0.31, "message": "conv2 | diverged",
         "diverged_at": {"submodule": "conv2", "source": "lenet.py:17", "error_before": 1e-7, "error_after": 0.31}},
    ],
    "seed": 0, "precision": "float32",
}


@pytest.fixture
def out(tmp_path):
    target = tmp_path / "lenet_keras"
    assert main(["convert", str(ROOT / "fixtures" / "lenet.py"), "-o", str(target)]) == 0
    return target


def _outside_regions(text):
    for name in ("equivalence-summary", "equivalence"):
        text = region_pattern(name).sub("", text)
    return text


def test_reports_say_not_run_until_verify_fills_them(out, capsys):
    markdown, html = (out / "PORTING.md").read_text(), (out / "report.html").read_text()
    assert "Not run yet" in markdown and "not run yet" in markdown
    assert 'data-verdict="not-run"' in html
    before = {name: (out / name).read_text() for name in ("PORTING.md", "report.html")}

    results = out / "verify-results.json"
    results.write_text(json.dumps(RESULTS))
    assert sorted(update_reports(out, results)) == ["PORTING.md", "report.html"]

    markdown, html = (out / "PORTING.md").read_text(), (out / "report.html").read_text()
    assert "| `LeNet5` | pass | 25 | 1.23e-06 | 3.1e-07 | 2e-06 | 0.0001 |" in markdown
    assert "**FAIL**: 1 fail, 1 pass" in markdown
    assert "conv2 \\| diverged" in markdown and "`conv2` (lenet.py:17): error 1e-07 before, error 0.31 after" in markdown
    assert 'id="equivalence-verdict" data-verdict="fail"' in html
    assert '<tr data-class="LeNet5" data-verdict="pass">' in html
    for name in ("PORTING.md", "report.html"):  # only the marked regions changed
        assert _outside_regions((out / name).read_text()) == _outside_regions(before[name])
    parse_side_by_side(html)  # still well-formed enough to parse

    # idempotent, and a later run replaces the earlier results
    assert update_reports(out, RESULTS) == []
    update_reports(out, [{"class": "LeNet5", "passed": True}])
    markdown = (out / "PORTING.md").read_text()
    assert "Helper" not in markdown and "pass: 1 pass" in markdown

    # porter diff treats the verify sections as verify's: an unchanged source still diffs clean
    capsys.readouterr()
    assert main(["diff", str(ROOT / "fixtures" / "lenet.py"), "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""


def test_reports_without_markers_get_the_section_appended(tmp_path):
    (tmp_path / "PORTING.md").write_text("# Old report\n")
    (tmp_path / "report.html").write_text("<html><body><main><h1>Old</h1></main></body></html>\n")
    assert sorted(update_reports(tmp_path, RESULTS)) == ["PORTING.md", "report.html"]
    assert (tmp_path / "PORTING.md").read_text().startswith("# Old report\n\n<!-- porter:equivalence:begin -->")
    assert "<section id=\"equivalence\">" in (tmp_path / "report.html").read_text().split("</main>")[0]


def test_normalize_results_accepts_lists_and_aliases():
    normalized = normalize_results([{"name": "A", "passed": False}, {"class": "B", "status": "SKIPPED"}])
    assert [(r["class"], r["verdict"]) for r in normalized["rows"]] == [("A", "fail"), ("B", "skipped")]
    assert normalized["verdict"] == "fail"
    assert normalize_results(None) == {"ran": False}
    with pytest.raises(TypeError):
        normalize_results(42)
