"""For every fixture: the reports name every class and show each forward line next to its translation."""

import re

import pytest

from tests.golden.goldens import fixture_conversion, fixture_names
from tests.report.helpers import parse_side_by_side, report_of


@pytest.fixture(params=fixture_names())
def conversion(request):
    return fixture_conversion(request.param)


def _forward_mappings(conversion, name):
    source = conversion.translator.source
    forward = source.classes[name].find_method("forward")
    if forward is None:
        return []
    position = source.positions[forward]
    starts = sorted({m.source_start for m in conversion.translator.ctx.irs[name].mappings
                     if position.start.line <= m.source_start <= position.end.line})
    return starts


def test_reports_name_every_class(conversion):
    markdown, html = conversion.files["PORTING.md"], conversion.files["report.html"]
    for name in conversion.translator.source.classes:
        assert f"`{name}`" in markdown
        assert f'id="class-{name}"' in markdown and f'id="class-{name}"' in html
        assert f'data-class="{name}"' in html


def test_every_forward_line_sits_next_to_its_translation(conversion):
    markdown = conversion.files["PORTING.md"]
    parsed = parse_side_by_side(conversion.files["report.html"])
    for name in conversion.translator.source.classes:
        starts = _forward_mappings(conversion, name)
        tables = [t for t in parsed.tables if t["class"] == name and t["method"] == "forward"]
        if not starts:
            continue
        assert len(tables) == 1, f"{name}: one forward table expected"
        rows = {row["source_line"]: row for row in tables[0]["rows"] if row["kind"] == "statement"}
        for start in starts:
            row = rows.get(str(start))
            assert row is not None, f"{name}: forward line {start} missing from report.html"
            assert row["source"].strip() and row["generated"].strip(), f"{name}: line {start} has an empty side"
            assert f'<a id="{name}-L{start}"></a>' in markdown, f"{name}: line {start} missing from PORTING.md"


def test_generated_lines_are_located_in_the_module(conversion):
    """With the formatted module at hand, every translated statement carries its real generated line numbers."""
    report = report_of(conversion)
    module_lines = conversion.files[report.module_name].splitlines()
    for c in report.classes:
        for walk in c.walks:
            for row in walk.rows:
                if row.kind != "statement":
                    continue
                assert row.generated_start is not None, f"{c.name}.{walk.source_name} line {row.source_start} " \
                                                        "not located in the generated module"
                for number, text in row.generated:
                    assert module_lines[number - 1].strip() == text.strip()


def test_walks_cover_each_method_in_order(conversion):
    report = report_of(conversion)
    for c in report.classes:
        for walk in c.walks:
            source_lines = [n for row in walk.rows for n, _ in row.source]
            generated_lines = [n for row in walk.rows for n, _ in row.generated if n is not None]
            assert source_lines == sorted(source_lines) and len(set(source_lines)) == len(source_lines)
            assert generated_lines == sorted(generated_lines), f"{c.name}.{walk.source_name}: rows out of order"
            assert walk.rows[0].source[0][1].lstrip().startswith(("def ", "async def ")), walk.rows[0]


def test_html_report_is_self_contained_and_links_resolve(conversion):
    html = conversion.files["report.html"]
    parsed = parse_side_by_side(html)
    assert parsed.external == [], f"report.html must not load anything: {parsed.external}"
    assert "<style>" in html and "http://" not in html and "https://" not in html
    targets = {href[1:] for href in re.findall(r'href="(#[^"]*)"', html)}
    missing = targets - set(parsed.ids)
    assert not missing, f"links to missing anchors: {sorted(missing)}"
    assert len(parsed.ids) == len(set(parsed.ids)), "duplicate ids"
    assert parsed.tables, "no side-by-side tables"


def test_markdown_links_resolve(conversion):
    markdown = conversion.files["PORTING.md"]
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    missing = set(re.findall(r"\]\(#([^)]+)\)", markdown)) - anchors
    assert not missing, f"PORTING.md links to missing anchors: {sorted(missing)}"


def test_markdown_renders_code_literally(conversion):
    """Rendered as GitHub does (CommonMark + tables): code cells stay code, `__init__`/`**kwargs` never emphasis."""
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(conversion.files["PORTING.md"])
    walks = sum(len(c.walks) for c in report_of(conversion).classes)
    assert html.count("<table>") >= walks + 1
    assert "<strong>" not in html and "<em>" not in html
    for name in conversion.translator.source.classes:
        assert f'<a id="class-{name}"></a>' in html
