"""Assembling arrays by position: append, insert and delete, and index arithmetic
(indices, unravel_index, ravel_multi_index).

``insert`` and ``delete`` change the length of an axis by an amount their
``obj`` argument decides, so ``obj`` must be concrete: a Python int, slice or
integer sequence (a traced ``obj`` works under grad, whose values are concrete,
and raises a ConcretizationError under jit, make_jaxpr and vmap, as in JAX).
With the positions known, each is a static reordering along the axis: the
array and the values (cast to the array's dtype and broadcast, as numpy does)
are joined and a static index pattern is taken (``_take_static``: slices and
one concatenate), so derivatives with respect to ``arr`` and ``values`` are
slices and pads, never a scatter. ``append`` is a concatenate. ``indices``
depends on shapes only and returns numpy arrays. ``unravel_index`` and
``ravel_multi_index`` are integer arithmetic with strides computed from the
static shape, so traced index arrays work under jit and vmap: concrete
indices are checked like numpy's, abstract ones follow JAX (``unravel_index``
clips them into range; ``ravel_multi_index`` needs ``mode='wrap'`` or
``'clip'``, since ``'raise'`` must see the values). ``diag_indices`` depends on
its static size only; ``ix_`` reshapes integer index vectors (traced ones too)
into an open mesh, while a boolean mask needs its value, since the number of
true entries decides the length of its index vector.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.numpy import _util
from funcdiff.numpy._shape import _axis, _take_static

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
    return _take_static(fnp.concatenate([arr, values], axis=axis), axis, source)


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
    return _take_static(arr, axis, np.flatnonzero(~drop))


def _along(name: str, arr: Any, axis: Any) -> tuple[Any, int]:
    """``arr`` as an array and ``axis`` normalised (``axis=None`` flattens, as numpy does)."""
    arr = _util.asarray(arr, name)
    if axis is None:
        return (arr if arr.ndim == 1 else fnp.ravel(arr)), 0
    return arr, _axis(axis, arr.ndim, name)


def _positions(name: str, obj: Any, n: int) -> np.ndarray:
    """The concrete positions ``obj`` names: a 0-d or 1-d int64 or boolean numpy array."""
    if isinstance(obj, slice):
        return np.arange(n, dtype=_INDEX)[obj]
    if isinstance(obj, Tracer) or (isinstance(obj, (list, tuple)) and any(
            isinstance(e, Tracer) for e in _util._flat(obj))):
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


# ---------------------------------------------------------------------------
# Index arithmetic


def indices(dimensions: Any, dtype: Any = int, sparse: bool = False) -> Any:
    """The index of each position of a grid, one array per axis (numpy.indices).

    Depends on the shape only, so the result is a numpy array (a tuple of
    arrays with ``sparse=True``, each with size 1 except along its own axis).

    >>> import funcdiff.numpy as fnp
    >>> fnp.indices((2, 3))[1]
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    dims = _dims("indices", dimensions)
    dtype = dtypes.check_dtype(dtype, "the dtype= of funcdiff.numpy.indices")
    grids = []
    for k, size in enumerate(dims):
        axis_shape = (1,) * k + (size,) + (1,) * (len(dims) - k - 1)
        grids.append(np.arange(size, dtype=dtype).reshape(axis_shape))
    if sparse:
        return tuple(grids)
    out = np.empty((len(dims),) + dims, dtype)
    for k, grid in enumerate(grids):
        out[k] = grid
    return out


def diag_indices(n: Any, ndim: int = 2) -> tuple:
    """Indices of the main diagonal of an ``n x n x ...`` array (numpy.diag_indices).

    The result depends on the sizes only, so it is ``ndim`` int64 numpy
    arrays ``arange(n)``; ``a[fnp.diag_indices(n)]`` then gathers the diagonal
    (differentiably when ``a`` is traced).

    Args:
      n: the size of each axis (a static int; negative gives empty indices, as in numpy).
      ndim: the number of axes.

    Raises:
      ConcretizationError: ``n`` or ``ndim`` is traced by jit, make_jaxpr or vmap.
      InvalidArgumentError: ``n`` or ``ndim`` is not an integer.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diag_indices(3)
    (array([0, 1, 2]), array([0, 1, 2]))
    >>> np.arange(9.).reshape(3, 3)[fnp.diag_indices(3)]
    array([0., 4., 8.])
    """
    n = _static_int("diag_indices", n, "n")
    ndim = _static_int("diag_indices", ndim, "ndim")
    return (np.arange(n, dtype=_INDEX),) * ndim


def ix_(*args: Any) -> tuple:
    """An open mesh of index vectors, for cross-product indexing (numpy.ix_).

    The ``k``-th of ``N`` vectors is reshaped to have its length on axis ``k``
    and size 1 on the others, so ``a[fnp.ix_(rows, cols)]`` selects the
    ``len(rows) x len(cols)`` sub-array. Integer vectors keep their dtype and
    may be traced; a boolean vector stands for the positions of its true
    entries, which needs its concrete value.

    Args:
      *args: 1-D integer or boolean sequences (an empty one gives int64).

    Returns:
      A tuple of ``N`` arrays of rank ``N``.

    Raises:
      ShapeError: an argument is not 1-D.
      DTypeError: an argument is a float or complex vector (indices are integers).
      ConcretizationError: a boolean vector is traced by jit, make_jaxpr or vmap.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> rows, cols = fnp.ix_([0, 2], [True, False, True])
    >>> rows.shape, cols
    ((2, 1), array([[0, 2]]))
    >>> np.arange(9).reshape(3, 3)[rows, cols]
    array([[0, 2],
           [6, 8]])
    """
    out = []
    for k, vector in enumerate(args):
        vector = _util.asarray(vector, "ix_")
        shape = _util.shape_of(vector)
        if len(shape) != 1:
            raise ShapeError(f"funcdiff.numpy.ix_: each index vector must be 1-D, but argument "
                             f"{k} has shape {shape}; ravel it or index with it directly.")
        if shape[0] == 0 and vector.dtype.kind not in "iu":
            vector = _util.cast(vector, _INDEX)  # numpy: an empty sequence indexes as int64
        elif vector.dtype.kind == "b":
            vector = np.nonzero(_mask_value(vector, k))[0].astype(_INDEX)
        elif vector.dtype.kind not in "iu":
            raise DTypeError(f"funcdiff.numpy.ix_: index vectors must hold integers or "
                             f"booleans, but argument {k} has dtype {vector.dtype}; convert it "
                             "with astype(int).")
        mesh = [1] * len(args)
        mesh[k] = _util.shape_of(vector)[0]
        out.append(fnp.reshape(vector, tuple(mesh)))
    return tuple(out)


def _static_int(name: str, value: Any, what: str) -> int:
    """``value`` as a Python int; a traced one raises a ConcretizationError naming it."""
    if isinstance(value, Tracer):
        try:
            value = value.to_concrete(f"funcdiff.numpy.{name}")
        except ConcretizationError:
            raise ConcretizationError(
                f"funcdiff.numpy.{name}: {what} sets the shape of the result, so it must be a "
                f"concrete int, but got the abstract {value.aval.str_short()} (under jit, "
                f"make_jaxpr or vmap). Pass {what} as a Python int, or mark it static with "
                "jit's static_argnums.") from None
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgumentError(f"funcdiff.numpy.{name}: {what} must be an integer, got "
                                   f"{value!r}") from None


def _mask_value(mask: Any, k: int) -> np.ndarray:
    """The concrete value of the boolean index vector ``mask`` (argument ``k`` of ix_)."""
    value = _value_or_none(mask, "ix_")
    if value is None:
        raise ConcretizationError(
            f"funcdiff.numpy.ix_: argument {k} is a boolean mask, whose number of true "
            f"entries sets the result's shape, but it is the abstract "
            f"{mask.aval.str_short()} (under jit, make_jaxpr or vmap). Pass integer indices "
            f"instead, e.g. fnp.nonzero(mask, size=k)[0] with a static size k.")
    return value


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple:
    """The coordinates of flat indices in an array of the given shape (numpy.unravel_index).

    Args:
      indices: an integer array of flat indices into an array of ``shape``.
      shape: the (static) shape.
      order: 'C' (row-major) or 'F' (column-major).

    Returns:
      A tuple of ``len(shape)`` int64 arrays, each of ``indices``' shape.

    Raises:
      IndexOutOfBoundsError: for a concrete index outside ``[0, prod(shape))``.
      Abstract indices (under jit or vmap) are not checked: as in JAX, a
      negative index counts from the end and the rest are clipped into range.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unravel_index(np.array([1, 5]), (2, 3))
    (array([0, 1]), array([1, 2]))
    """
    dims = _dims("unravel_index", shape)
    strides = _strides("unravel_index", dims, order)
    idx = _integer_indices("unravel_index", indices, "indices")
    size = math.prod(dims)
    value = _value_or_none(idx, "unravel_index")
    if value is not None:
        _check_flat(value, size)
    elif size == 0:
        raise IndexOutOfBoundsError("funcdiff.numpy.unravel_index: an array of shape "
                                    f"{dims} has no elements, so no index can be unravelled")
    else:  # JAX's convention for indices that cannot be checked
        idx = fnp.clip(fnp.where(idx < 0, idx + size, idx), 0, size - 1)
    return tuple(fnp.remainder(fnp.floor_divide(idx, max(stride, 1)), max(dim, 1))
                 for stride, dim in zip(strides, dims))


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: str = "C") -> Any:
    """Flat indices of coordinate arrays in an array of shape ``dims`` (numpy.ravel_multi_index).

    Args:
      multi_index: a sequence of ``len(dims)`` integer arrays (broadcast together).
      dims: the (static) shape.
      mode: 'raise' (coordinates must lie in range), 'wrap' or 'clip', or one
        mode per axis.
      order: 'C' (row-major) or 'F' (column-major).

    Returns:
      An int64 array of the broadcast shape of the coordinates.

    Raises:
      IndexOutOfBoundsError: with mode 'raise', for a coordinate out of range.
      ConcretizationError: with mode 'raise', for coordinates that have no concrete
        value (under jit or vmap): as in JAX, pass mode='wrap' or mode='clip'.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.ravel_multi_index((np.array([0, 1]), np.array([1, 2])), (2, 3))
    array([1, 5])
    """
    dims = _dims("ravel_multi_index", dims)
    strides = _strides("ravel_multi_index", dims, order)
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims) or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise InvalidArgumentError(
            f"funcdiff.numpy.ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', or "
            f"one of them per dimension ({len(dims)}), got {mode!r}")
    if isinstance(multi_index, (np.ndarray, Tracer)):
        coords = [multi_index[k] for k in range(multi_index.shape[0])] if multi_index.ndim else [
            multi_index]
    else:
        coords = list(multi_index)
    if len(coords) != len(dims):
        raise ShapeError(f"funcdiff.numpy.ravel_multi_index: multi_index must be a sequence of "
                         f"{len(dims)} coordinate arrays (one per dimension of {dims}), got "
                         f"{len(coords)}")
    coords = [_integer_indices("ravel_multi_index", c, "multi_index") for c in coords]
    coords = fnp.broadcast_arrays(*coords) if coords else []
    flat = np.zeros((), _INDEX)
    for k, (c, n, m, stride) in enumerate(zip(coords, dims, modes, strides)):
        if m == "raise":
            value = _value_or_none(c, "ravel_multi_index")
            if value is None:
                raise ConcretizationError(
                    "funcdiff.numpy.ravel_multi_index with mode='raise' must check the "
                    "coordinates' values, but they are traced without one (under jit, "
                    "make_jaxpr or vmap). Pass mode='wrap' or mode='clip' (as in JAX), or "
                    "call it outside the transform.")
            bad = (value < 0) | (value >= n)
            if bad.any():
                raise IndexOutOfBoundsError(
                    f"funcdiff.numpy.ravel_multi_index: coordinate {value[bad].flat[0]} is "
                    f"out of bounds for dimension {k} of size {n} (mode='raise'); pass "
                    f"mode='wrap' or mode='clip' to map it into range")
        elif n == 0:
            raise IndexOutOfBoundsError(f"funcdiff.numpy.ravel_multi_index: dimension {k} has "
                                        f"size 0, so mode={m!r} cannot map coordinates into it")
        elif m == "wrap":
            c = fnp.remainder(c, n)
        else:
            c = fnp.clip(c, 0, n - 1)
        flat = flat + c * stride
    if coords and not isinstance(flat, Tracer):
        flat = np.asarray(flat, _INDEX)
    return flat


def _dims(name: str, shape: Any) -> tuple[int, ...]:
    """A static shape argument as a tuple of non-negative ints."""
    try:
        dims = tuple(shape) if isinstance(shape, (tuple, list, np.ndarray)) else (shape,)
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise InvalidArgumentError(f"funcdiff.numpy.{name}: the shape must be a sequence of "
                                   f"Python ints (it is static), got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ShapeError(f"funcdiff.numpy.{name}: dimensions must be non-negative, got {dims}")
    return dims


def _strides(name: str, dims: tuple[int, ...], order: str) -> list[int]:
    """How far one step along each axis moves the flat index, in elements."""
    if order == "C":
        return [math.prod(dims[k + 1:]) for k in range(len(dims))]
    if order == "F":
        return [math.prod(dims[:k]) for k in range(len(dims))]
    raise InvalidArgumentError(f"funcdiff.numpy.{name}: order must be 'C' or 'F', got {order!r}")


def _integer_indices(name: str, x: Any, what: str) -> Any:
    x = _util.asarray(x, name)
    if x.dtype.kind not in "iu":
        raise DTypeError(f"funcdiff.numpy.{name} needs integer {what}, got dtype {x.dtype}; "
                         f"convert them with astype(int).")
    return _util.cast(x, _INDEX)


def _value_or_none(x: Any, name: str) -> np.ndarray | None:
    """The concrete value of ``x``, or None under jit, make_jaxpr and vmap."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return np.asarray(x.to_concrete(f"funcdiff.numpy.{name}"))
    except ConcretizationError:
        return None


def _check_flat(value: np.ndarray, size: int) -> None:
    bad = (value < 0) | (value >= size)
    if bad.any():
        raise IndexOutOfBoundsError(
            f"funcdiff.numpy.unravel_index: index {value[bad].flat[0]} is out of bounds for "
            f"an array with size {size} (valid: 0..{size - 1}); numpy does not wrap negative "
            f"indices here either")


__all__ = ["append", "insert", "delete", "indices", "unravel_index", "ravel_multi_index",
           "diag_indices", "ix_"]
