"""The Report model: generated line numbers come from the formatted module when the conversion hands it over."""

from porter.report.model import build_report
from porter.report.porting_md import render_report_markdown
from tests.report.helpers import convert_snippet

CODE = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)
"""


def test_line_numbers_from_ctx_generated_files(tmp_path):
    conversion = convert_snippet(tmp_path, CODE)
    translator = conversion.translator
    translator.ctx.generated_files = conversion.files  # convert() hands the formatted files over
    numbered = build_report(translator.source, translator.ctx, conversion.manifest, [], [])
    assert numbered.numbered
    module = conversion.files["model_keras.py"].splitlines()
    row = next(r for w in numbered.classes[0].walks for r in w.rows if r.source_start == 12)
    assert module[row.generated_start - 1].strip() == "return self.fc(x)"
    assert row.anchor == "Net-L12"
    markdown = render_report_markdown(numbered)
    assert f"| `\u00a0\u00a0\u00a0\u00a0return self.fc(x)` | {row.generated_start} |" in markdown


def test_report_is_cached_per_conversion(tmp_path):
    conversion = convert_snippet(tmp_path, CODE)
    translator = conversion.translator
    first = build_report(translator.source, translator.ctx, conversion.manifest, [(1, "x")], ["w"])
    assert build_report(translator.source, translator.ctx, conversion.manifest) is first
    assert first.dropped == [(1, "x")]
