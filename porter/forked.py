"""Work done in a forked child process while porter goes on with the rest: the reports of `porter convert`.

PORTING.md and report.html are a fifth of converting a large file (0.3-0.4 s of CPU for 3,500 lines), and read only
what is settled before them (the IR, the formatted model module, the manifest) while the outputs made after them
(training script, tests, the self-check) do not read them: on a machine with a second core the two halves overlap.
The child is a fork (it shares the parent's memory as it is, nothing is sent to it) and sends back its texts through
a pipe. Where fork is not the platform's way to start a process (Windows, macOS) or the child does not answer with
its result, the caller does the work itself, in the order it always did: the result, and any error, is the same.
"""

import gc
import marshal
import os
import sys


def can_fork():
    """Linux only: macOS's system libraries are not fork-safe without an exec (Python starts processes by spawn
    there), and Windows has no fork."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class Forked:
    """`work()` (returning marshal-able data) started in a forked child; `result()` is its return value, or None
    where the child could not give it (the caller then does the work itself)."""

    def __init__(self, work):
        self.pid = None
        self.pipe = None
        if not can_fork():
            return
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no room for another process: the caller works alone
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: do the work, send it, and leave without running the parent's exit handlers
            os.close(read)
            status = 1
            try:
                gc.freeze()  # the inherited objects are never garbage here: the collector leaves them (and their
                # memory pages, shared with the parent until written) alone
                payload = marshal.dumps(work())
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        self.pid, self.pipe = pid, read

    def result(self):
        """The child's return value (waiting for it), or None: no child, or it failed."""
        if self.pid is None:
            return None
        try:
            with os.fdopen(self.pipe, "rb") as pipe:
                data = pipe.read()
        finally:
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
        if status != 0:
            return None
        try:
            return marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None

    def abandon(self):
        """Stop the child (its result is not wanted: the caller failed before asking)."""
        if self.pid is None:
            return
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self.pipe)
        os.waitpid(self.pid, 0)
        self.pid = None

