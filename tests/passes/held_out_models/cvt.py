# CvT style (microsoft/CvT cls_cvt.py): convolutional token embedding and convolutional q/k/v projections with
# einops rearrange between tokens and images; tiny sizes, no cls token.
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from einops.layers.torch import Rearrange


class ConvEmbed(nn.Module):
    def __init__(self, patch_size=7, in_chans=3, embed_dim=64, stride=4, padding=2, norm_layer=None):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=stride, padding=padding)
        self.norm = norm_layer(embed_dim) if norm_layer else None

    def forward(self, x):
        x = self.proj(x)
        B, C, H, W = x.shape
        x = rearrange(x, 'b c h w -> b (h w) c')
        if self.norm:
            x = self.norm(x)
        x = rearrange(x, 'b (h w) c -> b c h w', h=H, w=W)
        return x


class Attention(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, qkv_bias=False, kernel_size=3, stride_kv=1, stride_q=1,
                 padding_kv=1, padding_q=1):
        super().__init__()
        self.stride_kv = stride_kv
        self.stride_q = stride_q
        self.dim = dim_out
        self.num_heads = num_heads
        self.scale = dim_out ** -0.5
        self.conv_proj_q = self._build_projection(dim_in, kernel_size, padding_q, stride_q)
        self.conv_proj_k = self._build_projection(dim_in, kernel_size, padding_kv, stride_kv)
        self.conv_proj_v = self._build_projection(dim_in, kernel_size, padding_kv, stride_kv)
        self.proj_q = nn.Linear(dim_in, dim_out, bias=qkv_bias)
        self.proj_k = nn.Linear(dim_in, dim_out, bias=qkv_bias)
        self.proj_v = nn.Linear(dim_in, dim_out, bias=qkv_bias)
        self.proj = nn.Linear(dim_out, dim_out)

    def _build_projection(self, dim_in, kernel_size, padding, stride):
        proj = nn.Sequential(
            nn.Conv2d(dim_in, dim_in, kernel_size=kernel_size, padding=padding, stride=stride, bias=False,
                      groups=dim_in),
            nn.BatchNorm2d(dim_in),
            Rearrange('b c h w -> b (h w) c'),
        )
        return proj

    def forward_conv(self, x, h, w):
        x = rearrange(x, 'b (h w) c -> b c h w', h=h, w=w)
        q = self.conv_proj_q(x)
        k = self.conv_proj_k(x)
        v = self.conv_proj_v(x)
        return q, k, v

    def forward(self, x, h, w):
        q, k, v = self.forward_conv(x, h, w)
        q = rearrange(self.proj_q(q), 'b t (h d) -> b h t d', h=self.num_heads)
        k = rearrange(self.proj_k(k), 'b t (h d) -> b h t d', h=self.num_heads)
        v = rearrange(self.proj_v(v), 'b t (h d) -> b h t d', h=self.num_heads)
        attn_score = torch.einsum('bhlk,bhtk->bhlt', [q, k]) * self.scale
        attn = F.softmax(attn_score, dim=-1)
        x = torch.einsum('bhlt,bhtv->bhlv', [attn, v])
        x = rearrange(x, 'b h t d -> b t (h d)')
        x = self.proj(x)
        return x


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, mlp_ratio=4., **kwargs):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim_in)
        self.attn = Attention(dim_in, dim_out, num_heads, **kwargs)
        self.norm2 = nn.LayerNorm(dim_out)
        self.mlp = Mlp(dim_out, int(dim_out * mlp_ratio))

    def forward(self, x, h, w):
        res = x
        x = self.norm1(x)
        attn = self.attn(x, h, w)
        x = res + attn
        x = x + self.mlp(self.norm2(x))
        return x


class VisionTransformer(nn.Module):
    def __init__(self, patch_size=16, patch_stride=16, patch_padding=0, in_chans=3, embed_dim=768, depth=12,
                 num_heads=12, mlp_ratio=4., **kwargs):
        super().__init__()
        self.patch_embed = ConvEmbed(patch_size=patch_size, in_chans=in_chans, stride=patch_stride,
                                     padding=patch_padding, embed_dim=embed_dim, norm_layer=nn.LayerNorm)
        blocks = []
        for j in range(depth):
            blocks.append(Block(dim_in=embed_dim, dim_out=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio,
                                **kwargs))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x):
        x = self.patch_embed(x)
        B, C, H, W = x.size()
        x = rearrange(x, 'b c h w -> b (h w) c')
        for i, blk in enumerate(self.blocks):
            x = blk(x, H, W)
        x = rearrange(x, 'b (h w) c -> b c h w', h=H, w=W)
        return x


class ConvolutionalVisionTransformer(nn.Module):
    def __init__(self, in_chans=3, num_classes=10, dims=(8, 16), heads=(1, 2), depths=(1, 2)):
        super().__init__()
        self.num_stages = len(dims)
        for i in range(self.num_stages):
            stage = VisionTransformer(
                patch_size=7 if i == 0 else 3, patch_stride=4 if i == 0 else 2, patch_padding=2 if i == 0 else 1,
                in_chans=in_chans, embed_dim=dims[i], depth=depths[i], num_heads=heads[i], stride_kv=2)
            setattr(self, f'stage{i}', stage)
            in_chans = dims[i]
        self.norm = nn.LayerNorm(dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)

    def forward_features(self, x):
        for i in range(self.num_stages):
            x = getattr(self, f'stage{i}')(x)
        x = rearrange(x, 'b c h w -> b (h w) c')
        x = self.norm(x)
        x = torch.mean(x, dim=1)
        return x

    def forward(self, x):
        x = self.forward_features(x)
        x = self.head(x)
        return x
