"""porter.verify.localise: Keras layers found by torch's attribute paths, and the first divergence named."""

import numpy as np
import pytest

from porter.verify.harness import PortedPair
from porter.verify.localise import aligned_error, compare_submodules, keras_layer_at, localise, module_origin


@pytest.fixture(scope="module")
def resnet(converted):
    return PortedPair(converted("resnet"))


def test_keras_layers_are_found_by_torch_paths(resnet):
    keras_model = resnet.keras_model
    assert keras_layer_at(keras_model, "") is keras_model
    assert keras_layer_at(keras_model, "bn1") is keras_model.bn1
    assert keras_layer_at(keras_model, "layer1.0.bn1") is keras_model.layer1[0].bn1
    assert keras_layer_at(keras_model, "layer2.0.downsample.1") is keras_model.layer2[0].downsample[1]
    assert keras_layer_at(keras_model, "layer9") is None
    torch_names = {name for name, _ in resnet.torch_model.named_modules()}
    assert all(keras_layer_at(keras_model, name) is not None for name in torch_names)


def test_channels_last_tensors_are_compared_in_torch_layout():
    torch_tensor = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    keras_tensor = np.moveaxis(torch_tensor, 1, -1)
    assert aligned_error(torch_tensor, keras_tensor, "channels_last")[0] == 0.0
    assert aligned_error(torch_tensor, keras_tensor, "any")[0] == 0.0
    assert aligned_error(torch_tensor, torch_tensor, "source")[0] == 0.0
    assert aligned_error(torch_tensor, keras_tensor[:, :4], "channels_last")[0] == np.inf


def test_tensors_held_permuted_are_compared_in_torch_layout():
    """A block returning its result before a permute its callers fold (timm's SelectiveKernelAttn: (B, paths, C, H,
    W) stored as (B, C, H, W, paths), `layout_out = "permuted:0,3,4,1,2"`) was compared as stored: error inf."""
    torch_tensor = np.random.default_rng(1).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    stored = np.transpose(torch_tensor, [0, 3, 4, 1, 2])
    assert aligned_error(torch_tensor, stored, "permuted:0,3,4,1,2")[0] == 0.0
    assert aligned_error(torch_tensor, stored, "source")[0] == np.inf


def test_every_submodule_matches_on_a_faithful_port(resnet):
    inputs = resnet.example_inputs(batch=2)
    steps = compare_submodules(resnet.torch_model, resnet.keras_model, inputs)
    assert len(steps) >= len(list(resnet.torch_model.modules()))  # ReLUs are called more than once
    assert all(not step.output_diverged for step in steps)
    relu = next(step for step in steps if step.name == "relu")
    assert relu.in_error < 1e-6  # the in-place ReLU's input is captured before it runs
    assert localise(resnet, inputs) is None


def test_a_broken_variable_is_localised_to_its_module(converted):
    pair = PortedPair(converted("resnet"))
    variable = pair.keras_model.layer2[0].bn1.running_var
    variable.assign(variable.numpy() * 1.5)
    localisation = localise(pair, pair.example_inputs(batch=2))
    assert localisation.name == "layer2.0.bn1"
    assert localisation.step.in_error < 1e-6 and localisation.step.out_error > 1e-2
    text = localisation.describe("ResNet")
    assert "first diverging submodule: layer2.0.bn1 (BatchNorm2d)" in text
    assert "resnet.py:" in text and "self.bn1 = nn.BatchNorm2d(planes)" in text and "in BasicBlock" in text
    assert localisation.diverged_at("ResNet")["source"].startswith("resnet.py:")


def test_module_origin_walks_up_to_the_attribute_that_holds_a_container_item(converted):
    pair = PortedPair(converted("vgg_small"))
    where, _ = module_origin(pair, "features.2")
    assert "self.features = make_layers(cfg)" in where and "in VGGSmall" in where
    where, _ = module_origin(pair, "features.6")  # the only MaxPool2d(...) line of the source built it
    assert "built by" in where and "nn.MaxPool2d(kernel_size=2, stride=2)" in where
    where, _ = module_origin(pair, "")
    assert where.startswith(str(pair.source_path.name)) or "vgg_small.py:" in where


PADDED_ENCODER = '''
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 3)

    def forward(self, x, padding):
        return self.head(self.encoder(self.proj(x), src_key_padding_mask=padding))
'''


def test_transformer_encoder_with_a_padding_mask_is_localised(tmp_path):
    """torch's inference fast path hands the encoder's layers nested tensors that hooks cannot read; the capture
    still compares every submodule, and a broken bias deep inside is named."""
    import torch

    from porter.cli import main

    source = tmp_path / "encoder.py"
    source.write_text(PADDED_ENCODER)
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "6,8", "--input-shape", "6:bool"]) == 0
    pair = PortedPair(out)
    x = np.random.default_rng(0).standard_normal((2, 6, 8)).astype(np.float32)
    padding = np.zeros((2, 6), bool)
    padding[0, 4:] = padding[1, 5:] = True  # left-aligned: torch takes the nested-tensor fast path
    steps = compare_submodules(pair.torch_model, pair.keras_model, [x, padding])
    names = {step.name for step in steps}
    assert {"encoder", "encoder.layers.1", "encoder.layers.1.linear2", "head"} <= names
    assert not [step.name for step in steps if step.output_diverged]
    assert torch.backends.mha.get_fastpath_enabled()  # restored after the capture
    bias = keras_layer_at(pair.keras_model, "encoder.layers.1.linear2").bias
    bias.assign(bias.numpy() + 0.5)
    assert localise(pair, [x, padding]).name == "encoder.layers.1.linear2"
