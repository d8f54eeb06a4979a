"""Rules: Gluon's recurrent layers and cells (`mxnet.gluon.rnn.*`) -> porter/runtime/gluon_recurrent.py.

The fused layers (`rnn.LSTM/GRU/RNN`) compute in Gluon's own order (layout 'TNC' or 'NTC' as constructed) and
return the output alone, or (output, states) when the call hands them begin states ("tensor_or_tuple"). Cells
return (output, states) when stepped; their `begin_state`/`unroll` calls are method calls on the layer.
"""

from porter.rules.registry import module_rule

GLUON_RNN = "mxnet.gluon.rnn."

for _name in ("LSTM", "GRU", "RNN"):
    module_rule(GLUON_RNN + _name, runtime=f"Gluon{_name}", layout="source", training=True,
                outputs="tensor_or_tuple")
for _name in ("LSTMCell", "GRUCell", "RNNCell", "BidirectionalCell", "ResidualCell"):
    module_rule(GLUON_RNN + _name, runtime=f"Gluon{_name}", layout="source", outputs="tuple")
for _name in ("DropoutCell", "ZoneoutCell"):
    module_rule(GLUON_RNN + _name, runtime=f"Gluon{_name}", layout="source", outputs="tuple", training=True)
module_rule(GLUON_RNN + "SequentialRNNCell", GLUON_RNN + "HybridSequentialRNNCell", runtime="GluonSequentialRNNCell",
            layout="source", outputs="tuple")
