"""Whole output trees of every fixture against tests/golden/<fixture>/ (regenerate: scripts/regenerate_goldens.py)."""

import pytest

from tests.golden.goldens import GOLDEN, convert_fixture, fixture_names, read_tree, stale_goldens, tree_diff

REGENERATE = "python scripts/regenerate_goldens.py"


@pytest.mark.parametrize("name", fixture_names())
def test_output_tree_matches_golden(name):
    expected = read_tree(GOLDEN / name)
    if not expected:
        pytest.fail(f"no golden tree for fixtures/{name}.py: run `{REGENERATE} {name}` and review it")
    actual = convert_fixture(name)
    if actual != expected:
        diff = tree_diff(expected, actual)
        pytest.fail(f"porter's output for fixtures/{name}.py differs from tests/golden/{name}/ "
                    f"(- golden, + now). If the change is intended, run `{REGENERATE} {name}` and review the "
                    f"diff in git.\n{diff}", pytrace=False)


def test_no_golden_without_fixture():
    assert not stale_goldens(), f"golden trees without a fixture: {stale_goldens()} (`{REGENERATE}` removes them)"
