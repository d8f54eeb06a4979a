"""Runtime view_chain (porter/runtime/regroup.py): a chain of torch views and permutes of a tensor stored in another
axis order equals torch's chain for drawn shapes, chains, storage orders and result orders, eagerly and traced with
the batch unknown (the chain then runs in torch's order); megvii's ShuffleNetV2 shuffle on a channels-last image,
held as porter holds it, costs a reshape and a gather, no Transpose."""

import itertools

import numpy as np
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.regroup import view_chain


def _primes(n):
    found, p = [], 2
    while n > 1:
        while n % p == 0:
            found.append(p)
            n //= p
        p += 1
    return found


@st.composite
def chains(draw):
    """(input shape, storage order, steps, result order)."""
    shape = draw(st.lists(st.integers(1, 6), min_size=2, max_size=4))
    steps, rank, total = [], len(shape), int(np.prod(shape))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            primes = draw(st.permutations(_primes(total)))
            count = draw(st.integers(1, max(1, min(5, len(primes)))))
            cuts = sorted(draw(st.lists(st.integers(0, len(primes)), min_size=count - 1, max_size=count - 1)))
            bounds = [0, *cuts, len(primes)]
            sizes = [int(np.prod(primes[a:b])) for a, b in itertools.pairwise(bounds)]
            if draw(st.booleans()):
                sizes[draw(st.integers(0, len(sizes) - 1))] = -1
            steps.append(("view", tuple(sizes)))
            rank = len(sizes)
        else:
            steps.append(("permute", tuple(draw(st.permutations(list(range(rank)))))))
    order = list(draw(st.permutations(list(range(len(shape))))))
    return shape, order, steps, list(draw(st.permutations(list(range(rank)))))


def _torch_chain(values, steps, out_order):
    result = torch.from_numpy(values)
    for kind, argument in steps:
        result = result.reshape(*argument) if kind == "view" else result.permute(*argument)
    return result.permute(*out_order).numpy()


@settings(max_examples=80, deadline=None)
@given(case=chains(), seed=st.integers(0, 2 ** 16), traced=st.booleans())
def test_view_chain_matches_torch(case, seed, traced):
    shape, order, steps, out_order = case
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    stored = tf.constant(np.ascontiguousarray(np.transpose(values, order)))
    if traced:  # every size unknown when traced: the chain in torch's order, sizes read when it runs
        function = tf.function(lambda x: view_chain(x, order, steps, out_order),
                               input_signature=[tf.TensorSpec([None] * len(shape), tf.float32)])
        got = function(stored).numpy()
    else:
        got = view_chain(stored, order, steps, out_order).numpy()
    np.testing.assert_array_equal(got, _torch_chain(values, steps, out_order))


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), groups=st.integers(1, 4), height=st.integers(1, 5), width=st.integers(1, 5),
       seed=st.integers(0, 2 ** 16))
def test_shufflenet_v2_split_runs_without_transposes(batch, groups, height, width, seed):
    channels = 4 * groups
    values = np.random.default_rng(seed).standard_normal((batch, channels, height, width)).astype(np.float32)
    steps = [("view", (batch * channels // 2, 2, height * width)), ("permute", (1, 0, 2)),
             ("view", (2, -1, channels // 2, height, width))]
    out_order = [1, 3, 4, 0, 2]  # (N, H, W, 2, C // 2): porter's order for it (passes/view_chains.py)
    function = tf.function(lambda x: view_chain(x, [0, 2, 3, 1], steps, out_order))
    stored = tf.constant(np.ascontiguousarray(values.transpose(0, 2, 3, 1)))
    np.testing.assert_array_equal(function(stored).numpy(), _torch_chain(values, steps, out_order))
    graph = function.get_concrete_function(tf.TensorSpec(stored.shape, tf.float32)).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]
