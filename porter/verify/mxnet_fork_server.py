"""Serve mxnet_driver.py requests from one process that has imported mxnet already: each request runs in a fresh
fork of it, so a run starts in milliseconds instead of the seconds mxnet's import takes, and no run sees another's
state (imported model files, numpy mode, random seeds).

Executed as a script by the mxnet venv's Python (`python -I mxnet_fork_server.py DRIVER`), never imported by porter;
porter/verify/mxnet_resident.py starts it and talks to it. Each stdin line is a JSON request {"request": the driver's
request.json, "stdout"/"stderr": files for the run's output, "timeout": seconds}; each stdout line answers one:
{"status": the run's exit status (minus the signal that ended it)} or {"timed_out": true}. A run with fused RNN
layers in a server without MKLDNN ends with NEEDS_MKLDNN_STATUS. The server exits at the end of its input.
"""

import importlib.util
import json
import os
import signal
import sys
import time

# A run that needs MKLDNN (fused RNN layers) in a server started without it exits with this status instead of
# restarting itself; the client sends it to a server started with MKLDNN on.
NEEDS_MKLDNN_STATUS = 75


def load_driver(path):
    spec = importlib.util.spec_from_file_location("mxnet_driver", path)
    driver = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = driver
    spec.loader.exec_module(driver)
    driver.restart_with_mkldnn = ask_for_mkldnn
    return driver


def ask_for_mkldnn(request_path):
    """In place of the driver's restart_with_mkldnn: mxnet reads the switch once, when it starts, so the run is
    handed back to the client for a server started with MKLDNN on."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(NEEDS_MKLDNN_STATUS)


def run_in_child(driver, order):
    """In the forked child: output to the order's files, no stdin, the driver's main; never returns."""
    status = 1
    try:
        stdin = os.open(os.devnull, os.O_RDONLY)
        os.dup2(stdin, 0)
        for descriptor, path in ((1, order["stdout"]), (2, order["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, descriptor)
            os.close(target)
        sys.argv = [driver.__file__, order["request"]]
        status = driver.main(order["request"])
    except SystemExit as exit_request:
        status = exit_request.code if isinstance(exit_request.code, int) else 1
    except BaseException:  # noqa: BLE001 - printed for the caller, as a driver process would
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status or 0)


def wait_for(child, timeout):
    """The child's exit status (negative: the signal that ended it), or None once `timeout` seconds have passed (the
    child is killed)."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        finished, status = os.waitpid(child, os.WNOHANG)
        if finished:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def serve(driver_path):
    import mxnet  # noqa: F401 - the import every fork shares

    driver = load_driver(driver_path)
    for line in sys.stdin:
        order = json.loads(line)
        sys.stdout.flush()
        child = os.fork()
        if child == 0:
            run_in_child(driver, order)
        status = wait_for(child, order["timeout"])
        reply = {"timed_out": True} if status is None else {"status": status}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1])
