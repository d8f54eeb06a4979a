"""Torch math functions used as values (nerf-pytorch's `Embedder`: `'periodic_fns': [torch.sin, torch.cos]`, each
bound into a lambda `p_fn(x * freq)`; pygcn's `torch.spmm(adj, support)`): the port raised "torch.sin is not
supported yet" when called, and refused `spmm`. An elementwise function as a value is now a lambda computing it
(any layout: it names no axis), and `spmm` is a matrix product of the adjacency the port holds dense. Both models
match torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

NERF = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Embedder:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.create_embedding_fn()

    def create_embedding_fn(self):
        embed_fns = []
        d = self.kwargs['input_dims']
        out_dim = 0
        if self.kwargs['include_input']:
            embed_fns.append(lambda x: x)
            out_dim += d
        max_freq = self.kwargs['max_freq_log2']
        N_freqs = self.kwargs['num_freqs']
        freq_bands = 2. ** torch.linspace(0., max_freq, steps=N_freqs)
        for freq in freq_bands:
            for p_fn in self.kwargs['periodic_fns']:
                embed_fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq))
                out_dim += d
        self.embed_fns = embed_fns
        self.out_dim = out_dim

    def embed(self, inputs):
        return torch.cat([fn(inputs) for fn in self.embed_fns], -1)


class OpModel(nn.Module):
    def __init__(self, W=16, multires=3):
        super().__init__()
        embed_kwargs = {'include_input': True, 'input_dims': 3, 'max_freq_log2': multires - 1,
                        'num_freqs': multires, 'periodic_fns': [torch.sin, torch.cos, torch.exp]}
        self.embedder = Embedder(**embed_kwargs)
        self.fc = nn.Linear(self.embedder.out_dim, W)
        self.out = nn.Linear(W, 4)

    def forward(self, x):
        return self.out(F.relu(self.fc(self.embedder.embed(torch.tanh(x)))))
'''

GCN = '''
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parameter import Parameter


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = Parameter(torch.FloatTensor(out_features))
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        return torch.spmm(adj, support) + self.bias


def normalize_adj(n):
    idx = torch.arange(n)
    a = ((idx[:, None] - idx[None, :]).abs() <= 2).float()
    d = a.sum(1).pow(-0.5)
    return d[:, None] * a * d[None, :]


class OpModel(nn.Module):
    def __init__(self, nfeat=8, nhid=8, nclass=3, n_nodes=7):
        super().__init__()
        self.register_buffer('adj', normalize_adj(n_nodes))
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)

    def forward(self, x):
        x = F.relu(self.gc1(x, self.adj))
        return F.log_softmax(torch.sparse.mm(self.adj, self.gc2(x, self.adj)), dim=1)
'''


@pytest.fixture(scope="module")
def nerf(tmp_path_factory):
    return port(tmp_path_factory.mktemp("nerf"), textwrap.dedent(NERF), input_specs=("3",))


@pytest.fixture(scope="module")
def gcn(tmp_path_factory):
    return port(tmp_path_factory.mktemp("gcn"), textwrap.dedent(GCN), input_specs=("8",))


def test_math_functions_as_values_are_lambdas(nerf):
    code = (nerf.out_dir / "op_model_keras.py").read_text()
    assert "not_supported" not in code and "(lambda input: tf.sin(" in code


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 5))
def test_nerf_embedder_matches_torch(nerf, seed, batch):
    assert_same_outputs(nerf, [random_input(seed, (batch, 3))])


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_graph_convolution_matches_torch(gcn, seed):
    assert_same_outputs(gcn, [random_input(seed, (7, 8))])
