"""Rules: torch's autocast API as model code reads it (`with torch.amp.autocast(device_type=x.device.type,
enabled=False):` around a norm kept in float32, `torch.is_autocast_enabled()`, `torch.get_autocast_dtype("cuda")`:
timm's norm layers and fast_norm.py). The port runs under no torch autocast: Keras mixed precision is a dtype policy
its layers apply themselves, so autocast is never enabled (a static False: its `if` keeps one path), its context
changes nothing, and its dtype is the policy's compute dtype (runtime/autocast.py). Their arguments name torch
devices and dtypes, which the port has no use for: they are not carried over.

Layout "source": the arguments are Python values.
"""

from porter.ir.values import python
from porter.rules.registry import function_rule


def _without_arguments(runtime, static=None):
    def translate(ctx, call):
        return python(f"{ctx.runtime(runtime)}()", static=static)

    return translate


function_rule("torch.amp.autocast", "torch.autocast", "torch.amp.autocast_mode.autocast", "torch.cuda.amp.autocast",
              "torch.cpu.amp.autocast", translate=_without_arguments("autocast"), layout="source", outputs="python")
function_rule("torch.is_autocast_enabled", "torch.is_autocast_cpu_enabled", "torch.is_autocast_gpu_enabled",
              translate=_without_arguments("is_autocast_enabled", static=False), layout="source", outputs="python")
function_rule("torch.get_autocast_dtype", "torch.get_autocast_cpu_dtype", "torch.get_autocast_gpu_dtype",
              translate=_without_arguments("get_autocast_dtype"), layout="source", outputs="python")
