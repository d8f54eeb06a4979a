"""torch.meshgrid on TensorFlow tensors."""

import tensorflow as tf


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid(*tensors, indexing): `indexing` None is torch's default "ij"; a single list or tuple of
    tensors is unpacked; 0-d inputs count as 1-element vectors."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f'meshgrid: indexing must be "ij" or "xy", got {indexing!r}')
    vectors = [tf.reshape(tf.convert_to_tensor(t), [-1]) for t in tensors]
    return tuple(tf.meshgrid(*vectors, indexing=indexing))
