"""A model-zoo file in the style of mxnet's gluon/model_zoo/vision/vgg.py: a spec table, a `get_vgg(num_layers,
pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), "models"), **kwargs)` factory whose pretrained
branch downloads weights, and small factories on top of it (one that sets a keyword first)."""

import os

import mxnet as mx
from mxnet import base, gluon
from mxnet.context import cpu
from mxnet.gluon import nn


class VGG(gluon.HybridBlock):
    def __init__(self, layers, filters, classes=10, batch_norm=False, **kwargs):
        super(VGG, self).__init__(**kwargs)  # noqa: UP008 - Gluon 1.x style
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes)

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix="")
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        x = self.features(x)
        x = self.output(x)
        return x


vgg_spec = {3: ([1, 1, 1], [8, 16, 32]),
            5: ([1, 2, 2], [8, 16, 16])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), "models"),  # noqa: B008
            **kwargs):
    r"""VGG model from the "Very Deep Convolutional Networks" paper, sized for small images."""
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        from mxnet.gluon.model_zoo.model_store import get_model_file
        batch_norm_suffix = "_bn" if kwargs.get("batch_norm") else ""
        net.load_parameters(get_model_file("vgg%d%s" % (num_layers, batch_norm_suffix), root=root),  # noqa: UP031
                            ctx=ctx)
    return net


def vgg3(**kwargs):
    return get_vgg(3, **kwargs)


def vgg5_bn(**kwargs):
    kwargs["batch_norm"] = True
    return get_vgg(5, **kwargs)


if __name__ == "__main__":
    net = vgg5_bn(classes=4)
    net.initialize(mx.init.Xavier())
    print(net(mx.nd.random.uniform(-1, 1, shape=(2, 3, 16, 16))).shape)
