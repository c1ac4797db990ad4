"""Order statistics of funcdiff.numpy: median, quantile, percentile and their NaN-ignoring forms.

The reduced axes are moved to the end and merged, the data are sorted with the
``sorting`` primitive, and each quantile interpolates between its two sorted
neighbours (numpy's 'linear' method, the only one supported), so the derivative
flows to those neighbours. With a concrete ``q`` the neighbour indices are
settings computed with numpy; with a traced ``q`` they are traced, and the
result is differentiable in ``q`` too. The NaN-ignoring forms sort NaN last and
interpolate within each slice's count of numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy._reductions import normalize_axes, count, finish, mean
from funcdiff.numpy._ufunc_support import (BOOL, F64, INT64, arg, _c, cast, fname, full,
                                           num_arg, reject_out, shape_of)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, reductions, slicing, sorting, structural


# ---------------------------------------------------------------------------
# Order statistics


def _sorted_last(name: str, a: Any, axis: Any):
    """``_to_last``'s results and the merged axis sorted: ``(x, sorted x, rest, kept,
    n)``; quantiles of an empty selection are an error."""
    x, rest, kept, n = _to_last(name, a, axis)
    if n == 0:
        raise ShapeError(f"{fname(name)} of an empty array is undefined")
    return x, sorting.sort(x, axis=len(rest)), rest, kept, n


def _to_last(name: str, a: Any, axis: Any):
    """``a`` with the reduced axes moved to the end and merged into one."""
    shape = shape_of(a)
    axes = normalize_axes(name, axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    perm = rest + axes
    if perm != tuple(range(len(shape))):
        a = structural.transpose(a, permutation=perm)
    rest_shape = tuple(shape[i] for i in rest)
    n = count(shape, axes)
    if shape_of(a) != rest_shape + (n,):
        a = structural.reshape(a, new_sizes=rest_shape + (n,))
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return a, rest_shape, kept, n


def _last_element(x: Any, n: int) -> Any:
    """``x[..., n - 1]`` of an array whose last axis has size ``n``."""
    shape = shape_of(x)
    last = len(shape) - 1
    top = slicing.slice(x, start_indices=(0,) * last + (n - 1,), limit_indices=shape)
    return structural.squeeze(top, dimensions=(last,))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over the given axes (like ``numpy.median``); NaN if a slice holds NaN.

    The mean of the middle element(s) of the sorted data, so the derivative
    flows to the one or two middle elements.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.median(np.array([3., 1., 4., 2.]))
    np.float64(2.5)
    """
    reject_out("median", out)
    a = num_arg("median", a)
    x, rest, kept, n = _to_last("median", a, axis)
    last = len(rest)
    if n == 0:
        result = full(rest, np.nan, F64 if a.dtype.kind in "biu" else a.dtype)
    else:
        s = sorting.sort(x, axis=last)
        half = n // 2
        lo = half if n % 2 else half - 1
        middle = slicing.slice(s, start_indices=(0,) * last + (lo,),
                                  limit_indices=rest + (half + 1,))
        result = mean(middle, axis=last)
        if a.dtype.kind == "f":
            top = _last_element(s, n)
            result = ew.select(ew.ne(top, top), _c(result, np.nan), result)
    if keepdims:
        result = structural.reshape(result, new_sizes=kept)
    return finish(result, (), False)


def _quantile_indices_concrete(q: np.ndarray, n: int):
    """numpy's 'linear' method: neighbour indices and weights, from a concrete q."""
    virtual = (n - 1) * q
    if q.dtype.kind in "iu":  # integer quantiles (0 or 1) pick elements exactly
        index = np.asarray(virtual, np.int64)
        return index, index, None
    prev = np.floor(virtual)
    above, below = virtual >= n - 1, virtual < 0
    prev, nxt = (np.where(above, -1, np.where(below, 0, v)) for v in (prev, prev + 1))
    gamma = np.asarray(virtual - prev, dtype=virtual.dtype)
    lo = np.where(prev < 0, n - 1, prev).astype(np.int64)
    hi = np.where(nxt < 0, n - 1, nxt).astype(np.int64)
    return lo, hi, gamma


def _quantile_indices_traced(q: Any, n: int):
    """The same indices and weights computed with primitives, for a traced q."""
    one, zero = _c(q, 1), _c(q, 0)
    virtual = ew.mul(_c(q, n - 1), q)
    prev = ew.floor(virtual)
    above, below = ew.ge(virtual, _c(q, n - 1)), ew.lt(virtual, zero)
    minus_one = _c(q, -1)
    prev_adj = ew.select(above, minus_one, ew.select(below, zero, prev))
    next_adj = ew.select(above, minus_one, ew.select(below, zero, ew.add(prev, one)))
    gamma = ew.sub(virtual, prev_adj)
    last = _c(q, n - 1)
    lo = cast(ew.select(ew.lt(prev_adj, zero), last, prev_adj), INT64)
    hi = cast(ew.select(ew.lt(next_adj, zero), last, next_adj), INT64)
    return lo, hi, gamma


def _take_quantiles(s: Any, index: Any, q_shape: tuple, rest: tuple) -> Any:
    """Elements of the sorted ``s`` (rest + (n,)) at ``index`` (q_shape): q_shape + rest."""
    last = len(rest)
    flat = index if shape_of(index) == (math.prod(q_shape),) else structural.reshape(
        index, new_sizes=(math.prod(q_shape),))
    taken = indexing.gather(s, flat, axis=last)
    taken = structural.moveaxis(taken, last, 0)
    return structural.reshape(taken, new_sizes=q_shape + rest)


def _quantile(name: str, a: Any, q: Any, axis: Any, keepdims: bool, method: str) -> Any:
    if method != "linear":
        raise UnsupportedNumpyError(
            f"{fname(name)} supports only method='linear' (numpy's default), got "
            f"method={method!r}")
    a = num_arg(name, a)
    if a.dtype == BOOL:
        raise DTypeError(f"{fname(name)} does not accept booleans (numpy neither); "
                         "convert with astype(float) first.")
    weak = type(q) in (int, float)
    traced = isinstance(q, Tracer)
    if not traced:
        q = np.asarray(arg(name, q))
        if q.dtype.kind not in "iuf":
            raise DTypeError(f"{fname(name)} needs numeric quantiles, got {q.dtype}")
        if not np.all((q >= 0) & (q <= 1)):
            raise InvalidArgumentError(f"{fname(name)}: quantiles must be in the range "
                                       f"[0, 1] (percentiles in [0, 100]), got {q}")
    q_dtype = q.dtype
    integer_q = q_dtype.kind in "iu"
    if integer_q:
        work = a.dtype
    elif weak:
        work = a.dtype if a.dtype.kind == "f" else F64
    else:
        work = np.result_type(a.dtype, q_dtype)
        work = work if work.kind == "f" else F64
    # numpy sorts and subtracts neighbours in a's dtype, then interpolates in `work`
    x, s, rest, kept, n = _sorted_last(name, a, axis)
    last = len(rest)
    q_shape = shape_of(q)
    if traced:
        lo_i, hi_i, gamma = _quantile_indices_traced(cast(q, work), n)
    else:
        lo_i, hi_i, gamma = _quantile_indices_concrete(q, n)
    lo = _take_quantiles(s, lo_i, q_shape, rest)
    if gamma is None:
        result = lo
    else:
        hi = _take_quantiles(s, hi_i, q_shape, rest)
        t_shape = q_shape + (1,) * last
        if traced:
            t = structural.reshape(gamma, new_sizes=t_shape)
            upper, one_minus = ew.ge(t, _c(t, 0.5)), ew.sub(_c(t, 1), t)
        else:
            upper = (gamma >= 0.5).reshape(t_shape)
            one_minus = np.asarray(1 - gamma, work).reshape(t_shape)
            t = np.asarray(gamma, work).reshape(t_shape)
        diff = cast(ew.sub(hi, lo), work)
        lo, hi = cast(lo, work), cast(hi, work)
        result = ew.select(upper, ew.sub(hi, ew.mul(diff, one_minus)),
                           ew.add(lo, ew.mul(diff, t)))
    if a.dtype.kind == "f":
        top = _last_element(s, n)
        result = ew.select(ew.ne(top, top), _c(result, np.nan), result)
    if keepdims:
        result = structural.reshape(result, new_sizes=q_shape + kept)
    return finish(result, (), False)


def _reject_options(name, out, weights, interpolation):
    """Quantile options funcdiff does not implement raise, naming the function."""
    reject_out(name, out)
    if weights is not None or interpolation is not None:
        raise UnsupportedNumpyError(f"funcdiff.numpy.{name} does not support weights= or "
                                    "interpolation=; use method='linear'.")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles over the given axes, linear interpolation (``numpy.quantile``).

    ``q`` (in ``[0, 1]``) may be an array: its shape is prepended to the
    result. The result is differentiable in ``a`` and, when traced, in ``q``.

    Raises:
      UnsupportedNumpyError: for a method other than 'linear', weights=, out=.
      InvalidArgumentError: for a concrete q outside [0, 1].

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.quantile(np.array([1., 2., 3., 4.]), 0.5)
    np.float64(2.5)
    """
    _reject_options("quantile", out, weights, interpolation)
    return _quantile("quantile", a, q, axis, keepdims, method)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th percentiles (``q`` in ``[0, 100]``), like ``numpy.percentile``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.percentile(np.array([1., 2., 3., 4., 5.]), [25, 50])
    array([2., 3.])
    """
    _reject_options("percentile", out, weights, interpolation)
    if isinstance(q, Tracer):
        q = ew.div(q, _c(q, 100))
    elif type(q) in (int, float):
        q = q / 100
    else:
        q = np.true_divide(np.asarray(arg("percentile", q)), 100)
    return _quantile("percentile", a, q, axis, keepdims, method)


# ---------------------------------------------------------------------------
# NaN-ignoring quantiles


def _nan_quantile(name, a, q, axis, keepdims, method):
    """Quantiles of the non-NaN elements: NaN sorts last, so each slice's first ``count``
    sorted entries are its data; the neighbour indices depend on that count."""
    if method != "linear":
        raise UnsupportedNumpyError(
            f"{fname(name)} supports only method='linear' (numpy's default), got "
            f"method={method!r}")
    a = num_arg(name, a)
    if a.dtype.kind != "f":
        return _quantile(name, a, q, axis, keepdims, method)
    weak = type(q) in (int, float)
    if not isinstance(q, Tracer):
        q = np.asarray(arg(name, q))
        if not np.all((q >= 0) & (q <= 1)):
            raise InvalidArgumentError(f"{fname(name)}: quantiles must be in the range "
                                       f"[0, 1] (percentiles in [0, 100]), got {q}")
    work = a.dtype if weak else np.result_type(a.dtype, q.dtype)
    work = work if work.kind == "f" else F64
    x, s, rest, kept, n = _sorted_last(name, a, axis)
    last = len(rest)
    q_shape = shape_of(q)
    # indices in q's float dtype, as numpy's (n - 1) * q: every (q, slice) pair
    q_float = q.dtype if q.dtype.kind == "f" else F64
    count = reductions.reduce_sum(cast(ew.eq(x, x), q_float), axes=(last,))  # rest
    qb = structural.reshape(cast(q, q_float), new_sizes=q_shape + (1,) * last)
    virtual = ew.mul(ew.sub(count, _c(count, 1)), qb)
    prev = ew.floor(virtual)
    top = ew.sub(count, _c(count, 1))
    lo_f = ew.max(ew.min(prev, top), _c(count, 0))
    hi_f = ew.max(ew.min(ew.add(prev, _c(count, 1)), top), _c(count, 0))
    gamma = cast(ew.sub(virtual, prev), work)
    out_shape = q_shape + rest

    def take(index):
        index = structural.broadcast_to(cast(index, INT64), out_shape)
        flat = structural.reshape(index, new_sizes=(math.prod(q_shape),) + rest)
        flat = structural.moveaxis(flat, 0, last)  # rest + (k,)
        taken = indexing.take_along_axis(s, flat, last)
        return structural.reshape(structural.moveaxis(taken, last, 0), new_sizes=out_shape)
    lo, hi = take(lo_f), take(hi_f)
    diff = cast(ew.sub(hi, lo), work)
    lo, hi = cast(lo, work), cast(hi, work)
    t = structural.broadcast_to(gamma, out_shape)
    result = ew.select(ew.ge(t, _c(t, 0.5)), ew.sub(hi, ew.mul(diff, ew.sub(_c(t, 1), t))),
                       ew.add(lo, ew.mul(diff, t)))
    empty = structural.broadcast_to(ew.eq(count, _c(count, 0)), out_shape)
    result = ew.select(empty, _c(result, np.nan), result)
    if keepdims:
        result = structural.reshape(result, new_sizes=q_shape + kept)
    return finish(result, (), False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """Quantiles of the non-NaN elements (like ``numpy.nanquantile``; NaN for all-NaN slices).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nanquantile(np.array([1., np.nan, 3.]), 0.5)
    np.float64(2.0)
    """
    _reject_options("nanquantile", out, weights, interpolation)
    return _nan_quantile("nanquantile", a, q, axis, keepdims, method)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """Percentiles of the non-NaN elements (like ``numpy.nanpercentile``)."""
    _reject_options("nanpercentile", out, weights, interpolation)
    if isinstance(q, Tracer):
        q = ew.div(q, _c(q, 100))
    elif type(q) in (int, float):
        q = q / 100
    else:
        q = np.true_divide(np.asarray(arg("nanpercentile", q)), 100)
    return _nan_quantile("nanpercentile", a, q, axis, keepdims, method)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-NaN elements (like ``numpy.nanmedian``; NaN for all-NaN slices)."""
    reject_out("nanmedian", out)
    a = num_arg("nanmedian", a)
    if a.dtype.kind != "f":
        return median(a, axis, keepdims=keepdims)
    return _nan_quantile("nanmedian", a, 0.5, axis, keepdims, "linear")


__all__ = [
    "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile",
]
