"""report.html: the porting report as one self-contained page (inline CSS, no scripts from the network)."""

from porter.report.model import build_report
from porter.report.render import html_environment


def render_report_html(source, ctx, manifest, module_text=None):
    report = build_report(source, ctx, manifest, module_text=module_text)
    return render_report_page(report)


def render_report_page(report):
    return html_environment().get_template("report.html.j2").render(report=report)
