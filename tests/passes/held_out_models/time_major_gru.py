"""A held-out sequence model: a GRU encoder over time-major input with a Conv1d front end (B, T, F) -> transpose -> conv -> transpose back,
attention pooling over time with softmax over dim 0, a bidirectional GRU's final hidden states concatenated."""
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, feats=6, hidden=8, classes=4):
        super().__init__()
        self.conv = nn.Conv1d(feats, hidden, 3, padding=1)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, bidirectional=True)
        self.att = nn.Linear(2 * hidden, 1)
        self.head = nn.Linear(4 * hidden, classes)

    def forward(self, x):
        x = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)  # (B, T, H)
        x = x.permute(1, 0, 2)  # (T, B, H)
        out, h = self.gru(x)
        w = torch.softmax(self.att(out), dim=0)
        pooled = (w * out).sum(0)
        last = torch.cat([h[-2], h[-1]], dim=1)
        return self.head(torch.cat([pooled, last], dim=1))
