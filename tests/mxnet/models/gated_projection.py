"""Gluon 2 style: a plain `Block` whose `forward(self, x)` reads its own parameters with `.data()` and calls
`mx.nd.*` directly; parameters from `self.params.get(...)` (one not trainable, `grad_req="null"`) next to a child
Dense. (mxnet 1.9.1's `initialize()` does not reach a `gluon.Parameter(...)` assigned to an attribute, so the
parameters here come from the Block's ParameterDict.)"""

import mxnet as mx
from mxnet import gluon
from mxnet.gluon import nn


class GatedProjection(gluon.Block):
    def __init__(self, in_units=12, units=8, **kwargs):
        super().__init__(**kwargs)
        self.weight = self.params.get("weight", shape=(units, in_units), init=mx.init.Normal(0.1))
        self.scale = self.params.get("scale", shape=(units,), init="ones")
        self.offset = self.params.get("offset", shape=(1, units), init=mx.init.Zero(), grad_req="null")
        self.proj = nn.Dense(3, in_units=units)

    def forward(self, x):
        # (N, C, L) flattened by FullyConnected's default flatten=True
        h = mx.nd.FullyConnected(x, self.weight.data(), num_hidden=self.scale.shape[0], no_bias=True)
        h = mx.nd.broadcast_mul(h, self.scale.data().reshape((1, -1))) + self.offset.data()
        return self.proj(mx.nd.relu(h))


if __name__ == "__main__":
    net = GatedProjection()
    net.initialize()
    print(net(mx.nd.random.uniform(-1, 1, shape=(5, 3, 4))).shape)
