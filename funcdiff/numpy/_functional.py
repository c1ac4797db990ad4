"""numpy's functional helper apply_along_axis, built on funcdiff's batching.

``apply_along_axis`` moves ``axis`` last, flattens the other axes into one
batch axis, runs ``func1d`` once under vmap (so ``func1d`` is traced a single
time, whatever the number of slices) and reshapes the batch back. The result
is therefore differentiable, batchable and jit-able whenever ``func1d`` is
written with funcdiff.numpy (or numpy functions that dispatch to it).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from funcdiff.core import get_aval
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from funcdiff.interpreters.batching import vmap_flat
from funcdiff.numpy import _util
from funcdiff.numpy._creation import asarray
from funcdiff.numpy._shape import moveaxis, reshape


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """Apply ``func1d`` to the 1-D slices of ``arr`` along ``axis`` (numpy.apply_along_axis).

    ``func1d(v, *args, **kwargs)`` receives each slice ``v`` and may return a
    scalar or an array of any (fixed) shape; as in numpy, ``axis`` is replaced
    in the result by the dimensions of that return value. ``func1d`` runs once,
    batched over all slices (``funcdiff.vmap``), so it must not branch in
    Python on the values of ``v``.

    Args:
      func1d: the function of one 1-D array.
      axis: the axis of ``arr`` to slice along.
      arr: the array.
      *args, **kwargs: further arguments of ``func1d``, the same for every slice.

    Returns:
      ``arr.shape[:axis] + out_shape + arr.shape[axis+1:]``, where ``out_shape``
      is the shape of ``func1d``'s result.

    Raises:
      AxisError: ``axis`` is out of range (or ``arr`` is 0-d).
      ShapeError: an axis other than ``axis`` has length 0 (no slice to run on).
      InvalidArgumentError: ``func1d`` is not callable.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.apply_along_axis(lambda v: v[0] + v[-1], 1, np.arange(6.).reshape(2, 3))
    array([2., 8.])
    >>> fnp.apply_along_axis(fnp.sort, 0, np.array([[3., 1.], [2., 4.]]))
    array([[2., 1.],
           [3., 4.]])
    """
    name = "funcdiff.numpy.apply_along_axis"
    if not callable(func1d):
        raise InvalidArgumentError(f"{name}: func1d must be a function of a 1-D array, got "
                                   f"{type(func1d).__name__}. Note the argument order "
                                   "apply_along_axis(func1d, axis, arr).")
    arr = _util.asarray(arr, name)
    dims = get_aval(arr).shape
    if len(dims) == 0:
        raise AxisError(f"{name}: axis {axis} is out of range for a 0-d array; a scalar has "
                        "no 1-D slices (use fnp.atleast_1d(arr) first).")
    axis = _util.normalize_axis(axis, len(dims), name)
    outer = dims[:axis] + dims[axis + 1:]
    count = math.prod(outer)
    if count == 0:
        raise ShapeError(f"{name} cannot run func1d on an array of shape {dims}: the axes "
                         f"other than axis {axis} have a zero length, so there is no slice "
                         "to learn the result shape from (numpy refuses this too).")
    slices = reshape(moveaxis(arr, axis, -1), (count, dims[axis]))
    [results] = vmap_flat(lambda v: [asarray(func1d(v, *args, **kwargs))], count, [0],
                          [slices], 0)
    out_dims = get_aval(results).shape[1:]
    results = reshape(results, outer + out_dims)
    # the axes of func1d's result sit where `axis` was
    k = len(out_dims)
    return moveaxis(results, tuple(range(len(outer), len(outer) + k)),
                    tuple(range(axis, axis + k)))

__all__ = ["apply_along_axis"]
