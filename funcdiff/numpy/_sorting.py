"""Cumulative operations, differences and sorting of funcdiff.numpy.

Thin numpy-semantics wrappers over the ``cumulative`` and ``sorting``
primitives: ``axis=None`` flattens, small integers accumulate in numpy's
platform dtype, booleans are counted as integers. ``maximum_accumulate`` and
``minimum_accumulate`` are what ``np.maximum.accumulate`` and
``np.minimum.accumulate`` map onto on tracers. ``diff`` is slices and a
subtraction; ``searchsorted`` counts comparisons when its inputs are traced
(so it is traceable and batchable, though ``O(len(a) * len(v))``);
``unique`` has a data-dependent shape, so it needs concrete values (it still
carries derivatives of the unique values under grad/jvp, which are a gather).
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Tracer, concrete_value, get_aval
from funcdiff.errors import ConcretizationError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._nonzero import unique_sized
from funcdiff.primitives import cumulative, indexing, reductions, sorting
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import slicing, structural

_NoValue = object()  # numpy's sentinel for "argument not given" (None is a value)


def _plain(a) -> bool:
    """True for a tracer or a real (or boolean) numpy array: ``_util.asarray`` would
    return it unchanged, so the common case may skip the argument normalisation."""
    return isinstance(a, Tracer) or (type(a) is np.ndarray and a.dtype.kind in "biuf")


def _fast_axis(a, axis):
    """``axis`` normalised when it is a plain int in range of a non-0-d ``a``, else None
    (the general path then handles ``axis=None``, other types and the errors)."""
    ndim = a.ndim
    if type(axis) is int and -ndim <= axis < ndim:
        return axis % ndim
    return None


def _shape(x) -> tuple[int, ...]:
    return get_aval(x).shape


def _ravel(x):
    size = get_aval(x).size
    return x if _shape(x) == (size,) else structural.reshape(x, new_sizes=(size,))


def _accumulator_dtype(dtype: np.dtype) -> np.dtype:
    """numpy's default dtype of cumsum/cumprod: small ints widen to the platform int."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _prepare_axis(name: str, a, axis):
    """(array, axis) with axis=None flattened and 0-d inputs made 1-D, as numpy does."""
    if axis is None or len(_shape(a)) == 0:
        if axis is not None:
            _util.normalize_axis(axis, 1, name)
        return _ravel(a), 0
    return a, _util.normalize_axis(axis, len(_shape(a)), name)


def _cumulative(name: str, prim_op, a, axis, dtype, out):
    if dtype is None and out is None and _plain(a) and _accumulator_dtype(a.dtype) is a.dtype:
        # the common case: no cast, a 1-D array with axis=None or an int axis in range
        fast = 0 if axis is None and a.ndim == 1 else _fast_axis(a, axis)
        if fast is not None:
            return prim_op(a, axis=fast, reverse=False)
    _util.reject(name, out=out)
    a = _util.asarray(a, name)
    a, axis = _prepare_axis(name, a, axis)
    dtype = np.dtype(dtype) if dtype is not None else _accumulator_dtype(a.dtype)
    if dtype == np.bool_:  # logical accumulation: count in int64, then back to bool
        counts = prim_op(_util.cast(a, np.dtype(np.int64)), axis=axis, reverse=False)
        return ew.ne(counts, np.zeros((), np.int64))
    return prim_op(_util.cast(a, dtype), axis=axis, reverse=False)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (numpy.cumsum); ``axis=None`` flattens first.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.cumsum(np.array([[1, 2], [3, 4]]), axis=0)
    array([[1, 2],
           [4, 6]])
    """
    return _cumulative("cumsum", cumulative.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (numpy.cumprod); ``axis=None`` flattens first.

    The derivative is exact where ``a`` has zeros.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.cumprod(np.array([1., 2., 3.]))
    array([1., 2., 6.])
    """
    return _cumulative("cumprod", cumulative.cumprod, a, axis, dtype, out)


def _array_api_cumulative(name: str, prim_op, identity: int, x, axis, dtype, out,
                          include_initial):
    """numpy 2.1's cumulative_sum/cumulative_prod: cumsum/cumprod that require ``axis``
    for more than one dimension and, with ``include_initial``, start with ``identity``."""
    _util.reject(name, out=out)
    x = _util.asarray(x, name)
    ndim = len(_shape(x))
    if axis is None and ndim > 1:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name} needs axis= for an array of {ndim} dimensions (shape "
            f"{_shape(x)}), as numpy 2 does; pass axis=..., or flatten first with "
            f"fnp.{name}(fnp.ravel(x)).")
    out = _cumulative(name, prim_op, x, axis, dtype, None)
    if not include_initial:
        return out
    axis = 0 if axis is None else _util.normalize_axis(axis, len(_shape(out)), name)
    start_shape = _shape(out)[:axis] + (1,) + _shape(out)[axis + 1:]
    start = np.full(start_shape, identity, dtype=out.dtype)  # a constant: it depends on shapes
    return structural.concatenate(start, out, dimension=axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative sum along ``axis`` (numpy.cumulative_sum, numpy 2.1).

    Like ``cumsum``, but ``axis`` is required for more than one dimension, and
    ``include_initial=True`` starts the result with a 0 (one more element along
    ``axis``).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.cumulative_sum(np.array([1., 2., 3.]), include_initial=True)
    array([0., 1., 3., 6.])
    """
    return _array_api_cumulative("cumulative_sum", cumulative.cumsum, 0, x, axis,
                                 dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative product along ``axis`` (numpy.cumulative_prod, numpy 2.1).

    Like ``cumprod``, but ``axis`` is required for more than one dimension, and
    ``include_initial=True`` starts the result with a 1.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.cumulative_prod(np.array([[1, 2], [3, 4]]), axis=1, include_initial=True)
    array([[ 1,  1,  2],
           [ 1,  3, 12]])
    """
    return _array_api_cumulative("cumulative_prod", cumulative.cumprod, 1, x, axis,
                                 dtype, out, include_initial)


def _running_extremum(name: str, prim_op, a, axis, dtype, out):
    _util.reject(name, out=out)
    a = _util.asarray(a, name)
    if len(_shape(a)) == 0:
        raise InvalidArgumentError(f"{name} cannot accumulate on a scalar (a 0-d array); "
                                   "reshape it to 1-D first")
    if axis is None or isinstance(axis, (tuple, list)):
        raise InvalidArgumentError(f"{name}: accumulate does not allow multiple axes "
                                   f"(got axis={axis!r}); pass one int")
    axis = _util.normalize_axis(axis, len(_shape(a)), name)
    if dtype is not None:
        a = _util.cast(a, np.dtype(dtype))
    return prim_op(a, axis=axis, reverse=False)


def maximum_accumulate(a, axis=0, dtype=None, out=None):
    """Running maximum along ``axis`` (``numpy.maximum.accumulate``); NaN propagates.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.maximum_accumulate(np.array([1., 3., 2., 5.]))
    array([1., 3., 3., 5.])
    """
    return _running_extremum("maximum.accumulate", cumulative.cummax, a, axis, dtype, out)


def minimum_accumulate(a, axis=0, dtype=None, out=None):
    """Running minimum along ``axis`` (``numpy.minimum.accumulate``); NaN propagates.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.minimum_accumulate(np.array([3., 1., 2., 0.]))
    array([3., 1., 1., 0.])
    """
    return _running_extremum("minimum.accumulate", cumulative.cummin, a, axis, dtype, out)


# ---------------------------------------------------------------------------
# Differences


def _slice_axis(x, axis: int, start: int, stop: int):
    shape = _shape(x)
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    limits = tuple(stop if i == axis else s for i, s in enumerate(shape))
    return slicing.slice(x, start_indices=starts, limit_indices=limits)


def _concatenate_promoted(name: str, parts: list, axis: int):
    parts = _util.promote(name, *parts)
    parts = [p for p in parts if _shape(p)[axis] != 0] or parts[:1]
    return parts[0] if len(parts) == 1 else structural.concatenate(*parts, dimension=axis)


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """The ``n``-th discrete difference along ``axis`` (numpy.diff).

    ``prepend``/``append`` are joined on first (scalars broadcast to one slice).
    Booleans differ by ``!=``, as in numpy.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.diff(np.array([1., 4., 9., 16.]))
    array([3., 5., 7.])
    >>> fnp.diff(np.array([1., 4., 9., 16.]), n=2)
    array([2., 2.])
    """
    n = int(n)
    if n < 0:
        raise InvalidArgumentError(f"diff: order must be non-negative but got n={n}")
    a = _util.asarray(a, "diff")
    ndim = len(_shape(a))
    if ndim == 0:
        raise ShapeError("diff requires input that is at least one dimensional, got a 0-d array")
    axis = _util.normalize_axis(axis, ndim, "diff")
    if n == 0:
        return a
    parts = [a]
    for where, value in (("prepend", prepend), ("append", append)):
        if value is _NoValue:
            continue
        value = _util.asarray(value, "diff")
        if len(_shape(value)) == 0:
            shape = list(_shape(a))
            shape[axis] = 1
            value = structural.broadcast_to(value, tuple(shape))
        parts = [value] + parts if where == "prepend" else parts + [value]
    if len(parts) > 1:
        a = _concatenate_promoted("diff", parts, axis)
    op = ew.ne if a.dtype == np.bool_ else ew.sub
    for _ in range(n):
        length = _shape(a)[axis]
        if length == 0:
            break
        a = op(_slice_axis(a, axis, 1, length), _slice_axis(a, axis, 0, length - 1))
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened ``ary`` (numpy.ediff1d).

    ``to_begin``/``to_end`` are prepended/appended; they must cast to ``ary``'s
    dtype under numpy's 'same_kind' rule.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.ediff1d(np.array([1., 2., 4., 7.]), to_begin=-99.)
    array([-99.,   1.,   2.,   3.])
    """
    ary = _ravel(_util.asarray(ary, "ediff1d"))
    dtype = ary.dtype
    if dtype == np.bool_:
        raise DTypeError("ediff1d does not subtract booleans (numpy raises too); convert with "
                         "astype(int) or use diff, which compares booleans with !=")
    length = _shape(ary)[0]
    parts = [ew.sub(_slice_axis(ary, 0, 1, length), _slice_axis(ary, 0, 0, length - 1))
             if length > 1 else structural.full((0,), 0, dtype)]
    for where, value in (("to_begin", to_begin), ("to_end", to_end)):
        if value is None:
            continue
        value = _util.asarray(value, "ediff1d")
        if not np.can_cast(value.dtype, dtype, casting="same_kind"):
            raise DTypeError(f"ediff1d: dtype of `{where}` ({value.dtype}) must be compatible "
                             f"with input `ary` ({dtype}) under the `same_kind` rule.")
        value = _util.cast(_ravel(value), dtype)
        parts = [value] + parts if where == "to_begin" else parts + [value]
    parts = [p for p in parts if _shape(p)[0] != 0] or parts[:1]
    return parts[0] if len(parts) == 1 else structural.concatenate(*parts, dimension=0)


# ---------------------------------------------------------------------------
# Sorting


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Sorted copy of ``a`` along ``axis`` (numpy.sort); ``axis=None`` flattens.

    Ascending, stable, NaN last; ``kind``/``stable`` are accepted (the sort is
    always stable). The derivative permutes the tangent like the values.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.sort(np.array([[3., 1.], [0., 2.]]))
    array([[1., 3.],
           [0., 2.]])
    """
    if order is None and _plain(a):
        fast = _fast_axis(a, axis)
        if fast is not None:
            return sorting.sort_p.bind(a, dimension=fast, num_keys=1)[0]
    _util.reject("sort", order=order)
    a = _util.asarray(a, "sort")
    if axis is None:
        a, axis = _ravel(a), 0
    return sorting.sort(a, _util.normalize_axis(axis, len(_shape(a)), "sort")
                        if _shape(a) else axis)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort ``a`` along ``axis`` (numpy.argsort), as int64.

    The order is stable (ties keep their original order, as numpy's
    ``kind='stable'``); ``axis=None`` flattens; a 0-d input gives ``[0]``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.argsort(np.array([3., 1., 2.]))
    array([1, 2, 0])
    """
    if order is None and _plain(a):
        fast = _fast_axis(a, axis)
        if fast is not None:
            return sorting.argsort(a, fast)
    _util.reject("argsort", order=order)
    a = _util.asarray(a, "argsort")
    if axis is None or len(_shape(a)) == 0:
        if axis is not None:
            _util.normalize_axis(axis, 1, "argsort")
        a, axis = _ravel(a), 0
    return sorting.argsort(a, _util.normalize_axis(axis, len(_shape(a)), "argsort"))


def _less_nan_last(x, y):
    """``x < y`` in numpy's sort order, where NaN is larger than every number."""
    less = ew.lt(x, y)
    if x.dtype.kind != "f":
        return less
    return ew.or_(less, ew.and_(ew.ne(y, y), ew.eq(x, x)))


def searchsorted(a, v, side="left", sorter=None):
    """Indices where ``v`` would be inserted into the sorted 1-D ``a`` (numpy.searchsorted).

    Concrete inputs (also the primal values seen under grad/jvp) use numpy's
    binary search. Abstract inputs (jit, make_jaxpr, vmap) count, for each ``v``,
    the entries of ``a`` that sort before it (``O(len(a) * v.size)`` work and
    memory), which stays traceable and batchable. The result is int64 and
    carries no derivative.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.searchsorted(np.array([1., 2., 3.]), np.array([0.5, 2., 9.]), side="right")
    array([0, 2, 3])
    """
    if side not in ("left", "right"):
        raise InvalidArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    try:  # values known now (eager, or the primal side of grad/jvp): numpy's binary search
        a_c, v_c, sorter_c = (concrete_value(x, "searchsorted") for x in (a, v, sorter))
    except ConcretizationError:
        pass
    else:
        return np.searchsorted(np.asarray(a_c), np.asarray(v_c), side=side,
                               sorter=None if sorter_c is None else np.asarray(sorter_c))
    a = _util.asarray(a, "searchsorted")
    if len(_shape(a)) != 1:
        raise ShapeError(f"searchsorted needs a 1-D array a, got shape {_shape(a)}")
    if sorter is not None:
        a = indexing.gather(a, _util.asarray(sorter, "searchsorted"), axis=0)
    a, v = _util.promote("searchsorted", a, _util.asarray(v, "searchsorted"))
    v_shape = _shape(v)
    v_col = structural.reshape(v, new_sizes=v_shape + (1,))
    if side == "left":  # how many a[i] < v
        before = _less_nan_last(a, v_col)
    else:  # how many a[i] <= v, i.e. not v < a[i]
        before = ew.not_(_less_nan_last(v_col, a))
    counts = ew.convert_element_type(before, new_dtype=np.dtype(np.int64))
    return reductions.reduce_sum(counts, axes=(len(v_shape),))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None):
    """The sorted unique elements of ``ar`` (numpy.unique).

    The output's shape depends on the data, so without ``size`` ``unique``
    needs a concrete value: it cannot be staged (jit, make_jaxpr) or vmapped;
    under grad/jvp the unique values are a gather of ``ar`` and carry its
    derivative. Indices, inverse and counts are plain numpy int64 arrays. As
    in JAX, ``size=k`` returns exactly the first ``k`` unique values of the
    flattened array, padded with ``fill_value`` (default: the smallest value),
    and then traces under every transform (values only).

    Raises:
      ConcretizationError: if ``ar`` is abstract (under jit, make_jaxpr or vmap)
        and no ``size`` is given.
      InvalidArgumentError: ``size`` with ``axis`` or a ``return_*`` flag.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unique(np.array([3., 1., 3., 2.]))
    array([1., 2., 3.])
    >>> fnp.unique(np.array([3., 1., 3.]), size=3, fill_value=0.0)
    array([1., 3., 0.])
    """
    flags = dict(return_index=return_index, return_inverse=return_inverse,
                 return_counts=return_counts)
    if size is not None:
        if axis is not None or any(flags.values()):
            raise InvalidArgumentError(
                "funcdiff.numpy.unique supports size= for the unique values of the flattened "
                "array only; call it without axis and return_index/return_inverse/"
                "return_counts, or without size on a concrete array.")
        size = _util.static_count(size, "unique", "size", "the number of results")
        return unique_sized(_util.asarray(ar, "unique"), size, fill_value, equal_nan)
    if not isinstance(ar, Tracer):
        return np.unique(_util.asarray(ar, "unique"), axis=axis, equal_nan=equal_nan, **flags)
    try:
        value = np.asarray(ar.to_concrete("unique"))
    except ConcretizationError as e:
        raise ConcretizationError(
            f"unique returns an array whose shape depends on the values of its input, so it "
            f"needs a concrete value and cannot be traced under jit, make_jaxpr or vmap. Pass "
            f"size= (and fill_value=) to fix the number of results, or call it outside the "
            f"transform (or on a static argument). Details: {e}") from None
    results = np.unique(value, return_index=True, return_inverse=return_inverse,
                        return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    index = results[1]
    if axis is None:
        values = indexing.gather(_ravel(ar), index, axis=0)
    else:
        values = indexing.gather(ar, index, axis=_util.normalize_axis(axis, ar.ndim, "unique"))
    extras = ([index] if return_index else []) + list(results[2:])
    return tuple([values] + extras) if extras else values


__all__ = ["cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "maximum_accumulate",
           "minimum_accumulate", "diff", "ediff1d", "sort", "argsort", "searchsorted", "unique"]
