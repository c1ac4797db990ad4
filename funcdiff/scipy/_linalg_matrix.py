"""funcdiff.scipy.linalg's matrix square root and logarithm, Schur form and
tridiagonal eigenproblem (the rest of the module is ``funcdiff.scipy.linalg``).

``sqrtm``, ``logm`` and ``schur`` take scipy's values (so they need scipy);
``eigh_tridiagonal`` is ``eigh`` of the assembled tridiagonal matrix, so its
derivatives are eigh's.
"""

from __future__ import annotations

import funcdiff.numpy as fnp
from funcdiff.core import get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy import linalg as fla
from funcdiff.numpy._linalg_core import matrix as _matrix
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import linalg as pl
from funcdiff.primitives import scipy_matrix_functions as M

_NAME = "funcdiff.scipy.linalg."


def _relative_error(x, a, check):
    """scipy's ``errest``: ``|check(x) - a|_F / |a|_F``."""
    return ew.div(fla.norm(ew.sub(check(x), a)), fla.norm(a))


def sqrtm(A, disp=True, blocksize=64):
    """The principal matrix square root (scipy.linalg.sqrtm), batched over leading axes.

    scipy's value (Higham's Schur method); the derivative is the Fréchet
    derivative, the solution X of ``S X + X S = E``, taken as the top-right
    block of the root of ``[[A, E], [0, A]]``, so every order and both modes
    follow. ``blocksize`` is accepted and ignored.

    Args:
      A: square matrices ``(..., n, n)``, real or complex.
      disp: when False, also return scipy's error estimate
        ``|sqrtm(A)**2 - A|_F / |A|_F``.

    Returns:
      ``S`` with ``S @ S = A`` (and the estimate when ``disp`` is False).

    Raises:
      SquareMatrixError: ``A`` is not a stack of square matrices.
      InvalidArgumentError: a real ``A`` whose root is complex (a negative real
        eigenvalue): pass ``A.astype(complex)``.

    >>> import numpy as np, funcdiff as fd
    >>> sqrtm(np.array([[4.0, 1.0], [0.0, 9.0]]))
    array([[2. , 0.2],
           [0. , 3. ]])
    >>> float(fd.grad(lambda t: sqrtm(t * np.eye(2))[0, 0])(4.0))  # d sqrt(t) / dt
    0.25
    """
    root = M.sqrtm_p.bind(_matrix(_NAME + "sqrtm", A))
    if disp:
        return root
    return root, _relative_error(root, A, lambda s: fnp.matmul(s, s))


def logm(A, disp=True):
    """The principal matrix logarithm (scipy.linalg.logm), batched over leading axes.

    scipy's value (inverse scaling and squaring); the derivative is the Fréchet
    derivative, the top-right block of the logarithm of ``[[A, E], [0, A]]``,
    so every order and both modes follow.

    Args:
      A: square matrices ``(..., n, n)``, real or complex, without eigenvalues
        on the closed negative real axis for a real result.
      disp: when False, also return scipy's error estimate
        ``|expm(logm(A)) - A|_F / |A|_F``.

    Returns:
      ``L`` with ``expm(L) = A`` (and the estimate when ``disp`` is False).

    Raises:
      SquareMatrixError: ``A`` is not a stack of square matrices.
      InvalidArgumentError: a real ``A`` whose logarithm is complex: pass
        ``A.astype(complex)``.

    >>> import numpy as np, funcdiff as fd
    >>> np.round(logm(np.diag([1.0, np.e])), 12)
    array([[0., 0.],
           [0., 1.]])
    >>> round(float(fd.grad(lambda t: logm(t * np.eye(2))[1, 1])(2.0)), 12)  # d log(t) / dt
    0.5
    """
    log = M.logm_p.bind(_matrix(_NAME + "logm", A))
    if disp:
        return log
    return log, _relative_error(log, A, pl.expm_p.bind)


def schur(a, output="real", lwork=None, overwrite_a=False, sort=None, check_finite=True):
    """The Schur decomposition ``a = z t z^H`` (scipy.linalg.schur): values only.

    ``output="real"`` gives the real Schur form of a real matrix (``t`` quasi
    upper triangular, with 2 x 2 blocks for complex eigenvalue pairs);
    ``"complex"`` the complex one (``t`` upper triangular). The Schur vectors
    are not unique, so schur has no derivative: differentiating raises a
    DifferentiationError that points to ``sqrtm``, ``logm`` and ``expm``.
    ``lwork``, ``overwrite_a`` and ``check_finite`` are accepted and ignored.

    Args:
      a: square matrices ``(..., n, n)``.
      output: "real" or "complex".
      sort: not supported (a callable cannot be a static parameter).

    Returns:
      ``(t, z)``.

    >>> import numpy as np
    >>> t, z = schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> bool(np.allclose(z @ t @ z.T, [[1.0, 2.0], [0.0, 3.0]]))
    True
    """
    if sort is not None:
        raise InvalidArgumentError(
            f"{_NAME}schur: sort= is not supported; sort the eigenvalues of the complex form "
            "yourself, or call scipy.linalg.schur on concrete values.")
    t, z = M.schur_p.bind(_matrix(_NAME + "schur", a), output=output)
    return t, z


def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                     check_finite=True, tol=0.0, lapack_driver="auto"):
    """Eigenvalues (and vectors) of the symmetric tridiagonal matrix with diagonal
    ``d`` and off-diagonal ``e`` (scipy.linalg.eigh_tridiagonal).

    Computed as ``eigh`` of the assembled (n, n) matrix, so its derivatives in
    ``d`` and ``e`` are eigh's (eigenvalues: ``v_i^T dA v_i``) and jit and vmap
    need nothing new; the cost is O(n^3) rather than scipy's O(n^2).
    ``check_finite``, ``tol`` and ``lapack_driver`` are accepted and ignored.

    Args:
      d: the diagonal, shape (n,).
      e: the off-diagonal, shape (n - 1,).
      eigvals_only: return the eigenvalues only.
      select: "a" (all) or "i" (the eigenvalues ``select_range = (lo, hi)`` by
        index, inclusive). "v" (by value) gives a shape that depends on the
        values, which a traced program cannot have: use "i".

    Returns:
      The eigenvalues ascending, shape (k,), and, unless ``eigvals_only``, the
      eigenvectors as the columns of an (n, k) array.

    Raises:
      ShapeError: ``e`` is not one shorter than ``d``.
      InvalidArgumentError: ``select`` other than "a" and "i", or a bad range.

    >>> import numpy as np
    >>> np.round(eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]), eigvals_only=True), 12)
    array([1., 3.])
    """
    name = _NAME + "eigh_tridiagonal"
    d, e = _util.asarray(d, name), _util.asarray(e, name)
    n = get_aval(d).shape
    if len(n) != 1 or get_aval(e).shape != (max(n[0] - 1, 0),):
        raise ShapeError(f"{name} needs d of shape (n,) and e of shape (n - 1,), got "
                         f"{get_aval(d).shape} and {get_aval(e).shape}")
    if select not in ("a", "i"):
        raise InvalidArgumentError(
            f"{name}: select={select!r} is not supported: 'a' gives all eigenvalues and 'i' "
            "those with index in select_range (by value, 'v', the number of eigenvalues "
            "would depend on the values).")
    d, e = _util.promote_to_float("eigh_tridiagonal", d, e)
    a = fnp.diag(d) + fnp.diag(e, 1) + fnp.diag(e, -1)
    lo, hi = 0, n[0] - 1
    if select == "i":
        if select_range is None or len(select_range) != 2 or not (
                0 <= int(select_range[0]) <= int(select_range[1]) < n[0]):
            raise InvalidArgumentError(f"{name}: select='i' needs select_range=(lo, hi) with "
                                       f"0 <= lo <= hi < {n[0]}, got {select_range!r}")
        lo, hi = int(select_range[0]), int(select_range[1])
    if eigvals_only:
        return fla.eigvalsh(a)[lo:hi + 1]
    w, v = fla.eigh(a)
    return w[lo:hi + 1], v[:, lo:hi + 1]
