"""GluonNLP style attention pooling with custom parameters declared in another order than hybrid_forward takes them
(with defaults), a Block parameter that is also a child's sibling, F.dot with transpose_a, batch_dot with
transpose_a, SequenceMask on axis 1, F.split(squeeze_axis=True), F.repeat along an axis and reshape's -2 code."""

import mxnet as mx
from mxnet import gluon


class PooledAttention(gluon.HybridBlock):
    def __init__(self, units=6, hidden=5, heads=3, **kwargs):
        super(PooledAttention, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        self._heads = heads
        with self.name_scope():
            self.score_bias = self.params.get("score_bias", shape=(heads,), init=mx.init.Uniform(0.5))
            self.proj = self.params.get("proj", shape=(units, hidden * heads), init=mx.init.Xavier(magnitude=2))
            self.dense = gluon.nn.Dense(hidden, flatten=False, in_units=units)

    def hybrid_forward(self, F, x, valid_length, proj=None, score_bias=None):
        # x: (N, T, units); valid_length: (N,)
        keys = F.dot(x, proj)  # (N, T, hidden * heads)
        keys = F.reshape(keys, shape=(0, 0, -4, self._heads, -1))  # (N, T, heads, hidden)
        parts = F.split(keys, num_outputs=self._heads, axis=2, squeeze_axis=True)  # heads x (N, T, hidden)
        values = self.dense(x)  # (N, T, hidden)
        pooled = []
        for i, part in enumerate(parts):
            scores = F.sum(F.tanh(part), axis=-1) + F.slice_axis(score_bias, axis=0, begin=i, end=i + 1)  # (N, T)
            scores = F.SequenceMask(scores, sequence_length=valid_length, use_sequence_length=True, value=-1e4,
                                    axis=1)
            weights = F.softmax(scores, axis=-1)  # (N, T)
            weights = F.expand_dims(weights, axis=2)  # (N, T, 1)
            pooled.append(F.batch_dot(weights, values, transpose_a=True))  # (N, 1, hidden)
        out = F.concat(*pooled, dim=1)  # (N, heads, hidden)
        out = F.reshape(out, shape=(0, -2))
        gram = F.dot(proj, proj, transpose_a=True)  # (hidden * heads, hidden * heads)
        return F.repeat(out, repeats=2, axis=1), F.sum(gram)


if __name__ == "__main__":
    net = PooledAttention()
    net.initialize()
    out, gram = net(mx.nd.random.normal(shape=(2, 7, 6)), mx.nd.array([7, 3]))
    print(out.shape, gram.shape)
