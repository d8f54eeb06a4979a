"""The runtime module of a port: what gets copied (the global-name closure of what the model code reads) and the
names the model module binds from it."""

import builtins

import pytest

from porter.codegen.runtime_bundle import bundle, closure, runtime_bindings, runtime_file_name
from porter.runtime import global_references, runtime_index


def test_global_references_skip_parameters_locals_and_enclosing_names():
    code = ("def build(linear, width=DEFAULT):\n"
            "    relu = make()\n"
            "    def inner():\n"
            "        return relu(linear(width)) + helper()\n"
            "    return [Conv2d(n) for n in range(width)]\n")
    assert global_references(code) == {"DEFAULT", "make", "helper", "Conv2d", "range"}


def test_class_bodies_and_bases_are_global_references():
    code = "class Net(TorchModule):\n    scale = CONSTANT\n\n    def call(self, x):\n        return relu(x)\n"
    assert {"TorchModule", "CONSTANT", "relu"} <= global_references(code)


def test_dependencies_are_global_names_only():
    """A runtime definition whose parameter or local shares another runtime definition's name does not depend on
    that definition: only what it reads as a global counts."""
    index = runtime_index()
    shadowing = [(definition.name, local) for definition in index.values()
                 for local in sorted(_locals_and_parameters(definition.source) & set(index))
                 if local not in global_references(definition.source)]
    assert shadowing, "no runtime definition has a local named like a runtime definition: the check needs one"
    for name, local in shadowing:
        assert local not in index[name].uses, f"{name} depends on {local}, which is only its local name"


def test_a_class_body_rebinding_a_global_reads_it():
    """`generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)` in the runtime's
    Transformer: the class body reads the module's function (a port of nn.Transformer named it undefined)."""
    assert "mask" in global_references("def mask(n):\n    return n\n\n\nclass T:\n    mask = staticmethod(mask)\n")
    assert "generate_square_subsequent_mask" in closure(["Transformer"])
    text = bundle(["Transformer"])
    assert not global_references(text) - _module_level(text) - _BUILTINS - {"keras", "np", "tf", "math"}


def test_closure_follows_base_classes_and_helpers():
    needed = closure(["Conv2d"])
    assert {"Conv2d", "TorchLayer", "StateEntry"} <= needed
    assert "LSTM" not in needed


def test_bundle_defines_what_it_uses_before_it_is_subclassed():
    text = bundle(["Conv2d"])
    assert text.index("class TorchLayer(") < text.index("class Conv2d(")
    undefined = global_references(text) - _module_level(text) - _BUILTINS - {"keras", "np", "tf", "math"}
    assert not undefined


def test_bindings_cover_global_reads_and_the_public_functions():
    code = "class Net(TorchModule):\n    def call(self, x):\n        y = relu(x)\n        return flatten(y, 1)\n"
    bound = dict(runtime_bindings(code, {}))
    assert bound == {"TorchModule": "TorchModule", "relu": "relu", "flatten": "flatten",
                     "collect_state": "collect_state", "load_state_dict": "load_state_dict"}
    assert "y" not in bound and "x" not in bound


def test_bindings_follow_renames_and_leave_the_users_names_alone():
    """The user's file has its own `Linear`: the runtime's is emitted as TorchLinear and bound under that name."""
    code = ("class Linear(TorchModule):\n    def call(self, x):\n        return x\n\n\n"
            "class Net(TorchModule):\n    def __init__(self):\n        self.a = Linear()\n"
            "        self.b = TorchLinear(4, 2)\n")
    bound = dict(runtime_bindings(code, {"Linear": "TorchLinear"}))
    assert bound["TorchLinear"] == "Linear"
    assert "Linear" not in bound


def test_a_user_function_named_like_a_public_runtime_function_is_not_rebound():
    code = "def torch_load_state_dict(model, state):\n    return model\n"
    bound = dict(runtime_bindings(code, {"load_state_dict": "torch_load_state_dict"}))
    assert "torch_load_state_dict" not in bound
    assert bound["load_state_dict"] == "load_state_dict"  # the contract's name: the model code defines none


def test_a_public_runtime_function_keeps_its_name_where_the_users_is_not_ported():
    """timm's efficientnet.py with its factories linked reads a `load_state_dict` of its package the port does not
    carry: the runtime's is renamed for the translation, and the model module still offers `load_state_dict`."""
    code = "def model_code(x):\n    return x\n"
    bound = dict(runtime_bindings(code, {"load_state_dict": "torch_load_state_dict"}))
    assert bound["load_state_dict"] == "load_state_dict" and "torch_load_state_dict" not in bound
    own = "def load_state_dict(model, state):\n    return model\n"  # the user's, ported: the runtime's renamed
    assert dict(runtime_bindings(own, {"load_state_dict": "torch_load_state_dict"}))["torch_load_state_dict"] == \
        "load_state_dict"


@pytest.mark.parametrize("module, runtime", [("resnet_keras.py", "resnet_keras_runtime.py"),
                                             ("ported_my_net_keras.py", "ported_my_net_keras_runtime.py")])
def test_runtime_file_sits_beside_the_model_module(module, runtime):
    assert runtime_file_name(module) == runtime


_BUILTINS = set(dir(builtins))


def _module_level(text):
    import symtable

    return {s.get_name() for s in symtable.symtable(text, "t", "exec").get_symbols() if s.is_assigned()}


def _locals_and_parameters(source):
    import symtable

    found, tables = set(), list(symtable.symtable(source, "t", "exec").get_children())
    while tables:
        table = tables.pop()
        if table.get_type() == "function":
            found.update(s.get_name() for s in table.get_symbols() if s.is_local())
        tables.extend(table.get_children())
    return found
