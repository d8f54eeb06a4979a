"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa  (written in other authors' styles on purpose: their habits are what the ports are checked on)
import torch
import torch.nn as nn
import torch.nn.functional as F


def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.data.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    x = x.view(batchsize, -1, height, width)
    return x


class ShuffleUnit(nn.Module):
    def __init__(self, in_channels, out_channels, groups=3, grouped_conv=True, combine="add"):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.grouped_conv = grouped_conv
        self.combine = combine
        self.groups = groups
        self.bottleneck_channels = self.out_channels // 4
        if self.combine == "add":
            self.depthwise_stride = 1
            self._combine_func = self._add
        elif self.combine == "concat":
            self.depthwise_stride = 2
            self._combine_func = self._concat
            self.out_channels -= self.in_channels
        self.first_1x1_groups = self.groups if grouped_conv else 1
        self.g_conv_1x1_compress = self._make_grouped_conv1x1(
            self.in_channels, self.bottleneck_channels, self.first_1x1_groups, batch_norm=True, relu=True)
        self.depthwise_conv3x3 = nn.Conv2d(self.bottleneck_channels, self.bottleneck_channels, 3,
                                           stride=self.depthwise_stride, padding=1, groups=self.bottleneck_channels)
        self.bn_after_depthwise = nn.BatchNorm2d(self.bottleneck_channels)
        self.g_conv_1x1_expand = self._make_grouped_conv1x1(
            self.bottleneck_channels, self.out_channels, self.groups, batch_norm=True, relu=False)

    @staticmethod
    def _add(x, out):
        return x + out

    @staticmethod
    def _concat(x, out):
        return torch.cat((x, out), 1)

    def _make_grouped_conv1x1(self, in_channels, out_channels, groups, batch_norm=True, relu=False):
        modules = []
        modules.append(nn.Conv2d(in_channels, out_channels, 1, groups=groups))
        if batch_norm:
            modules.append(nn.BatchNorm2d(out_channels))
        if relu:
            modules.append(nn.ReLU())
        if len(modules) > 1:
            return nn.Sequential(*modules)
        else:
            return modules[0]

    def forward(self, x):
        residual = x
        if self.combine == "concat":
            residual = F.avg_pool2d(residual, kernel_size=3, stride=2, padding=1)
        out = self.g_conv_1x1_compress(x)
        out = channel_shuffle(out, self.groups)
        out = self.depthwise_conv3x3(out)
        out = self.bn_after_depthwise(out)
        out = self.g_conv_1x1_expand(out)
        out = self._combine_func(residual, out)
        return F.relu(out)


class ShuffleNetV1(nn.Module):
    def __init__(self, groups=3, num_classes=10):
        super().__init__()
        self.groups = groups
        self.stage_out_channels = [-1, 24, 48, 96]
        self.conv1 = nn.Conv2d(3, 24, 3, stride=2, padding=1)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.stage2 = self._make_stage(2)
        self.stage3 = self._make_stage(3)
        self.fc = nn.Linear(self.stage_out_channels[-1], num_classes)

    def _make_stage(self, stage):
        modules = []
        grouped_conv = stage > 2
        modules.append(ShuffleUnit(self.stage_out_channels[stage - 1], self.stage_out_channels[stage],
                                   groups=self.groups, grouped_conv=grouped_conv, combine="concat"))
        for i in range(2):
            modules.append(ShuffleUnit(self.stage_out_channels[stage], self.stage_out_channels[stage],
                                       groups=self.groups, grouped_conv=True, combine="add"))
        return nn.Sequential(*modules)

    def forward(self, x):
        x = self.conv1(x)
        x = self.maxpool(x)
        x = self.stage2(x)
        x = self.stage3(x)
        x = F.avg_pool2d(x, x.data.size()[-2:])
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return F.log_softmax(x, dim=1)
