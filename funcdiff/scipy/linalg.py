"""funcdiff.scipy.linalg: SciPy's triangular, Cholesky and LU solvers and the matrix exponential.

The same primitives as ``funcdiff.numpy.linalg`` (``triangular_solve``,
``cholesky``, ``lu``, ``expm``), with SciPy's signatures and conventions:
``cho_factor`` returns ``(c, lower)`` and ``lu_factor`` ``(lu, piv)`` with
LAPACK's 0-based row interchanges, which ``cho_solve``/``lu_solve`` accept,
so a factorization computed once serves many right-hand sides. Everything is
differentiable in every mode (the factors too), batched over leading axes
like SciPy's batched linalg, and ``b`` is a vector only when it is 1-D.
``overwrite_*`` and ``check_finite`` are accepted and ignored (funcdiff never
writes into its inputs).

``expm`` is a primitive: its value is Higham's scaling and squaring with Padé
approximants (like SciPy's), its derivative the Fréchet derivative
``expm_frechet(a, ȧ)``, itself a primitive linear in ``ȧ`` (the exponential of
the block matrix ``[[a, ȧ], [0, a]]`` holds it in its top-right block), so
``expm`` is differentiable to any order.

>>> import numpy as np, funcdiff as fd
>>> from funcdiff.scipy import linalg
>>> float(fd.grad(lambda t: linalg.expm(t * np.array([[0., 1.], [-1., 0.]]))[0, 1])(0.))
1.0
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import get_aval
from funcdiff.numpy import _util
from funcdiff.numpy import linalg as fla
from funcdiff.numpy._linalg_core import (
    LinAlgArgumentError, matrix as _matrix, solve_operands, unvector)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, sorting, structural
from funcdiff.primitives import linalg as pl
from funcdiff.primitives.linalg import LinAlgError
from funcdiff.errors import UnsupportedNumpyError
from funcdiff.primitives.linalg_common import (
    conj as _conj, cols as _cols, is_complex as _is_complex, mask as _mask, mH as _mH,
    mT as _mT, rows as _rows)

_NAME = "funcdiff.scipy.linalg."


def _trans(trans, a):
    """SciPy's ``trans`` (0/'N', 1/'T', 2/'C') as (the matrix to solve with, transpose it):
    the conjugate transpose 'C' solves with ``conj(a)`` transposed (``aᵀ`` for real ``a``)."""
    if trans in (0, "N"):
        return a, False
    if trans in (1, "T"):
        return a, True
    if trans in (2, "C"):
        return _conj(a), True
    raise LinAlgArgumentError(f"{_NAME}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")


def _permute_rows(x, perm):
    """``x[..., perm, :]`` for a stack of permutations ``perm`` (..., n)."""
    idx = structural.expand_dims(perm, dimensions=(-1,))
    return indexing.take_along_axis(x, idx, get_aval(x).ndim - 2)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """Solve ``a x = b`` for triangular ``a`` (scipy.linalg.solve_triangular).

    Only the lower (``lower=True``) or upper triangle of ``a`` is read, and
    with ``unit_diagonal`` its diagonal is taken to be ones. ``trans`` 1 ('T')
    solves ``aᵀ x = b``, 2 ('C') ``aᴴ x = b``. Linear in ``b``; the derivative in ``a`` only sees
    the triangle that is read.

    Args:
      a: array ``(..., n, n)``.
      b: array ``(n,)`` or ``(..., n, k)``.

    Returns:
      ``x``, shaped like the broadcast ``b``.

    Raises:
      LinAlgError: a zero on the diagonal.

    >>> import numpy as np
    >>> solve_triangular(np.array([[2., 0.], [1., 1.]]), np.array([2., 3.]), lower=True)
    array([1., 2.])
    """
    a, b, vector = solve_operands(_NAME + "solve_triangular", a, b)
    a, transpose = _trans(trans, a)
    x = pl.triangular_solve(a, b, left_side=True, lower=bool(lower), transpose_a=transpose,
                            unit_diagonal=bool(unit_diagonal))
    return unvector(x, vector)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factorization for ``cho_solve`` (scipy.linalg.cho_factor).

    Returns ``(c, lower)``: ``c``'s lower (or, by default, upper) triangle holds
    the factor (``a = L Lᴴ`` or ``a = Uᴴ U``) and its other triangle holds
    ``a``'s entries, exactly as SciPy's. The factor is that of the Hermitian
    part ``(a + aᴴ)/2`` (the symmetric part of a real ``a``).

    Raises:
      LinAlgError: ``a`` is not positive definite.

    >>> import numpy as np
    >>> c, lower = cho_factor(np.array([[4., 2.], [2., 5.]]))
    >>> c
    array([[2., 1.],
           [2., 2.]])
    """
    a = _matrix(_NAME + "cho_factor", a)
    l = pl.cholesky(a)
    n = get_aval(a).shape[-1]
    factor = l if lower else _mH(l)
    rest = _mask(a, (n, n), 1, lower=False) if lower else _mask(a, (n, n), -1, lower=True)
    return ew.add(factor, rest), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` from ``cho_factor``'s ``(c, lower)`` (scipy.linalg.cho_solve).

    >>> import numpy as np
    >>> a = np.array([[4., 2.], [2., 5.]])
    >>> cho_solve(cho_factor(a), np.array([6., 7.]))
    array([1., 1.])
    """
    c, lower = c_and_lower
    c, b, vector = solve_operands(_NAME + "cho_solve", c, b)
    lower = bool(lower)
    # a = L Lᴴ: solve L y = b, then Lᴴ x = y (with U = Lᴴ when upper); a solve with
    # Lᴴ is one with conj(L) transposed.
    first, second = (c, _conj(c)) if lower else (_conj(c), c)
    y = pl.triangular_solve(first, b, left_side=True, lower=lower, transpose_a=not lower)
    x = pl.triangular_solve(second, y, left_side=True, lower=lower, transpose_a=lower)
    return unvector(x, vector)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """LU factorization with partial pivoting (scipy.linalg.lu_factor).

    Returns ``(lu, piv)``: ``lu`` packs the unit lower ``L`` (below the
    diagonal) and ``U``; ``piv[i]`` is the row interchanged with row ``i``
    (0-based, int32). The factors are differentiable (for a square ``a``, where
    ``U`` is invertible). Exactly singular matrices factor without error, as
    in SciPy; solving with them raises LinAlgError.

    >>> import numpy as np
    >>> lu, piv = lu_factor(np.array([[1., 2.], [3., 4.]]))
    >>> piv
    array([1, 1], dtype=int32)
    """
    a = _matrix(_NAME + "lu_factor", a, square=False)
    lu, pivots, _ = pl.lu_p.bind(a)
    return lu, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` from ``lu_factor``'s result (scipy.linalg.lu_solve).

    ``trans`` 1 ('T') solves ``aᵀ x = b``, 2 ('C') ``aᴴ x = b``.

    >>> import numpy as np
    >>> a = np.array([[1., 2.], [3., 4.]])
    >>> lu_solve(lu_factor(a), np.array([5., 11.]))
    array([1., 2.])
    """
    lu, piv = lu_and_piv
    lu, b, vector = solve_operands(_NAME + "lu_solve", lu, b)
    n = get_aval(lu).shape[-1]
    piv = structural.broadcast_to(piv, get_aval(lu).shape[:-2] + get_aval(piv).shape[-1:])
    perm = pl.lu_pivots_to_permutation_p.bind(piv, permutation_size=n)
    factors, transpose = _trans(trans, lu)
    if not transpose:  # P a = L U: solve L U x = P b
        y = pl.triangular_solve(lu, _permute_rows(b, perm), lower=True, unit_diagonal=True)
        x = pl.triangular_solve(lu, y, lower=False)
    else:  # aᵀ = Uᵀ Lᵀ P: solve Uᵀ Lᵀ z = b, then x = Pᵀ z (conjugated factors for aᴴ)
        lu = factors
        z = pl.triangular_solve(lu, b, lower=False, transpose_a=True)
        z = pl.triangular_solve(lu, z, lower=True, transpose_a=True, unit_diagonal=True)
        x = _permute_rows(z, sorting.argsort(perm, axis=-1))
    return unvector(x, vector)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """LU decomposition ``a = P L U`` (scipy.linalg.lu).

    Returns ``(P, L, U)``; with ``permute_l`` ``(P L, U)``; with ``p_indices``
    the permutation as row indices ``p`` (``a = L[p] @ U``). ``L`` is
    ``(..., m, k)`` unit lower, ``U`` ``(..., k, n)``, ``k = min(m, n)``.

    >>> import numpy as np
    >>> p, l, u = lu(np.array([[1., 2.], [3., 4.]]))
    >>> np.allclose(p @ l @ u, [[1., 2.], [3., 4.]])
    True
    """
    a = _matrix(_NAME + "lu", a, square=False)
    packed, _, perm = pl.lu_p.bind(a)
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    dtype = get_aval(a).dtype
    l = ew.add(_mask(_cols(packed, 0, k), (m, k), -1, lower=True),
               np.eye(m, k, dtype=dtype))
    u = _mask(_rows(packed, k), (k, n), 0, lower=False)
    inverse = sorting.argsort(perm, axis=-1)  # a = (L U)[inverse]
    if permute_l:
        return _permute_rows(l, inverse), u
    if p_indices:
        return inverse, l, u
    p = ew.convert_element_type(
        ew.eq(structural.expand_dims(inverse, dimensions=(-1,)),
              np.arange(m, dtype=get_aval(inverse).dtype)),
        new_dtype=dtype)
    return p, l, u


def expm(A):
    """Matrix exponential (scipy.linalg.expm), batched over leading axes.

    Higham's scaling and squaring with Padé approximants of degree 3 to 13
    (3 to 7 in float32). Differentiable to any order through the Fréchet
    derivative (``expm_frechet``).

    Raises:
      SquareMatrixError: ``A`` is not a stack of square matrices.

    >>> import numpy as np
    >>> np.round(expm(np.array([[0., 1.], [0., 0.]])), 12)
    array([[1., 1.],
           [0., 1.]])
    """
    return pl.expm_p.bind(_matrix(_NAME + "expm", A))


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """Fréchet derivative of ``expm`` at ``A`` along ``E`` (scipy.linalg.expm_frechet).

    ``L(A, E) = d/dt expm(A + t E)`` at ``t = 0``, computed as the top-right
    block of ``expm([[A, E], [0, A]])``; ``method`` is accepted and ignored.

    Returns:
      ``(expm(A), L(A, E))``, or only ``L`` when not ``compute_expm``.

    >>> import numpy as np
    >>> np.round(expm_frechet(np.zeros((2, 2)), np.eye(2), compute_expm=False), 12)
    array([[1., 0.],
           [0., 1.]])
    """
    A = _matrix(_NAME + "expm_frechet", A)
    E = _matrix(_NAME + "expm_frechet", E)
    A, E = _util.promote("expm_frechet", A, E)
    if get_aval(A).shape != get_aval(E).shape:
        raise pl.SquareMatrixError(f"{_NAME}expm_frechet needs A and E of one shape, got "
                                   f"{get_aval(A).shape} and {get_aval(E).shape}")
    frechet = pl.expm_frechet_p.bind(A, E)
    return (pl.expm_p.bind(A), frechet) if compute_expm else frechet


def inv(a, overwrite_a=False, check_finite=True):
    """Matrix inverse (scipy.linalg.inv); see ``funcdiff.numpy.linalg.inv``.

    >>> import numpy as np
    >>> inv(np.array([[2., 0.], [0., 4.]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return fla.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """Determinant (scipy.linalg.det); see ``funcdiff.numpy.linalg.det``.

    >>> import numpy as np
    >>> float(det(np.array([[0., 2.], [1., 0.]])))
    -2.0
    """
    return fla.det(a)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """Solve ``a x = b`` (scipy.linalg.solve); ``transposed`` solves ``aᵀ x = b``.

    ``assume_a`` is accepted and ignored: every structure is solved by LU,
    which gives the same solution. ``transposed`` with complex ``a`` raises,
    as SciPy does.

    >>> import numpy as np
    >>> solve(np.array([[3., 1.], [1., 2.]]), np.array([9., 8.]))
    array([2., 3.])
    """
    a, b, vector = solve_operands(_NAME + "solve", a, b)
    if transposed and _is_complex(a):
        raise UnsupportedNumpyError(
            f"{_NAME}solve: transposed=True with a complex matrix (SciPy refuses it too, "
            "since it is ambiguous between aᵀ and aᴴ). Pass the matrix you mean: "
            "fnp.swapaxes(a, -1, -2) or its conjugate.")
    return unvector(pl.solve(_mT(a) if transposed else a, b), vector)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor (scipy.linalg.cholesky): upper ``U`` (``a = Uᴴ U``) by default.

    >>> import numpy as np
    >>> cholesky(np.array([[4., 2.], [2., 5.]]))
    array([[2., 1.],
           [0., 2.]])
    """
    return fla.cholesky(a, upper=not lower)


def eigh(a, lower=True, eigvals_only=False):
    """Eigen-decomposition of symmetric or Hermitian matrices (scipy.linalg.eigh, without ``b``).

    See ``funcdiff.numpy.linalg.eigh`` for the derivative conventions.

    >>> import numpy as np
    >>> eigh(np.array([[2., 1.], [1., 2.]]), eigvals_only=True)
    array([1., 3.])
    """
    if eigvals_only:
        return fla.eigvalsh(a)
    return tuple(fla.eigh(a))


__all__ = ["LinAlgError", "solve_triangular", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "lu", "expm", "expm_frechet", "inv", "det", "solve", "cholesky", "eigh"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
