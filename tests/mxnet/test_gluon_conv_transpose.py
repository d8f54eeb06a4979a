"""gluon.nn.Conv1DTranspose / Conv2DTranspose as ported (porter/runtime/gluon_conv_transpose.py, on
porter/runtime/gluon_layers.py's convolution) against real mxnet 1.9.1's Deconvolution, the operator they run, on
hypothesis-drawn sizes: groups (the kernel stored for a forward convolution) and dilation, output_padding, with and
without bias, `in_channels` given or deferred to the loaded weight's shape."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.gluon_conv_transpose import GluonConv1DTranspose, GluonConv2DTranspose
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet


def _load(layer, state):
    """Gluon's saved arrays into the layer as porter's load_state_dict does (a deferred layer sized by them)."""
    for entry in layer.torch_state():
        value = state[entry.key]
        value = entry.to_keras(value) if entry.to_keras is not None else value
        variable = entry.variable._variable() if hasattr(entry.variable, "_variable") else entry.variable
        variable.assign(value)


@settings(max_examples=25, deadline=None)
@given(dims=st.sampled_from([1, 2]), groups=st.integers(1, 3), per_group_in=st.integers(1, 2),
       per_group_out=st.integers(1, 2), kernel=st.integers(1, 3), stride=st.integers(1, 2), pad=st.integers(0, 1),
       dilation=st.integers(1, 2), adjust=st.integers(0, 1), bias=st.booleans(), deferred=st.booleans(),
       seed=st.integers(0, 2**16))
def test_conv_transpose_matches_mxnet(mxnet, dims, groups, per_group_in, per_group_out, kernel, stride, pad,
                                      dilation, adjust, bias, deferred, seed):
    adjust = min(adjust, stride - 1)  # mxnet refuses an adj that is not below the stride
    in_channels, channels = groups * per_group_in, groups * per_group_out
    generator = np.random.default_rng(seed)
    x = generator.standard_normal((2, in_channels) + (4, 3)[:dims]).astype(np.float32)
    weight = generator.standard_normal((in_channels, per_group_out) + (kernel,) * dims).astype(np.float32)
    arrays = {"x": x, "w": weight}
    state = {"weight": weight}
    if bias:
        arrays["b"] = state["bias"] = generator.standard_normal(channels).astype(np.float32)
    sizes = {name: (value,) * dims for name, value in
             (("kernel", kernel), ("stride", stride), ("pad", pad), ("dilate", dilation), ("adj", adjust))}
    expected = mxnet.evaluate(
        f"nd.Deconvolution(x, w, {'b' if bias else 'None'}, num_filter={channels}, num_group={groups}, "
        f"no_bias={not bias}, " + ", ".join(f"{name}={value}" for name, value in sizes.items()) + ")", arrays)
    layer = (GluonConv1DTranspose, GluonConv2DTranspose)[dims - 1](
        channels, kernel, strides=stride, padding=pad, output_padding=adjust, dilation=dilation, groups=groups,
        use_bias=bias, in_channels=0 if deferred else in_channels)
    _load(layer, state)
    channels_last = np.moveaxis(x, 1, -1)
    actual = np.moveaxis(np.asarray(layer(channels_last)), -1, 1)
    assert actual.shape == expected.shape
    assert_equivalent(expected, actual, tolerance=1e-5)
