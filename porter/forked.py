"""Work done in a forked child process while porter goes on with the rest: the TPU lint, the notes and the reports of
`porter convert`.

PORTING.md and report.html are a fifth of converting a large file (0.3-0.4 s of CPU for 3,500 lines), and read only
what is settled before them (the IR, the formatted model module, the manifest) while the outputs made after them
(training script, tests, the self-check) do not read them: on a machine with a second core the two halves overlap.
The child is a fork (it shares the parent's memory as it is, nothing is sent to it) and sends back its texts through
a pipe. Where fork is not the platform's way to start a process (Windows, macOS) or the child does not answer with
its result, the caller does the work itself, in the order it always did: the result, and any error, is the same.

A child started with `conversation=True` is handed a `Channel` instead: it sends several answers (`send`) and can
wait for what the parent tells it later (`receive`), so that one child forked early does work in stages, each with
the data the parent settled meanwhile (a fork of the grown process costs both processes a copy of every memory page
either writes afterwards: one fork instead of three).
"""

import gc
import marshal
import os
import sys


def can_fork():
    """Linux only: macOS's system libraries are not fork-safe without an exec (Python starts processes by spawn
    there), and Windows has no fork."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class Channel:
    """The child's end of a conversation: `send(value)` (marshal-able) to the parent, `receive()` what the parent
    told it (None when the parent closed its end)."""

    def __init__(self, answers, asks):
        self._answers, self._asks = answers, asks

    def send(self, value):
        marshal.dump(value, self._answers)
        self._answers.flush()

    def receive(self):
        try:
            return marshal.load(self._asks)
        except (EOFError, ValueError, TypeError):
            return None


class Forked:
    """`work()` (returning marshal-able data) started in a forked child; `result()` is its return value, or None
    where the child could not give it (the caller then does the work itself). With `conversation=True`, `work` is
    called with a Channel; the parent reads each answer with `receive()` and talks to the child with `tell()`."""

    def __init__(self, work, conversation=False):
        self.pid = None
        self.pipe = None
        self._answers = self._asks = None
        self.conversation = conversation
        if not can_fork():
            return
        read, write = os.pipe()
        asks = os.pipe() if conversation else None
        try:
            pid = os.fork()
        except OSError:  # no room for another process: the caller works alone
            for fd in (read, write, *(asks or ())):
                os.close(fd)
            return
        if pid == 0:  # the child: do the work, send it, and leave without running the parent's exit handlers
            os.close(read)
            status = 1
            try:
                gc.freeze()  # the inherited objects are never garbage here: the collector leaves them (and their
                # memory pages, shared with the parent until written) alone
                if conversation:
                    os.close(asks[1])
                    with os.fdopen(write, "wb") as answers, os.fdopen(asks[0], "rb") as told:
                        work(Channel(answers, told))
                else:
                    payload = marshal.dumps(work())
                    with os.fdopen(write, "wb") as pipe:
                        pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        self.pid, self.pipe = pid, read
        if conversation:
            os.close(asks[0])
            self._answers, self._asks = os.fdopen(read, "rb"), os.fdopen(asks[1], "wb")

    def receive(self):
        """The child's next answer (waiting for it), or None: no child, or it ended or failed before sending one
        (the child is then reaped)."""
        if self.pid is None:
            return None
        try:
            return marshal.load(self._answers)
        except (EOFError, ValueError, TypeError):
            self._reap()
            return None

    def tell(self, value):
        """Send `value` to the child; False where there is no child to hear it."""
        if self.pid is None:
            return False
        try:
            marshal.dump(value, self._asks)
            self._asks.flush()
        except (BrokenPipeError, ValueError):
            return False
        return True

    def result(self):
        """The child's return value (waiting for it), or None: no child, or it failed. In a conversation: the child's
        next answer, given once the child ended well."""
        if self.pid is None:
            return None
        if self.conversation:
            value = self.receive()
            return value if self._reap() == 0 else None
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

    def _reap(self):
        """Close the conversation and wait for the child; its exit status (None when there was no child)."""
        if self.pid is None:
            return None
        for end in (self._asks, self._answers):
            try:
                end.close()
            except OSError:  # the child left: nothing more to send
                pass
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return status

    def abandon(self):
        """Stop the child (its result is not wanted: the caller failed before asking)."""
        if self.pid is None:
            return
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.conversation:
            self._reap()
            return
        os.close(self.pipe)
        os.waitpid(self.pid, 0)
        self.pid = None
