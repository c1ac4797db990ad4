"""NaN-ignoring reductions of funcdiff.numpy: nansum, nanmean, nanmax, nanprod, nanvar, ...

A ``select`` replaces NaN by the reduction's identity (0 for sums, 1 for
products, -inf or inf for extrema) before the plain reduction, so NaN elements
get a zero derivative; means and variances divide by the count of numbers.
Slices without a number give NaN, as in numpy (``nanargmax``/``nanargmin`` of
a concrete all-NaN slice raise, as numpy does). Integer and boolean arrays
have no NaN and go straight to the plain reductions. The running forms
``nancumsum`` and ``nancumprod`` make the same replacement before ``cumsum``
and ``cumprod``, so a NaN contributes nothing to the running values after it.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError, UnsupportedNumpyError
from funcdiff.numpy._sorting import cumprod, cumsum
from funcdiff.numpy._reductions import (arg_extremum, normalize_axes, extremum, finish,
                                        reduction_options, mean, prod, std, sum, var)
from funcdiff.numpy._ufunc_support import F64, _c, cast, dtype_arg, fname, NoValue, num_arg
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import reductions, structural


# ---------------------------------------------------------------------------
# NaN-ignoring reductions


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=NoValue,
           where=NoValue):
    """Sum treating NaN as zero (like ``numpy.nansum``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nansum(np.array([1., np.nan, 2.]))
    np.float64(3.0)
    """
    reduction_options("nansum", out, initial, where)
    a = num_arg("nansum", a)
    if a.dtype.kind == "f":
        a = ew.select(ew.ne(a, a), _c(a, 0), a)
    return sum(a, axis, dtype, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=NoValue):
    """Mean of the non-NaN elements (like ``numpy.nanmean``; NaN where all are NaN).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nanmean(np.array([1., np.nan, 2.]))
    np.float64(1.5)
    """
    reduction_options("nanmean", out, where=where)
    a = num_arg("nanmean", a)
    if a.dtype.kind != "f":
        return mean(a, axis, dtype, keepdims=keepdims)
    if dtype is not None:
        a = cast(a, dtype_arg("nanmean", dtype))
    missing = ew.ne(a, a)
    total = sum(ew.select(missing, _c(a, 0), a), axis, keepdims=keepdims)
    count = sum(ew.not_(missing), axis, keepdims=keepdims)  # int64, as numpy counts
    # numpy divides by the integer count in float64 and casts back to a's dtype
    return finish(cast(ew.div(cast(total, F64), cast(count, F64)), a.dtype), (), False)


def _nan_extremum(name, prim_op, fill, a, axis, out, keepdims, initial, where):
    reduction_options(name, out, initial, where)
    a = num_arg(name, a)
    if a.dtype.kind != "f":
        return extremum(name, prim_op, a, axis, None, keepdims, NoValue, NoValue)
    missing = ew.ne(a, a)
    result = extremum(name, prim_op, ew.select(missing, _c(a, fill), a), axis, None,
                       keepdims, NoValue, NoValue)
    axes = normalize_axes(name, axis, a.ndim)
    all_missing = reductions.reduce_and(missing, axes=axes) if axes else missing
    if keepdims and axes:
        all_missing = structural.expand_dims(all_missing, dimensions=axes)
    return finish(ew.select(all_missing, _c(a, np.nan), result), (), False)


def nanmax(a, axis=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Maximum ignoring NaN (like ``numpy.nanmax``; NaN where all are NaN).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nanmax(np.array([1., np.nan, 2.]))
    np.float64(2.0)
    """
    return _nan_extremum("nanmax", reductions.reduce_max, -np.inf, a, axis, out, keepdims,
                         initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Minimum ignoring NaN (like ``numpy.nanmin``; NaN where all are NaN)."""
    return _nan_extremum("nanmin", reductions.reduce_min, np.inf, a, axis, out, keepdims,
                         initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=NoValue,
            where=NoValue):
    """Product treating NaN as one (like ``numpy.nanprod``)."""
    reduction_options("nanprod", out, initial, where)
    a = num_arg("nanprod", a)
    if a.dtype.kind == "f":
        a = ew.select(ew.ne(a, a), _c(a, 1), a)
    return prod(a, axis, dtype, keepdims=keepdims)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as zero (like ``numpy.nancumsum``).

    ``axis=None`` flattens first; small integers and booleans accumulate in
    int64, as ``cumsum`` does. NaN elements get a zero derivative; the others
    the derivative of ``cumsum``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nancumsum(np.array([1., np.nan, 2.]))
    array([1., 1., 3.])
    """
    reduction_options("nancumsum", out)
    return cumsum(_nan_replaced("nancumsum", a, 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as one (like ``numpy.nancumprod``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nancumprod(np.array([[2., np.nan], [3., 4.]]), axis=1)
    array([[ 2.,  2.],
           [ 3., 12.]])
    """
    reduction_options("nancumprod", out)
    return cumprod(_nan_replaced("nancumprod", a, 1), axis, dtype)


def _nan_replaced(name, a, identity):
    """``a`` with NaN replaced by ``identity`` (arrays without NaN are returned as they are)."""
    a = num_arg(name, a)
    if a.dtype.kind != "f":
        return a
    return ew.select(ew.ne(a, a), _c(a, identity), a)


def _nan_var(name, a, axis, dtype, ddof, keepdims):
    a = num_arg(name, a)
    if a.dtype.kind != "f":
        return None, a
    if dtype is not None:
        a = cast(a, dtype_arg(name, dtype))
    axes = normalize_axes(name, axis, a.ndim)
    missing = ew.ne(a, a)
    zero = _c(a, 0)
    count = cast(sum(ew.not_(missing), axis=axes, keepdims=True), a.dtype)
    centre = ew.div(sum(ew.select(missing, zero, a), axis=axes, keepdims=True), count)
    deviation = ew.select(missing, zero, ew.sub(a, centre))
    squares = sum(ew.mul(deviation, deviation), axis=axes, keepdims=keepdims)
    dof = ew.sub(count if keepdims else _drop_axes(count, axes), _c(a, ddof))
    var_ = ew.div(squares, ew.select(ew.gt(dof, zero), dof, _c(a, 1)))
    return ew.select(ew.gt(dof, zero), var_, _c(a, np.nan)), a


def _drop_axes(x, axes):
    return structural.squeeze(x, dimensions=axes) if axes else x


def _nan_var_options(name, out, where, mean, correction):
    reduction_options(name, out, where=where)
    if mean is not NoValue or correction is not NoValue:
        raise UnsupportedNumpyError(f"funcdiff.numpy.{name} does not support mean= or "
                                    "correction=; use ddof=.")


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=NoValue,
           mean=NoValue, correction=NoValue):
    """Variance of the non-NaN elements (like ``numpy.nanvar``; NaN where too few remain)."""
    _nan_var_options("nanvar", out, where, mean, correction)
    result, a = _nan_var("nanvar", a, axis, dtype, ddof, keepdims)
    if result is None:
        return var(a, axis, dtype, ddof=ddof, keepdims=keepdims)
    return finish(result, (), False)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=NoValue,
           mean=NoValue, correction=NoValue):
    """Standard deviation of the non-NaN elements (like ``numpy.nanstd``)."""
    _nan_var_options("nanstd", out, where, mean, correction)
    result, a = _nan_var("nanstd", a, axis, dtype, ddof, keepdims)
    if result is None:
        return std(a, axis, dtype, ddof=ddof, keepdims=keepdims)
    return finish(ew.sqrt(result), (), False)


def _nan_arg_extremum(name, prim_op, fill, a, axis, out, keepdims):
    a = num_arg(name, a)
    if a.dtype.kind == "f":
        missing = ew.ne(a, a)
        if not isinstance(a, Tracer):
            axes = normalize_axes(name, axis, a.ndim)
            if np.any(np.all(missing, axis=axes)):
                raise InvalidArgumentError(f"{fname(name)}: all-NaN slice encountered "
                                           "(numpy raises too)")
        a = ew.select(missing, _c(a, fill), a)
    return arg_extremum(name, prim_op, a, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum ignoring NaN (like ``numpy.nanargmax``)."""
    return _nan_arg_extremum("nanargmax", reductions.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum ignoring NaN (like ``numpy.nanargmin``)."""
    return _nan_arg_extremum("nanargmin", reductions.argmin, np.inf, a, axis, out, keepdims)


__all__ = [
    "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd", "nanargmax",
    "nanargmin", "nancumsum", "nancumprod",
]
