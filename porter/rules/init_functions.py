"""Rules: torch.nn.init's in-place initialisers (`nn.init.kaiming_normal_(self.conv.weight, mode="fan_out")`).

Each takes the weight in torch's order and assigns it where the port holds it (porter/runtime/helpers.py: the fans
of a convolution's kernel are read in torch's order, the values drawn in its own). One rule per initialiser, so a
reference to one carried over untranslated (a helper's default `init=nn.init.kaiming_normal_`) gets the runtime's
name as every other rule's name does (codegen/emit.py's renamer).
"""

from porter.ir.values import python
from porter.rules.registry import function_rule

# torch.nn.init name -> the runtime function assigning it in place
INITIALISERS = {
    "xavier_uniform_": "init_xavier_uniform", "xavier_normal_": "init_xavier_normal",
    "kaiming_uniform_": "init_kaiming_uniform", "kaiming_normal_": "init_kaiming_normal",
    "normal_": "init_normal", "uniform_": "init_uniform", "constant_": "init_constant", "zeros_": "init_zeros",
    "ones_": "init_ones", "trunc_normal_": "init_trunc_normal", "orthogonal_": "init_orthogonal",
    "eye_": "init_eye",
}


def translate_initialiser(ctx, call):
    """The runtime initialiser called with the arguments in torch's order; it returns nothing a model reads."""
    runtime = INITIALISERS[call.canonical.rsplit(".", 1)[1]]
    arguments = ctx.join_args([ctx.plain(value) for value in call.all_args()],
                              {name: ctx.plain(value) for name, value in call.kwargs.items()})
    return python(f"{ctx.runtime(runtime)}({arguments})")


for _name, _runtime in INITIALISERS.items():
    function_rule(f"torch.nn.init.{_name}", runtime=_runtime, translate=translate_initialiser)
