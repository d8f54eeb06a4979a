"""Shared helpers for the report tests: convert a snippet or a fixture and build its Report."""

import textwrap
from html.parser import HTMLParser
from pathlib import Path

from porter.convert import ConvertOptions
from porter.report.model import build_report
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def convert_snippet(tmp_path, code, name="model", **options):
    source = tmp_path / f"{name}.py"
    source.write_text(HEADER + textwrap.dedent(code).lstrip("\n"))
    return convert(ConvertOptions(source, tmp_path / f"{name}_keras", **options))


def report_of(conversion, numbered=True):
    """The Report of a conversion, with the real module text (generated line numbers) unless `numbered` is False."""
    translator = conversion.translator
    module = conversion.files[conversion.manifest["sources"][0]["module"]] if numbered else None
    return build_report(translator.source, translator.ctx, conversion.manifest, conversion.emitter.dropped,
                        conversion.warnings, module_text=module)


def notes_of(report, class_name=None):
    found = []
    for c in report.classes:
        if class_name is None or c.name == class_name:
            found.extend(note for note, _ in c.notes)
    for notes in report.function_notes.values():
        found.extend(notes)
    return found


class SideBySideParser(HTMLParser):
    """Collects the side-by-side tables of report.html: [{class, method, rows: [{id, source, generated, ...}]}]."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.row, self.cell, self.ids, self.external = [], None, None, [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        for key in ("src", "href"):
            value = attrs.get(key) or ""
            if value and not value.startswith("#"):
                self.external.append(value)
        if tag == "link" or (tag == "script" and attrs.get("src")):
            self.external.append(f"<{tag}>")
        if tag == "table" and "side-by-side" in (attrs.get("class") or "").split():
            self.tables.append({"class": attrs.get("data-class"), "method": attrs.get("data-method"), "rows": []})
        elif tag == "tr" and self.tables and attrs.get("class") in ("statement", "context", "notes"):
            self.row = {"kind": attrs.get("class"), "id": attrs.get("id"),
                        "source_line": attrs.get("data-source-line"),
                        "generated_line": attrs.get("data-generated-line"), "source": "", "generated": "", "text": ""}
            self.tables[-1]["rows"].append(self.row)
        elif tag == "td" and self.row is not None:
            classes = (attrs.get("class") or "").split()
            self.cell = "source" if "src" in classes else "generated" if "gen" in classes else "text"

    def handle_endtag(self, tag):
        if tag == "td":
            self.cell = None
        elif tag in ("tr", "table"):
            self.row, self.cell = None, None

    def handle_data(self, data):
        if self.row is not None and self.cell is not None:
            self.row[self.cell] += data


def parse_side_by_side(html):
    parser = SideBySideParser()
    parser.feed(html)
    parser.close()
    return parser
