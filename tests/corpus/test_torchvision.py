"""torchvision's own model files, converted as they sit in the installed package, match torchvision's modules.

Each class is built as the file's factories build it (reduced depths and small inputs), its parameters and
BatchNorm statistics moved off their defaults; the port must import, load torch's state_dict, match eagerly and
under XLA within 1e-4 of the output's scale, and convert layouts only at its boundary: at most 2 Transpose ops,
or for the models that move data between axes in torch itself (window partitions), at most torch's own data
moves plus those 2 (the ports that still trace more are strict xfails naming why). Every file of
torchvision/models converted as it is: tests/corpus/test_torchvision_every_file.py.
"""

import importlib.util
import weakref

import numpy as np
import pytest

from porter.verify.harness import inference_trace, transposes_in
from porter.verify.torch_moves import count_torch_data_moves
from tests.corpus.torchvision_support import import_torchvision, model_file
from tests.training.helpers import convert_source

torchvision = import_torchvision()
pytestmark = pytest.mark.skipif(torchvision is None, reason="torchvision 0.28.0 is not installed (scripts/setup.sh "
                                                            "installs it with --no-deps)")

# file stem -> (main class, torch builder, Keras builder (module -> model), input shape)
MOBILENET_V3_ROWS = [(16, 3, 16, 16, True, "RE", 2, 1), (16, 3, 72, 24, False, "RE", 2, 1),
                     (24, 5, 96, 40, True, "HS", 2, 1)]
CONVNEXT_ROWS = [(8, 16, 1), (16, None, 1)]
EFFICIENTNET_ROWS = [(1, 3, 1, 32, 16, 1, 1.0, 1.0), (6, 3, 2, 16, 24, 2, 1.0, 1.0)]
VIT_TINY = {"image_size": 32, "patch_size": 8, "num_layers": 2, "num_heads": 2, "hidden_dim": 16, "mlp_dim": 32,
            "num_classes": 10}
MAXVIT_TINY = {"input_size": (32, 32), "stem_channels": 8, "partition_size": 2, "block_channels": [16, 32],
               "block_layers": [1, 1], "head_dim": 8, "stochastic_depth_prob": 0.0, "num_classes": 10}
REGNET_PARAMS = {"depth": 6, "w_0": 16, "w_a": 8.0, "w_m": 2.0, "group_width": 8}
SWIN_TINY = {"patch_size": [4, 4], "embed_dim": 16, "depths": [2, 1], "num_heads": [2, 2], "window_size": [2, 2],
             "stochastic_depth_prob": 0.0, "num_classes": 10}  # the second block of stage 1 shifts its windows


def swin_v2(module):
    """Swin V2 as torchvision's swin_v2_t builds it: its own block and patch merging."""
    return module.SwinTransformer(**SWIN_TINY, block=module.SwinTransformerBlockV2,
                                  downsample_layer=module.PatchMergingV2)


CASES = {
    "alexnet": ("AlexNet", lambda tv: tv.models.AlexNet(num_classes=10), lambda m: m.AlexNet(num_classes=10),
                (1, 3, 64, 64)),
    "vgg": ("VGG", lambda tv: tv.models.vgg.VGG(tv.models.vgg.make_layers([16, "M", 512, "M"], batch_norm=True),
                                                num_classes=10, init_weights=False),
            lambda m: m.VGG(m.make_layers([16, "M", 512, "M"], batch_norm=True), num_classes=10,
                            init_weights=False), (2, 3, 32, 32)),
    "resnet": ("ResNet", lambda tv: tv.models.resnet.ResNet(tv.models.resnet.Bottleneck, [1, 2, 1, 1], num_classes=10,
                                                            groups=2, width_per_group=8),
               lambda m: m.ResNet(m.Bottleneck, [1, 2, 1, 1], num_classes=10, groups=2, width_per_group=8),
               (2, 3, 32, 32)),
    "maxvit": ("MaxVit", lambda tv: tv.models.MaxVit(**MAXVIT_TINY), lambda m: m.MaxVit(**MAXVIT_TINY), (1, 3, 32, 32)),
    "regnet": ("RegNet", lambda tv: tv.models.regnet.RegNet(tv.models.regnet.BlockParams.from_init_params(
        **REGNET_PARAMS), num_classes=10), lambda m: m.RegNet(m.BlockParams.from_init_params(**REGNET_PARAMS),
                                                             num_classes=10), (2, 3, 32, 32)),
    "squeezenet": ("SqueezeNet", lambda tv: tv.models.SqueezeNet("1_1", num_classes=10),
                   lambda m: m.SqueezeNet("1_1", num_classes=10), (1, 3, 64, 64)),
    "mnasnet": ("MNASNet", lambda tv: tv.models.MNASNet(0.5, num_classes=10),
                lambda m: m.MNASNet(0.5, num_classes=10), (1, 3, 32, 32)),
    "shufflenetv2": ("ShuffleNetV2",
                     lambda tv: tv.models.ShuffleNetV2([2, 2, 2], [24, 48, 96, 192, 256], num_classes=10),
                     lambda m: m.ShuffleNetV2([2, 2, 2], [24, 48, 96, 192, 256], num_classes=10), (1, 3, 64, 64)),
    "densenet": ("DenseNet", lambda tv: tv.models.DenseNet(8, (2, 2), 16, num_classes=10),
                 lambda m: m.DenseNet(8, (2, 2), 16, num_classes=10), (2, 3, 32, 32)),
    "googlenet": ("GoogLeNet", lambda tv: tv.models.GoogLeNet(num_classes=10, aux_logits=False, init_weights=False),
                  lambda m: m.GoogLeNet(num_classes=10, aux_logits=False, init_weights=False), (1, 3, 64, 64)),
    "mobilenetv2": ("MobileNetV2", lambda tv: tv.models.MobileNetV2(width_mult=0.5, num_classes=10),
                    lambda m: m.MobileNetV2(width_mult=0.5, num_classes=10), (1, 3, 32, 32)),
    "mobilenetv3": ("MobileNetV3",
                    lambda tv: tv.models.mobilenetv3.MobileNetV3(
                        [tv.models.mobilenetv3.InvertedResidualConfig(*row, 1.0) for row in MOBILENET_V3_ROWS], 64,
                        num_classes=10),
                    lambda m: m.MobileNetV3([m.InvertedResidualConfig(*row, 1.0) for row in MOBILENET_V3_ROWS], 64,
                                            num_classes=10), (1, 3, 64, 64)),
    "convnext": ("ConvNeXt", lambda tv: tv.models.convnext.ConvNeXt(
        [tv.models.convnext.CNBlockConfig(*row) for row in CONVNEXT_ROWS], num_classes=10),
        lambda m: m.ConvNeXt([m.CNBlockConfig(*row) for row in CONVNEXT_ROWS], num_classes=10), (1, 3, 32, 32)),
    "efficientnet": ("EfficientNet", lambda tv: tv.models.efficientnet.EfficientNet(
        [tv.models.efficientnet.MBConvConfig(*row) for row in EFFICIENTNET_ROWS], 0.2, num_classes=10),
        lambda m: m.EfficientNet([m.MBConvConfig(*row) for row in EFFICIENTNET_ROWS], 0.2, num_classes=10),
        (1, 3, 32, 32)),
    "vision_transformer": ("VisionTransformer",
                           lambda tv: tv.models.VisionTransformer(**VIT_TINY), lambda m: m.VisionTransformer(**VIT_TINY),
                           (1, 3, 32, 32)),
    "inception": ("Inception3",
                  lambda tv: tv.models.Inception3(num_classes=10, aux_logits=False, init_weights=False),
                  lambda m: m.Inception3(num_classes=10, aux_logits=False, init_weights=False), (1, 3, 96, 96)),
    "swin_transformer": ("SwinTransformer", lambda tv: tv.models.swin_transformer.SwinTransformer(**SWIN_TINY),
                         lambda m: m.SwinTransformer(**SWIN_TINY), (1, 3, 32, 32)),
    "swin_transformer_v2": ("SwinTransformer", lambda tv: swin_v2(tv.models.swin_transformer), swin_v2,
                            (1, 3, 32, 32)),
}
# case -> the model file it builds from, where the case is not named after its file
CASE_FILES = {"swin_transformer_v2": "swin_transformer"}
# cases whose torch model moves data between axes itself (window partitions, attention heads): the port may trace
# a Transpose for each of torch's own moves, and at most 2 more
MOVES_DATA_ITSELF = {"swin_transformer", "swin_transformer_v2", "maxvit"}


# Transpose ops these ports still trace (layouts porter cannot follow statically yet: they convert at run time)
TRANSPOSES_LEFT = {}


def perturbed(model):
    """`model` with every float parameter and buffer moved off its initial value (running variances positive)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, value in model.state_dict().items():
            if value.dtype.is_floating_point:
                noise = 0.1 * torch.randn(value.shape, generator=generator)
                value.copy_(value.abs() + 0.5 if "running_var" in name else value + noise)
    return model.eval()


def assert_port_matches(torch_model, keras_model, x, xla=True):
    """The port's output equals torch's within 1e-4 of its scale, eagerly and (unless `xla` is false) under
    jit_compile=True."""
    import tensorflow as tf
    import torch

    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    scale = float(np.abs(expected).max())
    eager = np.asarray(keras_model(x, training=False))
    runs = [eager]
    if xla:
        compiled, _ = xla_trace(keras_model, x)
        runs.append(np.asarray(compiled(tf.constant(x))))
    for got in runs:
        assert got.shape == expected.shape and np.isfinite(got).all()
        assert float(np.abs(got - expected).max()) <= 1e-4 * scale


# Keras model -> {(shape, dtype): (tf.function, concrete function)}. A trace's function holds its model, so the weak
# keys alone never let a model go: release_xla_traces() empties the table as each test module ends (tests/conftest.py)
_XLA_TRACES = weakref.WeakKeyDictionary()


def xla_trace(keras_model, x):
    """(`keras_model`'s inference tf.function under jit_compile=True, its concrete function for `x`), traced once per
    model and input shape: the XLA run of one test and the Transposes another counts share the trace, which costs
    seconds for a full-size network."""
    traces = _XLA_TRACES.setdefault(keras_model, {})
    key = (tuple(x.shape), str(x.dtype))
    if key not in traces:
        traces[key] = inference_trace(keras_model, [x], jit_compile=True)
    return traces[key]


def keep_only(cache, stem):
    """Let every network in `cache` (stem -> (torch model, Keras model, input)) but `stem`'s go, with its XLA traces:
    tests/scheduling.py runs a corpus file's tests of one network together, so a module holds one network at a time
    (a full-size network is gigabytes); run in another order, a network is only built again."""
    for other in [key for key in cache if key != stem]:
        _XLA_TRACES.pop(cache.pop(other)[1], None)


def release_xla_traces():
    """Forget every trace (tests/conftest.py, as each test module ends): without it, every network a worker traced
    stayed alive with its XLA executable until the session ended (PolyNet, PNASNet at 331 pixels, a 120M-parameter
    VGG ...)."""
    _XLA_TRACES.clear()


def xla_transposes(keras_model, x):
    """Transpose ops in the graph XLA compiles for `keras_model` on `x` (the plain trace's ops, except that depthwise
    convolutions XLA runs on a CPU are written as sums over their taps: slices and products, no Transpose)."""
    return transposes_in(xla_trace(keras_model, x)[1])


def import_by_path(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """stem -> (torch model, Keras model, example input), converted once per test module, the last network asked
    for kept (get.ports: stem -> the imported port module)."""
    cache, ports = {}, {}

    def get(stem):
        if stem not in cache:
            keep_only(cache, stem)
            main_class, build_torch, build_keras, shape = CASES[stem]
            out = tmp_path_factory.mktemp(stem) / "out"
            file = CASE_FILES.get(stem, stem)
            convert_source(model_file(torchvision, file), out, "--class", main_class)  # in process: no Python
            # started per file (tests/test_cli.py runs the command as a program)
            port = import_by_path(out / f"{file}_keras.py", f"torchvision_port_{stem}")
            torch_model = perturbed(build_torch(torchvision))
            keras_model = build_keras(port)
            x = np.random.default_rng(0).standard_normal(shape).astype("float32")
            keras_model(x)
            port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
            cache[stem] = (torch_model, keras_model, x)
            ports.clear()
            ports[stem] = port
        return cache[stem]

    get.ports = ports
    return get


@pytest.mark.parametrize("stem", sorted(CASES))
def test_torchvision_model_file_matches(stem, ported):
    assert_port_matches(*ported(stem))


@pytest.mark.parametrize("stem", [
    pytest.param(stem, marks=pytest.mark.xfail(reason=TRANSPOSES_LEFT[stem], strict=True))
    if stem in TRANSPOSES_LEFT else stem for stem in sorted(CASES)])
def test_torchvision_convnet_converts_only_at_its_boundary(stem, ported):
    torch_model, keras_model, x = ported(stem)
    own = count_torch_data_moves(torch_model, [x]) if stem in MOVES_DATA_ITSELF else 0
    assert xla_transposes(keras_model, x) <= own + 2


@pytest.mark.parametrize("stem", sorted(CASES))
def test_torchvision_model_keeps_centred_cosine_under_mixed_bfloat16(stem, ported):
    """As `train_tpu.py --precision mixed_bfloat16` (the default on TPU) runs the port: variables float32, compute
    bfloat16; the output stays within centred cosine 0.99 of torch's float32 output (issue 12)."""
    import keras
    import torch

    from tests.training.test_precision import centred_cosine

    torch_model, _, x = ported(stem)
    port = ported.ports[stem]
    batch = np.concatenate([x] * 2) + 0.1 * np.random.default_rng(1).standard_normal((2 * len(x), *x.shape[1:]))
    batch = batch.astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(batch)).numpy()
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        model = CASES[stem][2](port)
        model(batch)
        port.load_state_dict(model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
        actual = np.asarray(model(batch, training=False), np.float32)
    finally:
        keras.config.set_dtype_policy(previous)
    assert model.compute_dtype == "bfloat16"
    assert centred_cosine(expected, actual) >= 0.99
