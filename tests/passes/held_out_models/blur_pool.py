"""Antialiased downsampling (Zhang's BlurPool): a fixed binomial filter registered as a buffer, `repeat`ed per
channel and applied with `F.conv2d(self.pad(x), self.filt, stride=2, groups=x.shape[1])` after reflection padding.
Read only as a convolution's weight, the buffer is held as a Conv layer holds its kernel (k, k, I/g, O): the port
traces the input's Transpose only (3 when it was held in torch's order, transposed per call)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BlurPool(nn.Module):
    def __init__(self, channels, stride=2):
        super().__init__()
        self.channels, self.stride = channels, stride
        a = torch.tensor([1.0, 2.0, 1.0])
        filt = a[:, None] * a[None, :]
        filt = filt / filt.sum()
        self.register_buffer("filt", filt[None, None, :, :].repeat(channels, 1, 1, 1))
        self.pad = nn.ReflectionPad2d(1)

    def forward(self, x):
        return F.conv2d(self.pad(x), self.filt, stride=self.stride, groups=x.shape[1])


class BlurPoolNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.blur1 = BlurPool(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.blur2 = BlurPool(16)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.blur1(F.relu(self.conv1(x)))
        x = self.blur2(F.relu(self.conv2(x)))
        return self.fc(x.mean((2, 3)))
