"""Tiling, repeating, flipping, rolling and rotating in funcdiff.numpy: tile, roll, ...

``tile``, and ``repeat`` with one count, broadcast the array along an
interleaved axis and reshape, so their transposes are sums; ``repeat`` with a
count per element gathers at static indices. ``flip`` (and ``fliplr``,
``flipud``) is the ``rev`` primitive and ``rot90`` a flip and a transpose.
``roll`` turns its static index pattern into two slices and one concatenate
(``_take_static``) rather than a gather, so its derivative is slices too.
Counts, shifts and axes must be concrete.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff.core import concrete_value
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from funcdiff.primitives import indexing, structural


# ---------------------------------------------------------------------------
# Tiling, repeating, flipping, rolling


def tile(A: Any, reps: Any) -> Any:
    """Repeat a whole array ``reps`` times along each axis.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.tile(np.array([1, 2]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    A = _arr(A, "tile")
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(_int(r, "tile", "reps") for r in reps)
    if any(r < 0 for r in reps):
        raise ShapeError(f"funcdiff.numpy.tile: reps must be non-negative, got {reps}")
    shape = _shape(A)
    d = max(len(reps), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    if _shape(A) != shape:
        A = structural.reshape(A, new_sizes=shape)
    if all(r == 1 for r in reps):
        return A
    # (r0, s0, r1, s1, ...) then merge pairs: the transpose of a broadcast is a sum.
    interleaved = tuple(v for pair in zip(reps, shape) for v in pair)
    out = structural.broadcast_in_dim(A, shape=interleaved,
                                      broadcast_dimensions=tuple(range(1, 2 * d, 2)))
    return structural.reshape(out, new_sizes=tuple(r * s for r, s in zip(reps, shape)))


def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """Repeat each element of an array (``repeats`` a concrete int or one int per element).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.repeat(np.array([1, 2]), [1, 3])
    array([1, 2, 2, 2])
    """
    a = _arr(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    shape = _shape(a)
    axis = _axis(axis, len(shape), "repeat")
    reps = np.asarray(concrete_value(repeats, "funcdiff.numpy.repeat (repeats)"))
    if reps.dtype.kind not in "iub" or reps.ndim > 1:
        raise InvalidArgumentError(f"funcdiff.numpy.repeat: repeats must be an integer or a "
                                   f"1-d sequence of integers, got {repeats!r}")
    if (reps < 0).any():
        raise ShapeError("funcdiff.numpy.repeat: repeats may not contain negative values")
    n = shape[axis]
    if reps.size == 1:
        r = int(reps.ravel()[0])
        expanded = shape[:axis + 1] + (r,) + shape[axis + 1:]
        out = structural.broadcast_in_dim(
            a, shape=expanded,
            broadcast_dimensions=tuple(i for i in range(len(shape) + 1) if i != axis + 1))
        return structural.reshape(out, new_sizes=shape[:axis] + (n * r,) + shape[axis + 1:])
    if reps.size != n:
        raise ShapeError(f"funcdiff.numpy.repeat: operands could not be broadcast together: "
                         f"{reps.size} repeats for an axis of size {n}")
    return indexing.gather(a, np.repeat(np.arange(n, dtype=_INDEX_DTYPE), reps), axis=axis)


def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along the given axes (all when None).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.flip(np.array([[1, 2], [3, 4]]), 1)
    array([[2, 1],
           [4, 3]])
    """
    m = _arr(m, "flip")
    ndim = len(_shape(m))
    dims = tuple(range(ndim)) if axis is None else _axes(axis, ndim, "flip")
    if not dims:
        return m
    return structural.rev(m, dimensions=tuple(sorted(dims)))


def fliplr(m: Any) -> Any:
    """Reverse the order of columns (axis 1); needs at least 2 dimensions."""
    m = _arr(m, "fliplr")
    if len(_shape(m)) < 2:
        raise ShapeError("funcdiff.numpy.fliplr: input must be >= 2-d")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    """Reverse the order of rows (axis 0); needs at least 1 dimension."""
    m = _arr(m, "flipud")
    if len(_shape(m)) < 1:
        raise ShapeError("funcdiff.numpy.flipud: input must be >= 1-d")
    return flip(m, 0)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Roll elements along axes; elements shifted past the end come back at the start.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.roll(np.arange(5), 2)
    array([3, 4, 0, 1, 2])
    """
    a = _arr(a, "roll")
    shift = concrete_value(shift, "funcdiff.numpy.roll (shift)")
    if axis is None:
        shape = _shape(a)
        return reshape(roll(ravel(a), shift, 0), shape)
    ndim = len(_shape(a))
    pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    shifts = {}
    for s, ax in pairs:
        ax = _axis(ax, ndim, "roll")
        shifts[ax] = shifts.get(ax, 0) + int(s)
    for ax, s in sorted(shifts.items()):
        n = _shape(a)[ax]
        if n and s % n:
            a = _take_static(a, ax, (np.arange(n) - s) % n)
    return a


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """Rotate an array by 90 degrees ``k`` times in the plane of ``axes``.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.rot90(np.array([[1, 2], [3, 4]]))
    array([[2, 4],
           [1, 3]])
    """
    m = _arr(m, "rot90")
    ndim = len(_shape(m))
    axes = tuple(axes)
    if len(axes) != 2:
        raise AxisError("funcdiff.numpy.rot90: len(axes) must be 2")
    a0, a1 = _axis(axes[0], ndim, "rot90", "axes"), _axis(axes[1], ndim, "rot90", "axes")
    if a0 == a1:
        raise AxisError("funcdiff.numpy.rot90: axes must be different")
    k = _int(k, "rot90", "k") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


__all__ = ["tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90"]


# _shape's helpers and functions, imported last: _shape re-exports this module's
# functions at its end, so either module may be imported first.
from funcdiff.numpy._shape import (  # noqa: E402
    _INDEX_DTYPE, _arr, _axes, _axis, _int, _shape, _take_static, ravel, reshape,
    transpose)
