"""A resident mxnet process for callers that run many Gluon references in one session (the test suite): mxnet's
import takes seconds, and a one-shot driver process pays it on every reference run.

`ResidentDriver(python, driver, environment).run(request_path, timeout)` hands the request to
mxnet_fork_server.py, which imported mxnet once and runs each request in a fresh fork of itself (no state carried
from one run to the next), and returns what `subprocess.run` would: a CompletedProcess with the run's exit status,
stdout and stderr. mxnet_reference.py uses it when $PORTER_MXNET_RESIDENT is set; `porter verify` and other
one-off commands keep one process per run.
"""

import atexit
import json
import subprocess
import tempfile
from pathlib import Path

SERVER = Path(__file__).resolve().with_name("mxnet_fork_server.py")
SWITCH_VARIABLE = "PORTER_MXNET_RESIDENT"
NEEDS_MKLDNN_STATUS = 75  # mxnet_fork_server.py's: the run has fused RNN layers and needs a server with MKLDNN on


class ResidentTimeout(Exception):
    """The run did not finish within its timeout (the server killed it)."""


class ResidentDriver:
    """mxnet_fork_server.py processes serving `driver` requests in `python` (started with `environment`): one with
    MKLDNN off, as `environment` says, and, once a run with fused RNN layers asks for it, one with MKLDNN on."""

    def __init__(self, python, driver, environment):
        self.plain = _Server([str(python), "-I", str(SERVER), str(driver)], environment)
        self.mkldnn = _Server(self.plain.command, {**environment, "MXNET_MKLDNN_ENABLED": "1"})

    def run(self, request_path, timeout):
        """A CompletedProcess for the driver run on `request_path`; ResidentTimeout after `timeout` seconds."""
        completed = self.plain.run(request_path, timeout)
        if completed.returncode == NEEDS_MKLDNN_STATUS:
            completed = self.mkldnn.run(request_path, timeout)
        return completed

    def close(self):
        self.plain.close()
        self.mkldnn.close()


class _Server:
    """One mxnet_fork_server.py process, started on the first run and again if it died."""

    def __init__(self, command, environment):
        self.command = command
        self.environment = environment
        self.process = None
        atexit.register(self.close)

    def run(self, request_path, timeout):
        """A CompletedProcess for the driver run on `request_path`; ResidentTimeout after `timeout` seconds. A server
        that died (an mxnet crash in the parent, not in a run) is started again once."""
        for attempt in range(2):
            try:
                return self._run_once(request_path, timeout)
            except (BrokenPipeError, EOFError):
                self.close()
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def _run_once(self, request_path, timeout):
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True, env=self.environment)
        with tempfile.TemporaryDirectory(prefix="porter-mxnet-run-") as logs:
            stdout, stderr = Path(logs) / "stdout.txt", Path(logs) / "stderr.txt"
            order = {"request": str(request_path), "stdout": str(stdout), "stderr": str(stderr), "timeout": timeout}
            self.process.stdin.write(json.dumps(order) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
            if not line:
                raise EOFError("the mxnet server ended")
            reply = json.loads(line)
            if reply.get("timed_out"):
                raise ResidentTimeout(request_path)
            return subprocess.CompletedProcess(self.command, reply["status"], _read(stdout), _read(stderr))

    def close(self):
        """End the server (it exits at the end of its input)."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            process.stdin.close()
            process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        process.stdout.close()


def _read(path):
    return path.read_text(errors="replace") if path.exists() else ""
