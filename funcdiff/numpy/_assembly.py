"""Assembling arrays by position: append, insert and delete.

``insert`` and ``delete`` change the length of an axis by an amount their
``obj`` argument decides, so ``obj`` must be concrete: a Python int, slice or
integer sequence (a traced ``obj`` works under grad, whose values are concrete,
and raises a ConcretizationError under jit, make_jaxpr and vmap, as in JAX).
With the positions known, each is a static reordering along the axis: the
array and the values (cast to the array's dtype and broadcast, as numpy does)
are joined and a static index pattern is taken (``take_static``: slices and
one concatenate), so derivatives with respect to ``arr`` and ``values`` are
slices and pads, never a scatter. ``append`` is a concatenate. (Index
arithmetic, ``indices`` to ``ix_``, is in ``_index_arithmetic``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.numpy import _util
from funcdiff.numpy._shape import normalize_axis, take_static

_INDEX = np.dtype(np.int64)


# ---------------------------------------------------------------------------
# append, insert, delete


def append(arr: Any, values: Any, axis: Any = None) -> Any:
    """Values appended to the end of an array (numpy.append): a concatenate.

    Args:
      arr: the array to extend.
      values: what to append; with ``axis=None`` both are flattened first,
        otherwise ``values`` must have ``arr``'s shape except along ``axis``.
      axis: the axis to extend, or None to flatten.

    Returns:
      A new array with the dtype numpy's promotion gives both inputs.

    Raises:
      ShapeError, AxisError: when the shapes do not fit along ``axis``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.append(np.array([[1., 2.], [3., 4.]]), [5., 6.])
    array([1., 2., 3., 4., 5., 6.])
    >>> fnp.append(np.zeros((1, 2)), np.ones((1, 2)), axis=0).shape
    (2, 2)
    """
    arr, values = _util.asarray(arr, "append"), _util.asarray(values, "append")
    if axis is None:
        return fnp.concatenate([fnp.ravel(arr), fnp.ravel(values)])
    try:
        return fnp.concatenate([arr, values], axis=axis)
    except (ShapeError, AxisError) as error:
        raise type(error)(f"funcdiff.numpy.append(arr, values, axis={axis!r}) joins "
                          f"{arr.shape} and {values.shape} with concatenate: {error}") from None


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    """Values inserted before the given positions along an axis (numpy.insert).

    Args:
      arr: the array (flattened when ``axis`` is None).
      obj: where to insert: an int (``values`` form the new entries, their first
        axis moved to ``axis``), a slice or a 1-d integer sequence (one entry per
        position, all positions refer to ``arr`` before insertion). It decides the
        result's shape, so it must be concrete.
      values: cast to ``arr``'s dtype and broadcast, as numpy does.
      axis: the axis to insert along, or None.

    Returns:
      A new array of ``arr``'s dtype, differentiable in ``arr`` and ``values``.

    Raises:
      ConcretizationError: when ``obj`` is traced without a concrete value.
      IndexOutOfBoundsError: for a position outside ``[-n, n]``.
      DTypeError, ShapeError: for non-integer or multi-dimensional ``obj``, or
        ``values`` that do not broadcast.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.insert(np.array([1., 2., 3.]), 1, 9.)
    array([1., 9., 2., 3.])
    >>> fnp.insert(np.array([1., 2., 3.]), [0, 3], [7., 8.])
    array([7., 1., 2., 3., 8.])
    """
    arr, axis = _along("insert", arr, axis)
    shape, n = arr.shape, arr.shape[axis]
    obj = _positions("insert", obj, n)
    if obj.dtype == np.bool_:
        raise InvalidArgumentError(
            "funcdiff.numpy.insert needs integer positions (an int, slice or integer "
            "sequence), got a boolean array; for the positions of a mask use "
            "np.flatnonzero(mask).")
    _check_bounds("insert", obj, -n, n, axis, n)
    values = _util.cast(_util.asarray(values, "insert"), arr.dtype)
    if values.ndim < len(shape):  # numpy's ndmin: leading axes of size 1
        values = fnp.reshape(values, (1,) * (len(shape) - values.ndim) + values.shape)
    at = np.where(obj < 0, obj + n, obj).astype(_INDEX)
    if at.size == 1:
        # one position: all of ``values`` goes there (an int obj moves its first axis)
        if at.ndim == 0:
            values = fnp.moveaxis(values, 0, axis)
        count = values.shape[axis]
        where = int(at.reshape(())) + np.arange(count)
    else:
        # one entry per position; equal positions keep the order of obj
        count = at.size
        where = at.copy()
        where[np.argsort(at, kind="stable")] += np.arange(count)
    target = shape[:axis] + (count,) + shape[axis + 1:]
    try:
        values = fnp.broadcast_to(values, target)
    except ShapeError:
        raise ShapeError(
            f"funcdiff.numpy.insert: values of shape {values.shape} cannot be broadcast to "
            f"{target}, the shape of the {count} inserted entries along axis {axis} of "
            f"an array of shape {shape}") from None
    old = np.ones(n + count, bool)
    old[where] = False
    source = np.empty(n + count, _INDEX)
    source[old] = np.arange(n)
    source[where] = n + np.arange(count)
    return take_static(fnp.concatenate([arr, values], axis=axis), axis, source)


def delete(arr: Any, obj: Any, axis: Any = None) -> Any:
    """The array without the entries at the given positions along an axis (numpy.delete).

    Args:
      arr: the array (flattened when ``axis`` is None).
      obj: what to delete: an int, a slice, an integer sequence (repeats and
        negative positions allowed) or a boolean mask of the axis' length. It
        decides the result's shape, so it must be concrete.
      axis: the axis to delete along, or None.

    Returns:
      A new array of ``arr``'s dtype, differentiable in ``arr``.

    Raises:
      ConcretizationError: when ``obj`` is traced without a concrete value.
      IndexOutOfBoundsError: for a position outside ``[-n, n)``.
      DTypeError, ShapeError: for a non-integer ``obj`` or a mask of the wrong shape.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.delete(np.array([[1., 2., 3.], [4., 5., 6.]]), [0, -1], axis=1)
    array([[2.],
           [5.]])
    """
    arr, axis = _along("delete", arr, axis)
    n = arr.shape[axis]
    obj = _positions("delete", obj, n)
    if obj.dtype == np.bool_:
        if obj.shape != (n,):
            raise ShapeError(f"funcdiff.numpy.delete: a boolean obj is a mask over the axis, "
                             f"so it needs shape ({n},), got {obj.shape}")
        drop = obj
    else:
        _check_bounds("delete", obj, -n, n - 1, axis, n)
        drop = np.zeros(n, bool)
        drop[obj] = True  # numpy's own indexing wraps the negative positions
    return take_static(arr, axis, np.flatnonzero(~drop))


def _along(name: str, arr: Any, axis: Any) -> tuple[Any, int]:
    """``arr`` as an array and ``axis`` normalised (``axis=None`` flattens, as numpy does)."""
    arr = _util.asarray(arr, name)
    if axis is None:
        return (arr if arr.ndim == 1 else fnp.ravel(arr)), 0
    return arr, normalize_axis(axis, arr.ndim, name)


def _positions(name: str, obj: Any, n: int) -> np.ndarray:
    """The concrete positions ``obj`` names: a 0-d or 1-d int64 or boolean numpy array."""
    if isinstance(obj, slice):
        return np.arange(n, dtype=_INDEX)[obj]
    if isinstance(obj, Tracer) or (isinstance(obj, (list, tuple)) and any(
            isinstance(e, Tracer) for e in _util.flat(obj))):
        try:
            obj = _util.asarray(obj, name).to_concrete(f"funcdiff.numpy.{name}")
        except ConcretizationError:
            raise ConcretizationError(
                f"funcdiff.numpy.{name}: obj decides the shape of the result, so it must be "
                f"concrete, but it is traced without a value (under jit, make_jaxpr or vmap). "
                f"Pass obj as a Python int, slice or list (close over it, or mark it with "
                f"jit's static_argnums).") from None
    obj = np.asarray(obj)
    if obj.size == 0 and obj.dtype.kind == "f":  # numpy reads [] as no positions
        obj = obj.astype(_INDEX)
    if obj.dtype.kind not in "biu":
        raise DTypeError(f"funcdiff.numpy.{name}: obj must be an int, slice or integer "
                         f"sequence, got an array of dtype {obj.dtype}; convert it with "
                         f"astype(int).")
    if obj.ndim > 1:
        raise ShapeError(f"funcdiff.numpy.{name}: obj must be a scalar or one-dimensional, "
                         f"got shape {obj.shape}; flatten it with ravel().")
    return obj if obj.dtype == np.bool_ else obj.astype(_INDEX)


def _check_bounds(name: str, at: np.ndarray, low: int, high: int, axis: int, n: int) -> None:
    bad = (at < low) | (at > high)
    if bad.any():
        raise IndexOutOfBoundsError(
            f"funcdiff.numpy.{name}: position {at[bad].flat[0]} is out of bounds for axis "
            f"{axis} of size {n} (valid: {low}..{high})")


__all__ = ["append", "insert", "delete"]
