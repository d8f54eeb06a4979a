"""Writes real mxnet 1.9.1 `.params` files for tests/weights/test_gluon_params.py, with what mxnet reads back.

Run by the mxnet venv's Python (`write_params_files.py OUT_DIR FIXTURES.json`, the JSON mapping each Gluon fixture
file to its main class or factory, constructor arguments and input shapes and dtypes); imports only mxnet, numpy and
the standard library. Every fixture's `save_parameters` is a case (`fixture_<stem>`), and so is each case below. For
each case it writes OUT_DIR/<case>.params and, when mxnet can load it, OUT_DIR/<case>.expected.npz
holding mxnet's own `load` of the file (bfloat16 widened to float32), then OUT_DIR/cases.json:
{case: {"names": [...] or null, "refused": reason word or null}}.

The legacy cases (formats of mxnet < 1.0, which 1.9.1 still reads but no longer writes) are made by rewriting the
array headers of a file 1.9.1 wrote; mxnet's load of the result is the expectation.
"""

import importlib.util
import json
import struct
import sys
from pathlib import Path

import mxnet as mx
import numpy as np

BFLOAT16 = np.dtype([("bfloat16", np.uint16)])
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gluon"


def dtype_cases():
    values = np.array([[0.0, -1.5, 2.25], [3e4, -7.0, 1.0 / 3.0]])
    cases = {}
    for dtype in ("float32", "float16", "float64", "int32", "int64", "uint8", "int8", "bool"):
        array = values.astype(dtype) if dtype != "uint8" else np.abs(values).astype(dtype)
        cases[f"dtype_{dtype}"] = {"x": mx.nd.array(array, dtype=dtype), "y.bias": mx.nd.array(array[0], dtype=dtype)}
    rng = np.random.RandomState(0)
    cases["dtype_bfloat16"] = {"w": mx.nd.amp_cast(mx.nd.array(rng.standard_normal((3, 5))), dtype=BFLOAT16)}
    cases["mixed_shapes"] = {"scalar_like": mx.nd.array([5.0]), "matrix": mx.nd.array(rng.standard_normal((4, 3))),
                             "conv.weight": mx.nd.array(rng.standard_normal((8, 3, 3, 3))),
                             "big": mx.nd.array(rng.standard_normal((257, 129)), dtype="float16"),
                             "features.3.body.0.weight": mx.nd.array(rng.standard_normal((2, 2, 1, 1)))}
    cases["special_values"] = {"v": mx.nd.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38], dtype="float32")}
    return cases


def save_nd(out_dir, name, arrays):
    mx.nd.save(str(out_dir / f"{name}.params"), arrays)


def expect(out_dir, name, numpy_semantics=False):
    path = str(out_dir / f"{name}.params")
    if numpy_semantics:
        with mx.util.np_shape(True), mx.util.np_array(True):
            loaded = mx.npx.load(path)
    else:
        loaded = mx.nd.load(path)
    if isinstance(loaded, list):
        loaded = {str(i): value for i, value in enumerate(loaded)}
    arrays = {}
    for key, value in loaded.items():
        if value.dtype == BFLOAT16:
            value = value.astype("float32")
        arrays[key] = value.asnumpy()
    np.savez(out_dir / f"{name}.expected.npz", **arrays)
    return list(loaded)


def import_fixture(filename):
    spec = importlib.util.spec_from_file_location(f"gluon_fixture_{Path(filename).stem}", FIXTURES / filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def built(filename, factory, inputs, **kwargs):
    """The fixture's model, initialized and run once on ones of the (shape, dtype) `inputs`."""
    mx.random.seed(0)
    net = getattr(import_fixture(filename), factory)(**kwargs)
    net.initialize()
    net(*[mx.nd.ones(shape, dtype=dtype) for shape, dtype in inputs])
    return net


def legacy_copy(source, target, version):
    """The V2 file `source` rewritten with V1 headers (version 1) or with the magic-less headers before V1 (0)."""
    data = source.read_bytes()
    out = bytearray(data[:24])  # list magic, reserved, array count
    offset, count = 24, struct.unpack_from("<Q", data, 16)[0]
    for _ in range(count):
        magic, storage, ndim = struct.unpack_from("<IiI", data, offset)
        assert magic == 0xF993FAC9 and storage == 0
        dims = struct.unpack_from(f"<{ndim}q", data, offset + 12)
        offset += 12 + 8 * ndim
        dtype_flag = struct.unpack_from("<i", data, offset + 8)[0]
        size = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8}[dtype_flag] * int(np.prod(dims))
        if version == 1:
            out += struct.pack(f"<II{ndim}q", 0xF993FAC8, ndim, *dims)
        else:
            out += struct.pack(f"<I{ndim}I", ndim, *dims)
        out += data[offset:offset + 12 + size]  # context, dtype flag, values
        offset += 12 + size
    out += data[offset:]  # names
    target.write_bytes(bytes(out))


def main(out_dir, fixtures_json):
    out_dir = Path(out_dir)
    cases = {}
    for filename, case in json.loads(Path(fixtures_json).read_text()).items():
        name = f"fixture_{Path(filename).stem}"
        built(filename, case["main"], case["inputs"], **case["init_kwargs"]).save_parameters(
            str(out_dir / f"{name}.params"))
        cases[name] = {"names": expect(out_dir, name), "refused": None}
    for name, arrays in dtype_cases().items():
        save_nd(out_dir, name, arrays)
        cases[name] = {"names": expect(out_dir, name), "refused": None}

    with mx.util.np_shape(True), mx.util.np_array(True):
        mx.npx.save(str(out_dir / "numpy_semantics.params"),
                    {"scalar": mx.np.array(3.5), "empty": mx.np.zeros((0, 3)), "int_scalar": mx.np.array(7, dtype="int64"),
                     "vector": mx.np.arange(6).reshape(2, 3)})
    cases["numpy_semantics"] = {"names": expect(out_dir, "numpy_semantics", numpy_semantics=True), "refused": None}

    net = built("resnet_v1.py", "resnet8_v1", [((1, 3, 32, 32), "float32")])
    net.collect_params().save(str(out_dir / "resnet_prefixed.params"))  # old-style names: resnetv10_conv0_weight
    net.hybridize()
    net(mx.nd.ones((1, 3, 32, 32)))
    net.export(str(out_dir / "resnet_export"))  # names with arg:/aux:
    (out_dir / "resnet_export-0000.params").rename(out_dir / "resnet_export.params")
    for name in ("resnet_prefixed", "resnet_export"):
        cases[name] = {"names": expect(out_dir, name), "refused": None}

    net = built("lenet.py", "LeNet", [((1, 1, 28, 28), "float32")])
    net.cast("float16")
    net.save_parameters(str(out_dir / "lenet_float16.params"))
    cases["lenet_float16"] = {"names": expect(out_dir, "lenet_float16"), "refused": None}

    for version in (1, 0):
        name = f"legacy_v{version}"
        legacy_copy(out_dir / "mixed_shapes.params", out_dir / f"{name}.params", version)
        cases[name] = {"names": expect(out_dir, name), "refused": None}

    mx.nd.save(str(out_dir / "unnamed_list.params"), [mx.nd.ones((2,)), mx.nd.zeros((1, 1))])
    cases["unnamed_list"] = {"names": None, "refused": "without names"}
    mx.nd.save(str(out_dir / "sparse_csr.params"), {"c": mx.nd.ones((2, 2)).tostype("csr")})
    cases["sparse_csr"] = {"names": None, "refused": "csr"}
    mx.nd.save(str(out_dir / "sparse_row.params"), {"r": mx.nd.ones((3, 2)).tostype("row_sparse")})
    cases["sparse_row"] = {"names": None, "refused": "row_sparse"}
    (out_dir / "cases.json").write_text(json.dumps(cases, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
