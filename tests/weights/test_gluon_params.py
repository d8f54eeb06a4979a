"""porter/weights/gluon_params.py against `.params` files real mxnet 1.9.1 writes: save_parameters of every Gluon
fixture, nd.save of dicts in each dtype, numpy-semantics scalars and 0-size arrays, old-style prefixed names,
export's arg:/aux: names, float16 models, the formats of mxnet < 1.0 (which 1.9.1 still loads), and refusals (sparse
storage, unnamed lists, corrupt and truncated files). Values must be bit-identical to what mxnet itself loads.
"""

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from porter.errors import WeightsError
from porter.verify.mxnet_reference import mxnet_python
from porter.weights.gluon_params import read_gluon_params
from porter.weights.readers import read_state_dict
from tests.mxnet.gluon_fixtures import GLUON_FIXTURES, needs_mxnet

WRITER = Path(__file__).resolve().parents[1] / "mxnet" / "write_params_files.py"
READ_CASES = ["dtype_float32", "dtype_float16", "dtype_float64", "dtype_int32", "dtype_int64", "dtype_uint8",
              "dtype_int8", "dtype_bool", "dtype_bfloat16", "mixed_shapes", "special_values", "numpy_semantics",
              "resnet_prefixed", "resnet_export", "lenet_float16", "legacy_v1", "legacy_v0",
              *(f"fixture_{Path(name).stem}" for name in sorted(GLUON_FIXTURES))]
REFUSED_CASES = {"unnamed_list": "without names", "sparse_csr": "stored csr", "sparse_row": "stored row_sparse"}


@pytest.fixture(scope="module")
def mxnet_files(tmp_path_factory):
    """The directory of files mxnet wrote, and cases.json's {case: {"names", "refused"}}."""
    out = tmp_path_factory.mktemp("gluon-params")
    fixtures = {name: {"main": case.main, "init_kwargs": case.init_kwargs,
                       "inputs": [[list(shape), dtype] for dtype, shape, _ in case.inputs]}
                for name, case in GLUON_FIXTURES.items()}
    (out / "fixtures.json").write_text(json.dumps(fixtures))
    result = subprocess.run([str(mxnet_python()), "-I", str(WRITER), str(out), str(out / "fixtures.json")],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, json.loads((out / "cases.json").read_text())


@needs_mxnet
def test_every_case_was_written(mxnet_files):
    _, cases = mxnet_files
    assert set(cases) == set(READ_CASES) | set(REFUSED_CASES)


@needs_mxnet
@pytest.mark.parametrize("case", READ_CASES)
def test_reads_what_mxnet_loads_bit_for_bit(mxnet_files, case):
    out, cases = mxnet_files
    read = read_gluon_params(out / f"{case}.params")
    with np.load(out / f"{case}.expected.npz") as archive:
        expected = {name: archive[name] for name in archive.files}
    names = cases[case]["names"]
    if case == "resnet_export":  # export writes arg:/aux: prefixes; porter drops them
        assert all(name.startswith(("arg:", "aux:")) for name in names)
        expected = {name[4:]: value for name, value in expected.items()}
        names = [name[4:] for name in names]
    assert list(read) == names
    for name in names:
        ours, theirs = read[name], expected[name]
        assert isinstance(ours, np.ndarray) and ours.flags.writeable
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), name
        assert ours.tobytes() == theirs.tobytes(), name


@needs_mxnet
def test_names_as_gluon_writes_them(mxnet_files):
    out, _ = mxnet_files
    assert "features.3.0.body.0.weight" in read_gluon_params(out / "fixture_resnet_v1.params")
    prefixed = list(read_gluon_params(out / "resnet_prefixed.params"))  # resnetv1<N>_: N counts the nets built
    assert re.fullmatch(r"resnetv1\d+_conv0_weight", prefixed[0]) and prefixed[1].endswith("_batchnorm0_gamma")
    rnn = read_gluon_params(out / "fixture_text_rnn_classifier.params")
    assert "encoder._unfused.0.l_cell.i2h_weight" in rnn and "encoder._unfused.1.r_cell.h2h_bias" in rnn
    numpy_semantics = read_gluon_params(out / "numpy_semantics.params")
    assert numpy_semantics["scalar"].shape == () and numpy_semantics["empty"].shape == (0, 3)
    assert read_gluon_params(out / "lenet_float16.params")["features.0.weight"].dtype == np.float16


@needs_mxnet
@pytest.mark.parametrize("case", sorted(REFUSED_CASES))
def test_refusals_are_one_line(mxnet_files, case):
    out, _ = mxnet_files
    with pytest.raises(WeightsError) as raised:
        read_gluon_params(out / f"{case}.params")
    message = str(raised.value)
    assert "\n" not in message and REFUSED_CASES[case] in message and f"{case}.params" in message


@needs_mxnet
def test_weights_reader_dispatches_on_the_suffix_and_the_magic(mxnet_files, tmp_path):
    out, _ = mxnet_files
    expected = read_gluon_params(out / "fixture_lenet.params")
    renamed = tmp_path / "lenet.bin"
    renamed.write_bytes((out / "fixture_lenet.params").read_bytes())
    for path in (out / "fixture_lenet.params", renamed):
        read = read_state_dict(path)
        assert list(read) == list(expected)
        assert all(np.array_equal(read[name], expected[name]) for name in expected)


@needs_mxnet
def test_every_truncation_and_every_byte_set_to_ff_is_a_weights_error_or_a_clean_read(mxnet_files, tmp_path):
    """No prefix of a real file, and no byte of it set to 0xFF, crashes the reader or makes it allocate wildly."""
    out, _ = mxnet_files
    data = (out / "dtype_float64.params").read_bytes()  # two named arrays: every part of the format, 200 bytes
    damaged = tmp_path / "damaged.params"
    last_name_starts = data.rindex(b"y.bias")
    for length in range(last_name_starts):
        damaged.write_bytes(data[:length])
        with pytest.raises(WeightsError, match="truncated|corrupt|not a Gluon|no arrays"):
            read_gluon_params(damaged)
    for position in range(len(data)):
        corrupted = bytearray(data)
        corrupted[position] = 0xFF
        damaged.write_bytes(bytes(corrupted))
        try:
            read_gluon_params(damaged)
        except WeightsError as error:
            assert "\n" not in str(error)


def test_not_a_params_file_says_so(tmp_path):
    path = tmp_path / "notes.params"
    path.write_bytes(b"these are not weights at all")
    with pytest.raises(WeightsError, match=r"not a Gluon \.params file .*0x112"):
        read_state_dict(path)


def test_a_count_larger_than_the_file_is_corrupt_not_an_allocation(tmp_path):
    path = tmp_path / "huge.params"
    path.write_bytes((0x112).to_bytes(8, "little") + bytes(8) + (2**60).to_bytes(8, "little"))
    with pytest.raises(WeightsError, match="corrupt .params file: the number of arrays is 1152921504606846976"):
        read_gluon_params(path)
