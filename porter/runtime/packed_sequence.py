"""torch.nn.utils.rnn's packed sequences: pack_padded_sequence / pad_packed_sequence / pack_sequence / pad_sequence.

torch packs a padded batch into one flat tensor of the valid steps, time-major and sorted by length, so that an RNN
never sees the padding. Under XLA every shape is static, so the port's `PackedSequence` keeps the padded tensor as it
came (batch-first or time-major) with the lengths beside it; the RNN layers (porter/runtime/recurrent.py) run it
masked: a sequence's state stops changing after its last valid step (a reversed direction starts at its own last
valid step, with the initial state), its outputs there are zeros, and the result is a PackedSequence again.
Sorting (`enforce_sorted=False`) is torch's bookkeeping only: nothing is reordered here, results come back in the
batch's own order, as torch's do.

`pad_packed_sequence` gives `total_length` steps when told, else torch's longest length when the lengths are
concrete (eager code), else (traced code: `tf.function`, XLA) the padded input's own time size, the static width
XLA needs; positions past each length hold `padding_value` either way.
"""

import itertools

import tensorflow as tf

from porter.runtime.recurrent import _recurrent_batch_major


class PackedSequence:
    """torch's PackedSequence as the port holds it: `padded` (B, T, *) when `batch_first` else (T, B, *), and each
    sequence's length (`lengths`, int32, in the batch's order). The RNN layers recognise it by `lengths`."""

    def __init__(self, padded, lengths, batch_first=False):
        self.padded, self.lengths, self.batch_first = padded, lengths, batch_first

    def with_padded(self, padded, batch_first=None):
        """The same lengths around another padded tensor (an RNN's output)."""
        return PackedSequence(padded, self.lengths, self.batch_first if batch_first is None else batch_first)

    @property
    def sorted_indices(self):
        """torch's ordering by decreasing length (what it packs in; the port never reorders)."""
        return tf.argsort(self.lengths, direction="DESCENDING", stable=True)

    @property
    def unsorted_indices(self):
        return tf.argsort(self.sorted_indices, stable=True)

    def __repr__(self):
        return f"PackedSequence(padded={self.padded.shape}, batch_first={self.batch_first})"


def _packed_check_lengths(lengths, steps, enforce_sorted):
    """torch's checks of concrete lengths (eager code); traced lengths are taken as they come."""
    known = tf.get_static_value(lengths)
    if known is None:
        return
    known = [int(v) for v in known.reshape(-1)]
    if any(v <= 0 for v in known):
        raise ValueError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is "
                         "<= 0")
    if isinstance(steps, int) and known and max(known) > steps:
        raise ValueError(f"pack_padded_sequence: a length ({max(known)}) exceeds the padded time size ({steps})")
    if enforce_sorted and any(a < b for a, b in itertools.pairwise(known)):
        raise ValueError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                         "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                         "requirement if you do not need ONNX exportability.")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_padded_sequence: `input` (T, B, *) or (B, T, *) with `lengths` (B,) -> PackedSequence."""
    padded = tf.convert_to_tensor(input)
    lengths = tf.reshape(tf.cast(tf.convert_to_tensor(lengths), tf.int32), [-1])
    steps = padded.shape[1 if batch_first else 0]
    _packed_check_lengths(lengths, steps, enforce_sorted)
    return PackedSequence(padded, lengths, batch_first)


def _packed_swap_leading(x):
    """(a, b, *) -> (b, a, *) with one row Gather (porter's runtime emits no Transpose in sequence models)."""
    shape = tf.shape(x)
    trailing = x.shape[2:]
    features = trailing.num_elements() if trailing.is_fully_defined() else -1
    flat = tf.reshape(x, tf.stack([shape[0], shape[1], features]))
    flat.set_shape(x.shape[:2].concatenate([None if features == -1 else features]))
    swapped = _recurrent_batch_major(flat)
    out = tf.reshape(swapped, tf.concat([[shape[1], shape[0]], shape[2:]], axis=0))
    out.set_shape(tf.TensorShape([x.shape[1], x.shape[0]]).concatenate(trailing))
    return out


def _packed_width(lengths, steps, total_length):
    """The time size pad_packed_sequence gives: `total_length`, else the longest length when concrete, else `steps`
    (an int when static)."""
    if total_length is not None:
        known = tf.get_static_value(total_length)
        width = int(known) if known is not None else tf.cast(total_length, tf.int32)
        longest = tf.get_static_value(lengths)
        if known is not None and longest is not None and longest.size and int(known) < int(longest.max()):
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={int(known)} and max sequence length being {int(longest.max())}")
        return width
    known = tf.get_static_value(lengths)
    if known is not None and known.size:
        return int(known.max())
    return steps


def _packed_resize_time(x, axis, width, padding_value):
    """x cut or padded (with padding_value) to `width` steps on `axis` (0 or 1)."""
    steps = x.shape[axis]
    pads = [[0, 0]] * len(x.shape)
    if isinstance(width, int) and steps is not None:
        if width == steps:
            return x
        if width < steps:
            return x[:width] if axis == 0 else x[:, :width]
        pads[axis] = [0, width - steps]
        return tf.pad(x, pads, constant_values=tf.cast(padding_value, x.dtype))
    x = x[:width] if axis == 0 else x[:, :width]
    pads[axis] = [0, tf.maximum(width - tf.shape(x)[axis], 0)]
    return tf.pad(x, pads, constant_values=tf.cast(padding_value, x.dtype))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """torch.nn.utils.rnn.pad_packed_sequence: PackedSequence -> (padded, lengths as int64); steps past each length
    hold `padding_value` (the time size: see the module docstring)."""
    padded = sequence.padded
    axis = 1 if sequence.batch_first else 0
    steps = padded.shape[axis] if padded.shape[axis] is not None else tf.shape(padded)[axis]
    padded = _packed_resize_time(padded, axis, _packed_width(sequence.lengths, steps, total_length), padding_value)
    steps = padded.shape[axis] if padded.shape[axis] is not None else tf.shape(padded)[axis]
    valid = tf.range(steps)[None, :] < sequence.lengths[:, None]  # (B, T)
    if not sequence.batch_first:
        valid = tf.range(steps)[:, None] < sequence.lengths[None, :]  # (T, B)
    valid = tf.reshape(valid, tf.concat([tf.shape(valid), tf.ones([len(padded.shape) - 2], tf.int32)], axis=0))
    padded = tf.where(valid, padded, tf.cast(padding_value, padded.dtype))
    if batch_first != sequence.batch_first:
        padded = _packed_swap_leading(padded)
    return padded, tf.cast(sequence.lengths, tf.int64)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch.nn.utils.rnn.pad_sequence: tensors (L_i, *) -> (max L, B, *), or (B, max L, *) when batch_first."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, (list, tuple)):
        sequences = [tf.convert_to_tensor(s) for s in sequences]
    else:  # a stacked tensor: torch iterates its first axis
        sequences = tf.unstack(tf.convert_to_tensor(sequences))
    sizes = [s.shape[0] for s in sequences]
    longest = max(sizes) if all(size is not None for size in sizes) else tf.reduce_max(
        tf.stack([tf.shape(s)[0] for s in sequences]))
    padded = []
    for s in sequences:
        extra = longest - (s.shape[0] if s.shape[0] is not None else tf.shape(s)[0])
        pads = [[extra, 0] if padding_side == "left" else [0, extra]] + [[0, 0]] * (len(s.shape) - 1)
        padded.append(tf.pad(s, pads, constant_values=tf.cast(padding_value, s.dtype)))
    return tf.stack(padded, axis=0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_sequence: tensors (L_i, *) -> PackedSequence (time-major, as torch pads them)."""
    sequences = [tf.convert_to_tensor(s) for s in sequences]
    lengths = tf.stack([tf.shape(s)[0] if s.shape[0] is None else s.shape[0] for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
