"""funcdiff.numpy.linalg's rank-aware functions: pinv, matrix_rank and lstsq.

All three use the singular values with numpy's cutoffs (``rcond``/``rtol``,
static Python numbers for pinv and lstsq): ``pinv`` binds the pseudo-inverse
primitive, ``lstsq`` is the minimum-norm solution ``pinv(a) b`` with numpy's
residuals, rank and singular values, and ``matrix_rank`` counts the singular
values above the tolerance. ``funcdiff.numpy.linalg`` re-exports them.
"""

from __future__ import annotations


import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import get_aval
from funcdiff.numpy import _util
from funcdiff.numpy._linalg_decompositions import svd
from funcdiff.numpy._linalg_core import (LinAlgArgumentError, SquareMatrixError, NoValue,
                                         _float, matrix, static_float)
from funcdiff.primitives import linalg as pl


# ---------------------------------------------------------------------------
# Pseudo-inverse, least squares, rank


def _rcond_default(a, rcond, rtol, name):
    m, n = get_aval(a).shape[-2:]
    if rcond is None:
        if rtol is NoValue:
            return 1e-15
        return max(m, n) * float(np.finfo(_util.dtype_of(a)).eps) if rtol is None else rtol
    if rtol is not NoValue:
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.{name}: `rtol` and `rcond` can't "
                                  "both be set")
    return rcond


def pinv(a, rcond=None, hermitian=False, *, rtol=NoValue):
    """Moore-Penrose pseudo-inverse (numpy.linalg.pinv), with numpy's defaults.

    Singular values at or below ``rcond * largest`` count as zero. The
    derivative is Golub and Pereyra's, exact wherever the rank is locally
    constant (everywhere for full-rank matrices, repeated singular values
    included).

    Args:
      a: array ``(..., m, n)``.
      rcond, rtol: the relative cutoff (one number; not both).
      hermitian: accepted and ignored.

    Returns:
      The pseudo-inverses ``(..., n, m)``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.pinv(np.array([[1., 0.], [0., 2.], [0., 0.]]))
    array([[1. , 0. , 0. ],
           [0. , 0.5, 0. ]])
    """
    a = matrix("pinv", a, square=False)
    cutoff = static_float("pinv", "rcond/rtol", _rcond_default(a, rcond, rtol, "pinv"))
    return pl.pinv_p.bind(a, rtol=cutoff)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above the tolerance (numpy.linalg.matrix_rank).

    The result is an integer array (no derivative).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(np.array([[1., 2.], [2., 4.]])))
    1
    """
    A = _float("matrix_rank", A)
    shape = get_aval(A).shape
    if len(shape) < 2:
        return fnp.astype(fnp.any(fnp.not_equal(A, 0)), np.int64)
    s = svd(A, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = max(shape[-2:]) * float(np.finfo(_util.dtype_of(A)).eps)
        tol = fnp.multiply(fnp.max(s, axis=-1, keepdims=True), rtol)
    else:
        tol = fnp.expand_dims(fnp.asarray(tol, dtype=_util.dtype_of(s)), -1)
    return fnp.count_nonzero(fnp.greater(s, tol), axis=-1)


def lstsq(a, b, rcond=None):
    """Least-squares solution of ``a x ≈ b`` (numpy.linalg.lstsq), for full-rank ``a``.

    ``x = pinv(a, rcond) b``: the minimum-norm solution, as numpy's; singular
    values at or below ``rcond * largest`` (default ``eps * max(m, n)``) count
    as zero. Differentiable wherever the rank is locally constant.

    Args:
      a: array ``(m, n)``.
      b: array ``(m,)`` or ``(m, k)``.

    Returns:
      ``(x, residuals, rank, s)``: ``residuals`` are the squared residual norms
      per column (shape ``(k,)``, or ``(1,)`` for 1-D ``b``) when ``m > n`` and
      empty otherwise (numpy also returns them empty for rank-deficient ``a``;
      funcdiff cannot, since the rank is a traced value); ``rank`` an integer
      array; ``s`` the singular values.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> a = np.array([[1., 0.], [1., 1.], [1., 2.]])
    >>> x, res, rank, s = fnp.linalg.lstsq(a, np.array([1., 2., 3.]))
    >>> np.round(x, 6), int(rank)
    (array([1., 1.]), 2)
    """
    a = matrix("lstsq", a, square=False)
    b = _float("lstsq", b)
    a, b = _util.promote("lstsq", a, b)
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    if len(a_shape) != 2 or len(b_shape) not in (1, 2) or b_shape[0] != a_shape[0]:
        raise SquareMatrixError(
            f"funcdiff.numpy.linalg.lstsq needs a 2-D a (m, n) and b of shape (m,) or "
            f"(m, k), but got shapes {a_shape} and {b_shape} (use vmap for stacks).")
    m, n = a_shape
    if rcond is None:
        rcond = float(np.finfo(_util.dtype_of(a)).eps) * max(m, n)
    rcond = static_float("lstsq", "rcond", rcond)
    x = fnp.matmul(pl.pinv_p.bind(a, rtol=rcond), b)
    s = svd(a, compute_uv=False)
    rank = fnp.count_nonzero(fnp.greater(s, fnp.multiply(fnp.max(s), rcond)))
    if m > n:
        r = fnp.subtract(b, fnp.matmul(a, x))
        if _util.dtype_of(r).kind == "c":  # |r|², real as numpy's
            r2 = fnp.real(fnp.multiply(r, fnp.conj(r)))
        else:
            r2 = fnp.multiply(r, r)
        residuals = fnp.sum(r2, axis=0, keepdims=len(b_shape) == 1)
    else:
        residuals = np.zeros((0,), _util.dtype_of(s))
    return x, residuals, rank, s
