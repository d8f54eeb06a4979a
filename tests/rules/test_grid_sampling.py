"""Property tests of the `F.affine_grid` and `F.grid_sample` rules (porter/rules/grid_sampling.py) against real
torch: images read from a convolution (channels-last inside the port), drawn batch (1 included), odd sizes, H != W,
size 1, grids reaching far outside [-1, 1] and snapped to exact corners, every mode and padding mode, align_corners
both ways, 2-D and 3-D, eager and under XLA; and end to end, a spatial transformer and a flow warp that trace no
Transpose beyond the boundary."""

import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.compare import assert_equivalent
from porter.verify.harness import count_transposes
from tests.rules.op_ports import port, random_input, template_cache

PADDINGS = ("zeros", "border", "reflection")

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv{dims}d(3, 4, 3, padding=1)

    def forward(self, x, {operand}):
        y = self.conv(x)
        {op}
'''


def model_template(dims, operand):
    """MODEL with a Conv{dims}d and a second input `operand` (the grid, or theta)."""
    return MODEL.replace("{dims}", str(dims)).replace("{operand}", operand)



def _samples(mode, extra=""):
    """A return of every padding mode with align_corners False and True (and `extra` outputs)."""
    calls = [f"F.grid_sample(y, grid, mode={mode!r}, padding_mode={padding!r}, align_corners={align})"
             for padding in PADDINGS for align in (False, True)]
    return "return (" + ",\n                ".join(calls + ([extra] if extra else [])) + ")"


PLANE_OPS = {
    # the defaults (bilinear, zeros, align_corners None) and the parameters given by position
    "bilinear": _samples("bilinear", "F.grid_sample(y, grid)"),
    "nearest": _samples("nearest", "F.grid_sample(y, grid, 'nearest', 'border', True)"),
    "bicubic": _samples("bicubic"),
}
VOLUME_OPS = {"volume_bilinear": _samples("bilinear"), "volume_nearest": _samples("nearest")}


@pytest.fixture(scope="module")
def samplers(tmp_path_factory):
    plane = template_cache(tmp_path_factory, model_template(2, "grid"), PLANE_OPS, ("3,5,6", "4,3,2"))
    volume = template_cache(tmp_path_factory, model_template(3, "grid"), VOLUME_OPS, ("3,3,4,5", "2,3,4,3"))
    return lambda name: volume(name) if name.startswith("volume") else plane(name)


def random_grid(seed, shape, spread, snapped):
    """Coordinates spread over [-spread, spread] (beyond [-1, 1] for spread > 1); `snapped` of them rounded to
    multiples of 1/2 (exact corners and centres: -1, 1, 0 ...)."""
    rng = np.random.default_rng(seed + 1)
    grid = rng.uniform(-spread, spread, shape).astype(np.float32)
    snap = rng.random(shape) < snapped
    return np.where(snap, np.round(grid * 2) / 2, grid).astype(np.float32)


def assert_outputs_match(pair, inputs, jit, what, tolerance=1e-5):
    expected = pair.run_torch(inputs)
    actual = pair.run_keras(inputs, jit=jit)
    assert len(expected) == len(actual), f"{what}: {len(actual)} Keras outputs for {len(expected)} torch outputs"
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        assert_equivalent(want, got, tolerance=tolerance, what=f"{what} output {index} (jit={jit})")


SIZES = st.sampled_from([1, 2, 3, 5, 8])
DRAWS = dict(batch=st.integers(1, 3), depth=SIZES, height=SIZES, width=SIZES, out_size=st.sampled_from([1, 2, 4]),
             spread=st.sampled_from([0.9, 1.0, 1.6, 4.0]), snapped=st.sampled_from([0.0, 0.3]),
             seed=st.integers(0, 2**16))
JIT_EXAMPLES = 2  # each example compiles the whole model with XLA anew (seconds on CPU)


def check_sampler(samplers, name, jit, batch, depth, height, width, out_size, spread, snapped, seed):
    """An image of the drawn sizes (a volume for the volume_ models) sampled on a grid of other sizes, H != W."""
    volume = name.startswith("volume")
    x = random_input(seed, (batch, 3, *((depth,) if volume else ()), height, width))
    out = (2, out_size, 3) if volume else (out_size, out_size + 2)
    grid = random_grid(seed, (batch, *out, len(out)), spread, snapped)
    assert_outputs_match(samplers(name), [x, grid], jit, f"{name} x{x.shape} grid{grid.shape} spread {spread}")


@pytest.mark.parametrize("name", sorted(PLANE_OPS) + sorted(VOLUME_OPS))
@given(**DRAWS)
def test_grid_sample_matches_torch(samplers, name, **draws):
    check_sampler(samplers, name, False, **draws)


@pytest.mark.parametrize("name", sorted(PLANE_OPS) + sorted(VOLUME_OPS))
@settings(max_examples=JIT_EXAMPLES)
@given(**DRAWS)
def test_grid_sample_matches_torch_under_xla(samplers, name, **draws):
    check_sampler(samplers, name, True, **draws)


AFFINE_OPS = {
    "plane": "n, c, h, w = y.shape\n        "
             "return (F.affine_grid(theta, y.size()), F.affine_grid(theta, y.size(), align_corners=True),\n"
             "                F.affine_grid(theta, [n, 1, h * 2 + 1, w], align_corners=False))",
    "volume": "n, c, d, h, w = y.shape\n        "
              "return (F.affine_grid(theta, y.size(), align_corners=False), "
              "F.affine_grid(theta, y.size(), align_corners=True),\n"
              "                F.affine_grid(theta, (n, 2, d, h + 1, w * 2), align_corners=True))",
}


@pytest.fixture(scope="module")
def affine_grids(tmp_path_factory):
    plane = template_cache(tmp_path_factory, model_template(2, "theta"), {"plane": AFFINE_OPS["plane"]},
                           ("3,5,6", "2,3"))
    volume = template_cache(tmp_path_factory, model_template(3, "theta"), {"volume": AFFINE_OPS["volume"]},
                            ("3,3,4,5", "3,4"))
    return {"plane": plane, "volume": volume}


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("name", sorted(AFFINE_OPS))
@given(batch=st.integers(1, 3), depth=SIZES, height=SIZES, width=SIZES, scale=st.sampled_from([0.5, 1.0, 3.0]),
       seed=st.integers(0, 2**16))
def test_affine_grid_matches_torch(affine_grids, name, jit, batch, depth, height, width, scale, seed):
    spatial = (depth, height, width) if name == "volume" else (height, width)
    dims = len(spatial)
    x = random_input(seed, (batch, 3, *spatial))
    theta = random_input(seed + 1, (batch, dims, dims + 1), scale)
    assert_outputs_match(affine_grids[name](name), [x, theta], jit, f"{name} x{x.shape} theta scale {scale}")


HEADER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
"""
END_TO_END = {
    "Transformer": HEADER + '''

class Transformer(nn.Module):
    """A spatial transformer between two convolutions: theta from pooled features, then the sampled image."""

    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3, padding=1)
        self.localization = nn.Linear(8, 6)
        self.head = nn.Conv2d(8, 5, 3, padding=1)

    def forward(self, x):
        y = F.relu(self.features(x))
        theta = self.localization(y.mean(dim=(2, 3))).view(-1, 2, 3)
        grid = F.affine_grid(theta, y.size(), align_corners=False)
        y = F.grid_sample(y, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
        return self.head(y)
''',
    "FlowWarp": HEADER + '''

class FlowWarp(nn.Module):
    """Warping by a predicted flow: a two-channel convolution permuted to a (N, H, W, 2) grid."""

    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3, padding=1)
        self.flow = nn.Conv2d(8, 2, 3, padding=1)
        self.head = nn.Conv2d(8, 5, 1)

    def forward(self, x):
        y = self.features(x)
        grid = torch.tanh(self.flow(y)).permute(0, 2, 3, 1)
        return self.head(F.grid_sample(y, grid, padding_mode="border", align_corners=True))
''',
}


@pytest.fixture(scope="module", params=sorted(END_TO_END))
def end_to_end(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp(request.param), END_TO_END[request.param], ("3,7,6",))


@settings(max_examples=2)
@given(batch=st.integers(1, 3), height=st.sampled_from([5, 7]), width=st.sampled_from([4, 6]),
       seed=st.integers(0, 2**16))
def test_spatial_transformers_end_to_end(end_to_end, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    for jit in (False, True):
        assert_outputs_match(end_to_end, [x], jit, f"x{x.shape}")
    assert count_transposes(end_to_end.keras_model, [x]) <= 2


def test_sampling_under_mixed_precision_keeps_float32_coordinates():
    """bfloat16 compute (mixed precision): theta and the sampling run in float32, the samples come back in the
    image's bfloat16. In bfloat16 a coordinate near 1 steps by 1/128, a pixel of a 256-wide image."""
    from porter.runtime.grid_sampling import affine_grid, grid_sample

    rng = np.random.default_rng(0)
    image = rng.standard_normal((2, 3, 16, 256)).astype(np.float32)
    rounded = tf.cast(tf.cast(image, tf.bfloat16), tf.float32).numpy()
    theta = np.array([[[0.9, 0.05, 0.013], [-0.02, 0.8, 0.1]]] * 2, np.float32)
    grid = affine_grid(tf.constant(theta, tf.bfloat16), (2, 3, 16, 256), align_corners=False)
    assert grid.dtype == tf.float32
    samples = grid_sample(tf.constant(np.moveaxis(rounded, 1, -1), tf.bfloat16), grid, align_corners=False)
    assert samples.dtype == tf.bfloat16
    theta_rounded = tf.cast(tf.cast(theta, tf.bfloat16), tf.float32).numpy()
    expected = F.grid_sample(torch.from_numpy(rounded),
                             F.affine_grid(torch.from_numpy(theta_rounded), [2, 3, 16, 256], align_corners=False),
                             align_corners=False).numpy()
    actual = np.moveaxis(tf.cast(samples, tf.float32).numpy(), -1, 1)
    assert_equivalent(expected, actual, tolerance=2.0 ** -8, what="bfloat16 samples")


def test_gradients_match_torch():
    """Training through the sampler: the gradients of bilinear reflection sampling w.r.t. the image and the grid."""
    from porter.runtime.grid_sampling import grid_sample

    image = random_input(3, (2, 3, 5, 6))
    grid = random_grid(3, (2, 4, 3, 2), 1.6, 0.0)
    weights = random_input(4, (2, 3, 4, 3))
    torch_image, torch_grid = torch.tensor(image, requires_grad=True), torch.tensor(grid, requires_grad=True)
    (F.grid_sample(torch_image, torch_grid, padding_mode="reflection", align_corners=False) *
     torch.from_numpy(weights)).sum().backward()
    tf_image, tf_grid = tf.Variable(np.moveaxis(image, 1, -1)), tf.Variable(grid)
    with tf.GradientTape() as tape:
        samples = grid_sample(tf_image, tf_grid, padding_mode="reflection", align_corners=False)
        loss = tf.reduce_sum(samples * np.moveaxis(weights, 1, -1))
    image_gradient, grid_gradient = tape.gradient(loss, [tf_image, tf_grid])
    assert_equivalent(torch_image.grad.numpy(), np.moveaxis(image_gradient.numpy(), -1, 1), tolerance=1e-5)
    assert_equivalent(torch_grid.grad.numpy(), grid_gradient.numpy(), tolerance=1e-5)


torch.set_num_threads(1)
