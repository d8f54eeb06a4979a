"""Rules: normalization modules (BatchNorm*, SyncBatchNorm, InstanceNorm*, GroupNorm, LayerNorm, RMSNorm,
LocalResponseNorm) and their functional forms (F.batch_norm, F.instance_norm, F.group_norm, F.layer_norm,
F.rms_norm, F.local_response_norm, F.normalize)."""

from porter.rules.kernel_rows import translate_batch_norm
from porter.rules.registry import KEEPS_CHANNELS, function_rule, module_rule

# Channel-axis norms run channels-last and keep the input's rank. BatchNorm2d and BatchNorm3d take only batched
# images (torch raises on any other rank), so their result is one of rank 4 or 5 whatever porter knew of the input (a
# conv from a factory); BatchNorm1d takes (N, C) or (N, C, L), the instance norms unbatched images too (rank=None).
for _name, _rank in (("BatchNorm1d", None), ("BatchNorm2d", 4), ("BatchNorm3d", 5), ("SyncBatchNorm", None),
                     ("InstanceNorm1d", None), ("InstanceNorm2d", None), ("InstanceNorm3d", None)):
    module_rule(f"torch.nn.{_name}", runtime=_name, layout="channels_last", training=True, channels="num_features",
                rank=_rank)
# torchvision's batch norm with frozen statistics and affine buffers (detection backbones, timm's norm maps)
module_rule("torchvision.ops.FrozenBatchNorm2d", "torchvision.ops.misc.FrozenBatchNorm2d", runtime="FrozenBatchNorm2d",
            layout="channels_last", channels="num_features", rank=4)
module_rule("torch.nn.GroupNorm", runtime="GroupNorm", layout="channels_last", channels="num_channels")
module_rule("torch.nn.LocalResponseNorm", runtime="LocalResponseNorm", layout="channels_last",
            channels=KEEPS_CHANNELS)
# Trailing-dims norms compute in torch's own axis order.
module_rule("torch.nn.LayerNorm", runtime="LayerNorm", layout="source", takes_held_order=True)
module_rule("torch.nn.RMSNorm", runtime="RMSNorm", layout="source")

function_rule("torch.nn.functional.batch_norm", runtime="batch_norm",
              signature="(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, "
                        "eps=1e-05)",
              layout="channels_last", training_param="training", translate=translate_batch_norm)  # (kernel_rows.py)
function_rule("torch.nn.functional.instance_norm", runtime="instance_norm",
              signature="(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, "
                        "momentum=0.1, eps=1e-05)",
              layout="channels_last")
function_rule("torch.nn.functional.group_norm", runtime="group_norm",
              signature="(input, num_groups, weight=None, bias=None, eps=1e-05)", layout="channels_last")
function_rule("torch.nn.functional.local_response_norm", runtime="local_response_norm",
              signature="(input, size, alpha=0.0001, beta=0.75, k=1.0)", layout="channels_last", keeps_channels=True)
function_rule("torch.nn.functional.layer_norm", runtime="layer_norm",
              signature="(input, normalized_shape, weight=None, bias=None, eps=1e-05)", layout="source", same_rank=True)
function_rule("torch.nn.functional.rms_norm", runtime="rms_norm",
              signature="(input, normalized_shape, weight=None, eps=None)", layout="source", same_rank=True)
function_rule("torch.nn.functional.normalize", runtime="normalize",
              signature="(input, p=2.0, dim=1, eps=1e-12, out=None)", layout="any", axis_params=("dim",))
