"""funcdiff.numpy.linalg's norms and condition number: norm, vector_norm, matrix_norm, cond.

Built from funcdiff.numpy operations with numpy's rules for ``ord`` and
``axis``: vector norms along one axis, matrix norms over a pair of axes (the
orders 2, -2 and 'nuc' through the singular values), and ``cond`` as
``norm(x) * norm(inv(x))`` or a ratio of singular values.
``funcdiff.numpy.linalg`` re-exports them.
"""

from __future__ import annotations

import math
import operator

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import get_aval
from funcdiff.numpy import _util
from funcdiff.numpy._linalg_decompositions import svd
from funcdiff.numpy._reductions import safe_root
from funcdiff.numpy._linalg_core import (LinAlgArgumentError, _float, matrix, static_float,
                                         inv)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import complex_ops, reductions, structural


# ---------------------------------------------------------------------------
# Norms and condition numbers


def _magnitude(x):
    """``|x|`` for complex ``x`` (every norm but the singular-value ones measures
    complex entries by their magnitude), else ``x`` itself."""
    return complex_ops.complex_abs(x) if get_aval(x).dtype.kind == "c" else x


def _vector_norm(x, ord, axis, keepdims):
    """numpy's vector norms of ``x`` along the int ``axis``."""
    x = _magnitude(x)
    if ord is None or ord == 2:
        return safe_root(fnp.sum(fnp.multiply(x, x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.norm: invalid norm order {ord!r} "
                                  "for vectors (use a number, inf or -inf)")
    if ord == np.inf:
        return fnp.max(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return fnp.min(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = fnp.astype(fnp.not_equal(x, 0), _util.dtype_of(x))
        return fnp.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return fnp.sum(fnp.abs(x), axis=axis, keepdims=keepdims)
    p = static_float("norm", "ord", ord)
    total = fnp.sum(fnp.power(fnp.abs(x), p), axis=axis, keepdims=keepdims)
    return safe_root(total, p) if p >= 1 else fnp.power(total, 1.0 / p)


def _matrix_norm(x, ord, row_axis, col_axis, keepdims):
    if ord in (2, -2, "nuc"):
        s = svd(fnp.moveaxis(x, (row_axis, col_axis), (-2, -1)), compute_uv=False)
        out = {2: fnp.max, -2: fnp.min, "nuc": fnp.sum}[ord](s, axis=-1)
    elif ord in ("fro", None):
        x = _magnitude(x)
        out = safe_root(fnp.sum(fnp.multiply(x, x), axis=(row_axis, col_axis)))
    elif ord in (1, -1, np.inf, -np.inf):
        # 1: largest column sum (sum over rows); inf: largest row sum.
        summed, kept = (row_axis, col_axis) if ord in (1, -1) else (col_axis, row_axis)
        sums = fnp.sum(fnp.abs(_magnitude(x)), axis=summed)
        out = (fnp.max if ord > 0 else fnp.min)(sums, axis=kept - (kept > summed))
    else:
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.norm: invalid norm order {ord!r} "
                                  "for matrices (use 'fro', 'nuc', 1, -1, 2, -2, inf, -inf)")
    if keepdims:
        shape = list(get_aval(x).shape)
        shape[row_axis] = shape[col_axis] = 1
        out = fnp.reshape(out, tuple(shape))
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (numpy.linalg.norm), with numpy's ``ord``/``axis`` rules.

    Vector orders: None/2, 1, inf, -inf, 0 (count of non-zeros), any other
    number ``p`` (``sum(|x|^p)^(1/p)``). Matrix orders (with a 2-tuple ``axis``
    or 2-D input and ``ord`` given): None/'fro', 'nuc', 1, -1, 2, -2, inf,
    -inf; 2, -2 and 'nuc' use the singular values (real matrices only).
    Complex entries count by their magnitude, as in numpy. At the zero vector the
    p-norms with p >= 1 (and the Frobenius norm) have gradient 0, their
    smallest subgradient, not NaN.

    Args:
      x: array.
      ord: the norm order.
      axis: None, an int (vector norms) or a pair of ints (matrix norms).
      keepdims: keep the reduced axes with size 1.

    Returns:
      The norms.

    Raises:
      LinAlgArgumentError: an order that does not apply. AxisError: bad axes.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.norm(np.array([3., 4.])))
    5.0
    >>> float(fnp.linalg.norm(np.array([[1., -2.], [3., 4.]]), ord=1))
    6.0
    """
    x = _float("norm", x)
    shape = get_aval(x).shape
    nd = len(shape)
    if axis is None:
        if ord is None:
            if x.dtype.kind == "f":  # what ravel, multiply, sum and sqrt bind here, directly
                flat = x if nd == 1 else structural.reshape(x, new_sizes=(math.prod(shape),))
                out = safe_root(reductions.reduce_sum(ew.mul(flat, flat), axes=(0,)))
            else:
                flat = _magnitude(fnp.ravel(x))
                out = safe_root(fnp.sum(fnp.multiply(flat, flat)))
            return fnp.reshape(out, (1,) * nd) if keepdims else out
        if nd not in (1, 2):
            raise LinAlgArgumentError(
                f"funcdiff.numpy.linalg.norm: ord={ord!r} needs a 1-D or 2-D array when "
                f"axis is None, but got {nd} dimensions; pass axis")
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise LinAlgArgumentError(f"funcdiff.numpy.linalg.norm: axis must be an int or "
                                      f"a tuple of ints, got {axis!r}") from None
    axes = tuple(_util.normalize_axis(a, nd, "funcdiff.numpy.linalg.norm") for a in axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise LinAlgArgumentError(f"funcdiff.numpy.linalg.norm: axis must name one axis (vector "
                              f"norm) or two distinct axes (matrix norm), got {axis!r}")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over one or several axes, or all of ``x`` (numpy.linalg.vector_norm).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.vector_norm(np.array([[3., 0.], [0., 4.]])))
    5.0
    """
    x = _float("vector_norm", x)
    shape = get_aval(x).shape
    axes = _util.normalize_axes(axis, len(shape), "funcdiff.numpy.linalg.vector_norm")
    rest = [i for i in range(len(shape)) if i not in axes]
    moved = fnp.transpose(x, rest + list(axes)) if rest + list(axes) != list(range(len(shape))) \
        else x
    flat = fnp.reshape(moved, tuple(shape[i] for i in rest) + (-1,))
    out = _vector_norm(flat, ord, len(rest), False)
    if keepdims:
        out = fnp.reshape(out, tuple(1 if i in axes else s for i, s in enumerate(shape)))
    return out


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes (numpy.linalg.matrix_norm).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.matrix_norm(np.array([[3., 0.], [0., 4.]]), ord='nuc'))
    7.0
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None):
    """Condition number (numpy.linalg.cond): ``norm(x, p) * norm(inv(x), p)``.

    ``p`` None, 2 or -2 use the singular values (any shape); other orders need
    square, invertible matrices (LinAlgError otherwise).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.cond(np.array([[2., 0.], [0., 0.5]])))
    4.0
    """
    x = matrix("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        big, small = s[..., 0], s[..., -1]
        return fnp.divide(small, big) if p == -2 else fnp.divide(big, small)
    return fnp.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
