"""Linear-algebra primitives: factorizations, solves, determinants and the matrix exponential.

Every primitive works on stacks of matrices: the last two axes are the matrix,
all leading axes are a batch, exactly as in ``numpy.linalg``. So each batch
rule only moves the vmapped axis to the front (a solve with an unbatched
matrix folds the batch into the right-hand side's columns instead). Impls call
LAPACK through ``numpy.linalg``; LU, which numpy lacks, is LAPACK's blocked
partial-pivoting algorithm written in numpy here. numpy has no triangular
solver either: ``triangular_solve`` runs LAPACK's general solve on the masked
triangle (O(n³) rather than O(n²) flops, same results).

The jvp rules are the standard matrix-calculus results, written with funcdiff
operations (``dot_general``, ``triangular_solve``, ``solve``, elementwise
masks) so that they are linear in the tangents (reverse mode transposes them)
and differentiable again (second order comes for free). ``cholesky`` and
``eigh`` read the symmetric part ``(a + aᵀ)/2`` of their input (equal to ``a``
for symmetric input), so their derivatives are symmetric too. ``solve`` and
``triangular_solve`` are linear in the right-hand side, with transposes that
solve with the transposed matrix; ``expm_frechet`` (the Fréchet derivative of
the matrix exponential) is linear in its direction ``e``.

Numerical failures (a matrix that is not positive definite, an exactly
singular one) raise ``LinAlgError``, a funcdiff error that is also a
``numpy.linalg.LinAlgError``; derivatives that need an inverse raise it too
rather than returning NaN. The derivatives of eigenvectors and singular
vectors divide by eigenvalue (singular-value) gaps: they are exact for
distinct values and infinite for exactly repeated ones (see the docstrings of
``funcdiff.numpy.linalg.eigh`` and ``svd``).
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, ShapedArray, Zero, get_aval, tangent_aval
from funcdiff.errors import DifferentiationError, DTypeError, FunctionalDiffError, ShapeError
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, reductions, structural
from funcdiff.primitives.cards import checked_impl, nbytes
from funcdiff.primitives.dot import dot_general


class LinAlgError(FunctionalDiffError, np.linalg.LinAlgError):
    """A matrix is numerically unsuitable: not positive definite, singular, no convergence.

    Also a ``numpy.linalg.LinAlgError`` (hence a ``ValueError``), so code written
    against numpy's exceptions keeps working.
    """


class SquareMatrixError(ShapeError, LinAlgError):
    """A function that needs square matrices (or matrices at all) got another shape."""


# ---------------------------------------------------------------------------
# Shared helpers: checks, and matrix operations in funcdiff ops for the rules

_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def check_matrix(name: str, aval: ShapedArray, square: bool = True) -> None:
    """Raise the errors of ``name`` for a non-float or non-(square-)matrix operand."""
    if aval.dtype not in _REAL:
        raise DTypeError(
            f"{name} needs float32 or float64 matrices, but got {aval.str_short()}. Convert "
            "integers with astype(float); float16 and complex matrices are not supported by "
            "funcdiff's linear algebra (numpy's linalg rejects float16 as well).")
    if aval.ndim < 2:
        raise SquareMatrixError(
            f"{name} needs an array of at least 2 dimensions (a matrix, or a stack of them "
            f"in the leading axes), but got shape {aval.shape}.")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise SquareMatrixError(
            f"{name} needs square matrices in the last two axes, but got shape {aval.shape} "
            f"({aval.shape[-2]} x {aval.shape[-1]}).")


def _check_rhs(name: str, a: ShapedArray, b: ShapedArray, left_side: bool = True) -> None:
    check_matrix(name, a)
    check_matrix(name, b, square=False)
    if a.dtype != b.dtype or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(
            f"the primitive {name} needs a matrix and a right-hand side of one dtype with "
            f"equal leading (batch) axes, but got {a.str_short()} and {b.str_short()}. "
            "funcdiff.numpy.linalg broadcasts and promotes them for you.")
    n, m = a.shape[-1], b.shape[-2 if left_side else -1]
    if n != m:
        side = "rows" if left_side else "columns"
        raise ShapeError(f"the primitive {name} needs a right-hand side with {n} {side} for a "
                         f"{n} x {n} matrix, but got {b.str_short()}.")


def _numerical(name: str, fn, abstract_eval, message: str):
    """An impl calling ``fn``; numpy's LinAlgError becomes ours (after the shape checks)."""
    def impl(*args, **params):
        try:
            return fn(*[np.asarray(a) for a in args], **params)
        except np.linalg.LinAlgError as e:
            if isinstance(e, FunctionalDiffError):
                raise
            abstract_eval(*[get_aval(a) for a in args], **params)
            raise LinAlgError(f"{name}: {message} (numpy: {e}).") from None
    impl.__name__ = f"{name}_impl"
    return checked_impl(impl, abstract_eval)


_SINGULAR = ("the matrix (or one matrix of the stack) is exactly singular, so it has no "
             "inverse. Check the input's rank; regularise it (add a small multiple of the "
             "identity) or use pinv / lstsq for rank-deficient systems")


def _const(x, value):
    return np.asarray(value, get_aval(x).dtype)


def _mT(x):
    """Transpose of the last two axes."""
    nd = get_aval(x).ndim
    return structural.transpose(x, permutation=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _mm(x, y):
    """Matrix product of stacks with equal leading axes: one batched ``dot_general``."""
    nd = get_aval(x).ndim
    batch = tuple(range(nd - 2))
    return dot_general(x, y, dimension_numbers=(((nd - 1,), (nd - 2,)), (batch, batch)))


def _sym(x):
    return ew.mul(ew.add(x, _mT(x)), _const(x, 0.5))


def _diag(x):
    """The diagonal ``(..., n)`` of square matrices: a strided slice of the flattened pair."""
    shape = get_aval(x).shape
    lead, n = shape[:-2], shape[-1]
    flat = structural.reshape(x, new_sizes=lead + (n * n,))
    return structural.slice(flat, start_indices=(0,) * (len(lead) + 1),
                            limit_indices=lead + (n * n,),
                            strides=(1,) * len(lead) + (n + 1,))


def _trace(x):
    d = _diag(x)
    return reductions.reduce_sum(d, axes=(get_aval(d).ndim - 1,))


def _row(v):
    return structural.expand_dims(v, dimensions=(-2,))


def _col(v):
    return structural.expand_dims(v, dimensions=(-1,))


def _mask(x, shape, k, lower):
    """``x`` times the constant triangle mask of ``shape`` (diagonal offset ``k``)."""
    ones = np.ones(shape, get_aval(x).dtype)
    return ew.mul(x, np.tril(ones, k) if lower else np.triu(ones, k))


def _cols(x, start, stop):
    shape = get_aval(x).shape
    return structural.slice(x, start_indices=(0,) * (len(shape) - 1) + (start,),
                            limit_indices=shape[:-1] + (stop,))


def _rows(x, stop):
    shape = get_aval(x).shape
    return structural.slice(x, start_indices=(0,) * len(shape),
                            limit_indices=shape[:-2] + (stop, shape[-1]))


def _batch_size(vals, dims):
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def _to_front(x, bdim, size):
    if bdim is None:
        shape = get_aval(x).shape
        return structural.broadcast_in_dim(x, shape=(size,) + shape,
                                           broadcast_dimensions=tuple(range(1, len(shape) + 1)))
    return structural.moveaxis(x, bdim, 0)


def _leading_batch(prim: Primitive):
    """Batch rule of a primitive batched over leading axes: the batch axis goes first."""
    def rule(vals, dims, **params):
        size = _batch_size(vals, dims)
        out = prim.bind(*[_to_front(v, d, size) for v, d in zip(vals, dims)], **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


def _solve_batch(prim: Primitive):
    """Batch rule of ``op(a, b)`` solves: an unbatched ``a`` is never copied per member;
    the batch joins b's independent columns (left side) or rows (right side)."""
    leading = _leading_batch(prim)

    def rule(vals, dims, **params):
        (a, b), (da, db) = vals, dims
        if da is not None:
            return leading(vals, dims, **params)
        left = params.get("left_side", True)
        b = structural.moveaxis(b, db, -1 if left else -3)
        shape = get_aval(b).shape
        folded = (shape[:-2] + (shape[-2] * shape[-1],) if left
                  else shape[:-3] + (shape[-3] * shape[-2], shape[-1]))
        x = prim.bind(a, structural.reshape(b, new_sizes=folded), **params)
        return structural.reshape(x, new_sizes=shape), len(shape) - (1 if left else 3)
    return rule


def _matrices(aval) -> int:
    return int(np.prod(aval.shape[:-2], dtype=np.int64))


def _cost(flops_per_matrix):
    """Cost rule: ``flops_per_matrix(m, n, *other_avals)`` per matrix of the first operand."""
    def cost(*avals, **params):
        a = avals[0]
        m, n = a.shape[-2:]
        flops = _matrices(a) * int(flops_per_matrix(m, n, *avals[1:]))
        return {"flops": flops, "bytes": 2 * sum(nbytes(x) for x in avals)}
    return cost


def _zero_like(x):
    return Zero(tangent_aval(get_aval(x)))


# --- cholesky -----------------------------------------------------------------------

cholesky_p = Primitive("cholesky")


def _cholesky_abstract_eval(a):
    check_matrix("cholesky", a)
    return a


def _cholesky_jvp(primals, tangents):
    # L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ), Φ = lower triangle with the diagonal halved; Ȧ symmetrised.
    (a,), (a_dot,) = primals, tangents
    l = cholesky_p.bind(a)
    n = get_aval(a).shape[-1]
    tmp = triangular_solve(l, _sym(a_dot), left_side=True, lower=True)
    x = triangular_solve(l, tmp, left_side=False, lower=True, transpose_a=True)
    phi = ew.mul(x, (np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)).astype(get_aval(x).dtype))
    return l, _mm(l, phi)


cholesky_p.abstract_eval = _cholesky_abstract_eval
cholesky_p.impl = _numerical(
    "cholesky", lambda a: np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) * 0.5),
    _cholesky_abstract_eval,
    "the matrix (or one matrix of the stack) is not symmetric positive definite, so it has "
    "no Cholesky factor. Check that it is symmetric with positive eigenvalues; for a "
    "positive semi-definite matrix add a small multiple of the identity (jitter)")
cholesky_p.jvp = _cholesky_jvp
cholesky_p.batch = _leading_batch(cholesky_p)
cholesky_p.cost = _cost(lambda m, n: n ** 3 // 3 + n * n)


def cholesky(a):
    """Lower Cholesky factor ``L`` of the symmetric part of ``a`` (``L Lᵀ = (a + aᵀ)/2``).

    >>> cholesky(np.array([[4., 2.], [2., 5.]]))
    array([[2., 0.],
           [1., 2.]])
    """
    return cholesky_p.bind(a)


# --- triangular_solve -------------------------------------------------------------

triangular_solve_p = Primitive("triangular_solve")


def _triangle(a, lower, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    return t


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    # numpy has no triangular solver: LAPACK's general solve on the masked triangle
    # (O(n³) instead of O(n²); exact singularity is still detected).
    t = _triangle(a, lower, unit_diagonal)
    if transpose_a == left_side:  # solve tᵀ x = b, or x t = b  <=>  tᵀ xᵀ = bᵀ
        t = np.swapaxes(t, -1, -2)
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(t, np.swapaxes(b, -1, -2)), -1, -2)


def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    _check_rhs("triangular_solve", a, b, left_side)
    return b


def _op(x, transpose_a):
    return _mT(x) if transpose_a else x


def _triangular_solve_jvp(primals, tangents, **params):
    # x = op(A)⁻¹ b: ẋ = op(A)⁻¹ (ḃ − op(Ȧ) x) (left side), x = b op(A)⁻¹:
    # ẋ = (ḃ − x op(Ȧ)) op(A)⁻¹, with Ȧ restricted to the triangle the solve reads.
    (a, b), (a_dot, b_dot) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    rhs = None if type(b_dot) is Zero else b_dot
    if type(a_dot) is not Zero:
        n = get_aval(a).shape[-1]
        lower = params["lower"]
        k = (-1 if lower else 1) if params["unit_diagonal"] else 0
        a_dot = _mask(a_dot, (n, n), k, lower)
        a_dot = _op(a_dot, params["transpose_a"])
        term = _mm(a_dot, x) if params["left_side"] else _mm(x, a_dot)
        rhs = ew.neg(term) if rhs is None else ew.sub(rhs, term)
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    from funcdiff.interpreters.transpose import is_undefined
    if is_undefined(a):
        raise DifferentiationError("triangular_solve is linear only in its right-hand side b; "
                                   "it cannot be transposed with respect to the matrix a")
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                          transpose_a=not transpose_a,
                                          unit_diagonal=unit_diagonal)]


triangular_solve_p.abstract_eval = _triangular_solve_abstract_eval
triangular_solve_p.impl = _numerical(
    "triangular_solve (used by solve_triangular, cho_solve, lu_solve and the derivatives of "
    "cholesky, qr and lu)", _triangular_solve_impl, _triangular_solve_abstract_eval,
    _SINGULAR.replace("singular", "singular (a zero on the diagonal)", 1))
triangular_solve_p.jvp = _triangular_solve_jvp
triangular_solve_p.transpose = _triangular_solve_transpose
triangular_solve_p.batch = _solve_batch(triangular_solve_p)
triangular_solve_p.cost = _cost(lambda m, n, b: n * n * (b.shape[-1] if b.shape[-2] == n
                                                          else b.shape[-2]))


def triangular_solve(a, b, *, left_side=True, lower=False, transpose_a=False,
                     unit_diagonal=False):
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` with triangular ``a``.

    Only the lower (``lower=True``) or upper triangle of ``a`` is read; with
    ``unit_diagonal`` its diagonal is taken to be ones. ``op(a)`` is ``aᵀ`` when
    ``transpose_a``. ``a`` is ``(..., n, n)`` and ``b`` is ``(..., n, k)``
    (``(..., k, n)`` on the right side) with the same leading axes.

    >>> triangular_solve(np.array([[2., 0.], [1., 1.]]), np.array([[2.], [3.]]), lower=True)
    array([[1.],
           [2.]])
    """
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   unit_diagonal=bool(unit_diagonal))


# --- solve ---------------------------------------------------------------------------

solve_p = Primitive("solve")


def _solve_abstract_eval(a, b):
    _check_rhs("solve", a, b)
    return b


def _solve_jvp(primals, tangents):
    (a, b), (a_dot, b_dot) = primals, tangents
    x = solve_p.bind(a, b)
    rhs = None if type(b_dot) is Zero else b_dot
    if type(a_dot) is not Zero:
        term = _mm(a_dot, x)
        rhs = ew.neg(term) if rhs is None else ew.sub(rhs, term)
    return x, solve_p.bind(a, rhs)


def _solve_transpose(ct, a, b):
    from funcdiff.interpreters.transpose import is_undefined
    if is_undefined(a):
        raise DifferentiationError("solve is linear only in its right-hand side b; it cannot "
                                   "be transposed with respect to the matrix a")
    return [None, solve_p.bind(_mT(a), ct)]


solve_p.abstract_eval = _solve_abstract_eval
solve_p.impl = _numerical(
    "solve (used by linalg.solve, linalg.inv and the derivatives of det and slogdet)",
    np.linalg.solve, _solve_abstract_eval, _SINGULAR)
solve_p.jvp = _solve_jvp
solve_p.transpose = _solve_transpose
solve_p.batch = _solve_batch(solve_p)
solve_p.cost = _cost(lambda m, n, b: 2 * n ** 3 // 3 + 2 * n * n * b.shape[-1])


def solve(a, b):
    """Solve ``a x = b`` for square ``a`` ``(..., n, n)`` and ``b`` ``(..., n, k)`` (LU, LAPACK).

    >>> solve(np.array([[2., 0.], [0., 4.]]), np.array([[2.], [2.]]))
    array([[1. ],
           [0.5]])
    """
    return solve_p.bind(a, b)


# --- det and slogdet ----------------------------------------------------------------

det_p = Primitive("det")


def _det_abstract_eval(a):
    check_matrix("det", a)
    return ShapedArray(a.shape[:-2], a.dtype)


def _det_jvp(primals, tangents):
    # d det(A) = det(A) tr(A⁻¹ Ȧ); at a singular A the solve raises LinAlgError.
    (a,), (a_dot,) = primals, tangents
    y = det_p.bind(a)
    return y, ew.mul(y, _trace(solve_p.bind(a, a_dot)))


det_p.abstract_eval = _det_abstract_eval
det_p.impl = checked_impl(lambda a: np.linalg.det(np.asarray(a)), _det_abstract_eval)
det_p.jvp = _det_jvp
det_p.batch = _leading_batch(det_p)
det_p.cost = _cost(lambda m, n: 2 * n ** 3 // 3)

slogdet_p = Primitive("slogdet", multiple_results=True)


def _slogdet_abstract_eval(a):
    check_matrix("slogdet", a)
    out = ShapedArray(a.shape[:-2], a.dtype)
    return [out, out]


def _slogdet_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    sign, logabsdet = slogdet_p.bind(a)
    return [sign, logabsdet], [_zero_like(sign), _trace(solve_p.bind(a, a_dot))]


slogdet_p.abstract_eval = _slogdet_abstract_eval
slogdet_p.impl = checked_impl(lambda a: list(np.linalg.slogdet(np.asarray(a))),
                              _slogdet_abstract_eval)
slogdet_p.jvp = _slogdet_jvp
slogdet_p.batch = _leading_batch(slogdet_p)
slogdet_p.cost = _cost(lambda m, n: 2 * n ** 3 // 3)


# --- eigh ----------------------------------------------------------------------------

eigh_p = Primitive("eigh", multiple_results=True)


def _eigh_impl(a, *, compute_vectors):
    sym = (a + np.swapaxes(a, -1, -2)) * 0.5
    if compute_vectors:
        return list(np.linalg.eigh(sym))
    return [np.linalg.eigvalsh(sym)]


def _eigh_abstract_eval(a, *, compute_vectors):
    check_matrix("eigh", a)
    w = ShapedArray(a.shape[:-1], a.dtype)
    return [w, a] if compute_vectors else [w]


def _eigh_jvp(primals, tangents, *, compute_vectors):
    # With M = Vᵀ Ȧ V: λ̇ = diag(M), V̇ = V (F ∘ M), F_ij = 1/(λ_j − λ_i) off the diagonal.
    (a,), (a_dot,) = primals, tangents
    w, v = eigh_p.bind(a, compute_vectors=True)
    m = _mm(_mT(v), _mm(_sym(a_dot), v))
    w_dot = _diag(m)
    if not compute_vectors:
        return [w], [w_dot]
    n = get_aval(a).shape[-1]
    eye = np.eye(n, dtype=get_aval(w).dtype)
    gaps = ew.add(ew.sub(_row(w), _col(w)), eye)
    f = ew.mul(ew.div(_const(w, 1), gaps), 1 - eye)
    return [w, v], [w_dot, _mm(v, ew.mul(f, m))]


eigh_p.abstract_eval = _eigh_abstract_eval
eigh_p.impl = _numerical("eigh", _eigh_impl, _eigh_abstract_eval,
                         "the eigenvalue iteration did not converge (is the input finite?)")
eigh_p.jvp = _eigh_jvp
eigh_p.batch = _leading_batch(eigh_p)
eigh_p.cost = _cost(lambda m, n, compute_vectors=True: 9 * n ** 3)


# --- svd -----------------------------------------------------------------------------

svd_p = Primitive("svd", multiple_results=True)


def _svd_impl(a, *, compute_uv):
    if compute_uv:
        return list(np.linalg.svd(a, full_matrices=False))
    return [np.linalg.svd(a, compute_uv=False)]


def _svd_abstract_eval(a, *, compute_uv):
    check_matrix("svd", a, square=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    s = ShapedArray(a.shape[:-2] + (k,), a.dtype)
    if not compute_uv:
        return [s]
    return [ShapedArray(a.shape[:-2] + (m, k), a.dtype), s,
            ShapedArray(a.shape[:-2] + (k, n), a.dtype)]


def _svd_jvp(primals, tangents, *, compute_uv):
    # dS = Uᵀ Ȧ V: ṡ = diag(dS); U̇ = U (F ∘ (dS S + S dSᵀ)) and V̇ = V (F ∘ (S dS + dSᵀ S))
    # with F_ij = 1/(s_j² − s_i²), plus the components outside the range of U (V)
    # when the matrix is tall (wide).
    (a,), (a_dot,) = primals, tangents
    u, s, vt = svd_p.bind(a, compute_uv=True)
    v, ut = _mT(vt), _mT(u)
    ds = _mm(ut, _mm(a_dot, v))
    s_dot = _diag(ds)
    if not compute_uv:
        return [s], [s_dot]
    m, n = get_aval(a).shape[-2:]
    eye = np.eye(min(m, n), dtype=get_aval(s).dtype)
    s_row, s_col = _row(s), _col(s)
    gaps = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))
    f = ew.sub(ew.div(_const(s, 1), ew.add(gaps, eye)), eye)
    dss, sds = ew.mul(ds, s_row), ew.mul(s_col, ds)
    u_dot = _mm(u, ew.mul(f, ew.add(dss, _mT(dss))))
    v_dot = _mm(v, ew.mul(f, ew.add(sds, _mT(sds))))
    if m > n:
        dav = _mm(a_dot, v)
        u_dot = ew.add(u_dot, ew.div(ew.sub(dav, _mm(u, _mm(ut, dav))), s_row))
    if n > m:
        datu = _mm(_mT(a_dot), u)
        v_dot = ew.add(v_dot, ew.div(ew.sub(datu, _mm(v, _mm(vt, datu))), s_row))
    return [u, s, vt], [u_dot, s_dot, _mT(v_dot)]


def _svd_cost(a, *, compute_uv):
    m, n = a.shape[-2:]
    big, small = max(m, n), min(m, n)
    flops = 4 * big * small * small + (22 * small ** 3 if compute_uv else 0)
    return {"flops": _matrices(a) * flops, "bytes": 4 * nbytes(a)}


svd_p.abstract_eval = _svd_abstract_eval
svd_p.impl = _numerical("svd", _svd_impl, _svd_abstract_eval,
                        "the SVD iteration did not converge (is the input finite?)")
svd_p.jvp = _svd_jvp
svd_p.batch = _leading_batch(svd_p)
svd_p.cost = _svd_cost


# --- qr ------------------------------------------------------------------------------

qr_p = Primitive("qr", multiple_results=True)


def _qr_abstract_eval(a):
    check_matrix("qr", a, square=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    return [ShapedArray(a.shape[:-2] + (m, k), a.dtype),
            ShapedArray(a.shape[:-2] + (k, n), a.dtype)]


def _qr_square_or_tall_jvp(q, r, a_dot):
    # A = QR, m >= n (see j-towns' note on the QR derivative): with C = Qᵀ Ȧ R⁻¹ and
    # Ω = tril(C, -1) − tril(C, -1)ᵀ: Q̇ = Q (Ω − C) + Ȧ R⁻¹, Ṙ = (C − Ω) R.
    n = get_aval(r).shape[-1]
    da_rinv = triangular_solve(r, a_dot, left_side=False, lower=False)
    c = _mm(_mT(q), da_rinv)
    low = _mask(c, (n, n), -1, lower=True)
    omega = ew.sub(low, _mT(low))
    q_dot = ew.add(_mm(q, ew.sub(omega, c)), da_rinv)
    return q_dot, _mm(ew.sub(c, omega), r)


def _qr_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    q, r = qr_p.bind(a)
    m, n = get_aval(a).shape[-2:]
    if m >= n:
        return [q, r], list(_qr_square_or_tall_jvp(q, r, a_dot))
    # Wide A = [X | Y]: Q R₁ = X and R = [R₁ | Qᵀ Y], so Ṙ₂ = Q̇ᵀ Y + Qᵀ Ẏ.
    q_dot, r1_dot = _qr_square_or_tall_jvp(q, _cols(r, 0, m), _cols(a_dot, 0, m))
    y, y_dot = _cols(a, m, n), _cols(a_dot, m, n)
    r2_dot = ew.add(_mm(_mT(q_dot), y), _mm(_mT(q), y_dot))
    return [q, r], [q_dot, structural.concatenate(r1_dot, r2_dot,
                                                  dimension=get_aval(a).ndim - 1)]


def _qr_cost(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    return {"flops": _matrices(a) * 4 * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3),
            "bytes": 3 * nbytes(a)}


qr_p.abstract_eval = _qr_abstract_eval
qr_p.impl = checked_impl(lambda a: list(np.linalg.qr(np.asarray(a), mode="reduced")),
                         _qr_abstract_eval)
qr_p.jvp = _qr_jvp
qr_p.batch = _leading_batch(qr_p)
qr_p.cost = _qr_cost


# --- lu and lu_pivots_to_permutation -----------------------------------------------

lu_p = Primitive("lu", multiple_results=True)


_LU_BLOCK = 32


def _lu_impl(a):
    """LU with partial pivoting, ``a[perm] = L U`` (L unit lower, packed with U).

    numpy has no LU. This is LAPACK's blocked right-looking algorithm, all
    matrices of the stack at once: each panel of ``_LU_BLOCK`` columns is
    eliminated column by column (vectorised row swaps and rank-1 updates),
    then the rest of the matrix is updated with one triangular solve and one
    matrix product (BLAS). An exactly zero pivot column is skipped, as LAPACK does.
    """
    a = np.asarray(a)
    *lead, m, n = a.shape
    k = min(m, n)
    lu = np.array(a, copy=True).reshape(-1, m, n)
    count = lu.shape[0]
    pivots = np.zeros((count, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (count, 1))
    members = np.arange(count)
    for j0 in range(0, k, _LU_BLOCK):
        j1 = min(j0 + _LU_BLOCK, k)
        for j in range(j0, j1):
            p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
            pivots[:, j] = p
            lu[members, j], lu[members, p] = lu[members, p], lu[members, j]
            perm[members, j], perm[members, p] = perm[members, p], perm[members, j]
            pivot = lu[:, j, j:j + 1]
            lu[:, j + 1:, j] /= np.where(pivot == 0, 1, pivot)
            lu[:, j + 1:, j + 1:j1] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:j1]
        if j1 < n:  # U12 = L11⁻¹ A12, then A22 -= L21 U12
            l11 = np.tril(lu[:, j0:j1, j0:j1], -1) + np.eye(j1 - j0, dtype=lu.dtype)
            lu[:, j0:j1, j1:] = np.linalg.solve(l11, lu[:, j0:j1, j1:])
            lu[:, j1:, j1:] -= lu[:, j1:, j0:j1] @ lu[:, j0:j1, j1:]
    return [lu.reshape(a.shape), pivots.reshape(tuple(lead) + (k,)),
            perm.reshape(tuple(lead) + (m,))]


def _lu_abstract_eval(a):
    check_matrix("lu", a, square=False)
    m, n = a.shape[-2:]
    return [a, ShapedArray(a.shape[:-2] + (min(m, n),), np.dtype(np.int32)),
            ShapedArray(a.shape[:-1], np.dtype(np.int32))]


def _lu_jvp(primals, tangents):
    # P A = L U: with X = L⁻¹ P Ȧ U⁻¹, L̇ = L tril(X, -1) and U̇ = triu(X) U. Rectangular
    # inputs pad L to m x m and U to n x n with identity blocks.
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    nd = get_aval(a).ndim
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    dtype = get_aval(a).dtype
    zero = np.zeros((), dtype)
    pa_dot = indexing.take_along_axis(a_dot, structural.expand_dims(perm, dimensions=(-1,)),
                                      axis=nd - 2)
    l = _mask(_cols(lu, 0, k), (m, k), -1, lower=True)
    if m > k:
        l = structural.pad(l, zero, padding_config=((0, 0, 0),) * (nd - 1) + ((0, m - k, 0),))
    l = ew.add(l, np.eye(m, dtype=dtype))
    u = _mask(_rows(lu, k), (k, n), 0, lower=False)
    if n > k:
        u = structural.pad(u, zero, padding_config=((0, 0, 0),) * (nd - 2)
                           + ((0, n - k, 0), (0, 0, 0)))
        u = ew.add(u, np.diag(np.r_[np.zeros(k), np.ones(n - k)]).astype(dtype))
    la = triangular_solve(l, pa_dot, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(u, la, left_side=False, lower=False)
    lu_dot = ew.add(_mm(l, _mask(x, (m, n), -1, lower=True)),
                    _mm(_mask(x, (m, n), 0, lower=False), u))
    return [lu, pivots, perm], [lu_dot, _zero_like(pivots), _zero_like(perm)]


def _lu_cost(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    return {"flops": _matrices(a) * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3),
            "bytes": 2 * nbytes(a)}


lu_p.abstract_eval = _lu_abstract_eval
lu_p.impl = checked_impl(_lu_impl, _lu_abstract_eval)
lu_p.jvp = _lu_jvp
lu_p.batch = _leading_batch(lu_p)
lu_p.cost = _lu_cost

lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")


def _pivots_impl(pivots, *, permutation_size):
    pivots = np.asarray(pivots)
    if pivots.ndim < 1 or pivots.dtype.kind not in "iu" or pivots.shape[-1] > permutation_size:
        raise ValueError("bad pivots")  # checked_impl reports the shape rule's error
    lead, k = pivots.shape[:-1], pivots.shape[-1]
    flat = pivots.reshape(-1, k)
    perm = np.tile(np.arange(permutation_size, dtype=np.int32), (flat.shape[0], 1))
    members = np.arange(flat.shape[0])
    for j in range(k):
        p = flat[:, j]
        perm[members, j], perm[members, p] = perm[members, p], perm[members, j].copy()
    return perm.reshape(lead + (permutation_size,))


def _pivots_abstract_eval(pivots, *, permutation_size):
    if pivots.ndim < 1 or pivots.dtype.kind not in "iu" or pivots.shape[-1] > permutation_size:
        raise ShapeError(
            f"lu_pivots_to_permutation needs integer pivots (..., k) with k <= "
            f"permutation_size={permutation_size}, but got {pivots.str_short()}.")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype(np.int32))


lu_pivots_to_permutation_p.abstract_eval = _pivots_abstract_eval
lu_pivots_to_permutation_p.impl = checked_impl(_pivots_impl, _pivots_abstract_eval)
lu_pivots_to_permutation_p.nondifferentiable = True
lu_pivots_to_permutation_p.batch = _leading_batch(lu_pivots_to_permutation_p)
lu_pivots_to_permutation_p.cost = lambda p, *, permutation_size: {
    "flops": 0, "bytes": nbytes(p) + 4 * (p.size // max(p.shape[-1], 1)) * permutation_size}


# --- pinv ----------------------------------------------------------------------------

pinv_p = Primitive("pinv")


def _pinv_abstract_eval(a, *, rtol):
    check_matrix("pinv", a, square=False)
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


def _pinv_jvp(primals, tangents, *, rtol):
    # Golub & Pereyra: dA⁺ = −A⁺ Ȧ A⁺ + A⁺A⁺ᵀ Ȧᵀ (I − A A⁺) + (I − A⁺A) Ȧᵀ A⁺ᵀ A⁺,
    # the derivative along perturbations that keep the rank (every one, at full rank).
    (a,), (a_dot,) = primals, tangents
    p = pinv_p.bind(a, rtol=rtol)
    m, n = get_aval(a).shape[-2:]
    dtype = get_aval(a).dtype
    pt, at_dot = _mT(p), _mT(a_dot)
    first = ew.neg(_mm(p, _mm(a_dot, p)))
    second = _mm(_mm(p, pt), _mm(at_dot, ew.sub(np.eye(m, dtype=dtype), _mm(a, p))))
    third = _mm(ew.sub(np.eye(n, dtype=dtype), _mm(p, a)), _mm(at_dot, _mm(pt, p)))
    return p, ew.add(ew.add(first, second), third)


pinv_p.abstract_eval = _pinv_abstract_eval
pinv_p.impl = _numerical("pinv", lambda a, *, rtol: np.linalg.pinv(a, rcond=rtol),
                         _pinv_abstract_eval, "the SVD did not converge (is the input finite?)")
pinv_p.jvp = _pinv_jvp
pinv_p.batch = _leading_batch(pinv_p)
pinv_p.cost = lambda a, *, rtol: _svd_cost(a, compute_uv=True)


# --- expm and its Fréchet derivative ------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# Padé degrees and the 1-norm bounds up to which each is accurate to unit roundoff.
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
_THETA = {np.dtype(np.float64): ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
                                 (7, 9.504178996162932e-1), (9, 2.097847961257068e0),
                                 (13, 5.371920351148152e0)),
          np.dtype(np.float32): ((3, 4.258730016922831e-1), (5, 1.880152677804762e0),
                                 (7, 3.925724783138660e0))}


def _pade(a, degree):
    """Numerator + denominator pieces ``(U, V)`` of the Padé approximant of ``exp(a)``."""
    b = _PADE[degree]
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    if degree == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
        return u, v
    powers = [eye, a2]
    while len(powers) <= degree // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum(b[2 * i + 1] * powers[i] for i in range(degree // 2 + 1))
    v = sum(b[2 * i] * powers[i] for i in range(degree // 2 + 1))
    return u, v


def _expm_impl(a):
    a = np.asarray(a)
    if a.dtype not in _REAL or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("bad input")  # checked_impl reports the shape rule's error
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(flat)
    norms = np.abs(flat).sum(axis=-2).max(axis=-1) if flat.size else np.zeros(len(flat))
    thetas = _THETA[a.dtype]
    degrees = np.full(len(flat), thetas[-1][0])
    squarings = np.zeros(len(flat), np.int64)
    for degree, theta in reversed(thetas):
        degrees[norms <= theta] = degree
    big = norms > thetas[-1][1]
    squarings[big] = np.ceil(np.log2(norms[big] / thetas[-1][1])).astype(np.int64)
    # Matrices sharing (degree, squarings) are computed together.
    for degree, s in set(zip(degrees.tolist(), squarings.tolist())):
        members = (degrees == degree) & (squarings == s)
        x = flat[members] / a.dtype.type(2.0 ** s)
        u, v = _pade(x, degree)
        r = np.linalg.solve(v - u, v + u)
        for _ in range(s):
            r = r @ r
        out[members] = r
    return out.reshape(a.shape)


def _expm_abstract_eval(a):
    check_matrix("expm", a)
    return a


def _block(a, e):
    """``[[a, e], [0, a]]`` in funcdiff ops (its exponential holds L(a, e) top right)."""
    nd = get_aval(a).ndim
    zeros = ew.mul(a, _const(a, 0))
    top = structural.concatenate(a, e, dimension=nd - 1)
    bottom = structural.concatenate(zeros, a, dimension=nd - 1)
    return structural.concatenate(top, bottom, dimension=nd - 2)


def _top_right(x, n):
    shape = get_aval(x).shape
    return structural.slice(x, start_indices=(0,) * (len(shape) - 2) + (0, n),
                            limit_indices=shape[:-2] + (n, 2 * n))


expm_p = Primitive("expm")
expm_p.abstract_eval = _expm_abstract_eval
expm_p.impl = checked_impl(_expm_impl, _expm_abstract_eval)
expm_p.jvp = lambda primals, tangents: (expm_p.bind(primals[0]),
                                        expm_frechet_p.bind(primals[0], tangents[0]))
expm_p.batch = _leading_batch(expm_p)
expm_p.cost = _cost(lambda m, n: 2 * n ** 3 * 7)  # Padé 13 (+ data-dependent squarings)

expm_frechet_p = Primitive("expm_frechet")


def _expm_frechet_impl(a, e):
    a, e = np.asarray(a), np.asarray(e)
    if a.shape != e.shape or a.dtype != e.dtype:
        raise ValueError("mismatched operands")  # checked_impl reports the shape rule's error
    n = a.shape[-1]
    block = np.zeros(a.shape[:-2] + (2 * n, 2 * n), a.dtype)
    block[..., :n, :n] = block[..., n:, n:] = a
    block[..., :n, n:] = e
    return _expm_impl(block)[..., :n, n:]


def _expm_frechet_abstract_eval(a, e):
    check_matrix("expm_frechet", a)
    if e != a:
        raise ShapeError(f"expm_frechet needs a direction e shaped like the matrix a, but got "
                         f"{a.str_short()} and {e.str_short()}.")
    return a


def _expm_frechet_jvp(primals, tangents):
    # L(A, E) is the top-right block of exp([[A, E], [0, A]]); its derivative in A along
    # Ȧ is the same block of L([[A, E], [0, A]], [[Ȧ, 0], [0, Ȧ]]). Linear in Ė.
    (a, e), (a_dot, e_dot) = primals, tangents
    out = expm_frechet_p.bind(a, e)
    n = get_aval(a).shape[-1]
    terms = []
    if type(a_dot) is not Zero:
        both = _block(a_dot, ew.mul(a_dot, _const(a_dot, 0)))
        terms.append(_top_right(expm_frechet_p.bind(_block(a, e), both), n))
    if type(e_dot) is not Zero:
        terms.append(expm_frechet_p.bind(a, e_dot))
    return out, terms[0] if len(terms) == 1 else ew.add(*terms)


def _expm_frechet_transpose(ct, a, e):
    # ⟨C, L(A, E)⟩ = ⟨L(Aᵀ, C), E⟩ for real matrices.
    from funcdiff.interpreters.transpose import is_undefined
    if is_undefined(a):
        raise DifferentiationError("expm_frechet is linear only in its direction e; it "
                                   "cannot be transposed with respect to the matrix a")
    return [None, expm_frechet_p.bind(_mT(a), ct)]


expm_frechet_p.abstract_eval = _expm_frechet_abstract_eval
expm_frechet_p.impl = checked_impl(_expm_frechet_impl, _expm_frechet_abstract_eval)
expm_frechet_p.jvp = _expm_frechet_jvp
expm_frechet_p.transpose = _expm_frechet_transpose
expm_frechet_p.batch = _leading_batch(expm_frechet_p)
expm_frechet_p.cost = _cost(lambda m, n, e: 16 * n ** 3 * 7)


__all__ = ["LinAlgError", "SquareMatrixError", "check_matrix", "cholesky_p", "cholesky",
           "triangular_solve_p", "triangular_solve", "solve_p", "solve", "det_p", "slogdet_p",
           "eigh_p", "svd_p", "qr_p", "lu_p", "lu_pivots_to_permutation_p", "pinv_p",
           "expm_p", "expm_frechet_p"]
