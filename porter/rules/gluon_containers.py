"""Rules: Gluon's contrib.nn containers -> porter/runtime/gluon_containers.py: HybridConcurrent/Concurrent (children
side by side on the same input, outputs concatenated on `axis`; channels-last in and out, each child converted as
it needs) and Identity."""

from porter.rules.registry import module_rule

GLUON_CONTRIB_NN = "mxnet.gluon.contrib.nn."

module_rule(GLUON_CONTRIB_NN + "HybridConcurrent", GLUON_CONTRIB_NN + "Concurrent", runtime="GluonConcurrent",
            layout="channels_last")
module_rule(GLUON_CONTRIB_NN + "Identity", runtime="GluonIdentity", layout="any")
