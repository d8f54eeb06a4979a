"""Example inputs of convnets inferred from their layers (porter/frontend/spatial_size.py): the spatial size whose
path through convs and pools reaches the first Linear's in_features; each inferred shape is checked by running the
real torch model on it."""

import textwrap

import pytest
import torch

from porter.frontend.source import parse_source
from porter.frontend.spatial_size import solve_spatial_size
from porter.verify.harness import import_path

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

MODELS = {
    "cifar_tutorial": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.pool = nn.MaxPool2d(2, 2)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)
                self.fc2 = nn.Linear(120, 10)

            def forward(self, x):
                x = self.pool(F.relu(self.conv1(x)))
                x = self.pool(F.relu(self.conv2(x)))
                x = torch.flatten(x, 1)
                return self.fc2(F.relu(self.fc1(x)))
        """, "Net", (3, 32, 32)),
    "mnist_functional": ("""
        class Net(nn.Module):
            def __init__(self, classes=10):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 32, 3, 1)
                self.conv2 = nn.Conv2d(32, 64, 3, 1)
                self.dropout1 = nn.Dropout(0.25)
                self.fc1 = nn.Linear(9216, 128)
                self.fc2 = nn.Linear(128, classes)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = F.relu(self.conv2(x))
                x = F.max_pool2d(x, 2)
                x = self.dropout1(x)
                x = torch.flatten(x, 1)
                x = F.relu(self.fc1(x))
                return F.log_softmax(self.fc2(x), dim=1)
        """, "Net", (1, 28, 28)),
    "sequential_view": ("""
        class VGGish(nn.Module):
            def __init__(self, width=8):
                super().__init__()
                self.features = nn.Sequential(
                    nn.Conv2d(3, width, kernel_size=3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                    nn.MaxPool2d(kernel_size=2, stride=2),
                    nn.Conv2d(width, 2 * width, kernel_size=3, padding=1), nn.ReLU(inplace=True),
                    nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                )
                self.classifier = nn.Linear(2 * width * 8 * 8, 10)

            def forward(self, x):
                x = self.features(x)
                x = x.view(x.size(0), -1)
                return self.classifier(x)
        """, "VGGish", (3, 32, 32)),
    "adaptive_pool": ("""
        class AlexNetSmall(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(
                    nn.Conv2d(3, 8, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
                    nn.MaxPool2d(kernel_size=3, stride=2),
                    nn.Conv2d(8, 16, kernel_size=5, padding=2), nn.ReLU(inplace=True),
                    nn.MaxPool2d(kernel_size=3, stride=2),
                )
                self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
                self.classifier = nn.Sequential(nn.Dropout(), nn.Linear(16 * 6 * 6, 10))

            def forward(self, x):
                x = self.features(x)
                x = self.avgpool(x)
                x = torch.flatten(x, 1)
                return self.classifier(x)
        """, "AlexNetSmall", (3, 32, 32)),  # after an adaptive pool any size fits: the first conventional one
    "audio_1d": ("""
        class M5(nn.Module):
            def __init__(self, n_input=1, n_output=35, stride=16, n_channel=8):
                super().__init__()
                self.conv1 = nn.Conv1d(n_input, n_channel, kernel_size=80, stride=stride)
                self.pool1 = nn.MaxPool1d(4)
                self.conv2 = nn.Conv1d(n_channel, n_channel, kernel_size=3)
                self.pool2 = nn.MaxPool1d(4)
                self.fc1 = nn.Linear(n_channel * 7, n_output)

            def forward(self, x):
                x = self.pool1(F.relu(self.conv1(x)))
                x = self.pool2(F.relu(self.conv2(x)))
                x = x.flatten(1)
                return self.fc1(x)
        """, "M5", None),  # any of the fitting lengths, checked in torch below
}


def write(tmp_path, code):
    path = tmp_path / "model.py"
    path.write_text(HEADER + textwrap.dedent(code).lstrip("\n"))
    return path


@pytest.mark.parametrize("name", sorted(MODELS))
def test_inferred_size_runs_in_torch(tmp_path, name):
    code, class_name, expected = MODELS[name]
    path = write(tmp_path, code)
    source = parse_source(path, path.name)
    first = source.classes[class_name]
    module = import_path(path)
    model = getattr(module, class_name)().eval()
    channels = next(m for m in model.modules() if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d))).in_channels
    spatial = 1 if name == "audio_1d" else 2
    size, reason = solve_spatial_size(source, first.name, channels, spatial)
    shape = (channels,) + (size,) * spatial
    if expected is not None:
        assert shape == expected, reason
    with torch.no_grad():
        model(torch.zeros((2,) + shape))  # the inferred input really fits the model


def test_reason_names_the_fitting_sizes_or_the_adaptive_pool(tmp_path):
    """A bounded run of sizes (M5: 1984-2239 reach Linear(56)) is named as a range; only sizes fitting up to the
    largest tried read as an adaptive pool."""
    path = write(tmp_path, "\n\n".join(textwrap.dedent(MODELS[name][0]) for name in ("audio_1d", "adaptive_pool")))
    source = parse_source(path, path.name)
    assert solve_spatial_size(source, "M5", 1, 1) == (1984, "the sizes that reach Linear(56) exactly: 1984-2239")
    adaptive = next(name for name in source.classes if name != "M5")
    assert solve_spatial_size(source, adaptive, 3, 2)[1] == "any size from there on fits (an adaptive pool)"


def test_control_flow_or_unknown_blocks_stay_unknown(tmp_path):
    path = write(tmp_path, """
        class Gated(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)
                self.fc = nn.Linear(4 * 30 * 30, 2)

            def forward(self, x):
                x = self.conv(x)
                if x.mean() > 0:
                    x = x * 2
                return self.fc(x.flatten(1))
        """)
    source = parse_source(path, path.name)
    assert solve_spatial_size(source, "Gated", 3, 2) is None


def test_convert_reports_the_inferred_shape(tmp_path):
    from porter.convert import ConvertOptions, convert

    path = write(tmp_path, MODELS["cifar_tutorial"][0])
    conversion = convert(ConvertOptions(path, tmp_path / "out"))
    assert conversion.exit_code == 0
    (entry,) = conversion.manifest["sources"][0]["classes"]
    assert entry["example_inputs"][0]["shape"] == [3, 32, 32]
    assert any("--input-shape 3,32,32" in warning for warning in conversion.warnings)
