"""A model a factory function builds as a container (d2l's `resnet18()`, kuangliu's `make_layers(cfg)`, a
`def vgg(cfg): return nn.Sequential(...)`): the block classes it holds, at any depth and through helpers returning
Sequentials of blocks, run channels-last, so the model converts once on entry and once on exit, and still matches
torch. A block class built elsewhere too (standalone, or inside a class model) keeps what that use needs.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import count_transposes, import_path
from porter.verify.torch_bridge import perturb_torch_module, torch_state_numpy
from tests.rules.op_ports import cached

HEADER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
'''

BLOCK = '''

class Block(nn.Module):
    """conv-bn-relu-conv with a strided 1x1 shortcut where the shape changes."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.short = nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.conv2(F.relu(self.bn1(self.conv1(x))))
        if self.short is not None:
            x = self.short(x)
        return F.relu(y + x)
'''

SOURCES = {
    # a module-level helper returns an nn.Sequential of blocks; the factory puts its results in the model
    "module_helper": HEADER + BLOCK + '''

def stage(cin, cout, count, stride):
    blocks = []
    for i in range(count):
        blocks.append(Block(cin if i == 0 else cout, cout, stride if i == 0 else 1))
    return nn.Sequential(*blocks)


def small_resnet(num_classes=5):
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        stage(4, 4, 2, 1), stage(4, 6, 2, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, num_classes))
''',
    # d2l's torch resnet18: a helper defined inside the factory, children added by name
    "nested_helper": HEADER + BLOCK + '''

def resnet(num_classes=5, in_channels=3):
    def resnet_block(cin, cout, num_residuals, first_block=False):
        blk = []
        for i in range(num_residuals):
            if i == 0 and not first_block:
                blk.append(Block(cin, cout, stride=2))
            else:
                blk.append(Block(cout, cout))
        return nn.Sequential(*blk)

    net = nn.Sequential(nn.Conv2d(in_channels, 4, kernel_size=3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
    net.add_module("resnet_block1", resnet_block(4, 4, 2, first_block=True))
    net.add_module("resnet_block2", resnet_block(4, 8, 2))
    net.add_module("global_avg_pool", nn.AdaptiveAvgPool2d((1, 1)))
    net.add_module("fc", nn.Sequential(nn.Flatten(), nn.Linear(8, num_classes)))
    return net
''',
    # kuangliu / torchvision VGG: `make_layers(cfg)` grows a list of blocks and pools, the factory wraps it
    "make_layers": HEADER + '''

class ConvBnRelu(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


CFG = [4, "M", 6, 6, "M"]


def make_layers(cfg):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [ConvBnRelu(in_channels, v)]
            in_channels = v
    return nn.Sequential(*layers)


def vgg(num_classes=5):
    return nn.Sequential(make_layers(CFG), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, num_classes))
''',
    # the block is in a class model's Sequential too, and that model is a factory's child
    "class_model_and_factory": HEADER + BLOCK + '''

class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(4, 4), Block(4, 6, stride=2))

    def forward(self, x):
        return self.blocks(x) * 0.5


def model(num_classes=5):
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), Block(4, 4), Body(), Block(6, 6),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, num_classes))
''',
    # the block is a factory's child and, built there too, handed to a wrapper class whose own call runs it: that
    # one runs as the wrapper's translation expects, so the factory tells no Block its case
    "block_handed_to_class": HEADER + BLOCK + '''

class Wrap(nn.Module):
    def __init__(self, inner, channels):
        super().__init__()
        self.inner = inner
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.flatten(self.norm(self.inner(x)), 2).mean(2)


def wrapped(num_classes=5):
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), Block(4, 4), Wrap(Block(4, 6, stride=2), 6),
                         nn.Linear(6, num_classes))
''',
}
FACTORIES = {"block_handed_to_class": "wrapped", "module_helper": "small_resnet", "nested_helper": "resnet",
             "make_layers": "vgg", "class_model_and_factory": "model"}
# the model class where the training-code reader would take a block the factory builds for it
MAIN_CLASS = {"class_model_and_factory": "Body"}
# block classes built standalone too: they take torch's layout there, and convert only at their own boundary
STANDALONE = {"block_handed_to_class": ("Block", (3, 4)), "module_helper": ("Block", (4, 6, 2)),
              "nested_helper": ("Block", (3, 5)), "make_layers": ("ConvBnRelu", (3, 4)),
              "class_model_and_factory": ("Body", ())}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """name -> (torch source module, Keras port module, the port's code), converted once."""
    return cached(lambda name: _convert(tmp_path_factory.mktemp(name), name))


def _convert(folder, name):
    path = folder / "factory_model.py"
    path.write_text(SOURCES[name])
    main = MAIN_CLASS.get(name)
    conversion = convert(ConvertOptions(path, folder / "out", input_specs=["4,8,8" if main else "3,8,8"],
                                        class_name=main))
    assert conversion.exit_code == 0, conversion.manifest
    write_tree(folder / "out", conversion.files)
    module = conversion.manifest["sources"][0]["module"]
    return import_path(path), import_path(folder / "out" / module), conversion.files[module]


def _pair(torch_module, keras_module, name, args=()):
    import torch

    torch.manual_seed(0)
    reference = getattr(torch_module, name)(*args)
    perturb_torch_module(reference, 0)
    reference.eval()
    port = getattr(keras_module, name)(*args)
    return reference, port


def _compare(reference, port, keras_module, x, jit=False):
    import tensorflow as tf
    import torch

    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    port(tf.constant(x), training=False)  # lazily built layers get their weights on a first call
    keras_module.load_state_dict(port, torch_state_numpy(reference))
    if jit:
        got = tf.function(lambda t: port(t, training=False), jit_compile=True)(tf.constant(x))
    else:
        got = port(tf.constant(x), training=False)
    return assert_equivalent(expected, np.asarray(got), tolerance=1e-4)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_factory_model_matches_torch_converting_only_on_entry_and_exit(ported, name):
    torch_module, keras_module, code = ported(name)
    reference, port = _pair(torch_module, keras_module, FACTORIES[name])
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    error = max(_compare(reference, port, keras_module, x), _compare(reference, port, keras_module, x, jit=True))
    transposes = count_transposes(port, [x])
    print(f"{name}: worst error {error:.2e} of the output scale (eager and XLA), {transposes} Transposes")
    assert transposes <= 2
    assert '.with_layouts("channels_last", "channels_last")' in code


@pytest.mark.parametrize("name", sorted(SOURCES))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 3), size=st.sampled_from([7, 8, 11]), scale=st.sampled_from([1e-3, 1.0, 30.0]),
       seed=st.integers(0, 2**16))
def test_factory_model_matches_torch_on_drawn_inputs(ported, name, batch, size, scale, seed):
    torch_module, keras_module, _ = ported(name)
    reference, port = _pair(torch_module, keras_module, FACTORIES[name])
    x = (np.random.default_rng(seed).standard_normal((batch, 3, size, size)) * scale).astype(np.float32)
    _compare(reference, port, keras_module, x)


@pytest.mark.parametrize("name", sorted(STANDALONE))
def test_a_block_built_alone_takes_torch_layout(ported, name):
    torch_module, keras_module, _ = ported(name)
    class_name, args = STANDALONE[name]
    reference, port = _pair(torch_module, keras_module, class_name, args)
    channels = args[0] if args else 4
    x = np.random.default_rng(1).standard_normal((2, channels, 9, 9)).astype(np.float32)
    _compare(reference, port, keras_module, x)
    assert count_transposes(port, [x]) <= 2
