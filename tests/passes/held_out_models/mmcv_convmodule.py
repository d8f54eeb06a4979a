"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa  (written in other authors' styles on purpose: their habits are what the ports are checked on)
"""mmcv-style ConvModule (conv/norm/act built from config dicts, order loop) with a small ResNet-like net."""
import copy
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

CONV_LAYERS = {'Conv': nn.Conv2d, 'Conv2d': nn.Conv2d}
NORM_LAYERS = {'BN': nn.BatchNorm2d, 'BN2d': nn.BatchNorm2d, 'GN': nn.GroupNorm}
ACT_LAYERS = {'ReLU': nn.ReLU, 'LeakyReLU': nn.LeakyReLU, 'GELU': nn.GELU, 'HSwish': nn.Hardswish}


def build_conv_layer(cfg, *args, **kwargs):
    if cfg is None:
        cfg_ = dict(type='Conv2d')
    else:
        cfg_ = cfg.copy()
    layer_type = cfg_.pop('type')
    conv_layer = CONV_LAYERS[layer_type]
    layer = conv_layer(*args, **kwargs, **cfg_)
    return layer


def build_norm_layer(cfg, num_features, postfix=''):
    cfg_ = cfg.copy()
    layer_type = cfg_.pop('type')
    norm_layer = NORM_LAYERS[layer_type]
    abbr = 'gn' if layer_type == 'GN' else 'bn'
    name = abbr + str(postfix)
    requires_grad = cfg_.pop('requires_grad', True)
    cfg_.setdefault('eps', 1e-5)
    if layer_type != 'GN':
        layer = norm_layer(num_features, **cfg_)
    else:
        assert 'num_groups' in cfg_
        layer = norm_layer(num_channels=num_features, **cfg_)
    for param in layer.parameters():
        param.requires_grad = requires_grad
    return name, layer


def build_activation_layer(cfg):
    cfg_ = cfg.copy()
    layer_type = cfg_.pop('type')
    return ACT_LAYERS[layer_type](**cfg_)


class ConvModule(nn.Module):
    """A conv block that bundles conv/norm/activation layers."""

    _abbr_ = 'conv_block'

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias='auto', conv_cfg=None, norm_cfg=None, act_cfg=dict(type='ReLU'), inplace=True,
                 order=('conv', 'norm', 'act')):
        super().__init__()
        assert conv_cfg is None or isinstance(conv_cfg, dict)
        assert norm_cfg is None or isinstance(norm_cfg, dict)
        assert act_cfg is None or isinstance(act_cfg, dict)
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg
        self.act_cfg = act_cfg
        self.inplace = inplace
        self.order = order
        assert isinstance(self.order, tuple) and len(self.order) == 3
        assert set(order) == {'conv', 'norm', 'act'}

        self.with_norm = norm_cfg is not None
        self.with_activation = act_cfg is not None
        # if the conv layer is before a norm layer, bias is unnecessary.
        if bias == 'auto':
            bias = not self.with_norm
        self.with_bias = bias

        self.conv = build_conv_layer(conv_cfg, in_channels, out_channels, kernel_size, stride=stride,
                                     padding=padding, dilation=dilation, groups=groups, bias=bias)
        self.in_channels = self.conv.in_channels
        self.out_channels = self.conv.out_channels

        if self.with_norm:
            # norm layer is after conv layer
            if order.index('norm') > order.index('conv'):
                norm_channels = out_channels
            else:
                norm_channels = in_channels
            self.norm_name, norm = build_norm_layer(norm_cfg, norm_channels)
            self.add_module(self.norm_name, norm)
            if self.with_bias:
                warnings.warn('Unnecessary conv bias before batch/instance norm')
        else:
            self.norm_name = None

        if self.with_activation:
            act_cfg_ = act_cfg.copy()
            if act_cfg_['type'] not in ['GELU', 'HSwish']:
                act_cfg_.setdefault('inplace', inplace)
            self.activate = build_activation_layer(act_cfg_)

    @property
    def norm(self):
        if self.norm_name:
            return getattr(self, self.norm_name)
        else:
            return None

    def forward(self, x, activate=True, norm=True):
        for layer in self.order:
            if layer == 'conv':
                x = self.conv(x)
            elif layer == 'norm' and norm and self.with_norm:
                x = self.norm(x)
            elif layer == 'act' and activate and self.with_activation:
                x = self.activate(x)
        return x


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, norm_cfg=dict(type='BN'), act_cfg=dict(type='ReLU')):
        super().__init__()
        self.conv1 = ConvModule(inplanes, planes, 3, stride, 1, norm_cfg=norm_cfg, act_cfg=act_cfg)
        self.conv2 = ConvModule(planes, planes, 3, 1, 1, norm_cfg=norm_cfg, act_cfg=None)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = ConvModule(inplanes, planes, 1, stride, norm_cfg=norm_cfg, act_cfg=None)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.conv2(self.conv1(x))
        return F.relu(out + identity)


class MMNet(nn.Module):
    def __init__(self, stem_channels=16, widths=(16, 32, 48), num_classes=10,
                 norm_cfg=dict(type='GN', num_groups=3), act_cfg=dict(type='LeakyReLU', negative_slope=0.1)):
        super().__init__()
        self.stem = ConvModule(3, stem_channels, 3, 1, 1, norm_cfg=norm_cfg, act_cfg=act_cfg,
                               order=('norm', 'conv', 'act'))
        self.res_layers = []
        inplanes = stem_channels
        for i, planes in enumerate(widths):
            layer = BasicBlock(inplanes, planes, 1 if i == 0 else 2, norm_cfg=dict(type='BN'))
            layer_name = f'layer{i + 1}'
            self.add_module(layer_name, layer)
            self.res_layers.append(layer_name)
            inplanes = planes
        self.head = ConvModule(inplanes, 32, 1, act_cfg=dict(type='HSwish'), norm_cfg=dict(type='BN'),
                               order=('conv', 'act', 'norm'))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for layer_name in self.res_layers:
            res_layer = getattr(self, layer_name)
            x = res_layer(x)
            outs.append(x)
        x = self.head(outs[-1])
        x = F.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
        return self.fc(x), outs[1]
