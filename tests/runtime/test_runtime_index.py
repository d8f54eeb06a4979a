"""porter/runtime/__init__.py: the runtime index read from porter's cache folder is the one parsed from the files."""

import marshal

import pytest

import porter.cache_folder
from porter import runtime


def definitions(index):
    return [(d.name, d.module, d.order, d.source, d.filename) for d in index.values()]


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache folder of the test's own; the index computed again."""
    monkeypatch.setattr(porter.cache_folder, "cache_folder", lambda: str(tmp_path))
    runtime.runtime_index.cache_clear()
    yield tmp_path
    runtime.runtime_index.cache_clear()


def test_cached_index_equals_the_parsed_one(fresh_cache):
    parsed = runtime.runtime_index()
    stored = list(fresh_cache.glob("runtime-index-*.marshal"))
    assert len(stored) == 1
    runtime.runtime_index.cache_clear()
    assert definitions(runtime.runtime_index()) == definitions(parsed)
    assert [name for name, *_ in marshal.loads(stored[0].read_bytes())] == list(parsed)
    assert "to_channels_last" in parsed and parsed["to_channels_last"].source.startswith("def to_channels_last")


def test_a_damaged_or_stale_cache_is_computed_again(fresh_cache):
    parsed = definitions(runtime.runtime_index())
    (path,) = fresh_cache.glob("runtime-index-*.marshal")
    path.write_bytes(b"\x00 not marshal")
    kind = path.name.rsplit("-", 1)[0]  # runtime-index-<this checkout's runtime folder>
    stale = fresh_cache / f"{kind}-0000.marshal"
    stale.write_bytes(marshal.dumps([("x", "y", 0, 0, "x = 1", "f.py")]))
    other_checkout = fresh_cache / "runtime-index-0123456789ab-0000.marshal"
    other_checkout.write_bytes(stale.read_bytes())
    runtime.runtime_index.cache_clear()
    assert definitions(runtime.runtime_index()) == parsed
    assert not stale.exists()  # an index of other runtime files is removed when a new one is written
    assert other_checkout.exists()  # another porter checkout's index is its own: kept
    assert len(marshal.loads(path.read_bytes())) >= len(parsed)


def test_no_cache_folder_still_indexes(monkeypatch):
    monkeypatch.setattr(porter.cache_folder, "cache_folder", lambda: None)
    runtime.runtime_index.cache_clear()
    try:
        assert "to_channels_last" in runtime.runtime_index()
    finally:
        runtime.runtime_index.cache_clear()
