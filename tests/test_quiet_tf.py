"""porter.quiet_tf: TensorFlow's start-up notes (printed twice, before TF_CPP_MIN_LOG_LEVEL applies) are held back,
everything else written to stderr meanwhile is passed on, and TF_CPP_MIN_LOG_LEVEL=0 still shows them all."""

import os
import subprocess
import sys

import pytest

from porter.quiet_tf import _start_up_noise

ONEDNN = ("I0000 00:00:1796127986.905927    6930 port.cc:153] oneDNN custom operations are on. You may see slightly "
          "different numerical results\n")
NOTICE = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
OLD_STYLE = "2026-01-30 22:44:42.456316: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on.\n"
WARNING = "W0000 00:00:1796127986.905927    6930 some.cc:1] a real warning\n"
ERROR = "E0000 00:00:1796127986.905927    6930 some.cc:1] a real error\n"
CONTINUATION = "To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow.\n"


@pytest.mark.parametrize(("line", "hidden_at"), [
    (ONEDNN, 1), (OLD_STYLE, 1), (CONTINUATION, 1), (NOTICE, 0), (WARNING, 2), (ERROR, 3),
    ("Traceback (most recent call last):\n", None), ("I0000 is not a log line\n", None),
    ("/x.py:3: UserWarning: kept\n", None),
])
def test_lines_hidden_from_the_level_that_hides_their_severity(line, hidden_at):
    for level in range(4):
        expected = hidden_at is not None and level >= hidden_at
        assert _start_up_noise(line, level) is expected, (line, level)


def _python(code, **environment):
    # TensorFlow as a user starts it: an in-process weight conversion earlier in this worker may have set
    # TF_ENABLE_ONEDNN_OPTS=0 (which silences the notice these tests look for)
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CPP_MIN_LOG_LEVEL",
                                                                         "TF_ENABLE_ONEDNN_OPTS")}
    env.update(environment)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)


QUIET_IMPORT = """
import sys
from porter.quiet_tf import quiet_start_up
print("before", file=sys.stderr, flush=True)
with quiet_start_up():
    import tensorflow as tf
    print("inside", file=sys.stderr)
print("after", file=sys.stderr)
print(float(tf.constant(1.0) + 1))
"""


def test_tensorflow_prints_its_notes_without_quieting_even_at_level_3():
    result = _python("import tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    assert result.returncode == 0, result.stderr[-2000:]
    if "oneDNN custom operations are on" not in _python("import tensorflow", TF_CPP_MIN_LOG_LEVEL="0").stderr:
        pytest.skip("this host's TensorFlow does not turn oneDNN on (a CPU it does not use it for): no notice to "
                    "hold back")
    assert result.stderr.count("oneDNN custom operations are on") == 2  # the fault quiet_start_up holds back


@pytest.mark.parametrize("level", [None, "3"])
def test_quiet_import_passes_on_only_other_lines(level):
    result = _python(QUIET_IMPORT, **({"TF_CPP_MIN_LOG_LEVEL": level} if level else {}))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == "2.0\n"
    assert result.stderr.splitlines() == ["before", "inside", "after"]


def test_level_0_shows_everything():
    result = _python(QUIET_IMPORT, TF_CPP_MIN_LOG_LEVEL="0")
    assert result.returncode == 0
    start_up = [line for line in result.stderr.splitlines() if _start_up_noise(line + "\n", 1)]
    assert start_up and "inside" in result.stderr  # (TF's start-up notes: oneDNN's, or the CPU instructions one)
