# A BERT encoder in the style of huggingface transformers (BertSelfAttention's `transpose_for_scores`, the context
# reshaped by `context_layer.size()[:-2] + (self.all_head_size,)`, an additive extended mask) feeding a TCN after
# locuslab/TCN (weight-normed dilated Conv1d, Chomp1d) on `h.transpose(1, 2)`
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, hidden_size=32, num_attention_heads=4, dropout=0.1):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = int(hidden_size / num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(hidden_size, self.all_head_size)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(dropout)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)
        return context_layer


class Layer(nn.Module):
    def __init__(self, hidden=32, heads=4, inter=64):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.inter = nn.Linear(hidden, inter)
        self.out2 = nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, h, mask=None):
        a = self.ln1(self.out(self.attn(h, mask)) + h)
        return self.ln2(self.out2(F.gelu(self.inter(a))) + a)


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super(Chomp1d, self).__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super(TemporalBlock, self).__init__()
        self.conv1 = nn.utils.weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class BertTCN(nn.Module):
    def __init__(self, vocab=50, hidden=32, layers=2, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.zeros(1, 64, hidden))
        self.layers = nn.ModuleList([Layer(hidden) for _ in range(layers)])
        self.tcn = nn.Sequential(TemporalBlock(hidden, 16, 3, 1, 1, 2), TemporalBlock(16, 16, 3, 1, 2, 4))
        self.cls = nn.Linear(16, classes)

    def forward(self, ids):
        mask = (ids > 0).float()
        ext = (1.0 - mask[:, None, None, :]) * -10000.0
        h = self.emb(ids) + self.pos[:, :ids.size(1)]
        for layer in self.layers:
            h = layer(h, ext)
        y = self.tcn(h.transpose(1, 2))
        return self.cls(y[:, :, -1])
