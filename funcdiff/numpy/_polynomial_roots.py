"""Between a polynomial's roots and its coefficients: numpy's ``poly`` and ``roots``.

``poly`` multiplies out ``(x - z_1) (x - z_2) ...`` one factor at a time (a
shifted subtraction per root), and for a square matrix returns its
characteristic polynomial by the Faddeev-LeVerrier recurrence (one matrix
product per degree), where numpy goes through the eigenvalues. Both are
compositions of funcdiff.numpy operations, so they trace, batch, compile and
differentiate.

``roots`` goes the other way: numpy computes the eigenvalues of the companion
matrix, a non-symmetric matrix whose eigenvalues are in general complex.
funcdiff has an eigenvalue primitive for symmetric matrices only (``eigh``),
so ``roots`` works on concrete coefficients only (it is numpy's) and explains
why when it meets a traced value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.errors import ShapeError, UnsupportedNumpyError
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
    """The roots of a polynomial with concrete coefficients (numpy.roots).

    numpy's roots are the eigenvalues of the companion matrix of ``p``, a
    non-symmetric matrix whose eigenvalues are in general complex. funcdiff
    has no eigenvalue primitive for non-symmetric matrices (``eigh`` serves
    symmetric ones), so ``roots`` cannot be traced, differentiated, batched
    or compiled: on concrete values (numpy arrays, lists, scalars) it returns
    numpy's result, and on a traced value it raises.

    Args:
      p: 1-D coefficients, highest power first (a scalar counts as one).

    Returns:
      numpy.roots(p): the roots, complex when some are.

    Raises:
      UnsupportedNumpyError: when ``p`` is a traced value (inside grad, jvp,
        vjp, vmap, jit or make_jaxpr).
      ShapeError: for a ``p`` of rank above 1.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.roots(np.array([1., -3., 2.]))               # (x - 1)(x - 2)
    array([2., 1.])
    """
    if isinstance(p, np.poly1d):
        p = p.coeffs
    p = _util.asarray(p, "roots")
    if _util.is_tracer(p):
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.roots got the traced {p.aval.str_short()}, but it cannot be "
            "traced: the roots are the eigenvalues of the companion matrix, a non-symmetric "
            "matrix, and funcdiff has no eigenvalue primitive for non-symmetric matrices (only "
            "eigh, for symmetric ones), so there is no derivative, batching or jit rule. Call "
            "numpy.roots on concrete coefficients outside the transform; for the derivative of "
            "a simple real root r, differentiate implicitly: dr/dp[i] = "
            "-r**(len(p)-1-i) / polyval(polyder(p), r).")
    if p.ndim > 1:
        raise ShapeError(f"funcdiff.numpy.roots needs p as a 1-D array of coefficients "
                         f"(highest power first), but got shape {p.shape}.")
    return np.roots(p)


__all__ = ["poly", "roots"]
