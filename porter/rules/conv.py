"""Rules: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their functional forms (all channels-last). The functional
convolutions' `kernel_param` takes a weight held as a Conv layer stores its kernel (k..., I/g, O) as it is, wrapped in
the runtime's TorchKernel (a Conv subclass's forward computing on `self.weight`: weight standardisation)."""

from porter.rules.registry import function_rule, module_rule

CONV_SIGNATURE = "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)"
CONV_TRANSPOSE_SIGNATURE = "(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)"

for _kind in ("Conv", "ConvTranspose"):
    for _dims in (1, 2, 3):
        module_rule(f"torch.nn.{_kind}{_dims}d", runtime=f"{_kind}{_dims}d", layout="channels_last", rank=_dims + 2,
                    channels="out_channels")

# torch's own base of the convolutions, derived from by classes with a forward of their own (CondConv): its
# constructor takes torch's full signature; the rank is the kernel size's (passes/conv_subclasses.py)
module_rule("torch.nn._ConvNd", runtime="ConvNd", layout="channels_last", channels="out_channels")

function_rule("torch.nn.functional.conv1d", "torch.conv1d", runtime="conv1d", signature=CONV_SIGNATURE,
              layout="channels_last", rank=3, kernel_param="weight")
function_rule("torch.nn.functional.conv2d", "torch.conv2d", runtime="conv2d", signature=CONV_SIGNATURE,
              layout="channels_last", rank=4, kernel_param="weight")
function_rule("torch.nn.functional.conv3d", "torch.conv3d", runtime="conv3d", signature=CONV_SIGNATURE,
              layout="channels_last", rank=5, kernel_param="weight")
function_rule("torch.nn.functional.conv_transpose1d", "torch.conv_transpose1d", runtime="conv_transpose1d",
              signature=CONV_TRANSPOSE_SIGNATURE, layout="channels_last", rank=3)
function_rule("torch.nn.functional.conv_transpose2d", "torch.conv_transpose2d", runtime="conv_transpose2d",
              signature=CONV_TRANSPOSE_SIGNATURE, layout="channels_last", rank=4)
function_rule("torch.nn.functional.conv_transpose3d", "torch.conv_transpose3d", runtime="conv_transpose3d",
              signature=CONV_TRANSPOSE_SIGNATURE, layout="channels_last", rank=5)
