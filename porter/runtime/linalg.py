"""torch's linear algebra on square matrices (QR, determinants, inverses, solves, Cholesky) on TensorFlow tensors,
torch's signatures and result tuples; the matrices are the last two dims, any dims before them a batch."""

import collections

import tensorflow as tf

QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])


def linalg_qr(A, mode="reduced"):
    """torch.linalg.qr: (Q, R) with A = QR; "reduced" (k = min(m, n) columns), "complete" (Q square) or "r" (R
    only, Q empty as in torch). Householder reflections as LAPACK's geqrf, so the signs agree with torch's."""
    A = tf.convert_to_tensor(A)
    q, r = tf.linalg.qr(A, full_matrices=mode == "complete")
    if mode == "r":
        q = tf.zeros([0], A.dtype)
    return QRResult(q, r)


def torch_qr(input, some=True):
    """torch.qr / Tensor.qr (deprecated spelling): linalg.qr, `some=False` the complete factorisation."""
    return linalg_qr(input, "reduced" if some else "complete")


def slogdet(A):
    """torch.slogdet / torch.linalg.slogdet: (sign, log |det|); a singular matrix gives (0, -inf) as in torch."""
    sign, logabsdet = tf.linalg.slogdet(tf.convert_to_tensor(A))
    return SlogdetResult(sign, logabsdet)


def det(A):
    """torch.det / torch.linalg.det."""
    return tf.linalg.det(tf.convert_to_tensor(A))


def logdet(A):
    """torch.logdet: log det, nan for a negative determinant and -inf for zero, as in torch."""
    sign, logabsdet = tf.linalg.slogdet(tf.convert_to_tensor(A))
    nan = tf.constant(float("nan"), logabsdet.dtype)
    return tf.where(sign < 0, nan, tf.where(sign == 0, tf.constant(float("-inf"), logabsdet.dtype), logabsdet))


def linalg_inv(A):
    """torch.inverse / torch.linalg.inv."""
    return tf.linalg.inv(tf.convert_to_tensor(A))


def linalg_solve(A, B, *, left=True):
    """torch.linalg.solve: X with AX = B (XA = B for `left=False`). B is a batch of vectors where torch reads it so:
    rank 1, or A's batch shape plus one dim."""
    A, B = tf.convert_to_tensor(A), tf.convert_to_tensor(B)
    if not left:
        return tf.linalg.matrix_transpose(linalg_solve(tf.linalg.matrix_transpose(A), tf.linalg.matrix_transpose(B)))
    vector = B.shape.rank == 1 or (B.shape.rank == A.shape.rank - 1 and B.shape[:-1] == A.shape[:-2])
    if vector:
        return tf.linalg.solve(A, B[..., None])[..., 0]
    shape = tf.broadcast_dynamic_shape(tf.shape(A)[:-2], tf.shape(B)[:-2])
    A = tf.broadcast_to(A, tf.concat([shape, tf.shape(A)[-2:]], 0))
    B = tf.broadcast_to(B, tf.concat([shape, tf.shape(B)[-2:]], 0))
    return tf.linalg.solve(A, B)


def linalg_cholesky(A, *, upper=False):
    """torch.linalg.cholesky: the lower factor L with A = LLᴴ (its transpose for `upper=True`)."""
    lower = tf.linalg.cholesky(tf.convert_to_tensor(A))
    return tf.linalg.matrix_transpose(lower) if upper else lower


def torch_cholesky(input, upper=False):
    """torch.cholesky / Tensor.cholesky (deprecated spelling): `upper` positional."""
    return linalg_cholesky(input, upper=upper)
