import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    """Kim-style CNN over word embeddings."""

    def __init__(self, vocab=1000, emb=32, n_filters=16, sizes=(3, 4, 5), n_classes=4, dropout=0.3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.convs = nn.ModuleList([nn.Conv1d(emb, n_filters, k) for k in sizes])
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(n_filters * len(sizes), n_classes)

    def forward(self, tokens):
        x = self.embedding(tokens)          # (B, T, E)
        x = x.transpose(1, 2)               # (B, E, T)
        pooled = [F.relu(conv(x)).max(dim=2)[0] for conv in self.convs]
        x = torch.cat(pooled, dim=1)
        return self.fc(self.dropout(x))


if __name__ == "__main__":
    model = TextCNN()
    tokens = torch.randint(1, 1000, (8, 40))
    print(model(tokens).shape)
