"""funcdiff.numpy.linalg: numpy.linalg, differentiable in every mode and batched like numpy.

Each function takes what numpy's does (arrays, lists, tracers), promotes
integers to float64, checks shapes with errors naming the function, and binds
the primitives of ``funcdiff.primitives.linalg`` (factorizations, solves,
determinants, pseudo-inverse) or composes them with funcdiff.numpy (norms,
powers, chained products). Leading axes are a batch, as in numpy; under
``vmap`` the same primitives batch once more.

Conventions worth knowing:

- ``cholesky``, ``eigh`` and ``eigvalsh`` use the symmetric part
  ``(a + aᵀ)/2`` of their input (numpy reads one triangle; both agree on
  symmetric input), so their gradients are symmetric matrices.
- ``svd`` is the reduced SVD (``full_matrices=False``); numpy's default
  ``full_matrices=True`` is accepted for square matrices only. ``qr`` is
  reduced too.
- Eigenvectors and singular vectors are defined up to sign, and their
  derivatives exist only for distinct eigenvalues (singular values); see
  ``eigh`` and ``svd``.
- Singular or non-positive-definite input raises ``LinAlgError`` (a funcdiff
  error that is also ``numpy.linalg.LinAlgError``), and so does a derivative
  that would need the inverse of a singular matrix: never silent NaN.

>>> import numpy as np, funcdiff as fd, funcdiff.numpy as fnp
>>> a = np.array([[2., 1.], [1., 3.]])
>>> fd.grad(lambda a: fnp.linalg.slogdet(a)[1])(a)   # d log|det a| / da = a⁻ᵀ
array([[ 0.6, -0.2],
       [-0.2,  0.4]])
"""

from __future__ import annotations

import collections
import operator
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import FunctionalDiffError, InvalidArgumentError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.primitives import linalg as pl
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.primitives.linalg import LinAlgError, SquareMatrixError


class LinAlgArgumentError(FunctionalDiffError, ValueError):
    """A linear-algebra function got an invalid setting (``ord``, ``mode``, ``UPLO``, ...)."""


EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])

_NoValue = object()

# ---------------------------------------------------------------------------
# Argument handling


def _qualified(name: str) -> str:
    return name if name.startswith("funcdiff.") else f"funcdiff.numpy.linalg.{name}"


def _float(name: str, x: Any) -> Any:
    """``x`` as an array or tracer; integers and booleans become float64."""
    x = _util.asarray(x, _qualified(name))
    if _util.dtype_of(x).kind in "biu":
        x = _util.cast(x, np.dtype(np.float64))
    return x


def _matrix(name: str, a: Any, square: bool = True) -> Any:
    a = _float(name, a)
    pl.check_matrix(_qualified(name), get_aval(a), square)
    return a


def _mT(x):
    return pl._mT(x)


def solve_operands(name: str, a: Any, b: Any) -> tuple[Any, Any, bool]:
    """``a`` (..., n, n) and ``b`` promoted and broadcast to common leading axes.

    ``b`` is a vector (..., n) only if it is 1-D (numpy 2's and SciPy's rule);
    it is returned as a matrix (..., n, 1) with ``True`` to say so.
    """
    a, b = _float(name, a), _float(name, b)
    a, b = _util.promote(name, a, b)
    where = _qualified(name)
    pl.check_matrix(where, get_aval(a))
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    if len(b_shape) == 0 or b_shape[-2 if len(b_shape) > 1 else 0] != a_shape[-1]:
        raise SquareMatrixError(
            f"{where}: the right-hand side b needs {a_shape[-1]} rows (shape (n,) or "
            f"(..., n, k)) for matrices of shape {a_shape}, but got shape {b_shape}.")
    vector = len(b_shape) == 1
    if vector:
        b_shape = b_shape + (1,)
        b = structural.reshape(b, new_sizes=b_shape)
    lead = broadcast_shapes(where, a_shape[:-2], b_shape[:-2])
    return (structural.broadcast_to(a, lead + a_shape[-2:]),
            structural.broadcast_to(b, lead + b_shape[-2:]), vector)


def unvector(x, vector: bool):
    """Drop the column axis that ``solve_operands`` added to a vector right-hand side."""
    return structural.reshape(x, new_sizes=get_aval(x).shape[:-1]) if vector else x


def _eye_like(a):
    aval = get_aval(a)
    return structural.broadcast_to(np.eye(aval.shape[-1], dtype=aval.dtype), aval.shape)


# ---------------------------------------------------------------------------
# Inverses, solves and determinants


def inv(a):
    """Inverse of each square matrix in the last two axes (numpy.linalg.inv).

    Computed as ``solve(a, I)``; its derivative is ``-a⁻¹ ȧ a⁻¹``.

    Args:
      a: array ``(..., n, n)``.

    Returns:
      The inverses, same shape (float64 for integer input, float32 stays float32).

    Raises:
      SquareMatrixError: ``a`` is not a stack of square matrices.
      LinAlgError: a matrix is exactly singular.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.inv(np.array([[2., 0.], [0., 4.]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    a = _matrix("inv", a)
    return pl.solve(a, _eye_like(a))


def solve(a, b):
    """Solve ``a x = b`` (numpy.linalg.solve), batched with broadcasting leading axes.

    ``b`` is a vector only if it is 1-D (numpy 2's rule); otherwise it is a
    stack of matrices ``(..., n, k)``. ``x`` is linear in ``b`` (its transpose
    solves with ``aᵀ``) and ``ẋ = a⁻¹ (ḃ − ȧ x)``.

    Args:
      a: array ``(..., n, n)``.
      b: array ``(n,)`` or ``(..., n, k)``.

    Returns:
      ``x``, shaped like the broadcast ``b``.

    Raises:
      SquareMatrixError: non-square ``a`` or a ``b`` of the wrong size.
      LinAlgError: a matrix is exactly singular.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.solve(np.array([[3., 1.], [1., 2.]]), np.array([9., 8.]))
    array([2., 3.])
    """
    a, b, vector = solve_operands("solve", a, b)
    return unvector(pl.solve(a, b), vector)


def det(a):
    """Determinant of each square matrix (numpy.linalg.det).

    Its derivative is ``det(a) a⁻ᵀ``; at an exactly singular matrix the
    derivative raises LinAlgError (the value itself is fine).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> round(float(fnp.linalg.det(np.array([[2., 1.], [1., 3.]]))), 12)
    5.0
    """
    return pl.det_p.bind(_matrix("det", a))


def slogdet(a):
    """Sign and log of the absolute determinant (numpy.linalg.slogdet).

    Returns:
      ``SlogdetResult(sign, logabsdet)``; ``logabsdet`` has derivative ``a⁻ᵀ``
      (LinAlgError at an exactly singular matrix), ``sign`` has none.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> sign, logabsdet = fnp.linalg.slogdet(np.array([[0., 2.], [1., 0.]]))
    >>> float(sign), round(float(logabsdet), 6)
    (-1.0, 0.693147)
    """
    return SlogdetResult(*pl.slogdet_p.bind(_matrix("slogdet", a)))


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
    l = pl.cholesky(_matrix("cholesky", a))
    return _mT(l) if upper else l


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
    return EighResult(*pl.eigh_p.bind(_matrix("eigh", a), compute_vectors=True))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices (numpy.linalg.eigvalsh).

    Their derivative ``diag(Vᵀ ȧ V)`` is exact even for repeated eigenvalues
    along symmetric directions that keep them repeated; see ``eigh``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.array([[2., 1.], [1., 2.]]))
    array([1., 3.])
    """
    _check_uplo("eigvalsh", UPLO)
    return pl.eigh_p.bind(_matrix("eigvalsh", a), compute_vectors=False)[0]


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
    a = _matrix("svd", a, square=False)
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
    a = _matrix("qr", a, square=False)
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
# Pseudo-inverse, least squares, rank


def _rcond_default(a, rcond, rtol, name):
    m, n = get_aval(a).shape[-2:]
    if rcond is None:
        if rtol is _NoValue:
            return 1e-15
        return max(m, n) * float(np.finfo(_util.dtype_of(a)).eps) if rtol is None else rtol
    if rtol is not _NoValue:
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.{name}: `rtol` and `rcond` can't "
                                  "both be set")
    return rcond


def _static_float(name, what, value):
    if isinstance(value, Tracer) or np.ndim(value) != 0:
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.linalg.{name} needs {what} to be one Python number (a static "
            f"setting), but got {value!r:.60}.")
    return float(value)


def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
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
    a = _matrix("pinv", a, square=False)
    cutoff = _static_float("pinv", "rcond/rtol", _rcond_default(a, rcond, rtol, "pinv"))
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
    a = _matrix("lstsq", a, square=False)
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
    rcond = _static_float("lstsq", "rcond", rcond)
    x = fnp.matmul(pl.pinv_p.bind(a, rtol=rcond), b)
    s = svd(a, compute_uv=False)
    rank = fnp.count_nonzero(fnp.greater(s, fnp.multiply(fnp.max(s), rcond)))
    if m > n:
        r = fnp.subtract(b, fnp.matmul(a, x))
        residuals = fnp.sum(fnp.multiply(r, r), axis=0, keepdims=len(b_shape) == 1)
    else:
        residuals = np.zeros((0,), _util.dtype_of(a))
    return x, residuals, rank, s


# ---------------------------------------------------------------------------
# Norms and condition numbers


def _vector_norm(x, ord, axis, keepdims):
    """numpy's vector norms of ``x`` along the int ``axis``."""
    if ord is None or ord == 2:
        return fnp.sqrt(fnp.sum(fnp.multiply(x, x), axis=axis, keepdims=keepdims))
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
    p = _static_float("norm", "ord", ord)
    total = fnp.sum(fnp.power(fnp.abs(x), p), axis=axis, keepdims=keepdims)
    return fnp.power(total, 1.0 / p)


def _matrix_norm(x, ord, row_axis, col_axis, keepdims):
    if ord in (2, -2, "nuc"):
        s = svd(fnp.moveaxis(x, (row_axis, col_axis), (-2, -1)), compute_uv=False)
        out = {2: fnp.max, -2: fnp.min, "nuc": fnp.sum}[ord](s, axis=-1)
    elif ord in ("fro", None):
        out = fnp.sqrt(fnp.sum(fnp.multiply(x, x), axis=(row_axis, col_axis)))
    elif ord in (1, -1, np.inf, -np.inf):
        # 1: largest column sum (sum over rows); inf: largest row sum.
        summed, kept = (row_axis, col_axis) if ord in (1, -1) else (col_axis, row_axis)
        sums = fnp.sum(fnp.abs(x), axis=summed)
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
    -inf; 2, -2 and 'nuc' use the singular values. The 2-norm of the zero
    vector has gradient 0 (funcdiff's sqrt convention), not NaN.

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
    nd = len(get_aval(x).shape)
    if axis is None:
        if ord is None:
            flat = fnp.ravel(x)
            out = fnp.sqrt(fnp.sum(fnp.multiply(flat, flat)))
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
    x = _matrix("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        big, small = s[..., 0], s[..., -1]
        return fnp.divide(small, big) if p == -2 else fnp.divide(big, small)
    return fnp.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


# ---------------------------------------------------------------------------
# Products and powers


def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring (numpy.linalg.matrix_power).

    ``n = 0`` gives identities of a's dtype; negative ``n`` inverts first.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.matrix_power(np.array([[1., 1.], [0., 1.]]), 3)
    array([[1., 3.],
           [0., 1.]])
    """
    a = _util.asarray(a, "funcdiff.numpy.linalg.matrix_power")
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise SquareMatrixError(f"funcdiff.numpy.linalg.matrix_power needs square matrices in "
                                f"the last two axes, but got shape {shape}")
    try:
        n = operator.index(n)
    except TypeError:
        raise InvalidArgumentError(f"funcdiff.numpy.linalg.matrix_power: the exponent must be "
                                   f"an integer, got {n!r}") from None
    if n == 0:
        return structural.broadcast_to(np.eye(shape[-1], dtype=_util.dtype_of(a)), shape)
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while True:
        if n & 1:
            result = square if result is None else fnp.matmul(result, square)
        n >>= 1
        if not n:
            return result
        square = fnp.matmul(square, square)


def _chain_order(shapes):
    """Optimal parenthesisation of a matrix chain (dynamic programming, as numpy)."""
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """Product of a chain of matrices in the cheapest order (numpy.linalg.multi_dot).

    The first and last arrays may be 1-D (a row and a column vector).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.multi_dot([np.ones(2), np.eye(2), np.array([[1., 2.], [3., 4.]])])
    array([4., 6.])
    """
    _util.reject("linalg.multi_dot", out=out)
    arrays = [_util.asarray(a, "funcdiff.numpy.linalg.multi_dot") for a in arrays]
    if len(arrays) < 2:
        raise LinAlgArgumentError("funcdiff.numpy.linalg.multi_dot needs at least two arrays")
    arrays = _util.promote("multi_dot", *arrays)
    first_1d = len(get_aval(arrays[0]).shape) == 1
    last_1d = len(get_aval(arrays[-1]).shape) == 1
    if first_1d:
        arrays[0] = fnp.reshape(arrays[0], (1, -1))
    if last_1d:
        arrays[-1] = fnp.reshape(arrays[-1], (-1, 1))
    shapes = [get_aval(a).shape for a in arrays]
    for i, s in enumerate(shapes):
        if len(s) != 2:
            raise SquareMatrixError(f"funcdiff.numpy.linalg.multi_dot: array {i} has shape "
                                    f"{s}; only the first and last may be 1-D, the others "
                                    "must be 2-D")
    split = _chain_order(shapes)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return fnp.dot(product(i, k), product(k + 1, j))

    result = product(0, len(arrays) - 1)
    if first_1d and last_1d:
        return fnp.reshape(result, ())
    if first_1d or last_1d:
        return fnp.reshape(result, (-1,))
    return result


def tensorsolve(a, b, axes=None):
    """Solve the tensor equation ``tensordot(a, x, x.ndim) = b`` (numpy.linalg.tensorsolve).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.tensorsolve(np.eye(4).reshape(2, 2, 2, 2), np.ones((2, 2))).shape
    (2, 2)
    """
    a = _float("tensorsolve", a)
    b = _float("tensorsolve", b)
    a_shape, b_nd = get_aval(a).shape, len(get_aval(b).shape)
    if axes is not None:
        order = [i for i in range(len(a_shape)) if i not in
                 [_util.normalize_axis(k, len(a_shape), "tensorsolve") for k in axes]]
        order += [_util.normalize_axis(k, len(a_shape), "tensorsolve") for k in axes]
        a = fnp.transpose(a, order)
        a_shape = get_aval(a).shape
    x_shape = a_shape[b_nd:]
    size = int(np.prod(x_shape, dtype=np.int64))
    if int(np.prod(a_shape, dtype=np.int64)) != size * size:
        raise SquareMatrixError(
            f"funcdiff.numpy.linalg.tensorsolve needs prod(a.shape[b.ndim:]) == "
            f"prod(a.shape[:b.ndim]), but a has shape {a_shape} and b {b_nd} dimensions")
    x = solve(fnp.reshape(a, (size, size)), fnp.reshape(b, (size,)))
    return fnp.reshape(x, x_shape)


def tensorinv(a, ind=2):
    """Inverse of a tensor with respect to ``tensordot`` (numpy.linalg.tensorinv).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.tensorinv(np.eye(6).reshape(6, 2, 3), ind=1).shape
    (2, 3, 6)
    """
    a = _float("tensorinv", a)
    shape = get_aval(a).shape
    if ind <= 0:
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.tensorinv: ind must be positive, "
                                  f"got {ind}")
    size = int(np.prod(shape[ind:], dtype=np.int64))
    return fnp.reshape(inv(fnp.reshape(a, (size, -1))), shape[ind:] + shape[:ind])


# ---------------------------------------------------------------------------
# numpy 2's array-API names


def matrix_transpose(x, /):
    """Transpose of the last two axes (numpy.linalg.matrix_transpose).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.matrix_transpose(np.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = _util.asarray(x, "funcdiff.numpy.linalg.matrix_transpose")
    if len(get_aval(x).shape) < 2:
        raise SquareMatrixError("funcdiff.numpy.linalg.matrix_transpose needs at least 2 "
                                f"dimensions, got shape {get_aval(x).shape}")
    return _mT(x)


def diagonal(x, /, *, offset=0):
    """Diagonals of the matrices in the last two axes (numpy.linalg.diagonal).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.diagonal(np.array([[1., 2.], [3., 4.]]))
    array([1., 4.])
    """
    return fnp.diagonal(x, offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """Traces of the matrices in the last two axes (numpy.linalg.trace).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.trace(np.array([[1., 2.], [3., 4.]])))
    5.0
    """
    return fnp.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def outer(x1, x2, /):
    """Outer product of two vectors (numpy.linalg.outer).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.outer(np.array([1., 2.]), np.array([3., 4.]))
    array([[3., 4.],
           [6., 8.]])
    """
    x1 = _util.asarray(x1, "funcdiff.numpy.linalg.outer")
    x2 = _util.asarray(x2, "funcdiff.numpy.linalg.outer")
    for x in (x1, x2):
        if len(get_aval(x).shape) != 1:
            raise SquareMatrixError("funcdiff.numpy.linalg.outer needs 1-D vectors, got "
                                    f"shape {get_aval(x).shape}")
    return fnp.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors (numpy.linalg.cross).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.cross(np.array([1., 0., 0.]), np.array([0., 1., 0.]))
    array([0., 0., 1.])
    """
    return fnp.cross(x1, x2, axis=axis)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of vectors along ``axis``, broadcasting the rest (numpy.linalg.vecdot).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.vecdot(np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    """
    return fnp.sum(fnp.multiply(x1, x2), axis=axis)


def matmul(x1, x2, /):
    """Matrix product with broadcasting (numpy.linalg.matmul; same as ``fnp.matmul``).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.matmul(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    return fnp.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """Tensor contraction (numpy.linalg.tensordot; same as ``fnp.tensordot``).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.tensordot(np.ones((2, 3)), np.ones((2, 3))))
    6.0
    """
    return fnp.tensordot(x1, x2, axes=axes)


__all__ = [
    "LinAlgError", "LinAlgArgumentError", "SquareMatrixError", "EighResult", "SVDResult",
    "QRResult", "SlogdetResult", "inv", "solve", "det", "slogdet", "cholesky", "eigh",
    "eigvalsh", "svd", "svdvals", "qr", "pinv", "matrix_rank", "lstsq", "norm", "vector_norm",
    "matrix_norm", "cond", "matrix_power", "multi_dot", "tensorsolve", "tensorinv",
    "matrix_transpose", "diagonal", "trace", "outer", "cross", "vecdot", "matmul", "tensordot",
]
