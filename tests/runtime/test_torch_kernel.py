"""`torch_weight` of a runtime Conv layer (what a torch Conv subclass's forward reads as `self.weight`): torch's
(O, I/g, k...) shape, and F.conv{1,2,3}d of it matches torch's functional convolution on the layer's weight,
using the stored channels-last kernel as it is (no Transpose in the traced graph)."""

import numpy as np
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime import conv as runtime
from porter.runtime.helpers import torch_size

LAYERS = {1: runtime.Conv1d, 2: runtime.Conv2d, 3: runtime.Conv3d}
FUNCTIONS = {1: (runtime.conv1d, F.conv1d), 2: (runtime.conv2d, F.conv2d), 3: (runtime.conv3d, F.conv3d)}


@st.composite
def case(draw):
    rank = draw(st.sampled_from([1, 2, 3]))
    groups = draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(st.integers(1, 3)), groups * draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    stride = draw(st.integers(1, 2))
    padding = draw(st.integers(0, 1))
    spatial = tuple(draw(st.integers(k + 1, k + 4)) for k in kernel)
    seed = draw(st.integers(0, 2**16))
    return rank, groups, cin, cout, kernel, stride, padding, spatial, seed


@settings(deadline=None, max_examples=25)
@given(case())
def test_functional_conv_of_a_layers_torch_weight_matches_torch(params):
    rank, groups, cin, cout, kernel, stride, padding, spatial, seed = params
    layer = LAYERS[rank](cin, cout, kernel, stride=stride, padding=padding, groups=groups)
    rng = np.random.default_rng(seed)
    hwio = rng.standard_normal(tuple(layer.weight.shape)).astype("float32")
    layer.weight.assign(hwio)
    weight = layer.torch_weight
    oihw = np.transpose(hwio, [rank + 1, rank] + list(range(rank)))
    assert tuple(weight.shape) == oihw.shape == tuple(torch_size(weight)) == weight.size()
    np.testing.assert_array_equal(np.asarray(tf.convert_to_tensor(weight)), oihw)  # any other op: torch's order
    x = rng.standard_normal((2, cin) + spatial).astype("float32")
    ours, theirs = FUNCTIONS[rank]
    expected = theirs(torch.from_numpy(x), torch.from_numpy(oihw), None, stride, padding, 1, groups).numpy()
    got = ours(np.moveaxis(x, 1, -1), weight, None, stride, padding, 1, groups)
    np.testing.assert_allclose(np.moveaxis(np.asarray(got), -1, 1), expected, rtol=1e-4, atol=1e-4)


def test_the_stored_kernel_is_used_without_a_transpose():
    layer = runtime.Conv2d(3, 4, 3, padding=1)
    function = tf.function(lambda x: runtime.conv2d(x, layer.torch_weight, layer.bias, 1, 1))
    graph = function.get_concrete_function(tf.TensorSpec((1, 5, 5, 3))).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]
