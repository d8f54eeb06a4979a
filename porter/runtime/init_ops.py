"""torch's in-place initialisers (`Tensor.normal_`, `uniform_`, `bernoulli_`, `zero_`, `fill_`, `copy_`) on
TensorFlow values.

TensorFlow tensors are immutable, so each initialiser exists twice:
- `*_like(x, ...)`: a new tensor of x's shape and dtype (the translator rebinds the mutated local name to it);
- `assign_in_place(owner, name, value)`: `owner.name` takes `value` in place. A Keras variable (a parameter, a
  persistent buffer, a layer's weight) is assigned, so it stays the variable `load_state_dict` and the optimizer
  know; a plain tensor attribute (a non-persistent buffer) is replaced.
"""

import numpy as np
import tensorflow as tf

from porter.runtime.helpers import setitem


def normal_like(input, mean=0.0, std=1.0, generator=None):
    """torch's x.normal_(mean, std) as a new tensor shaped and typed like x."""
    input = tf.convert_to_tensor(input)
    return tf.random.normal(tf.shape(input), mean, std, dtype=input.dtype)


def uniform_like(input, low=0.0, high=1.0, generator=None):
    """torch's x.uniform_(from, to) as a new tensor shaped and typed like x (values in [low, high))."""
    input = tf.convert_to_tensor(input)
    return tf.random.uniform(tf.shape(input), low, high, dtype=input.dtype)


def bernoulli_like(input, p=0.5, generator=None):
    """torch's x.bernoulli_(p) as a new tensor shaped and typed like x: 1 with probability p, else 0."""
    input = tf.convert_to_tensor(input)
    return tf.cast(tf.random.uniform(tf.shape(input), 0.0, 1.0) < p, input.dtype)


def copy_like(input, src):
    """torch's x.copy_(src) as a new tensor: src broadcast to x's shape and cast to x's dtype."""
    input = tf.convert_to_tensor(input)
    return tf.broadcast_to(tf.cast(src, input.dtype), tf.shape(input))


def _state_transform(owner, variable):
    """The torch -> Keras array transform of the state entry holding `variable` (None: same layout)."""
    if not hasattr(owner, "torch_state"):
        return None
    for entry in owner.torch_state():
        if entry.variable is variable:
            return entry.to_keras
    return None


def assign_in_place(owner, name, value, torch_layout=False):
    """`owner.name` <- value in place; returns the updated value.

    `torch_layout`: `value` is in torch's layout (copy_ from a tensor), so a weight the port stores in another
    layout (a convolution's HWIO kernel) gets the same load-time transform `load_state_dict` applies.
    """
    current = getattr(owner, name)
    if current is None and hasattr(owner, "lookup_feed") or getattr(current, "served_elsewhere", False):
        return current  # a table built without its rows (TableBuild): the host copy holds them
    if torch_layout and hasattr(current, "assign"):
        transform = _state_transform(owner, current)
        if transform is not None and np.size(value) == np.prod(current.shape):
            value = transform(np.asarray(value))
    shape = current.shape
    value = tf.broadcast_to(tf.cast(value, current.dtype), shape)
    if hasattr(current, "assign"):
        current.assign(value)
        return current
    object.__setattr__(owner, name, value)
    return value


def fill_variable(target, value):
    """`target.data.normal_()` of a name holding a parameter (a loop over `named_parameters()`): the variable filled
    in place with `value` (of its shape) and returned; a tensor the name holds instead is replaced by `value`."""
    if hasattr(target, "assign"):
        target.assign(tf.broadcast_to(tf.cast(value, target.dtype), target.shape))
        return target
    return value


def fill_slice_in_place(owner, name, index, value):
    """`owner.name[index] = value` in place (torch's `self.qkv.bias[n:2 * n].data.zero_()`): the variable stays
    the one load_state_dict and the optimizer hold. Only for weights stored in torch's own layout (biases,
    embeddings, norms); a transposed or HWIO kernel would need its index mapped."""
    current = getattr(owner, name)
    if current is None and hasattr(owner, "lookup_feed") or getattr(current, "served_elsewhere", False):
        return current  # a table built without its rows (TableBuild): the host copy holds them
    if _state_transform(owner, current) is not None:
        raise NotImplementedError(f"{name}[...] filled in place: the port stores this weight in another layout "
                                  f"than torch's; fill it before load_state_dict or index the Keras layout")
    updated = setitem(current, index, tf.cast(value, current.dtype))
    if hasattr(current, "assign"):
        current.assign(updated)
        return current
    object.__setattr__(owner, name, updated)
    return updated
