"""porter/gc_tuning.py: the collector paused over the parse, frozen after it, and everything restored afterwards."""

import gc

import pytest

from porter import gc_tuning
from porter.cli import main

TINY = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
       "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n"


@pytest.fixture(autouse=True)
def collector_as_found():
    before = gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()
    yield
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == before


def test_paused_until_settled_then_frozen():
    kept = [[] for _ in range(10)]
    with gc_tuning.fewer_collections():
        assert gc.get_threshold() == gc_tuning.THRESHOLDS
        gc_tuning.pause_until_settled()
        assert not gc.isenabled()
        gc_tuning.settled()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        gc_tuning.settled()  # a second source of a package: nothing more to do
        assert gc.isenabled()
    assert kept


def test_restored_when_the_command_fails_before_settling():
    with pytest.raises(RuntimeError), gc_tuning.fewer_collections():
        gc_tuning.pause_until_settled()
        raise RuntimeError("no source")
    assert gc.isenabled()


def test_no_pause_outside_a_command():
    gc_tuning.pause_until_settled()  # a caller of run_convert without cli.main: the collector keeps running
    assert gc.isenabled()
    gc_tuning.settled()
    assert gc.get_freeze_count() == 0


def test_a_conversion_in_process_leaves_the_collector_as_it_was(tmp_path):
    source = tmp_path / "net.py"
    source.write_text(TINY)
    assert main(["convert", str(source), "-o", str(tmp_path / "out"), "--input-shape", "4"]) == 0
    assert (tmp_path / "out" / "net_keras.py").is_file()
