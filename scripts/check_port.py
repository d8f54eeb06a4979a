"""Compare a converted model with its torch source on the manifest's example inputs (max error, jit, transposes)."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from porter.verify.compare import relative_error  # noqa: E402
from porter.verify.harness import PortedPair, count_transposes  # noqa: E402


def main(out_dir):
    pair = PortedPair(out_dir)
    inputs = pair.example_inputs(batch=3)
    expected = pair.run_torch(inputs)
    eager = max(relative_error(e, a) for e, a in zip(expected, pair.run_keras(inputs)))
    jitted = max(relative_error(e, a) for e, a in zip(expected, pair.run_keras(inputs, jit=True)))
    transposes = count_transposes(pair.keras_model, inputs)
    print(f"{pair.class_name}: max error {eager:.2e} (eager), {jitted:.2e} (jit_compile), "
          f"{transposes} Transpose ops in the traced graph")
    return 0 if max(eager, jitted) <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
