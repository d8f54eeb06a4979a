import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hid, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(hid * 2, hid)

    def forward(self, src):
        embedded = self.emb(src)
        outputs, hidden = self.rnn(embedded)
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
        return outputs, hidden


class Attention(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.attn = nn.Linear(hid * 3, hid)
        self.v = nn.Linear(hid, 1, bias=False)

    def forward(self, hidden, enc):
        T = enc.shape[1]
        hidden = hidden.unsqueeze(1).repeat(1, T, 1)
        energy = torch.tanh(self.attn(torch.cat((hidden, enc), dim=2)))
        return torch.softmax(self.v(energy).squeeze(2), dim=1)


class Seq2SeqScorer(nn.Module):
    def __init__(self, vocab=500, emb=16, hid=24, out=5):
        super().__init__()
        self.encoder = Encoder(vocab, emb, hid)
        self.attention = Attention(hid)
        self.out = nn.Linear(hid * 2, out)

    def forward(self, src):
        enc, hidden = self.encoder(src)
        a = self.attention(hidden, enc).unsqueeze(1)
        context = torch.bmm(a, enc).squeeze(1)
        return self.out(context)


if __name__ == "__main__":
    m = Seq2SeqScorer()
    src = torch.randint(0, 500, (4, 12))
    print(m(src).shape)
