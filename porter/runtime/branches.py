"""A data-dependent `if` of the source run as torch runs it where the condition is known when traced."""

import numpy as np
import tensorflow as tf


def tensor_cond(condition, then_branch, else_branch):
    """`if condition:` on a tensor (all of it true): the branch it picks, run as Python where the condition's value
    is known (eagerly, or a comparison of sizes a trace fixes: `if z.shape[-1] != length: raise ValueError(...)`
    raises only when it fails, as in torch), else tf.cond (both branches traced, the one it picks runs)."""
    known = condition if isinstance(condition, (bool, np.bool_, np.ndarray)) else tf.get_static_value(condition)
    if known is not None:
        return then_branch() if bool(np.all(known)) else else_branch()
    return tf.cond(tf.reduce_all(condition), then_branch, else_branch)
