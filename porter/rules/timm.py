"""Rules: timm's layer helpers that model code imports (`from timm.layers import DropPath, to_2tuple,
trunc_normal_`, also by their older `timm.models.layers` paths): ported to porter's runtime (porter/runtime/timm.py),
so the port needs no timm. `trunc_normal_` resolves to torch's `nn.init.trunc_normal_` (frontend/imports.py).

timm.models' helpers for its models' own methods, under the module paths model files import them from:
`checkpoint_seq` / `checkpoint` (activation checkpointing: the functions run in turn, the values unchanged),
`named_apply` (an init function over the named submodules), `feature_take_indices` (Python indices for
forward_intermediates); timm's TensorFlow-style initialisers `lecun_normal_`, `variance_scaling_`, `trunc_normal_tf_`.

Layout: DropPath / drop_path scale whole samples (batch axis 0): any layout. to_ntuple helpers and
feature_take_indices take Python values; checkpoint_seq / checkpoint hand x to the modules as they are ("any");
initialisers fill the variable they are handed (i.i.d. values: any layout).
"""

from porter.ir.values import python
from porter.rules.registry import Signature, function_rule, module_rule

module_rule("timm.layers.DropPath", runtime="DropPath", layout="any", training=True)
function_rule("timm.layers.drop_path", runtime="drop_path", layout="any", training_param="training",
              signature="(x, drop_prob=0.0, training=False, scale_by_keep=True)")
for _n in (1, 2, 3, 4):
    function_rule(f"timm.layers.to_{_n}tuple", runtime=f"to_{_n}tuple", layout="any", signature="(x)",
                  outputs="python")  # a tuple of Python values (`[int(x * dim) for x in to_2tuple(ratio)]`)
function_rule("timm.layers.to_ntuple", runtime="to_ntuple", layout="any", signature="(n)", outputs="python")

# timm/models/*.py import these from the package's private modules (`from ._manipulate import checkpoint_seq`) or
# its top (`from timm.models import checkpoint_seq`): the linker asks about the module path as written
for _module in ("timm.models._manipulate", "timm.models"):
    function_rule(f"{_module}.checkpoint_seq", runtime="checkpoint_seq", layout="any",
                  signature="(functions, x, every=1, flatten=False, skip_last=False, use_reentrant=None)")
    function_rule(f"{_module}.checkpoint", runtime="checkpoint", layout="any", signature="(function, *args)")
    function_rule(f"{_module}.named_apply", runtime="named_apply", layout="source", outputs="python",
                  signature="(fn, module, name='', depth_first=True, include_root=False)")
# timm's `get_device_dtype(self)` (a model's `reset_classifier` builds its new head on the device and dtype of the
# model's first parameter): the port's layers take the defaults (its variables have no torch device)
function_rule("timm.layers.get_device_dtype", runtime="get_device_dtype", layout="any", outputs="python",
              signature="(module, device=None, dtype=None)")
# timm's builder where a linked factory's call of it is not the plain construction frontend/timm_models.py reads
# (efficientnet.py's `model_cls` chosen at run time): the class built with the keyword arguments, no downloads
for _module in ("timm.models._builder", "timm.models"):
    function_rule(f"{_module}.build_model_with_cfg", runtime="build_model_with_cfg", layout="any", outputs="python",
                  signature="(model_cls, variant, pretrained=False, **kwargs)")
for _module in ("timm.models._features", "timm.models"):
    function_rule(f"{_module}.feature_take_indices", runtime="feature_take_indices", layout="source",
                  outputs="python", signature="(num_features, indices=None, as_set=False)")


def _initialiser(runtime, signature):
    """An initialiser filling the weight it is handed in place (its variable, whatever its layout: i.i.d. values)."""
    parsed = Signature.parse(signature)

    def translate(ctx, call):
        bound = call.bind(parsed)
        arguments = [f"{name}={ctx.plain(bound[name]).code}" for name in parsed.params if name in bound]
        return python(f"{ctx.runtime(runtime)}({', '.join(arguments)})")

    return translate


# timm's TensorFlow-style initialisers: the truncated normal bounds before scaling; variance scaling on torch's fans
function_rule("timm.layers.trunc_normal_tf_", layout="any", outputs="python",
              translate=_initialiser("init_trunc_normal_tf", "(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0)"))
function_rule("timm.layers.variance_scaling_", layout="any", outputs="python",
              translate=_initialiser("init_variance_scaling",
                                     "(tensor, scale=1.0, mode='fan_in', distribution='normal')"))
function_rule("timm.layers.lecun_normal_", layout="any", outputs="python",
              translate=_initialiser("init_lecun_normal", "(tensor)"))
