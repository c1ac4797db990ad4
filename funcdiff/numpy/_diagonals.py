"""Triangles and diagonals of funcdiff.numpy: tril, triu, diagonal, diag, diagflat.

A triangle keeps or zeroes elements with a constant mask (one ``select``). A
diagonal is a strided slice of its two axes flattened into one: the diagonal
of an ``n x m`` block is every ``(m + 1)``-th element. ``diag`` builds a matrix
by padding the diagonal, broadcasting it and masking the rest. All are linear,
so they differentiate and batch with no rule of their own.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from funcdiff.core import concrete_value, get_aval
from funcdiff.errors import AxisError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._ufunc_support import _array, _c, _fname, _shape
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import structural


def _matrix_mask(name: str, m: Any, k: int, lower: bool) -> np.ndarray:
    shape = _shape(m)
    if len(shape) < 1:
        raise ShapeError(f"{_fname(name)} needs an array of at least 1 dimension, got a 0-d "
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
    k = operator.index(concrete_value(k, _fname("tril")))
    return ew.select(_matrix_mask("tril", m, k, True), m, _c(m, 0))


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal zeroed (like ``numpy.triu``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.triu(np.ones((2, 2)))
    array([[1., 1.],
           [0., 1.]])
    """
    m = _array("triu", m)
    k = operator.index(concrete_value(k, _fname("triu")))
    return ew.select(_matrix_mask("triu", m, k, False), m, _c(m, 0))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the ``(axis1, axis2)`` planes (like ``numpy.diagonal``).

    The two axes move to the end and are flattened; the diagonal of an
    ``n x m`` block is then every ``(m + 1)``-th element, one strided slice.
    The diagonal becomes the last axis of the result.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diagonal(np.arange(9.).reshape(3, 3), 1)
    array([1., 5.])
    """
    name = _fname("diagonal")
    a = _array("diagonal", a)
    shape = _shape(a)
    if len(shape) < 2:
        raise ShapeError(f"{name} needs an array of at least 2 dimensions, got shape {shape}")
    offset = operator.index(concrete_value(offset, name))
    ax1, ax2 = _util.normalize_axis(axis1, len(shape), name), \
        _util.normalize_axis(axis2, len(shape), name)
    if ax1 == ax2:
        raise AxisError(f"{name} needs two different axes, got axis1={axis1}, axis2={axis2}")
    rest = [i for i in range(len(shape)) if i not in (ax1, ax2)]
    perm = tuple(rest) + (ax1, ax2)
    if perm != tuple(range(len(shape))):
        a = structural.transpose(a, permutation=perm)
    n, m = shape[ax1], shape[ax2]
    lead = tuple(shape[i] for i in rest)
    count = builtins.max(0, builtins.min(n, m - offset) if offset >= 0
                         else builtins.min(n + offset, m))
    flat = structural.reshape(a, new_sizes=lead + (n * m,))
    begin = (offset if offset >= 0 else -offset * m) if count else 0
    end = begin + (count - 1) * (m + 1) + 1 if count else 0
    return structural.slice(flat, start_indices=(0,) * len(lead) + (begin,),
                            limit_indices=lead + (end,),
                            strides=(1,) * len(lead) + (m + 1,))


def diag(v, k=0):
    """Extract a diagonal of a 2-d array, or build a 2-d array from a 1-d diagonal.

    Like ``numpy.diag``. Building pads ``v``, broadcasts it along the rows (or
    columns) and keeps the ``k``-th diagonal with a constant mask, so the
    result is differentiable in ``v``.

    Raises:
      ShapeError: if ``v`` is not 1-d or 2-d.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diag(np.array([1., 2.]))
    array([[1., 0.],
           [0., 2.]])
    """
    v = _array("diag", v)
    k = operator.index(concrete_value(k, _fname("diag")))
    shape = _shape(v)
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ShapeError(f"{_fname('diag')} needs a 1-d or 2-d input, got shape {shape}")
    n = shape[0] + builtins.abs(k)
    padded = structural.pad(v, _c(v, 0), padding_config=((0, builtins.abs(k), 0),))
    spread = structural.broadcast_in_dim(padded, shape=(n, n),
                                         broadcast_dimensions=(0,) if k >= 0 else (1,))
    return ew.select(np.eye(n, k=k, dtype=bool), spread, _c(v, 0))


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
