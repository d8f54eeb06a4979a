"""Property test: random model sources built from supported layers convert and match torch.

Each example is a whole model file (a main class plus residual/dense block classes) with random widths,
kernel sizes, strides, paddings, dilations, groups, activations (module and functional forms), pooling,
normalisation, upsampling, transposed convolutions, squeeze-excitation, pixel shuffle and residual/concatenation
wiring, in 1-D or 2-D. It is converted statically, both models are
built with the same (perturbed) weights, and their outputs compared. On failure the model source is printed.
"""

import textwrap

import pytest
from hypothesis import Phase, given, note, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair

pytest.importorskip("torch")
pytest.importorskip("tensorflow")

# (module form, functional form): both spellings are drawn
ACTIVATIONS = [
    ("nn.ReLU()", "F.relu({})"), ("nn.ReLU6()", "F.relu6({})"), ("nn.LeakyReLU(0.2)", "F.leaky_relu({}, 0.2)"),
    ("nn.ELU()", "F.elu({})"), ("nn.SELU()", "F.selu({})"), ("nn.CELU(0.5)", "F.celu({}, 0.5)"),
    ("nn.GELU()", "F.gelu({})"), ("nn.GELU(approximate='tanh')", "F.gelu({}, approximate='tanh')"),
    ("nn.SiLU()", "F.silu({})"), ("nn.Mish()", "F.mish({})"), ("nn.Hardswish()", "F.hardswish({})"),
    ("nn.Hardsigmoid()", "F.hardsigmoid({})"), ("nn.Sigmoid()", "torch.sigmoid({})"), ("nn.Tanh()", "torch.tanh({})"),
    ("nn.Softplus()", "F.softplus({})"), ("nn.Identity()", "{}"),
]


def conv_out(size, kernel, stride, padding, dilation):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


class ModelWriter:
    """Writes one model file while tracking the channel count and spatial size flowing through `forward`."""

    def __init__(self, draw, dims):
        self.draw, self.dims = draw, dims
        self.nd = f"{dims}d"
        self.channels = draw(st.integers(1, 4))
        self.size = draw(st.integers(8, 16)) if dims == 2 else draw(st.integers(12, 40))
        self.input_shape = (self.channels,) + (self.size,) * dims
        self.init, self.forward, self.blocks = [], [], []
        self.counter = 0

    def name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def activation(self, lines, value="x"):
        module, functional = self.draw(st.sampled_from(ACTIVATIONS))
        if self.draw(st.booleans()):
            attribute = self.name("act")
            self.init.append(f"self.{attribute} = {module}")
            lines.append(f"{value} = self.{attribute}({value})")
        else:
            lines.append(f"{value} = {functional.format(value)}")

    def conv_args(self, cin):
        draw = self.draw
        kernel = draw(st.sampled_from([1, 2, 3, 5]))
        dilation = draw(st.sampled_from([1, 1, 2])) if kernel > 1 else 1
        stride = draw(st.sampled_from([1, 1, 2]))
        reach = dilation * (kernel - 1)
        if stride == 1 and reach % 2 == 0 and draw(st.booleans()):
            padding, padding_text = reach // 2, "'same'"
        else:
            padding = draw(st.integers(0, reach // 2 + 1 if reach else 1))
            padding_text = str(padding) if draw(st.booleans()) else f"({', '.join([str(padding)] * self.dims)})"
        out_size = conv_out(self.size, kernel, stride, padding, dilation)
        if out_size < 1:
            kernel, stride, dilation, padding, padding_text, out_size = 1, 1, 1, 0, "0", self.size
        cout = draw(st.integers(1, 8))
        groups = draw(st.sampled_from([g for g in (1, 2, cin) if cin % g == 0 and cout * g % g == 0]))
        if groups > 1:
            cout = groups * draw(st.integers(1, 2))
        bias = draw(st.booleans())
        text = (f"nn.Conv{self.nd}({cin}, {cout}, kernel_size={kernel}, stride={stride}, padding={padding_text}, "
                f"dilation={dilation}, groups={groups}, bias={bias})")
        return text, cout, out_size

    def conv_stage(self):
        conv, cout, out_size = self.conv_args(self.channels)
        attribute = self.name("conv")
        self.init.append(f"self.{attribute} = {conv}")
        self.forward.append(f"x = self.{attribute}(x)")
        self.channels, self.size = cout, out_size
        self.norm(self.forward)
        self.activation(self.forward)

    def norm(self, lines, value="x"):
        choice = self.draw(st.sampled_from(["batch", "batch", "group", "instance", "none"]))
        attribute = self.name("norm")
        if choice == "batch":
            self.init.append(f"self.{attribute} = nn.BatchNorm{self.nd}({self.channels}, eps=1e-3, momentum=0.2)")
        elif choice == "group":
            groups = self.draw(st.sampled_from([g for g in (1, 2, self.channels) if self.channels % g == 0]))
            self.init.append(f"self.{attribute} = nn.GroupNorm({groups}, {self.channels})")
        elif choice == "instance" and self.size > 1:
            self.init.append(f"self.{attribute} = nn.InstanceNorm{self.nd}({self.channels}, affine=True)")
        else:
            return
        lines.append(f"{value} = self.{attribute}({value})")

    def pool_stage(self):
        draw = self.draw
        kind = draw(st.sampled_from(["Max", "Avg"]))
        kernel = draw(st.integers(1, min(3, self.size)))
        stride = draw(st.integers(1, kernel))
        padding = draw(st.integers(0, kernel // 2))
        out_size = conv_out(self.size, kernel, stride, padding, 1)
        if out_size < 1:
            return
        attribute = self.name("pool")
        self.init.append(f"self.{attribute} = nn.{kind}Pool{self.nd}({kernel}, stride={stride}, padding={padding})")
        self.forward.append(f"x = self.{attribute}(x)")
        self.size = out_size

    def residual_stage(self):
        """A block class: conv-norm-act-conv-norm plus a shortcut (identity, or 1x1 conv when shapes change)."""
        draw = self.draw
        name = f"Block{len(self.blocks) + 1}"
        cin, cout = self.channels, draw(st.integers(1, 8))
        stride = draw(st.sampled_from([1, 1, 2])) if self.size >= 4 else 1
        kernel = draw(st.sampled_from([1, 3]))
        wiring = draw(st.sampled_from(["add", "add", "cat"]))
        act_module, act_functional = draw(st.sampled_from(ACTIVATIONS))
        shortcut = "nn.Identity()" if (cin == cout and stride == 1) else \
            f"nn.Sequential(nn.Conv{self.nd}(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm{self.nd}(cout))"
        merge = ("out = out + self.shortcut(x)" if wiring == "add"
                 else "out = torch.cat([out, self.shortcut(x)], dim=1)")
        self.blocks.append(textwrap.dedent(f'''
            class {name}(nn.Module):
                def __init__(self, cin, cout, stride=1):
                    super().__init__()
                    self.conv1 = nn.Conv{self.nd}(cin, cout, {kernel}, stride=stride, padding={kernel // 2}, bias=False)
                    self.bn1 = nn.BatchNorm{self.nd}(cout)
                    self.act = {act_module}
                    self.conv2 = nn.Conv{self.nd}(cout, cout, 3, padding=1)
                    self.bn2 = nn.BatchNorm{self.nd}(cout)
                    self.shortcut = {shortcut}

                def forward(self, x):
                    out = self.act(self.bn1(self.conv1(x)))
                    out = self.bn2(self.conv2(out))
                    {merge}
                    return {act_functional.format("out")}
            '''))
        attribute = self.name("block")
        self.init.append(f"self.{attribute} = {name}({cin}, {cout}, stride={stride})")
        self.forward.append(f"x = self.{attribute}(x)")
        self.size = conv_out(self.size, kernel, stride, kernel // 2, 1)
        self.channels = cout * (2 if wiring == "cat" else 1)

    def upsample_stage(self):
        draw = self.draw
        if self.size > 24:
            return
        mode = draw(st.sampled_from(["nearest", "linear_mode", "linear_mode_corners"]))
        linear = "bilinear" if self.dims == 2 else "linear"
        if mode == "nearest":
            args = "scale_factor=2, mode='nearest'"
        else:
            args = f"scale_factor=2, mode='{linear}', align_corners={mode.endswith('corners')}"
        if draw(st.booleans()):
            attribute = self.name("up")
            self.init.append(f"self.{attribute} = nn.Upsample({args})")
            self.forward.append(f"x = self.{attribute}(x)")
        else:
            self.forward.append(f"x = F.interpolate(x, {args})")
        self.size *= 2

    def transposed_stage(self):
        draw = self.draw
        if self.size > 24:
            return
        kernel, stride = draw(st.sampled_from([2, 3, 4])), draw(st.sampled_from([1, 2]))
        padding = draw(st.integers(0, (kernel - 1) // 2))
        output_padding = draw(st.integers(0, stride - 1))
        cout = draw(st.integers(1, 8))
        out_size = (self.size - 1) * stride - 2 * padding + kernel + output_padding
        if out_size < 1:
            return
        attribute = self.name("deconv")
        self.init.append(f"self.{attribute} = nn.ConvTranspose{self.nd}({self.channels}, {cout}, {kernel}, "
                         f"stride={stride}, padding={padding}, output_padding={output_padding})")
        self.forward.append(f"x = self.{attribute}(x)")
        self.channels, self.size = cout, out_size
        self.activation(self.forward)

    def squeeze_excite_stage(self):
        """Channel attention: global mean, two Linears, sigmoid, broadcast multiply (view back to N, C, 1...)."""
        hidden = max(1, self.channels // 2)
        attribute = self.name("se")
        ones = ", ".join(["1"] * self.dims)
        axes = ", ".join(str(a) for a in range(2, 2 + self.dims))
        self.init.append(f"self.{attribute}_down = nn.Linear({self.channels}, {hidden})")
        self.init.append(f"self.{attribute}_up = nn.Linear({hidden}, {self.channels})")
        self.forward.append(f"w = x.mean(dim=[{axes}])")
        self.forward.append(f"w = torch.sigmoid(self.{attribute}_up(F.relu(self.{attribute}_down(w))))")
        self.forward.append(f"x = x * w.view(w.size(0), -1, {ones})")

    def pixel_shuffle_stage(self):
        if self.dims != 2 or self.size > 20:
            return
        attribute = self.name("shuffle")
        cout = self.draw(st.integers(1, 3))
        self.init.append(f"self.{attribute}_conv = nn.Conv2d({self.channels}, {cout * 4}, 3, padding=1)")
        self.init.append(f"self.{attribute} = nn.PixelShuffle(2)")
        self.forward.append(f"x = self.{attribute}(self.{attribute}_conv(x))")
        self.channels, self.size = cout, self.size * 2

    def head(self):
        draw = self.draw
        classes = draw(st.integers(1, 6))
        kind = draw(st.sampled_from(["flatten", "adaptive", "mean", "sequential"]))
        axes = ", ".join(str(a) for a in range(2, 2 + self.dims))
        if kind == "flatten":
            features = self.channels * self.size ** self.dims
            self.forward.append(draw(st.sampled_from(["x = torch.flatten(x, 1)", "x = x.view(x.size(0), -1)",
                                                      "x = x.reshape(x.shape[0], -1)"])))
        elif kind == "adaptive":
            features = self.channels
            self.init.append(f"self.gap = nn.Adaptive{draw(st.sampled_from(['Avg', 'Max']))}Pool{self.nd}(1)")
            self.forward.append("x = self.gap(x).flatten(1)")
        elif kind == "mean":
            features = self.channels
            self.forward.append(f"x = x.mean(dim=[{axes}])" if self.dims == 2 else "x = x.mean(-1)")
        else:
            features = self.channels
            self.init.append(f"self.pool_head = nn.Sequential(nn.Adaptive{'Avg'}Pool{self.nd}(1), nn.Flatten())")
            self.forward.append("x = self.pool_head(x)")
        hidden = draw(st.integers(2, 12))
        if draw(st.booleans()):
            self.init.append(f"self.fc1 = nn.Linear({features}, {hidden})")
            self.init.append(f"self.ln = nn.LayerNorm({hidden})")
            self.forward.append("x = self.ln(self.fc1(x))")
            self.activation(self.forward)
            self.init.append(f"self.drop = nn.Dropout({draw(st.sampled_from([0.0, 0.1, 0.5]))})")
            self.forward.append("x = self.drop(x)")
            features = hidden
        self.init.append(f"self.fc = nn.Linear({features}, {classes})")
        self.forward.append("return self.fc(x)")

    def source(self):
        init = "\n".join(f"        {line}" for line in self.init)
        forward = "\n".join(f"        {line}" for line in self.forward)
        return ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
                + "\n".join(self.blocks)
                + f"\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n{init}\n\n"
                  f"    def forward(self, x):\n{forward}\n")


@st.composite
def model_sources(draw):
    writer = ModelWriter(draw, draw(st.sampled_from([1, 2, 2])))
    for _ in range(draw(st.integers(1, 4))):
        stage = draw(st.sampled_from(["conv", "conv", "residual", "pool", "upsample", "transposed", "squeeze_excite",
                                      "pixel_shuffle"]))
        getattr(writer, f"{stage}_stage")()
    writer.head()
    return writer.source(), writer.input_shape


@settings(phases=(Phase.explicit, Phase.reuse, Phase.generate))  # no shrinking: each step costs a conversion and
# two model builds; the note prints the failing source in full
@given(model_sources())
def test_random_models_match_torch(tmp_path_factory, model):
    source_text, input_shape = model
    note(f"input shape (batch excluded): {input_shape}\n{source_text}")
    directory = tmp_path_factory.mktemp("fuzz")
    source = directory / "fuzzed.py"
    source.write_text(source_text)
    out = directory / "out"
    conversion = convert(ConvertOptions(source, out, input_specs=[",".join(map(str, input_shape))]))
    assert conversion.exit_code == 0, conversion.manifest
    write_tree(out, conversion.files)
    pair = PortedPair(out)
    inputs = pair.example_inputs(batch=2, seed=3)
    expected, actual = pair.run_torch(inputs), pair.run_keras(inputs)
    assert len(expected) == len(actual) == 1
    assert_equivalent(expected[0], actual[0], tolerance=1e-4, what="fuzzed model output")
