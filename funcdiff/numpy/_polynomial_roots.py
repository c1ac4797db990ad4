"""Between a polynomial's roots and its coefficients: numpy's ``poly`` and ``roots``.

``poly`` multiplies out ``(x - z_1) (x - z_2) ...`` one factor at a time (a
shifted subtraction per root), and for a square matrix returns its
characteristic polynomial by the Faddeev-LeVerrier recurrence (one matrix
product per degree), where numpy goes through the eigenvalues. Both are
compositions of funcdiff.numpy operations, so they trace, batch, compile and
differentiate.

``roots`` goes the other way: the eigenvalues of the companion matrix, as in
numpy. On concrete coefficients it is numpy's ``roots``; on traced ones it
builds the companion matrix from funcdiff.numpy operations and takes
``linalg.eigvals``, so the roots trace, batch, compile and differentiate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.errors import ShapeError
from funcdiff.numpy import _util


def _from_roots(zeros: Any, count: int, dtype: np.dtype) -> Any:
    """The coefficients of ``prod(x - zeros[i])``, highest power first."""
    coefficients = np.ones(1, dtype)
    for i in range(count):
        # (a_0 x^k + ... + a_k)(x - z): the coefficients shifted up one power, minus z times them
        higher = fnp.concatenate([coefficients, np.zeros(1, dtype)])
        lower = fnp.concatenate([np.zeros(1, dtype), coefficients])
        coefficients = fnp.subtract(higher, fnp.multiply(zeros[i], lower))
    return coefficients


def _characteristic(a: Any, n: int, dtype: np.dtype) -> Any:
    """The coefficients of ``det(x I - a)`` by the Faddeev-LeVerrier recurrence:
    ``M_1 = I``, ``c_k = -trace(a M_k) / k``, ``M_{k+1} = a M_k + c_k I``."""
    eye = np.eye(n, dtype=dtype)
    coefficients, m = [np.ones(1, dtype)], eye
    for k in range(1, n + 1):
        am = fnp.matmul(a, m)
        c = fnp.divide(fnp.negative(fnp.trace(am)), k)
        coefficients.append(fnp.reshape(c, (1,)))
        if k < n:
            m = fnp.add(am, fnp.multiply(c, eye))
    return fnp.concatenate(coefficients)


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (numpy.poly).

    For a 1-D ``seq_of_zeros`` the result is the expansion of
    ``(x - z[0]) (x - z[1]) ...``; for a square matrix it is the matrix's
    characteristic polynomial ``det(x I - A)``. Differentiable in the roots
    (or the matrix entries).

    funcdiff computes the characteristic polynomial by the Faddeev-LeVerrier
    recurrence (matrix products and traces) where numpy expands the
    eigenvalues; the two agree to rounding for small, well-scaled matrices,
    and the recurrence loses accuracy as the size and the spread of the
    eigenvalues grow. Real roots only: funcdiff has no complex arrays.

    Args:
      seq_of_zeros: a 1-D array of roots (a scalar counts as one), or a
        non-empty square matrix.

    Returns:
      ``len(seq_of_zeros) + 1`` coefficients, highest power first, the first
      being 1: float32 for float32 input, float64 otherwise. For no roots,
      the Python float ``1.0``, as in numpy.

    Raises:
      ShapeError: for an array that is neither 1-D nor a non-empty square matrix.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.poly(np.array([1., 2.]))                      # (x - 1)(x - 2)
    array([ 1., -3.,  2.])
    >>> fnp.poly(np.array([[1., 2.], [3., 4.]]))          # x^2 - trace x + det
    array([ 1., -5., -2.])
    """
    a = _util.asarray(seq_of_zeros, "poly")
    shape = _util.shape_of(a)
    if not shape:
        a, shape = fnp.reshape(a, (1,)), (1,)
    dtype = _util.dtype_of(a)
    dtype = dtype if dtypes.is_float(dtype) else dtypes.default_float
    a = _util.cast(a, dtype)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        return _characteristic(a, shape[0], dtype)
    if len(shape) != 1:
        raise ShapeError(f"funcdiff.numpy.poly needs a 1-D array of roots or a non-empty "
                         f"square matrix, but got shape {shape} (numpy rejects it too); use "
                         f"vmap for a batch of them.")
    if shape[0] == 0:
        return 1.0
    return _from_roots(a, shape[0], dtype)


def roots(p: Any) -> Any:
    """The roots of a polynomial (numpy.roots): the eigenvalues of its companion matrix.

    On concrete coefficients (numpy arrays, lists, scalars) the result is
    numpy's: leading zeros stripped, trailing zeros giving exact zero roots,
    real when every root is real. On traced coefficients (inside grad, jvp,
    vjp, vmap, jit or make_jaxpr) the length and dtype must be static, so
    nothing is stripped and the roots are always complex (as in JAX):
    ``linalg.eigvals`` of the companion matrix
    ``[[-p[1:]/p[0]], [I 0]]``, in numpy's order. The leading coefficient
    must then be nonzero. The derivative is that of simple eigenvalues,
    ``dr/dp[i] = -r**(len(p)-1-i) / polyval(polyder(p), r)``: defined for
    distinct roots, infinite at repeated ones.

    Args:
      p: 1-D coefficients, highest power first (a scalar counts as one).

    Returns:
      The ``len(p) - 1`` roots (fewer for concrete ``p`` with leading zeros).

    Raises:
      ShapeError: for a ``p`` of rank above 1.

    >>> import numpy as np, funcdiff as fd, funcdiff.numpy as fnp
    >>> fnp.roots(np.array([1., -3., 2.]))               # (x - 1)(x - 2)
    array([2., 1.])
    >>> fd.jacfwd(lambda p: fnp.roots(p).real)(np.array([1., -3., 2.]))
    array([[-4., -2., -1.],
           [ 1.,  1.,  1.]])
    """
    if isinstance(p, np.poly1d):
        p = p.coeffs
    p = _util.asarray(p, "roots")
    shape = _util.shape_of(p)
    if len(shape) > 1:
        raise ShapeError(f"funcdiff.numpy.roots needs p as a 1-D array of coefficients "
                         f"(highest power first), but got shape {shape}.")
    if not _util.is_tracer(p):
        return np.roots(p)
    if not shape:
        p, shape = fnp.reshape(p, (1,)), (1,)
    dtype = _util.dtype_of(p)
    if not dtypes.is_inexact(dtype):
        p = _util.cast(p, dtypes.default_float)
        dtype = dtypes.default_float
    n = shape[0] - 1
    if n < 1:
        return np.zeros((0,), dtypes.complex_dtype(dtypes.real_dtype(dtype)))
    first_row = fnp.reshape(fnp.divide(fnp.negative(p[1:]), p[0]), (1, n))
    companion = fnp.concatenate([first_row, np.eye(n - 1, n, dtype=dtype)], axis=0)
    return fnp.linalg.eigvals(companion)


__all__ = ["poly", "roots"]
