"""Numeric tests of porter.runtime.linear against real torch.nn.Linear / Bilinear, F.linear / F.bilinear."""

import numpy as np
import tensorflow as tf
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.linear import Bilinear, Identity, Linear, bilinear, linear
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module


@given(batch=st.integers(1, 4), extra=st.lists(st.integers(1, 5), max_size=2), cin=st.integers(1, 17),
       cout=st.integers(1, 13), bias=st.booleans(), seed=st.integers(0, 2**16))
def test_linear_matches_torch(batch, extra, cin, cout, bias, seed):
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch.nn.Linear(cin, cout, bias=bias), seed)
    ported = copy_torch_weights(reference, Linear(cin, cout, bias=bias))
    x = np.random.default_rng(seed).standard_normal((batch, *extra, cin)).astype(np.float32)
    expected = reference(torch.from_numpy(x)).detach().numpy()
    assert_equivalent(expected, np.asarray(ported(x)))
    assert_equivalent(expected, np.asarray(linear(x, ported.weight, ported.bias)))


def test_linear_bias_is_a_bias_add_on_the_matmul():
    """The bias is added to the 2-D MatMul output (a BiasAdd grappler fuses into it), for any leading axes."""
    layer = Linear(4, 3)
    for shape in ([2, 4], [2, 5, 4]):
        graph = tf.function(layer).get_concrete_function(tf.TensorSpec(shape, tf.float32)).graph
        kinds = [op.type for op in graph.get_operations()]
        bias_add = next(op for op in graph.get_operations() if op.type == "BiasAdd")
        assert bias_add.inputs[0].op.type == "MatMul" and "AddV2" not in kinds, kinds


def test_identity_ignores_arguments():
    x = np.ones((2, 3), np.float32)
    assert np.array_equal(np.asarray(Identity(54, unused=1)(x)), x)


@given(batch=st.integers(1, 4), extra=st.lists(st.integers(1, 4), max_size=2), in1=st.integers(1, 9),
       in2=st.integers(1, 9), out=st.integers(1, 7), bias=st.booleans(), exponent=st.integers(-3, 3),
       seed=st.integers(0, 2**16))
def test_bilinear_matches_torch(batch, extra, in1, in2, out, bias, exponent, seed):
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch.nn.Bilinear(in1, in2, out, bias=bias), seed)
    ported = copy_torch_weights(reference, Bilinear(in1, in2, out, bias=bias))
    rng = np.random.default_rng(seed)
    x1 = (rng.standard_normal((batch, *extra, in1)) * 10.0 ** exponent).astype(np.float32)
    x2 = rng.standard_normal((batch, *extra, in2)).astype(np.float32)
    expected = reference(torch.from_numpy(x1), torch.from_numpy(x2)).detach().numpy()
    assert_equivalent(expected, np.asarray(ported(x1, x2)), 1e-5)
    assert_equivalent(expected, np.asarray(bilinear(x1, x2, ported.weight, ported.bias)), 1e-5)


def test_bilinear_state_init_and_jit():
    layer = Bilinear(3, 4, 5)
    assert [entry.key for entry in layer.torch_state("b.")] == ["b.weight", "b.bias"]
    assert tuple(layer.weight.shape) == (5, 3, 4)
    assert np.abs(layer.weight.numpy()).max() <= 1 / np.sqrt(3)
    reference = torch.nn.Bilinear(3, 4, 5)
    copy_torch_weights(reference, layer)
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal((2, 6, 3)).astype(np.float32), rng.standard_normal((2, 6, 4)).astype(np.float32)
    compiled = tf.function(layer, jit_compile=True, input_signature=[tf.TensorSpec([None, 6, 3], tf.float32),
                                                                       tf.TensorSpec([None, 6, 4], tf.float32)])
    expected = reference(torch.from_numpy(x1), torch.from_numpy(x2)).detach().numpy()
    assert_equivalent(expected, np.asarray(compiled(tf.constant(x1), tf.constant(x2))), 1e-5)
    graph = tf.function(layer).get_concrete_function(tf.TensorSpec([None, 6, 3]), tf.TensorSpec([None, 6, 4])).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]
    assert graph.outputs[0].shape.as_list() == [None, 6, 5]
