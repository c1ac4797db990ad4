"""numpy's functional helpers: apply_along_axis, apply_over_axes, piecewise, fromfunction.

Each calls a user's function on arrays built from its arguments, so the
result is differentiable, batchable and jit-able whenever that function is
written with funcdiff.numpy (or numpy functions that dispatch to it).

``apply_along_axis`` moves ``axis`` last, flattens the other axes into one
batch axis, runs ``func1d`` once under vmap (so ``func1d`` is traced a single
time, whatever the number of slices) and reshapes the batch back.
``apply_over_axes`` calls ``func(a, axis)`` once per axis, as numpy does.
``piecewise`` evaluates every function on all of ``x`` and selects the
results with ``where`` (as JAX does), since the elements a condition selects
are only known from values. ``fromfunction`` calls the function on the index
grids of ``indices``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer, get_aval
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


def apply_over_axes(func: Callable, a: Any, axes: Any) -> Any:
    """Apply ``func(a, axis)`` repeatedly over several axes (numpy.apply_over_axes).

    For each axis in turn, ``func`` is called with the current result and
    the axis; a result that lost that axis (a reduction without
    ``keepdims``) gets it back with length 1, so the rank never changes.

    Args:
      func: a function ``func(array, axis)``, such as ``fnp.sum``.
      a: the array.
      axes: an axis or a sequence of them (negative ones count from the end
        of ``a``'s axes).

    Returns:
      An array of ``a``'s rank.

    Raises:
      InvalidArgumentError: ``func`` is not callable.
      AxisError: an axis is out of range.
      ShapeError: ``func`` returns a result whose rank is neither ``a``'s nor
        one less.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.apply_over_axes(fnp.sum, np.arange(24.).reshape(2, 3, 4), [0, 2])
    array([[[ 60.],
            [ 92.],
            [124.]]])
    """
    name = "funcdiff.numpy.apply_over_axes"
    if not callable(func):
        raise InvalidArgumentError(f"{name}: func must be a function func(array, axis), got "
                                   f"{type(func).__name__}. Note the argument order "
                                   "apply_over_axes(func, a, axes).")
    value = _util.asarray(a, name)
    ndim = len(get_aval(value).shape)
    for axis in (axes,) if np.ndim(axes) == 0 else axes:
        axis = _util.normalize_axis(axis, ndim, name)
        result = asarray(func(value, axis))
        rank = len(get_aval(result).shape)
        if rank == ndim - 1:
            result = fnp.expand_dims(result, axis)
        elif rank != ndim:
            raise ShapeError(f"{name}: func(a, {axis}) must return an array of rank {ndim} "
                             f"(or {ndim - 1}, without the axis), but returned shape "
                             f"{get_aval(result).shape}.")
        value = result
    return value


def _conditions(condlist: Any, x_ndim: int, name: str) -> list[Any]:
    """``condlist`` as a list of conditions. As in numpy, a bool, a 1-D array, or a
    list whose first entry is not an array (or list) is one condition when ``x``
    is not 0-d; otherwise the entries (or the rows of an array) are the conditions."""
    if isinstance(condlist, (list, tuple)):
        one = x_ndim != 0 and len(condlist) > 0 and \
            not isinstance(condlist[0], (list, np.ndarray, Tracer))
        return [condlist] if one else list(condlist)
    if isinstance(condlist, (np.ndarray, Tracer)):
        rank = len(get_aval(condlist).shape)
        if rank == 0 or (rank == 1 and x_ndim != 0):
            return [condlist]
        return [condlist[i] for i in range(get_aval(condlist).shape[0])]
    return [condlist]


def _piece(name: str, what: str, value: Any, shape: tuple, dtype: np.dtype) -> Any:
    """A function's result (or a constant) as ``x``'s shape and dtype."""
    value = _util.asarray(value, name)
    got = get_aval(value).shape
    try:
        np.broadcast_shapes(got, shape)
    except ValueError:
        raise ShapeError(f"{name}: {what} has shape {got}, which does not broadcast to x's "
                         f"shape {shape}. piecewise calls every function on all of x (not on "
                         "the selected elements, as numpy does), so each must work "
                         "elementwise and return x's shape or a scalar.") from None
    if np.broadcast_shapes(got, shape) != shape:
        raise ShapeError(f"{name}: {what} has shape {got}, which is larger than x's shape "
                         f"{shape}; each function must return x's shape or a scalar.")
    return fnp.broadcast_to(_util.cast(value, dtype), shape)


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """A function defined piece by piece over the elements of ``x`` (numpy.piecewise).

    Where ``condlist[i]`` holds, the result is ``funclist[i](x, *args, **kw)``
    (or ``funclist[i]`` itself when it is a constant); a later condition that
    also holds wins, as in numpy. Where no condition holds, the result is 0,
    or the extra function when ``funclist`` has one more entry than
    ``condlist`` (its "otherwise"). Results take ``x``'s dtype.
    Differentiable in ``x`` (and in whatever the functions close over).

    Unlike numpy, which calls each function on the selected elements
    ``x[condlist[i]]`` only, every function is called once on all of ``x``
    and the results are selected with ``where`` (as in JAX): a function must
    work elementwise, and it also runs where its condition is false. A value
    that is not finite there (``fnp.sqrt`` of a negative) does not reach the
    result but can make its derivative nan; guard the argument (e.g.
    ``fnp.sqrt(fnp.maximum(x, 0))``) in that case.

    Args:
      x: the array the pieces are defined over.
      condlist: boolean arrays (broadcast to ``x``'s shape), one per piece; a
        single array or bool is one condition.
      funclist: one function (or constant) per condition, plus optionally
        the default for elements no condition selects.
      *args, **kw: further arguments of every function.

    Returns:
      An array of ``x``'s shape and dtype.

    Raises:
      ShapeError: ``funclist`` has neither ``len(condlist)`` nor one more
        entries, or a condition or result does not broadcast to ``x``'s shape.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> x = np.array([-2., -0.5, 0.5, 2.])
    >>> fnp.piecewise(x, [x < -1, x > 1], [-1., 1., lambda v: v])
    array([-1. , -0.5,  0.5,  1. ])
    """
    name = "funcdiff.numpy.piecewise"
    x = _util.asarray(x, name)
    aval = get_aval(x)
    shape, dtype = aval.shape, aval.dtype
    conditions = []
    for i, condition in enumerate(_conditions(condlist, len(shape), name)):
        condition = _util.asarray(condition, name)
        conditions.append(_piece(name, f"condition {i}", fnp.astype(condition, bool), shape,
                                 np.dtype(bool)))
    funclist = list(funclist)
    count = len(conditions)
    if len(funclist) not in (count, count + 1):
        raise ShapeError(f"{name}: with {count} condition(s), either {count} or {count + 1} "
                         f"functions are expected (the last one for where no condition "
                         f"holds), but got {len(funclist)}.")

    def value_of(i: int) -> Any:
        func = funclist[i]
        value = func(x, *args, **kw) if callable(func) else func
        return _piece(name, f"the result of funclist[{i}]", value, shape, dtype)

    out = value_of(count) if len(funclist) == count + 1 else np.zeros(shape, dtype)
    for i, condition in enumerate(conditions):
        out = fnp.where(condition, value_of(i), out)
    return out


def fromfunction(function: Callable, shape: Any, *, dtype: Any = float, like: Any = None,
                 **kwargs: Any) -> Any:
    """Call ``function`` on the index grids of ``shape`` (numpy.fromfunction).

    ``function(i_0, ..., i_{n-1}, **kwargs)`` receives ``n`` arrays of shape
    ``shape``, ``i_k`` holding each element's index along axis ``k`` (the
    grids of ``indices(shape, dtype)``), and its result is returned as it is.

    Args:
      function: called once with the ``n`` index grids.
      shape: the static shape, a sequence of ints.
      dtype: the dtype of the grids (default float64).
      like: accepted for numpy compatibility; funcdiff has no array type of
        its own, so it changes nothing.
      **kwargs: further keyword arguments of ``function``.

    Returns:
      Whatever ``function`` returns.

    Raises:
      InvalidArgumentError: ``function`` is not callable, or ``shape`` is not
        a sequence of non-negative ints.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: i + 10 * j, (2, 3))
    array([[ 0., 10., 20.],
           [ 1., 11., 21.]])
    """
    name = "fromfunction"
    if not callable(function):
        raise InvalidArgumentError(f"funcdiff.numpy.{name}: function must be callable, got "
                                   f"{type(function).__name__}. Note the argument order "
                                   "fromfunction(function, shape).")
    if not isinstance(shape, (list, tuple)):
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs shape as a sequence of ints "
                                   f"(numpy does too), got {shape!r}; write ({shape!r},) for "
                                   "one axis.")
    shape = tuple(_util.static_count(n, name, "shape", "a length of the result")
                  for n in shape)
    grids = fnp.indices(shape, dtype=dtype)
    return function(*[grids[k] for k in range(len(shape))], **kwargs)


__all__ = ["apply_along_axis", "apply_over_axes", "piecewise", "fromfunction"]
