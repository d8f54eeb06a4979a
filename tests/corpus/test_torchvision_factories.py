"""torchvision model files whose model class takes what JSON cannot give (`ResNet(block, layers)`, ShuffleNetV2's
stage lists, EfficientNet's block settings), converted by `porter convert FILE` with no `--class`: the port builds
the model as the file's first factory does (`resnet18()`), and `porter verify`'s harness, the generated tests and
train_tpu.py build it through that factory, so the port is checked and trained as it comes
(porter/frontend/model_entry.py)."""

import json

import pytest

from tests.corpus.torchvision_support import import_torchvision, model_file
from tests.rules.op_ports import assert_matches_at_two_batches

torchvision = import_torchvision()
pytestmark = pytest.mark.skipif(torchvision is None, reason="torchvision 0.28.0 is not installed (scripts/setup.sh "
                                                            "installs it with --no-deps)")

# file -> (the factory porter picks, --input-shape, --init-args, Transposes at most)
CASES = {
    "resnet": ("resnet18", "3,32,32", {"num_classes": 10}, 2),
    "shufflenetv2": ("shufflenet_v2_x0_5", "3,32,32", {}, 2),
    "efficientnet": ("efficientnet_b0", "3,32,32", {"num_classes": 10}, 2),
}


def convert(stem, out, *extra):
    from porter.cli import main

    return main(["convert", str(model_file(torchvision, stem)), "-o", str(out), *extra])


@pytest.mark.parametrize("stem", sorted(CASES))
def test_a_class_needing_a_block_class_is_built_as_its_first_factory_builds_it(stem, tmp_path, capsys):
    from porter.verify.command import importable_in_its_package
    from porter.verify.harness import PortedPair

    factory, shape, init_args, transposes = CASES[stem]
    init = ["--init-args", json.dumps(init_args)] if init_args else []
    assert convert(stem, tmp_path, "--input-shape", shape, *init) == 0
    assert f"built by {factory}()" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "porter-manifest.json").read_text())
    assert manifest["model_factory"] == factory
    assert f"model = model_lib.{factory}(**INIT_ARGS)" in (tmp_path / "train_tpu.py").read_text()
    with importable_in_its_package():  # as `porter verify` imports a file of a package
        pair = PortedPair(tmp_path)  # the torch side: torchvision's own factory, weights=None
    assert type(pair.torch_model).__name__ == manifest["main_class"]
    assert_matches_at_two_batches(pair, transposes, seeds=(0, 1), tolerance=1e-4)


def test_class_names_another_factory(tmp_path, capsys):
    assert convert("resnet", tmp_path, "--class", "resnet50", "--input-shape", "3,32,32") == 0
    module = (tmp_path / "resnet_keras.py").read_text()
    assert "def resnet50(**kwargs):" in module and "return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)" in module
    assert "main class ResNet built by resnet50()" in capsys.readouterr().out


def test_arguments_the_ports_factory_fixes_are_refused_in_one_line(tmp_path, capsys):
    assert convert("resnet", tmp_path / "out", "--init-args", '{"progress": false}') == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'progress' cannot be given to resnet18()" in err
    assert not (tmp_path / "out").exists()


def test_a_segmentation_model_built_from_a_siblings_factory_is_built_as_its_factory_builds_it(tmp_path, capsys):
    """segmentation/fcn.py's `FCN(backbone, classifier)` is built by `fcn_resnet50()` from resnet.py's `resnet50()`
    (its `weights_backbone` defaulting to ImageNet weights) wrapped in `IntermediateLayerGetter`: the file is read
    again with what its factories use linked in, the backbone's weights switch is None on both sides (torch's side
    is handed `weights_backbone=None`), and each module the factory builds is a statement of the port's."""
    from porter.verify.command import importable_in_its_package
    from porter.verify.harness import PortedPair

    assert convert("segmentation/fcn", tmp_path, "--input-shape", "3,32,32") == 0
    assert "built by fcn_resnet50()" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "porter-manifest.json").read_text())
    assert manifest["model_factory_torch_arguments"] == {"weights_backbone": None}
    module = (tmp_path / "fcn_keras.py").read_text()
    assert 'backbone_2 = IntermediateLayerGetter(backbone, return_layers={"layer4": "out"})' in module
    assert "class SemanticSegmentation" not in module and "Weights(" not in module  # (the weights enums' presets)
    with importable_in_its_package():
        pair = PortedPair(tmp_path)
    assert type(pair.torch_model.backbone).__name__ == "IntermediateLayerGetter"
    # (18 Transposes: FCN's backbone is a constructor argument, which its class's translation cannot type, so each
    # child IntermediateLayerGetter calls converts at its boundary; typing it from the factory is left)
    assert_matches_at_two_batches(pair, 18, seeds=(0, 1), tolerance=1e-4)
