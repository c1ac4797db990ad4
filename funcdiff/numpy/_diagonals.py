"""Triangles and diagonals of funcdiff.numpy: tril, triu, diagonal, diag, diagflat.

A triangle keeps or zeroes elements with a constant mask (one ``select``). A
diagonal is a strided slice of its two axes flattened into one: the diagonal
of an ``n x m`` block is every ``(m + 1)``-th element. ``diag`` builds a matrix
with one ``select`` of a constant mask, whose broadcasting spreads the diagonal
along the rows (padded with ``|k|`` zeros first when ``k != 0``). All are
linear, so they differentiate and batch with no rule of their own. The plans
(masks, permutations, slice bounds) depend on shapes only and are cached.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

import numpy as np

from funcdiff.core import get_aval
from funcdiff.errors import AxisError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._ufunc_support import _array, _c, fname, shape_of
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import slicing, structural
from funcdiff.numpy._views import returns_views


def _matrix_mask(name: str, m: Any, k: int, lower: bool) -> np.ndarray:
    shape = shape_of(m)
    if len(shape) < 1:
        raise ShapeError(f"{fname(name)} needs an array of at least 1 dimension, got a 0-d "
                         "array")
    rows, cols = shape[-2:] if len(shape) >= 2 else (shape[-1], shape[-1])
    if lower:
        return np.tri(rows, cols, k, dtype=bool)
    return ~np.tri(rows, cols, k - 1, dtype=bool)


def tril(m, k=0):
    """``m`` with the elements above the ``k``-th diagonal zeroed (like ``numpy.tril``).

    Works on the last two axes (a 1-d ``m`` is repeated as rows); the result is
    a ``select`` with a constant mask, so it is differentiable.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.tril(np.ones((2, 2)))
    array([[1., 0.],
           [1., 1.]])
    """
    m = _array("tril", m)
    k = _util.static_int(k, fname("tril"), "k")
    return ew.select(_matrix_mask("tril", m, k, True), m, _c(m, 0))


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal zeroed (like ``numpy.triu``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.triu(np.ones((2, 2)))
    array([[1., 1.],
           [0., 1.]])
    """
    m = _array("triu", m)
    k = _util.static_int(k, fname("triu"), "k")
    return ew.select(_matrix_mask("triu", m, k, False), m, _c(m, 0))


@returns_views
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the ``(axis1, axis2)`` planes (like ``numpy.diagonal``).

    The two axes move to the end and are flattened; the diagonal of an
    ``n x m`` block is then every ``(m + 1)``-th element, one strided slice.
    The diagonal becomes the last axis of the result.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diagonal(np.arange(9.).reshape(3, 3), 1)
    array([1., 5.])
    """
    a = _array("diagonal", a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ShapeError(f"{fname('diagonal')} needs an array of at least 2 dimensions, got "
                         f"shape {shape}")
    if type(offset) is not int or type(axis1) is not int or type(axis2) is not int:
        name = fname("diagonal")  # tracers, numpy integers, bools: plain ints first
        offset = _util.static_int(offset, name, "offset")
        axis1 = _util.normalize_axis(axis1, len(shape), name)
        axis2 = _util.normalize_axis(axis2, len(shape), name)
    return strided_diagonal(a, shape, offset, axis1, axis2)


def strided_diagonal(a, shape: tuple, offset: int, axis1: int, axis2: int):
    """``diagonal`` of the array ``a`` of ``shape`` (rank >= 2) for int arguments."""
    perm, flat_sizes, starts, limits, strides = _diagonal_plan(shape, offset, axis1, axis2)
    if perm is not None:
        a = structural.transpose(a, permutation=perm)
    flat = structural.reshape(a, new_sizes=flat_sizes)
    return slicing.slice_p.bind(flat, start_indices=starts, limit_indices=limits,
                                   strides=strides)


@functools.lru_cache(maxsize=256)
def _diagonal_plan(shape: tuple, offset: int, axis1: int, axis2: int) -> tuple:
    """The binds of ``diagonal`` for static ``shape``/``offset``/axes: the permutation
    moving the two axes last (None when they already are), the flattened sizes, and
    the strided slice's bounds (strides None when they are all one, as ``slice``
    canonicalises them)."""
    name = fname("diagonal")
    ax1, ax2 = _util.normalize_axis(axis1, len(shape), name), \
        _util.normalize_axis(axis2, len(shape), name)
    if ax1 == ax2:
        raise AxisError(f"{name} needs two different axes, got axis1={axis1}, axis2={axis2}")
    rest = [i for i in range(len(shape)) if i not in (ax1, ax2)]
    perm = tuple(rest) + (ax1, ax2)
    n, m = shape[ax1], shape[ax2]
    lead = tuple(shape[i] for i in rest)
    count = builtins.max(0, builtins.min(n, m - offset) if offset >= 0
                         else builtins.min(n + offset, m))
    begin = (offset if offset >= 0 else -offset * m) if count else 0
    end = begin + (count - 1) * (m + 1) + 1 if count else 0
    strides = (1,) * len(lead) + (m + 1,)
    return (None if perm == tuple(range(len(shape))) else perm, lead + (n * m,),
            (0,) * len(lead) + (begin,), lead + (end,),
            None if builtins.all(s == 1 for s in strides) else strides)


@returns_views
def diag(v, k=0):
    """Extract a diagonal of a 2-d array, or build a 2-d array from a 1-d diagonal.

    Like ``numpy.diag``. Building is one ``select`` of a constant mask: ``v``
    (padded with ``|k|`` zeros at its start for ``k > 0``, at its end for
    ``k < 0``) broadcasts along the rows, so the result is linear in ``v``.

    Raises:
      ShapeError: if ``v`` is not 1-d or 2-d.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diag(np.array([1., 2.]))
    array([[1., 0.],
           [0., 2.]])
    """
    v = _array("diag", v)
    if type(k) is not int:
        k = _util.static_int(k, fname("diag"), "k")
    shape = shape_of(v)
    if len(shape) == 2:
        return strided_diagonal(v, shape, k, 0, 1)
    if len(shape) != 1:
        raise ShapeError(f"{fname('diag')} needs a 1-d or 2-d input, got shape {shape}")
    zero = _c(v, 0)
    if k:  # column j of the result holds v[j - k] (k > 0) or v[j] (k < 0)
        v = slicing.pad_p.bind(v, zero, padding_config=((builtins.max(k, 0),
                                                            builtins.max(-k, 0), 0),))
    return ew.select(_diag_mask(shape[0] + builtins.abs(k), k), v, zero)


def _diag_mask(n: int, k: int) -> np.ndarray:
    """The constant ``n x n`` boolean mask of the ``k``-th diagonal; small ones are
    cached (building a large one costs little next to the select it feeds)."""
    return _small_diag_mask(n, k) if n <= 256 else np.eye(n, k=k, dtype=bool)


@functools.lru_cache(maxsize=64)
def _small_diag_mask(n: int, k: int) -> np.ndarray:
    mask = np.eye(n, k=k, dtype=bool)
    mask.flags.writeable = False  # shared by every call
    return mask


def diagflat(v, k=0):
    """A 2-d array with the flattened ``v`` on the ``k``-th diagonal (like ``numpy.diagflat``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diagflat(np.array([[1, 2]]))
    array([[1, 0],
           [0, 2]])
    """
    v = _array("diagflat", v)
    return diag(structural.reshape(v, new_sizes=(get_aval(v).size,)), k)


__all__ = [
    "tril", "triu", "diag", "diagflat", "diagonal",
]
