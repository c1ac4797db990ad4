"""numpy 2's array-API products, axis helpers and static queries in funcdiff.numpy.

``vecdot``, ``matvec`` and ``vecmat`` are numpy 2's generalized-ufunc
products: vectors and matrices in the last axes, broadcasting over the leading
ones, with the vector conjugated where numpy conjugates it (a no-op for real
values). ``matrix_transpose`` swaps the last two axes and ``unstack`` splits an
array into the slices along one axis. ``ndim``, ``shape``, ``size``,
``iscomplexobj``, ``isrealobj`` and ``isscalar`` only ask about shapes and
dtypes, so they are answered from the abstract value and work on every tracer,
abstract ones (under jit) included.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import AxisError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._joining import split
from funcdiff.numpy._linalg_basic import matmul
from funcdiff.numpy._rounding import conj
from funcdiff.numpy._shape import expand_dims, moveaxis, squeeze, swapaxes
from funcdiff.numpy._views import returns_views


def _operand(x: Any, name: str, min_ndim: int, what: str) -> Any:
    """``x`` as an array of at least ``min_ndim`` dimensions, for ``name``'s ``what``."""
    x = _util.asarray(x, f"funcdiff.numpy.{name}")
    shape = get_aval(x).shape
    if len(shape) < min_ndim:
        raise ShapeError(
            f"funcdiff.numpy.{name} needs {what} with at least {min_ndim} dimension(s), got "
            f"shape {shape}. Add the missing axes with fnp.expand_dims or x[None].")
    return x


def _conj(x: Any) -> Any:
    return conj(x) if _util.dtype_of(x).kind == "c" else x


def _core_sizes_match(name: str, n1: int, n2: int, shapes: tuple) -> None:
    if n1 != n2:
        raise ShapeError(
            f"funcdiff.numpy.{name}: the contracted axes have different lengths ({n1} and "
            f"{n2}) for shapes {shapes[0]} and {shapes[1]}; they must be equal (only the "
            "leading axes broadcast).")


# ---------------------------------------------------------------------------
# Products


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of the vectors along ``axis``, broadcasting the others (numpy.vecdot).

    ``x1`` is conjugated (a no-op for real values); the result keeps the
    promoted dtype of the inputs (int32 stays int32).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.vecdot(np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    """
    x1 = _operand(x1, "vecdot", 1, "vectors")
    x2 = _operand(x2, "vecdot", 1, "vectors")
    s1, s2 = get_aval(x1).shape, get_aval(x2).shape
    a1 = _util.normalize_axis(axis, len(s1), "vecdot")
    a2 = _util.normalize_axis(axis, len(s2), "vecdot")
    _core_sizes_match("vecdot", s1[a1], s2[a2], (s1, s2))
    rows = expand_dims(moveaxis(_conj(x1), a1, -1), -2)  # (..., 1, n)
    cols = expand_dims(moveaxis(x2, a2, -1), -1)         # (..., n, 1)
    return squeeze(matmul(rows, cols), (-2, -1))


def matvec(x1, x2, /):
    """Matrix-vector products ``x1 @ x2`` over the last axes, broadcasting the rest (numpy.matvec).

    Args:
      x1: matrices, shape ``(..., m, n)``.
      x2: vectors, shape ``(..., n)``.

    Returns:
      The products, shape ``(..., m)`` with the leading axes broadcast.

    Raises:
      ShapeError: an operand has too few dimensions or the ``n`` axes differ.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.matvec(np.array([[1., 2.], [3., 4.]]), np.array([[1., 0.], [0., 1.]]))
    array([[1., 3.],
           [2., 4.]])
    """
    x1 = _operand(x1, "matvec", 2, "matrices as the first argument")
    x2 = _operand(x2, "matvec", 1, "vectors as the second argument")
    s1, s2 = get_aval(x1).shape, get_aval(x2).shape
    _core_sizes_match("matvec", s1[-1], s2[-1], (s1, s2))
    return squeeze(matmul(x1, expand_dims(x2, -1)), -1)


def vecmat(x1, x2, /):
    """Vector-matrix products ``conj(x1) @ x2`` over the last axes (numpy.vecmat).

    The vector is conjugated as numpy does (a no-op for real values).

    Args:
      x1: vectors, shape ``(..., n)``.
      x2: matrices, shape ``(..., n, m)``.

    Returns:
      The products, shape ``(..., m)`` with the leading axes broadcast.

    Raises:
      ShapeError: an operand has too few dimensions or the ``n`` axes differ.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.vecmat(np.array([1., 1.]), np.array([[1., 2.], [3., 4.]]))
    array([4., 6.])
    """
    x1 = _operand(x1, "vecmat", 1, "vectors as the first argument")
    x2 = _operand(x2, "vecmat", 2, "matrices as the second argument")
    s1, s2 = get_aval(x1).shape, get_aval(x2).shape
    _core_sizes_match("vecmat", s1[-1], s2[-2], (s1, s2))
    return squeeze(matmul(expand_dims(_conj(x1), -2), x2), -2)


# ---------------------------------------------------------------------------
# Axes


@returns_views
def matrix_transpose(x, /):
    """Swap the last two axes (numpy.matrix_transpose).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.matrix_transpose(np.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = _operand(x, "matrix_transpose", 2, "an array")
    return swapaxes(x, -1, -2)


@returns_views
def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple (numpy.unstack; the inverse of stack).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unstack(np.array([[1., 2.], [3., 4.]]), axis=1)
    (array([1., 3.]), array([2., 4.]))
    """
    x = _operand(x, "unstack", 1, "an array")
    shape = get_aval(x).shape
    axis = _util.normalize_axis(axis, len(shape), "unstack")
    if shape[axis] == 0:
        return ()
    return tuple(squeeze(part, axis) for part in split(x, shape[axis], axis))


# ---------------------------------------------------------------------------
# Static queries


def _aval_source(a: Any, name: str) -> Any:
    """Something with ``.shape`` and ``.dtype`` describing ``a`` without computing on it:
    its abstract value for a tracer (or a list holding tracers), else a numpy array."""
    if isinstance(a, Tracer):
        return a.aval
    if isinstance(a, (list, tuple)) and any(isinstance(e, Tracer) for e in _util.flat(a)):
        return get_aval(_util.asarray(a, f"funcdiff.numpy.{name}"))
    return np.asarray(a)


def shape(a):
    """The shape of ``a`` as a tuple of ints (numpy.shape); static for tracers too.

    >>> import funcdiff.numpy as fnp
    >>> fnp.shape([[1, 2, 3], [4, 5, 6]])
    (2, 3)
    """
    return tuple(_aval_source(a, "shape").shape)


def ndim(a):
    """The number of dimensions of ``a`` (numpy.ndim); static for tracers too.

    >>> import funcdiff.numpy as fnp
    >>> fnp.ndim([[1, 2, 3], [4, 5, 6]])
    2
    """
    return len(_aval_source(a, "ndim").shape)


def size(a, axis=None):
    """The number of elements of ``a``, or along ``axis`` (an int or a tuple) (numpy.size).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.size(np.ones((2, 3))), fnp.size(np.ones((2, 3)), axis=1)
    (6, 3)
    """
    dims = tuple(_aval_source(a, "size").shape)
    if axis is None:
        return math.prod(dims)
    if len(dims) == 0:
        raise AxisError(f"funcdiff.numpy.size: axis {axis} is out of range for a 0-d array; "
                        "call fnp.size(a) without axis=.")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    picked = {_util.normalize_axis(ax, len(dims), "size") for ax in axes}
    return math.prod(dims[ax] for ax in picked)


def iscomplexobj(x):
    """True when ``x`` has a complex dtype (numpy.iscomplexobj); static for tracers too.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.iscomplexobj(np.ones(2)), fnp.iscomplexobj(1j)
    (False, True)
    """
    return np.dtype(_aval_source(x, "iscomplexobj").dtype).kind == "c"


def isrealobj(x):
    """True when ``x`` does not have a complex dtype (numpy.isrealobj); static for tracers too.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.isrealobj(np.ones(2)), fnp.isrealobj(1j)
    (True, False)
    """
    return not iscomplexobj(x)


def isscalar(element):
    """True for Python and numpy scalars, False for arrays of any rank (numpy.isscalar).

    A tracer is an array (possibly 0-d), so it is not a scalar, just as
    ``numpy.isscalar(np.array(1.0))`` is False.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.isscalar(3.0), fnp.isscalar(np.float32(1)), fnp.isscalar(np.array(3.0))
    (True, True, False)
    """
    return bool(np.isscalar(element))  # a tracer is neither a numpy scalar nor a Number


__all__ = ["vecdot", "matvec", "vecmat", "matrix_transpose", "unstack", "shape", "ndim", "size",
           "iscomplexobj", "isrealobj", "isscalar"]
