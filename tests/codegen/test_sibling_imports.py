"""porter/codegen/emit.py's choice between importing a linked definition from its sibling's port and keeping a copy:
a definition the sibling holds as it is translated here is imported, unless it names one kept as a copy here."""

from porter.codegen.emit import ModuleEmitter, PortedSibling


def choose(translated):
    emitter = ModuleEmitter.__new__(ModuleEmitter)  # only the bookkeeping import_or_copy uses
    emitter.imported, emitter.copied = {}, []
    return emitter.import_or_copy(translated), emitter


def test_a_function_naming_a_copied_class_is_copied_too_and_so_is_what_names_it():
    utils = PortedSibling("utils_keras.py", "utils.py", {})
    translated = [
        (("Conv2dStatic",), "class Conv2dStatic(Conv2d):\n    channels_last = True", utils, False),  # otherwise here
        (("get_conv",), "def get_conv(size):\n    return Conv2dStatic", utils, True),  # same text at home
        (("make",), "def make():\n    return get_conv(1)", utils, True),  # names get_conv: copied in turn
        (("round_filters",), "def round_filters(f):\n    return f", utils, True),  # independent: imported
        (("Net",), "class Net(Model):\n    conv = make()", None, False),  # the file's own
    ]
    chunks, emitter = choose(translated)
    assert [chunk.split("(")[0] for chunk in chunks] == ["class Conv2dStatic", "def get_conv", "def make",
                                                         "class Net"]
    assert emitter.imported == {utils: ["round_filters"]}
    assert [name for name, _ in emitter.copied] == ["Conv2dStatic", "get_conv", "make"]


def test_a_name_matching_only_an_attribute_does_not_force_a_copy():
    utils = PortedSibling("utils_keras.py", "utils.py", {})
    translated = [(("Block",), "class Block:\n    pass", utils, False),
                  (("build",), "def build(m):\n    return m.Block", utils, True)]  # an attribute, not the global
    chunks, emitter = choose(translated)
    assert emitter.imported == {utils: ["build"]} and len(chunks) == 1
