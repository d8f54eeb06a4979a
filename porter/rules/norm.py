"""Rules: normalization modules (BatchNorm*, SyncBatchNorm, InstanceNorm*, GroupNorm, LayerNorm, RMSNorm,
LocalResponseNorm) and their functional forms (F.batch_norm, F.instance_norm, F.group_norm, F.layer_norm,
F.rms_norm, F.local_response_norm, F.normalize)."""

from porter.rules.registry import function_rule, module_rule

# Channel-axis norms run channels-last; all of them keep the input's rank (rank=None).
module_rule("torch.nn.BatchNorm1d", runtime="BatchNorm1d", layout="channels_last", training=True)
module_rule("torch.nn.BatchNorm2d", runtime="BatchNorm2d", layout="channels_last", training=True)
module_rule("torch.nn.BatchNorm3d", runtime="BatchNorm3d", layout="channels_last", training=True)
module_rule("torch.nn.SyncBatchNorm", runtime="SyncBatchNorm", layout="channels_last", training=True)
module_rule("torch.nn.InstanceNorm1d", runtime="InstanceNorm1d", layout="channels_last", training=True)
module_rule("torch.nn.InstanceNorm2d", runtime="InstanceNorm2d", layout="channels_last", training=True)
module_rule("torch.nn.InstanceNorm3d", runtime="InstanceNorm3d", layout="channels_last", training=True)
module_rule("torch.nn.GroupNorm", runtime="GroupNorm", layout="channels_last")
module_rule("torch.nn.LocalResponseNorm", runtime="LocalResponseNorm", layout="channels_last")
# Trailing-dims norms compute in torch's own axis order.
module_rule("torch.nn.LayerNorm", runtime="LayerNorm", layout="source")
module_rule("torch.nn.RMSNorm", runtime="RMSNorm", layout="source")

function_rule("torch.nn.functional.batch_norm", runtime="batch_norm",
              signature="(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, "
                        "eps=1e-05)",
              layout="channels_last", training_param="training")
function_rule("torch.nn.functional.instance_norm", runtime="instance_norm",
              signature="(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, "
                        "momentum=0.1, eps=1e-05)",
              layout="channels_last")
function_rule("torch.nn.functional.group_norm", runtime="group_norm",
              signature="(input, num_groups, weight=None, bias=None, eps=1e-05)", layout="channels_last")
function_rule("torch.nn.functional.local_response_norm", runtime="local_response_norm",
              signature="(input, size, alpha=0.0001, beta=0.75, k=1.0)", layout="channels_last")
function_rule("torch.nn.functional.layer_norm", runtime="layer_norm",
              signature="(input, normalized_shape, weight=None, bias=None, eps=1e-05)", layout="source", same_rank=True)
function_rule("torch.nn.functional.rms_norm", runtime="rms_norm",
              signature="(input, normalized_shape, weight=None, eps=None)", layout="source", same_rank=True)
function_rule("torch.nn.functional.normalize", runtime="normalize",
              signature="(input, p=2.0, dim=1, eps=1e-12, out=None)", layout="any", axis_params=("dim",))
