"""Rules: what torch asks of a dtype, on the port's dtypes (TensorFlow DTypes, which name these differently).

`x.is_floating_point()` / `torch.is_floating_point(x)`, `x.is_complex()` / `torch.is_complex(x)`, `x.is_signed()` and
`x.element_size()` read the tensor's dtype; a dtype's own properties (`dtype.is_floating_point`, `dtype.is_signed`,
`dtype.itemsize`, timm's `_freq_buffer_dtype`) go through the runtime's `dtype_property` where the dtype is known
only at run time, and are decided here where it is a torch constant (`torch.float16.itemsize` is 2).
"""

from porter.ir.values import python
from porter.rules.registry import function_rule

# torch.dtype properties a TensorFlow DType has under another name (or not at all): read through the runtime
DTYPE_PROPERTIES = ("is_floating_point", "is_signed", "itemsize")

# torch dtype -> (is_floating_point, is_complex, is_signed, itemsize), as torch 2.x gives them
DTYPE_FACTS = {
    "float32": (True, False, True, 4), "float": (True, False, True, 4), "float64": (True, False, True, 8),
    "double": (True, False, True, 8), "float16": (True, False, True, 2), "half": (True, False, True, 2),
    "bfloat16": (True, False, True, 2), "int64": (False, False, True, 8), "long": (False, False, True, 8),
    "int32": (False, False, True, 4), "int": (False, False, True, 4), "int16": (False, False, True, 2),
    "short": (False, False, True, 2), "int8": (False, False, True, 1), "uint8": (False, False, False, 1),
    "bool": (False, False, False, 1), "complex64": (False, True, True, 8), "cfloat": (False, True, True, 8),
    "complex128": (False, True, True, 16), "cdouble": (False, True, True, 16),
}
_FACT_INDEX = {"is_floating_point": 0, "is_complex": 1, "is_signed": 2, "itemsize": 3}


def constant_dtype_property(canonical):
    """The value of `torch.<dtype>.<property>` (`torch.float16.itemsize` -> 2), or None for any other name."""
    parts = canonical.split(".")
    if len(parts) != 3 or parts[0] != "torch" or parts[1] not in DTYPE_FACTS or parts[2] not in _FACT_INDEX:
        return None
    return DTYPE_FACTS[parts[1]][_FACT_INDEX[parts[2]]]


def dtype_property_value(ctx, dtype_code, name):
    """`<dtype>.<name>` for a dtype known at run time (a TensorFlow DType in the port)."""
    return python(f"{ctx.runtime('dtype_property')}({dtype_code}, {name!r})")


def _of_dtype(name):
    def translate(ctx, call):
        value = ctx.plain(call.all_args()[0])
        return dtype_property_value(ctx, f"{value.code}.dtype", name)

    return translate


def translate_element_size(ctx, call):
    return dtype_property_value(ctx, f"{ctx.plain(call.all_args()[0]).code}.dtype", "itemsize")


function_rule("Tensor.is_floating_point", "torch.is_floating_point", translate=_of_dtype("is_floating_point"),
              layout="any", outputs="python")
function_rule("Tensor.is_complex", "torch.is_complex", translate=_of_dtype("is_complex"), layout="any",
              outputs="python")
function_rule("Tensor.is_signed", translate=_of_dtype("is_signed"), layout="any", outputs="python")
function_rule("Tensor.element_size", translate=translate_element_size, layout="any", outputs="python")
