"""Gradient clipping calls -> train_support.clip_grad_norm / clip_grad_value, applied after the all-reduce.

Keras' `global_clipnorm=` clips each replica's gradients before they are summed (TPU.md §7); torch's DDP clips the
summed gradients, so train_step all-reduces first and then clips.
"""

from porter.training.plan import Construct, Setting
from porter.training.values import keyword_args, literal, positional_args

CLIPPERS = {
    "torch.nn.utils.clip_grad_norm_": ("clip_grad_norm", ["parameters", "max_norm", "norm_type"],
                                       {"norm_type": 2.0}),
    "torch.nn.utils.clip_grad_norm": ("clip_grad_norm", ["parameters", "max_norm", "norm_type"],
                                      {"norm_type": 2.0}),
    "torch.nn.utils.clip_grad.clip_grad_norm_": ("clip_grad_norm", ["parameters", "max_norm", "norm_type"],
                                                 {"norm_type": 2.0}),
    "torch.nn.utils.clip_grad_value_": ("clip_grad_value", ["parameters", "clip_value"], {}),
    "torch.nn.utils.clip_grad.clip_grad_value_": ("clip_grad_value", ["parameters", "clip_value"], {}),
}


def read_clip(canonical, call, scope, values, index, plan):
    function, names, defaults = CLIPPERS[canonical]
    line = index.line(call)
    given = dict(zip(names, positional_args(call)))
    given.update(keyword_args(call))
    result = Construct(canonical, function, [], line, index.source.code_of(call).strip())
    for key in names[1:]:
        if key in given:
            value = values.translate(given[key], scope)
            if value is None:
                if key in defaults:
                    plan.note(line, f"{canonical}: {key} cannot be read statically; torch's default is used")
                    value = literal(defaults[key])
                else:
                    plan.note(line, f"{canonical}: {key} cannot be read statically; clipping is left out")
                    return None
        elif key in defaults:
            continue
        else:
            plan.note(line, f"{canonical}: {key} is missing; clipping is left out")
            return None
        result.settings.append(Setting(key, value))
    for key in given:
        if key not in names:
            plan.note(line, f"{canonical}: argument {key}= is not translated")
    return result
