"""Output producer: train_tpu.ipynb, a Colab TPU notebook that runs train_tpu.py's functions and plots the loss.

The cells are written in templates/train_tpu.ipynb.py.j2 as one file in the "percent" format (`# %% ID` starts a
code cell, `# %% [markdown] ID` a markdown cell whose lines drop their leading `# `, `tags=a,b` adds cell tags);
this module renders it and writes nbformat 4 JSON without outputs, execution counts or anything machine-specific,
so the same port gives the same bytes.
"""

import json
import re
from pathlib import PurePosixPath

from porter import __version__
from porter.codegen.emit import environment

NOTEBOOK = "train_tpu.ipynb"
TEMPLATE = "train_tpu.ipynb.py.j2"
CELL_MARKER = re.compile(r"^# %%(?P<markdown> \[markdown\])? (?P<id>[a-z][a-z0-9-]*)(?: tags=(?P<tags>[\w,-]+))?$")
METADATA = {
    "accelerator": "TPU",  # Colab opens it on a TPU runtime
    "colab": {"provenance": []},
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def produce(source, ctx, manifest, options):
    text = environment().get_template(TEMPLATE).render(
        version=__version__,
        main_class=manifest["main_class"],
        source_name=PurePosixPath(manifest["sources"][0]["path"]).name,
        port_dir=f"{source.path.stem}_keras",  # the directory name `porter convert` chooses without -o
    )
    return {NOTEBOOK: notebook_json(cells_of(text))}


class Cell:
    """One notebook cell as the template writes it."""

    def __init__(self, cell_id, markdown, tags):
        self.id = cell_id
        self.markdown = markdown
        self.tags = tags
        self.lines = []

    def source(self):
        lines = self.lines
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        if self.markdown:
            lines = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines]
        return "\n".join(lines)

    def as_json(self):
        text = self.source()
        cell = {
            "cell_type": "markdown" if self.markdown else "code",
            "id": self.id,
            "metadata": {"tags": self.tags} if self.tags else {},
            "source": text.splitlines(keepends=True),  # nbformat's own multi-line form: diffs stay readable
        }
        if not self.markdown:
            cell.update(execution_count=None, outputs=[])
        return cell


def cells_of(text):
    """The template's cells, in order; text before the first marker is not allowed."""
    cells = []
    for number, line in enumerate(text.splitlines(), 1):
        marker = CELL_MARKER.match(line)
        if marker:
            tags = marker["tags"].split(",") if marker["tags"] else []
            cells.append(Cell(marker["id"], bool(marker["markdown"]), tags))
        elif cells:
            cells[-1].lines.append(line)
        elif line.strip():
            raise ValueError(f"{TEMPLATE}:{number}: text before the first `# %%` cell marker")
    ids = [cell.id for cell in cells]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{TEMPLATE}: cell ids repeat: {ids}")
    return cells


def notebook_json(cells):
    notebook = {"cells": [cell.as_json() for cell in cells], "metadata": METADATA, "nbformat": 4,
                "nbformat_minor": 5}
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
