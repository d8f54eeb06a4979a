"""report.html in a real headless Chromium: the DOM holds the side-by-side tables, and a screenshot is taken.

The browser tests skip, saying so, when Debian's `chromium` (or another Chrome) is not installed: scripts/setup.sh
installs it only when asked (PORTER_INSTALL_BROWSER=1 or --with-browser). Set PORTER_SCREENSHOT_DIR to
keep the screenshots they take.
"""

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from porter.convert import ConvertOptions, convert
from tests.report.helpers import ROOT, parse_side_by_side

BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "chrome")
                if shutil.which(name)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium installed: run scripts/setup.sh "
                                   "with PORTER_INSTALL_BROWSER=1 (or --with-browser) to install it")


def _chromium(*arguments, tmp_path, timeout=90):
    profile = tmp_path / "chromium-profile"
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
               f"--user-data-dir={profile}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=tmp_path,
                          check=False)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """resnet's report.html written to disk (several classes, blocks with if/else, helper methods)."""
    directory = tmp_path_factory.mktemp("report")
    conversion = convert(ConvertOptions(ROOT / "fixtures" / "resnet.py", directory / "resnet_keras"))
    page = directory / "report.html"
    page.write_text(conversion.files["report.html"])
    return conversion, page


@needs_browser
def test_chromium_dom_holds_the_side_by_side_tables(rendered, tmp_path):
    conversion, page = rendered
    result = _chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = parse_side_by_side(result.stdout)
    expected = parse_side_by_side(page.read_text())
    assert [(t["class"], t["method"]) for t in dom.tables] == [(t["class"], t["method"]) for t in expected.tables]
    for name in conversion.translator.source.classes:
        forward = [t for t in dom.tables if t["class"] == name and t["method"] == "forward"]
        assert len(forward) == 1, f"{name}: no forward table in the rendered DOM"
        rows = [r for r in forward[0]["rows"] if r["kind"] == "statement"]
        assert rows and all(r["source"].strip() and r["generated"].strip() for r in rows)
    statement = next(r for t in dom.tables for r in t["rows"] if r["kind"] == "statement"
                     and "self.bn1(out)" in r["source"])
    assert "training=training" in statement["generated"]


@needs_browser
def test_chromium_screenshot_is_produced(rendered, tmp_path):
    _, page = rendered
    shot = tmp_path / "report.png"
    result = _chromium("--hide-scrollbars", "--window-size=1400,1800", f"--screenshot={shot}", page.as_uri(),
                       tmp_path=tmp_path)
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1800)
    assert len(data) > 50_000, "screenshot looks blank"
    keep = os.environ.get("PORTER_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "resnet-report.png")
