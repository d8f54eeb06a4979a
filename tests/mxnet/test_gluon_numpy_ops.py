"""Property tests of mxnet's NumPy interface as porter translates it (porter/rules/gluon_numpy*.py) against real
mxnet 1.9.1 under `npx.set_np()`, on hypothesis-drawn shapes and values.

One small Gluon 2 file is written (a Block per expression, `forward(self, a, b, ...)` returning it, `from mxnet
import np, npx`), converted once, and each port Block is run on drawn arrays; the mxnet worker evaluates the very
same expression text in NumPy mode on the same arrays. Shapes, dtypes (argmax's int64, astype, a full reduction's
rank 0) and values must agree: np.dot on N-D operands, np.repeat without an axis, NumPy reshape (no special codes),
concatenate/stack/split, npx.batch_dot with transposes, sequence_mask, one_hot, creation dtypes."""

import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet

# name -> (expression over the inputs, input names)
EXPRESSIONS = {
    "dot": ("np.dot(a, b)", "ab"),
    "matmul_alias": ("np.matmul(a, b.swapaxes(-1, -2) if b.ndim > 1 else b)", "ab"),
    "batch_dot": ("npx.batch_dot(a, b, transpose_b=True)", "ab"),
    "repeat_flat": ("np.repeat(a, 2)", "a"),
    "repeat_axis": ("a.repeat(3, axis=0)", "a"),
    "reshape": ("a.reshape(-1, a.shape[-1]).reshape(a.shape[0], -1)", "a"),
    "reductions": ("(a.sum(), a.mean(axis=1, keepdims=True), np.max(a, axis=-1), a.min(axis=0))", "a"),
    "argmax": ("(a.argmax(axis=1), np.argmin(a, axis=0))", "a"),
    "astype": ("(a * 3).astype('int32')", "a"),
    "join": ("(np.concatenate([a, b], axis=1), np.stack([a, b], 1), np.concatenate((a, b)))", "ab"),
    "dims": ("np.squeeze(np.expand_dims(a, axis=1), axis=1) + np.expand_dims(a, 0)[0]", "a"),
    "power": ("(np.power(2, a), np.power(a, 2), a ** 3)", "a"),
    "sequence_mask": ("npx.sequence_mask(a, b, True, value=-1e6, axis=1)", "ab"),
    "softmax": ("(npx.softmax(a), npx.log_softmax(a, axis=0))", "a"),
    "one_hot": ("npx.one_hot(a, 5)", "a"),
    "creation": (("(np.arange(a.shape[0]) + np.zeros((a.shape[0],)), np.arange(0, a.shape[1], 2) / a.shape[1], "
                  "np.ones((2, 3)), np.full((2,), 1.5), np.zeros_like(a), np.ones_like(a))"), "a"),
    "axes": ("(a.swapaxes(0, 1), np.transpose(a), a.T, np.transpose(a, (1, 0, 2)), np.swapaxes(a, 1, 2))", "a"),
    "elementwise": (("(np.tanh(a) + np.sin(a) * np.cos(a), np.exp(-np.abs(a)), npx.relu(a), npx.sigmoid(a), "
                     "np.sqrt(np.abs(a)), np.log(np.abs(a) + 1))"), "a"),
    "select": ("(np.where(a > 0, a, b), np.clip(a, -0.5, 0.5), np.maximum(a, 0), np.minimum(a, b))", "ab"),
    "flatten": ("(a.flatten(), npx.batch_flatten(a))", "a"),
    "split": ("np.split(a, 2, axis=0)", "a"),
    "rearrange": (("(np.tile(a, 2), np.tile(a, (2, 1, 1, 1)), np.flip(a, 1), np.roll(a, 2), np.roll(a, -1, axis=2), "
                   "np.broadcast_to(a[:1], a.shape), a.broadcast_to((2,) + a.shape), np.tril(a[0]), "
                   "np.outer(a[0, 0], a[0, -1]), np.take(a, np.array([0, 2, 0]), axis=2), a.take(np.array([1]), 1))"),
                  "a"),
    "order": (("(np.cumsum(a), np.cumsum(a, axis=1), a.cumsum(axis=2), np.sort(a, axis=1), a.argsort(axis=-1), "
               "np.argsort(a, axis=0))"), "a"),
    "spread": ("(a.std(axis=0), np.var(a), a.var(axis=(1, 2), keepdims=True), np.std(a, axis=-1))", "a"),
    "npx_reshape": (("(npx.reshape(a, (-2, -1)), npx.reshape(a, (-5, -2)), npx.reshape(a, (-6, 1, -1, -4)), "
                     "npx.reshape(np.expand_dims(a, 1), (-2, -3, -4)), npx.reshape(a, (-1,)), "
                     "npx.reshape(a, (-1, -2), reverse=True), npx.reshape(a, (-5, -2), reverse=True))"), "a"),
    "norms": (("(npx.layer_norm(a, np.arange(a.shape[-1]) + 1, np.ones((a.shape[-1],)), axis=-1, eps=1e-5), "
               "np.linalg.norm(a), np.linalg.norm(a, axis=-1, keepdims=True), np.linalg.norm(a, ord=1, axis=0), "
               "a * a.size)"), "a"),
    "pick": ("(npx.pick(a, b, axis=-1), npx.pick(a, b, axis=1, keepdims=True), npx.pick(a, b, mode='wrap'))", "ab"),
    "topk": (("(npx.topk(a, k=2, ret_typ='value'), npx.topk(a, axis=0, k=1), npx.topk(a, k=2, ret_typ='mask'), "
              "npx.topk(a, k=2, dtype='int32', is_ascend=True))"), "a"),
    "topk_both": ("npx.topk(a, k=2, ret_typ='both', axis=1)", "a"),
    "meshgrid": ("np.meshgrid(np.arange(a.shape[0]), np.arange(a.shape[1]) * 2)", "a"),
    "split_indices": ("np.split(a, [1, 2], axis=1)", "a"),
}

SOURCE = '''from mxnet import np, npx
from mxnet.gluon import nn

npx.set_np()
''' + "".join(f'''

class Op_{name}(nn.Block):
    def forward(self, {", ".join(names)}):
        return {expression}
''' for name, (expression, names) in EXPRESSIONS.items())


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gluon_numpy_ops")
    source = folder / "numpy_ops.py"
    source.write_text(SOURCE)
    out = folder / "out"
    conversion = convert(ConvertOptions(source, out))
    write_tree(out, conversion.files)
    stubs = [u for c in conversion.manifest["sources"][0]["classes"] for u in c["unsupported"]]
    assert not stubs, stubs
    spec = importlib.util.spec_from_file_location("gluon_numpy_ops_port", out / "numpy_ops_keras.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gluon_numpy_ops_port"] = module
    spec.loader.exec_module(module)
    return module


def _check(mxnet, ported, name, arrays):
    expression, names = EXPRESSIONS[name]
    setup = ["from mxnet import np, npx", "npx.set_np()"] + [f"{n} = {n}.as_np_ndarray()" for n in names]
    expected = mxnet.evaluate(expression, dict(zip(names, arrays)), setup=setup)
    result = getattr(ported, f"Op_{name}")()(*arrays)
    expected = expected if isinstance(expected, list) else [expected]
    actual = [np.asarray(r) for r in (result if isinstance(result, (list, tuple)) else [result])]
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual, strict=True):
        assert want.shape == got.shape, (name, want.shape, got.shape)
        assert want.dtype == got.dtype, (name, want.dtype, got.dtype)
        assert_equivalent(want.astype(np.float64), got.astype(np.float64), tolerance=1e-5, what=name)


def _normal(generator, shape):
    return (generator.standard_normal(shape) * 2).astype(np.float32)


sizes = st.integers(1, 4)


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(sizes, min_size=0, max_size=2), n=sizes, b_rank=st.integers(1, 3), m=sizes, p=sizes,
       seed=st.integers(0, 2**16))
def test_dot_and_matmul_match_mxnet(mxnet, ported, lead, n, b_rank, m, p, seed):
    """np.dot contracts a's last axis with b's second-to-last (N-D b) or only axis (1-D b)."""
    generator = np.random.default_rng(seed)
    a = _normal(generator, (*lead, n))
    b = _normal(generator, [(n,), (n, m), (p, n, m)][b_rank - 1])
    _check(mxnet, ported, "dot", [a, b])
    if b_rank == 2 and lead:
        _check(mxnet, ported, "matmul_alias", [a, _normal(generator, (m, n))])


@settings(max_examples=10, deadline=None)
@given(batch=sizes, rows=sizes, cols=sizes, depth=sizes, seed=st.integers(0, 2**16))
def test_batch_dot_and_sequence_mask_match_mxnet(mxnet, ported, batch, rows, cols, depth, seed):
    generator = np.random.default_rng(seed)
    _check(mxnet, ported, "batch_dot", [_normal(generator, (batch, rows, depth)),
                                        _normal(generator, (batch, cols, depth))])
    lengths = generator.integers(0, cols + 2, size=batch).astype(np.float32)  # 0 and past the end included
    _check(mxnet, ported, "sequence_mask", [_normal(generator, (batch, cols, depth)), lengths])


# the expressions over one rank-3 array, by the smallest size drawn for its axes (tile, flip, roll and take read
# indices up to 2 along an axis)
SINGLE_ARRAY = {name: 1 for name in ["repeat_flat", "repeat_axis", "reshape", "reductions", "argmax", "astype", "dims",
                                     "power", "softmax", "creation", "axes", "elementwise", "flatten", "order",
                                     "spread", "meshgrid", "npx_reshape", "norms"]} | {"rearrange": 3}


@pytest.mark.parametrize("name", SINGLE_ARRAY)
@settings(max_examples=5, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_single_array_ops_match_mxnet(mxnet, ported, data, seed, name):
    shape = data.draw(st.lists(st.integers(SINGLE_ARRAY[name], 4), min_size=3, max_size=3), label="shape")
    generator = np.random.default_rng(seed)
    a = _normal(generator, shape)
    if name == "power":
        a = np.round(a).astype(np.float32)  # small integral exponents: exact powers on both sides
    _check(mxnet, ported, name, [a])


@settings(max_examples=10, deadline=None)
@given(rows=sizes, cols=sizes, seed=st.integers(0, 2**16), name=st.sampled_from(["join", "select"]))
def test_two_array_ops_match_mxnet(mxnet, ported, rows, cols, seed, name):
    generator = np.random.default_rng(seed)
    _check(mxnet, ported, name, [_normal(generator, (rows, cols)), _normal(generator, (rows, cols))])


@settings(max_examples=10, deadline=None)
@given(half=sizes, cols=st.integers(3, 5), depth=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_split_and_one_hot_match_mxnet(mxnet, ported, half, cols, depth, seed):
    generator = np.random.default_rng(seed)
    a = _normal(generator, (2 * half, cols))
    _check(mxnet, ported, "split", [a])
    _check(mxnet, ported, "split_indices", [a])
    indices = generator.integers(-1, 6, size=(half, cols)).astype(np.float32)  # outside [0, 5) included
    _check(mxnet, ported, "one_hot", [indices])


@settings(max_examples=10, deadline=None)
@given(rows=sizes, cols=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_pick_and_topk_match_mxnet(mxnet, ported, rows, cols, seed):
    """npx.pick with indices outside the axis (clipped or wrapped), npx.topk's values, float32 indices, masks."""
    generator = np.random.default_rng(seed)
    a = _normal(generator, (rows, cols))
    index = generator.integers(-2, cols + 2, size=rows).astype(np.float32)
    _check(mxnet, ported, "pick", [a, index])
    _check(mxnet, ported, "topk", [a])
    _check(mxnet, ported, "topk_both", [_normal(generator, (rows, cols, 2))])
