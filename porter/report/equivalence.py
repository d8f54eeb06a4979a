"""The equivalence-results sections of PORTING.md and report.html, which `porter verify` fills in.

`convert` writes both reports with the sections saying "not run yet"; `update_reports(out_dir, results)` rewrites
only the marked regions of the existing files, so nothing else changes and no re-conversion is needed.
`porter diff` treats the marked regions as verify's, not convert's (see `carry_verify_regions`).

Results (a dict, a list of per-class results, or a path to a JSON file holding either):

    {"results": [{"class": "LeNet5", "verdict": "pass" | "fail" | "error" | "skipped",
                  "examples": 25, "max_abs_error": 1.2e-06, "max_rel_error": 3.4e-07, "grad_error": 2e-06,
                  "tolerance": 0.0001, "precision": "float32", "message": "...",
                  "diverged_at": {"submodule": "conv2", "source": "lenet.py:17",
                                  "error_before": 1e-07, "error_after": 0.31}}],
     "seed": 0, "examples": 25, "precision": "float32", "command": "porter verify lenet_keras"}

Only "class" and "verdict" (or "status", or a boolean "passed") are required; other keys are shown when present.
Never put timestamps or absolute paths in them: the reports stay byte-for-byte reproducible.
"""

import json
import os
import re
import tempfile
from pathlib import Path

NOT_RUN = {"ran": False}
REGIONS = ("equivalence-summary", "equivalence")
_VERDICTS = {"pass": "pass", "passed": "pass", "ok": "pass", "equal": "pass", "equivalent": "pass", "true": "pass",
             "fail": "fail", "failed": "fail", "mismatch": "fail", "false": "fail", "error": "error",
             "skip": "skipped", "skipped": "skipped"}
_NUMBERS = ("max_abs_error", "max_rel_error", "grad_error", "tolerance")


def region_pattern(name):
    return re.compile(rf"<!-- porter:{re.escape(name)}:begin -->.*?<!-- porter:{re.escape(name)}:end -->",
                      re.DOTALL)


def normalize_results(results):
    """Verify results (dict, list or JSON path) -> the `equivalence` dict the templates render."""
    if results is None:
        return dict(NOT_RUN)
    if isinstance(results, (str, Path)):
        results = json.loads(Path(results).read_text())
    if isinstance(results, list):
        results = {"results": results}
    if not isinstance(results, dict):
        raise TypeError("verify results must be a dict, a list of per-class results or a JSON file of them")
    rows = []
    for entry in results.get("results", []):
        if not isinstance(entry, dict):
            continue
        verdict = entry.get("verdict", entry.get("status"))
        if verdict is None and "passed" in entry:
            verdict = bool(entry["passed"])
        verdict = _VERDICTS.get(str(verdict).lower(), str(verdict).lower() if verdict is not None else "unknown")
        row = {"class": str(entry.get("class", entry.get("name", "?"))), "verdict": verdict,
               "examples": entry.get("examples", entry.get("cases")),
               "precision": entry.get("precision"), "message": entry.get("message")}
        for key in _NUMBERS:
            row[key] = _format_number(entry.get(key))
        diverged = entry.get("diverged_at")
        if isinstance(diverged, dict):
            parts = [f"`{diverged['submodule']}`" if diverged.get("submodule") else None,
                     f"({diverged['source']})" if diverged.get("source") else None]
            errors = [f"error {_format_number(diverged[k])} {label}" for k, label in
                      (("error_before", "before"), ("error_after", "after")) if diverged.get(k) is not None]
            row["diverged_at"] = " ".join(p for p in parts if p) + (f": {', '.join(errors)}" if errors else "")
        else:
            row["diverged_at"] = str(diverged) if diverged else None
        rows.append(row)
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    overall = "pass" if rows and all(r["verdict"] in ("pass", "skipped") for r in rows) else \
        "fail" if any(r["verdict"] == "fail" for r in rows) else "error" if rows else "unknown"
    details = {key: results[key] for key in ("command", "seed", "examples", "precision", "tolerance")
               if results.get(key) is not None}
    return {"ran": True, "verdict": overall, "rows": rows, "counts": dict(sorted(counts.items())),
            "details": details}


def _format_number(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return f"{value:.3g}"
    return str(value)


def render_regions(equivalence):
    """{region name: text} for Markdown and HTML: {"md": {...}, "html": {...}}."""
    from porter.report.render import html_environment, markdown_environment

    rendered = {}
    for kind, env, template in (("md", markdown_environment(), "_equivalence.md.j2"),
                                ("html", html_environment(), "_equivalence.html.j2")):
        module = env.get_template(template).module
        rendered[kind] = {"equivalence-summary": str(module.summary(equivalence)),
                          "equivalence": str(module.section(equivalence))}
    return rendered


def replace_regions(text, regions):
    """`text` with each marked region replaced by `regions[name]` (which carries its own markers)."""
    for name, replacement in regions.items():
        pattern = region_pattern(name)
        if pattern.search(text):
            text = pattern.sub(lambda _match, r=replacement: r, text, count=1)
    return text


def extract_regions(text):
    """{region name: marked text} of the verify regions found in `text`."""
    found = {}
    for name in REGIONS:
        match = region_pattern(name).search(text)
        if match:
            found[name] = match.group(0)
    return found


def carry_verify_regions(fresh, on_disk):
    """`fresh` (what convert produces) with the verify regions of `on_disk`: what convert + verify would leave."""
    return replace_regions(fresh, extract_regions(on_disk))


def update_reports(out_dir, verify_results):
    """Rewrite the equivalence sections of OUT/PORTING.md and OUT/report.html from `verify_results`.

    Only the marked regions change. Returns the names of the files rewritten (missing reports are skipped; a report
    without markers, from an older porter, gets the section appended).
    """
    out_dir = Path(out_dir)
    equivalence = normalize_results(verify_results)
    regions = render_regions(equivalence)
    written = []
    for name, kind in (("PORTING.md", "md"), ("report.html", "html")):
        path = out_dir / name
        if not path.is_file():
            continue
        text = path.read_text()
        if all(region_pattern(region).search(text) for region in REGIONS):
            updated = replace_regions(text, regions[kind])
        else:
            updated = replace_regions(text, regions[kind])
            if not region_pattern("equivalence").search(updated):
                section = regions[kind]["equivalence"]
                if kind == "html" and "</main>" in updated:
                    updated = updated.replace("</main>", section + "\n</main>", 1)
                else:
                    updated = updated.rstrip("\n") + "\n\n" + section + "\n"
        if updated != text:
            _write_atomic(path, updated)
            written.append(name)
    return written


def _write_atomic(path, text):
    descriptor, temporary = tempfile.mkstemp(prefix=".porter-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
