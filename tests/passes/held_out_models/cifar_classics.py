"""CIFAR-zoo styles (kuangliu's pytorch-cifar DLA, the ShuffleNetV2 of the early PyTorch ports): a tree whose
levels are registered and read with `self.__setattr__('level_%d' % i, ...)` / `self.__getattr__(...)`, its root
joining a list grown with `append` (`torch.cat(xs, 1)`); stages grown as `self.features = []` with `append` and then
wrapped, `self.features = nn.Sequential(*self.features)`, of blocks splitting channels `x[:, :c]`, a staticmethod
`_concat` and a view/transpose/view channel shuffle. Before: `call_module(self.__getattr__, ...)` failed when run,
and the list attribute crashed the converter (an internal error)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion*planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion*planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(self.expansion*planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = F.relu(out)
        return out


class Root(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1):
        super(Root, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=(kernel_size - 1) // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, xs):
        x = torch.cat(xs, 1)
        out = F.relu(self.bn(self.conv(x)))
        return out


class Tree(nn.Module):
    def __init__(self, block, in_channels, out_channels, level=1, stride=1):
        super(Tree, self).__init__()
        self.level = level
        if level == 1:
            self.root = Root(2*out_channels, out_channels)
            self.left_node = block(in_channels, out_channels, stride=stride)
            self.right_node = block(out_channels, out_channels, stride=1)
        else:
            self.root = Root((level+2)*out_channels, out_channels)
            for i in reversed(range(1, level)):
                subtree = Tree(block, in_channels, out_channels, level=i, stride=stride)
                self.__setattr__('level_%d' % i, subtree)
            self.prev_root = block(in_channels, out_channels, stride=stride)
            self.left_node = block(out_channels, out_channels, stride=1)
            self.right_node = block(out_channels, out_channels, stride=1)

    def forward(self, x):
        xs = [self.prev_root(x)] if self.level > 1 else []
        for i in reversed(range(1, self.level)):
            level_i = self.__getattr__('level_%d' % i)
            x = level_i(x)
            xs.append(x)
        x = self.left_node(x)
        xs.append(x)
        x = self.right_node(x)
        xs.append(x)
        out = self.root(xs)
        return out


class DLA(nn.Module):
    def __init__(self, block=BasicBlock, num_classes=10):
        super(DLA, self).__init__()
        self.base = nn.Sequential(nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True))
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, kernel_size=3, stride=1, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True))
        self.layer3 = Tree(block, 8, 16, level=1, stride=1)
        self.layer4 = Tree(block, 16, 24, level=2, stride=2)
        self.layer5 = Tree(block, 24, 32, level=2, stride=2)
        self.linear = nn.Linear(32, num_classes)

    def forward(self, x):
        out = self.base(x)
        out = self.layer1(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = self.layer5(out)
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.data.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    x = x.view(batchsize, -1, height, width)
    return x


class ShuffleUnit(nn.Module):
    def __init__(self, channels, stride):
        super(ShuffleUnit, self).__init__()
        self.stride = stride
        half = channels // 2
        if stride == 1:
            self.branch2 = nn.Sequential(
                nn.Conv2d(half, half, 1, 1, 0, bias=False), nn.BatchNorm2d(half), nn.ReLU(inplace=True),
                nn.Conv2d(half, half, 3, stride, 1, groups=half, bias=False), nn.BatchNorm2d(half))
        else:
            self.branch1 = nn.Sequential(
                nn.Conv2d(channels, channels, 3, stride, 1, groups=channels, bias=False), nn.BatchNorm2d(channels),
                nn.Conv2d(channels, half, 1, 1, 0, bias=False), nn.ReLU(inplace=True))
            self.branch2 = nn.Sequential(
                nn.Conv2d(channels, half, 1, 1, 0, bias=False), nn.BatchNorm2d(half), nn.ReLU(inplace=True),
                nn.Conv2d(half, half, 3, stride, 1, groups=half, bias=False), nn.BatchNorm2d(half))

    @staticmethod
    def _concat(x, out):
        return torch.cat((x, out), 1)

    def forward(self, x):
        if self.stride == 1:
            x1 = x[:, :(x.shape[1] // 2), :, :]
            x2 = x[:, (x.shape[1] // 2):, :, :]
            out = self._concat(x1, self.branch2(x2))
        else:
            out = self._concat(self.branch1(x), self.branch2(x))
        return channel_shuffle(out, 2)


class CifarClassics(nn.Module):
    def __init__(self, num_classes=10):
        super(CifarClassics, self).__init__()
        self.tree = DLA(num_classes=num_classes)
        self.features = []
        for stride in (1, 2, 1):
            self.features.append(ShuffleUnit(8, stride))
        self.features = nn.Sequential(*self.features)
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8 + num_classes, num_classes)

    def forward(self, x):
        logits = self.tree(x)
        y = self.features(self.stem(x))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(torch.cat([y, logits], 1))
