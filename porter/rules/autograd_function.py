"""Rule: `torch.autograd.Function` subclasses (static `forward(ctx, ...)` / `backward(ctx, ...)`) become subclasses
of the runtime's `AutogradFunction`, whose `apply(*args)` runs `forward` under `tf.custom_gradient` with
`backward` as its gradient. The class is carried with its methods translated (their tensor arguments bound as
tensors); `ctx.save_for_backward`/`ctx.saved_tensors`, attributes on `ctx` and `ctx.needs_input_grad` work as in torch.
"""

from porter.rules.registry import function_rule

function_rule("torch.autograd.Function", runtime="AutogradFunction")
