"""Reductions of funcdiff.numpy: sum, prod, mean, var, std, max, min, argmax, any, all, average.

Each normalises ``axis`` (None, negative, tuples) and ``keepdims`` and binds a
reduction primitive. Accumulator dtypes follow numpy: small integers sum in
int64, booleans count, integers average in float64, float16 averages in
float32. A full reduction outside transforms returns a numpy scalar, as numpy
does. The axis helpers here (``normalize_axes``, ``finish``, ...) also serve the
NaN-ignoring reductions, the quantiles and the whole-array comparisons.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import (AxisError, FunctionalDiffError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.numpy._ufunc_support import (BOOL, F16, F32, F64, INT64, UINT64, _array,
                                           bool_arg, _c, cast, const, dtype_arg, fname,
                                           full, no_bool, NoValue, num_arg, reject_initial,
                                           reject_out, reject_where, result_dtype, shape_of)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import complex_ops, reductions, structural


class ZeroWeightsError(FunctionalDiffError, ZeroDivisionError):
    """``average`` received weights that sum to zero."""


# ---------------------------------------------------------------------------
# Reductions


@functools.lru_cache(maxsize=None)
def _all_axes(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim))


def _axis(name: str, axis: Any, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise AxisError(f"{fname(name)} needs integer axes, got axis={axis!r}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{fname(name)}: axis {axis} is out of bounds for an array of "
                        f"dimension {ndim}")
    return axis % ndim


def normalize_axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence; negatives allowed) as a sorted tuple."""
    if axis is None:
        return _all_axes(ndim)
    if isinstance(axis, (tuple, list)):
        axes = tuple(_axis(name, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise AxisError(f"{fname(name)} got a repeated axis in axis={axis!r}")
        return tuple(sorted(axes))
    return (_axis(name, axis, ndim),)


def _plan(name: str, axis: Any, shape: tuple[int, ...]) -> tuple:
    """``(axes, count, centre_dims)`` of a reduction of an array of ``shape`` over ``axis``.

    ``count`` is the number of elements reduced into each result; ``centre_dims``
    are the axes to restore on a reduced result before it broadcasts against the
    input (None when the reduced axes lead, so numpy broadcasting restores them).
    Planned once per (axis, shape) for the common axis=None or a Python int.
    """
    if axis is None or type(axis) is int:
        return _static_plan(name, axis, shape)
    return _make_plan(name, axis, shape)


def _make_plan(name: str, axis: Any, shape: tuple[int, ...]) -> tuple:
    axes = normalize_axes(name, axis, len(shape))
    leading = axes == _all_axes(len(axes))
    return axes, count(shape, axes), None if leading else axes


_static_plan = functools.lru_cache(maxsize=1024)(_make_plan)  # bounded: shapes come from users


def finish(out: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if keepdims and axes:  # axes are sorted and distinct: the new axes' output positions
        return structural.expand_dims_p.bind(out, dimensions=axes)
    if type(out) is np.ndarray and out.ndim == 0:
        return out[()]  # numpy returns scalars from full reductions
    return out


def count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[a] for a in axes)


def _check_nonempty(name: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    if 0 in shape and builtins.any(shape[a] == 0 for a in axes):
        raise ShapeError(
            f"{fname(name)} cannot reduce an empty axis of shape {shape}: the operation "
            "has no identity (numpy raises too). Check the shape or reduce a non-empty axis.")


def reduction_options(name: str, out: Any, initial: Any = NoValue,
                       where: Any = NoValue) -> None:
    reject_out(name, out)
    reject_initial(name, initial)
    reject_where(name, where)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """numpy's accumulator of sum/prod: small ints widen to the platform int, bools count."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return INT64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return UINT64
    return dtype


def _sum(a, axes):
    if not axes:
        return a
    if a.dtype == BOOL:
        return reductions.reduce_or(a, axes=axes)
    return reductions.reduce_sum(a, axes=axes)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Sum of array elements over the given axes (like ``numpy.sum``).

    Args:
      a: array_like.
      axis: None (all axes), an int or a tuple of ints; negatives count from the end.
      dtype: accumulator and result dtype (default: numpy's, e.g. int64 for int8).
      keepdims: keep the reduced axes with size 1.
      out, initial, where: not supported.

    Returns:
      The sums; a numpy scalar for a full reduction outside transforms.

    Raises:
      AxisError: for an axis out of range or repeated.
      UnsupportedNumpyError: for out=, initial= or where=.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.sum(np.array([[1., 2.], [3., 4.]]), axis=0)
    array([4., 6.])
    """
    if out is not None or initial is not NoValue or where is not NoValue:
        reduction_options("sum", out, initial, where)
    a = num_arg("sum", a)
    a = cast(a, _sum_dtype(a.dtype) if dtype is None else dtype_arg("sum", dtype))
    axes = normalize_axes("sum", axis, a.ndim)
    return finish(_sum(a, axes), axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Product of array elements over the given axes (like ``numpy.prod``).

    The derivative is exact where elements are zero.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.prod(np.array([1, 2, 3, 4]))
    np.int64(24)
    """
    reduction_options("prod", out, initial, where)
    a = num_arg("prod", a)
    a = cast(a, _sum_dtype(a.dtype) if dtype is None else dtype_arg("prod", dtype))
    axes = normalize_axes("prod", axis, a.ndim)
    if not axes:
        result = a
    elif a.dtype == BOOL:
        result = reductions.reduce_and(a, axes=axes)
    else:
        result = reductions.reduce_prod(a, axes=axes)
    return finish(result, axes, keepdims)


def _divide_count(total: Any, count: int, result: np.dtype) -> Any:
    if total.dtype.kind in "fc":
        return cast(ew.div(total, _c(total, count)), result)
    return cast(ew.div(cast(total, F64), const(count, F64)), result)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=NoValue):
    """Arithmetic mean over the given axes (like ``numpy.mean``).

    Integers and booleans average in float64; float16 accumulates in float32.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.mean(np.array([1, 2, 3, 4]))
    np.float64(2.5)
    """
    if out is not None or where is not NoValue:
        reduction_options("mean", out, where=where)
    a = num_arg("mean", a)
    if dtype is not None:
        work = result = dtype_arg("mean", dtype)
    elif a.dtype.kind in "biu":
        work = result = F64
    elif a.dtype == F16:
        work, result = F32, F16
    else:
        work = result = a.dtype
    axes, count, _ = _plan("mean", axis, shape_of(a))
    a = cast(a, work)
    total = reductions.reduce_sum(a, axes=axes) if axes else a
    return finish(_divide_count(total, count, result), axes, keepdims)


def _var(name, a, axis, dtype, ddof, keepdims, mean_, correction):
    if mean_ is not NoValue:
        raise UnsupportedNumpyError(f"{fname(name)} does not support the argument mean=; "
                                    "it computes the mean itself.")
    if correction is not NoValue:
        if ddof != 0:
            raise InvalidArgumentError(f"{fname(name)} got both ddof= and correction=")
        ddof = correction
    a = num_arg(name, a)
    if dtype is not None:
        work = dtype_arg(name, dtype)
    else:
        work = F64 if a.dtype.kind in "biu" else a.dtype
    a = cast(a, work)
    axes, n, centre_dims = _plan(name, axis, shape_of(a))
    if axes:
        centre = ew.div(reductions.reduce_sum(a, axes=axes), _c(a, n))
        if centre_dims is not None:  # sorted, distinct, in range: bind without re-checking
            centre = structural.expand_dims_p.bind(centre, dimensions=centre_dims)
        deviation = ew.sub(a, centre)
        total = reductions.reduce_sum(_squared_magnitude(deviation), axes=axes)
    else:
        total = _squared_magnitude(ew.mul(a, _c(a, 0)))
    return total, axes, builtins.max(n - ddof, 0)


def _squared_magnitude(x: Any) -> Any:
    """``|x|**2``: ``x * x``, or ``re**2 + im**2`` (a real array) for complex ``x``,
    as numpy's var and std measure complex deviations."""
    if get_aval(x).dtype.kind != "c":
        return ew.mul(x, x)
    re, im = complex_ops.real(x), complex_ops.imag(x)
    return ew.add(ew.mul(re, re), ew.mul(im, im))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=NoValue,
        mean=NoValue, correction=NoValue):
    """Variance over the given axes, ``sum((a - mean)**2) / (n - ddof)`` (like ``numpy.var``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.var(np.array([1., 2., 3., 4.]), ddof=1)
    np.float64(1.6666666666666667)
    """
    if out is not None or where is not NoValue:
        reduction_options("var", out, where=where)
    total, axes, count = _var("var", a, axis, dtype, ddof, keepdims, mean, correction)
    return finish(ew.div(total, _c(total, count)), axes, keepdims)


def safe_root(total, p=2):
    """``total ** (1/p)`` for a sum of ``|x|^p``, with derivative 0 where ``total`` is 0.

    A norm (or a standard deviation) at the zero vector has no derivative
    (x / |x| is 0/0, NaN through the chain rule); 0 is its smallest
    subgradient, the value PyTorch gives for the norm. Zeros become ones under
    the root (``total + 0`` elsewhere, exact) and the root is multiplied by the
    mask of nonzeros, so no derivative meets 0/0; NaN and inf pass through.
    (Arithmetic rather than selects: cheaper on small arrays, and numpy's
    scalar results stay scalars.)
    """
    dtype = get_aval(total).dtype
    if not isinstance(total, Tracer):  # a plain value: no derivative is taken of it
        return ew.sqrt(total) if p == 2 else ew.pow(total, np.asarray(1.0 / p, dtype))
    nonzero = ew.convert_element_type(ew.ne(total, np.zeros((), dtype)), dtype)
    safe = ew.add(total, ew.sub(np.ones((), dtype), nonzero))
    root = ew.sqrt(safe) if p == 2 else ew.pow(safe, np.asarray(1.0 / p, dtype))
    return ew.mul(root, nonzero)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=NoValue,
        mean=NoValue, correction=NoValue):
    """Standard deviation over the given axes, ``sqrt(var(a, ...))`` (like ``numpy.std``).

    Where the values are all equal its gradient is 0 (its smallest
    subgradient), not NaN, as for ``linalg.norm`` at the zero vector.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.std(np.array([1., 3.]))
    np.float64(1.0)
    """
    if out is not None or where is not NoValue:
        reduction_options("std", out, where=where)
    total, axes, count = _var("std", a, axis, dtype, ddof, keepdims, mean, correction)
    return finish(safe_root(ew.div(total, _c(total, count))), axes, keepdims)


def extremum(name, prim_op, a, axis, out, keepdims, initial, where):
    if out is not None or initial is not NoValue or where is not NoValue:
        reduction_options(name, out, initial, where)
    a = num_arg(name, a)
    axes = normalize_axes(name, axis, a.ndim)
    _check_nonempty(name, shape_of(a), axes)
    return finish(prim_op(a, axes=axes) if axes else a, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Maximum over the given axes; NaN propagates (like ``numpy.max``).

    Where several elements attain the maximum they share its derivative equally.

    Raises:
      ShapeError: when reducing an empty axis.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.max(np.array([[1, 5], [7, 2]]), axis=1)
    array([5, 7])
    """
    return extremum("max", reductions.reduce_max, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Minimum over the given axes; NaN propagates (like ``numpy.min``)."""
    return extremum("min", reductions.reduce_min, a, axis, out, keepdims, initial, where)


def amax(a, axis=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Maximum over the given axes (an alias of ``max``, like ``numpy.amax``)."""
    return extremum("amax", reductions.reduce_max, a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=NoValue, where=NoValue):
    """Minimum over the given axes (an alias of ``min``, like ``numpy.amin``)."""
    return extremum("amin", reductions.reduce_min, a, axis, out, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range ``max - min`` over the given axes (like ``numpy.ptp``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.ptp(np.array([4., 1., 9.]))
    np.float64(8.0)
    """
    a = num_arg("ptp", a)
    no_bool("ptp", a)
    hi = extremum("ptp", reductions.reduce_max, a, axis, out, keepdims, NoValue, NoValue)
    lo = extremum("ptp", reductions.reduce_min, a, axis, out, keepdims, NoValue, NoValue)
    return ew.sub(hi, lo)


def arg_extremum(name, prim_op, a, axis, out, keepdims):
    reject_out(name, out)
    a = num_arg(name, a)
    shape = shape_of(a)
    if axis is None:
        if get_aval(a).size == 0:
            raise ShapeError(f"{fname(name)} of an empty array is undefined (numpy raises "
                             "too)")
        flat = a if len(shape) == 1 else structural.reshape(a, new_sizes=(get_aval(a).size,))
        index = prim_op(flat, axis=0, index_dtype=INT64)
        if keepdims:
            return structural.reshape(index, new_sizes=(1,) * len(shape))
        return finish(index, (), False)
    ax = _axis(name, axis, len(shape))
    _check_nonempty(name, shape, (ax,))
    return finish(prim_op(a, axis=ax, index_dtype=INT64), (ax,), keepdims)


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum along ``axis`` (of the flattened array for None).

    Like ``numpy.argmax``; NaN counts as the maximum. The result is an int64
    array, which carries no derivative.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.argmax(np.array([[1, 5], [7, 2]]), axis=1)
    array([1, 0])
    """
    return arg_extremum("argmax", reductions.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum along ``axis`` (of the flattened array for None)."""
    return arg_extremum("argmin", reductions.argmin, a, axis, out, keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=NoValue):
    """Whether any element over the given axes is true (like ``numpy.any``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.any(np.array([[0, 1], [0, 0]]), axis=1)
    array([ True, False])
    """
    reduction_options("any", out, where=where)
    a = bool_arg("any", a)
    axes = normalize_axes("any", axis, len(shape_of(a)))
    return finish(reductions.reduce_or(a, axes=axes) if axes else a, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=NoValue):
    """Whether all elements over the given axes are true (like ``numpy.all``)."""
    reduction_options("all", out, where=where)
    a = bool_arg("all", a)
    axes = normalize_axes("all", axis, len(shape_of(a)))
    return finish(reductions.reduce_and(a, axes=axes) if axes else a, axes, keepdims)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over the given axes (like ``numpy.average``).

    ``weights`` has ``a``'s shape, or, with an ``axis``, the shape of ``a``
    along those axes. Differentiable in ``a`` and ``weights``.

    Args:
      a: array_like. axis: None, int or tuple. weights: array_like or None.
      returned: also return the sum of the weights (broadcast to the result).
      keepdims: keep the reduced axes with size 1.

    Returns:
      The average, or ``(average, sum_of_weights)`` if ``returned``.

    Raises:
      ShapeError: weights of the wrong shape. ZeroWeightsError: concrete weights
      summing to zero.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.average(np.array([1., 2., 4.]), weights=np.array([1., 1., 2.]))
    np.float64(2.75)
    """
    a = num_arg("average", a)
    shape = shape_of(a)
    axes = normalize_axes("average", axis, len(shape))
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        avg_shape = shape_of(avg)
        count = math.prod(shape) // builtins.max(math.prod(avg_shape), 1)
        return avg, full(avg_shape, count, get_aval(avg).dtype)
    w = _array("average", weights)
    if a.dtype.kind in "biu":
        dtype = np.result_type(a.dtype, w.dtype, F64)
    else:
        dtype = result_dtype("average", a.dtype, w.dtype)
    w_shape = shape_of(w)
    if w_shape != shape:
        if axis is None:
            raise ShapeError(
                f"{fname('average')}: weights of shape {w_shape} differ from a's shape "
                f"{shape}; give axis= to weight along chosen axes.")
        given = tuple(_axis("average", ax, len(shape)) for ax in
                      (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if w_shape != tuple(shape[ax] for ax in given):
            raise ShapeError(
                f"{fname('average')}: weights of shape {w_shape} must match a's shape "
                f"{shape} along axis {axis}, i.e. {tuple(shape[ax] for ax in given)}")
        order = tuple(int(i) for i in np.argsort(given))
        if order != tuple(range(len(order))):
            w = structural.transpose(w, permutation=order)
        w = structural.reshape(w, new_sizes=tuple(s if i in axes else 1
                                                  for i, s in enumerate(shape)))
    a, w = cast(a, dtype), cast(w, dtype)
    scale = sum(w, axis=axes, keepdims=keepdims) if axes else w
    if not isinstance(scale, Tracer) and np.any(np.asarray(scale) == 0):
        raise ZeroWeightsError(f"{fname('average')}: the weights sum to zero, so they "
                               "cannot be normalised")
    total = sum(ew.mul(a, w), axis=axes, keepdims=keepdims) if axes else ew.mul(a, w)
    avg = ew.div(total, scale)
    if returned:
        return avg, structural.broadcast_to(scale, shape_of(avg))
    return avg


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of nonzero elements over the given axes (like ``numpy.count_nonzero``)."""
    counted = sum(bool_arg("count_nonzero", a), axis=axis, keepdims=keepdims)
    return int(counted) if axis is None and not keepdims and not isinstance(counted, Tracer) \
        else counted


__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "ptp", "argmax",
    "argmin", "any", "all", "average", "count_nonzero", "ZeroWeightsError",
]
