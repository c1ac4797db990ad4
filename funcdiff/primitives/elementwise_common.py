"""What the elementwise primitive modules share: operand-kind checks and small rule helpers.

Binary primitives broadcast like numpy but require operands of one dtype;
``funcdiff.numpy`` promotes (and casts integers to float for float-only
functions) before binding. ``unary`` and ``binary`` declare a card through
``elementwise_cards`` and add a check of the operands' dtype kinds (``FLOAT``,
``NUMERIC``, ...; complex values are accepted only where the kind says so),
whose error says how to convert. Rules use ``const`` for constants, 0-d
arrays of the operand's dtype so that float32 programs stay float32,
``unbroadcast_ct`` to sum a broadcast cotangent back to an operand's shape,
and ``unary_batch`` as the batch rule of a one-operand primitive with params.
``scalar=math.sin`` names the Python-float function of a float64 card for
jit's all-scalar programs (``compiler.scalar``).
The primitives live in ``elementwise_arithmetic``, ``elementwise_logic`` and
``elementwise_math``; ``elementwise`` re-exports them.
"""

from __future__ import annotations

from funcdiff.compiler.scalar import scalar_function
from funcdiff.core import Primitive, bind, get_aval
from funcdiff.errors import DTypeError
from funcdiff.primitives import structural
from funcdiff.primitives.elementwise_cards import binary_elementwise, unary_elementwise


def unbroadcast_ct(ct, x):
    shape = x.aval.shape
    return ct if get_aval(ct).shape == shape else structural.unbroadcast(ct, shape)


def const(x, value):
    """``value`` as a numpy scalar of ``x``'s dtype (a Python float would be float64)."""
    dtype = getattr(x, "dtype", None)  # arrays, numpy scalars and tracers know it
    return (get_aval(x).dtype if dtype is None else dtype).type(value)


# Complex values are intermediates only (funcdiff.dtypes): arithmetic and exp/log accept
# them, float-only functions (comparisons of order, special functions, ...) do not.
FLOAT, NUMERIC, INTEGRAL, INTEGER, _ANY = "f", "iuf", "biu", "iu", "biuf"
INEXACT, ARITHMETIC = "fc", "iufc"
KIND_TEXT = {
    FLOAT: ("floating", "Convert integers first with convert_element_type(x, "
             "new_dtype=np.dtype('float64')); funcdiff.numpy does this for you."),
    INEXACT: ("floating or complex", "Convert integers first with convert_element_type(x, "
               "new_dtype=np.dtype('float64')); funcdiff.numpy does this for you."),
    NUMERIC: ("integer or floating", "Convert booleans first with convert_element_type."),
    ARITHMETIC: ("integer, floating or complex",
                  "Convert booleans first with convert_element_type."),
    INTEGRAL: ("boolean or integer", "Compare floats with ne(x, 0) first to get booleans."),
    INTEGER: ("integer", "Convert booleans first with convert_element_type; floats have no "
               "integer semantics here."),
}


def accepts(prim: Primitive, kinds: str) -> Primitive:
    """Wrap ``prim``'s abstract_eval with a check of its operands' dtype kinds."""
    if kinds == _ANY:
        return prim
    inner = prim.abstract_eval
    what, fix = KIND_TEXT[kinds]

    def abstract_eval(*avals, **params):
        for aval in avals:
            if aval.dtype.kind not in kinds:
                raise DTypeError(
                    f"the primitive {prim.name} needs {what} operands, but got "
                    f"{', '.join(a.str_short() for a in avals)}. {fix}")
        return inner(*avals, **params)
    prim.abstract_eval = abstract_eval
    return prim


def unary(name, impl, deriv=None, *, output_deriv=None, kinds=FLOAT, flops=1,
           nondifferentiable=False, singular=False, scalar=None):
    prim = unary_elementwise(name, impl, deriv, output_deriv=output_deriv,
                             nondifferentiable=nondifferentiable, flops=flops,
                             singular=singular)
    if scalar is not None:  # the Python-float function jit's scalar programs call
        prim.scalar_lowering = scalar_function(scalar)
    return accepts(prim, kinds)


def binary(name, impl, partials=None, *, kinds=_ANY, flops=1, nondifferentiable=False,
            result_dtype=None, singular=False, scalar=None):
    prim = binary_elementwise(name, impl, partials, nondifferentiable=nondifferentiable,
                              result_dtype=result_dtype, flops=flops, singular=singular)
    if scalar is not None:
        prim.scalar_lowering = scalar_function(scalar)
    return accepts(prim, kinds)


def unary_batch(prim):
    return lambda vals, dims, **params: (bind(prim, vals[0], **params), dims[0])
