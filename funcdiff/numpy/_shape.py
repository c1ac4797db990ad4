"""Shape functions of funcdiff.numpy: reshaping, axes, broadcasting, and the shape helpers.

Every function of the shape family is an explicit composition of structural
and indexing primitives (reshape, transpose, broadcast_in_dim, slice, rev,
concatenate, pad, gather, scatter), so each one traces, differentiates,
batches and jits with no rule of its own. Only settings (axes, shapes, counts,
pad widths) are computed with numpy, never values; semantics and result
dtypes are numpy 2's. This module holds reshaping and axis functions and the helpers
the family shares, such as ``take_static``, which turns a static index
pattern into a few slices, reversals and one concatenate rather than a gather.
The rest of the family builds on them, each module listing its own names:
``_broadcasting`` (broadcast_to, broadcast_arrays, broadcast_shapes,
atleast_1d/2d/3d), ``_joining`` (concatenate, stack, split), ``_tiling`` (tile, repeat, flip, roll, rot90),
``_padding`` (pad) and ``_take_put`` (take, take_along_axis, put_along_axis,
triangle indices).
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any, Sequence

import numpy as np

from funcdiff.core import Tracer, concrete_value, get_aval
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.primitives import slicing, structural
from funcdiff.numpy._views import returns_views

INDEX_DTYPE = np.dtype(np.int64)


# ---------------------------------------------------------------------------
# Shared helpers


def _arr(x: Any, name: str) -> Any:
    if (type(x) is np.ndarray and x.dtype.kind in "biuf") or isinstance(x, Tracer):
        return x  # what asarray would return, without its conversions
    return _util.asarray(x, name)


def shape_of(x: Any) -> tuple[int, ...]:
    return get_aval(x).shape


def normalize_axis(axis: Any, ndim: int, name: str, what: str = "axis") -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise AxisError(f"funcdiff.numpy.{name}: {what} must be an integer, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise AxisError(f"funcdiff.numpy.{name}: {what} {a} is out of bounds for an array of "
                        f"dimension {ndim} (valid: {-ndim}..{ndim - 1})")
    return a % ndim


def normalize_axes(axis: Any, ndim: int, name: str, what: str = "axis") -> tuple[int, ...]:
    """``axis`` (an int or a sequence) as a tuple of distinct non-negative axes, in order."""
    seq = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, name, what) for a in seq)
    if len(set(out)) != len(out):
        raise AxisError(f"funcdiff.numpy.{name}: repeated {what} in {axis!r}")
    return out


def _int(value: Any, name: str, what: str) -> int:
    value = concrete_value(value, f"funcdiff.numpy.{name} ({what})")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name}: {what} must be an integer, got {value!r}") from None


def slice_axis(x: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    """``x[..., start:stop:step, ...]`` on ``axis`` with ``0 <= start <= stop``, step >= 1."""
    shape = shape_of(x)
    if start == 0 and stop == shape[axis] and step == 1:
        return x
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    limits = tuple(stop if i == axis else n for i, n in enumerate(shape))
    strides = tuple(step if i == axis else 1 for i in range(len(shape)))
    return slicing.slice(x, start_indices=starts, limit_indices=limits, strides=strides)


def _broadcast_axis(x: Any, axis: int, size: int) -> Any:
    """Broadcast the size-1 ``axis`` of ``x`` to ``size``."""
    shape = list(shape_of(x))
    if shape[axis] == size:
        return x
    shape[axis] = size
    return structural.broadcast_in_dim(x, shape=tuple(shape),
                                       broadcast_dimensions=tuple(range(len(shape))))


def take_static(x: Any, axis: int, idx: Sequence[int]) -> Any:
    """``numpy.take(x, idx, axis)`` for a static 1-d ``idx``, as slices joined by concatenate.

    ``idx`` is cut into maximal runs that step by +1, -1 or 0; each becomes a
    slice (reversed, or broadcast from one element), so a pad or a roll costs a
    handful of slices whose transposes are pads, instead of a gather/scatter.
    """
    idx = [int(i) for i in idx]
    if not idx:
        return slice_axis(x, axis, 0, 0)
    pieces, i = [], 0
    while i < len(idx):
        j = i + 1
        step = idx[j] - idx[i] if j < len(idx) else 1
        if step in (-1, 0, 1):
            while j < len(idx) and idx[j] - idx[j - 1] == step:
                j += 1
        else:
            step = 1
        first, last = idx[i], idx[j - 1]
        if step == 1:
            piece = slice_axis(x, axis, first, last + 1)
        elif step == -1:
            piece = structural.rev(slice_axis(x, axis, last, first + 1), dimensions=(axis,))
        else:
            piece = _broadcast_axis(slice_axis(x, axis, first, first + 1), axis, j - i)
        pieces.append(piece)
        i = j
    if len(pieces) == 1:
        return pieces[0]
    return structural.concatenate(*pieces, dimension=axis)


# ---------------------------------------------------------------------------
# Reshaping and axes


@returns_views
def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> Any:
    """Give an array a new shape without changing its data (row-major order only).

    Args:
      a: array-like.
      shape: int or tuple of ints; one entry may be -1 (inferred).
      order: only ``'C'`` is supported.

    Returns:
      The reshaped array.

    Raises:
      ShapeError: the sizes do not match. UnsupportedNumpyError: ``order != 'C'``.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.reshape(np.arange(6), (2, -1))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    if shape is None:
        shape = newshape
    if shape is None:
        raise InvalidArgumentError("funcdiff.numpy.reshape needs a shape")
    if order != "C":
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.reshape supports only order='C', got order={order!r}; transpose "
            "the array first to emulate Fortran order.")
    a = _arr(a, "reshape")
    in_shape = shape_of(a)
    if type(shape) is int:
        new = _resolve_static((shape,), in_shape)
    elif type(shape) is tuple and all(type(s) is int for s in shape):
        new = _resolve_static(shape, in_shape)
    else:  # lists, numpy integers, concrete tracers: converted entry by entry
        new = _resolve_shape(shape, math.prod(in_shape), in_shape)
    if new == in_shape:
        return a
    return structural.reshape(a, new_sizes=new)


@functools.lru_cache(maxsize=1024)  # bounded: the shapes come from users
def _resolve_static(shape: tuple[int, ...], in_shape: tuple[int, ...]) -> tuple[int, ...]:
    """``_resolve_shape`` of a tuple of Python ints, planned once per pair of shapes."""
    return _resolve_shape(shape, math.prod(in_shape), in_shape)


def _resolve_shape(shape: Any, size: int, in_shape: tuple) -> tuple[int, ...]:
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    shape = tuple(_int(s, "reshape", "each entry of shape") for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise ShapeError(f"funcdiff.numpy.reshape: shape {shape} may contain at most one -1 "
                         "and no other negative entries")
    if unknown:
        known = math.prod([s for s in shape if s != -1])
        if known == 0 or size % known:
            raise ShapeError(f"funcdiff.numpy.reshape cannot reshape an array of shape "
                             f"{in_shape} (size {size}) into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ShapeError(f"funcdiff.numpy.reshape cannot reshape an array of shape {in_shape} "
                         f"(size {size}) into shape {shape}")
    return shape


@returns_views
def ravel(a: Any, order: str = "C") -> Any:
    """The array flattened to 1-d in row-major order.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.ravel(np.array([[1, 2], [3, 4]]))
    array([1, 2, 3, 4])
    """
    if order not in ("C", "K", "A"):
        raise UnsupportedNumpyError(f"funcdiff.numpy.ravel supports only order='C', got {order!r}")
    return reshape(a, (-1,))


@returns_views
def transpose(a: Any, axes: Any = None) -> Any:
    """Permute the axes of an array (reverse them when ``axes`` is None).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.transpose(np.ones((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    a = _arr(a, "transpose")
    ndim = len(shape_of(a))
    if axes is None:
        if ndim < 2:
            return a
        return structural.transpose(a, permutation=_reversed_axes(ndim))
    else:
        axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
        if len(axes) != ndim:
            raise AxisError(f"funcdiff.numpy.transpose: axes {axes} don't match an array of "
                            f"dimension {ndim}")
        perm = normalize_axes(axes, ndim, "transpose")
    if perm == tuple(range(ndim)):
        return a
    return structural.transpose(a, permutation=perm)


permute_dims = transpose  # numpy 2's array-API name; numpy's permute_dims is transpose itself


@functools.lru_cache(maxsize=None)  # one entry per rank
def _reversed_axes(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim))[::-1]


@returns_views
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes of an array to new positions; the others keep their order.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.moveaxis(np.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = _arr(a, "moveaxis")
    ndim = len(shape_of(a))
    src = normalize_axes(source, ndim, "moveaxis", "source")
    dst = normalize_axes(destination, ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise AxisError("funcdiff.numpy.moveaxis: `source` and `destination` arguments must "
                        f"have the same number of elements, got {source!r} and {destination!r}")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


@returns_views
def swapaxes(a: Any, axis1: Any, axis2: Any) -> Any:
    """Interchange two axes of an array.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.swapaxes(np.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = _arr(a, "swapaxes")
    ndim = len(shape_of(a))
    i = normalize_axis(axis1, ndim, "swapaxes", "axis1")
    j = normalize_axis(axis2, ndim, "swapaxes", "axis2")
    perm = list(range(ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


@returns_views
def rollaxis(a: Any, axis: Any, start: int = 0) -> Any:
    """Roll ``axis`` backwards until it lies before position ``start`` (prefer moveaxis).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.rollaxis(np.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = _arr(a, "rollaxis")
    n = len(shape_of(a))
    axis = normalize_axis(axis, n, "rollaxis")
    start = _int(start, "rollaxis", "start")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"funcdiff.numpy.rollaxis: 'start' arg requires {-n} <= start < {n + 1}, "
                        f"but {start} was passed in")
    if axis < start:
        start -= 1
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return transpose(a, perm)


@returns_views
def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove axes of length one (all of them when ``axis`` is None).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.squeeze(np.ones((1, 3, 1))).shape
    (3,)
    """
    a = _arr(a, "squeeze")
    shape = shape_of(a)
    if axis is None:
        dims = _unit_axes(shape)
    else:
        dims = normalize_axes(axis, len(shape), "squeeze")
        if any(shape[d] != 1 for d in dims):
            raise ShapeError(f"funcdiff.numpy.squeeze: cannot select an axis to squeeze out "
                             f"which has size not equal to one (axis={axis!r}, shape {shape})")
        dims = tuple(sorted(dims))
    if not dims:
        return a
    # dims are checked, distinct, sorted and non-negative: bind without re-normalising
    return structural.squeeze_p.bind(a, dimensions=dims)


@functools.lru_cache(maxsize=1024)  # bounded: one entry per shape squeezed
def _unit_axes(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of length one of ``shape``, in order."""
    return tuple(i for i, n in enumerate(shape) if n == 1)


@returns_views
def expand_dims(a: Any, axis: Any) -> Any:
    """Insert axes of length one at the given positions of the result.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.expand_dims(np.ones((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    a = _arr(a, "expand_dims")
    seq = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    dims = normalize_axes(seq, len(shape_of(a)) + len(seq), "expand_dims")
    return structural.expand_dims(a, dimensions=tuple(sorted(dims)))


__all__ = [
    "reshape", "ravel", "transpose", "permute_dims", "moveaxis", "swapaxes", "rollaxis", "squeeze",
    "expand_dims",
]
