"""Tiling, repeating, flipping, rolling and rotating in funcdiff.numpy: tile, roll, ...

``tile``, and ``repeat`` with one count, broadcast the array along an
interleaved axis and reshape, so their transposes are sums; ``repeat`` with a
count per element gathers at static indices. ``flip`` (and ``fliplr``,
``flipud``) is the ``rev`` primitive and ``rot90`` a flip and a transpose.
``roll`` turns its static index pattern into two slices and one concatenate
(``_take_static``'s pieces for that pattern) rather than a gather, so its
derivative is slices too. Counts, shifts and axes must be concrete; each
function plans its primitives once per shape and settings (cached when the
settings are Python ints), so a call mostly binds primitives.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff.core import concrete_value
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from funcdiff.numpy._joining import operand
from funcdiff.numpy._shape import (
    INDEX_DTYPE, _arr, normalize_axes, normalize_axis, _int, shape_of, transpose)
from funcdiff.primitives import indexing, slicing, structural
from funcdiff.numpy._views import returns_views


# ---------------------------------------------------------------------------
# Tiling, repeating, flipping, rolling


def _static_ints(x: Any) -> bool:
    """Whether ``x`` (None, a Python int or a tuple of them) can key a plan cache.

    Floats and numpy scalars go to the uncached plan: 1.0 == 1 and hashes
    alike, but only 1 is an axis.
    """
    return x is None or type(x) is int or (type(x) is tuple and all(type(i) is int for i in x))


def _planned(plan: Callable, shape: Any, *settings: Any) -> Any:
    """``plan(shape, *settings)``, cached when every setting is static ints (see above)."""
    for x in settings:
        if not _static_ints(x):
            return plan.__wrapped__(shape, *settings)
    return plan(shape, *settings)


@functools.lru_cache(maxsize=512)
def _tile_plan(shape: tuple, reps: Any) -> tuple:
    """(shape with leading 1s or None, (interleaved, broadcast dims) or None, result shape)."""
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(_int(r, "tile", "reps") for r in reps)
    if any(r < 0 for r in reps):
        raise ShapeError(f"funcdiff.numpy.tile: reps must be non-negative, got {reps}")
    d = max(len(reps), len(shape))
    padded = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    reshaped = padded if padded != shape else None
    if all(r == 1 for r in reps):
        return reshaped, None, padded
    # (r0, s0, r1, s1, ...) then merge pairs: the transpose of a broadcast is a sum.
    interleaved = tuple(v for pair in zip(reps, padded) for v in pair)
    return (reshaped, (interleaved, tuple(range(1, 2 * d, 2))),
            tuple(r * s for r, s in zip(reps, padded)))


def tile(A: Any, reps: Any) -> Any:
    """Repeat a whole array ``reps`` times along each axis.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.tile(np.array([1, 2]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    A = operand(A, "tile")
    reshaped, broadcast, out_shape = _planned(
        _tile_plan, shape_of(A), tuple(reps) if type(reps) is list else reps)
    if reshaped is not None:
        A = structural.reshape(A, new_sizes=reshaped)
    if broadcast is None:
        return A
    out = structural.broadcast_in_dim(A, shape=broadcast[0], broadcast_dimensions=broadcast[1])
    return structural.reshape(out, new_sizes=out_shape)


@functools.lru_cache(maxsize=512)
def _repeat_plan(shape: tuple, repeats: Any, axis: Any) -> tuple:
    """(flattened shape or None, axis, and for one count: (expanded, broadcast dims,
    result shape); for a count per element: the gather indices)."""
    flat = None
    if axis is None:
        size = math.prod(shape)
        flat = (size,) if shape != (size,) else None
        shape, axis = (size,), 0
    axis = normalize_axis(axis, len(shape), "repeat")
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
        dims = tuple(i for i in range(len(shape) + 1) if i != axis + 1)
        return flat, axis, (expanded, dims, shape[:axis] + (n * r,) + shape[axis + 1:])
    if reps.size != n:
        raise ShapeError(f"funcdiff.numpy.repeat: operands could not be broadcast together: "
                         f"{reps.size} repeats for an axis of size {n}")
    return flat, axis, np.repeat(np.arange(n, dtype=INDEX_DTYPE), reps)


def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """Repeat each element of an array (``repeats`` a concrete int or one int per element).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.repeat(np.array([1, 2]), [1, 3])
    array([1, 2, 2, 2])
    """
    a = operand(a, "repeat")
    if type(repeats) is int:
        flat, axis, how = _planned(_repeat_plan, shape_of(a), repeats, axis)
    else:  # counts per element (the gather indices are made per call: they are an array)
        flat, axis, how = _repeat_plan.__wrapped__(shape_of(a), repeats, axis)
    if flat is not None:
        a = structural.reshape(a, new_sizes=flat)
    if isinstance(how, np.ndarray):
        return indexing.gather(a, how, axis=axis)
    out = structural.broadcast_in_dim(a, shape=how[0], broadcast_dimensions=how[1])
    return structural.reshape(out, new_sizes=how[2])


@functools.lru_cache(maxsize=512)
def _flip_dims(ndim: int, axis: Any) -> tuple[int, ...]:
    axes = tuple(range(ndim)) if axis is None else normalize_axes(axis, ndim, "flip")
    return tuple(sorted(axes))


@returns_views
def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along the given axes (all when None).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.flip(np.array([[1, 2], [3, 4]]), 1)
    array([[2, 1],
           [4, 3]])
    """
    m = operand(m, "flip")
    dims = _planned(_flip_dims, len(shape_of(m)), axis)
    if not dims:
        return m
    # the operation structural.rev with its axes already normalised
    return structural.rev_p.bind(m, dimensions=dims)


@returns_views
def fliplr(m: Any) -> Any:
    """Reverse the order of columns (axis 1); needs at least 2 dimensions."""
    m = _arr(m, "fliplr")
    if len(shape_of(m)) < 2:
        raise ShapeError("funcdiff.numpy.fliplr: input must be >= 2-d")
    return flip(m, 1)


@returns_views
def flipud(m: Any) -> Any:
    """Reverse the order of rows (axis 0); needs at least 1 dimension."""
    m = _arr(m, "flipud")
    if len(shape_of(m)) < 1:
        raise ShapeError("funcdiff.numpy.flipud: input must be >= 1-d")
    return flip(m, 0)


@functools.lru_cache(maxsize=512)
def _roll_plan(shape: tuple, shift: Any, axis: Any) -> tuple:
    """(flattened shape or None, the steps, the shape to restore or None).

    Each step rolls one axis by ``k`` in 1..n-1: the last ``k`` elements then
    the first ``n - k``, two slices and a concatenate (``_take_static``'s
    pieces for that index pattern); an axis of size 2 is reversed instead.
    """
    flat = restore = None
    if axis is None:
        size = math.prod(shape)
        if shape != (size,):
            flat, restore = (size,), shape
        shape, axis = (size,), 0
    ndim = len(shape)
    shifts = {}
    for s, ax in np.broadcast(np.asarray(shift), np.asarray(axis)):
        ax = normalize_axis(ax, ndim, "roll")
        shifts[ax] = shifts.get(ax, 0) + int(s)
    steps = []
    for ax, s in sorted(shifts.items()):
        n = shape[ax]
        if not n or not s % n:
            continue
        if n == 2:
            steps.append((ax, None, None))
            continue
        cut = n - s % n
        zeros = (0,) * ndim
        steps.append((ax, (zeros[:ax] + (cut,) + zeros[ax + 1:], shape),
                      (zeros, shape[:ax] + (cut,) + shape[ax + 1:])))
    return flat, tuple(steps), restore


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Roll elements along axes; elements shifted past the end come back at the start.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.roll(np.arange(5), 2)
    array([3, 4, 0, 1, 2])
    """
    a = operand(a, "roll")
    shift = concrete_value(shift, "funcdiff.numpy.roll (shift)")
    flat, steps, restore = _planned(
        _roll_plan, shape_of(a), tuple(shift) if type(shift) is list else shift,
        tuple(axis) if type(axis) is list else axis)
    if flat is not None:
        a = structural.reshape(a, new_sizes=flat)
    # the operations structural.rev, slice and concatenate with their settings normalised
    for ax, tail, head in steps:
        if tail is None:
            a = structural.rev_p.bind(a, dimensions=(ax,))
        else:
            a = structural.concatenate_p.bind(
                slicing.slice_p.bind(a, start_indices=tail[0], limit_indices=tail[1],
                                        strides=None),
                slicing.slice_p.bind(a, start_indices=head[0], limit_indices=head[1],
                                        strides=None),
                dimension=ax)
    if restore is not None:
        a = structural.reshape(a, new_sizes=restore)
    return a


@returns_views
def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """Rotate an array by 90 degrees ``k`` times in the plane of ``axes``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.rot90(np.array([[1, 2], [3, 4]]))
    array([[2, 4],
           [1, 3]])
    """
    m = _arr(m, "rot90")
    ndim = len(shape_of(m))
    axes = tuple(axes)
    if len(axes) != 2:
        raise AxisError("funcdiff.numpy.rot90: len(axes) must be 2")
    a0 = normalize_axis(axes[0], ndim, "rot90", "axes")
    a1 = normalize_axis(axes[1], ndim, "rot90", "axes")
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
