"""Porting reports: PORTING.md and report.html, and `update_reports` for `porter verify`'s results."""

from porter.report.equivalence import update_reports

__all__ = ["update_reports"]
