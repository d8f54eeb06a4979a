"""Rules: calls that do nothing to the model's computation.

torchvision's model constructors call `_log_api_usage_once(self)` (PyTorch's API-usage telemetry); the port has no
such telemetry, so the call becomes `None` and, as a statement, a comment naming the dropped call.
`Variable(x)` (pre-0.4 autograd) is `x` itself, and so is `torch.compile(fn_or_module, **options)`: TensorFlow
compiles the port itself (tf.function, jit_compile=True in train_tpu.py). `torch.jit.annotate(type, value)` (a
TorchScript type hint, `torch.jit.annotate(List[Tensor], [])`) is `value`, as `typing.cast(type, value)` is (MONAI's
`return cast(torch.Tensor, self.project_out(...))`).
"""

from porter.ir.values import python
from porter.rules.registry import function_rule


def translate_no_effect(ctx, call):
    return python("None")


function_rule("torchvision.utils._log_api_usage_once", "torch._C._log_api_usage_once",
              translate=translate_no_effect, layout="source")


def translate_identity(ctx, call):
    arguments = call.all_args()
    return arguments[0] if arguments else python("None")


function_rule("torch.autograd.Variable", "torch.autograd.variable.Variable", translate=translate_identity,
              layout="any")
function_rule("torch.compile", translate=translate_identity, layout="any")


def translate_annotate(ctx, call):
    arguments = call.all_args()
    value = arguments[1] if len(arguments) > 1 else call.kwargs.get("the_value", call.kwargs.get("val"))
    return value if value is not None else python("None")


function_rule("torch.jit.annotate", "typing.cast", translate=translate_annotate, layout="any")
