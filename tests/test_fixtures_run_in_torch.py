"""Every fixture model builds with default arguments and runs a forward pass in PyTorch.

Fixtures are imported by path (their ``__main__`` training sections are not run).
The table below is the single source of truth for each fixture's main class and
the inputs its ``__main__`` section feeds it.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"


def f32(*shape):
    return ("float32", shape, None)


def i64(*shape, low=0, high):
    return ("int64", shape, (low, high))


# file -> (main class name, forward inputs, expected output shape)
FIXTURES = {
    "mlp.py": ("MLP", [f32(64, 1, 28, 28)], (64, 10)),
    "lenet.py": ("LeNet5", [f32(64, 1, 28, 28)], (64, 10)),
    "vgg_small.py": ("VGGSmall", [f32(32, 3, 32, 32)], (32, 10)),
    "resnet.py": ("ResNet", [f32(16, 3, 32, 32)], (16, 10)),
    "mobilenetv2.py": ("MobileNetV2", [f32(16, 3, 32, 32)], (16, 10)),
    "depthwise_separable.py": ("DSCNet", [f32(32, 3, 64, 64)], (32, 10)),
    "unet.py": ("UNet", [f32(4, 3, 64, 64)], (4, 1, 64, 64)),
    "audio_conv1d.py": ("M5", [f32(16, 1, 8000)], (16, 12)),
    "lstm_tagger.py": ("LSTMTagger", [i64(8, 20, low=1, high=1000)], (8, 20, 17)),
    "gru_encoder.py": ("SentenceClassifier", [i64(16, 25, high=2000)], (16, 4)),
    "gpt_mini.py": ("GPT", [i64(8, 32, high=512)], (8, 32, 512)),
    "vit.py": ("ViT", [f32(16, 3, 32, 32)], (16, 10)),
    "recommender.py": ("DLRM", [f32(128, 13), i64(128, 3, 4, high=50)], (128,)),
    "se_block.py": ("SENet", [f32(32, 3, 32, 32)], (32, 10)),
    "transformer_classifier.py": ("TransformerClassifier", [i64(16, 48, low=1, high=5000)], (16, 2)),
    "conv3d_video.py": ("VideoNet", [f32(4, 8, 3, 32, 32)], (4, 5)),
    "superres.py": ("SuperResNet", [f32(8, 3, 24, 24)], (8, 3, 48, 48)),
    "train_mnist.py": ("Net", [f32(64, 1, 28, 28)], (64, 10)),
    "train_lm.py": ("TransformerLM", [i64(16, 32, high=256)], (16, 32, 256)),
}

MAX_PARAMS = 500_000

# nn.TransformerEncoder's eval fast path with a padding mask warns that nested tensors are a prototype.
pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors:UserWarning")


def load_fixture(filename):
    path = FIXTURES_DIR / filename
    name = f"porter_fixture_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def make_inputs(specs, seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = []
    for dtype, shape, bounds in specs:
        if dtype == "float32":
            inputs.append(torch.randn(*shape, generator=g))
        else:
            low, high = bounds
            inputs.append(torch.randint(low, high, shape, generator=g))
    return inputs


def test_table_covers_every_fixture():
    on_disk = {p.name for p in FIXTURES_DIR.glob("*.py")}
    assert on_disk == set(FIXTURES)


@pytest.mark.parametrize("filename", sorted(FIXTURES))
def test_fixture_forward(filename):
    class_name, specs, out_shape = FIXTURES[filename]
    module = load_fixture(filename)
    torch.manual_seed(0)
    model = getattr(module, class_name)()
    assert isinstance(model, torch.nn.Module)
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params <= MAX_PARAMS, f"{filename}: {n_params} parameters"

    model.eval()
    with torch.no_grad():
        out = model(*make_inputs(specs))
    assert tuple(out.shape) == out_shape
    assert torch.isfinite(out).all()


def test_resnet_bottleneck_variant():
    module = load_fixture("resnet.py")
    model = module.ResNet(module.Bottleneck, [1, 1, 1], width=8).eval()
    with torch.no_grad():
        out = model(torch.randn(2, 3, 32, 32))
    assert tuple(out.shape) == (2, 10)
