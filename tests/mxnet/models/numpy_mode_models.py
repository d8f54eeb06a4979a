"""Gluon 2 models in NumPy mode written the way d2l's MXNet chapters write them (models the library file
d2l/mxnet.py does not hold): DenseNet's dense block and GoogLeNet's Inception (np.concatenate along channels),
the seq2seq decoder (np.tile of the context, X.T, swapaxes), an SE block spelled through `mx.np` / `mx.npx` only,
a batch-norm written with reductions and a parameter of its own, an MLP head with NumPy reshapes, and a
HybridBlock whose hybrid_forward reaches the namespaces as `F.np` / `F.npx`."""
import mxnet as mx
from mxnet import init, np, npx
from mxnet.gluon import nn, rnn

npx.set_np()


def conv_block(num_channels):
    blk = nn.Sequential()
    blk.add(nn.BatchNorm(), nn.Activation('relu'),
            nn.Conv2D(num_channels, kernel_size=3, padding=1))
    return blk


class DenseBlock(nn.Block):
    def __init__(self, num_convs, num_channels):
        super().__init__()
        self.net = nn.Sequential()
        for _ in range(num_convs):
            self.net.add(conv_block(num_channels))

    def forward(self, X):
        for blk in self.net:
            Y = blk(X)
            X = np.concatenate((X, Y), axis=1)
        return X


class Inception(nn.Block):
    def __init__(self, c1, c2, c3, c4, **kwargs):
        super(Inception, self).__init__(**kwargs)
        self.b1_1 = nn.Conv2D(c1, kernel_size=1, activation='relu')
        self.b2_1 = nn.Conv2D(c2[0], kernel_size=1, activation='relu')
        self.b2_2 = nn.Conv2D(c2[1], kernel_size=3, padding=1, activation='relu')
        self.b3_1 = nn.Conv2D(c3[0], kernel_size=1, activation='relu')
        self.b3_2 = nn.Conv2D(c3[1], kernel_size=5, padding=2, activation='relu')
        self.b4_1 = nn.MaxPool2D(pool_size=3, strides=1, padding=1)
        self.b4_2 = nn.Conv2D(c4, kernel_size=1, activation='relu')

    def forward(self, x):
        b1 = self.b1_1(x)
        b2 = self.b2_2(self.b2_1(x))
        b3 = self.b3_2(self.b3_1(x))
        b4 = self.b4_2(self.b4_1(x))
        return np.concatenate((b1, b2, b3, b4), axis=1)


class Seq2SeqDecoder(nn.Block):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = rnn.GRU(num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Dense(vocab_size, flatten=False)
        self.initialize(init.Xavier())

    def forward(self, X, enc_output, hidden_state):
        embs = self.embedding(X.T)
        context = enc_output[-1]
        context = np.tile(context, (embs.shape[0], 1, 1))
        embs_and_context = np.concatenate((embs, context), -1)
        outputs, hidden_state = self.rnn(embs_and_context, hidden_state)
        outputs = self.dense(outputs).swapaxes(0, 1)
        return outputs, hidden_state


class SEBlock(nn.HybridBlock):
    """mx.np spelled through `mx.` only."""
    def __init__(self, channels, reduction=4):
        super().__init__()
        self.fc1 = nn.Dense(channels // reduction)
        self.fc2 = nn.Dense(channels)

    def forward(self, x):
        w = x.mean(axis=(2, 3))
        w = mx.npx.relu(self.fc1(w))
        w = mx.npx.sigmoid(self.fc2(w))
        return x * mx.np.expand_dims(mx.np.expand_dims(w, -1), -1)


class BatchNormScratchLike(nn.Block):
    def __init__(self, num_features):
        super().__init__()
        self.gamma = self.params.get('gamma', shape=(1, num_features, 1, 1), init=init.One())
        self.beta = self.params.get('beta', shape=(1, num_features, 1, 1), init=init.Zero())

    def forward(self, X):
        mean = X.mean(axis=(0, 2, 3), keepdims=True)
        var = ((X - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True)
        X_hat = (X - mean) / np.sqrt(var + 1e-5)
        return self.gamma.data() * X_hat + self.beta.data()


class MLPHead(nn.Block):
    def __init__(self, hidden, outputs):
        super().__init__()
        self.hidden = nn.Dense(hidden, flatten=False)
        self.out = nn.Dense(outputs, flatten=False)

    def forward(self, X):
        X = X.reshape((-1, X.shape[-1]))
        H = np.maximum(self.hidden(X), 0)
        return npx.log_softmax(self.out(H)).reshape(-1, 2, 3)


class HybridNumpy(nn.HybridBlock):
    """hybrid_forward in NumPy mode: the namespaces through `F`."""
    def __init__(self):
        super().__init__()
        self.d = nn.Dense(4, flatten=False)

    def hybrid_forward(self, F, x):
        y = F.npx.relu(F.np.dot(self.d(x), F.np.ones((4, 2))))
        return y.reshape(-1, 2) + F.np.tanh(x).sum()
