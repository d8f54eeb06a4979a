"""Gluon's `nn.Dense(flatten=False)` contracts the last axis only, as torch's Linear: on a rank-3 token tensor held
channels-last (a conv's (N, C, L) output, its channels stored last) it contracts the tokens where they lie
(`layer(x, layout="channels_last")`, porter/runtime/linear.py's `linear`), a deferred `in_units` read from the axis
they are stored on. An MLP-Mixer-style token mixing then moves no data: the port traces only the entry's Transpose
and matches real mxnet 1.9.1 (tests/mxnet/mxnet_worker.py) with its perturbed parameters."""

import numpy as np
import pytest

from porter.verify.harness import count_transposes
from tests.mxnet.gluon_fixtures import needs_mxnet, port_gluon_snippet

pytestmark = needs_mxnet

SOURCE = '''
from mxnet.gluon import nn
from mxnet.gluon.nn import HybridBlock


class TokenMixer(HybridBlock):
    def __init__(self, **kwargs):
        super(TokenMixer, self).__init__(**kwargs)
        with self.name_scope():
            self.embed = nn.Conv2D(8, 4, strides=4, in_channels=3)
            self.token_in = nn.Dense(12, activation="relu", flatten=False)
            self.token_out = nn.Dense(16, None, False, False, in_units=12)
            self.norm = nn.LayerNorm()
            self.head = nn.Dense(5)

    def hybrid_forward(self, F, x):
        x = F.reshape(self.embed(x), (0, 0, -1))
        x = x + self.token_out(self.token_in(x))
        x = self.norm(F.swapaxes(x, 1, 2))
        return self.head(F.mean(x, axis=1))
'''


@pytest.mark.parametrize("batch", [1, 3])
def test_dense_contracts_the_tokens_where_they_lie(tmp_path, batch):
    x = np.random.default_rng(batch).standard_normal((batch, 3, 16, 16)).astype(np.float32)
    model = port_gluon_snippet(tmp_path, SOURCE, "TokenMixer", x)
    assert count_transposes(model, [x]) == 1  # the entry's (3: the tokens brought to Gluon's order and back)
