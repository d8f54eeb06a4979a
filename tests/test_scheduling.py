"""tests/scheduling.py, scripts/record_test_seconds.py and scripts/run_tests.py: test files run longest first (dealt by
xdist, or batched into fresh processes by the runner), from a table of measured seconds that a `--durations=0` log
writes."""

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.scheduling import (
    SECONDS_TABLE,
    file_batches,
    item_file,
    longest_file_first,
    networks_together,
    recorded_seconds,
    suite_files,
)

REPOSITORY = Path(__file__).resolve().parents[1]


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, REPOSITORY / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def items(*nodeids):
    return [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]


def test_files_run_longest_first_each_kept_whole_and_in_order():
    collected = items("tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/c.py::t[1]", "tests/c.py::t[2]",
                      "tests/d.py::t1")
    ordered = longest_file_first(collected, {"tests/c.py": 90.0, "tests/a.py": 5.0, "tests/b.py": 30.0})
    assert [item.nodeid for item in ordered] == ["tests/c.py::t[1]", "tests/c.py::t[2]", "tests/b.py::t1",
                                                 "tests/a.py::t1", "tests/a.py::t2", "tests/d.py::t1"]


def test_files_without_a_figure_come_after_by_number_of_tests_as_xdist_deals_them():
    collected = items("tests/z.py::t", "tests/y.py::t1", "tests/y.py::t2", "tests/x.py::t", "tests/w.py::t")
    ordered = longest_file_first(collected, {"tests/w.py": 0.5})
    assert [item.nodeid for item in ordered] == ["tests/w.py::t", "tests/y.py::t1", "tests/y.py::t2", "tests/z.py::t",
                                                 "tests/x.py::t"]
    assert item_file(collected[0]) == "tests/z.py"


def test_a_corpus_files_tests_of_one_network_run_together():
    def item(nodeid, stem=None):
        return SimpleNamespace(nodeid=nodeid, **({"callspec": SimpleNamespace(params={"stem": stem})} if stem else {}))

    collected = [item("tests/corpus/a.py::folder"), item("tests/corpus/a.py::m[x]", "x"),
                 item("tests/corpus/a.py::m[y]", "y"), item("tests/corpus/a.py::t[x]", "x"),
                 item("tests/corpus/a.py::t[y]", "y"), item("tests/corpus/b.py::m[x]", "x"),
                 item("tests/passes/c.py::m[x]", "x"), item("tests/passes/c.py::m[y]", "y"),
                 item("tests/passes/c.py::t[x]", "x")]
    assert [i.nodeid for i in networks_together(collected)] == [
        "tests/corpus/a.py::folder", "tests/corpus/a.py::m[x]", "tests/corpus/a.py::t[x]", "tests/corpus/a.py::m[y]",
        "tests/corpus/a.py::t[y]", "tests/corpus/b.py::m[x]", "tests/passes/c.py::m[x]", "tests/passes/c.py::m[y]",
        "tests/passes/c.py::t[x]"]  # outside tests/corpus nothing moves


def test_a_missing_or_broken_table_orders_nothing(tmp_path):
    assert recorded_seconds(tmp_path / "absent.json") == {}
    (tmp_path / "broken.json").write_text("{not json")
    assert recorded_seconds(tmp_path / "broken.json") == {}


@pytest.mark.skipif(not SECONDS_TABLE.is_file(), reason="no tests/file_seconds.json: xdist deals files in its own "
                    "order (scripts/record_test_seconds.py writes the table from a --durations=0 run)")
def test_the_committed_table_names_test_files_with_seconds():
    table = recorded_seconds()
    assert table
    assert all(path.startswith("tests/") and path.endswith(".py") and seconds >= 0 for path, seconds in table.items())
    assert sum(1 for path in table if (REPOSITORY / path).is_file()) >= len(table) * 0.8  # most files still exist


def test_recorder_sums_setup_call_and_teardown_per_file(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("""........ [100%]
============================= slowest durations =============================
197.21s call     tests/corpus/test_pytorchcv.py::test_pytorchcv_model_file_matches_torch[resnet]
12.50s setup    tests/corpus/test_torchvision_folder.py::test_the_folder_converts_in_one_call
2.30s call     tests/corpus/test_pytorchcv.py::test_pytorchcv_network_converts_at_most_its_bound[resnet]
0.40s teardown tests/test_cli.py::test_help
0.01s call     tests/test_cli.py::test_version[--version]

(120 durations < 0.005s hidden.  Use -vv to show these durations.)
3448 passed in 1736.00s
""")
    recorder = load_script("record_test_seconds")
    output = tmp_path / "seconds.json"
    assert recorder.main([str(log), "-o", str(output)]) == 0
    table = json.loads(output.read_text())
    assert table == {"tests/corpus/test_pytorchcv.py": 200, "tests/corpus/test_torchvision_folder.py": 12,
                     "tests/test_cli.py": 0}
    assert list(table) == sorted(table, key=lambda path: -table[path])


def test_recorder_refuses_a_log_without_durations(tmp_path, capsys):
    log = tmp_path / "run.log"
    log.write_text("3 passed in 1.00s\n")
    assert load_script("record_test_seconds").main([str(log), "-o", str(tmp_path / "seconds.json")]) == 2
    assert "--durations=0" in capsys.readouterr().err
    assert not (tmp_path / "seconds.json").exists()


def test_suite_files_are_what_pytest_collects_without_the_golden_trees(tmp_path):
    for name in ("test_a.py", "corpus/test_b.py", "golden/test_c.py", "golden/tree/test_equivalence.py",
                 "corpus/helpers.py", "conftest.py"):
        (tmp_path / "tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / name).write_text("")
    assert suite_files(tmp_path) == ["tests/corpus/test_b.py", "tests/test_a.py"]
    assert "tests/corpus/test_timm.py" in suite_files(REPOSITORY)


def test_heavy_files_run_alone_and_light_ones_are_packed_longest_batch_first():
    seconds = {"heavy.py": 300, "big.py": 200, "mid.py": 90, "small.py": 30, "tiny.py": 5}
    batches = file_batches([*seconds, "new.py"], seconds, limit=240)
    assert batches == [["heavy.py"], ["big.py", "small.py", "tiny.py"], ["mid.py", "new.py"]]
    assert sorted(path for batch in batches for path in batch) == sorted([*seconds, "new.py"])
    assert file_batches([], seconds, limit=240) == []


def test_the_runner_reports_each_batch_and_fails_when_one_does(tmp_path):
    runner = load_script("run_tests")
    passing = tmp_path / "test_pass.py"
    passing.write_text("def test_one():\n    pass\n")
    failing = tmp_path / "test_fail.py"
    failing.write_text("def test_two():\n    assert 1 == 2\n")
    assert runner.main([str(passing), "--lanes", "1"]) == 0
    batch = runner.Batch(1, [str(failing)])
    batch.run([], timeout=120)
    assert not batch.ok and batch.counts() == "1 failed" and batch.peak_mb > 0
    [failure] = batch.failures()
    assert failure.startswith("FAILED ") and "test_fail.py::test_two" in failure
    assert "FAIL batch  1 test_fail.py" in runner.summary([batch], 1.0)
