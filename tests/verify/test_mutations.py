"""Mutation suite: after converting, change the source model's semantics; `porter verify` must fail (exit 1) and
name the submodule that changed, with the source line that changed it."""

import pytest

from tests.verify.conftest import convert_copy

# (fixture, text to change, replacement, which occurrence (1-based), what the report must say)
MUTATIONS = {
    "batchnorm-eps": ("resnet", "self.bn1 = nn.BatchNorm2d(planes)", "self.bn1 = nn.BatchNorm2d(planes, eps=0.1)", 1,
                      ["first diverging submodule: layer1.0.bn1 (BatchNorm2d)", "eps=0.1)` in BasicBlock"]),
    "activation": ("resnet", "self.relu = nn.ReLU(inplace=True)", "self.relu = nn.LeakyReLU(0.2)", 2,
                   ["first diverging submodule: relu (LeakyReLU)", "`self.relu = nn.LeakyReLU(0.2)` in ResNet"]),
    "stride": ("resnet", "kernel_size=3, stride=1, padding=1, bias=False)",
               "kernel_size=3, stride=2, padding=1, bias=False)", 1,
               ["first diverging submodule: conv1 (Conv2d)", "stride=2"]),
    "pool-size": ("vgg_small", "nn.MaxPool2d(kernel_size=2, stride=2)",
                  "nn.MaxPool2d(kernel_size=3, stride=2, padding=1)", 1,
                  ["first diverging submodule: features.6 (MaxPool2d)",
                                    "`self.features = make_layers(cfg)` in VGGSmall",
                                    "built by", "nn.MaxPool2d(kernel_size=3, stride=2, padding=1)"]),
    "functional-activation": ("lenet", "x = F.max_pool2d(F.relu(self.conv1(x)), 2)",
                              "x = F.max_pool2d(torch.tanh(self.conv1(x)), 2)", 1,
                              ["the difference arises in LeNet5 itself, in LeNet5.forward (",
                               "the output of conv1 still matches, the input of conv2 already differs"]),
    "batchnorm-momentum": ("resnet", "self.bn2 = nn.BatchNorm2d(planes)",
                           "self.bn2 = nn.BatchNorm2d(planes, momentum=0.5)", 1,
                           ["MISMATCH in ResNet: train:", "layer1.0.bn2.running_", "layer1.0.bn2 (BatchNorm2d)"]),
}


def replace_occurrence(text, old, new, occurrence):
    parts = text.split(old)
    assert len(parts) > occurrence, f"{old!r} occurs {len(parts) - 1} times"
    return old.join(parts[:occurrence]) + new + old.join(parts[occurrence:])


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutated_source_fails_verify_and_names_the_change(mutation, tmp_path, porter_cli):
    fixture, old, new, occurrence, expected = MUTATIONS[mutation]
    source, out = convert_copy(fixture, tmp_path)
    source.write_text(replace_occurrence(source.read_text(), old, new, occurrence))
    result = porter_cli("verify", out, "--examples", "3")
    assert result.code == 1, result.out + result.err
    for needle in expected:
        assert needle in result.out, f"{needle!r} missing from:\n{result.out}"
    assert f"reproduce: porter verify {out} --class " in result.out
