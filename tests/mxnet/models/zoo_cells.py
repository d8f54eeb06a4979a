"""A small Gluon convnet in GluonCV's model-zoo idioms (written for porter's tests): helpers handed the op namespace
(`self._excite(F, x)`, `fixed_padding(x, F, k)`), an activation chosen in __init__ branches among an elementwise
in-file class and nn.Activation, `out.add(*[conv, bn])`, `nn.HybridSequential('prefix_')`, a stage iterated
through `_children.values()`, F.pad + F.slice (NASNet's MaxPoolPad), F.Pooling, squeeze-excitation with
F.contrib.AdaptiveAvgPooling2D and F.broadcast_mul, and factories whose `norm_layer` defaults to BatchNorm."""

from mxnet.gluon import nn
from mxnet.gluon.block import HybridBlock
from mxnet.gluon.nn import BatchNorm


class Relu6(HybridBlock):
    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6)


class HardSwish(HybridBlock):
    def __init__(self, **kwargs):
        super(HardSwish, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        self.act = Relu6()

    def hybrid_forward(self, F, x):
        return x * self.act(x + 3.0) / 6.0


class Activation(HybridBlock):
    def __init__(self, act_func, **kwargs):
        super(Activation, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        if act_func == "relu6":
            self.act = Relu6()
        elif act_func == "hard_swish":
            self.act = HardSwish()
        else:
            self.act = nn.Activation(act_func)

    def hybrid_forward(self, F, x):
        return self.act(x)


def fixed_padding(inputs, F, kernel_size):
    pad_total = kernel_size - 1
    pad_beg = pad_total // 2
    return F.pad(inputs, mode="constant", constant_value=0,
                 pad_width=(0, 0, 0, 0, pad_beg, pad_total - pad_beg, pad_beg, pad_total - pad_beg))


class MaxPoolPad(HybridBlock):
    def __init__(self, **kwargs):
        super(MaxPoolPad, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        self.pool = nn.MaxPool2D(pool_size=3, strides=2, padding=1)

    def hybrid_forward(self, F, x):
        x = F.pad(x, pad_width=(0, 0, 0, 0, 1, 0, 1, 0), mode="constant", constant_value=0)
        x = self.pool(x)
        return F.slice(x, begin=(0, 0, 1, 1), end=(None, None, None, None))


class Cell(HybridBlock):
    def __init__(self, channels, act_func, norm_layer=BatchNorm, **kwargs):
        super(Cell, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        with self.name_scope():
            self.body = nn.HybridSequential(prefix="body_")
            self.body.add(*[nn.Conv2D(channels, 3, use_bias=False, in_channels=channels),
                            norm_layer(in_channels=channels)])
            self.act = Activation(act_func)
            self.fc1 = nn.Conv2D(max(channels // 2, 1), 1, in_channels=channels)
            self.fc2 = nn.Conv2D(channels, 1, in_channels=max(channels // 2, 1))

    def _excite(self, F, x):
        w = F.contrib.AdaptiveAvgPooling2D(x, output_size=1)
        w = F.sigmoid(self.fc2(F.relu(self.fc1(w))))
        return F.broadcast_mul(x, w)

    def hybrid_forward(self, F, x):
        out = self.act(self.body(fixed_padding(x, F, 3)))
        return self._excite(F, out) + x


class CellNet(HybridBlock):
    def __init__(self, channels=8, classes=10, acts=("relu", "relu6", "hard_swish"), norm_layer=BatchNorm,
                 **kwargs):
        super(CellNet, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        with self.name_scope():
            self.stem = nn.HybridSequential("stem_")
            self.stem.add(nn.Conv2D(channels, 3, padding=1, in_channels=3), norm_layer(in_channels=channels))
            self.pool = MaxPoolPad()
            self.stage = nn.HybridSequential("stage_")
            for act in acts:
                self.stage.add(Cell(channels, act, norm_layer=norm_layer))
            self.output = nn.Dense(classes, in_units=channels)

    def hybrid_forward(self, F, x):
        x = self.pool(self.stem(x))
        for cell in self.stage._children.values():
            x = cell(x)
        x = F.Pooling(x, kernel=(1, 1), pool_type="avg", global_pool=True)
        return self.output(F.flatten(x))


def get_cellnet(channels=8, pretrained=False, norm_layer=BatchNorm, **kwargs):
    return CellNet(channels, norm_layer=norm_layer, **kwargs)


def cellnet8(**kwargs):
    return get_cellnet(8, **kwargs)
