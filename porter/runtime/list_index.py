"""torch's indexing with one literal list (`x[:, [-1], :]`, `x[:, [0, 2]]`): basic indexing for the other
entries, then a gather along the list's axis (the axis stays where it is, as in torch; negative entries count
from the end)."""

import numpy as np
import tensorflow as tf


def getitem_list(x, index):
    x = tf.convert_to_tensor(x)
    index = index if isinstance(index, tuple) else (index,)
    explicit = sum(1 for item in index if item is not None and item is not Ellipsis)
    basic, gathers, axis = [], [], 0
    for item in index:
        if item is Ellipsis:
            span = len(x.shape) - explicit
            basic.append(Ellipsis)
            axis += span
        elif isinstance(item, list):
            basic.append(slice(None))
            gathers.append((axis, item, len(basic) - 1 - sum(1 for i in basic if i is None)))
            axis += 1
        elif item is None:
            basic.append(None)
            axis += 1
        elif isinstance(item, slice):
            basic.append(item)
            axis += 1
        else:
            basic.append(item)
    result = x[tuple(basic)]
    for out_axis, positions, source_axis in gathers:
        size = x.shape[source_axis] if source_axis < len(x.shape) else None
        positions = [p % size if size is not None and p < 0 else p for p in positions]
        result = tf.gather(result, np.asarray(positions, np.int32), axis=out_axis)
    return result
