"""Factorizations: ``cholesky``, ``eigh``, ``svd`` and ``qr``, and ``pinv`` through the SVD.

Each jvp rule is the textbook matrix-calculus derivative of its factorization,
built from ``dot_general``, ``triangular_solve`` and elementwise masks, so it
is linear in the tangent and can be differentiated again. Real and complex
matrices share one rule: ``mH`` (the conjugate transpose) is ``mT`` for real
ones. ``cholesky`` and ``eigh`` factor the Hermitian part ``(a + aᴴ)/2`` (the
symmetric part of a real matrix) and so have Hermitian derivatives. Eigenvector and singular-vector derivatives divide by the gaps
between eigenvalues (singular values): exact when they are distinct, infinite
when two coincide. ``pinv``'s derivative holds along rank-preserving
perturbations.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, ShapedArray, get_aval
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import structural
from funcdiff.primitives.cards import checked_impl, nbytes
from funcdiff import dtypes
from funcdiff.primitives.linalg_common import (as_dtype, check_matrix, col, cols, conj, const,
                                               cost, diag, is_complex, leading_batch, mask,
                                               matrices, mH, mm, numerical, operand, real_part, row,
                                               sym)
from funcdiff.primitives.linalg_solve import triangular_solve


# --- cholesky -----------------------------------------------------------------------

cholesky_p = Primitive("cholesky")


def _cholesky_abstract_eval(a):
    check_matrix("cholesky", a)
    return a


def _hermitian_part(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) * 0.5


def _cholesky_jvp(primals, tangents):
    # L̇ = L Φ(L⁻¹ Ȧ L⁻ᴴ), Φ = lower triangle with the (real) diagonal halved; Ȧ made
    # Hermitian. X L⁻ᴴ solves with conj(L) transposed.
    (a,), (a_dot,) = primals, tangents
    l = cholesky_p.bind(a)
    n = get_aval(a).shape[-1]
    tmp = triangular_solve(l, sym(a_dot), left_side=True, lower=True)
    x = triangular_solve(conj(l), tmp, left_side=False, lower=True, transpose_a=True)
    phi = ew.mul(x, (np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)).astype(get_aval(x).dtype))
    return l, mm(l, phi)


cholesky_p.abstract_eval = _cholesky_abstract_eval
cholesky_p.impl = numerical(
    "cholesky", lambda a: np.linalg.cholesky(_hermitian_part(a)),
    _cholesky_abstract_eval,
    "the matrix (or one matrix of the stack) is not symmetric (Hermitian) positive definite, "
    "so it has no Cholesky factor. Check that it is symmetric (Hermitian) with positive "
    "eigenvalues; for a "
    "positive semi-definite matrix add a small multiple of the identity (jitter)")
cholesky_p.jvp = _cholesky_jvp
cholesky_p.batch = leading_batch(cholesky_p)
cholesky_p.cost = cost(lambda m, n: n ** 3 // 3 + n * n)


def cholesky(a):
    """Lower Cholesky factor ``L`` of the Hermitian part of ``a`` (``L Lᴴ = (a + aᴴ)/2``).

    >>> cholesky(np.array([[4., 2.], [2., 5.]]))
    array([[2., 0.],
           [1., 2.]])
    """
    return cholesky_p.bind(a)


# --- eigh ----------------------------------------------------------------------------

eigh_p = Primitive("eigh", multiple_results=True)


def _eigh_impl(a, *, compute_vectors):
    sym = _hermitian_part(a)
    if compute_vectors:
        return list(np.linalg.eigh(sym))
    return [np.linalg.eigvalsh(sym)]


def _eigh_abstract_eval(a, *, compute_vectors):
    check_matrix("eigh", a)
    w = ShapedArray(a.shape[:-1], dtypes.real_dtype(a.dtype))  # real, even for complex a
    return [w, a] if compute_vectors else [w]


def _eigh_jvp(primals, tangents, *, compute_vectors):
    # With M = Vᴴ Ȧ V (Hermitian): λ̇ = diag(M) (real), V̇ = V (F ∘ M), F_ij = 1/(λ_j − λ_i)
    # off the diagonal. Vᴴ V̇ has a zero diagonal: the phases of complex eigenvectors are
    # held still, so derivatives of phase-invariant functions are exact.
    (a,), (a_dot,) = primals, tangents
    w, v = eigh_p.bind(a, compute_vectors=True)
    m = mm(mH(v), mm(sym(a_dot), v))
    w_dot = real_part(diag(m))
    if not compute_vectors:
        return [w], [w_dot]
    n = get_aval(a).shape[-1]
    eye = np.eye(n, dtype=get_aval(w).dtype)
    gaps = ew.add(ew.sub(row(w), col(w)), eye)
    f = ew.mul(ew.div(const(w, 1), gaps), 1 - eye)
    return [w, v], [w_dot, mm(v, ew.mul(as_dtype(f, get_aval(m).dtype), m))]


eigh_p.abstract_eval = _eigh_abstract_eval
eigh_p.impl = numerical("eigh", _eigh_impl, _eigh_abstract_eval,
                         "the eigenvalue iteration did not converge (is the input finite?)")
eigh_p.jvp = _eigh_jvp
eigh_p.batch = leading_batch(eigh_p)
eigh_p.cost = cost(lambda m, n, compute_vectors=True: 9 * n ** 3)


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
    s = ShapedArray(a.shape[:-2] + (k,), dtypes.real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    return [ShapedArray(a.shape[:-2] + (m, k), a.dtype), s,
            ShapedArray(a.shape[:-2] + (k, n), a.dtype)]


def _svd_jvp(primals, tangents, *, compute_uv):
    # dS = Uᴴ Ȧ V: ṡ = Re diag(dS); U̇ = U (F ∘ (dS S + S dSᴴ)) and V̇ = V (F ∘ (S dS + dSᴴ S))
    # with F_ij = 1/(s_j² − s_i²), plus the components outside the range of U (V)
    # when the matrix is tall (wide). Complex pairs (u_i, v_i) share a free phase; only
    # the difference of their phase velocities is fixed (i Im dS_ii / s_i), given to U.
    (a,), (a_dot,) = primals, tangents
    u, s, vt = svd_p.bind(a, compute_uv=True)
    v, ut = mH(vt), mH(u)
    ds = mm(ut, mm(a_dot, v))
    s_dot = real_part(diag(ds))
    if not compute_uv:
        return [s], [s_dot]
    m, n = get_aval(a).shape[-2:]
    dtype = get_aval(a).dtype
    eye = np.eye(min(m, n), dtype=get_aval(s).dtype)
    s_row, s_col = row(s), col(s)
    gaps = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))
    f = as_dtype(ew.sub(ew.div(const(s, 1), ew.add(gaps, eye)), eye), dtype)
    s_row, s_col = as_dtype(s_row, dtype), as_dtype(s_col, dtype)
    dss, sds = ew.mul(ds, s_row), ew.mul(s_col, ds)
    u_inner = ew.mul(f, ew.add(dss, mH(dss)))
    if is_complex(a):
        s_inv = ew.select(ew.eq(s, const(s, 0)), const(s, 0), ew.div(const(s, 1), s))
        phase = ew.mul(ew.sub(ds, mH(ds)), const(ds, 0.5) * eye)
        u_inner = ew.add(u_inner, ew.mul(phase, as_dtype(row(s_inv), dtype)))
    u_dot = mm(u, u_inner)
    v_dot = mm(v, ew.mul(f, ew.add(sds, mH(sds))))
    if m > n:
        dav = mm(a_dot, v)
        u_dot = ew.add(u_dot, ew.div(ew.sub(dav, mm(u, mm(ut, dav))), s_row))
    if n > m:
        datu = mm(mH(a_dot), u)
        v_dot = ew.add(v_dot, ew.div(ew.sub(datu, mm(v, mm(vt, datu))), s_row))
    return [u, s, vt], [u_dot, s_dot, mH(v_dot)]


def _svd_cost(a, *, compute_uv):
    m, n = a.shape[-2:]
    big, small = max(m, n), min(m, n)
    flops = 4 * big * small * small + (22 * small ** 3 if compute_uv else 0)
    return {"flops": matrices(a) * flops, "bytes": 4 * nbytes(a)}


svd_p.abstract_eval = _svd_abstract_eval
svd_p.impl = numerical("svd", _svd_impl, _svd_abstract_eval,
                        "the SVD iteration did not converge (is the input finite?)")
svd_p.jvp = _svd_jvp
svd_p.batch = leading_batch(svd_p)
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
    # A = QR, m >= n (see j-towns' note on the QR derivative): with C = Qᴴ Ȧ R⁻¹ and
    # Ω = tril(C, -1) − tril(C, -1)ᴴ: Q̇ = Q (Ω − C) + Ȧ R⁻¹, Ṙ = (C − Ω) R. For complex
    # A, LAPACK's R has a real diagonal; Ω's imaginary diagonal i Im C_ii keeps it real.
    n = get_aval(r).shape[-1]
    da_rinv = triangular_solve(r, a_dot, left_side=False, lower=False)
    c = mm(mH(q), da_rinv)
    low = mask(c, (n, n), -1, lower=True)
    omega = ew.sub(low, mH(low))
    if is_complex(c):
        omega = ew.add(omega, ew.mul(ew.sub(c, conj(c)), const(c, 0.5) * np.eye(n)))
    q_dot = ew.add(mm(q, ew.sub(omega, c)), da_rinv)
    return q_dot, mm(ew.sub(c, omega), r)


def _qr_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    q, r = qr_p.bind(a)
    m, n = get_aval(a).shape[-2:]
    if m >= n:
        return [q, r], list(_qr_square_or_tall_jvp(q, r, a_dot))
    # Wide A = [X | Y]: Q R₁ = X and R = [R₁ | Qᴴ Y], so Ṙ₂ = Q̇ᴴ Y + Qᴴ Ẏ.
    q_dot, r1_dot = _qr_square_or_tall_jvp(q, cols(r, 0, m), cols(a_dot, 0, m))
    y, y_dot = cols(a, m, n), cols(a_dot, m, n)
    r2_dot = ew.add(mm(mH(q_dot), y), mm(mH(q), y_dot))
    return [q, r], [q_dot, structural.concatenate(r1_dot, r2_dot,
                                                  dimension=get_aval(a).ndim - 1)]


def _qr_cost(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    return {"flops": matrices(a) * 4 * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3),
            "bytes": 3 * nbytes(a)}


qr_p.abstract_eval = _qr_abstract_eval
qr_p.impl = checked_impl(lambda a: list(np.linalg.qr(operand(a), mode="reduced")),
                         _qr_abstract_eval)
qr_p.jvp = _qr_jvp
qr_p.batch = leading_batch(qr_p)
qr_p.cost = _qr_cost


# --- pinv ----------------------------------------------------------------------------

pinv_p = Primitive("pinv")


def _pinv_abstract_eval(a, *, rtol):
    check_matrix("pinv", a, square=False)
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


def _pinv_jvp(primals, tangents, *, rtol):
    # Golub & Pereyra: dA⁺ = −A⁺ Ȧ A⁺ + A⁺A⁺ᴴ Ȧᴴ (I − A A⁺) + (I − A⁺A) Ȧᴴ A⁺ᴴ A⁺,
    # the derivative along perturbations that keep the rank (every one, at full rank).
    (a,), (a_dot,) = primals, tangents
    p = pinv_p.bind(a, rtol=rtol)
    m, n = get_aval(a).shape[-2:]
    dtype = get_aval(a).dtype
    pt, at_dot = mH(p), mH(a_dot)
    first = ew.neg(mm(p, mm(a_dot, p)))
    second = mm(mm(p, pt), mm(at_dot, ew.sub(np.eye(m, dtype=dtype), mm(a, p))))
    third = mm(ew.sub(np.eye(n, dtype=dtype), mm(p, a)), mm(at_dot, mm(pt, p)))
    return p, ew.add(ew.add(first, second), third)


pinv_p.abstract_eval = _pinv_abstract_eval
pinv_p.impl = numerical("pinv", lambda a, *, rtol: np.linalg.pinv(a, rcond=rtol),
                         _pinv_abstract_eval, "the SVD did not converge (is the input finite?)")
pinv_p.jvp = _pinv_jvp
pinv_p.batch = leading_batch(pinv_p)
pinv_p.cost = lambda a, *, rtol: _svd_cost(a, compute_uv=True)
