"""funcdiff.numpy.linalg's decompositions: cholesky, eigh, eigvalsh, svd, svdvals and qr.

Each checks and promotes its input, binds the factorization primitive of
``funcdiff.primitives.linalg`` and returns numpy's named results
(``EighResult``, ``SVDResult``, ``QRResult``). Only the reduced SVD and QR
exist, since the completed bases are not unique and have no derivative;
numpy's settings that would need them raise ``UnsupportedNumpyError``.
``funcdiff.numpy.linalg`` re-exports these functions.
"""

from __future__ import annotations


from funcdiff.core import get_aval
from funcdiff.errors import UnsupportedNumpyError
from funcdiff.numpy._linalg_core import (EighResult, LinAlgArgumentError, QRResult,
                                         SVDResult, matrix)
from funcdiff.primitives import linalg as pl
from funcdiff.primitives.linalg_common import mT


# ---------------------------------------------------------------------------
# Factorizations


def cholesky(a, /, *, upper=False):
    """Cholesky factor of symmetric positive-definite matrices (numpy.linalg.cholesky).

    Factors the symmetric part ``(a + aᵀ)/2`` (which is ``a`` for symmetric
    input), so the derivative with respect to ``a`` is symmetric.

    Args:
      a: array ``(..., n, n)``.
      upper: return the upper factor ``U = Lᵀ`` (``a = Uᵀ U``) instead of ``L``.

    Returns:
      ``L`` with ``a = L Lᵀ`` (or ``U``).

    Raises:
      LinAlgError: a matrix is not positive definite.
      SquareMatrixError: ``a`` is not a stack of square matrices.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.cholesky(np.array([[4., 2.], [2., 5.]]))
    array([[2., 0.],
           [1., 2.]])
    """
    l = pl.cholesky(matrix("cholesky", a))
    return mT(l) if upper else l


def _check_uplo(name, UPLO):
    if UPLO not in ("L", "U"):
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.{name}: UPLO must be 'L' or 'U', "
                                  f"got {UPLO!r}")


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (numpy.linalg.eigh).

    Uses the symmetric part ``(a + aᵀ)/2``, so ``UPLO`` does not change the
    result for symmetric input. With ``M = Vᵀ ȧ V`` the derivatives are
    ``λ̇ = diag(M)`` and ``V̇ = V (F ∘ M)``, ``F_ij = 1/(λ_j − λ_i)``.

    Eigenvectors are defined up to sign, so differentiate only functions that
    do not depend on the sign (e.g. ``V**2``, ``V diag(g(λ)) Vᵀ``). Repeated
    eigenvalues: the eigenvalue derivatives stay exact, but the eigenvectors
    of a repeated eigenvalue are not unique and have no derivative; their
    derivative is then infinite or NaN, like JAX's and PyTorch's.

    Returns:
      ``EighResult(eigenvalues (..., n), eigenvectors (..., n, n))``, the
      eigenvectors in the columns.

    Raises:
      SquareMatrixError, LinAlgError (no convergence).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> w, v = fnp.linalg.eigh(np.array([[2., 1.], [1., 2.]]))
    >>> w
    array([1., 3.])
    """
    _check_uplo("eigh", UPLO)
    return EighResult(*pl.eigh_p.bind(matrix("eigh", a), compute_vectors=True))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices (numpy.linalg.eigvalsh).

    Their derivative ``diag(Vᵀ ȧ V)`` is exact even for repeated eigenvalues
    along symmetric directions that keep them repeated; see ``eigh``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.array([[2., 1.], [1., 2.]]))
    array([1., 3.])
    """
    _check_uplo("eigvalsh", UPLO)
    return pl.eigh_p.bind(matrix("eigvalsh", a), compute_vectors=False)[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Reduced singular value decomposition ``a = U diag(S) Vh`` (numpy.linalg.svd).

    Only the reduced form exists (``U`` is ``(..., m, k)``, ``Vh`` ``(..., k, n)``,
    ``k = min(m, n)``): ``full_matrices=True`` (numpy's default) is accepted for
    square matrices, where both forms agree. ``hermitian`` is accepted and
    ignored (the general SVD is also valid; signs may differ from numpy's
    hermitian path).

    Singular values are differentiable wherever they are distinct from each
    other (the largest and the nuclear norm everywhere they are simple).
    Singular vectors are defined up to a shared sign per pair, so differentiate
    sign-invariant functions; their derivative divides by ``s_j² − s_i²`` (and
    by ``s`` for non-square input), so it is infinite or NaN at repeated (or,
    for non-square input, zero) singular values.

    Returns:
      ``SVDResult(U, S, Vh)``, or just ``S`` (descending) if not ``compute_uv``.

    Raises:
      UnsupportedNumpyError: ``full_matrices=True`` for non-square matrices.
      LinAlgError: no convergence.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.svd(np.array([[3., 0.], [0., -4.]]), compute_uv=False)
    array([4., 3.])
    """
    a = matrix("svd", a, square=False)
    if not compute_uv:
        return pl.svd_p.bind(a, compute_uv=False)[0]
    m, n = get_aval(a).shape[-2:]
    if full_matrices and m != n:
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.linalg.svd computes the reduced SVD only, but got "
            f"full_matrices=True (numpy's default) for {m} x {n} matrices: the completed "
            "orthogonal basis is not unique and has no derivative. Pass "
            "full_matrices=False.")
    return SVDResult(*pl.svd_p.bind(a, compute_uv=True))


def svdvals(x, /):
    """Singular values, descending (numpy.linalg.svdvals).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.svdvals(np.array([[0., 2.], [1., 0.]]))
    array([2., 1.])
    """
    return svd(x, compute_uv=False)


def qr(a, mode="reduced"):
    """Reduced QR decomposition ``a = Q R`` (numpy.linalg.qr, Householder signs).

    Differentiable when the leading ``min(m, n)`` columns of ``a`` are linearly
    independent (then ``R``'s diagonal has no zeros).

    Args:
      a: array ``(..., m, n)``.
      mode: 'reduced' (``Q`` ``(..., m, k)``, ``R`` ``(..., k, n)``), 'r' (only
        ``R``), or 'complete' when ``m <= n`` (where it equals 'reduced').

    Returns:
      ``QRResult(Q, R)``, or ``R`` for mode 'r'.

    Raises:
      UnsupportedNumpyError: mode 'raw', or 'complete' with ``m > n``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> q, r = fnp.linalg.qr(np.array([[3., 1.], [4., 2.]]))
    >>> np.allclose(q @ r, [[3., 1.], [4., 2.]])
    True
    """
    a = matrix("qr", a, square=False)
    m, n = get_aval(a).shape[-2:]
    if mode not in ("reduced", "r", "complete") or (mode == "complete" and m > n):
        if mode in ("raw", "complete"):
            raise UnsupportedNumpyError(
                f"funcdiff.numpy.linalg.qr supports mode 'reduced' and 'r' (and 'complete' "
                f"when m <= n), but got mode={mode!r} for {m} x {n} matrices; use "
                "mode='reduced'.")
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.qr: unrecognized mode {mode!r}")
    q, r = pl.qr_p.bind(a)
    return r if mode == "r" else QRResult(q, r)
