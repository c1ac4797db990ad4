"""Index arithmetic of funcdiff.numpy: indices, unravel_index, ravel_multi_index,
diag_indices and ix_.

``indices`` and ``diag_indices`` depend on shapes only and return numpy
arrays. ``unravel_index`` and ``ravel_multi_index`` are integer arithmetic
with strides computed from the static shape, so traced index arrays work
under jit and vmap: concrete indices are checked like numpy's, abstract ones
follow JAX (``unravel_index`` clips them into range; ``ravel_multi_index``
needs ``mode='wrap'`` or ``'clip'``, since ``'raise'`` must see the values).
``ix_`` reshapes integer index vectors (traced ones too) into an open mesh,
while a boolean mask needs its value, since the number of true entries
decides the length of its index vector.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import (ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.numpy import _util
from funcdiff.numpy._views import returns_views

_INDEX = np.dtype(np.int64)


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
    n = _util.static_count(n, "diag_indices", "n", "the size of each axis")
    ndim = _util.static_count(ndim, "diag_indices", "ndim", "the number of axes")
    return (np.arange(n, dtype=_INDEX),) * ndim


def diag_indices_from(arr: Any) -> tuple:
    """Indices of the main diagonal of ``arr``, whose axes have equal lengths
    (numpy.diag_indices_from): ``diag_indices(arr.shape[0], arr.ndim)``.

    Only the shape of ``arr`` is read, so it may be any tracer.

    Raises:
      ShapeError: ``arr`` has fewer than 2 dimensions or axes of different lengths.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diag_indices_from(np.ones((2, 2)))
    (array([0, 1]), array([0, 1]))
    """
    dims = get_aval(_util.asarray(arr, "funcdiff.numpy.diag_indices_from")).shape
    if len(dims) < 2 or len(set(dims)) != 1:
        raise ShapeError(
            "funcdiff.numpy.diag_indices_from needs an array of at least 2 dimensions, all "
            f"of the same length, got shape {dims}. For a rectangular matrix use "
            "fnp.diagonal(arr) or fnp.diag_indices(min(arr.shape)).")
    return diag_indices(dims[0], len(dims))


@returns_views
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


def _mask_value(mask: Any, k: int) -> np.ndarray:
    """The concrete value of the boolean index vector ``mask`` (argument ``k`` of ix_)."""
    value = _util.concrete_or_none(mask, "ix_")
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
    value = _util.concrete_or_none(idx, "unravel_index")
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
            value = _util.concrete_or_none(c, "ravel_multi_index")
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


def _check_flat(value: np.ndarray, size: int) -> None:
    bad = (value < 0) | (value >= size)
    if bad.any():
        raise IndexOutOfBoundsError(
            f"funcdiff.numpy.unravel_index: index {value[bad].flat[0]} is out of bounds for "
            f"an array with size {size} (valid: 0..{size - 1}); numpy does not wrap negative "
            f"indices here either")


__all__ = ["indices", "unravel_index", "ravel_multi_index", "diag_indices",
           "diag_indices_from", "ix_"]
