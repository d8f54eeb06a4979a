"""torch.multinomial on TensorFlow tensors: draws category indices from rows of non-negative weights (1-D or 2-D),
with replacement (tf.random.categorical) or without (the Gumbel top-k trick, which draws the same law as torch's
sequential draws without replacement)."""

import tensorflow as tf


def multinomial(input, num_samples, replacement=False, generator=None):
    weights = tf.convert_to_tensor(input)
    vector = len(weights.shape) == 1
    rows = weights[None, :] if vector else weights
    logits = tf.math.log(tf.cast(rows, tf.float32))
    if replacement or num_samples == 1:
        drawn = tf.random.categorical(logits, num_samples, dtype=tf.int64)
    else:
        gumbel = -tf.math.log(-tf.math.log(tf.random.uniform(tf.shape(logits), 1e-20, 1.0)))
        drawn = tf.cast(tf.math.top_k(logits + gumbel, k=num_samples).indices, tf.int64)
    return drawn[0] if vector else drawn
