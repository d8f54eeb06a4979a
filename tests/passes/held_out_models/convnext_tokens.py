"""ConvNeXt blocks (`permute(0, 2, 3, 1)`, a channels-last LayerNorm class with a channels-first branch, an MLP,
a layer scale, `permute(0, 3, 1, 2)`), one block instance called twice, around a token block with a staticmethod
`flatten(2).transpose(1, 2)`, nn.MultiheadAttention and `t.transpose(1, 2).reshape(B, C, H, W)` back. The attention's
output (`self.attn(h, h, h)[0]`) had no known rank, so the fold of the tokens back into an image could not be made
where they lie: a Transpose there and one for the shared block after it; now none (logits out: the input's one)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    """LayerNorm supporting channels_last (default) or channels_first inputs (ConvNeXt's)."""

    def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = eps
        self.data_format = data_format
        self.normalized_shape = (normalized_shape, )

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        elif self.data_format == "channels_first":
            u = x.mean(1, keepdim=True)
            s = (x - u).pow(2).mean(1, keepdim=True)
            x = (x - u) / torch.sqrt(s + self.eps)
            x = self.weight[:, None, None] * x + self.bias[:, None, None]
            return x


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, layer_scale_init_value=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, 4 * dim)
        self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)) + 0.5, requires_grad=True)

    def forward(self, x):
        input = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
        x = self.norm(x)
        x = self.mlp(x)
        x = self.gamma * x
        x = x.permute(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)
        return input + x


class TokenBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.mlp = Mlp(dim, 2 * dim)

    @staticmethod
    def to_tokens(x):
        return x.flatten(2).transpose(1, 2)

    def forward(self, x):
        B, C, H, W = x.shape
        t = self.to_tokens(x)
        h = self.norm(t)
        t = t + self.attn(h, h, h, need_weights=False)[0]
        t = t + self.mlp(t)
        return t.transpose(1, 2).reshape(B, C, H, W)


class TokenConvNeXt(nn.Module):
    def __init__(self, dims=(8, 16), num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], kernel_size=4, stride=4), LayerNorm(dims[0], eps=1e-6, data_format="channels_first"))
        self.stage1 = nn.Sequential(*[Block(dims[0]) for _ in range(2)])
        self.down = nn.Sequential(LayerNorm(dims[0], eps=1e-6, data_format="channels_first"), nn.Conv2d(dims[0], dims[1], kernel_size=2, stride=2))
        self.shared = Block(dims[1])
        self.tokens = TokenBlock(dims[1])
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.stage1(x)
        x = self.down(x)
        x = self.shared(x)
        x = self.tokens(x)
        x = self.shared(x)  # the same block, called again
        return self.head(self.norm(x.mean([-2, -1])))
