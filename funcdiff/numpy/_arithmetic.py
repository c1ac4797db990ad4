"""Arithmetic, powers, exponentials, logarithms and floating-point parts of funcdiff.numpy,
and the special functions ``sinc`` and ``i0``.

Each function is an explicit composition of elementwise primitives with numpy
2's semantics: arguments are promoted by the helpers of ``_ufunc_support``, and
the binary primitives broadcast by themselves. Integer semantics follow numpy
where numpy has them (``floor_divide`` and ``remainder`` floor, ``power`` of
ints is exact); only floats and complex values are differentiated. Complex
values take numpy's principal branches (``sqrt``, ``log*``, ``power``,
``sinc``); the functions numpy does not define on them (``cbrt``,
``floor_divide``, ``remainder``, ``fmod``, ``logaddexp``, ``ldexp``, ...) refuse
them by name, never dropping an imaginary part. ``logaddexp`` and ``logaddexp2``
bind primitives whose impls are numpy's (stable) and whose derivatives are the
softmax weights, smooth at ties.
``ldexp``, ``frexp``, ``nextafter``, ``spacing`` and ``i0`` each bind one
primitive whose impl is numpy's, so their values are numpy's bit for bit;
``ldexp`` is linear in ``x1``, the mantissa of ``frexp`` is differentiable,
``spacing`` has a zero derivative and ``nextafter``, as in JAX, none. The
trigonometric and hyperbolic functions are in ``_trigonometry``.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import DTypeError, InvalidArgumentError
from funcdiff.numpy._ufunc_support import (BOOL, F64, INT8, INT64, UINT64, arg, _array,
                                           binary_ufunc, _c, cast, check_broadcast,
                                           float_arg, fname, no_bool, num_arg, promote,
                                           promote_divide, promote_int_bool_real, promote_real,
                                           real_arg, refuse_complex, reject_out, result_dtype,
                                           ufunc_options, unary_ufunc)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import structural


# ---------------------------------------------------------------------------
# Arithmetic

_LN2 = math.log(2.0)
_INT32 = np.dtype(np.int32)


def _subtract(x, y):
    if x.dtype == BOOL:
        no_bool("subtract", x)
    return ew.sub(x, y)


add = binary_ufunc("add", promote, ew.add, "Elementwise sum ``x1 + x2``.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.add(np.array([1., 2.]), 1)
array([2., 3.])""")
subtract = binary_ufunc("subtract", promote, _subtract, "Elementwise difference ``x1 - x2``.")
multiply = binary_ufunc("multiply", promote, ew.mul, "Elementwise product ``x1 * x2``.")
divide = binary_ufunc("divide", promote_divide, ew.div,
                       "Elementwise true division ``x1 / x2`` (integers divide as float64).",
                       """
>>> import funcdiff.numpy as fnp
>>> fnp.divide(1, 4)
np.float64(0.25)""")
true_divide = divide


def _fmod(x, y):
    return ew.rem(x, y)


def _remainder(x, y):
    # numpy's mod has the sign of the divisor: fix C's fmod where the signs differ.
    r = ew.rem(x, y)
    zero = _c(r, 0)
    fix = ew.and_(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
    r = ew.select(fix, ew.add(r, y), r)
    if x.dtype.kind == "f":
        # a zero remainder has y's sign, as in numpy (0 / y is that zero: y != 0 there)
        r = ew.select(ew.eq(r, zero), ew.div(zero, y), r)
    return r


def _floor_divide(x, y):
    zero = _c(x, 0)
    if x.dtype.kind != "f":
        # C division truncates; step down where the remainder's sign differs from y's.
        q, r = ew.div(x, y), ew.rem(x, y)
        fix = ew.and_(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
        return ew.sub(q, ew.convert_element_type(fix, x.dtype))
    # numpy's npy_divmod: exact for quotients that floor(x / y) would round wrongly.
    mod = ew.rem(x, y)
    div = ew.div(ew.sub(x, mod), y)
    fix = ew.and_(ew.ne(mod, zero), ew.ne(ew.lt(y, zero), ew.lt(mod, zero)))
    div = ew.select(fix, ew.sub(div, _c(x, 1)), div)
    floor = ew.floor(div)
    floor = ew.select(ew.gt(ew.sub(div, floor), _c(x, 0.5)), ew.add(floor, _c(x, 1)), floor)
    # a zero quotient has the sign of x / y, as in numpy (-0.0 // inf is -0.0)
    floor = ew.select(ew.eq(div, zero), ew.mul(ew.div(x, y), zero), floor)
    return ew.select(ew.eq(y, zero), ew.div(x, y), floor)


floor_divide = binary_ufunc("floor_divide", promote_int_bool_real, _floor_divide,
                             "Elementwise ``x1 // x2``: the quotient rounded toward minus "
                             "infinity.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.floor_divide(np.array([7, -7]), 2)
array([ 3, -4])""")
remainder = binary_ufunc("remainder", promote_int_bool_real, _remainder,
                          "Elementwise ``x1 % x2`` with the sign of ``x2`` (Python's modulo).",
                          """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.remainder(np.array([7., -7.]), 3)
array([1., 2.])""")
mod = remainder
fmod = binary_ufunc("fmod", promote_int_bool_real, _fmod,
                     "Elementwise C remainder of ``x1 / x2``, with the sign of ``x1``.")


def divmod(x1, x2, /, out=(None, None), *, where=True, dtype=None):
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (like ``numpy.divmod``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.divmod(np.array([7, -7]), 3)
    (array([ 2, -3]), array([1, 2]))
    """
    reject_out("divmod", out)
    for x in (x1, x2):
        refuse_complex("divmod", _array("divmod", x))
    return (floor_divide(x1, x2, where=where, dtype=dtype),
            remainder(x1, x2, where=where, dtype=dtype))


def _negative(x):
    return ew.neg(no_bool("negative", x))


def _positive(x):
    return no_bool("positive", x)


negative = unary_ufunc("negative", num_arg, _negative, "Elementwise ``-x``.")
positive = unary_ufunc("positive", num_arg, _positive, "Elementwise ``+x`` (a no-op).")


def _int_power(x, y):
    """``x ** y`` for integer arrays by repeated squaring over the bits of ``y``."""
    if not isinstance(y, Tracer):
        if np.any(y < 0):
            raise InvalidArgumentError(
                "funcdiff.numpy.power: integers to negative integer powers are not allowed "
                "(numpy neither); convert the base to float first.")
        bits = int(np.max(y, initial=0)).bit_length()
    else:
        bits = 8 * y.dtype.itemsize - (y.dtype.kind == "i")
    one, zero = _c(x, 1), _c(y, 0)
    result = ew.select(ew.eq(x, x), one, x) if bits == 0 else None
    base = x
    for bit in range(bits):
        factor = ew.select(ew.ne(ew.and_(y, _c(y, 1 << bit)), zero), base, one)
        result = factor if result is None else ew.mul(result, factor)
        if bit + 1 < bits:
            base = ew.mul(base, base)
    return structural.broadcast_to(result, check_broadcast("power", x, y))


def _power(name: str, x, y, dtype: np.dtype):
    if type(y) is int and dtype.kind in "iufc":
        if y < 0 and dtype.kind not in "fc":
            raise InvalidArgumentError(
                f"{fname(name)}: integers to negative integer powers are not allowed "
                "(numpy neither); convert the base to float first.")
        return ew.integer_pow(cast(x, dtype), y=y)  # np.power(x, int): the same values
    x, y = cast(x, dtype), cast(y, dtype)
    try:
        if dtype.kind in "fc":  # complex: numpy's principal branch, exp(y log x)
            return ew.pow(x, y)
        return _int_power(x, y)
    except ValueError:
        check_broadcast(name, x, y)
        raise


def power(x1, x2, /, out=None, *, where=True, dtype=None):
    """Elementwise ``x1 ** x2``; integer powers of integers are exact.

    Like ``numpy.power``: the result has the promoted dtype of the arguments
    (booleans compute as int8), and a Python int exponent of a float array is
    differentiated as an integer power (well defined for negative bases).

    Args:
      x1, x2: array_like (broadcast against each other).
      out, where: not supported. dtype: optional dtype to compute in.

    Returns:
      The powers, as an array.

    Raises:
      InvalidArgumentError: for negative integer powers of integers.
      ShapeError: if the shapes do not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.power(np.array([2., 3.]), 2)
    array([4., 9.])
    """
    if out is not None or where is not True or dtype is not None:
        x1, x2 = ufunc_options("power", (x1, x2), out, where, dtype)
    x1, x2 = arg("power", x1), arg("power", x2)
    rdtype = result_dtype("power", x1, x2)
    return _power("power", x1, x2, INT8 if rdtype == BOOL else rdtype)


def float_power(x1, x2, /, out=None, *, where=True, dtype=None):
    """Elementwise ``x1 ** x2`` computed in at least float64 (like ``numpy.float_power``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.float_power(np.array([4], np.float32), 0.5)
    array([2.])
    """
    if out is not None or where is not True or dtype is not None:
        x1, x2 = ufunc_options("float_power", (x1, x2), out, where, dtype)
    x1, x2 = arg("float_power", x1), arg("float_power", x2)
    rdtype = np.promote_types(result_dtype("float_power", x1, x2), F64)
    return _power("float_power", x1, x2, rdtype)


def _square(x):
    if x.dtype == BOOL:
        x = cast(x, INT8)
    return ew.mul(x, x)


def _reciprocal(x):
    if x.dtype == BOOL:
        x = cast(x, INT8)
    return ew.div(_c(x, 1), x)


square = unary_ufunc("square", num_arg, _square, "Elementwise ``x * x``.")
reciprocal = unary_ufunc("reciprocal", num_arg, _reciprocal,
                          "Elementwise ``1 / x`` (integer division for integers, as numpy).")
sqrt = unary_ufunc("sqrt", float_arg, ew.sqrt, "Elementwise non-negative square root.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.sqrt(np.array([4., 9.]))
array([2., 3.])""")
cbrt = unary_ufunc("cbrt", real_arg, ew.cbrt, "Elementwise real cube root.")


# ---------------------------------------------------------------------------
# Exponentials and logarithms


exp = unary_ufunc("exp", float_arg, ew.exp, "Elementwise ``e ** x``.", """
>>> import funcdiff.numpy as fnp
>>> float(fnp.exp(0.0))
1.0""")
exp2 = unary_ufunc("exp2", float_arg, ew.exp2, "Elementwise ``2 ** x``.")
expm1 = unary_ufunc("expm1", float_arg, ew.expm1,
                     "Elementwise ``exp(x) - 1``, accurate for small ``x``.")
log = unary_ufunc("log", float_arg, ew.log, "Elementwise natural logarithm.")
log2 = unary_ufunc("log2", float_arg, ew.log2, "Elementwise base-2 logarithm.")
log10 = unary_ufunc("log10", float_arg, ew.log10, "Elementwise base-10 logarithm.")
log1p = unary_ufunc("log1p", float_arg, ew.log1p,
                     "Elementwise ``log(1 + x)``, accurate for small ``x``.")
logaddexp = binary_ufunc("logaddexp", promote_real, ew.logaddexp,
                          "Elementwise ``log(exp(x1) + exp(x2))`` without overflow.", """
>>> import funcdiff.numpy as fnp
>>> float(fnp.logaddexp(1000.0, 1000.0)) == 1000.0 + float(fnp.log(2.0))
True""")
logaddexp2 = binary_ufunc("logaddexp2", promote_real, ew.logaddexp2,
                           "Elementwise ``log2(2**x1 + 2**x2)`` without overflow.")


# ---------------------------------------------------------------------------
# Floating-point representation


def ldexp(x1, x2, /, out=None, *, where=True, dtype=None):
    """``x1 * 2**x2`` for integer ``x2``, rounded once (like ``numpy.ldexp``).

    Values are numpy's bit for bit, also where ``2**x2`` alone would overflow or
    underflow (``ldexp(0.75, 1024)`` is finite, ``ldexp(3.0, -1075)`` is the
    nearest denormal). The result has the float dtype of ``x1`` (integers
    compute in the smallest float that holds them, as numpy). Linear, so
    differentiable, in ``x1``; ``x2`` is an integer and has no derivative.

    Args:
      x1: array_like. x2: array_like of integers (not uint64: numpy neither).
      out, where: not supported. dtype: optional dtype to compute ``x1`` in.

    Returns:
      The scaled values, broadcast against each other.

    Raises:
      DTypeError: for non-integer (or uint64) exponents.
      ShapeError: if the shapes do not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.ldexp(np.array([0.75, 1.0]), 3)
    array([6., 8.])
    """
    if out is not None or where is not True or dtype is not None:
        (x1,) = ufunc_options("ldexp", (x1,), out, where, dtype)
    x = real_arg("ldexp", x1)
    e = _array("ldexp", x2)
    if e.dtype.kind not in "biu" or e.dtype == UINT64:
        raise DTypeError(f"{fname('ldexp')} needs integer exponents (not uint64, which numpy "
                         f"has no loop for either), got {e.dtype}; convert with astype(np.int64).")
    if e.dtype != _INT32:
        e = cast(e, INT64)  # numpy's loops take int32 or int64 exponents; values unchanged
    try:
        return ew.ldexp(x, e)
    except ValueError:
        check_broadcast("ldexp", x, e)
        raise


def frexp(x, /, out=(None, None), *, where=True, dtype=None):
    """Split ``x`` into mantissa and exponent, ``x == mantissa * 2**exponent`` (``numpy.frexp``).

    The mantissa has ``0.5 <= |mantissa| < 1`` and the dtype of ``x`` (integers
    compute in the smallest float that holds them, as numpy); the exponent is
    int32. 0, inf and NaN are their own mantissas, with exponent 0. The
    mantissa is differentiable: its derivative is ``2**-exponent`` (exact; inf
    where it overflows, below the normal range); the exponent has none.

    Args:
      x: array_like.
      out, where: not supported. dtype: optional dtype to compute in.

    Returns:
      ``(mantissa, exponent)``, two arrays of the shape of ``x``.

    Raises:
      UnsupportedNumpyError: for out= or where=.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.frexp(np.array([3.0, -0.25, 0.0]))
    (array([ 0.75, -0.5 ,  0.  ]), array([ 2, -1,  0], dtype=int32))
    """
    reject_out("frexp", out)
    (x,) = ufunc_options("frexp", (x,), None, where, dtype)
    return tuple(ew.frexp(real_arg("frexp", x)))


nextafter = binary_ufunc("nextafter", promote_real, ew.nextafter,
                          "Elementwise next float after ``x1`` toward ``x2``; not "
                          "differentiable (as in JAX).",
                          """
>>> import funcdiff.numpy as fnp, numpy as np
>>> bool(fnp.nextafter(1.0, 2.0) - 1.0 == np.finfo(np.float64).eps)
True
>>> fnp.nextafter(np.array([0.0, 1.0], np.float32), 0.0)
array([0.        , 0.99999994], dtype=float32)""")
spacing = unary_ufunc("spacing", real_arg, ew.spacing,
                       "Elementwise signed distance to the next float away from zero; "
                       "its derivative is zero.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.spacing(np.array([1.0, -1.0], np.float32))
array([ 1.1920929e-07, -1.1920929e-07], dtype=float32)""")


# ---------------------------------------------------------------------------
# Special functions


def _sinc(x):
    # numpy's values; the derivatives of every order are the primitive's own (a series
    # near 0), not those of numpy's formula, which swaps in 1e-20 at 0
    return ew.sinc(x, order=0)


def _float_or_f64_arg(name, x):
    """``x`` for sinc and i0: floats (and complex values for sinc, as numpy's) keep their
    dtype, integers and booleans become float64."""
    x = arg(name, x)
    dtype = result_dtype(name, x)
    if dtype.kind == "c" and name == "sinc":
        return cast(x, dtype)
    if dtype.kind == "c":
        raise DTypeError(f"{fname(name)} takes real values only, got {dtype} (complex values "
                         "are intermediates in funcdiff); apply it to the real and imaginary "
                         "parts as your formula needs.")
    return cast(x, dtype if dtype.kind == "f" else F64)


sinc = unary_ufunc("sinc", _float_or_f64_arg, _sinc,
                    "Elementwise normalised sinc ``sin(pi x) / (pi x)`` (1 at 0).")


def i0(x):
    """The modified Bessel function of the first kind of order 0, elementwise (``numpy.i0``).

    Values are numpy's own, bit for bit (float32 stays float32; integers and
    booleans compute in float64). The derivative is ``I1``, the modified Bessel
    function of order 1, computed by funcdiff (numpy has none).

    Args:
      x: array_like of real values.

    Returns:
      ``I0(x)``, an array (0-d for a scalar, as numpy's).

    Raises:
      DTypeError: for complex values.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fnp.i0(np.array([0.0, 1.0]))
    array([1.        , 1.26606588])
    >>> float(fd.grad(fnp.i0)(1.0))  # I1(1)
    0.565159103992485
    """
    return ew.bessel_i0(_float_or_f64_arg("i0", x))


pow = power


__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "fmod", "negative", "positive", "power", "float_power", "square", "reciprocal", "sqrt",
    "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    "sinc", "i0", "divmod", "ldexp", "frexp", "nextafter", "spacing", "pow",
]
