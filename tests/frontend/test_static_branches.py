"""Top-level `if`s porter decides statically (frontend/static_branches.py): efficientnet_pytorch's
`if hasattr(nn, 'SiLU'): Swish = nn.SiLU` / `else: class Swish(nn.Module)` bound a name the model uses inside an `if`
porter dropped (a stub, or an undefined name: exit 3). The branch taken now stands at top level, whichever it is (a
torch layer alias, or a class of the file), and the port matches torch. timm's `_has_silu = 'silu' in
dir(torch.nn.functional)` is decided the same way (it read a string's attributes: False). timm's optional imports (`try: from apex...`
/ `except ImportError: has_apex = False`) take the handler, and `if "X" in os.environ` takes the unset branch."""

import textwrap

import pytest

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from apex.normalization import fused_layer_norm_affine
    has_apex = True
except ImportError:
    has_apex = False

if "PORTER_TEST_SCALE" in os.environ:
    SCALE = float(os.environ["PORTER_TEST_SCALE"])
else:
    SCALE = 0.5

# Swish activation function
if hasattr(nn, "SiLU"):
    Swish = nn.SiLU
else:
    # For compatibility with old PyTorch versions
    class Swish(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(x)

# timm's feature checks (layers/create_act.py), read from a listing of torch's namespace
_has_silu = "silu" in dir(torch.nn.functional)
_lacks_mish = "mish" not in dir(F)
_has_nothing = "no_such_activation" in dir(F)
SCALE2 = 2.0 if _has_silu and not _lacks_mish and not _has_nothing else 3.0

if "hardswish" in dir(F):
    Hard = nn.Hardswish
else:
    Hard = nn.ReLU

if hasattr(nn, "NoSuchLayer"):
    Gate = nn.NoSuchLayer
elif not hasattr(torch, "no_such_function") and hasattr(nn, "Sigmoid"):
    class Gate(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(2 * x)
else:
    Gate = nn.Identity


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = Swish()
        self.gate = Gate()
        self.hard = Hard()

    def forward(self, x):
        y = self.hard(self.gate(self.act(self.conv(x)))) * SCALE2
        return y if has_apex else y * SCALE
'''


def test_static_branches_match_torch(static_branch_port):
    pair = static_branch_port("net")
    assert_same_outputs(pair, [random_input(0, (2, 3, 6, 6))], tolerance=1e-5, what="static branches")


def test_branch_taken_is_top_level_code(static_branch_port):
    pair = static_branch_port("net")
    text = (pair.out_dir / "op_model_keras.py").read_text()
    assert "Swish = SiLU" in text and "class Gate(" in text
    assert "hasattr" not in text and "NoSuchLayer" not in text and "Identity" not in text
    # `"silu" in dir(torch.nn.functional)` by what the port covers (it read the string "torch.nn.functional": False)
    assert "_has_silu = True" in text and "_lacks_mish = False" in text and "_has_nothing = False" in text
    assert "dir(" not in text and "Hard = Hardswish" in text
    porting = (pair.out_dir / "PORTING.md").read_text()
    assert '`if hasattr(nn, "SiLU"):  (decided statically: its body is kept)`' in porting
    assert '`if hasattr(nn, "NoSuchLayer"):  (decided statically: its else branch is kept)`' in porting
    # an optional import of a package the port never has: its handler; the converter's environment: unset
    assert "has_apex = False" in text and "SCALE = 0.5" in text and "os.environ" not in text
    assert "`try:  (an optional import of a package the port does not have: its ImportError handler is kept)`" \
        in porting


@pytest.fixture(scope="module")
def static_branch_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE)))


FLAGS_SOURCE = '''
import torch
try:
    from apex import fused
    has_apex = True
except ImportError:
    has_apex = False
_HAS_HUB = True
_USE_FUSED = False
_COUNTED = False
_COUNTED = True
for _i in range(2):
    _LOOPED = False


def set_fused(value):
    global _USE_FUSED
    _USE_FUSED = value
'''


def _flags_module():
    import libcst as cst

    from porter.frontend.imports import ImportTable
    from porter.frontend.static_branches import decided_module

    module = cst.parse_module(textwrap.dedent(FLAGS_SOURCE))
    imports = ImportTable.from_module(module)
    return decided_module(module, imports.resolve, lambda name: False), imports


def test_module_flags_are_names_set_once_to_a_literal_bool():
    from porter.frontend.static_branches import module_flags

    module, _ = _flags_module()
    # `_USE_FUSED` is rebound through `global`, `_COUNTED` set to both values, `_LOOPED` inside a loop
    assert module_flags(module) == {"has_apex": False, "_HAS_HUB": True}


@pytest.mark.parametrize("test, expected", [
    ("has_apex", False), ("not has_apex", True), ("has_apex and x > 1", False), ("x > 1 and has_apex", False),
    ("_HAS_HUB or x", True), ("not _HAS_HUB or torch.jit.is_scripting()", False),
    ("has_apex or torch.jit.is_scripting()", False), ("x or has_apex", None), ("_USE_FUSED", None),
    ("torch.jit.is_scripting()", None), ("not has_apex and _USE_FUSED", None)])
def test_flag_truth_decides_tests_a_flag_takes_part_in(test, expected):
    import libcst as cst

    from porter.frontend.static_branches import flag_truth, module_flags

    module, imports = _flags_module()
    assert flag_truth(cst.parse_expression(test), module_flags(module), imports.resolve) is expected


CACHE_SOURCE = '''
import torch
import torch.nn as nn


class BiasedMix(nn.Module):
    def __init__(self, tokens=6):
        super().__init__()
        self.biases = nn.Parameter(torch.zeros(tokens))
        self.register_buffer("idxs", torch.arange(tokens).flip(0), persistent=False)
        self.bias_cache = {}

    def get_biases(self, device):
        if torch.jit.is_tracing() or self.training:
            return self.biases[self.idxs]
        else:
            key = str(device)
            if key not in self.bias_cache:
                self.bias_cache[key] = self.biases[self.idxs]
            return self.bias_cache[key]

    def forward(self, x):
        return x + self.get_biases(x.device)
'''


def test_tensor_cache_behind_is_tracing_is_never_filled(tmp_path):
    """timm's attention-bias caches (LeViT, EfficientFormer, TinyViT: `if torch.jit.is_tracing() or self.training:`
    recompute, else a dict keyed by device): the port runs traced, so it recomputes. With the cache, a Keras model
    called once before its weights loaded kept the first biases (timm EfficientFormer: 1e-3 off torch)."""
    pair = port(tmp_path, CACHE_SOURCE, ("4,6",))
    x = random_input(0, (2, 4, 6))
    assert_same_outputs(pair, [x], tolerance=1e-6)
    assert_same_outputs(pair, [x], tolerance=1e-6, jit=True)
    assert pair.keras_model.bias_cache == {}


@pytest.mark.parametrize("test, expected", [
    ('optional_import("torch.nn.functional", name="silu")[1]', True),
    ('not optional_import("torch.nn.functional", name="silu")[1]', False),
    ('monai.utils.optional_import("torch.nn.functional", name="no_such_op")[1]', False),
    ('optional_import("torch.nn.functional", name="silu")[0]', None),  # (the object, not the flag)
    ('optional_import("torch.nn.functional")[1]', None),
])
def test_monai_optional_import_flags_are_decided_as_hasattr(test, expected):
    """MONAI's `if optional_import("torch.nn.functional", name="silu")[1]: def monai_swish(...)` is decided as
    `hasattr(torch.nn.functional, "silu")` is: whether a rule covers the name."""
    import libcst as cst

    from porter.frontend.static_branches import static_truth

    assert static_truth(cst.parse_expression(test), lambda node: None,
                        lambda name: name == "torch.nn.functional.silu") is expected


GETATTR_SOURCE = '''
import torch
import torch.nn as nn


def nullwrap(fn=None):
    return fn


disable_compiler = getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap


class Gated(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = getattr(nn, "SiLU", nn.ReLU)()
        self.norm = getattr(nn, "NoSuchNorm", nn.LayerNorm)(width)

    @disable_compiler
    def forward(self, x):
        return self.norm(self.act(self.fc(x)))
'''


def test_getattr_of_a_torch_module_is_decided_as_hasattr(tmp_path):
    """timm's fast_norm.py `disable_compiler = getattr(getattr(torch, "compiler", None), "disable", None) or
    nullwrap` was carried as written: the port named `torch` (naflexvit.py ended in a porter internal error).
    `getattr(<torch module>, "name", default)` is the attribute where a rule covers it, else the default."""
    pair = port(tmp_path, GETATTR_SOURCE, ("6",))
    text = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "disable_compiler = None or nullwrap" in text and "getattr(" not in text
    x = random_input(0, (3, 6))
    assert_same_outputs(pair, [x], tolerance=1e-6)
    assert_same_outputs(pair, [x], tolerance=1e-6, jit=True)


@pytest.mark.parametrize("code, expected", [
    ('getattr(nn, "SiLU", nn.ReLU)', "nn.SiLU"),
    ('getattr(nn, "NoSuch", nn.ReLU)', "nn.ReLU"),
    ('getattr(getattr(torch, "compiler", None), "disable", None) or wrap', None),  # (not a getattr call itself)
    ('getattr(getattr(torch, "compiler", None), "disable", None)', "None"),
    ('getattr(getattr(torch, "nn", None), "SiLU", None)', "torch.nn.SiLU"),
    ('getattr(torch, "nn", None)', None),  # a torch module: stays as written
    ('getattr(numpy, "exp", None)', None),  # not torch's
    ('getattr(nn, name, None)', None),
])
def test_decided_getattr(code, expected):
    import libcst as cst

    from porter.frontend.imports import dotted_name
    from porter.frontend.static_branches import decided_getattr

    aliases = {"nn": "torch.nn", "torch": "torch"}

    def resolve(node):
        name = dotted_name(node) or ""
        head, _, rest = name.partition(".")
        return aliases[head] + ("." + rest if rest else "") if head in aliases else None

    rules = {"torch.nn.SiLU", "torch.nn.ReLU", "torch.compiler.is_compiling"}
    namespaces = {"torch", "torch.nn", "torch.compiler"}
    decided = decided_getattr(cst.parse_expression(code), resolve, rules.__contains__, namespaces.__contains__)
    assert (None if decided is None else cst.Module([]).code_for_node(decided)) == expected


def test_type_checking_is_false_when_the_code_runs():
    """MONAI's apps/utils.py binds `tqdm, has_tqdm = optional_import("tqdm")` in the else branch of `if
    TYPE_CHECKING:`; the branch taken when code runs is the else (HoVerNet ended "undefined name `has_tqdm`")."""
    import libcst as cst

    from porter.frontend.static_branches import static_truth

    def resolve(node):
        return {"TYPE_CHECKING": "typing.TYPE_CHECKING", "typing.TYPE_CHECKING": "typing.TYPE_CHECKING"}.get(
            cst.Module([]).code_for_node(node))

    for code, expected in (("TYPE_CHECKING", False), ("typing.TYPE_CHECKING", False), ("not TYPE_CHECKING", True)):
        assert static_truth(cst.parse_expression(code), resolve, lambda name: False) is expected
