"""scripts/setup.sh touches the system only when asked: chromium is installed with apt-get under
PORTER_INSTALL_BROWSER=1 or --with-browser, never by default, and each step prints a progress line.

The script runs on a copy of itself beside a stand-in .venv/bin/python (pip and the import check succeed at
once) with stand-ins for `apt-get` and `id` (root) that record their calls: nothing is installed for real.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL_TOOLS = ("bash", "cat", "dirname", "grep", "sed")


def _executable(path, text):
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def sandbox(tmp_path):
    """(run(*arguments, **environment) -> CompletedProcess, apt-get call log) on a copy of setup.sh."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    _executable(tmp_path / ".venv" / "bin" / "python", "#!/bin/sh\nexit 0\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in REAL_TOOLS:
        (tools / name).symlink_to(shutil.which(name))
    log = tmp_path / "apt-calls"
    _executable(tools / "apt-get", f'#!/bin/sh\necho "$*" >> {log}\n')
    _executable(tools / "id", "#!/bin/sh\necho 0\n")

    def run(*arguments, **environment):
        env = {"PATH": str(tools), "HOME": str(tmp_path), **environment}
        return subprocess.run([str(tools / "bash"), str(tmp_path / "scripts" / "setup.sh"), *arguments],
                              capture_output=True, text=True, env=env, timeout=60, check=False)

    return run, log


def test_default_set_up_never_runs_apt_get_and_says_why_the_browser_test_skips(sandbox):
    run, log = sandbox
    result = run()
    assert result.returncode == 0, result.stderr
    assert not log.exists(), log.read_text()
    assert "PORTER_INSTALL_BROWSER=1" in result.stdout and "skipped" in result.stdout
    assert "setup: .venv ready" in result.stdout
    # GluonNLP's sources (tests/mxnet/test_third_party_gluon.py): fetched into the git-ignored .cache, and when that
    # cannot be done (no pip download, no tar here) the script says the tests skip and carries on
    assert "GluonNLP 0.10.0's sdist" in result.stdout and "its tests are skipped" in result.stderr


@pytest.mark.parametrize("how", ["variable", "flag"])
def test_browser_is_installed_when_asked(sandbox, how):
    run, log = sandbox
    result = run("--with-browser") if how == "flag" else run(PORTER_INSTALL_BROWSER="1")
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert any("install" in call and "chromium" in call for call in calls), calls
    assert not any("upgrade" in call.split() or "dist-upgrade" in call for call in calls), calls


def test_each_step_prints_a_progress_line(sandbox):
    run, _ = sandbox
    lines = run().stdout.splitlines()
    assert "setup: installing torch 2.13.0 (CPU)..." in lines
    assert any(line.startswith("setup: installing porter") for line in lines)
    assert lines.index("setup: installing torch 2.13.0 (CPU)...") < len(lines) - 1


def test_unknown_option_is_one_line_and_exit_2(sandbox):
    run, log = sandbox
    result = run("--wiht-browser")
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "setup: unknown option --wiht-browser (see --help)"]
    assert not log.exists()


def test_browser_skip_reason_names_the_opt_in():
    from tests.report.test_html_report import needs_browser

    assert "PORTER_INSTALL_BROWSER=1" in needs_browser.kwargs["reason"]


def test_a_failed_browser_install_warns_and_keeps_the_venv(sandbox, tmp_path):
    run, log = sandbox
    (tmp_path / "tools" / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 100\n')
    result = run("--with-browser")
    assert result.returncode == 0
    assert "setup: warning: apt-get could not install chromium" in result.stderr
    assert "setup: .venv ready" in result.stdout
