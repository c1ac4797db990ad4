"""Tests of funcdiff.numpy.linalg, funcdiff.scipy.linalg and the linear-algebra primitives.

One table row per (function, input kind, settings). Each row is compared
with numpy/scipy (float64, natively batched inputs, and float32 that must stay
float32), gradient-checked to second order in both modes at a well-conditioned
random point (SPD matrices for Cholesky, well separated eigenvalues for eigh,
distinct singular values and full rank for svd/qr/lstsq), vmapped against a
Python loop (with batch axes in several places, and unbatched matrices), and
jitted against eager. Eigenvectors and singular vectors enter the gradient
checks only through sign-invariant functions (``V**2``, ``U diag(c) Vh``).
Bad input has its own tests: non-square, non-SPD, singular, complex, float16.
"""

from __future__ import annotations

import doctest
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (DTypeError, FunctionalDiffError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.primitives import linalg as pl
from funcdiff.scipy import linalg as fsl
from funcdiff.test_util import check_grads
from funcdiff.tree_util import tree_flatten

la = fnp.linalg


def _sl():
    """scipy.linalg, only as a test reference; tests that need it skip without it."""
    return pytest.importorskip("scipy.linalg")


# ---------------------------------------------------------------------------
# Well-conditioned inputs; ``lead`` is a tuple of leading (batch) axes


def _orthogonal(rng, n, lead):
    q, r = np.linalg.qr(rng.standard_normal(lead + (n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def general(m, n=None, low=1.0, high=2.5):
    """Full-rank m x n matrices with distinct singular values in [low, high]."""
    n = m if n is None else n

    def make(rng, lead=()):
        k = min(m, n)
        s = np.zeros(lead + (m, n))
        idx = np.arange(k)
        s[..., idx, idx] = np.linspace(high, low, k) * (1 + 0.05 * rng.random(lead + (k,)))
        return _orthogonal(rng, m, lead) @ s @ np.swapaxes(_orthogonal(rng, n, lead), -1, -2)
    return make


def symmetric(n, low=-1.5, high=2.0):
    """Symmetric matrices with eigenvalues spread over [low, high] (gaps >= 0.5)."""
    def make(rng, lead=()):
        q = _orthogonal(rng, n, lead)
        w = np.linspace(low, high, n) + 0.1 * rng.random(lead + (n,))
        return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return make


def spd(n):
    return symmetric(n, 1.0, 3.0)


def triangular(n, lower):
    def make(rng, lead=()):
        a = 0.4 * rng.standard_normal(lead + (n, n))
        a[..., np.arange(n), np.arange(n)] = 1.5 + rng.random(lead + (n,))
        return np.tril(a) if lower else np.triu(a)
    return make


def normal(*shape):
    return lambda rng, lead=(): rng.standard_normal(lead + shape)


def args_of(*makers):
    return lambda rng, lead=(): tuple(m(rng, lead) for m in makers)


def rank_deficient(n):
    def make(rng, lead=()):
        a = general(n)(rng, lead)
        u, s, vt = np.linalg.svd(a)
        s[..., -1] = 0
        return (u * s[..., None, :]) @ vt
    return make


# ---------------------------------------------------------------------------
# The table


class Row(NamedTuple):
    name: str
    fn: Callable                 # funcdiff function of the arrays
    ref: Callable | None         # numpy / scipy reference
    make: Callable               # (rng, lead) -> tuple of float64 arrays
    smooth: Callable | None = None  # what the gradient check differentiates (default fn)
    order: int = 2               # gradient order checked (0: none)
    batchable: bool = True       # the function itself batches over leading axes
    float32: bool = True         # float32 values are comparable with float64 ones


def _sign_free_svd(full_matrices=False):
    def f(a):
        u, s, vh = la.svd(a, full_matrices=full_matrices)
        c = np.linspace(1.0, 2.0, s.shape[-1])
        return s, u ** 2, vh ** 2, fnp.matmul(u * c, vh)
    return f


def _sign_free_eigh(a):
    w, v = la.eigh(a)
    return w, v ** 2, fnp.matmul(v * fnp.sin(w)[..., None, :], fnp.swapaxes(v, -1, -2))


INF = np.inf
NORMS = [
    *[(dict(ord=o), (5,)) for o in (None, 1, 2, INF, -INF, 0, 3, 0.5, -1.5)],
    *[(dict(ord=o, axis=ax, keepdims=kd), (3, 4)) for o in (None, 1, 2, INF, 0)
      for ax, kd in ((0, False), (-1, True))],
    *[(dict(ord=o), (3, 4)) for o in (None, "fro", "nuc", 1, -1, 2, -2, INF, -INF)],
    *[(dict(ord=o, axis=(1, 0), keepdims=True), (3, 4)) for o in ("fro", "nuc", 1, INF, -2)],
    *[(dict(ord=o, axis=(-2, -1)), (2, 3, 3)) for o in ("fro", 2, "nuc", -1)],
    (dict(keepdims=True), (2, 3)),
]

ROWS = [
    Row("inv", la.inv, np.linalg.inv, args_of(general(3))),
    Row("solve-vector", la.solve, np.linalg.solve, args_of(general(3), normal(3)),
        batchable=False),
    Row("solve-matrix", la.solve, np.linalg.solve, args_of(general(3), normal(3, 2))),
    Row("solve-broadcast", la.solve, np.linalg.solve,
        lambda rng, lead=(): (general(3)(rng, lead + (2,)), normal(1, 3, 2)(rng, lead)),
        order=1),
    Row("det", la.det, np.linalg.det, args_of(general(3))),
    Row("slogdet", la.slogdet, np.linalg.slogdet, args_of(general(4)),
        smooth=lambda a: la.slogdet(a)[1]),
    Row("cholesky", la.cholesky, np.linalg.cholesky, args_of(spd(3))),
    Row("cholesky-upper", lambda a: la.cholesky(a, upper=True),
        lambda a: np.linalg.cholesky(a, upper=True), args_of(spd(4))),
    Row("eigh", la.eigh, None, args_of(symmetric(4)), smooth=_sign_free_eigh),
    Row("eigvalsh", la.eigvalsh, np.linalg.eigvalsh, args_of(symmetric(4))),
    *[Row(f"svd-{m}x{n}", lambda a: la.svd(a, full_matrices=False)[1],
          lambda a: np.linalg.svd(a, compute_uv=False), args_of(general(m, n)),
          smooth=_sign_free_svd()) for m, n in ((3, 3), (4, 3), (3, 4))],
    Row("svd-square-default", lambda a: la.svd(a)[1] ** 2, lambda a: np.linalg.svd(a)[1] ** 2,
        args_of(general(3)), smooth=_sign_free_svd(True), order=1),
    Row("svdvals", la.svdvals, np.linalg.svdvals, args_of(general(4, 2))),
    *[Row(f"qr-{m}x{n}", la.qr, lambda a: np.linalg.qr(a), args_of(general(m, n)))
      for m, n in ((3, 3), (4, 3), (3, 4))],
    Row("qr-r", lambda a: la.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"),
        args_of(general(4, 2)), order=1),
    *[Row(f"pinv-{m}x{n}", la.pinv, np.linalg.pinv, args_of(general(m, n)))
      for m, n in ((3, 3), (4, 3), (2, 4))],
    Row("pinv-rank-deficient", la.pinv, np.linalg.pinv, args_of(rank_deficient(3)), order=0,
        float32=False),  # float32 rounding turns the zero singular value into ~1e-7
    Row("lstsq-vector", la.lstsq, lambda a, b: np.linalg.lstsq(a, b),
        args_of(general(4, 3), normal(4)), smooth=lambda a, b: la.lstsq(a, b)[:2],
        batchable=False),
    Row("lstsq-wide", la.lstsq, lambda a, b: np.linalg.lstsq(a, b),
        args_of(general(2, 3), normal(2, 2)), smooth=lambda a, b: la.lstsq(a, b)[0],
        batchable=False),
    Row("matrix_rank", la.matrix_rank, np.linalg.matrix_rank, args_of(rank_deficient(4)),
        order=0),
    *[Row(f"norm-{kw}-{shape}", lambda x, kw=kw: la.norm(x, **kw),
          lambda x, kw=kw: np.linalg.norm(x, **kw), args_of(normal(*shape)),
          order=0 if kw.get("ord") == 0 else 2, batchable=False) for kw, shape in NORMS],
    Row("vector_norm", lambda x: la.vector_norm(x, axis=(0, 2), keepdims=True, ord=3),
        lambda x: np.linalg.vector_norm(x, axis=(0, 2), keepdims=True, ord=3),
        args_of(normal(2, 3, 4)), batchable=False),
    Row("vector_norm-all", la.vector_norm, np.linalg.vector_norm, args_of(normal(2, 3)),
        batchable=False),
    Row("matrix_norm", lambda x: la.matrix_norm(x, ord=2),
        lambda x: np.linalg.matrix_norm(x, ord=2), args_of(general(3))),
    *[Row(f"cond-{p}", lambda x, p=p: la.cond(x, p), lambda x, p=p: np.linalg.cond(x, p),
          args_of(general(3)), order=1) for p in (None, -2, 1, "fro", INF)],
    *[Row(f"matrix_power-{n}", lambda a, n=n: la.matrix_power(a, n),
          lambda a, n=n: np.linalg.matrix_power(a, n), args_of(general(3)),
          order=0 if n == 0 else 2) for n in (0, 1, 2, 5, -2)],
    Row("multi_dot-4", lambda *xs: la.multi_dot(list(xs)), lambda *xs: np.linalg.multi_dot(xs),
        args_of(normal(2, 5), normal(5, 1), normal(1, 4), normal(4, 3)), batchable=False),
    Row("multi_dot-vectors", lambda *xs: la.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
        args_of(normal(3), normal(3, 4), normal(4)), batchable=False),
    Row("multi_dot-row", lambda *xs: la.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
        args_of(normal(3), normal(3, 4), normal(4, 2)), batchable=False),
    Row("tensorsolve", la.tensorsolve, np.linalg.tensorsolve,
        lambda rng, lead=(): (general(6)(rng).reshape(2, 3, 6), normal(2, 3)(rng)),
        batchable=False),
    Row("tensorinv", lambda a: la.tensorinv(a, ind=1), lambda a: np.linalg.tensorinv(a, ind=1),
        lambda rng, lead=(): (general(6)(rng).reshape(6, 2, 3),), batchable=False),
    Row("matrix_transpose", la.matrix_transpose, np.linalg.matrix_transpose,
        args_of(normal(2, 3))),
    Row("diagonal", la.diagonal, np.linalg.diagonal, args_of(normal(3, 3))),
    Row("trace", la.trace, np.linalg.trace, args_of(normal(3, 3))),
    Row("outer", la.outer, np.linalg.outer, args_of(normal(3), normal(2)), batchable=False),
    Row("cross", la.cross, np.linalg.cross, args_of(normal(3), normal(3))),
    Row("vecdot", la.vecdot, np.linalg.vecdot, args_of(normal(3), normal(3))),
    Row("matmul", la.matmul, np.linalg.matmul, args_of(normal(2, 3), normal(3, 2))),
    Row("tensordot", la.tensordot, np.linalg.tensordot, args_of(normal(2, 3), normal(2, 3)),
        batchable=False),
    # funcdiff.scipy.linalg
    *[Row(f"solve_triangular-{lower}-{trans}-{unit}-{b}",
          lambda a, b, kw=dict(lower=lower, trans=trans, unit_diagonal=unit):
              fsl.solve_triangular(a, b, **kw),
          lambda a, b, kw=dict(lower=lower, trans=trans, unit_diagonal=unit):
              _sl().solve_triangular(a, b, **kw),
          args_of(triangular(3, lower), normal(*b)), batchable=len(b) > 1)
      for lower, trans, unit, b in ((True, 0, False, (3,)), (False, 0, False, (3, 2)),
                                    (True, 1, False, (3, 2)), (False, "T", True, (3,)),
                                    (True, 2, True, (3, 1)))],
    *[Row(f"cho_factor-{lower}", lambda a, lower=lower: fsl.cho_factor(a, lower=lower)[0],
          lambda a, lower=lower: _sl().cho_factor(a, lower=lower)[0], args_of(spd(3)),
          batchable=False) for lower in (True, False)],
    *[Row(f"cho_solve-{lower}",
          lambda a, b, lower=lower: fsl.cho_solve(fsl.cho_factor(a, lower=lower), b),
          lambda a, b, lower=lower: _sl().cho_solve(_sl().cho_factor(a, lower=lower), b),
          args_of(spd(3), normal(*b)), batchable=len(b) > 1)
      for lower, b in ((True, (3,)), (False, (3, 2)))],
    *[Row(f"lu_factor-{m}x{n}", fsl.lu_factor, lambda a: _sl().lu_factor(a),
          args_of(general(m, n)), smooth=lambda a: fsl.lu_factor(a)[0], batchable=False)
      for m, n in ((4, 4), (4, 3), (3, 4))],
    *[Row(f"lu_solve-{trans}", lambda a, b, t=trans: fsl.lu_solve(fsl.lu_factor(a), b, trans=t),
          lambda a, b, t=trans: _sl().lu_solve(_sl().lu_factor(a), b, trans=t),
          args_of(general(4), normal(*b)), batchable=False)
      for trans, b in ((0, (4,)), (1, (4, 2)))],
    *[Row(f"lu-{kw}-{m}x{n}", lambda a, kw=kw: fsl.lu(a, **kw), lambda a, kw=kw: _sl().lu(a, **kw),
          args_of(general(m, n)), smooth=lambda a, kw=kw: fsl.lu(a, **kw)[-2:],
          batchable=False, order=1)
      for kw, (m, n) in (({}, (4, 4)), ({}, (4, 3)), ({}, (3, 4)), (dict(permute_l=True), (3, 3)),
                         (dict(p_indices=True), (3, 3)))],
    *[Row(f"expm-{scale}", fsl.expm, lambda a: _sl().expm(a),
          lambda rng, lead=(), scale=scale: (scale * normal(3, 3)(rng, lead),),
          order=2 if scale == 0.5 else 1 if scale < 5 else 0)
      for scale in (0.002, 0.05, 0.5, 1.5, 3.0, 20.0)],
    Row("expm_frechet", fsl.expm_frechet, lambda a, e: _sl().expm_frechet(a, e),
        args_of(lambda rng, lead=(): 0.5 * normal(3, 3)(rng, lead), normal(3, 3)),
        batchable=False, order=1),
    Row("scipy-solve-transposed", lambda a, b: fsl.solve(a, b, transposed=True),
        lambda a, b: _sl().solve(a, b, transposed=True), args_of(general(3), normal(3)),
        batchable=False, order=1),
    Row("scipy-cholesky", fsl.cholesky, lambda a: _sl().cholesky(a), args_of(spd(3)),
        batchable=False, order=1),
    Row("scipy-inv-det", lambda a: (fsl.inv(a), fsl.det(a)),
        lambda a: (_sl().inv(a), _sl().det(a)), args_of(general(3)), batchable=False, order=1),
    Row("scipy-eigh", lambda a: fsl.eigh(a, eigvals_only=True),
        lambda a: _sl().eigh(a, eigvals_only=True), args_of(symmetric(3)), batchable=False,
        order=1),
]


def _ids(rows):
    return [r.name for r in rows]


def _leaves(tree):
    return [np.asarray(l) for l in tree_flatten(tuple(tree) if isinstance(tree, tuple)
                                                else tree)[0]]


def _close(got, want, what, tol=1e-9):
    got_l, want_l = _leaves(got), _leaves(want)
    assert len(got_l) == len(want_l), f"{what}: {len(got_l)} outputs, expected {len(want_l)}"
    for i, (g, w) in enumerate(zip(got_l, want_l)):
        assert g.shape == w.shape, f"{what}[{i}]: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol,
                                   atol=tol, err_msg=f"{what}[{i}]")


def _stack(trees):
    leaves = [_leaves(t) for t in trees]
    return [np.stack(ls) for ls in zip(*leaves)]


# ---------------------------------------------------------------------------
# Table tests


@pytest.mark.parametrize("row", [r for r in ROWS if r.ref is not None],
                         ids=_ids([r for r in ROWS if r.ref is not None]))
def test_values_match_reference(row):
    rng = np.random.default_rng(0)
    args = row.make(rng)
    _close(row.fn(*args), row.ref(*args), row.name)
    if row.batchable:  # natively batched input against a loop of the reference
        batched = row.make(rng, (2,))
        members = [row.ref(*[a[i] for a in batched]) for i in range(2)]
        _close(row.fn(*batched), _stack(members), f"{row.name} batched")


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_float32_stays_float32(row):
    args64 = row.make(np.random.default_rng(3))
    args32 = tuple(a.astype(np.float32) for a in args64)
    out32, out64 = _leaves(row.fn(*args32)), _leaves(row.fn(*args64))
    for o32, o64 in zip(out32, out64):
        if o64.dtype.kind == "f":
            assert o32.dtype == np.float32, f"{row.name}: float32 in, {o32.dtype} out"
            if not row.float32:
                continue
            scale = max(1.0, float(np.max(np.abs(o64)))) if o64.size else 1.0
            np.testing.assert_allclose(o32, o64, atol=2e-4 * scale, rtol=2e-4)


@pytest.mark.parametrize("row", [r for r in ROWS if r.order],
                         ids=_ids([r for r in ROWS if r.order]))
def test_grads(row):
    f = row.smooth or row.fn
    args = row.make(np.random.default_rng(1))
    check_grads(f, args, order=row.order, modes=("fwd", "rev"))
    if row.batchable:
        check_grads(f, row.make(np.random.default_rng(2), (2,)), order=1)


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_vmap_matches_loop(row):
    rng = np.random.default_rng(4)
    members = [row.make(rng) for _ in range(3)]
    batched = [np.stack(a) for a in zip(*members)]
    want = _stack([row.fn(*m) for m in members])
    _close(fd.vmap(row.fn)(*batched), want, f"vmap {row.name}")
    # The batch axis last for every argument (moved to the front inside).
    moved = [np.moveaxis(b, 0, -1) for b in batched]
    _close(fd.vmap(row.fn, in_axes=-1)(*moved), want, f"vmap(in_axes=-1) {row.name}")
    if len(batched) > 1:  # the matrix unbatched, the other operands batched
        want = _stack([row.fn(members[0][0], *m[1:]) for m in members])
        got = fd.vmap(row.fn, in_axes=(None,) + (0,) * (len(batched) - 1))(
            members[0][0], *batched[1:])
        _close(got, want, f"vmap(in_axes=(None, 0...)) {row.name}")


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_jit_matches_eager(row):
    args = row.make(np.random.default_rng(5))
    eager = row.fn(*args)
    closed = fd.make_jaxpr(row.fn)(*args)
    fd.check_jaxpr(closed.jaxpr)
    jitted = fd.jit(row.fn)
    for _ in range(2):  # the trace, then the cached program
        _close(jitted(*args), eager, f"jit {row.name}")


# ---------------------------------------------------------------------------
# Compositions and conventions


def test_gradients_are_the_known_formulas():
    rng = np.random.default_rng(6)
    a = spd(3)(rng)
    a_inv = np.linalg.inv(a)
    np.testing.assert_allclose(fd.grad(lambda a: la.slogdet(a)[1])(a), a_inv.T, atol=1e-12)
    np.testing.assert_allclose(fd.grad(la.det)(a), np.linalg.det(a) * a_inv.T, atol=1e-12)
    # log det via Cholesky: symmetric gradient a⁻¹ (the input's symmetric part is used).
    logdet = lambda a: 2 * fnp.sum(fnp.log(la.diagonal(la.cholesky(a))))
    np.testing.assert_allclose(fd.grad(logdet)(a), a_inv, atol=1e-12)
    # d tr(inv(a) b) = -(a⁻¹ b a⁻¹)ᵀ
    b = rng.standard_normal((3, 3))
    np.testing.assert_allclose(fd.grad(lambda a: fnp.trace(la.inv(a) @ b))(a),
                               -(a_inv @ b @ a_inv).T, atol=1e-12)
    # eigenvalues: d λ_i = v_i v_iᵀ; the largest singular value: d s = u vᵀ.
    w, v = np.linalg.eigh(a)
    np.testing.assert_allclose(fd.grad(lambda a: la.eigvalsh(a)[-1])(a),
                               np.outer(v[:, -1], v[:, -1]), atol=1e-12)
    u, s, vh = np.linalg.svd(b)
    np.testing.assert_allclose(fd.grad(lambda b: la.norm(b, 2))(b), np.outer(u[:, 0], vh[0]),
                               atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda x: la.norm(x), lambda x: la.norm(x, ord=3), lambda x: la.norm(x, ord=1),
    lambda x: fnp.sum(la.norm(fnp.reshape(x, (2, 2)), axis=0)),
    lambda x: la.norm(fnp.reshape(x, (2, 2)), ord="fro"),
    lambda x: la.norm(fnp.reshape(x, (2, 2)), keepdims=True)[0, 0],
    lambda x: fnp.std(x + 1.0), lambda x: fnp.sum(fnp.std(fnp.reshape(x, (2, 2)), axis=0))],
    ids=["2", "3", "1", "axis", "fro", "keepdims", "std", "std-axis"])
def test_norm_gradient_at_zero_is_the_zero_subgradient(call):
    """Also std where all values are equal (the norm of their deviations)."""
    zero = np.zeros(4)
    for g in (fd.grad(call), fd.jit(fd.grad(call)), fd.jacfwd(call)):
        np.testing.assert_array_equal(g(zero), zero)   # not NaN (x / |x| is 0/0 there)
    # elsewhere the usual gradient, and NaN or inf inputs still show in the value
    x = np.array([3.0, -4.0, 0.5, 1.0])
    check_grads(call, (x,), order=2, modes=("fwd", "rev"))
    assert np.isnan(call(np.array([np.nan, 1.0, 0.0, 0.0])))
    assert not np.isfinite(call(np.array([np.inf, 1.0, 0.0, 0.0])))  # inf (nan for std)
    assert call(np.ones(4, np.float32)).dtype == np.float32


def test_eigenvalue_gradient_finite_at_repeated_eigenvalues():
    # Eigenvalue derivatives never divide by gaps: finite at the identity (the unused
    # eigenvector derivative divides by the zero gaps, hence errstate).
    with np.errstate(divide="ignore"):
        g = fd.grad(lambda a: fnp.sum(la.eigh(a)[0] ** 2))(np.eye(3))
    np.testing.assert_allclose(g, 2 * np.eye(3), atol=1e-12)
    g = fd.jacfwd(la.eigvalsh)(2 * np.eye(2))
    assert np.all(np.isfinite(g))


def test_transform_compositions_agree():
    rng = np.random.default_rng(7)
    a = general(3)(rng)
    f = lambda a: la.inv(a) @ la.cholesky(a @ a.T + np.eye(3))
    np.testing.assert_allclose(fd.jacfwd(f)(a), fd.jacrev(f)(a), atol=1e-10)
    g = lambda a: la.slogdet(a)[1] + fnp.sum(fsl.expm(0.3 * a) ** 2) + la.norm(a, "nuc")
    np.testing.assert_allclose(fd.hessian(g)(a), fd.jacfwd(fd.jacrev(g))(a), atol=1e-8)
    np.testing.assert_allclose(fd.jit(fd.grad(fd.jit(g)))(a), fd.grad(g)(a), atol=1e-10)
    batch = np.stack([a, general(3)(rng)])
    np.testing.assert_allclose(fd.vmap(fd.grad(g))(batch),
                               np.stack([fd.grad(g)(x) for x in batch]), atol=1e-10)


def test_solve_folds_an_unbatched_matrix_into_the_right_hand_side():
    rng = np.random.default_rng(8)
    a, bs = general(3)(rng), rng.standard_normal((4, 3, 2))
    jaxpr = fd.make_jaxpr(fd.vmap(lambda b: la.solve(a, b)))(bs)
    assert "broadcast_in_dim" not in str(jaxpr)  # the matrix is not copied per member
    np.testing.assert_allclose(fd.vmap(lambda b: la.solve(a, b))(bs),
                               np.linalg.solve(a, bs), atol=1e-12)
    t = np.triu(a)
    right = fd.vmap(lambda b: pl.triangular_solve(t, b, left_side=False))(
        np.swapaxes(bs, -1, -2))
    np.testing.assert_allclose(right @ t, np.swapaxes(bs, -1, -2), atol=1e-12)


def test_expm_batches_members_of_different_norms():
    sl = _sl()
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 3, 3)) * np.array([1e-3, 0.3, 4.0, 50.0])[:, None, None]
    np.testing.assert_allclose(fsl.expm(a), np.stack([sl.expm(x) for x in a]), rtol=1e-10,
                               atol=1e-12)


def test_blocked_lu_matches_scipy():
    sl = _sl()
    rng = np.random.default_rng(12)
    for shape in ((70, 70), (2, 45, 40), (40, 75)):
        a = rng.standard_normal(shape)
        lu, piv = fsl.lu_factor(a)
        members = [sl.lu_factor(x) for x in a.reshape((-1,) + shape[-2:])]
        np.testing.assert_allclose(lu.reshape((-1,) + shape[-2:]),
                                   np.stack([m[0] for m in members]), atol=1e-10)
        np.testing.assert_array_equal(piv.reshape(len(members), -1),
                                      np.stack([m[1] for m in members]))
    a = general(40)(rng)
    check_grads(lambda a: fsl.lu_solve(fsl.lu_factor(a), np.ones(40)), (a,), order=1)


def test_pinv_derivative_at_repeated_singular_values():
    # An orthogonal matrix has all singular values equal; pinv is still smooth there.
    q = _orthogonal(np.random.default_rng(10), 3, ())
    check_grads(la.pinv, (q,), order=2)


def test_cost_rules_count_cubic_flops():
    a, b = general(4)(np.random.default_rng(11)), np.ones((4, 2))
    from funcdiff.passes.pipeline import program_cost
    for f in (la.inv, la.det, la.cholesky, la.eigvalsh, la.svdvals, lambda x: la.qr(x)[0],
              lambda x: fsl.lu_factor(x)[0], fsl.expm, la.pinv,
              lambda x: fsl.solve_triangular(x, b)):
        cost = program_cost(fd.make_jaxpr(f)(a @ a.T + np.eye(4)))
        assert cost["flops"] >= 4 ** 3 // 3 and cost["bytes"] > 0
    for p in pl.__all__:
        if p.endswith("_p"):
            assert getattr(pl, p).cost is not None


# ---------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("fn,name", [(la.inv, "inv"), (la.det, "det"), (la.eigh, "eigh"),
                                     (la.cholesky, "cholesky"), (la.slogdet, "slogdet"),
                                     (fsl.expm, "expm")])
def test_non_square_input_names_the_function(fn, name):
    for bad in (np.ones((2, 3)), np.ones(3)):
        with pytest.raises(pl.SquareMatrixError, match=name) as info:
            fn(bad)
        assert isinstance(info.value, ShapeError)
        assert isinstance(info.value, np.linalg.LinAlgError)  # numpy's class too
        with pytest.raises(pl.SquareMatrixError, match=name):
            fd.make_jaxpr(fn)(bad)


def test_non_square_primitive_errors_in_eager_and_staged_use():
    with pytest.raises(pl.SquareMatrixError, match="cholesky"):
        pl.cholesky(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="triangular_solve"):
        pl.triangular_solve(np.eye(3), np.ones((2, 1)))
    with pytest.raises(ShapeError, match="solve"):
        fd.make_jaxpr(pl.solve)(np.eye(3), np.ones((2, 3, 1)))


def test_not_positive_definite_raises_linalgerror():
    bad = np.array([[1., 2.], [2., 1.]])
    for f in (la.cholesky, fd.jit(la.cholesky), fd.grad(lambda a: fnp.sum(la.cholesky(a))),
              lambda a: fsl.cho_factor(a)):
        with pytest.raises(pl.LinAlgError, match="cholesky.*positive definite") as info:
            f(bad)
        assert isinstance(info.value, np.linalg.LinAlgError)
        assert isinstance(info.value, FunctionalDiffError)
    with pytest.raises(np.linalg.LinAlgError):  # numpy-style code keeps working
        fd.vmap(la.cholesky)(np.stack([np.eye(2), bad]))


def test_singular_matrices_raise_instead_of_nan():
    singular = np.array([[1., 2.], [2., 4.]])
    for f in (la.inv, lambda a: la.solve(a, np.ones(2)), fd.jit(la.inv),
              lambda a: fsl.lu_solve(fsl.lu_factor(a), np.ones(2)),
              lambda a: fsl.solve_triangular(np.triu(a - np.diag([0, 4.])), np.ones(2)),
              fd.grad(la.det), fd.grad(lambda a: la.slogdet(a)[1])):
        with pytest.raises(pl.LinAlgError, match="singular"):
            f(singular)
    assert la.det(singular) == 0.0  # the values themselves are fine
    assert la.slogdet(singular).sign == 0.0


def test_float16_input_is_rejected_and_complex_accepted():
    for f in (la.inv, la.svd, la.eigh, la.eig, fsl.expm):
        with pytest.raises(DTypeError, match="float16"):
            f(np.eye(2, dtype=np.float16))
    z = np.eye(2) * (1 + 1j)  # tests/test_linalg_complex.py checks complex input in depth
    np.testing.assert_allclose(la.inv(z), np.linalg.inv(z))
    np.testing.assert_allclose(fsl.expm(z), np.diag(np.exp([1 + 1j] * 2)))


def test_unsupported_settings_are_explained():
    with pytest.raises(UnsupportedNumpyError, match="full_matrices=False"):
        la.svd(np.ones((3, 2)))
    with pytest.raises(UnsupportedNumpyError, match="mode"):
        la.qr(np.ones((3, 2)), mode="complete")
    with pytest.raises(la.LinAlgArgumentError, match="ord"):
        la.norm(np.ones(3), "fro")
    with pytest.raises(ValueError, match="ord"):
        la.norm(np.ones((3, 3)), 3)
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(np.eye(2), UPLO="X")
    with pytest.raises(FunctionalDiffError, match="integer"):
        la.matrix_power(np.eye(2), 1.5)


def test_integer_input_is_promoted_like_numpy():
    a = np.array([[2, 1], [1, 3]])
    assert la.inv(a).dtype == np.float64
    np.testing.assert_allclose(la.inv(a), np.linalg.inv(a))
    assert la.matrix_power(a, 2).dtype == a.dtype
    np.testing.assert_array_equal(la.matrix_power(a, 2), np.linalg.matrix_power(a, 2))


# ---------------------------------------------------------------------------
# Documentation


def test_docstring_examples_run():
    import funcdiff.scipy as fscipy
    from funcdiff.numpy import (_linalg_array_api, _linalg_decompositions, _linalg_lstsq,
                                _linalg_norms, _linalg_products)
    from funcdiff.numpy import linalg as numpy_linalg
    from funcdiff.primitives import linalg_factor, linalg_solve
    numpy_modules = (numpy_linalg, _linalg_decompositions, _linalg_lstsq, _linalg_norms,
                     _linalg_products, _linalg_array_api)
    for module, globs in ([(m, {}) for m in numpy_modules] + [(fsl, {}), (fscipy, {})]
                          + [(m, {"np": np}) for m in (linalg_solve, linalg_factor)]):
        result = doctest.testmod(module, extraglobs=globs,
                                 optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_scipy_package_plugs_in_optional_submodules():
    import importlib.util
    import funcdiff.scipy as fscipy
    assert fscipy.linalg is fsl
    for name in ("special", "stats"):
        present = importlib.util.find_spec(f"funcdiff.scipy.{name}") is not None
        assert hasattr(fscipy, name) == present
