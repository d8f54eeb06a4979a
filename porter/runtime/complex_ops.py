"""torch's complex-number functions on TensorFlow tensors: complex64 values (XLA compiles them for CPU, GPU and
TPU), built and taken apart as torch does (`view_as_real` puts (real, imaginary) on a new last axis of size 2)."""

import tensorflow as tf


def polar(abs, angle):
    """torch.polar: abs * (cos(angle) + i sin(angle))."""
    abs, angle = tf.convert_to_tensor(abs), tf.convert_to_tensor(angle)
    return tf.complex(abs * tf.cos(angle), abs * tf.sin(angle))


def complex_from_parts(real, imag):
    """torch.complex(real, imag)."""
    return tf.complex(tf.convert_to_tensor(real), tf.convert_to_tensor(imag))


def view_as_complex(input):
    """torch.view_as_complex: a float tensor whose last axis has size 2 (real, imaginary) -> complex."""
    input = tf.convert_to_tensor(input)
    if input.shape[-1] is not None and input.shape[-1] != 2:
        raise ValueError(f"view_as_complex: the last dimension must have size 2, not {input.shape[-1]}")
    return tf.complex(input[..., 0], input[..., 1])


def view_as_real(input):
    """torch.view_as_real: complex -> float with (real, imaginary) on a new last axis."""
    input = tf.convert_to_tensor(input)
    return tf.stack([tf.math.real(input), tf.math.imag(input)], axis=-1)


def outer(input, vec2):
    """torch.outer / torch.ger: the outer product of two vectors (an integer vector meeting a float one is
    promoted to its dtype, as torch does)."""
    input, vec2 = tf.convert_to_tensor(input), tf.convert_to_tensor(vec2)
    if input.dtype != vec2.dtype:
        target = input.dtype if input.dtype.is_floating or input.dtype.is_complex else vec2.dtype
        input, vec2 = tf.cast(input, target), tf.cast(vec2, target)
    return input[:, None] * vec2[None, :]


def norm_factor(count, norm, inverse):
    """The scale torch's `norm` ("backward", "ortho", "forward") applies to a transform of `count` points beyond
    TensorFlow's own (its forward transforms do not scale and its inverse ones divide by n: torch's "backward")."""
    mode = norm or "backward"
    if inverse:
        return {"backward": 1.0, "ortho": count ** 0.5, "forward": float(count)}[mode]
    return {"backward": 1.0, "ortho": count ** -0.5, "forward": 1.0 / count}[mode]


def _fft_over(transform, inverse, input, dims, norm):
    """`transform` (tf.signal.fft/fft2d/ifft...) over `dims` of `input` (moved last and back), torch's `norm`."""
    x = tf.convert_to_tensor(input)
    if not x.dtype.is_complex:
        x = tf.cast(x, tf.complex128 if x.dtype == tf.float64 else tf.complex64)
    rank = len(x.shape)
    dims = [d % rank for d in dims]
    last = list(range(rank - len(dims), rank))
    order = [d for d in range(rank) if d not in dims] + dims
    moved = x if dims == last else tf.transpose(x, order)
    out = transform(moved)
    count = 1
    for d in dims:
        count *= x.shape[d]
    factor = norm_factor(count, norm, inverse)
    if factor != 1.0:
        out = out * tf.cast(factor, out.dtype)
    if dims == last:
        return out
    return tf.transpose(out, [order.index(d) for d in range(rank)])


def fft(input, n=None, dim=-1, norm=None):
    """torch.fft.fft (n: not supported)."""
    if n is not None:
        raise NotImplementedError("torch.fft.fft with n= (padding/trimming) is not ported")
    return _fft_over(tf.signal.fft, False, input, [dim], norm)


def ifft(input, n=None, dim=-1, norm=None):
    """torch.fft.ifft (n: not supported)."""
    if n is not None:
        raise NotImplementedError("torch.fft.ifft with n= (padding/trimming) is not ported")
    return _fft_over(tf.signal.ifft, True, input, [dim], norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.fft2 over two dims (s: not supported)."""
    if s is not None:
        raise NotImplementedError("torch.fft.fft2 with s= (padding/trimming) is not ported")
    return _fft_over(tf.signal.fft2d, False, input, list(dim), norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.ifft2 over two dims (s: not supported)."""
    if s is not None:
        raise NotImplementedError("torch.fft.ifft2 with s= (padding/trimming) is not ported")
    return _fft_over(tf.signal.ifft2d, True, input, list(dim), norm)
