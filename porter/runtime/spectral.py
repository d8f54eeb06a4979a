"""torch's short-time Fourier transforms and windows: `torch.stft`, `torch.istft`, `torch.hann_window`,
`torch.hamming_window`, `torch.fft.rfft`, `torch.fft.irfft`, with torch's defaults (a centred, reflect-padded
signal; a window shorter than `n_fft` padded on both sides; `normalized` scaling by n_fft ** -0.5; istft dividing
by the overlapped squared window). Spectra are complex64 tensors laid out (..., freq, frames) as torch's are."""

import math

import tensorflow as tf

from porter.runtime.complex_ops import norm_factor

_PAD_MODES = {"reflect": "REFLECT", "constant": "CONSTANT"}


def hann_window(window_length, periodic=True, dtype=None, **unused):
    """torch.hann_window: 0.5 - 0.5 cos(2 pi n / N), N = length (periodic) or length - 1."""
    return _cosine_window(window_length, periodic, 0.5, 0.5, dtype)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, dtype=None, **unused):
    """torch.hamming_window: alpha - beta cos(2 pi n / N)."""
    return _cosine_window(window_length, periodic, alpha, beta, dtype)


def _cosine_window(length, periodic, alpha, beta, dtype):
    dtype = dtype or tf.float32
    if length == 1:
        return tf.ones([1], dtype)
    denominator = length if periodic else length - 1
    n = tf.range(length, dtype=tf.float64)
    return tf.cast(alpha - beta * tf.cos(2.0 * math.pi * n / denominator), dtype)


def _full_window(window, win_length, n_fft, dtype):
    """The analysis window as torch applies it: ones(win_length) when None, zero-padded to n_fft, centred."""
    window = tf.ones([win_length], dtype) if window is None else tf.cast(window, dtype)
    left = (n_fft - win_length) // 2
    return tf.pad(window, [[left, n_fft - win_length - left]]) if win_length < n_fft else window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """torch.stft of a (L,) or (B, L) signal: (..., n_fft // 2 + 1 or n_fft, frames), complex (or its real and
    imaginary parts last when `return_complex` is False)."""
    x = tf.convert_to_tensor(input)
    hop_length = hop_length or n_fft // 4
    win_length = win_length or n_fft
    if center:
        if pad_mode not in _PAD_MODES:
            raise NotImplementedError(f"torch.stft pad_mode={pad_mode!r} is not ported")
        pads = [[0, 0]] * (len(x.shape) - 1) + [[n_fft // 2, n_fft // 2]]
        x = tf.pad(x, pads, mode=_PAD_MODES[pad_mode])
    real = not x.dtype.is_complex
    frames = tf.signal.frame(x, n_fft, hop_length, axis=-1)  # (..., frames, n_fft)
    frames = frames * _full_window(window, win_length, n_fft, frames.dtype)
    if real and onesided is not False:
        spectrum = tf.signal.rfft(frames, fft_length=[n_fft])
    else:
        spectrum = tf.signal.fft(tf.cast(frames, tf.complex64) if real else frames)
    if normalized:
        spectrum = spectrum * tf.cast(n_fft ** -0.5, spectrum.dtype)
    rank = len(spectrum.shape)
    spectrum = tf.transpose(spectrum, list(range(rank - 2)) + [rank - 1, rank - 2])
    return spectrum if return_complex is not False else tf.stack([tf.math.real(spectrum), tf.math.imag(spectrum)], -1)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """torch.istft of a (..., freq, frames) complex spectrum: the overlapped frames divided by the overlapped
    squared window, the centre padding cut, `length` samples when given."""
    z = tf.convert_to_tensor(input)
    if not z.dtype.is_complex:  # (..., freq, frames, 2): real and imaginary parts
        z = tf.complex(z[..., 0], z[..., 1])
    hop_length = hop_length or n_fft // 4
    win_length = win_length or n_fft
    rank = len(z.shape)
    z = tf.transpose(z, list(range(rank - 2)) + [rank - 1, rank - 2])  # (..., frames, freq)
    if onesided is None:
        onesided = z.shape[-1] != n_fft
    if normalized:
        z = z * tf.cast(n_fft ** 0.5, z.dtype)
    if onesided:
        frames = tf.signal.irfft(z, fft_length=[n_fft])
    else:
        frames = tf.signal.ifft(z)
        frames = frames if return_complex else tf.math.real(frames)
    full = _full_window(window, win_length, n_fft, frames.dtype)
    count = z.shape[-2]
    signal = tf.signal.overlap_and_add(frames * full, hop_length)
    envelope = tf.signal.overlap_and_add(tf.tile((full * full)[None, :], [count, 1]), hop_length)
    start = n_fft // 2 if center else 0
    expected = n_fft + hop_length * (count - 1)
    end = start + length if length is not None else (expected - n_fft // 2 if center else expected)
    signal, envelope = signal[..., start:min(end, expected)], envelope[start:min(end, expected)]
    signal = signal / envelope
    if end > expected:
        pads = [[0, 0]] * (len(signal.shape) - 1) + [[0, end - expected]]
        signal = tf.pad(signal, pads)
    return signal


def rfft(input, n=None, dim=-1, norm=None):
    """torch.fft.rfft over `dim` (n: the signal cut or zero-padded to n first)."""
    return _real_transform(tf.signal.rfft, input, n, dim, norm, inverse=False)


def irfft(input, n=None, dim=-1, norm=None):
    """torch.fft.irfft over `dim`: a real signal of n samples (default 2 * (freq - 1))."""
    return _real_transform(tf.signal.irfft, input, n, dim, norm, inverse=True)


def _real_transform(transform, input, n, dim, norm, inverse):
    x = tf.convert_to_tensor(input)
    if not inverse and x.dtype.is_complex:
        raise NotImplementedError("torch.fft.rfft of a complex tensor is not ported")
    if inverse and not x.dtype.is_complex:
        x = tf.cast(x, tf.complex64)
    rank = len(x.shape)
    dim %= rank
    order = [d for d in range(rank) if d != dim] + [dim]
    moved = x if dim == rank - 1 else tf.transpose(x, order)
    size = n if n is not None else (2 * (moved.shape[-1] - 1) if inverse else moved.shape[-1])
    out = transform(moved, fft_length=[size])
    factor = norm_factor(size, norm, inverse)
    if factor != 1.0:
        out = out * tf.cast(factor, out.dtype)
    return out if dim == rank - 1 else tf.transpose(out, [order.index(d) for d in range(rank)])
