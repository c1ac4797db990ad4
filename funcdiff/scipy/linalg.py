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
import funcdiff.numpy as fnp
from funcdiff.numpy import _util
from funcdiff.numpy import linalg as fla
from funcdiff.numpy._linalg_core import (
    LinAlgArgumentError, matrix as _matrix, solve_operands, unvector)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, sorting, structural
from funcdiff.primitives import linalg as pl
from funcdiff.primitives.linalg import LinAlgError
from funcdiff.errors import InvalidArgumentError, UnsupportedNumpyError
from funcdiff.primitives.linalg_common import (
    conj as _conj, cols as _cols, is_complex as _is_complex, mask as _mask, mH as _mH,
    mT as _mT, rows as _rows)

from funcdiff.scipy._linalg_matrix import eigh_tridiagonal, logm, schur, sqrtm  # noqa: F401

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


# Structured matrices: gathers and concatenations of their inputs, so every
# derivative is that of a gather (its transpose a scatter-add) and jit and vmap
# need nothing new.

def _last_axis_vector(x):
    x = fnp.asarray(x)
    if get_aval(x).ndim == 0:
        x = fnp.reshape(x, (1,))
    return x


def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (scipy.linalg.toeplitz).

    ``r`` defaults to ``conj(c)``; ``r[0]`` is ignored (the corner is ``c[0]``).
    As SciPy's, n-d inputs are stacks of vectors along the last axis (their
    leading axes broadcast). Differentiable in ``c`` and ``r``: entry ``(i, j)``
    is a gather of ``c[i - j]`` or ``r[j - i]``.

    Args:
      c: array ``(..., m)`` (a scalar is a vector of one).
      r: array ``(..., n)`` or ``None``.

    Returns:
      array ``(..., m, n)``.

    >>> import numpy as np
    >>> toeplitz(np.array([1., 2., 3.]), np.array([1., 4.]))
    array([[1., 4.],
           [2., 1.],
           [3., 2.]])
    """
    c = _last_axis_vector(c)
    r = _conj(c) if r is None else _last_axis_vector(r)
    c, r = _util.promote("toeplitz", c, r)
    m, n = get_aval(c).shape[-1], get_aval(r).shape[-1]
    batch = np.broadcast_shapes(get_aval(c).shape[:-1], get_aval(r).shape[:-1])
    c = fnp.broadcast_to(c, batch + (m,))
    r = fnp.broadcast_to(r, batch + (n,))
    vals = fnp.concatenate([fnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return fnp.take(vals, idx, axis=-1)


def circulant(c):
    """Circulant matrix with first column ``c`` (scipy.linalg.circulant).

    Entry ``(i, j)`` is ``c[(i - j) % n]``; n-d ``c`` is a stack of vectors
    along the last axis, as in SciPy. Differentiable in ``c`` (a gather).

    Args:
      c: array ``(..., n)``.

    Returns:
      array ``(..., n, n)``.

    >>> import numpy as np
    >>> circulant(np.array([1., 2., 3.]))
    array([[1., 3., 2.],
           [2., 1., 3.],
           [3., 2., 1.]])
    """
    c = _last_axis_vector(c)
    n = get_aval(c).shape[-1]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return fnp.take(c, idx, axis=-1)


def block_diag(*arrs):
    """Block-diagonal matrix of the given blocks (scipy.linalg.block_diag).

    Blocks are at most 2-D: a scalar is ``(1, 1)``, a vector of length ``n``
    ``(1, n)``; with no blocks the result is ``(1, 0)``, as SciPy's. The dtype
    is the blocks' common one. Differentiable in every block.

    Raises:
      InvalidArgumentError: a block with more than two dimensions.

    >>> import numpy as np
    >>> block_diag(np.array([[1., 2.]]), np.array(3.))
    array([[1., 2., 0.],
           [0., 0., 3.]])
    """
    if not arrs:
        return np.zeros((1, 0))
    blocks = []
    for k, a in enumerate(arrs):
        a = fnp.asarray(a)
        ndim = get_aval(a).ndim
        if ndim > 2:
            raise InvalidArgumentError(
                f"{_NAME}block_diag: block {k} has shape {get_aval(a).shape}, but blocks are "
                "scalars, vectors or matrices. Reshape it to 2-D, or build a batch of "
                "block-diagonal matrices with fd.vmap(block_diag).")
        blocks.append(fnp.atleast_2d(a))
    blocks = _util.promote("block_diag", *blocks) if len(blocks) > 1 else blocks
    dtype = get_aval(blocks[0]).dtype
    widths = [get_aval(b).shape[1] for b in blocks]
    total = sum(widths)
    rows, start = [], 0
    for b, w in zip(blocks, widths):
        h = get_aval(b).shape[0]
        rows.append(fnp.concatenate([np.zeros((h, start), dtype), b,
                                     np.zeros((h, total - start - w), dtype)], axis=1))
        start += w
    return fnp.concatenate(rows, axis=0)


# Linear matrix equations, solved as dense systems: the solution is a composition
# of gathers and ``solve``, so its derivative is solve's (dx = A⁻¹(db - dA x)) at
# every order, and the cotangent of a packed operand is gathered back to its slots.

def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` for banded ``a`` in LAPACK's band storage (scipy.linalg.solve_banded).

    ``ab[u + i - j, j] == a[i, j]`` for the ``l`` sub- and ``u`` super-diagonals;
    the other entries of ``ab`` are not read. ``a`` is formed densely and solved
    by LU, so the values agree with SciPy's to rounding and the cost is that of
    a dense solve. The derivative in ``b`` is ``a⁻¹ db``, in ``ab`` that of
    ``solve`` at the band positions (entries outside the band get zero).

    Args:
      l_and_u: ``(l, u)``, the numbers of non-zero lower and upper diagonals.
      ab: array ``(l + u + 1, n)``.
      b: array ``(n,)`` or ``(n, k)``.

    Returns:
      ``x``, shaped like ``b``.

    Raises:
      InvalidArgumentError: ``ab`` has not ``l + u + 1`` rows, or ``b`` not ``n`` rows.
      LinAlgError: ``a`` is singular.

    >>> import numpy as np
    >>> ab = np.array([[0., 1., 1.], [2., 2., 2.], [1., 1., 0.]])  # tridiagonal
    >>> solve_banded((1, 1), ab, np.array([3., 4., 3.]))
    array([1., 1., 1.])
    """
    name = _NAME + "solve_banded"
    l, u = (int(v) for v in l_and_u)
    ab, b = fnp.asarray(ab), fnp.asarray(b)
    shape, bshape = get_aval(ab).shape, get_aval(b).shape
    if l < 0 or u < 0 or len(shape) != 2 or shape[0] != l + u + 1:
        raise InvalidArgumentError(
            f"{name}: ab must be a matrix (l + u + 1, n) = ({l + u + 1}, n) for (l, u) = "
            f"({l}, {u}) with l, u >= 0, got shape {shape}. Store diagonal k of a in row "
            "u - k of ab, or pass the (l, u) that ab was packed for.")
    n = shape[1]
    if len(bshape) not in (1, 2) or bshape[0] != n:
        raise InvalidArgumentError(
            f"{name}: b must be (n,) or (n, k) with n = {n} (ab's columns), got shape "
            f"{bshape}. Pass one right-hand side per column of b.")
    ab, b = _util.promote_to_float("solve_banded", ab, b)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    k = u + i - j
    inside = (k >= 0) & (k <= l + u)
    # a[i, j] = ab[u + i - j, j] inside the band, else the zero appended after ab's entries
    idx = np.where(inside, k * n + j, (l + u + 1) * n)
    flat = fnp.concatenate([fnp.reshape(ab, (-1,)), np.zeros(1, get_aval(ab).dtype)])
    a = fnp.take(flat, idx)
    return _solve_named(name, "the banded matrix a is singular", a, b)


def _solve_named(name, problem, a, b):
    """``solve(a, b)``, its singular-matrix error naming the public function (when the
    solve runs eagerly; a jitted program reports solve's own message)."""
    try:
        return solve(a, b)
    except LinAlgError as e:
        raise LinAlgError(f"{name}: {problem}, so the system has no unique solution "
                          "(scipy raises too). Check the inputs; regularise them "
                          "(add a small multiple of the identity).") from e


def _square(name, what, x):
    shape = get_aval(x).shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise pl.SquareMatrixError(
            f"{name}: {what} must be a square matrix, got shape {shape}. Pass an (n, n) "
            "array; for a batch of equations use fd.vmap.")
    return shape[0]


def solve_sylvester(a, b, q):
    """Solve the Sylvester equation ``a x + x b = q`` (scipy.linalg.solve_sylvester).

    Solved as the linear system ``(a ⊗ I + I ⊗ bᵀ) vec(x) = vec(q)`` (row-major
    ``vec``) of size ``n m``, exact and differentiable to any order: the
    derivative solves another Sylvester equation, ``a dx + dx b = dq - da x - x db``.
    The cost is ``O((n m)³)``, meant for small matrices (SciPy's Bartels-Stewart
    is ``O(n³ + m³)``).

    Args:
      a: array ``(n, n)``.
      b: array ``(m, m)``.
      q: array ``(n, m)``.

    Returns:
      ``x``, ``(n, m)``.

    Raises:
      SquareMatrixError: ``a`` or ``b`` is not square.
      InvalidArgumentError: ``q`` is not ``(n, m)``.
      LinAlgError: ``a`` and ``-b`` share an eigenvalue (no unique solution).

    >>> import numpy as np
    >>> solve_sylvester(np.diag([1., 2.]), np.array([[3.]]), np.array([[4.], [10.]]))
    array([[1.],
           [2.]])
    """
    name = _NAME + "solve_sylvester"
    a, b, q = fnp.asarray(a), fnp.asarray(b), fnp.asarray(q)
    n, m = _square(name, "a", a), _square(name, "b", b)
    if get_aval(q).shape != (n, m):
        raise InvalidArgumentError(
            f"{name}: q must be (n, m) = ({n}, {m}) for a ({n}, {n}) and b ({m}, {m}), got "
            f"shape {get_aval(q).shape}. Check the order of the arguments (a, b, q).")
    a, b, q = _util.promote_to_float("solve_sylvester", a, b, q)
    dtype = get_aval(a).dtype
    system = fnp.kron(a, np.eye(m, dtype=dtype)) + fnp.kron(np.eye(n, dtype=dtype), _mT(b))
    x = _solve_named(name, "a and -b share an eigenvalue", system, fnp.reshape(q, (n * m,)))
    return fnp.reshape(x, (n, m))


def solve_continuous_lyapunov(a, q):
    """Solve the continuous Lyapunov equation ``a x + x aᴴ = q``
    (scipy.linalg.solve_continuous_lyapunov).

    The Sylvester equation with ``b = aᴴ``; see ``solve_sylvester``.

    Raises:
      SquareMatrixError: ``a`` is not square.
      InvalidArgumentError: ``q`` is not shaped like ``a``.
      LinAlgError: ``a`` and ``-aᴴ`` share an eigenvalue.

    >>> import numpy as np
    >>> x = solve_continuous_lyapunov(np.array([[-1., 1.], [0., -2.]]), -np.eye(2))
    >>> np.allclose(x, [[7/12, 1/12], [1/12, 1/4]])
    True
    """
    a = fnp.asarray(a)
    _square(_NAME + "solve_continuous_lyapunov", "a", a)
    return solve_sylvester(a, _mH(a), q)


__all__ = ["LinAlgError", "solve_triangular", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "lu", "expm", "expm_frechet", "inv", "det", "solve", "cholesky", "eigh",
           "toeplitz", "circulant", "block_diag", "solve_banded",
           "solve_sylvester", "solve_continuous_lyapunov", "sqrtm", "logm", "schur",
           "eigh_tridiagonal"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
