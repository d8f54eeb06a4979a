"""Import TensorFlow without its start-up notes on stderr.

While TensorFlow's C++ libraries load they log a oneDNN note (once per library: twice) and a CPU-feature note,
before absl's logging is set up, so TF_CPP_MIN_LOG_LEVEL does not hide them. `quiet_start_up()` holds what is
written to the stderr file descriptor meanwhile, then passes on every line except log lines below
TF_CPP_MIN_LOG_LEVEL (set to 1, INFO hidden, when unset) and absl's "before absl::InitializeLog()" notice.
TF_CPP_MIN_LOG_LEVEL=0 shows everything. The oneDNN kernels stay on (TF_ENABLE_ONEDNN_OPTS is left alone, so
numerics do not change): only the notes go.

Stdlib only. Generated train_tpu.py scripts carry a copy of everything below the imports (porter.training.render).
"""

import contextlib
import os
import re
import sys
import tempfile

_LOG_LINE = re.compile(r"^(?:(?P<absl>[IWEF])\d{4} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d [\d:.]+: (?P<tf>[IWEF]) )")
_SEVERITY = {"I": 0, "W": 1, "E": 2, "F": 3}
_NOTICES = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",)
_INFO_CONTINUATIONS = ("To enable the following instructions:",)  # second line of the CPU-feature note


def _start_up_noise(line, level):
    """True for a line TensorFlow's start-up logs that TF_CPP_MIN_LOG_LEVEL=`level` would hide."""
    if line.startswith(_NOTICES):
        return True
    if line.startswith(_INFO_CONTINUATIONS):
        return level >= 1
    match = _LOG_LINE.match(line)
    return match is not None and _SEVERITY[match.group("absl") or match.group("tf")] < level


@contextlib.contextmanager
def quiet_start_up():
    """Hold back TensorFlow's start-up notes on stderr while the block runs (put `import tensorflow` in it).

    Log lines below TF_CPP_MIN_LOG_LEVEL (set to 1 when unset: INFO hidden) are dropped and every other line is
    passed on when the block ends; TF_CPP_MIN_LOG_LEVEL=0 shows them all.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    level = int(os.environ["TF_CPP_MIN_LOG_LEVEL"]) if os.environ["TF_CPP_MIN_LOG_LEVEL"].isdigit() else 0
    if level < 1 or "tensorflow" in sys.modules:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode("utf-8", "replace").splitlines(keepends=True)
            sys.stderr.write("".join(line for line in lines if not _start_up_noise(line, level)))
            sys.stderr.flush()

