"""Elementwise primitives: casts and iota, and the address of the whole elementwise family.

Every elementwise operation and primitive is importable from here; each is
defined in the module of its concept and re-exported: ``elementwise_arithmetic``
(neg, add, sub, mul, safe_mul, div, rem, max, min, floor, ceil, round),
``elementwise_logic`` (the comparisons, and/or/xor/not, is_finite and select),
``elementwise_math`` (sign, abs, exponentials, logarithms, pow,
integer_pow, roots, trigonometric, hyperbolic, logistic and special
functions) and ``elementwise_bits`` (integer shifts, gcd and lcm; frexp,
ldexp, nextafter and spacing), with the operand-kind checks and rule helpers they
share in ``elementwise_common``.

Defined here: ``convert_element_type``, the cast between dtypes (numpy
``astype`` semantics; float -> float, float -> complex and complex -> complex
carry a tangent, casts to or from integers and booleans have a zero
derivative, complex -> real is an error), and ``iota``, the ramp 0, 1, ...
along one axis, which has no operands and no derivative.

The operations ``abs``, ``round``, ``pow``, ``max`` and ``min`` shadow Python
builtins inside this module on purpose (they are the JAX lax names).
"""

from __future__ import annotations

import numpy as np

from funcdiff.backends import as_array
from funcdiff import roles
from funcdiff import dtypes
from funcdiff.compiler.lowerings import lower_convert
from funcdiff.core import Primitive, ShapedArray, Zero, get_aval, tangent_aval
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError
from funcdiff.passes import traits as passes
from funcdiff.passes.rules import defined_by, identity, rewrite
from funcdiff.primitives import complex_ops
from funcdiff.primitives.cards import nbytes
from funcdiff.primitives.elementwise_common import (  # noqa: F401
    _ANY, ARITHMETIC, FLOAT, INEXACT, INTEGRAL, KIND_TEXT, NUMERIC, accepts, binary,
    const, unary, unary_batch, unbroadcast_ct)
from funcdiff.primitives.elementwise_logic import (  # noqa: F401
    and_, and_p, eq, eq_p, ge, ge_p, gt, gt_p, is_finite, is_finite_p, le, le_p, lt, lt_p, ne,
    ne_p, not_, not_p, or_, or_p, select, select_p, xor, xor_p, select_abstract_eval,
    select_cost, select_jvp, select_transpose)
from funcdiff.primitives.elementwise_arithmetic import (  # noqa: F401
    add, add_p, ceil, ceil_p, div, div_p, floor, floor_p, max, max_p, min, min_p, mul, mul_p, neg,
    neg_p, rem, rem_p, round, round_p, safe_mul, safe_mul_p, sub, sub_p, add_jvp, add_transpose,
    balanced_eq, div_impl, div_transpose, mul_transpose, safe_mul_impl, safe_mul_transpose,
    sub_jvp, sub_transpose)
from funcdiff.primitives.elementwise_math import (  # noqa: F401
    abs, abs_p, acos, acos_p, acosh, acosh_p, asin, asin_p, asinh, asinh_p, atan, atan2, atan2_p,
    atan_p, atanh, atanh_p, bessel_i, bessel_i_p, bessel_i0, bessel_i0_p, bessel_i1,
    bessel_i1_p, bessel_i_derivative, bessel_i_of_order, cbrt, cbrt_p, cos,
    cos_p, cosh, cosh_p, digamma, digamma_p, erf, erf_inv, erf_inv_p, erf_p, erfc, erfc_p, exp,
    exp2, exp2_p, exp_p, expm1, expm1_p, hypot, hypot_p, integer_pow, integer_pow_p, lgamma,
    lgamma_p, logaddexp, logaddexp_p, logaddexp2, logaddexp2_p, log, log10,
    log10_p, log1p, log1p_p, log2, log2_p, log_p, logistic, logistic_p, polygamma, polygamma_p, pow,
    pow_p, rsqrt, rsqrt_p, sign, sign_p, sin, sin_p, sinc, sinc_p, sinh, sinh_p, sqrt, sqrt_p,
    tan, tan_p, tanh,
    tanh_p, TWO_OVER_SQRT_PI, atan2_denominator, gaussian, integer_pow_abstract_eval,
    integer_pow_cost, integer_pow_derivative, integer_pow_jvp, integer_pow_vjp, logistic_impl,
    one_minus_square, ordered_unary, pow_d_base, pow_d_exponent)
from funcdiff.primitives.elementwise_bits import (  # noqa: F401
    frexp, frexp_p, gcd, gcd_p, lcm, lcm_p, ldexp, ldexp_p, nextafter, nextafter_p, shift_left,
    shift_left_p, shift_right, shift_right_p, spacing, spacing_p)

# --- convert_element_type ---------------------------------------------------------

convert_element_type_p = Primitive("convert_element_type")


def _convert_impl(x, *, new_dtype):
    x = as_array(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":  # numpy would drop the imaginary part
        _convert_abstract_eval(get_aval(x), new_dtype=new_dtype)
    return x.astype(new_dtype, copy=False)


convert_element_type_p.impl = _convert_impl


def _convert_abstract_eval(x, *, new_dtype):
    if not isinstance(new_dtype, np.dtype):
        raise InvalidArgumentError(
            f"convert_element_type needs new_dtype as a numpy.dtype, got {new_dtype!r}; "
            "pass np.dtype(...).")
    new_dtype = dtypes.check_dtype(new_dtype, "convert_element_type's result",
                                   allow_complex=True)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        raise DTypeError(
            f"convert_element_type cannot cast the complex {x.str_short()} to {new_dtype}: "
            "that would drop the imaginary part silently. Take fnp.real(z) (or fnp.abs(z)) "
            "explicitly.")
    return ShapedArray(x.shape, new_dtype)


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if dtypes.is_inexact(new_dtype) and dtypes.is_inexact(get_aval(x).dtype):
        return out, convert_element_type_p.bind(t, new_dtype=new_dtype)
    return out, Zero(tangent_aval(get_aval(out)))  # to integer/bool: zero tangent


def _convert_transpose(ct, x, *, new_dtype):
    if dtypes.is_complex(new_dtype) and not dtypes.is_complex(x.aval.dtype):
        # real -> complex embeds R in C; its transpose keeps the real part
        ct = complex_ops.real(ct)
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype)]


def _convert_cost(x, *, new_dtype):
    return {"flops": x.size, "bytes": nbytes(x) + x.size * new_dtype.itemsize}


def _convert_scalar(ns, eqn, args, temp):
    # between the dtypes of Python-float programs: float64 and bool
    if eqn.outvars[0].aval.dtype == np.bool_:
        return f"({args[0]} != 0.0)"
    return f"{ns.add('f', float)}({args[0]})"


convert_element_type_p.abstract_eval = _convert_abstract_eval
convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.transpose = _convert_transpose  # reached only float -> float
convert_element_type_p.linear = True
convert_element_type_p.batch = unary_batch(convert_element_type_p)
convert_element_type_p.cost = _convert_cost
convert_element_type_p.lowering = lower_convert
convert_element_type_p.scalar_lowering = _convert_scalar
roles.CONVERT.fill(convert_element_type_p)
convert_element_type_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_FROM_INTEGERS}


def _exact_round_trip(rw, eqn, there):
    """x itself for convert(convert(x)) through a float at least as wide as x's."""
    x, mid = there.invars[0], there.outvars[0].aval.dtype
    if (x.aval.dtype == eqn.outvars[0].aval.dtype and x.aval.dtype.kind == mid.kind == "f"
            and mid.itemsize >= x.aval.dtype.itemsize):
        return x
    return None


convert_element_type_p.rewrites = (
    identity("a cast to the operand's own dtype"),
    rewrite("convert(convert x) -> x through a wider float (exact)",
            (defined_by(convert_element_type_p),), _exact_round_trip),
)


def convert_element_type(x, new_dtype):
    """Cast ``x`` to ``new_dtype`` (numpy ``astype`` semantics).

    Float -> float, float -> complex and complex -> complex casts carry a
    tangent (the transpose of float -> complex keeps the real part); casts to
    or from integers and booleans have a zero derivative; complex -> real is an
    error (use ``real``). Returns ``x`` itself when nothing changes.

    >>> convert_element_type(np.arange(3), np.float32)
    array([0., 1., 2.], dtype=float32)
    """
    new_dtype = dtypes.check_dtype(new_dtype, "convert_element_type's new_dtype",
                                   allow_complex=True)
    if type(x) not in (int, float, bool) and get_aval(x).dtype == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


# --- iota -----------------------------------------------------------------------------

iota_p = Primitive("iota")


def _iota_impl(*, dtype, shape, dimension):
    ramp = np.arange(shape[dimension], dtype=dtype)
    if len(shape) == 1:
        return ramp
    return np.broadcast_to(ramp.reshape([-1 if i == dimension else 1
                                         for i in range(len(shape))]), shape)


def _iota_abstract_eval(*, dtype, shape, dimension):
    if not (isinstance(shape, tuple) and all(type(s) is int and s >= 0 for s in shape)):
        raise ShapeError(f"iota needs shape as a tuple of non-negative ints, got {shape!r}")
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"iota got dimension={dimension} for the rank-{len(shape)} shape "
                         f"{shape}; it must be in [0, {len(shape)}).")
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iuf":
        raise DTypeError(f"iota needs an integer or floating numpy.dtype, got {dtype!r}")
    return ShapedArray(shape, dtype)


iota_p.impl = _iota_impl
iota_p.abstract_eval = _iota_abstract_eval
iota_p.nondifferentiable = True
# iota has no operands, so vmap never sees a batched one; the rule only exists so
# that every primitive fills every slot.
iota_p.batch = lambda vals, dims, **params: (iota_p.bind(**params), None)
iota_p.cost = lambda **p: {"flops": 0, "bytes": nbytes(_iota_abstract_eval(**p))}
iota_p.traits |= {passes.ALWAYS_FINITE}


def iota(dtype, shape, dimension=0):
    """An array of ``shape`` whose entries count 0, 1, ... along ``dimension``.

    >>> iota(np.int64, (2, 3), dimension=1)
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    params = dict(dtype=np.dtype(dtype), shape=tuple(int(s) for s in shape),
                  dimension=int(dimension))
    _iota_abstract_eval(**params)  # eager binds skip abstract_eval; iota is never hot
    return iota_p.bind(**params)

