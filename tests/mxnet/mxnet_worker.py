"""One long-lived mxnet 1.9.1 process for property tests: hypothesis draws many small cases, and starting mxnet's
venv for each would take a second or more. `MxnetWorker.evaluate(expression, arrays)` sends the arrays (an .npz) and
an expression over them (names of the arrays, `nd`, `mx`, `np`) and returns mxnet's result as numpy arrays (a
list for a list or tuple result). Each request starts in mxnet's NDArray mode (numpy mode, which a request's setup
may turn on, is switched off after it), so one worker serves the whole session."""

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from porter.verify.mxnet_reference import mxnet_python

WORKER_SCRIPT = r"""
import json, sys
import numpy as np
import mxnet as mx
from mxnet import nd
for line in sys.stdin:
    request = json.loads(line)
    try:
        arrays = dict(np.load(request["inputs"]))
        env = {k: nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
        env.update(nd=nd, mx=mx, np=np)
        for statement in request.get("setup", []):
            exec(statement, env)
        result = eval(request["expression"], env)
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        np.savez(request["outputs"], **{f"output_{i}": (r.asnumpy() if hasattr(r, "asnumpy") else np.asarray(r))
                                         for i, r in enumerate(results)})
        reply = {"ok": True, "count": len(results), "listed": isinstance(result, (list, tuple))}
    except Exception as error:
        reply = {"ok": False, "error": f"{type(error).__name__}: {str(error).strip().splitlines()[-1:]}"}
    finally:
        mx.npx.reset_np()  # a request's setup may turn numpy mode on: the next request starts in NDArray mode
    print(json.dumps(reply), flush=True)
"""


class MxnetWorker:
    def __init__(self):
        self.scratch = Path(tempfile.mkdtemp(prefix="porter-mxnet-worker-"))
        self.process = subprocess.Popen([str(mxnet_python()), "-I", "-c", WORKER_SCRIPT], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.count = 0

    def evaluate(self, expression, arrays, setup=()):
        """mxnet's value of `expression`: an array, or a list of arrays for a list/tuple; raises MxnetError."""
        self.count += 1
        inputs, outputs = self.scratch / f"in{self.count}.npz", self.scratch / f"out{self.count}.npz"
        np.savez(inputs, **arrays)
        request = {"inputs": str(inputs), "outputs": str(outputs), "expression": expression, "setup": list(setup)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        inputs.unlink()
        if not reply["ok"]:
            raise MxnetError(reply["error"])
        with np.load(outputs) as archive:
            results = [archive[f"output_{i}"] for i in range(reply["count"])]
        outputs.unlink()
        return results if reply["listed"] else results[0]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)
        for path in self.scratch.iterdir():
            path.unlink()
        self.scratch.rmdir()


class MxnetError(Exception):
    """mxnet refused the expression (its message's last line)."""
