"""Grouped, depthwise and dilated convolutions have gradients on any CPU host: TF's CPU kernels without oneDNN compute a
grouped or dilated tf.nn.conv2d forward but reject its backward pass, which stopped training and `porter verify`'s gradient
check of every grouped or depthwise conv there (GluonCV MobileNet: InvalidArgumentError). On such a host the runtime
runs them as tf.nn.depthwise_conv2d or one convolution per group (porter/runtime/conv.py `_conv2d_by_groups`), which
must equal the grouped convolution; the gradients match torch's. A dilated Conv3d (which the same kernels reject
outright) runs as 2-D convolutions over its depth taps."""

import numpy as np
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from porter.runtime import conv
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module


@settings(max_examples=12, deadline=None)
@given(groups=st.sampled_from([1, 2, 4]), depthwise=st.booleans(), multiplier=st.integers(1, 2),
       stride=st.integers(1, 2), dilation=st.integers(1, 2), size=st.integers(5, 9), batch=st.integers(1, 2),
       same=st.booleans(), seed=st.integers(0, 2**16))
def test_grouped_conv_by_groups_matches_torch_with_gradients(groups, depthwise, multiplier, stride, dilation, size,
                                                             batch, same, seed):
    import tensorflow as tf

    assume(not same or stride == 1)  # ("SAME": the padding the runtime picks for a stride-1 conv keeping its size)
    in_channels = 4
    groups = in_channels if depthwise else groups
    out_channels = groups * multiplier * (1 if depthwise else 2)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, in_channels, size, size)).astype(np.float32)
    layer = torch.nn.Conv2d(in_channels, out_channels, 3, stride=stride, dilation=dilation, groups=groups, bias=False,
                            padding=dilation if same else 0)
    xt = torch.from_numpy(x).requires_grad_(True)
    layer(xt).square().sum().backward()
    kernel = tf.Variable(np.transpose(layer.weight.detach().numpy(), (2, 3, 1, 0)))
    xk = tf.constant(np.transpose(x, (0, 2, 3, 1)))
    with tf.GradientTape() as tape:
        tape.watch(xk)
        y = conv._conv2d_by_groups(xk, kernel, [1, stride, stride, 1], "SAME" if same else "VALID", [1, dilation, dilation, 1])
        loss = tf.reduce_sum(tf.square(y))
    grad_x, grad_kernel = tape.gradient(loss, [xk, kernel])
    np.testing.assert_allclose(np.transpose(y.numpy(), (0, 3, 1, 2)), layer(xt).detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(np.transpose(grad_x.numpy(), (0, 3, 1, 2)), xt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(grad_kernel.numpy(), np.transpose(layer.weight.grad.numpy(), (2, 3, 1, 0)),
                               rtol=1e-4, atol=1e-3)


@settings(max_examples=8, deadline=None)
@given(dilation=st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2)), stride=st.integers(1, 2),
       groups=st.sampled_from([1, 2]), padding=st.integers(0, 2), batch=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_dilated_conv3d_trains_like_torch(dilation, stride, groups, padding, batch, seed):
    import tensorflow as tf

    reference = perturb_torch_module(torch.nn.Conv3d(2, 4, 2, stride=stride, padding=padding, dilation=dilation,
                                                     groups=groups), seed % 7)
    ported = copy_torch_weights(reference, conv.Conv3d(2, 4, 2, stride=stride, padding=padding, dilation=dilation,
                                                       groups=groups))
    x = np.random.default_rng(seed).standard_normal((batch, 2, 5, 6, 5)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    expected = reference(xt)
    expected.square().sum().backward()
    xk = tf.constant(np.transpose(x, (0, 2, 3, 4, 1)))
    with tf.GradientTape() as tape:
        tape.watch(xk)
        y = ported(xk)
        loss = tf.reduce_sum(tf.square(y))
    grad_x, grad_kernel = tape.gradient(loss, [xk, ported.weight])
    np.testing.assert_allclose(np.transpose(y.numpy(), (0, 4, 1, 2, 3)), expected.detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(np.transpose(grad_x.numpy(), (0, 4, 1, 2, 3)), xt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(grad_kernel.numpy(), np.transpose(reference.weight.grad.numpy(), (2, 3, 4, 1, 0)),
                               rtol=1e-4, atol=1e-3)


@settings(max_examples=8, deadline=None)
@given(groups=st.sampled_from([2, 4]), stride=st.integers(1, 2), dilation=st.integers(1, 2), size=st.integers(5, 8),
       batch=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_grouped_conv_in_float64_has_torchs_gradients(groups, stride, dilation, size, batch, seed):
    """oneDNN's CPU kernels differentiate a grouped float32 convolution, not a float64 one: a port built under
    Keras's float64 policy (`porter verify`'s float64 arbiter) raised "Gradients for grouped convolutions are not
    supported on CPU", so the arbiter never ran for a MobileNet. Whether TF has the gradient is asked per dtype."""
    import keras
    import tensorflow as tf

    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float64")
    try:
        reference = perturb_torch_module(torch.nn.Conv2d(4, 8, 3, stride=stride, padding=1, dilation=dilation,
                                                         groups=groups), seed % 7).double()
        ported = copy_torch_weights(reference, conv.Conv2d(4, 8, 3, stride=stride, padding=1, dilation=dilation,
                                                           groups=groups))
    finally:
        keras.config.set_dtype_policy(previous)
    assert ported.weight.dtype == "float64"
    x = np.random.default_rng(seed).standard_normal((batch, 4, size, size))
    xt = torch.from_numpy(x).requires_grad_(True)
    expected = reference(xt)
    expected.square().sum().backward()
    xk = tf.constant(np.transpose(x, (0, 2, 3, 1)))
    with tf.GradientTape() as tape:
        tape.watch(xk)
        loss = tf.reduce_sum(tf.square(ported(xk)))
    grad_x, grad_kernel = tape.gradient(loss, [xk, ported.weight])
    np.testing.assert_allclose(np.transpose(grad_x.numpy(), (0, 3, 1, 2)), xt.grad.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(grad_kernel.numpy(), np.transpose(reference.weight.grad.numpy(), (2, 3, 1, 0)),
                               rtol=1e-9, atol=1e-9)
