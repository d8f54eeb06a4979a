"""Porting reports: PORTING.md and report.html."""
