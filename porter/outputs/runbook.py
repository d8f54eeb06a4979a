"""Output producer: RUNBOOK.md, the commands that train the port on a Cloud TPU VM and on a pod slice.

Create the VM, copy the port, install requirements-tpu.txt, put `porter data` shards on GCS, run train_tpu.py
(worker 0 of a pod slice), resume after preemption, find the logs, delete the VM. Every flag it shows is one that
train_tpu.py or `porter data` accepts (tests/outputs/test_runbook.py parses them with the real parsers).
"""

import re
from pathlib import PurePosixPath

from porter import __version__
from porter.codegen.emit import environment
from porter.training.render import builds_embeddings

RUNBOOK = "RUNBOOK.md"
TEMPLATE = "RUNBOOK.md.j2"


def produce(source, ctx, manifest, options):
    port_dir = f"{source.path.stem}_keras"  # the directory name `porter convert` chooses without -o
    text = environment().get_template(TEMPLATE).render(
        version=__version__,
        main_class=manifest["main_class"],
        source_name=PurePosixPath(manifest["sources"][0]["path"]).name,
        port_dir=port_dir,
        tpu_name=tpu_name(port_dir),
        tpu_embedding=builds_embeddings(source),
    )
    return {RUNBOOK: text}


def tpu_name(port_dir):
    """A TPU VM name GCP accepts (lowercase letters, digits and hyphens, a letter first, at most 63)."""
    name = re.sub(r"[^a-z0-9]+", "-", port_dir.lower()).strip("-")
    return ("tpu-" + name)[:63].rstrip("-")
