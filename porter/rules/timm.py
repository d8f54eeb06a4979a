"""Rules: timm's layer helpers that model code imports (`from timm.layers import DropPath, to_2tuple,
trunc_normal_`, also by their older `timm.models.layers` paths): ported to porter's runtime (porter/runtime/timm.py),
so the port needs no timm. `trunc_normal_` resolves to torch's `nn.init.trunc_normal_` (frontend/imports.py).

Layout: DropPath / drop_path scale whole samples (batch axis 0): any layout. to_ntuple helpers take Python values.
"""

from porter.rules.registry import function_rule, module_rule

module_rule("timm.layers.DropPath", runtime="DropPath", layout="any", training=True)
function_rule("timm.layers.drop_path", runtime="drop_path", layout="any", training_param="training",
              signature="(x, drop_prob=0.0, training=False, scale_by_keep=True)")
for _n in (1, 2, 3, 4):
    function_rule(f"timm.layers.to_{_n}tuple", runtime=f"to_{_n}tuple", layout="any", signature="(x)")
function_rule("timm.layers.to_ntuple", runtime="to_ntuple", layout="any", signature="(n)")
