"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class Swish(nn.Module):
    def __init__(self):
        super(Swish, self).__init__()

    def forward(self, inputs: Tensor) -> Tensor:
        return inputs * inputs.sigmoid()


class GLU(nn.Module):
    def __init__(self, dim: int) -> None:
        super(GLU, self).__init__()
        self.dim = dim

    def forward(self, inputs: Tensor) -> Tensor:
        outputs, gate = inputs.chunk(2, dim=self.dim)
        return outputs * gate.sigmoid()


class Transpose(nn.Module):
    """ Wrapper class of torch.transpose() for Sequential module. """
    def __init__(self, shape: tuple):
        super(Transpose, self).__init__()
        self.shape = shape

    def forward(self, x: Tensor) -> Tensor:
        return x.transpose(*self.shape)


class ResidualConnectionModule(nn.Module):
    def __init__(self, module: nn.Module, module_factor: float = 1.0, input_factor: float = 1.0):
        super(ResidualConnectionModule, self).__init__()
        self.module = module
        self.module_factor = module_factor
        self.input_factor = input_factor

    def forward(self, inputs: Tensor) -> Tensor:
        return (self.module(inputs) * self.module_factor) + (inputs * self.input_factor)


class FeedForwardModule(nn.Module):
    def __init__(self, encoder_dim: int = 512, expansion_factor: int = 4, dropout_p: float = 0.1) -> None:
        super(FeedForwardModule, self).__init__()
        self.sequential = nn.Sequential(
            nn.LayerNorm(encoder_dim),
            nn.Linear(encoder_dim, encoder_dim * expansion_factor, bias=True),
            Swish(),
            nn.Dropout(p=dropout_p),
            nn.Linear(encoder_dim * expansion_factor, encoder_dim, bias=True),
            nn.Dropout(p=dropout_p),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs)


class ConformerConvModule(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int = 31, expansion_factor: int = 2, dropout_p: float = 0.1) -> None:
        super(ConformerConvModule, self).__init__()
        assert (kernel_size - 1) % 2 == 0, "kernel_size should be a odd number for 'SAME' padding"
        assert expansion_factor == 2, "Currently, Only Supports expansion_factor 2"

        self.sequential = nn.Sequential(
            nn.LayerNorm(in_channels),
            Transpose(shape=(1, 2)),
            nn.Conv1d(in_channels, in_channels * expansion_factor, kernel_size=1, stride=1, padding=0, bias=True),
            GLU(dim=1),
            nn.Conv1d(in_channels, in_channels, kernel_size, stride=1, padding=(kernel_size - 1) // 2,
                      groups=in_channels, bias=False),
            nn.BatchNorm1d(in_channels),
            Swish(),
            nn.Conv1d(in_channels, in_channels, kernel_size=1, stride=1, padding=0, bias=True),
            nn.Dropout(p=dropout_p),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs).transpose(1, 2)


class MultiHeadedSelfAttentionModule(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout_p: float = 0.1):
        super(MultiHeadedSelfAttentionModule, self).__init__()
        self.layer_norm = nn.LayerNorm(d_model)
        self.attention = nn.MultiheadAttention(d_model, num_heads, dropout=dropout_p, batch_first=True)
        self.dropout = nn.Dropout(p=dropout_p)

    def forward(self, inputs: Tensor):
        inputs = self.layer_norm(inputs)
        outputs, _ = self.attention(inputs, inputs, inputs, need_weights=False)
        return self.dropout(outputs)


class ConformerBlock(nn.Module):
    def __init__(self, encoder_dim: int = 32, num_attention_heads: int = 4, feed_forward_expansion_factor: int = 2,
                 conv_expansion_factor: int = 2, conv_kernel_size: int = 7, half_step_residual: bool = True):
        super(ConformerBlock, self).__init__()
        if half_step_residual:
            self.feed_forward_residual_factor = 0.5
        else:
            self.feed_forward_residual_factor = 1

        self.sequential = nn.Sequential(
            ResidualConnectionModule(
                module=FeedForwardModule(encoder_dim, feed_forward_expansion_factor),
                module_factor=self.feed_forward_residual_factor,
            ),
            ResidualConnectionModule(module=MultiHeadedSelfAttentionModule(encoder_dim, num_attention_heads)),
            ResidualConnectionModule(
                module=ConformerConvModule(encoder_dim, conv_kernel_size, conv_expansion_factor),
            ),
            ResidualConnectionModule(
                module=FeedForwardModule(encoder_dim, feed_forward_expansion_factor),
                module_factor=self.feed_forward_residual_factor,
            ),
            nn.LayerNorm(encoder_dim),
        )

    def forward(self, inputs: Tensor) -> Tensor:
        return self.sequential(inputs)


class ConformerEncoder(nn.Module):
    def __init__(self, input_dim: int = 12, encoder_dim: int = 32, num_layers: int = 2, num_classes: int = 10):
        super(ConformerEncoder, self).__init__()
        self.input_projection = nn.Linear(input_dim, encoder_dim)
        self.layers = nn.ModuleList([ConformerBlock(encoder_dim=encoder_dim) for _ in range(num_layers)])
        self.fc = nn.Linear(encoder_dim, num_classes, bias=False)

    def forward(self, inputs: Tensor) -> Tensor:
        outputs = self.input_projection(inputs)
        for layer in self.layers:
            outputs = layer(outputs)
        outputs = self.fc(outputs)
        outputs = F.log_softmax(outputs, dim=-1)
        return outputs
