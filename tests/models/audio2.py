import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock1d(nn.Module):
    def __init__(self, cin, cout, k=9, pool=4):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=k // 2)
        self.bn = nn.BatchNorm1d(cout)
        self.pool = pool

    def forward(self, x):
        return F.max_pool1d(F.leaky_relu(self.bn(self.conv(x)), 0.1), self.pool)


class KWSNet(nn.Module):
    def __init__(self, n_classes=6):
        super().__init__()
        self.blocks = nn.Sequential(ConvBlock1d(1, 8, 41, 8), ConvBlock1d(8, 16), ConvBlock1d(16, 32))
        self.fc = nn.Linear(32 * 2, n_classes)

    def forward(self, wav):
        x = self.blocks(wav)
        mean = x.mean(dim=-1)
        mx = x.amax(dim=-1)
        return F.log_softmax(self.fc(torch.cat([mean, mx], dim=1)), dim=-1)


if __name__ == "__main__":
    print(KWSNet()(torch.randn(3, 1, 4000)).shape)
