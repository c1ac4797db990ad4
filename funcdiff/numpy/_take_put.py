"""Taking and putting along an axis in funcdiff.numpy: take, take_along_axis, put_along_axis.

``take`` and ``take_along_axis`` gather; ``put_along_axis`` scatters into a
new array (numpy writes in place, funcdiff arrays are immutable). Indices are
normalised first: negative indices wrap once, ``mode='wrap'``/``'clip'`` wrap
or clip every index, and concrete indices out of range raise
IndexOutOfBoundsError like numpy. The along-axis forms index the flattened
array at positions built from numpy strides. The indices of triangles
(``tril_indices`` and friends) depend on shapes only and are numpy arrays.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import AxisError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._shape import INDEX_DTYPE, _arr, normalize_axis, shape_of, ravel, reshape
from funcdiff.primitives import elementwise as el
from funcdiff.primitives import indexing, structural
from funcdiff.primitives.indexing import IndexOutOfBoundsError


# ---------------------------------------------------------------------------
# Taking and putting


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """Take elements of an array along an axis (the flattened array when axis is None).

    Negative indices count from the end. ``mode='wrap'`` wraps every index,
    ``'clip'`` clips to the valid range; the default raises for out-of-bounds
    concrete indices (traced indices are checked when the program runs).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.take(np.array([[1, 2], [3, 4]]), [-1, 0])
    array([4, 1])
    """
    if (out is None and type(indices) is np.ndarray and indices.dtype == INDEX_DTYPE
            and (type(a) is np.ndarray and a.dtype.kind in "biuf" or isinstance(a, Tracer))
            and mode in ("raise", "wrap", "clip")):
        # the common case: concrete int64 indices, all in range (so no mode changes them)
        shape = a.shape
        if axis is None and len(shape) == 1:
            axis = 0
        if type(axis) is int and -len(shape) <= axis < len(shape) and _within(
                indices, shape[axis]):
            return indexing.gather(a, indices, axis=axis % len(shape))
    _util.reject("take", out=out)
    if mode not in ("raise", "wrap", "clip"):
        raise InvalidArgumentError(f"funcdiff.numpy.take: mode must be 'raise', 'wrap' or "
                                   f"'clip', got {mode!r}")
    a = _arr(a, "take")
    if axis is None:
        a, axis = ravel(a), 0
    shape = shape_of(a)
    if not shape:
        raise AxisError("funcdiff.numpy.take cannot take from a 0-d array along an axis")
    axis = normalize_axis(axis, len(shape), "take")
    indices = _util.asarray(indices, "take")
    indices = _normalize_index_array("take", indices, shape[axis], mode)
    return indexing.gather(a, indices, axis=axis)


def _within(indices: np.ndarray, size: int) -> bool:
    """True when every one of the concrete ``indices`` lies in ``[0, size)``, so none
    needs wrapping, clipping or an error. A few indices are checked in Python,
    which is cheaper than two numpy reductions."""
    if indices.size <= 32:
        values = indices.ravel().tolist()
        return not values or (min(values) >= 0 and max(values) < size)
    return bool(indices.min() >= 0 and indices.max() < size)


def _along_axis(name: str, arr: Any, indices: Any, axis: Any):
    """Flat positions into ``arr`` for numpy's along-axis indexing, and their shape."""
    arr = _arr(arr, name)
    indices = _util.asarray(indices, name)
    if axis is None:
        arr = ravel(arr)
        if len(shape_of(indices)) != 1:
            raise ShapeError(f"funcdiff.numpy.{name} with axis=None needs 1-d indices, got "
                             f"shape {shape_of(indices)}")
        axis = 0
    shape, ishape = shape_of(arr), shape_of(indices)
    if len(ishape) != len(shape):
        raise ShapeError(f"funcdiff.numpy.{name}: `indices` and `arr` must have the same number "
                         f"of dimensions, got shapes {ishape} and {shape}")
    axis = normalize_axis(axis, len(shape), name)
    indices = _normalize_index_array(name, indices, shape[axis])
    out_shape = []
    for k, (n, m) in enumerate(zip(shape, ishape)):
        if k == axis:
            out_shape.append(m)
        elif n == m or 1 in (n, m):
            out_shape.append(m if n == 1 else n)
        else:
            raise ShapeError(f"funcdiff.numpy.{name}: shape mismatch: indices {ishape} cannot "
                             f"be broadcast against arr {shape} in axis {k}")
    out_shape = tuple(out_shape)
    strides, offsets = _flat_offsets(shape, out_shape, axis)
    if isinstance(indices, Tracer):
        flat = el.add(el.mul(indices, np.asarray(strides[axis], INDEX_DTYPE)), offsets)
        flat = structural.broadcast_to(flat, out_shape)
    else:
        flat = indices * strides[axis] + offsets
    return arr, flat, out_shape


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    """Take values along an axis at positions given per element (as argsort returns).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.take_along_axis(np.array([[10, 30, 20]]), np.array([[0, 2, 1]]), axis=1)
    array([[10, 20, 30]])
    """
    if (type(indices) is np.ndarray and indices.dtype == INDEX_DTYPE and type(axis) is int
            and (type(arr) is np.ndarray and arr.dtype.kind in "biuf" or isinstance(arr, Tracer))):
        # the common case (labels picking log-probabilities): concrete int64 indices in
        # range, planned once per shapes
        plan = _along_plan(arr.shape, indices.shape, axis)
        if plan is not None and _within(indices, arr.shape[plan[0]]):
            _, stride, offsets = plan
            flat = indices * stride + offsets if stride != 1 else indices + offsets
            return indexing.gather(structural.reshape(arr, new_sizes=(math.prod(arr.shape),)),
                                   flat, axis=0)
    arr, flat, _ = _along_axis("take_along_axis", arr, indices, axis)
    return indexing.gather(ravel(arr), flat, axis=0)


@functools.lru_cache(maxsize=256)
def _along_plan(shape: tuple, ishape: tuple, axis: int) -> tuple | None:
    """``(axis, stride, offsets)`` of along-axis indexing of an array of ``shape`` by
    indices of ``ishape``: the flat positions are ``indices * stride + offsets``.
    None when the shapes need the general path (broadcast indices, errors)."""
    if len(shape) != len(ishape) or not -len(shape) <= axis < len(shape):
        return None
    axis %= len(shape)
    if any(n != m for k, (n, m) in enumerate(zip(shape, ishape)) if k != axis):
        return None
    strides, offsets = _flat_offsets(shape, ishape, axis)
    offsets.flags.writeable = False
    return axis, strides[axis], offsets


def _flat_offsets(shape: tuple, out_shape: tuple, axis: int) -> tuple[list, np.ndarray]:
    """The row-major strides of ``shape`` (in elements) and, shaped ``out_shape``, the
    flat offset of each position's along-axis line: ``indices * strides[axis] +
    offsets`` are the flat positions along-axis indexing reads."""
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    offsets = np.zeros(out_shape, INDEX_DTYPE)
    for k in range(len(shape)):
        if k != axis and out_shape[k] > 1:
            offsets = offsets + (np.arange(out_shape[k]) * strides[k]).reshape(
                (1,) * k + (out_shape[k],) + (1,) * (len(shape) - k - 1))
    return strides, offsets


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> Any:
    """Functional ``numpy.put_along_axis``: a NEW array with ``values`` written at the
    positions ``take_along_axis`` would read (the input is unchanged; numpy returns None).

    Repeated positions keep the last write; ``values`` is broadcast and cast to arr's dtype.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.put_along_axis(np.zeros((1, 3)), np.array([[2]]), 5.0, axis=1)
    array([[0., 0., 5.]])
    """
    orig = _arr(arr, "put_along_axis")
    arr, flat, out_shape = _along_axis("put_along_axis", orig, indices, axis)
    dtype = get_aval(arr).dtype
    values = _util.cast(_util.asarray(values, "put_along_axis"), dtype)
    try:
        values = structural.broadcast_to(values, out_shape)
    except ShapeError:
        raise ShapeError(f"funcdiff.numpy.put_along_axis: values of shape {shape_of(values)} "
                         f"cannot be broadcast to the indexed shape {out_shape}") from None
    out = indexing.scatter(ravel(arr), flat, values, axis=0)
    return reshape(out, shape_of(orig))


def _normalize_index_array(name: str, indices: Any, size: int, mode: str = "raise") -> Any:
    """Integer ``indices`` mapped into ``[0, size)``: negatives wrap once (mode 'raise'),
    or every index wraps ('wrap') or is clipped ('clip'). Concrete indices out of
    range raise IndexOutOfBoundsError like numpy."""
    aval = get_aval(indices)
    if aval.dtype.kind not in "iu":
        raise DTypeError(f"funcdiff.numpy.{name} needs integer indices, but got "
                         f"{aval.str_short()}; convert them with astype(int).")
    if not isinstance(indices, Tracer):
        idx = np.asarray(indices, dtype=INDEX_DTYPE)
        if mode == "wrap":
            if size == 0 and idx.size:
                raise IndexOutOfBoundsError(f"funcdiff.numpy.{name}: cannot do a non-empty take "
                                            "from an empty axis")
            return np.mod(idx, max(size, 1))
        if mode == "clip":
            if size == 0 and idx.size:
                raise IndexOutOfBoundsError(f"funcdiff.numpy.{name}: cannot do a non-empty take "
                                            "from an empty axis")
            return np.clip(idx, 0, max(size - 1, 0))
        bad = (idx < -size) | (idx >= size)
        if bad.any():
            raise IndexOutOfBoundsError(
                f"funcdiff.numpy.{name}: index {idx[bad].flat[0]} is out of bounds for axis "
                f"with size {size}")
        return np.where(idx < 0, idx + size, idx)
    idx = _util.cast(indices, INDEX_DTYPE)
    n = np.asarray(size, INDEX_DTYPE)
    if mode == "wrap":
        return el.rem(el.add(el.rem(idx, n), n), n)
    if mode == "clip":
        return el.max(el.min(idx, np.asarray(max(size - 1, 0), INDEX_DTYPE)),
                      np.asarray(0, INDEX_DTYPE))
    return el.select(el.lt(idx, np.asarray(0, INDEX_DTYPE)), el.add(idx, n), idx)


# ---------------------------------------------------------------------------
# Triangle indices (static: they depend on shapes only)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Row and column indices of the lower triangle of an (n, m) array.

    >>> import funcdiff.numpy as fnp
    >>> fnp.tril_indices(2)
    (array([0, 1, 1]), array([0, 0, 1]))
    """
    return tuple(np.nonzero(np.tri(n, m, k=k, dtype=bool)))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Row and column indices of the upper triangle of an (n, m) array."""
    return tuple(np.nonzero(~np.tri(n, m, k=k - 1, dtype=bool)))


def _square_shape(name: str, arr: Any) -> tuple[int, int]:
    shape = get_aval(arr).shape if isinstance(arr, Tracer) else np.shape(arr)
    if len(shape) != 2:
        raise ShapeError(f"funcdiff.numpy.{name}: input array must be 2-d, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple:
    """``tril_indices`` for the shape of a 2-d array."""
    n, m = _square_shape("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple:
    """``triu_indices`` for the shape of a 2-d array."""
    n, m = _square_shape("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


__all__ = ["take", "take_along_axis", "put_along_axis", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from"]
