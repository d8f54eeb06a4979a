"""PORTING.md: what was converted, what was adjusted and where, what is stubbed, what was not carried over."""

from porter.report.model import build_report
from porter.report.render import markdown_environment


def render_porting_md(source, ctx, manifest, dropped, warnings, module_text=None):
    report = build_report(source, ctx, manifest, dropped, warnings, module_text)
    return render_report_markdown(report)


def render_report_markdown(report):
    return markdown_environment().get_template("PORTING.md.j2").render(report=report)
