"""funcdiff.numpy.linalg's decompositions: cholesky, eigh, eigvalsh, eig, eigvals, svd, qr.

Each checks and promotes its input, binds the factorization primitive of
``funcdiff.primitives.linalg`` and returns numpy's named results
(``EighResult``, ``EigResult``, ``SVDResult``, ``QRResult``); ``svdvals`` is
the values of ``svd``. Real and complex input both work (see
``funcdiff.numpy.linalg`` for the complex conventions). Only the reduced SVD
and QR exist, since the completed bases are not unique and have no derivative;
numpy's settings that would need them raise ``UnsupportedNumpyError``.
``funcdiff.numpy.linalg`` re-exports these functions.
"""

from __future__ import annotations


from funcdiff.core import get_aval
from funcdiff.errors import UnsupportedNumpyError
from funcdiff.numpy._linalg_core import (EigResult, EighResult, LinAlgArgumentError, QRResult,
                                         SVDResult, matrix)
from funcdiff.primitives import linalg as pl
from funcdiff.primitives.linalg_common import mH


# ---------------------------------------------------------------------------
# Factorizations


def cholesky(a, /, *, upper=False):
    """Cholesky factor of Hermitian positive-definite matrices (numpy.linalg.cholesky).

    Factors the Hermitian part ``(a + aᴴ)/2`` (which is ``a`` for symmetric or
    Hermitian input; numpy reads only the lower triangle), so the derivative
    with respect to ``a`` is Hermitian.

    Args:
      a: array ``(..., n, n)``, real or complex.
      upper: return the upper factor ``U = Lᴴ`` (``a = Uᴴ U``) instead of ``L``.

    Returns:
      ``L`` with ``a = L Lᴴ`` (or ``U``).

    Raises:
      LinAlgError: a matrix is not positive definite.
      SquareMatrixError: ``a`` is not a stack of square matrices.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.cholesky(np.array([[4., 2.], [2., 5.]]))
    array([[2., 0.],
           [1., 2.]])
    """
    l = pl.cholesky(matrix("cholesky", a))
    return mH(l) if upper else l


def _check_uplo(name, UPLO):
    if UPLO not in ("L", "U"):
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.{name}: UPLO must be 'L' or 'U', "
                                  f"got {UPLO!r}")


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric or Hermitian matrices (numpy.linalg.eigh).

    Uses the Hermitian part ``(a + aᴴ)/2``, so ``UPLO`` does not change the
    result for Hermitian input. The eigenvalues are real (float64 for
    complex128 input), the eigenvectors complex for complex input. With
    ``M = Vᴴ ȧ V`` the derivatives are ``λ̇ = Re diag(M)`` and
    ``V̇ = V (F ∘ M)``, ``F_ij = 1/(λ_j − λ_i)``.

    Eigenvectors are defined up to sign (a phase ``e^{iφ}`` for complex
    input), so differentiate only functions that do not depend on it (e.g.
    ``|V|**2``, ``V diag(g(λ)) Vᴴ``). Repeated
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

    Their derivative ``Re diag(Vᴴ ȧ V)`` is exact even for repeated eigenvalues
    along symmetric directions that keep them repeated; see ``eigh``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.array([[2., 1.], [1., 2.]]))
    array([1., 3.])
    """
    _check_uplo("eigvalsh", UPLO)
    return pl.eigh_p.bind(matrix("eigvalsh", a), compute_vectors=False)[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Reduced singular value decomposition ``a = U diag(S) Vh`` (numpy.linalg.svd).

    Real or complex ``a``; ``S`` is real, ``U`` and ``Vh`` complex for complex
    input (``Vh = Vᴴ``).

    Only the reduced form exists (``U`` is ``(..., m, k)``, ``Vh`` ``(..., k, n)``,
    ``k = min(m, n)``): ``full_matrices=True`` (numpy's default) is accepted for
    square matrices, where both forms agree. ``hermitian`` is accepted and
    ignored (the general SVD is also valid; signs may differ from numpy's
    hermitian path).

    Singular values are differentiable wherever they are distinct from each
    other (the largest and the nuclear norm everywhere they are simple).
    Singular vectors are defined up to a shared sign per pair (a shared phase
    ``e^{iφ}`` for complex input), so differentiate functions invariant to it
    (``U diag(g(S)) Vh``, ``|U|``); their derivative divides by ``s_j² − s_i²`` (and
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

    For complex ``a``, ``Qᴴ Q = I`` and ``R`` has a real diagonal (LAPACK's,
    which the derivative keeps). Differentiable when the leading ``min(m, n)`` columns of ``a`` are linearly
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


# ---------------------------------------------------------------------------
# General (non-symmetric) eigenproblems


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (numpy.linalg.eig).

    Values are numpy's (LAPACK ``geev``, in its order), but always of complex
    dtype, as in JAX: complex128 for float64 and complex128 input, complex64
    for float32 and complex64. numpy returns real arrays when every eigenvalue
    happens to be real, a dtype that depends on the values; a traced program
    needs a fixed dtype, so funcdiff always answers complex (``.real`` gives
    numpy's real result back when you know the spectrum is real).

    Each eigenvector (a column of ``V``, ``a V = V diag(λ)``) has unit 2-norm,
    as numpy's; it is defined only up to a phase ``e^{iφ}``. The derivatives
    (``M = V⁻¹ ȧ V``: ``λ̇ = diag(M)``, ``V̇ = V (F ∘ M)`` with
    ``F_ij = 1/(λ_j − λ_i)``, then the component that keeps each column at
    unit norm removed) are exact for functions invariant to each column's
    phase, e.g. ``|V|``, ``|V|**2`` or ``V diag(g(λ)) V⁻¹``, and the phase
    itself has no defined derivative. They need distinct eigenvalues:
    eigenvalue derivatives need a diagonalizable ``a`` (a defective one makes
    the solve with ``V`` raise LinAlgError), eigenvector derivatives are
    infinite or NaN at repeated eigenvalues, as in JAX and autograd.

    Args:
      a: array ``(..., n, n)``, real or complex.

    Returns:
      ``EigResult(eigenvalues (..., n), eigenvectors (..., n, n))``, complex.

    Raises:
      SquareMatrixError: ``a`` is not a stack of square matrices.
      LinAlgError: no convergence.

    >>> import numpy as np, funcdiff as fd, funcdiff.numpy as fnp
    >>> a = np.array([[0., -2.], [1., 0.]])          # eigenvalues ±i√2
    >>> w, v = fnp.linalg.eig(a)
    >>> np.round(w, 6)
    array([0.+1.414214j, 0.-1.414214j])
    >>> np.allclose(a @ v, v * w)
    True
    >>> fd.grad(lambda a: fnp.linalg.eig(a)[0].imag[0])(a)   # d Im λ₀ / da
    array([[ 0.        , -0.35355339],
           [ 0.70710678,  0.        ]])
    """
    return EigResult(*pl.eig_p.bind(matrix("eig", a), compute_vectors=True))


def eigvals(a):
    """Eigenvalues of general square matrices, always complex (numpy.linalg.eigvals).

    The same values as ``eig`` (see it for the dtype and when the derivative
    ``λ̇ = diag(V⁻¹ ȧ V)`` exists: simple eigenvalues of a diagonalizable ``a``).

    >>> import numpy as np, funcdiff as fd, funcdiff.numpy as fnp
    >>> fnp.linalg.eigvals(np.array([[2., 1.], [0., 3.]]))
    array([2.+0.j, 3.+0.j])
    >>> fd.grad(lambda a: fnp.linalg.eigvals(a).real.max())(np.array([[2., 1.], [0., 3.]]))
    array([[0., 0.],
           [1., 1.]])
    """
    return pl.eig_p.bind(matrix("eigvals", a), compute_vectors=False)[0]
