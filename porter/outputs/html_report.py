"""Output producer: OUT/report.html, the browsable porting report (see porter/report/html_report.py)."""

from porter.report.html_report import render_report_html


def produce(source, ctx, manifest, options):
    return {"report.html": render_report_html(source, ctx, manifest)}
