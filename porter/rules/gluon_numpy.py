"""Rules: MXNet's NumPy interface as Gluon 2 code calls it (`from mxnet import np, npx; npx.set_np()`: d2l's MXNet
edition): the `mxnet.np` functions (also spelled `mxnet.numpy`, or `F.np` in hybrid_forward), the `mxnet.npx`
operators (`mxnet.numpy_extension`, `F.npx`) and, in porter/rules/gluon_numpy_methods.py, the np.ndarray
methods.

NumPy's operators are torch's under other parameter names (`axis` for `dim`, `keepdims` for `keepdim`, `a` for
`input`) for elementwise math, reductions, reshape, concatenate/stack, expand_dims, where, clip, matmul and einsum:
those calls are re-bound and translated by the torch rule, so their layout handling is the same. Where NumPy differs
from torch (np.dot on N-D operands, float32 creation defaults, np.split's sections, np.repeat without an axis, a full
reduction's rank-0 result) the rule calls porter/runtime/gluon_numpy.py or the legacy Gluon op of the same meaning.
"""

from porter.ir.values import tensor
from porter.rules.gluon_routing import via_rule
from porter.rules.registry import Signature, function_rule

# hybrid_forward's `F` in NumPy mode reaches them as `F.np.dot`, `F.npx.relu` (F reads as mxnet.ndarray)
NP = ("mxnet.np.", "mxnet.numpy.", "mxnet.ndarray.np.")
NPX = ("mxnet.npx.", "mxnet.numpy_extension.", "mxnet.ndarray.npx.")
LEGACY = "mxnet.ndarray."
NUMPY_METHODS = "mxnet.np.ndarray."  # the np.ndarray methods' rules (gluon_numpy_methods.py)


def np_names(name, spaces=NP):
    """Every canonical name of `name` in one of mxnet's NumPy namespaces."""
    return tuple(space + name for space in spaces)


def _register(name, spaces, **kwargs):
    return function_rule(*np_names(name, spaces), **kwargs)


# elementwise math: torch's rules (layouts unified and kept)
_UNARY = {"tanh": "tanh", "sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log", "sqrt": "sqrt",
          "abs": "abs", "absolute": "abs", "sinh": "sinh", "cosh": "cosh", "arcsin": "asin", "arccos": "acos",
          "arctan": "atan", "square": "square", "sign": "sign", "floor": "floor", "ceil": "ceil",
          "negative": "neg", "reciprocal": "reciprocal", "log1p": "log1p", "expm1": "expm1", "log2": "log2",
          "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "logical_not": "logical_not",
          "trunc": "trunc", "fix": "trunc"}
for _name, _torch in _UNARY.items():
    _register(_name, NP, translate=via_rule(f"torch.{_torch}", "(x, out=None, **kwargs)"), layout="any")
_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
           "maximum": "maximum", "minimum": "minimum", "floor_divide": "floor_divide", "mod": "remainder",
           "remainder": "remainder", "fmod": "fmod", "equal": "eq", "not_equal": "ne", "less": "lt",
           "greater": "gt", "less_equal": "le", "greater_equal": "ge", "logical_and": "logical_and",
           "logical_or": "logical_or", "logical_xor": "logical_xor", "arctan2": "atan2"}
for _name, _torch in _BINARY.items():
    _register(_name, NP, translate=via_rule(f"torch.{_torch}", "(x1, x2, out=None, **kwargs)", positional=2),
              layout="any")


def translate_power(ctx, call):
    """np.power(x1, x2): elementwise, either side a Python number (`np.power(10000, exponents)`)."""
    bound = call.bind(Signature.parse("(x1, x2, out=None)"))
    (x1, x2), layout, rank = ctx.unify([bound["x1"], bound["x2"]])
    return tensor(f"{ctx.runtime('np_power')}({x1.code}, {x2.code})", rank, layout)


_register("power", NP, translate=translate_power, layout="any")
_register("float_power", NP, translate=translate_power, layout="any")

# reductions: torch's (a full reduction is rank 0 in NumPy mode, as in torch)
_REDUCE = "(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None)"
_KEYS = {"axis": "dim", "keepdims": "keepdim"}
for _name, _torch in (("sum", "sum"), ("mean", "mean"), ("prod", "prod"), ("max", "amax"), ("amax", "amax"),
                      ("min", "amin"), ("amin", "amin"), ("all", "all"), ("any", "any")):
    _register(_name, NP, translate=via_rule(f"torch.{_torch}", _REDUCE, _KEYS), layout="any")
for _name in ("argmax", "argmin"):  # int64 indices, as torch's
    _register(_name, NP, translate=via_rule(f"torch.{_name}", "(a, axis=None, out=None, keepdims=False)", _KEYS),
              layout="any")
for _name in ("std", "var"):  # NumPy's ddof=0: the biased estimate
    _register(_name, NP, translate=via_rule(f"torch.{_name}", "(a, axis=None, dtype=None, out=None, ddof=0, "
                                                               "keepdims=False)", _KEYS, refused={"ddof": "0"},
                                            defaults={"unbiased": "False"}), layout="any")

# shapes
_register("reshape", NP, translate=via_rule("torch.reshape", "(a, newshape, order='C')", {"newshape": "shape"},
                                            refused={"order": "'C'"}), layout="source")
_register("transpose", NP, translate=via_rule(LEGACY + "transpose", "(a, axes=None)", {"axes": "axes"}),
          layout="source")
_register("swapaxes", NP, translate=via_rule("torch.swapaxes", "(a, axis1, axis2)", positional=3), layout="source")
_register("expand_dims", NP, translate=via_rule("torch.unsqueeze", "(a, axis)", {"axis": "dim"}), layout="source",
          rank_delta=1)
_register("squeeze", NP, translate=via_rule(LEGACY + "squeeze", "(a, axis=None)", {"axis": "axis"}),
          layout="source")
_register("ravel", NP, translate=via_rule("torch.flatten", "(x, order='C')", refused={"order": "'C'"}),
          layout="any")
_register("concatenate", NP, translate=via_rule("torch.cat", "(seq, axis=0, out=None)", {"axis": "dim"},
                                                defaults={"dim": "0"}), layout="any")
_register("stack", NP, translate=via_rule("torch.stack", "(arrays, axis=0, out=None)", {"axis": "dim"},
                                          defaults={"dim": "0"}), layout="any")
# without an axis the flattened array, as the legacy op
_register("repeat", NP, translate=via_rule(LEGACY + "repeat", "(a, repeats, axis=None)", {"axis": "axis"},
                                           positional=2), layout="source")
_register("split", NP, runtime="np_split", signature="(ary, indices_or_sections, axis=0)", layout="source",
          outputs="tuple")
_register("where", NP, translate=via_rule("torch.where", "(condition, x=None, y=None)", positional=3),
          layout="any")
_register("clip", NP, translate=via_rule("torch.clamp", "(a, a_min, a_max, out=None)", positional=3),
          layout="any")
_register("matmul", NP, translate=via_rule("torch.matmul", "(a, b, out=None)", positional=2), layout="source")
_register("einsum", NP, translate=via_rule("torch.einsum", "(subscripts, *operands, out=None, optimize=False)",
                                           positional=1), layout="source")
for _name in ("zeros_like", "ones_like", "full_like"):
    _register(_name, NP, runtime=f"np_{_name}", layout="source",
              signature=f"(a, {'fill_value, ' if _name == 'full_like' else ''}dtype=None, order='C', ctx=None, "
                        "out=None)")
for _name, _signature in (("tile", "(A, reps)"), ("broadcast_to", "(array, shape)"), ("flip", "(m, axis=None)"),
                          ("cumsum", "(a, axis=None, dtype=None, out=None)"), ("roll", "(a, shift, axis=None)"),
                          ("take", "(a, indices, axis=None, mode='raise', out=None)"), ("sort", "(a, axis=-1)"),
                          ("argsort", "(a, axis=-1)")):
    _register(_name, NP, runtime=f"np_{_name}", signature=_signature, layout="source",
              keeps_dtype=_name != "argsort")  # the others move or sum elements: an int array stays int
_register("meshgrid", NP, runtime="np_meshgrid", signature="(*xi, indexing='xy')", layout="source",
          outputs="tuple")
_register("tril", NP, translate=via_rule("torch.tril", "(m, k=0)", {"k": "diagonal"}), layout="source")
_register("outer", NP, translate=via_rule("torch.outer", "(a, b, out=None)", positional=2), layout="source")


def translate_dot(ctx, call):
    """np.dot(a, b): NumPy's contraction (the last axis of a with the second-to-last of b), in source order."""
    bound = call.bind(Signature.parse("(a, b, out=None)"))
    a, b = bound["a"], bound["b"]
    rank = a.rank + b.rank - 2 if a.rank is not None and b.rank is not None and a.rank and b.rank else None
    if a.rank == 0 or b.rank == 0:
        rank = max(a.rank, b.rank)
    return tensor(f"{ctx.runtime('np_dot')}({ctx.plain(a).code}, {ctx.plain(b).code})", rank)


_register("dot", NP, translate=translate_dot, layout="source")

# creation: float32 unless told (mxnet's default); `ctx=` ignored
_CREATION = {"zeros": "(shape, dtype=None, order='C', ctx=None, device=None)",
             "ones": "(shape, dtype=None, order='C', ctx=None, device=None)",
             "empty": "(shape, dtype=None, order='C', ctx=None, device=None)",
             "full": "(shape, fill_value, dtype=None, order='C', ctx=None, device=None, out=None)",
             "arange": "(start, stop=None, step=1, dtype=None, ctx=None, device=None)",
             "array": "(object, dtype=None, ctx=None, device=None)",
             "linspace": "(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None)",
             "eye": "(N, M=None, k=0, dtype=None, ctx=None, device=None)"}
for _name, _signature in _CREATION.items():
    _register(_name, NP, runtime="np_zeros" if _name == "empty" else f"np_{_name}", signature=_signature,
              layout="source")
for _name, _signature in (("normal", "(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None)"),
                          ("uniform", "(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None)"),
                          ("randn", "(*size, **kwargs)"), ("rand", "(*size, **kwargs)")):
    _register(f"random.{_name}", NP, runtime=f"np_random_{_name}", signature=_signature, layout="source")
_register("linalg.norm", NP, runtime="np_linalg_norm", signature="(x, ord=None, axis=None, keepdims=False)",
          layout="source")
