"""`timm.create_model("resnet18", ...)` in a user's model: the registered entrypoint, linked from timm's files.

User code builds timm backbones by name; porter stubbed the call (`timm.create_model ... is not supported yet`,
the port raising at construction). frontend/timm_models.py finds the name's `@register_model` entrypoint by
reading timm's files and reads the call as a call of it; the linker takes it from timm with what it uses; timm's
builder is read as the construction it makes (`build_model_with_cfg(ResNet, ...)` -> `ResNet(**kwargs)`), or, where
the class is chosen at run time (efficientnet.py's `model_cls`), runs as the runtime's `build_model_with_cfg`
(no downloads). A definition linked under the name code gives a framework module (timm's typing.py `F =
TypeVar("F")` beside norm.py's `import torch.nn.functional as F`) gets a name of its own. Each port matches torch
for drawn sizes (batch 1 included); the ResNet converts only at its boundary.
"""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.libraries import library_root
from porter.frontend.timm_models import entrypoints
from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

import_torchvision()  # (timm imports torchvision where it is installed)
pytest.importorskip("timm", reason="timm is not installed (scripts/setup.sh installs it with --no-deps)")

SOURCES = {
    "resnet": '''
        import torch.nn as nn
        import timm


        class OpModel(nn.Module):
            def __init__(self, num_classes=5):
                super().__init__()
                self.backbone = timm.create_model("resnet18.a1_in1k", pretrained=False)
                self.backbone.reset_classifier(num_classes)  # (its get_device_dtype: a torch device before)

            def forward(self, x):
                return self.backbone(x)
    ''',
    "efficientnet": '''
        import torch
        import torch.nn as nn
        from timm import create_model


        class OpModel(nn.Module):
            def __init__(self, num_classes=3):
                super().__init__()
                self.backbone = create_model("efficientnet_b0", pretrained=False, num_classes=0)
                self.head = nn.Linear(1280, num_classes)

            def forward(self, x):
                return self.head(self.backbone(x))
    ''',
    "features": '''
        import torch.nn as nn
        import timm


        class OpModel(nn.Module):
            def __init__(self, num_classes=4):
                super().__init__()
                self.backbone = timm.create_model("resnet18", pretrained=False)
                self.fc = nn.Linear(512, num_classes)

            def forward(self, x):
                x = self.backbone.forward_features(x)  # (a method of the backbone, not its forward)
                return self.fc(x.mean(dim=(2, 3)))
    ''',
}


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCES[name]),
                                    input_specs=("3,32,32",)))


def test_entrypoints_are_read_from_timms_files():
    found = entrypoints(library_root("timm"))
    assert found["resnet18"] == "timm.models.resnet" and found["efficientnet_b0"] == "timm.models.efficientnet"
    assert "create_model" not in found and "ResNet" not in found  # (registered functions only)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_no_stub_is_left(pairs, name):
    code = (pairs(name).out_dir / "op_model_keras.py").read_text()
    assert "create_model" not in code.split("# --- ported from", 1)[-1]
    assert "UnsupportedModule(" not in code and "not_supported(" not in code.split("class OpModel", 1)[-1]


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.integers(32, 41),
       name=st.sampled_from(sorted(SOURCES)))
def test_port_matches_torch(pairs, seed, batch, size, name):
    assert_same_outputs(pairs(name), [random_input(seed, (batch, 3, size, size + 1))], tolerance=1e-4)


@pytest.mark.parametrize("name", ["resnet", "features"])
def test_resnet_converts_only_at_its_boundary(pairs, name):
    """`self.backbone.forward_features(x)` is laid out as the backbone's forward is: the user's model converts
    on entry (14 Transposes before: the method was translated for the caller's torch-order input, every stage
    converting at its boundary)."""
    from porter.verify.harness import count_transposes

    inputs = [random_input(0, (2, 3, 32, 32))]
    assert_same_outputs(pairs(name), inputs, tolerance=1e-4, jit=True)
    assert count_transposes(pairs(name).keras_model, inputs) <= 2


def test_create_model_calls_read_as_their_entrypoints():
    """The call is read on its own lines; a tag after the architecture's name is dropped, create_model's own
    arguments too; a feature extractor, a name timm does not register and a name the file binds stay as written."""
    import libcst as cst

    from porter.frontend.imports import ImportTable
    from porter.frontend.timm_models import created_models

    text = textwrap.dedent('''
        import timm
        from timm import create_model as make

        a = timm.create_model("resnet18.a1_in1k", pretrained=False, num_classes=3, scriptable=True)
        b = make(
            "efficientnet_b0", drop_rate=0.1)
        c = timm.create_model("resnet18", features_only=True)
        d = timm.create_model("no_such_model")
        e = timm.create_model(name)
    ''')
    module = cst.parse_module(text)
    rewritten, created = created_models(module, ImportTable.from_module(module).resolve, library_root("timm"), set())
    assert created == {"resnet18": "timm.models.resnet", "efficientnet_b0": "timm.models.efficientnet"}
    lines = rewritten.code.splitlines()
    assert lines[4] == "a = resnet18(pretrained=False, num_classes=3)"
    assert lines[5:7] == ["b = efficientnet_b0(", "    drop_rate=0.1)"]
    assert lines[7:10] == text.splitlines()[7:10]


def test_a_model_name_held_by_a_constant_or_a_parameter_default():
    """The most common form in user code: the name in a module constant or a config class (that entrypoint), or a
    constructor parameter's default (the entrypoint chosen by the value at run time: another name raises
    KeyError, never builds something else)."""
    import libcst as cst

    from porter.frontend.imports import ImportTable
    from porter.frontend.timm_models import created_models

    text = textwrap.dedent('''
        import timm
        MODEL_NAME = "resnet18"

        class CFG:
            model_name = "efficientnet_b0"

        class Net:
            def __init__(self, name="resnet34", other=CFG.model_name):
                self.a = timm.create_model(MODEL_NAME)
                self.b = timm.create_model(CFG.model_name, num_classes=2)
                self.c = timm.create_model(name, pretrained=False)
                self.d = timm.create_model(other)
    ''')
    module = cst.parse_module(text)
    rewritten, created = created_models(module, ImportTable.from_module(module).resolve, library_root("timm"), set())
    assert sorted(created) == ["efficientnet_b0", "resnet18", "resnet34"]
    lines = [line.strip() for line in rewritten.code.splitlines()[9:13]]
    assert lines == ["self.a = resnet18()", "self.b = efficientnet_b0(num_classes=2)",
                     "self.c = {'resnet34': resnet34}[name](pretrained=False)",
                     "self.d = {'efficientnet_b0': efficientnet_b0}[other]()"]
