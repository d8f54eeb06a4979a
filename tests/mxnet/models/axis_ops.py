"""F.swapaxes, F.Dropout (inference: identity), F.slice_axis and F.slice on a conv feature map (channels-last in
the port) and on a plain (N, T, C) sequence, in one small Gluon block (written for porter's tests)."""

from mxnet.gluon import nn
from mxnet.gluon.block import HybridBlock


class AxisOps(HybridBlock):
    def __init__(self, channels=6, **kwargs):
        super(AxisOps, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        with self.name_scope():
            self.conv = nn.Conv2D(channels, 3, padding=1, in_channels=3)
            self.proj = nn.Dense(4, flatten=False, in_units=5)

    def hybrid_forward(self, F, x, seq):
        y = F.Dropout(self.conv(x), p=0.3)
        y = F.slice_axis(y, axis=1, begin=1, end=5)
        y = F.slice(y, begin=(None, None, 1, 0), end=(None, None, None, -1), step=(None, None, 2, 1))
        z = F.swapaxes(self.proj(seq), dim1=1, dim2=2)
        z = F.slice_axis(z, axis=2, begin=0, end=None)
        return F.swapaxes(y, 1, 3), z
