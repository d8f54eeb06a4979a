"""An MLP-Mixer (in the style of the widely copied `mlp-mixer-pytorch` ports): a strided-conv patch embedding
followed by `Rearrange('b c h w -> b (h w) c')`, mixer blocks whose token mixer is one `nn.Sequential(LayerNorm,
Rearrange('b n d -> b d n'), Linear(num_patch, token_dim), GELU, Linear(token_dim, num_patch),
Rearrange('b d n -> b n d'))` and whose channel mixer is a LayerNorm and an MLP, a mean over the patches."""

import torch.nn as nn
from einops.layers.torch import Rearrange


class MixerBlock(nn.Module):
    def __init__(self, dim, num_patch, token_dim, channel_dim, dropout=0.0):
        super().__init__()
        self.token_mix = nn.Sequential(
            nn.LayerNorm(dim),
            Rearrange('b n d -> b d n'),
            nn.Linear(num_patch, token_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(token_dim, num_patch),
            nn.Dropout(dropout),
            Rearrange('b d n -> b n d'),
        )
        self.channel_mix = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, channel_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(channel_dim, dim),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        x = x + self.token_mix(x)
        x = x + self.channel_mix(x)
        return x


class MLPMixer(nn.Module):
    def __init__(self, in_channels=3, dim=16, num_classes=5, patch_size=4, image_size=20, depth=2, token_dim=8,
                 channel_dim=32):
        super().__init__()
        assert image_size % patch_size == 0, 'Image dimensions must be divisible by the patch size.'
        self.num_patch = (image_size // patch_size) ** 2
        self.to_patch_embedding = nn.Sequential(
            nn.Conv2d(in_channels, dim, patch_size, patch_size),
            Rearrange('b c h w -> b (h w) c'),
        )
        self.mixer_blocks = nn.ModuleList([])
        for _ in range(depth):
            self.mixer_blocks.append(MixerBlock(dim, self.num_patch, token_dim, channel_dim))
        self.layer_norm = nn.LayerNorm(dim)
        self.mlp_head = nn.Sequential(nn.Linear(dim, num_classes))

    def forward(self, x):
        x = self.to_patch_embedding(x)
        for mixer_block in self.mixer_blocks:
            x = mixer_block(x)
        x = self.layer_norm(x)
        x = x.mean(dim=1)
        return self.mlp_head(x)
