"""Rules: RNN / LSTM / GRU (tuple outputs, torch axis order) and their one-step cells."""

from porter.rules.registry import module_rule

# (output: the input's rank, batched or not; h_n, or an LSTM's (h_n, c_n): "state" items, (D * num_layers, N, H) of
# a batched input, their first dim known to be 1 where the constructor builds one unidirectional layer:
# passes/recurrent_states.py). A sequence-first layer handed `x.permute(1, 0, 2)` of a batch-first sequence scans it
# as it lies (`swapped=True`, swaps_batch_axis) and gives its output swapped alike: no transpose either way
module_rule("torch.nn.RNN", runtime="RNN", layout="source", training=True, outputs="tuple", items=("input", "state"),
            swaps_batch_axis=True)
module_rule("torch.nn.LSTM", runtime="LSTM", layout="source", training=True, outputs="tuple", items=("input", "states"),
            swaps_batch_axis=True)
module_rule("torch.nn.GRU", runtime="GRU", layout="source", training=True, outputs="tuple", items=("input", "state"),
            swaps_batch_axis=True)
module_rule("torch.nn.RNNCell", runtime="RNNCell", layout="source")
module_rule("torch.nn.LSTMCell", runtime="LSTMCell", layout="source", outputs="tuple")
module_rule("torch.nn.GRUCell", runtime="GRUCell", layout="source")
