"""Signs, extrema, clipping and rounding of funcdiff.numpy.

``abs``, ``sign``, ``signbit``, ``copysign``, ``maximum``/``minimum`` (NaN
propagates) and ``fmax``/``fmin`` (NaN ignored), ``heaviside``, ``clip``,
``floor``/``ceil``/``trunc``/``rint``/``fix``/``round``, ``modf``, and the
parts of funcdiff's real numbers (``real``, ``imag``, ``conjugate``). Each is a
composition of elementwise primitives with numpy 2's semantics; integers pass
through unchanged where numpy leaves them unchanged. Complex values: ``sign``
is ``z / |z|`` (0 at 0, differentiable elsewhere), ``rint`` and ``round``
round both parts, extrema and ``clip`` order lexicographically (numpy's
order); ``floor``, ``ceil``, ``trunc``, ``fix``, ``fabs``, ``signbit``,
``copysign``, ``heaviside`` and ``modf`` refuse them by name, as numpy does.
"""

from __future__ import annotations

import operator

import numpy as np

from funcdiff.errors import InvalidArgumentError
from funcdiff.numpy._ufunc_support import (BOOL, F16, F64, INT8, arg, binary_ufunc, _c,
                                           cast, check_broadcast, const, float_arg, full,
                                           no_bool, NoValue, num_arg, promote, promote_real,
                                           real_arg, real_num_arg, reject_out, result_dtype,
                                           ufunc_options, unary_ufunc)
from funcdiff.primitives import complex_ops
from funcdiff.primitives import elementwise as ew
from funcdiff.numpy._views import returns_copies, returns_views


# ---------------------------------------------------------------------------
# Signs, extrema and rounding


def _abs(x):
    if x.dtype.kind == "c":
        return complex_ops.complex_abs(x)
    return x if x.dtype.kind in "bu" else ew.abs(x)


def _abs_arg(name, x):
    z = complex_ops.complex_value(x)
    return num_arg(name, x) if z is None else z


def _sign(x):
    if x.dtype.kind == "c":
        return _unit_phase(x)
    return ew.sign(no_bool("sign", x))


def _unit_phase(z):
    """numpy's sign of complex values, z / |z| (0 at 0), differentiable where z != 0."""
    r = complex_ops.complex_abs(z)
    zero = _c(r, 0)
    safe_r = ew.select(ew.eq(r, zero), _c(r, 1), r)  # z / 1 = 0 at z = 0
    return ew.div(z, complex_ops.complex(safe_r, zero))


def _signbit(x):
    """True where ``x`` is negative, including -0.0 (NaN signs are not seen)."""
    zero = _c(x, 0)
    # atan2(-0.0, -1) = -pi but atan2(+0.0, -1) = +pi: the sign of zero, without 1/0
    neg_zero = ew.and_(ew.eq(x, zero), ew.lt(ew.atan2(x, _c(x, -1)), zero))
    return ew.or_(ew.lt(x, zero), neg_zero)


def _copysign(x, y):
    magnitude = ew.abs(x)
    return ew.select(_signbit(y), ew.neg(magnitude), magnitude)


def _fmax(x, y):
    if x.dtype.kind != "f":
        return ew.max(x, y)
    return ew.select(ew.ne(y, y), x, ew.select(ew.ne(x, x), y, ew.max(x, y)))


def _fmin(x, y):
    if x.dtype.kind != "f":
        return ew.min(x, y)
    return ew.select(ew.ne(y, y), x, ew.select(ew.ne(x, x), y, ew.min(x, y)))


def _heaviside(x, h0):
    zero = _c(x, 0)
    out = ew.select(ew.lt(x, zero), zero, ew.select(ew.gt(x, zero), _c(x, 1), h0))
    return ew.select(ew.ne(x, x), x, out)


abs = unary_ufunc("abs", _abs_arg, _abs, "Elementwise absolute value (the magnitude, a "
                   "float array, for complex values).", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.abs(np.array([-2, 3]))
array([2, 3])""")
absolute = abs
fabs = unary_ufunc("fabs", real_arg, ew.abs, "Elementwise absolute value as a float.")
sign = unary_ufunc("sign", num_arg, _sign, "Elementwise sign: -1, 0 or 1 (NaN for NaN); "
                   "z / |z| (0 at 0) for complex values.")
signbit = unary_ufunc("signbit", real_arg, _signbit,
                       "Elementwise test for a negative sign, including -0.0.")
copysign = binary_ufunc("copysign", promote_real, _copysign,
                         "Elementwise magnitude of ``x1`` with the sign of ``x2``.")
maximum = binary_ufunc("maximum", promote, ew.max,
                        "Elementwise maximum; NaN propagates.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.maximum(np.array([1., 5.]), 3.)
array([3., 5.])""")
minimum = binary_ufunc("minimum", promote, ew.min, "Elementwise minimum; NaN propagates.")
fmax = binary_ufunc("fmax", promote, _fmax, "Elementwise maximum ignoring NaN.")
fmin = binary_ufunc("fmin", promote, _fmin, "Elementwise minimum ignoring NaN.")
heaviside = binary_ufunc("heaviside", promote_real, _heaviside,
                          "Elementwise step function: 0 below 0, ``x2`` at 0, 1 above.")


@returns_copies
def clip(a, a_min=NoValue, a_max=NoValue, out=None, *, min=NoValue, max=NoValue):
    """Limit the values of ``a`` to ``[a_min, a_max]`` (like ``numpy.clip``).

    Args:
      a: array_like.
      a_min, a_max (or min, max): bounds, broadcast against ``a``; None for no bound.
      out: not supported.

    Returns:
      ``minimum(maximum(a, a_min), a_max)`` in the promoted dtype; NaN propagates.

    Raises:
      InvalidArgumentError: if a bound is given twice. ShapeError: on shapes that do
      not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.clip(np.array([-1., 0.5, 2.]), 0, 1)
    array([0. , 0.5, 1. ])
    """
    reject_out("clip", out)
    if min is not NoValue:
        if a_min is not NoValue:
            raise InvalidArgumentError("funcdiff.numpy.clip got both a_min= and min=")
        a_min = min
    if max is not NoValue:
        if a_max is not NoValue:
            raise InvalidArgumentError("funcdiff.numpy.clip got both a_max= and max=")
        a_max = max
    lo = None if a_min is NoValue or a_min is None else arg("clip", a_min)
    hi = None if a_max is NoValue or a_max is None else arg("clip", a_max)
    bounds = [b for b in (lo, hi) if b is not None]
    a = arg("clip", a)
    dtype = result_dtype("clip", a, *bounds)
    a = cast(a, dtype)
    try:
        if lo is not None:
            a = ew.max(a, cast(lo, dtype))
        if hi is not None:
            a = ew.min(a, cast(hi, dtype))
    except ValueError:
        check_broadcast("clip", a, *bounds)
        raise
    return a


def _floor(x):
    return ew.floor(x) if x.dtype.kind == "f" else x


def _ceil(x):
    return ew.ceil(x) if x.dtype.kind == "f" else x


def _trunc(x):
    if x.dtype.kind != "f":
        return x
    return ew.select(ew.lt(x, _c(x, 0)), ew.ceil(x), ew.floor(x))


floor = unary_ufunc("floor", real_num_arg, _floor, "Elementwise floor (integers unchanged).", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.floor(np.array([-1.5, 1.5]))
array([-2.,  1.])""")
ceil = unary_ufunc("ceil", real_num_arg, _ceil, "Elementwise ceiling (integers unchanged).")
trunc = unary_ufunc("trunc", real_num_arg, _trunc,
                     "Elementwise rounding toward zero (integers unchanged).")


def _rint(x):
    if x.dtype.kind == "c":  # numpy rounds the real and imaginary parts
        return complex_ops.complex(ew.round(complex_ops.real(x)), ew.round(complex_ops.imag(x)))
    return ew.round(x)


rint = unary_ufunc("rint", float_arg, _rint,
                    "Elementwise rounding to the nearest integer, halves to even (both parts "
                    "of complex values).")


@returns_copies
def fix(x, out=None):
    """Round toward zero elementwise (like ``numpy.fix``; integers unchanged).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fix(np.array([-1.7, 1.7]))
    array([-1.,  1.])
    """
    reject_out("fix", out)
    return _trunc(real_num_arg("fix", x))


@returns_copies
def round(a, decimals=0, out=None):
    """Round to ``decimals`` decimal places, halves to even (like ``numpy.round``).

    numpy's algorithm: scale by ``10**decimals``, round to an integer, scale
    back; integers with ``decimals >= 0`` are returned unchanged.

    Args:
      a: array_like. decimals: int (negative rounds to tens, hundreds, ...).
      out: not supported.

    Returns:
      The rounded array, of ``a``'s dtype (complex values: both parts rounded).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.round(np.array([1.25, 2.5, 15.]), 1)
    array([ 1.2,  2.5, 15. ])
    """
    reject_out("round", out)
    a = num_arg("round", a)
    decimals = operator.index(decimals)
    if a.dtype == BOOL:
        a = cast(a, F16)  # numpy rounds booleans in float16
    kind = a.dtype.kind
    if kind == "c":  # numpy rounds the real and imaginary parts separately
        return complex_ops.complex(round(complex_ops.real(a), decimals),
                                   round(complex_ops.imag(a), decimals))
    if kind != "f":
        if decimals >= 0:
            return a
        scale = const(10.0 ** -decimals, F64)
        scaled = ew.round(ew.div(cast(a, F64), scale))
        return cast(ew.mul(scaled, scale), a.dtype)
    if decimals == 0:
        return ew.round(a)
    if decimals > 0:
        scale = _c(a, 10.0 ** decimals)
        return ew.div(ew.round(ew.mul(a, scale)), scale)
    scale = _c(a, 10.0 ** -decimals)
    return ew.mul(ew.round(ew.div(a, scale)), scale)


around = round


def modf(x, /, out=(None, None), *, where=True, dtype=None):
    """Fractional and integral parts, both with the sign of ``x`` (like ``numpy.modf``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.modf(np.array([2.5, -1.25]))
    (array([ 0.5 , -0.25]), array([ 2., -1.]))
    """
    reject_out("modf", out)
    (x,) = ufunc_options("modf", (x,), None, where, dtype)
    x = real_arg("modf", x)
    whole = _trunc(x)
    fraction = ew.select(ew.eq(ew.abs(x), _c(x, np.inf)), _c(x, 0), ew.sub(x, whole))
    return fraction, whole


# ---------------------------------------------------------------------------
# Parts of funcdiff's real numbers


@returns_copies
def conjugate(x, /, out=None, *, where=True, dtype=None):
    """Complex conjugate; real arrays are returned as they are."""
    if out is not None or where is not True or dtype is not None:
        (x,) = ufunc_options("conjugate", (x,), out, where, dtype)
    z = complex_ops.complex_value(x)
    if z is not None:
        return complex_ops.conj(z)
    x = num_arg("conjugate", x)
    return cast(x, INT8) if x.dtype == BOOL else x  # numpy's loops take bool as int8


conj = conjugate


@returns_views
def real(val):
    """The real part (like ``numpy.real``): ``val`` itself for real arrays."""
    z = complex_ops.complex_value(val)
    return num_arg("real", val) if z is None else complex_ops.real(z)


@returns_views
def imag(val):
    """The imaginary part (like ``numpy.imag``): zeros for real arrays."""
    z = complex_ops.complex_value(val)
    if z is not None:
        return complex_ops.imag(z)
    val = num_arg("imag", val)
    return full(val, 0, val.dtype)


def angle(z, deg=False):
    """The argument of complex values, ``arctan2(imag, real)`` (like ``numpy.angle``).

    Real input gives 0 for non-negative values and pi for negative ones (and -0.0).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.angle(np.array([1j, -1.0]), deg=True)
    array([ 90., 180.])
    """
    c = complex_ops.complex_value(z)
    if c is not None:
        out = ew.atan2(complex_ops.imag(c), complex_ops.real(c))
    else:
        x = float_arg("angle", z)
        out = ew.atan2(_c(x, 0), x)
    return ew.mul(out, _c(out, 180.0 / np.pi)) if deg else out


__all__ = [
    "abs", "absolute", "fabs", "sign", "signbit", "copysign", "maximum", "minimum", "fmax",
    "fmin", "heaviside", "clip", "floor", "ceil", "trunc", "rint", "fix", "round", "around",
    "modf", "conjugate", "conj", "real", "imag", "angle",
]
