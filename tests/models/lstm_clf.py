import torch
from torch import nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size=300, embed_dim=16, hidden_dim=24, num_layers=2, num_classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=num_layers, bidirectional=True, dropout=0.1)
        self.fc = nn.Linear(2 * hidden_dim, num_classes)

    def forward(self, text):
        # text: (seq_len, batch) -- time-major like the classic tutorials
        embedded = self.embed(text)
        output, (hidden, cell) = self.lstm(embedded)
        hidden = torch.cat((hidden[-2], hidden[-1]), dim=1)
        return self.fc(hidden)


if __name__ == "__main__":
    model = LSTMClassifier()
    text = torch.randint(1, 300, (20, 4))
    print(model(text).shape)
