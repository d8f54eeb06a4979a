"""A nested U-Net (UNet++) holding its feature maps in a grid `[[None] * n for _ in range(n)]` filled and read by
index, blocks in a ModuleDict keyed "x{i}_{j}", upsampling by interpolate to a feature map's size, cat of a list
grown with append."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VGGBlock(nn.Module):
    def __init__(self, in_channels, middle_channels, out_channels):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(in_channels, middle_channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(middle_channels)
        self.conv2 = nn.Conv2d(middle_channels, out_channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return out


class NestedUNet(nn.Module):
    def __init__(self, num_classes=2, input_channels=3, nb_filter=(8, 16, 24)):
        super().__init__()
        self.depth = len(nb_filter)
        self.pool = nn.MaxPool2d(2, 2)
        self.blocks = nn.ModuleDict()
        for j in range(self.depth):
            for i in range(self.depth - j):
                if j == 0:
                    cin = input_channels if i == 0 else nb_filter[i - 1]
                else:
                    cin = nb_filter[i] * j + nb_filter[i + 1]
                self.blocks[f"x{i}_{j}"] = VGGBlock(cin, nb_filter[i], nb_filter[i])
        self.final = nn.Conv2d(nb_filter[0], num_classes, kernel_size=1)

    def up(self, x, like):
        return F.interpolate(x, size=like.shape[-2:], mode="bilinear", align_corners=True)

    def forward(self, input):
        grid = [[None] * self.depth for _ in range(self.depth)]
        x = input
        for i in range(self.depth):
            x = self.blocks[f"x{i}_0"](x if i == 0 else self.pool(x))
            grid[i][0] = x
        for j in range(1, self.depth):
            for i in range(self.depth - j):
                feats = [grid[i][k] for k in range(j)]
                feats.append(self.up(grid[i + 1][j - 1], grid[i][0]))
                grid[i][j] = self.blocks[f"x{i}_{j}"](torch.cat(feats, 1))
        return self.final(grid[0][self.depth - 1])
