"""porter/codegen/port_loader.py: generated modules load each other by path, one instance per port, and the loader's
text is what generated files carry."""

import sys

from porter.codegen.port_loader import LOADER_IMPORTS, load_port_module, loader_source


def write_port(folder, value):
    (folder / "sub").mkdir(parents=True)
    (folder / "shared.py").write_text(f"VALUE = {value}\n\n\nclass Block:\n    pass\n")
    (folder / "sub" / "user.py").write_text("")
    return folder / "sub" / "user.py"


def test_siblings_load_by_relative_path_once_per_port_and_never_across_ports(tmp_path, monkeypatch):
    first, second = write_port(tmp_path / "a", 1), write_port(tmp_path / "b", 2)
    monkeypatch.chdir(tmp_path / "a" / "sub")  # any working directory: the path is taken from the anchor file
    loaded = load_port_module(str(first), "../shared.py")
    try:
        assert loaded.VALUE == 1 and load_port_module(str(first), "../shared.py") is loaded  # one per port
        other = load_port_module(str(second), "../shared.py")
        assert other.VALUE == 2 and other.Block is not loaded.Block  # two ports never share one
        assert loaded.__name__.startswith("shared_") and loaded.__name__ in sys.modules
        (tmp_path / "a" / "shared.py").write_text("VALUE = 3\n")  # a new version of the port: loaded afresh
        assert load_port_module(str(first), "../shared.py").VALUE == 3
    finally:
        for name in [n for n in sys.modules if n.startswith("shared_")]:
            del sys.modules[name]


def test_a_sibling_that_fails_to_load_is_not_left_half_loaded(tmp_path):
    user = write_port(tmp_path / "c", 1)
    (tmp_path / "c" / "shared.py").write_text("raise ImportError('broken')\n")
    for _ in range(2):  # the second call runs it again, it does not hand back the half-made module
        try:
            load_port_module(str(user), "../shared.py")
        except ImportError as error:
            assert str(error) == "broken"
        else:
            raise AssertionError("expected the sibling's ImportError")


def test_the_copied_loader_is_the_function_under_the_name_given(tmp_path):
    user = write_port(tmp_path / "d", 4)
    namespace = {}
    exec("\n".join([*LOADER_IMPORTS, "", loader_source("_load")]), namespace)  # its imports are all it needs
    loaded = namespace["_load"](str(user), "../shared.py")
    try:
        assert loaded.VALUE == 4 and load_port_module(str(user), "../shared.py") is loaded  # one mechanism, one name
    finally:
        del sys.modules[loaded.__name__]
