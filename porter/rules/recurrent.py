"""Rules: RNN / LSTM / GRU (tuple outputs, torch axis order) and their one-step cells."""

from porter.rules.registry import module_rule

module_rule("torch.nn.RNN", runtime="RNN", layout="source", training=True, outputs="tuple")
module_rule("torch.nn.LSTM", runtime="LSTM", layout="source", training=True, outputs="tuple")
module_rule("torch.nn.GRU", runtime="GRU", layout="source", training=True, outputs="tuple")
module_rule("torch.nn.RNNCell", runtime="RNNCell", layout="source")
module_rule("torch.nn.LSTMCell", runtime="LSTMCell", layout="source", outputs="tuple")
module_rule("torch.nn.GRUCell", runtime="GRUCell", layout="source")
