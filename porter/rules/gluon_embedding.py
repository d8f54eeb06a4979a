"""Rule: gluon.nn.Embedding -> porter/runtime/gluon_embedding.py (Gluon's order; the result has one axis more)."""

from porter.rules.registry import module_rule

module_rule("mxnet.gluon.nn.Embedding", runtime="GluonEmbedding", layout="source", rank_delta=1)
