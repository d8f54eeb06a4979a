"""timm's EfficientNet family built by its own factories: `porter convert efficientnet.py --class efficientnet_b0`
follows `efficientnet_b0()` -> `_gen_efficientnet()` (the architecture's block strings decoded by
_efficientnet_builder.py's `decode_arch_def`, the activation and BatchNorm arguments popped from the user's keyword
arguments by `resolve_act_layer` / `resolve_bn_args`) -> `_create_effnet()` (`if kwargs.pop("features_only",
False)`) -> `build_model_with_cfg(EfficientNet, ...)`. EfficientNet's `block_args` (dicts holding activation
classes) cannot be given as JSON: before, the port could not be built, verified or trained. The port's factory runs
the same helpers (linked in from the package) and matches timm's model.
"""

import json

import pytest

from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_matches_at_two_batches

import_torchvision()  # timm imports torchvision, whose compiled ops need their schemas registered first
timm = pytest.importorskip("timm", reason="timm is not installed (scripts/setup.sh installs timm==1.0.31 with "
                                          "--no-deps)")


def test_efficientnet_b0_is_built_as_its_factory_builds_it_and_matches_timm(tmp_path, capsys):
    from pathlib import Path

    from porter.cli import main
    from porter.verify.command import importable_in_its_package
    from porter.verify.harness import PortedPair

    source = Path(timm.__file__).parent / "models" / "efficientnet.py"
    assert main(["convert", str(source), "-o", str(tmp_path), "--class", "efficientnet_b0",
                 "--input-shape", "3,32,32"]) in (0, 1)  # (stubs in sibling files the port carries)
    assert "main class EfficientNet built by efficientnet_b0()" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "porter-manifest.json").read_text())
    assert manifest["model_factory"] == "efficientnet_b0"
    module = (tmp_path / "efficientnet_keras.py").read_text()
    assert "def decode_arch_def(" in module and '"act_layer": resolve_act_layer(kwargs, "swish")' in module
    with importable_in_its_package():  # as `porter verify` imports a file of a package
        pair = PortedPair(tmp_path)  # the torch side: timm's own efficientnet_b0(), pretrained=False
    assert type(pair.torch_model).__name__ == "EfficientNet" and len(pair.torch_model.blocks) == 7
    assert_matches_at_two_batches(pair, 1, seeds=(0, 1), tolerance=1e-4)
    with pytest.raises(TypeError, match="features_only"):  # a switch the port's factory does not follow
        pair.keras_module.efficientnet_b0(features_only=True)


def test_a_file_holding_a_block_converts_the_model_its_factories_build(tmp_path, capsys):
    """timm's res2net.py defines only its block, `Bottle2neck`; its factories hand it to resnet.py's `ResNet`
    through timm's builder. Converted with no `--class`, the main class was the block (needing `inplanes` and
    `planes`: nothing could build it); the model is what the factories build."""
    from pathlib import Path

    from porter.cli import main
    from porter.verify.command import importable_in_its_package
    from porter.verify.harness import PortedPair
    from tests.rules.op_ports import assert_same_outputs

    source = Path(timm.__file__).parent / "models" / "res2net.py"
    assert main(["convert", str(source), "-o", str(tmp_path), "--input-shape", "3,32,32"]) == 0
    assert "main class ResNet built by res2net50_26w_4s()" in capsys.readouterr().out
    with importable_in_its_package():
        pair = PortedPair(tmp_path)
    assert type(pair.torch_model.layer1[0]).__name__ == "Bottle2neck"
    assert_same_outputs(pair, pair.example_inputs(batch=1, seed=0), tolerance=1e-4)
