"""Runtime unfold/fold (porter/runtime/patches.py): gradients against torch's, in both layouts, so a port that
trains through im2col/col2im learns what the source learns."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.patches import fold, unfold
from tests.rules.test_patches import patch_options, positions


@pytest.mark.parametrize("channels_last", [False, True])
@given(options=patch_options(), batch=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_unfold_and_fold_gradients_match_torch(channels_last, options, batch, seed):
    k, d, p, s, size = options
    rng = np.random.default_rng(seed)
    count = positions(size[0], k[0], d[0], p[0], s[0]) * positions(size[1], k[1], d[1], p[1], s[1])
    image = rng.standard_normal((batch, 2, *size)).astype(np.float32)
    columns = rng.standard_normal((batch, 2 * k[0] * k[1], count)).astype(np.float32)

    torch_image, torch_columns = torch.from_numpy(image).requires_grad_(), torch.from_numpy(columns).requires_grad_()
    loss = (torch.nn.functional.unfold(torch_image, k, d, p, s) * torch.from_numpy(columns)).sum() + (
        torch.nn.functional.fold(torch_columns, size, k, d, p, s) * torch.from_numpy(image)).sum()
    loss.backward()

    image_order, columns_order = ((0, 2, 3, 1), (0, 2, 1)) if channels_last else ((0, 1, 2, 3), (0, 1, 2))
    tf_image = tf.Variable(np.transpose(image, image_order))
    tf_columns = tf.Variable(np.transpose(columns, columns_order))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(unfold(tf_image, k, d, p, s, channels_last=channels_last) * tf.stop_gradient(tf_columns))
        loss += tf.reduce_sum(fold(tf_columns, size, k, d, p, s, channels_last=channels_last) * tf.stop_gradient(tf_image))
    image_grad, columns_grad = tape.gradient(loss, [tf_image, tf_columns])
    np.testing.assert_allclose(np.asarray(image_grad), np.transpose(torch_image.grad.numpy(), image_order),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(columns_grad), np.transpose(torch_columns.grad.numpy(), columns_order),
                               rtol=1e-5, atol=1e-5)
