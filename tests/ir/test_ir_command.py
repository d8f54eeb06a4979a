"""`porter ir`: the IR of a conversion printed deterministically (classes, attributes, call layouts and the op
graph with each node's line and rank/layout/dtype in and out); golden dumps of three fixtures hold it
(regenerate with `python scripts/regenerate_goldens.py`, which rewrites tests/ir/golden too)."""

import subprocess
import sys
from pathlib import Path

import pytest

from porter.convert import ConvertOptions, convert
from porter.ir.printer import print_ir

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
FIXTURES = ("lenet", "resnet", "gpt_mini")


def dump(name, after="lowering", class_name=None):
    path = ROOT / "fixtures" / f"{name}.py"
    conversion = convert(ConvertOptions(path, path.parent / f".porter-ir-{name}"), read_only=True)
    source, ctx = conversion.translator.source, conversion.translator.ctx
    return print_ir(source, ctx, conversion.main_class, class_name, after).replace(str(ROOT), "<repo>")


@pytest.mark.parametrize("name", FIXTURES)
def test_ir_dump_matches_its_golden(name):
    assert dump(name) == (GOLDEN / f"{name}.txt").read_text(), f"regenerate tests/ir/golden/{name}.txt"


def test_ir_dump_is_deterministic():
    assert dump("resnet") == dump("resnet")


def test_graph_records_layout_decisions():
    text = dump("resnet", class_name="BasicBlock")
    assert text.count("\nclass ") == 1
    assert "layer      Conv2d self.conv1  (4d channels_last) -> 4d channels_last" in text
    gpt = dump("gpt_mini")
    assert "channels_last" not in gpt.split("graph:", 1)[1]  # a sequence model never converts


def test_frontend_stage_and_tpu_lint_stage():
    frontend = dump("lenet", after="frontend")
    assert "method forward" in frontend and "graph:" not in frontend
    lint = dump("lenet", after="tpu-lint")
    assert "graph:" in lint


def test_cli_prints_and_refuses_unknown_class(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "porter", "ir", "fixtures/lenet.py", "--class", "LeNet5"],
                               capture_output=True, text=True, cwd=ROOT, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("# porter ir: fixtures/lenet.py (torch)")
    assert not any(tmp_path.iterdir()) and not list((ROOT / "fixtures").glob(".porter-ir-*"))
    completed = subprocess.run([sys.executable, "-m", "porter", "ir", "fixtures/lenet.py", "--class", "Nope"],
                               capture_output=True, text=True, cwd=ROOT, check=False)
    assert completed.returncode == 2 and "no module class 'Nope'" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_an_attribute_holding_several_values_is_described():
    """A name the passes record several values for (a list) is printed item by item; `porter ir` on timm's
    convnext.py failed with AttributeError: 'list' object has no attribute 'kind'."""
    from porter.ir.module_ir import describe_ref
    from porter.ir.values import ModuleRef

    assert describe_ref([ModuleRef("class", class_name="Block"), "python", 3]) == "[class Block, python, int]"
