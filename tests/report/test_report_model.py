"""The Report model: generated line numbers come from the formatted module when the conversion hands it over."""

import re

from porter.report.model import build_report
from porter.report.porting_md import render_report_markdown
from tests.report.helpers import convert_snippet, report_of

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


OPS_CODE = """
    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.net = nn.Sequential(nn.Conv1d(c, c, 3, padding=1), nn.BatchNorm1d(c), nn.ReLU())

        def forward(self, x):
            a, b = torch.chunk(x, 2, dim=1)
            return torch.sigmoid(self.net(torch.cat([a, b], dim=1)))


    class Stack(nn.Sequential):
        def __init__(self, c):
            super().__init__(nn.Conv1d(c, c, 1), nn.ReLU())
"""


def test_ops_are_the_layers_built_and_the_names_the_source_calls(tmp_path):
    report = report_of(convert_snippet(tmp_path, OPS_CODE, class_name="Block", input_specs=["4,8"]))
    ops = {c.name: c.ops for c in report.classes}
    assert ops["Block"] == ["torch.cat", "torch.chunk", "torch.nn.BatchNorm1d", "torch.nn.Conv1d", "torch.nn.ReLU",
                            "torch.sigmoid"]  # not torch.split / torch.nn.functional.sigmoid, the rules' names
    assert ops["Stack"] == ["torch.nn.Conv1d", "torch.nn.ReLU"]
    markdown = render_report_markdown(report)
    assert "| [`Stack`](#class-Stack) |" in markdown and "| 2 | 0 |" in markdown.split("[`Stack`]")[1].split("\n")[0]


LONG_STATEMENT = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1),
                nn.BatchNorm2d(8),
            )

        def forward(self, x):
            return self.body(x)
"""


def test_a_note_on_a_later_line_of_a_statement_links_to_that_line(tmp_path):
    report = report_of(convert_snippet(tmp_path, LONG_STATEMENT, input_specs=["3,8,8"]))
    notes = report.classes[0].notes
    assert {note.line for note, _ in notes} >= {10, 11}, notes  # the Conv2d and BatchNorm2d lines
    for note, anchor in notes:
        if anchor and anchor.startswith("Net-L"):
            assert anchor == f"Net-L{note.line}", (note.line, anchor)
    markdown = render_report_markdown(report)
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    assert {"Net-L9", "Net-L10", "Net-L11"} <= anchors
    assert "[line 10](#Net-L10)" in markdown and "[line 11](#Net-L11)" in markdown


def test_porting_md_says_how_to_load_the_weights(tmp_path):
    conversion = convert_snippet(tmp_path, CODE)
    markdown = conversion.files["PORTING.md"]
    section = markdown.split("## Loading weights", 1)[1].split("\n## ", 1)[0]
    assert "from model_keras import Net" in section and "model = Net()" in section
    assert 'model.load_weights("<name>.weights.h5")' in section
    assert "load_state_dict(model, " in section  # a torch state dict of numpy arrays, without --weights


def test_report_html_says_how_to_load_the_weights(tmp_path):
    html = convert_snippet(tmp_path, CODE).files["report.html"]
    section = html.split('<section id="loading-weights">', 1)[1].split("</section>", 1)[0]
    assert "from model_keras import Net" in section and 'model.load_weights("&lt;name&gt;.weights.h5")' in section
