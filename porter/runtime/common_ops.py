"""torch's common tensor ops that have no other home (flip, narrow, movedim, tile, addcmul, lerp, nan_to_num,
diagonal, tensordot, cdist, scatter, median, cummax, searchsorted ...) on TensorFlow tensors, with torch's
signatures, dtype rules and tie-breaking."""

import math

import tensorflow as tf

from porter.runtime.tensor_ops import MaxResult


def _dims_tuple(dims):
    """`dims` given as one int, a sequence, or as *args whose one item is a sequence -> a tuple of ints."""
    if isinstance(dims, int):
        return (dims,)
    dims = tuple(dims)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return dims


def flip(input, *dims):
    """torch.flip: reverse the order along every axis in `dims` (given as a sequence or as separate ints)."""
    input = tf.convert_to_tensor(input)
    axes = _dims_tuple(dims)
    return tf.reverse(input, [a % len(input.shape) for a in axes]) if axes else input


def narrow(input, dim, start, length):
    """torch.narrow: `length` entries from `start` (negative: from the end) along `dim`."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    dim = dim % rank
    if isinstance(start, int) and start < 0:
        start += input.shape[dim]
    index = (slice(None),) * dim + (slice(start, start + length),)
    return input[index]


def movedim(input, source, destination):
    """torch.movedim/moveaxis: the dims in `source` moved to `destination`, the others kept in order."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    sources = [d % rank for d in _dims_tuple(source)]
    targets = [d % rank for d in _dims_tuple(destination)]
    rest = iter(d for d in range(rank) if d not in sources)
    placed = dict(zip(targets, sources))
    perm = [placed[i] if i in placed else next(rest) for i in range(rank)]
    return tf.transpose(input, perm)


def tile(input, *dims):
    """torch.tile: repeat along each dim; fewer dims than the rank are padded with leading 1s, more unsqueeze."""
    input = tf.convert_to_tensor(input)
    reps = list(_dims_tuple(dims))
    rank = len(input.shape)
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    elif len(reps) > rank:
        input = tf.reshape(input, [1] * (len(reps) - rank) + list(tf.unstack(tf.shape(input))) if rank else
                           [1] * len(reps))
    return tf.tile(input, reps)


def broadcast_to(input, size):
    """torch.broadcast_to: -1 in `size` keeps the input's size there."""
    input = tf.convert_to_tensor(input)
    size = list(_dims_tuple(size))
    offset = len(size) - len(input.shape)
    shape = [tf.shape(input)[i - offset] if s == -1 else s for i, s in enumerate(size)]
    return tf.broadcast_to(input, tf.stack(shape) if any(not isinstance(s, int) for s in shape) else shape)


def addcmul(input, tensor1, tensor2, value=1):
    """torch.addcmul: input + value * tensor1 * tensor2."""
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, value=1):
    """torch.addcdiv: input + value * tensor1 / tensor2."""
    return input + value * tensor1 / tensor2


def lerp(input, end, weight):
    """torch.lerp with torch's two-sided formula (exact at both ends): weight < 0.5 measures from `input`,
    otherwise from `end`."""
    input = tf.convert_to_tensor(input)
    end = tf.convert_to_tensor(end, input.dtype)
    weight = tf.convert_to_tensor(weight, input.dtype)
    difference = end - input
    return tf.where(tf.abs(weight) < 0.5, input + weight * difference, end - difference * (1 - weight))


def _float(x):
    x = tf.convert_to_tensor(x)
    return x if x.dtype.is_floating else tf.cast(x, tf.float32)


def logaddexp(input, other):
    """torch.logaddexp: log(exp(a) + exp(b)) without overflow; equal infinities give themselves."""
    a, b = _float(input), _float(other)
    b = tf.cast(b, a.dtype)
    larger = tf.maximum(a, b)
    stable = larger + tf.math.log1p(tf.exp(-tf.abs(a - b)))
    return tf.where(tf.equal(a, b) & tf.math.is_inf(a), a, stable)


def log10(input):
    """torch.log10 (integer inputs give float32)."""
    x = _float(input)
    return tf.math.log(x) / tf.constant(math.log(10.0), x.dtype)


def lgamma(input):
    return tf.math.lgamma(_float(input))


def erfinv(input):
    return tf.math.erfinv(_float(input))


def hypot(input, other):
    a, b = _float(input), _float(other)
    return tf.sqrt(a * a + tf.cast(b, a.dtype) * tf.cast(b, a.dtype))


def xlogy(input, other):
    """torch.xlogy: 0 where input is 0 (unless other is NaN), input * log(other) elsewhere."""
    x, y = _float(input), _float(other)
    y = tf.cast(y, x.dtype)
    x, y = x + tf.zeros_like(y), y + tf.zeros_like(x)
    result = tf.where(tf.equal(x, 0), tf.zeros_like(x), x * tf.math.log(y))
    return tf.where(tf.math.is_nan(y), y, result)


def logit(input, eps=None):
    """torch.logit: log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given."""
    x = _float(input)
    if eps is not None:
        x = tf.clip_by_value(x, eps, 1.0 - eps)
    return tf.math.log(x / (1 - x))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """torch.nan_to_num: NaN -> `nan`, +inf -> `posinf` (default: the dtype's largest), -inf -> `neginf` (default:
    its lowest)."""
    x = tf.convert_to_tensor(input)
    if not x.dtype.is_floating:
        return x
    posinf = x.dtype.max if posinf is None else posinf
    neginf = x.dtype.min if neginf is None else neginf
    x = tf.where(tf.math.is_nan(x), tf.cast(nan, x.dtype), x)
    x = tf.where(tf.equal(x, math.inf), tf.cast(posinf, x.dtype), x)
    return tf.where(tf.equal(x, -math.inf), tf.cast(neginf, x.dtype), x)


def signbit(input):
    """torch.signbit: True where the sign bit is set (so -0.0 too)."""
    x = tf.convert_to_tensor(input)
    if x.dtype == tf.float64:
        return tf.bitcast(x, tf.int64) < 0
    if x.dtype.is_floating:
        return tf.bitcast(tf.cast(x, tf.float32), tf.int32) < 0
    return x < 0


def heaviside(input, values):
    """torch.heaviside: 0 below zero, 1 above, `values` at zero."""
    x = tf.convert_to_tensor(input)
    values = tf.cast(values, x.dtype)
    return tf.where(tf.equal(x, 0), values + tf.zeros_like(x), tf.cast(x > 0, x.dtype) + tf.zeros_like(values))


def diagonal(input, offset=0, dim1=0, dim2=1):
    """torch.diagonal: the diagonal of the (dim1, dim2) planes, as a new last dim."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    dim1, dim2 = dim1 % rank, dim2 % rank
    perm = [d for d in range(rank) if d not in (dim1, dim2)] + [dim1, dim2]
    return tf.linalg.diag_part(tf.transpose(input, perm), k=offset)


def diag(input, diagonal=0):
    """torch.diag: a vector -> the square matrix with it on diagonal `diagonal`; a matrix -> that diagonal."""
    input = tf.convert_to_tensor(input)
    if len(input.shape) == 1:
        return tf.linalg.diag(input, k=diagonal)
    return tf.linalg.diag_part(input, k=diagonal)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: the last dim put on diagonal `offset` of new (dim1, dim2) planes."""
    result = tf.linalg.diag(tf.convert_to_tensor(input), k=offset)
    rank = len(result.shape)
    dim1, dim2 = dim1 % rank, dim2 % rank
    rest = iter(range(rank - 2))
    perm = [rank - 2 if i == dim1 else rank - 1 if i == dim2 else next(rest) for i in range(rank)]
    return tf.transpose(result, perm)


def trace(input):
    """torch.trace: the sum of a matrix's main diagonal (integers give int64)."""
    input = tf.convert_to_tensor(input)
    if input.dtype.is_integer or input.dtype == tf.bool:
        input = tf.cast(input, tf.int64)
    return tf.reduce_sum(tf.linalg.diag_part(input))


def tensordot(a, b, dims=2):
    """torch.tensordot: `dims` an int (last dims of a with first of b) or a pair of dim lists."""
    if not isinstance(dims, int):
        dims = [list(_dims_tuple(d)) for d in dims]
    return tf.tensordot(a, b, axes=dims)


def dot(input, other):
    """torch.dot / torch.inner of two vectors."""
    return tf.reduce_sum(input * other)


def mv(input, vec):
    """torch.mv: matrix times vector."""
    return tf.linalg.matvec(input, vec)


def _scaled_sum(input, product, beta, alpha):
    """beta * input + alpha * product, torch's `add*` ops: beta == 0 ignores input (NaNs included), which still
    broadcasts the result to its shape."""
    if alpha != 1:
        product = alpha * product
    if beta == 0:
        return product + tf.zeros_like(tf.convert_to_tensor(input, product.dtype))
    return product + (input if beta == 1 else beta * input)


def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """torch.baddbmm: beta * input + alpha * batch1 @ batch2 (beta == 0 ignores input, NaNs included)."""
    return _scaled_sum(input, tf.matmul(batch1, batch2), beta, alpha)


def addmm(input, mat1, mat2, beta=1, alpha=1):
    """torch.addmm: beta * input + alpha * mat1 @ mat2 (HF GPT-2's Conv1D: `addmm(bias, x.view(-1, nx), w)`)."""
    return _scaled_sum(input, tf.matmul(mat1, mat2), beta, alpha)


def addbmm(input, batch1, batch2, beta=1, alpha=1):
    """torch.addbmm: beta * input + alpha * the sum over the batch of batch1[b] @ batch2[b]."""
    return _scaled_sum(input, tf.reduce_sum(tf.matmul(batch1, batch2), axis=0), beta, alpha)


def addmv(input, mat, vec, beta=1, alpha=1):
    """torch.addmv: beta * input + alpha * mat @ vec."""
    return _scaled_sum(input, tf.linalg.matvec(mat, vec), beta, alpha)


def addr(input, vec1, vec2, beta=1, alpha=1):
    """torch.addr: beta * input + alpha * the outer product of vec1 and vec2."""
    return _scaled_sum(input, tf.tensordot(vec1, vec2, axes=0), beta, alpha)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """torch.cdist: the p-norm distance between every row of x1 and every row of x2 (batched). Euclidean distances
    are computed as torch computes them: by its matrix-product formula where either side has more than 25 rows
    (its default `compute_mode`) or where asked to, by differences otherwise."""
    rows = (x1.shape[-2], x2.shape[-2])
    if p == 2 and compute_mode != "donot_use_mm_for_euclid_dist" and (
            compute_mode == "use_mm_for_euclid_dist" or any(r is None or r > 25 for r in rows)):
        if None not in rows or compute_mode == "use_mm_for_euclid_dist":
            return _euclidean_dist_by_product(x1, x2)
        return tf.cond(tf.logical_or(tf.shape(x1)[-2] > 25, tf.shape(x2)[-2] > 25),
                       lambda: _euclidean_dist_by_product(x1, x2),
                       lambda: cdist(x1, x2, p, "donot_use_mm_for_euclid_dist"))
    difference = tf.abs(tf.expand_dims(x1, -2) - tf.expand_dims(x2, -3))
    if p == 0:
        return tf.reduce_sum(tf.cast(difference != 0, x1.dtype), axis=-1)
    if p == math.inf:
        return tf.reduce_max(difference, axis=-1)
    if p == 1:
        return tf.reduce_sum(difference, axis=-1)
    if p == 2:
        return tf.sqrt(tf.reduce_sum(difference * difference, axis=-1))
    return tf.pow(tf.reduce_sum(tf.pow(difference, p), axis=-1), 1.0 / p)


def _euclidean_dist_by_product(x1, x2):
    """torch's `_euclidean_dist`: |a|^2 - 2 a.b + |b|^2 as one matrix product of padded rows, clamped at 1e-30."""
    x1_norm = tf.reduce_sum(x1 * x1, axis=-1, keepdims=True)
    x2_norm = tf.reduce_sum(x2 * x2, axis=-1, keepdims=True)
    left = tf.concat([x1 * -2.0, x1_norm, tf.ones_like(x1_norm)], -1)
    right = tf.concat([x2, tf.ones_like(x2_norm), x2_norm], -1)
    return tf.sqrt(tf.maximum(tf.matmul(left, right, transpose_b=True), 1e-30))


def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other (a scalar)."""
    difference = tf.reshape(tf.abs(input - other), [-1])
    if p == 0:
        return tf.reduce_sum(tf.cast(difference != 0, difference.dtype))
    if p == math.inf:
        return tf.reduce_max(difference)
    if p == -math.inf:
        return tf.reduce_min(difference)
    return tf.pow(tf.reduce_sum(tf.pow(difference, p)), 1.0 / p)


def _scatter_indices(index, dim):
    """Full coordinates (index.shape + [rank]) of a torch scatter: `index` along `dim`, the position elsewhere."""
    index = tf.cast(index, tf.int64)
    rank = len(index.shape)
    dim = dim % rank
    grids = tf.meshgrid(*[tf.range(tf.shape(index, out_type=tf.int64)[i]) for i in range(rank)], indexing="ij")
    grids[dim] = index
    return tf.stack(grids, axis=-1)


def _scatter_source(src, index, like):
    """The values a scatter writes: the index-shaped corner of tensor `src`, or a scalar broadcast."""
    if isinstance(src, (int, float, bool)) or len(getattr(src, "shape", ())) == 0:
        return tf.cast(tf.broadcast_to(src, tf.shape(index)), like.dtype)
    return tf.cast(tf.slice(src, tf.zeros([len(index.shape)], tf.int32), tf.shape(index)), like.dtype)


def scatter(input, dim, index, src=None, value=None, reduce=None):
    """torch.scatter: input with input[..index[i][j].. (at `dim`)] = src[i][j] (or `value`); `reduce` "add" or
    adds instead (torch leaves which of several writes to one place wins unspecified without it)."""
    input = tf.convert_to_tensor(input)
    source = _scatter_source(value if src is None else src, index, input)
    coordinates = _scatter_indices(index, dim)
    if reduce == "add":
        return tf.tensor_scatter_nd_add(input, coordinates, source)
    return tf.tensor_scatter_nd_update(input, coordinates, source)


def scatter_add(input, dim, index, src):
    """torch.scatter_add: input with src added at index along `dim` (repeated indices accumulate)."""
    input = tf.convert_to_tensor(input)
    return tf.tensor_scatter_nd_add(input, _scatter_indices(index, dim), _scatter_source(src, index, input))


def _atleast(tensor, rank):
    """torch.atleast_2d/3d: a scalar -> ones-shaped, a vector (n) -> (1, n) or (1, n, 1), a matrix -> (m, n, 1)."""
    tensor = tf.convert_to_tensor(tensor)
    shape = tensor.shape.as_list()
    if len(shape) >= rank:
        return tensor
    if len(shape) == 0:
        return tf.reshape(tensor, [1] * rank)
    if len(shape) == 1:
        return tensor[None] if rank == 2 else tensor[None, :, None]
    return tensor[..., None]


def hstack(tensors):
    """torch.hstack: concatenated along dim 1 (dim 0 for vectors)."""
    tensors = [tf.convert_to_tensor(t) for t in tensors]
    return tf.concat(tensors, axis=0 if len(tensors[0].shape) <= 1 else 1)


def vstack(tensors):
    """torch.vstack: vectors made rows, then concatenated along dim 0."""
    return tf.concat([_atleast(t, 2) for t in tensors], axis=0)


def dstack(tensors):
    """torch.dstack: at least 3 dims each ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)), concatenated along dim 2."""
    return tf.concat([_atleast(t, 3) for t in tensors], axis=2)


def median(input, dim=None, keepdim=False):
    """torch.median: the lower median (the ((n - 1) // 2)-th smallest), of all entries, or (values, indices) along
    `dim`."""
    input = tf.convert_to_tensor(input)
    if dim is None:
        flat = tf.sort(tf.reshape(input, [-1]))
        return flat[(flat.shape[0] - 1) // 2]
    dim = dim % max(len(input.shape), 1)
    return _kth_along(input, lambda n: (n - 1) // 2, dim, keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):
    """torch.kthvalue: (values, indices) of the k-th smallest entry (1-based) along `dim`."""
    input = tf.convert_to_tensor(input)
    return _kth_along(input, lambda n: k - 1, dim % max(len(input.shape), 1), keepdim)


def _kth_along(input, position, dim, keepdim):
    """(values, int64 indices) of the position(n)-th smallest entry along `dim` (ties: the first; NaN sorts last),
    found with the dim moved last."""
    rank = len(input.shape)
    perm = [d for d in range(rank) if d != dim] + [dim]
    moved = tf.transpose(input, perm)
    order = tf.argsort(moved, axis=-1, stable=True)
    chosen = order[..., position(moved.shape[-1]):position(moved.shape[-1]) + 1]
    values = tf.gather(moved, chosen, axis=-1, batch_dims=rank - 1)
    back = [perm.index(d) for d in range(rank)]
    values, chosen = tf.transpose(values, back), tf.transpose(chosen, back)
    if not keepdim:
        values, chosen = tf.squeeze(values, dim), tf.squeeze(chosen, dim)
    return MaxResult(values, tf.cast(chosen, tf.int64))


def _running_extreme(input, dim, better):
    """(values, int64 indices) of a running max/min along `dim`: torch's cummax/cummin, a NaN taking over from where
    it appears (each later NaN taking the index) and an equal value taking the later index."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    if rank == 0:
        return MaxResult(input, tf.zeros([], tf.int64))
    dim = dim % rank
    perm = [dim] + [d for d in range(rank) if d != dim]
    moved = tf.transpose(input, perm)
    positions = tf.reshape(tf.range(tf.shape(moved, out_type=tf.int64)[0]), [-1] + [1] * (rank - 1))
    positions = positions + tf.zeros_like(moved, tf.int64)

    def step(carry, item):
        best, best_index = carry
        value, index = item
        nan = tf.math.is_nan(value) if value.dtype.is_floating else tf.zeros_like(value, tf.bool)
        best_nan = tf.math.is_nan(best) if best.dtype.is_floating else tf.zeros_like(best, tf.bool)
        take = nan | ((better(value, best) | tf.equal(value, best)) & ~best_nan)
        return tf.where(take, value, best), tf.where(take, index, best_index)

    values, indices = tf.scan(step, (moved, positions), initializer=(moved[0], positions[0]))
    back = [perm.index(d) for d in range(rank)]
    return MaxResult(tf.transpose(values, back), tf.transpose(indices, back))


def cummax(input, dim):
    return _running_extreme(input, dim, tf.greater)


def cummin(input, dim):
    return _running_extreme(input, dim, tf.less)


def logcumsumexp(input, dim):
    """torch.logcumsumexp: log of the running sum of exp along `dim`."""
    return tf.math.cumulative_logsumexp(_float(input), axis=dim)


def searchsorted(sorted_sequence, input, out_int32=False, right=False, side=None, sorter=None):
    """torch.searchsorted: for each value, the insertion index into the innermost sorted rows (`right`/`side`
    "right": after equal entries). A 1-D sequence serves values of any shape."""
    sequence = tf.convert_to_tensor(sorted_sequence)
    values = tf.convert_to_tensor(input, sequence.dtype)
    if sorter is not None:
        sequence = tf.gather(sequence, sorter, axis=-1, batch_dims=len(sequence.shape) - 1)
    side = side or ("right" if right else "left")
    dtype = tf.int32 if out_int32 else tf.int64
    if len(values.shape) == 0:
        return tf.searchsorted(sequence, tf.reshape(values, [1]), side=side, out_type=dtype)[0]
    if len(sequence.shape) == 1:
        flat = tf.reshape(values, [1, -1])
        found = tf.searchsorted(sequence[None], flat, side=side, out_type=dtype)
        return tf.reshape(found, tf.shape(values))
    return tf.searchsorted(sequence, values, side=side, out_type=dtype)


def bucketize(input, boundaries, out_int32=False, right=False):
    """torch.bucketize: searchsorted of the values into 1-D `boundaries` (right=False: boundaries[i-1] < x <=
    boundaries[i])."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def count_nonzero(input, dim=None):
    """torch.count_nonzero: int64 count of non-zero entries, over all dims or `dim` (an int or a tuple)."""
    return tf.math.count_nonzero(input, axis=dim, dtype=tf.int64)


def rot90(input, k=1, dims=(0, 1)):
    """torch.rot90: rotate by 90 degrees k times in the plane `dims`, from the first dim towards the second."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    first, second = dims[0] % rank, dims[1] % rank
    k %= 4
    perm = list(range(rank))
    perm[first], perm[second] = perm[second], perm[first]
    if k == 1:
        return tf.transpose(tf.reverse(input, [second]), perm)
    if k == 2:
        return tf.reverse(input, [first, second])
    if k == 3:
        return tf.reverse(tf.transpose(input, perm), [second])
    return input


def kron(input, other):
    """torch.kron: the Kronecker product (the lower-rank operand gets leading 1-dims)."""
    a, b = tf.convert_to_tensor(input), tf.convert_to_tensor(other)
    rank = max(len(a.shape), len(b.shape))
    a = tf.reshape(a, [1] * (rank - len(a.shape)) + a.shape.as_list())
    b = tf.reshape(b, [1] * (rank - len(b.shape)) + b.shape.as_list())
    left, right = "abcdefghijkl"[:rank], "mnopqrstuvwx"[:rank]
    product = tf.einsum(f"{left},{right}->{''.join(x + y for x, y in zip(left, right))}", a, b)
    return tf.reshape(product, [x * y for x, y in zip(a.shape, b.shape)])


def take(input, index):
    """torch.take: entries of the flattened input at `index` (negative from the end), shaped like `index`."""
    flat = tf.reshape(input, [-1])
    index = tf.cast(index, tf.int64)
    index = tf.where(index < 0, index + tf.size(flat, out_type=tf.int64), index)
    return tf.gather(flat, index)


def empty_like(input, dtype=None, **unused):
    """torch.empty_like: uninitialised in torch; zeros here."""
    input = tf.convert_to_tensor(input)
    return tf.zeros_like(input, dtype=dtype)


def block_diag(*tensors):
    """torch.block_diag: the tensors (scalars and vectors count as one row) on the diagonal of one matrix, zeros
    elsewhere, in the dtype torch promotes them to (the first float dtype among them, else the first one's)."""
    if not tensors:
        return tf.zeros([1, 0])
    blocks = [tf.convert_to_tensor(t) for t in tensors]
    blocks = [tf.reshape(b, [1, -1]) if len(b.shape) < 2 else b for b in blocks]
    dtype = next((b.dtype for b in blocks if b.dtype.is_floating), blocks[0].dtype)
    widths = [b.shape[1] if b.shape[1] is not None else tf.shape(b)[1] for b in blocks]
    rows, before = [], 0
    for block, width in zip(blocks, widths):
        after = sum(widths) - before - width
        rows.append(tf.pad(tf.cast(block, dtype), [[0, 0], [before, after]]))
        before += width
    return tf.concat(rows, 0)


def cross(input, other, dim=None):
    """torch.cross / torch.linalg.cross: the 3-vector cross product along `dim` (operands broadcast; `dim` None: the
    first dim of size 3, as torch.cross without a dim takes)."""
    a, b = tf.convert_to_tensor(input), tf.convert_to_tensor(other)
    shape = tf.broadcast_static_shape(a.shape, b.shape).as_list()
    a, b = (tf.reshape(t, [1] * (len(shape) - len(t.shape)) + t.shape.as_list()) if len(t.shape) < len(shape) else t
            for t in (a, b))
    if dim is None:
        dim = shape.index(3)
    dim = dim - len(shape) if dim >= 0 else dim  # counted from the end: the operands may differ in rank
    (a0, a1, a2), (b0, b1, b2) = tf.unstack(a, 3, axis=dim), tf.unstack(b, 3, axis=dim)
    return tf.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=dim)


def linalg_cross(input, other, dim=-1):
    """torch.linalg.cross: `cross` along `dim`, the last by default."""
    return cross(input, other, dim)


def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    """torch.linalg.pinv: the pseudo-inverse of the last two dims by SVD, singular values at or below
    max(atol, rtol * largest) dropped; rtol defaults as torch's (eps * max(m, n), 0 where only atol is given)."""
    A = tf.convert_to_tensor(A)
    s, u, v = tf.linalg.svd(A, full_matrices=False)
    if rtol is None:
        eps = float(tf.experimental.numpy.finfo(A.dtype.as_numpy_dtype).eps)
        rtol = eps * max(A.shape[-2], A.shape[-1]) if atol is None or atol == 0 else 0.0
    threshold = tf.maximum(tf.cast(atol or 0.0, s.dtype), rtol * tf.reduce_max(s, axis=-1, keepdims=True))
    kept = s > threshold
    inverse = tf.where(kept, 1.0 / tf.where(kept, s, tf.ones_like(s)), tf.zeros_like(s))
    return tf.linalg.matmul(v * inverse[..., None, :], u, adjoint_b=True)


def pinverse(input, rcond=1e-15):
    """torch.pinverse / Tensor.pinverse: linalg.pinv with `rcond` as its relative tolerance."""
    return linalg_pinv(input, rtol=rcond)


def _along_first(tensor, dim):
    """(tensor with axis `dim` moved first, the permutation back) for the index_* ops' row updates."""
    rank = len(tensor.shape)
    dim = dim % rank
    order = [dim] + [d for d in range(rank) if d != dim]
    return tf.transpose(tensor, order) if dim else tensor, [order.index(d) for d in range(rank)]


def _index_update(update, input, dim, index, rows):
    """`update` (tf.tensor_scatter_nd_add / _update) of input's entries `index` (1-D) along `dim` with `rows`
    (input's shape with `len(index)` at `dim`, or a scalar)."""
    input = tf.convert_to_tensor(input)
    moved, back = _along_first(input, dim)
    index = tf.reshape(tf.cast(index, tf.int64), [-1])
    if isinstance(rows, (int, float, bool)) or len(getattr(rows, "shape", ())) == 0:
        rows = tf.broadcast_to(tf.cast(rows, input.dtype), tf.concat([tf.shape(index), tf.shape(moved)[1:]], 0))
    else:
        rows, _ = _along_first(tf.cast(rows, input.dtype), dim)
    result = update(moved, index[:, None], rows)
    return tf.transpose(result, back) if dim % len(input.shape) else result


def index_add(input, dim, index, source, *, alpha=1):
    """torch.index_add / Tensor.index_add(_): input with alpha * source's slices added at `index` along `dim`
    (repeated indices accumulate, as in torch)."""
    source = tf.convert_to_tensor(source)
    return _index_update(tf.tensor_scatter_nd_add, input, dim, index, source * alpha if alpha != 1 else source)


def index_copy(input, dim, index, source):
    """torch.index_copy / Tensor.index_copy(_): input with source's slices written at `index` along `dim`."""
    return _index_update(tf.tensor_scatter_nd_update, input, dim, index, tf.convert_to_tensor(source))


def index_fill(input, dim, index, value):
    """torch.index_fill / Tensor.index_fill(_): input with the slices at `index` along `dim` set to `value`."""
    return _index_update(tf.tensor_scatter_nd_update, input, dim, index, value)
