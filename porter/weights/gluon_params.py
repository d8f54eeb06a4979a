"""Read MXNet Gluon `.params` files into `{name: numpy array}` in pure Python and numpy (mxnet is never imported).

The format is the NDArray list that `Block.save_parameters`, `ParameterDict.save`, `HybridBlock.export` and
`mx.nd.save`/`mx.npx.save` of a dict write (mxnet's src/ndarray/ndarray.cc, `NDArray::Save`), little-endian:

    uint64 0x112 (list magic), uint64 reserved
    uint64 count, then per array:
        uint32 magic: 0xF993FAC9 (V2: legacy shapes) or 0xF993FACA (V3: numpy shapes, written under npx.set_np())
        int32 storage type (0 dense; 1 row_sparse and 2 csr are refused)
        shape: int32 ndim, int64 dims[ndim]
        context: int32 device type, int32 device id
        int32 dtype flag, then the values in C order
    uint64 count (0 or the number of arrays), then per name: uint64 length, UTF-8 bytes

Files from mxnet < 1.0 start each array without a storage type: 0xF993FAC8 (V1: uint32 ndim, int64 dims), or no
magic at all (uint32 ndim, then uint32 dims). Those read too. In V1/V2 files ndim 0 marks an array that was never
allocated; in V3 ndim 0 is a scalar and -1 marks one. `HybridBlock.export` prefixes every name with `arg:` or `aux:`;
when every name carries one, they are dropped so the names match `save_parameters`.
"""

import re
import struct
from pathlib import Path

import numpy as np

from porter.errors import WeightsError

LIST_MAGIC = 0x112
ARRAY_V1_MAGIC = 0xF993FAC8
ARRAY_V2_MAGIC = 0xF993FAC9
ARRAY_V3_MAGIC = 0xF993FACA
DENSE_STORAGE = 0
SPARSE_STORAGE_NAMES = {1: "row_sparse", 2: "csr"}
BFLOAT16_FLAG = 12
# mshadow type flags mxnet 1.9.1 can save, as little-endian numpy dtypes; bfloat16 (flag 12) is read as uint16
# bits and widened to float32, which holds every bfloat16 value exactly.
DTYPES_BY_FLAG = {0: np.dtype("<f4"), 1: np.dtype("<f8"), 2: np.dtype("<f2"), 3: np.dtype("u1"), 4: np.dtype("<i4"),
                  5: np.dtype("i1"), 6: np.dtype("<i8"), 7: np.dtype("?"), BFLOAT16_FLAG: np.dtype("<u2")}
EXPORT_PREFIXES = ("arg:", "aux:")
MAX_NDIM = 32  # mxnet itself allows far fewer; a larger count means the bytes are not a shape
FORMAT_HINT = "porter reads the .params files Gluon's save_parameters and mx.nd.save of a dict write"


class ParamsFormatError(ValueError):
    """The bytes are not a readable NDArray list; the message says where and why, in one line, the hint what to do."""

    def __init__(self, message, hint=FORMAT_HINT):
        super().__init__(message)
        self.hint = hint


def read_gluon_params(path):
    """`{name: numpy array}` from a Gluon `.params` file, names exactly as mxnet wrote them (export's `arg:`/`aux:`
    dropped; a fused RNN layer's parameters from mxnet < 1.6, `encoder.l0_i2h_weight`, named as 1.9.1 names them:
    `modern_rnn_names`). Raises WeightsError naming the file and the problem."""
    path = Path(path)
    display = str(path)
    try:
        with open(path, "rb") as handle:
            names, arrays = read_ndarray_list(handle, path.stat().st_size)
    except ParamsFormatError as error:
        raise WeightsError(str(error), display, hint=error.hint) from None
    except OSError as error:
        raise WeightsError(f"cannot read the weights file ({error.strerror})", display) from None
    if not arrays:
        raise WeightsError("the .params file holds no arrays", display)
    if not names:
        raise WeightsError(f"the .params file holds {len(arrays)} arrays without names (mx.nd.save of a list)",
                           display, hint="save a dict of named arrays, or use net.save_parameters(PATH)")
    if len(set(names)) != len(names):
        duplicate = next(name for name in names if names.count(name) > 1)
        raise WeightsError(f"the .params file names {duplicate!r} twice", display)
    return modern_rnn_names(drop_export_prefixes(dict(zip(names, arrays))))


_LEGACY_RNN_NAME = re.compile(r"(?:^|(?<=\.))([lr])(\d+)_(i2h|h2h|h2r)_(weight|bias)$")


def modern_rnn_names(tensors):
    """The fused `rnn.LSTM/GRU/RNN` parameters older mxnet saved as `<layer>.l0_i2h_weight`/`r0_...` keyed as mxnet
    1.9.1's save_parameters keys them: `<layer>._unfused.0.i2h_weight` for a one-way layer and
    `<layer>._unfused.0.l_cell.i2h_weight`/`r_cell` for a bidirectional one (a layer with any `r<k>_` key)."""
    matches = {name: _LEGACY_RNN_NAME.search(name) for name in tensors}
    if not any(matches.values()):
        return tensors
    bidirectional = {name[:match.start()] for name, match in matches.items() if match and match.group(1) == "r"}
    renamed = {}
    for name, value in tensors.items():
        match = matches[name]
        if match is None:
            renamed[name] = value
            continue
        prefix = name[:match.start()]
        side, layer, gate, kind = match.groups()
        cell = f"{side}_cell." if prefix in bidirectional else ""
        renamed[f"{prefix}_unfused.{layer}.{cell}{gate}_{kind}"] = value
    return renamed if len(renamed) == len(tensors) else tensors


def drop_export_prefixes(tensors):
    """Names without `arg:`/`aux:` when every name carries one (HybridBlock.export) and no two names then clash."""
    if not all(name.startswith(EXPORT_PREFIXES) for name in tensors):
        return tensors
    stripped = {name[len("arg:"):]: value for name, value in tensors.items()}
    return stripped if len(stripped) == len(tensors) else tensors


def read_ndarray_list(handle, size):
    """(names, arrays) from a binary file object holding `size` bytes of NDArray list; names is [] when the list
    was saved without them. Raises ParamsFormatError."""
    stream = _Stream(handle, size)
    magic = stream.unsigned(8, "the list header")
    if magic != LIST_MAGIC:
        raise ParamsFormatError(f"not a Gluon .params file (it starts with 0x{magic:x}, not mxnet's NDArray-list "
                                f"magic 0x{LIST_MAGIC:x})")
    stream.unsigned(8, "the list header")  # reserved
    count = stream.count(8, "the number of arrays", smallest_item=4)
    arrays = [_read_array(stream, index) for index in range(count)]
    name_count = stream.count(8, "the number of names", smallest_item=8)
    if name_count not in (0, count):
        raise ParamsFormatError(f"corrupt .params file: {count} arrays but {name_count} names")
    names = [_read_name(stream, index) for index in range(name_count)]
    return names, arrays


def _read_array(stream, index):
    where = f"array {index}"
    magic = stream.unsigned(4, where)
    if magic in (ARRAY_V2_MAGIC, ARRAY_V3_MAGIC):
        _check_dense(stream.signed(4, where), where)
    dims = _read_shape(stream, magic, where)
    stream.take(8, where)  # context (device type and id): arrays always load on the CPU
    flag = stream.signed(4, where)
    dtype = DTYPES_BY_FLAG.get(flag)
    if dtype is None:
        raise ParamsFormatError(f"{where} has dtype flag {flag}, which porter does not read (it reads float32, "
                                "float64, float16, bfloat16, uint8, int8, int32, int64 and bool)")
    values = stream.array(dtype, dims, where)
    if flag == BFLOAT16_FLAG:
        values = (values.astype(np.uint32) << 16).view(np.float32)
    return values


def _check_dense(storage, where):
    if storage == DENSE_STORAGE:
        return
    kind = SPARSE_STORAGE_NAMES.get(storage)
    if kind is None:
        raise ParamsFormatError(f"corrupt .params file: {where} has unknown storage type {storage}")
    raise ParamsFormatError(f"{where} is stored {kind} (sparse); porter reads dense arrays only",
                            hint="save it dense: array.tostype('default')")


def _read_shape(stream, magic, where):
    """The array's dims, per format version; refuses arrays saved without a shape (never allocated)."""
    if magic in (ARRAY_V2_MAGIC, ARRAY_V3_MAGIC):
        ndim = stream.signed(4, where)
        smallest_ndim = -1 if magic == ARRAY_V3_MAGIC else 0  # V3 writes -1 for an unknown shape
        if not smallest_ndim <= ndim <= MAX_NDIM:
            raise ParamsFormatError(f"corrupt .params file: {where} claims {ndim} dimensions")
        dims = stream.int64s(max(ndim, 0), where)
        # V3 (numpy semantics): ndim 0 is a scalar, -1 dims are unknown; V2: ndim 0 is the unallocated array
        allocated = (ndim >= 0 and min(dims, default=0) >= 0) if magic == ARRAY_V3_MAGIC else ndim > 0
    else:
        # V1: uint32 ndim, int64 dims; before V1 there was no array magic: these 4 bytes are ndim, dims are uint32
        ndim = stream.unsigned(4, where) if magic == ARRAY_V1_MAGIC else magic
        if ndim > MAX_NDIM:
            raise ParamsFormatError(f"corrupt .params file: {where} claims {ndim} dimensions")
        dims = stream.int64s(ndim, where) if magic == ARRAY_V1_MAGIC else stream.uint32s(ndim, where)
        allocated = ndim > 0
    if not allocated:
        raise ParamsFormatError(f"{where} was saved without a shape (never initialized)",
                                hint="initialize the parameters (and run one forward pass) before saving them")
    if min(dims, default=0) < 0:
        raise ParamsFormatError(f"corrupt .params file: {where} has negative dimensions {tuple(dims)}")
    return tuple(dims)


def _read_name(stream, index):
    length = stream.count(8, f"name {index}", smallest_item=1)
    raw = stream.take(length, f"name {index}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ParamsFormatError(f"corrupt .params file: name {index} is not UTF-8") from None


class _Stream:
    """Little-endian reads from a file object with bounds checks, so a corrupt count never allocates."""

    def __init__(self, handle, size):
        self.handle, self.size, self.offset = handle, size, 0

    def take(self, length, what):
        if length > self.size - self.offset:
            raise ParamsFormatError(f"truncated .params file: {what} needs {length} bytes at offset {self.offset}, "
                                    f"the file ends at {self.size}")
        data = self.handle.read(length)
        if len(data) != length:
            raise ParamsFormatError(f"truncated .params file: {what} at offset {self.offset}")
        self.offset += length
        return data

    def unsigned(self, width, what):
        return int.from_bytes(self.take(width, what), "little")

    def signed(self, width, what):
        return int.from_bytes(self.take(width, what), "little", signed=True)

    def count(self, width, what, smallest_item):
        """An element count that the rest of the file can hold, each element taking at least smallest_item bytes."""
        value = self.unsigned(width, what)
        if value * smallest_item > self.size - self.offset:
            raise ParamsFormatError(f"corrupt .params file: {what} is {value}, more than the file can hold")
        return value

    def int64s(self, count, what):
        return struct.unpack(f"<{count}q", self.take(8 * count, what))

    def uint32s(self, count, what):
        return struct.unpack(f"<{count}I", self.take(4 * count, what))

    def array(self, dtype, shape, what):
        """A new writable array of `shape` filled from the file."""
        nbytes = dtype.itemsize * int(np.prod(shape, dtype=object))
        if nbytes > self.size - self.offset:
            raise ParamsFormatError(f"truncated .params file: {what} of shape {shape} needs {nbytes} bytes at "
                                    f"offset {self.offset}, the file ends at {self.size}")
        values = np.empty(shape, dtype=dtype)
        if nbytes and self.handle.readinto(memoryview(values.reshape(-1)).cast("B")) != nbytes:
            raise ParamsFormatError(f"truncated .params file: {what} at offset {self.offset}")
        self.offset += nbytes
        return values.astype(dtype.newbyteorder("="), copy=False)
