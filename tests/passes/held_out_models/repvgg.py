"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa  (written in other authors' styles on purpose: their habits are what the ports are checked on)
import torch
import torch.nn as nn


def conv_bn(in_channels, out_channels, kernel_size, stride, padding, groups=1):
    result = nn.Sequential()
    result.add_module("conv", nn.Conv2d(in_channels=in_channels, out_channels=out_channels,
                                        kernel_size=kernel_size, stride=stride, padding=padding,
                                        groups=groups, bias=False))
    result.add_module("bn", nn.BatchNorm2d(num_features=out_channels))
    return result


class SEBlock(nn.Module):
    def __init__(self, input_channels, internal_neurons):
        super(SEBlock, self).__init__()
        self.down = nn.Conv2d(input_channels, internal_neurons, kernel_size=1, stride=1, bias=True)
        self.up = nn.Conv2d(internal_neurons, input_channels, kernel_size=1, stride=1, bias=True)
        self.input_channels = input_channels

    def forward(self, inputs):
        x = nn.functional.avg_pool2d(inputs, kernel_size=inputs.size(3))
        x = self.down(x)
        x = nn.functional.relu(x)
        x = self.up(x)
        x = torch.sigmoid(x)
        x = x.view(-1, self.input_channels, 1, 1)
        return inputs * x


class RepVGGBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, groups=1, use_se=False):
        super(RepVGGBlock, self).__init__()
        self.groups = groups
        self.in_channels = in_channels
        padding_11 = padding - kernel_size // 2
        self.nonlinearity = nn.ReLU()
        if use_se:
            self.se = SEBlock(out_channels, internal_neurons=out_channels // 4)
        else:
            self.se = nn.Identity()
        self.rbr_identity = nn.BatchNorm2d(num_features=in_channels) \
            if out_channels == in_channels and stride == 1 else None
        self.rbr_dense = conv_bn(in_channels, out_channels, kernel_size, stride, padding, groups=groups)
        self.rbr_1x1 = conv_bn(in_channels, out_channels, 1, stride, padding_11, groups=groups)

    def forward(self, inputs):
        if self.rbr_identity is None:
            id_out = 0
        else:
            id_out = self.rbr_identity(inputs)
        return self.nonlinearity(self.se(self.rbr_dense(inputs) + self.rbr_1x1(inputs) + id_out))


class RepVGGMini(nn.Module):
    def __init__(self, num_blocks=(1, 2, 2), num_classes=10, width=(16, 32, 64), use_se=True):
        super(RepVGGMini, self).__init__()
        self.use_se = use_se
        self.in_planes = min(16, width[0])
        self.stage0 = RepVGGBlock(3, self.in_planes, kernel_size=3, stride=2, padding=1, use_se=self.use_se)
        self.cur_layer_idx = 1
        self.stage1 = self._make_stage(width[0], num_blocks[0], stride=2)
        self.stage2 = self._make_stage(width[1], num_blocks[1], stride=2)
        self.stage3 = self._make_stage(width[2], num_blocks[2], stride=2)
        self.gap = nn.AdaptiveAvgPool2d(output_size=1)
        self.linear = nn.Linear(width[2], num_classes)

    def _make_stage(self, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        blocks = []
        for stride in strides:
            blocks.append(RepVGGBlock(self.in_planes, planes, 3, stride=stride, padding=1, use_se=self.use_se))
            self.in_planes = planes
            self.cur_layer_idx += 1
        return nn.ModuleList(blocks)

    def forward(self, x):
        out = self.stage0(x)
        for stage in (self.stage1, self.stage2, self.stage3):
            for block in stage:
                out = block(out)
        out = self.gap(out)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out
