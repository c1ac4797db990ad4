"""Tests of funcdiff.scipy.special and funcdiff.scipy.stats.

One table row per function (and setting): the funcdiff function, its scipy
reference, one sampler per argument (the derivative check's well-conditioned
domain) and the value tolerance. The table drives values against scipy,
derivatives to order 2 in both modes against finite differences, float32
staying float32, and vmap against a Python loop. Conventions at singular
points, NaN-freedom of derivatives, numerical stability, jit, errors and the
docstring examples have their own tests below. scipy is a test-only dependency:
the tests that need it skip cleanly without it.
"""
import doctest
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError,
                             InvalidArgumentError, ShapeError)
from funcdiff.scipy import special as S
from funcdiff.scipy import stats as T
from funcdiff.test_util import check_grads

sp = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")

# log(0) = -inf is the right answer at the edge of a support (numpy warns, scipy does not);
# the tests that must be warning-free turn warnings into errors themselves.
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")


def U(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def N(rng, shape):
    return rng.standard_normal(shape)


class Row(NamedTuple):
    name: str
    fun: Callable          # funcdiff
    ref: Callable          # scipy
    domain: tuple          # one sampler per argument
    rtol: float = 1e-12
    shape: tuple = (4,)


ROWS = [
    Row("erf", S.erf, sp.erf, (U(-2.5, 2.5),)),
    Row("erfc", S.erfc, sp.erfc, (U(-2.5, 2.5),)),
    Row("erfinv", S.erfinv, sp.erfinv, (U(-0.9, 0.9),)),
    Row("ndtr", S.ndtr, sp.ndtr, (U(-4, 4),)),
    Row("ndtri", S.ndtri, sp.ndtri, (U(0.05, 0.95),)),
    Row("log_ndtr", S.log_ndtr, sp.log_ndtr, (U(-6, 4),)),
    Row("log_ndtr_far_left", S.log_ndtr, sp.log_ndtr, (U(-40, -21),)),
    Row("expit", S.expit, sp.expit, (U(-6, 6),)),
    Row("logit", S.logit, sp.logit, (U(0.2, 0.8),)),
    Row("log_expit", S.log_expit, sp.log_expit, (U(-6, 6),)),
    Row("gammaln", S.gammaln, sp.gammaln, (U(0.3, 6),), 1e-11),
    Row("digamma", S.digamma, sp.digamma, (U(0.3, 6),), 1e-11),
    Row("polygamma1", lambda x: S.polygamma(1, x), lambda x: sp.polygamma(1, x),
        (U(0.5, 5),), 1e-11),
    Row("polygamma2", lambda x: S.polygamma(2, x), lambda x: sp.polygamma(2, x),
        (U(0.5, 5),), 1e-11),
    Row("gamma", S.gamma, sp.gamma, (U(0.3, 5),), 1e-11),
    Row("gamma_negative", S.gamma, sp.gamma, (U(-2.9, -2.1),), 1e-11),
    Row("beta", S.beta, sp.beta, (U(0.5, 4), U(0.5, 4)), 1e-11),
    Row("betaln", S.betaln, sp.betaln, (U(0.5, 4), U(0.5, 4)), 1e-11),
    Row("xlogy", S.xlogy, sp.xlogy, (U(-2, 2), U(0.3, 3))),
    Row("xlog1py", S.xlog1py, sp.xlog1py, (U(-2, 2), U(-0.7, 3))),
    Row("entr", S.entr, sp.entr, (U(0.1, 3),)),
    Row("logsumexp", S.logsumexp, sp.logsumexp, (N,), 1e-12, (2, 3)),
    Row("logsumexp_axis", lambda a: S.logsumexp(a, axis=1),
        lambda a: sp.logsumexp(a, axis=1), (N,), 1e-12, (2, 3)),
    Row("logsumexp_keepdims", lambda a: S.logsumexp(a, axis=(0, 2), keepdims=True),
        lambda a: sp.logsumexp(a, axis=(0, 2), keepdims=True), (N,), 1e-12, (2, 3, 2)),
    Row("logsumexp_b", lambda a, b: S.logsumexp(a, axis=0, b=b),
        lambda a, b: sp.logsumexp(a, axis=0, b=b), (N, U(0.5, 2)), 1e-12, (3, 2)),
    Row("softmax", S.softmax, sp.softmax, (N,), 1e-12, (2, 3)),
    Row("softmax_axis", lambda x: S.softmax(x, axis=0), lambda x: sp.softmax(x, axis=0),
        (N,), 1e-12, (2, 3)),
    Row("log_softmax", lambda x: S.log_softmax(x, axis=-1),
        lambda x: sp.log_softmax(x, axis=-1), (N,), 1e-12, (2, 3)),
    # stats
    Row("norm.logpdf", T.norm.logpdf, st.norm.logpdf, (N, N, U(0.5, 2))),
    Row("norm.pdf", T.norm.pdf, st.norm.pdf, (N, N, U(0.5, 2))),
    Row("norm.cdf", T.norm.cdf, st.norm.cdf, (N, N, U(0.5, 2))),
    Row("norm.logcdf", T.norm.logcdf, st.norm.logcdf, (N, N, U(0.5, 2))),
    Row("norm.sf", T.norm.sf, st.norm.sf, (N, N, U(0.5, 2))),
    Row("norm.logsf", T.norm.logsf, st.norm.logsf, (N, N, U(0.5, 2))),
    Row("norm.ppf", T.norm.ppf, st.norm.ppf, (U(0.05, 0.95), N, U(0.5, 2)), 1e-11),
    Row("t.logpdf", T.t.logpdf, st.t.logpdf, (N, U(1, 6), N, U(0.5, 2)), 1e-11),
    Row("gamma.logpdf", T.gamma.logpdf, st.gamma.logpdf,
        (U(2.5, 4), U(0.5, 4), U(0, 1), U(0.5, 2)), 1e-11),
    Row("beta.logpdf", T.beta.logpdf, st.beta.logpdf,
        (U(0.3, 0.6), U(0.5, 4), U(0.5, 4), U(-0.2, 0.2), U(0.9, 1.1)), 1e-10),
    Row("poisson.logpmf", lambda mu: T.poisson.logpmf(np.array([0, 1, 3, 7]), mu),
        lambda mu: st.poisson.logpmf(np.array([0, 1, 3, 7]), mu), (U(0.5, 5),), 1e-11),
    Row("multivariate_normal.logpdf_diag",
        lambda x, m, c: T.multivariate_normal.logpdf(x, m, c),
        lambda x, m, c: st.multivariate_normal.logpdf(x, m, np.diag(c)),
        (N, N, U(0.5, 2)), 1e-11, (3,)),
]
IDS = [row.name for row in ROWS]


def args_of(row, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return tuple(sample(rng, row.shape).astype(dtype) for sample in row.domain)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_values_match_scipy(row):
    args = args_of(row)
    np.testing.assert_allclose(row.fun(*args), row.ref(*args), rtol=row.rtol, atol=1e-13)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_derivatives_order_2_both_modes(row):
    check_grads(row.fun, args_of(row, seed=1), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_float32_stays_float32(row):
    if row.name == "poisson.logpmf":
        pytest.skip("its counts are int64, which promote float32 to float64 as in numpy")
    args = args_of(row, dtype=np.float32)
    out = row.fun(*args)
    assert np.asarray(out).dtype == np.float32
    np.testing.assert_allclose(out, row.ref(*[a.astype(np.float64) for a in args]), rtol=2e-4,
                               atol=2e-4)


VMAP_ROWS = [r for r in ROWS if r.name in (
    "erf", "log_ndtr", "xlogy", "xlog1py", "gamma", "polygamma1", "logsumexp_axis",
    "logsumexp_b", "softmax_axis", "norm.logcdf", "t.logpdf", "beta.logpdf",
    "multivariate_normal.logpdf_diag")]


@pytest.mark.parametrize("row", VMAP_ROWS, ids=[r.name for r in VMAP_ROWS])
def test_vmap_matches_loop(row):
    rng = np.random.default_rng(3)
    batched = tuple(np.stack([s(rng, row.shape) for _ in range(3)]) for s in row.domain)
    out = fd.vmap(row.fun)(*batched)
    loop = np.stack([row.fun(*[b[i] for b in batched]) for i in range(3)])
    np.testing.assert_allclose(out, loop, rtol=1e-13, atol=1e-13)
    # a gradient under vmap too: per-example gradients of a scalar summary
    g = fd.vmap(fd.grad(lambda *a: np.sum(row.fun(*a))))(*batched)
    g_loop = np.stack([fd.grad(lambda *a: np.sum(row.fun(*a)))(*[b[i] for b in batched])
                       for i in range(3)])
    np.testing.assert_allclose(g, g_loop, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fun", [
    lambda x: S.logsumexp(x, axis=1, b=x * x),
    lambda x: S.softmax(x, axis=1),
    lambda x: S.log_ndtr(x * 20.0),
    lambda x: T.norm.logcdf(x, 0.5, 2.0) + T.t.logpdf(x, 3.0),
    lambda x: S.xlogy(x, x * x) + S.entr(x * x),
])
def test_jit_matches_eager(fun):
    x = np.random.default_rng(4).standard_normal((2, 3))
    np.testing.assert_allclose(fd.jit(fun)(x), fun(x), rtol=1e-14, atol=1e-14)
    g = lambda x: np.sum(fun(x))  # noqa: E731
    np.testing.assert_allclose(fd.jit(fd.grad(g))(x), fd.grad(g)(x), rtol=1e-13, atol=1e-14)


# --- conventions at singular points and NaN-freedom ----------------------------------------


def grads(f, *args):
    return [float(g) for g in fd.grad(f, argnums=tuple(range(len(args))))(*args)]


def second_derivatives(f, *args):
    h = fd.hessian(f, argnums=tuple(range(len(args))))(*args)
    return np.array([[float(h[i][j]) for j in range(len(args))] for i in range(len(args))])


def test_xlogy_zero_convention_and_finite_derivatives():
    for y in (0.0, -1.0, 2.0, np.inf):
        assert float(S.xlogy(0.0, y)) == 0.0 == float(sp.xlogy(0.0, y))
    assert grads(S.xlogy, 0.0, 0.0) == [0.0, 0.0]
    assert grads(S.xlogy, 0.0, -1.0) == [0.0, 0.0]
    np.testing.assert_allclose(grads(S.xlogy, 0.0, 2.0), [np.log(2.0), 0.0])  # smooth here
    np.testing.assert_allclose(grads(S.xlogy, 3.0, 2.0), [np.log(2.0), 1.5])
    assert np.all(np.isfinite(second_derivatives(S.xlogy, 0.0, 0.0)))
    np.testing.assert_allclose(second_derivatives(S.xlogy, 0.0, 2.0), [[0, 0.5], [0.5, 0]])
    # forward mode and a jit-compiled gradient agree
    _, t = fd.jvp(S.xlogy, (0.0, 0.0), (1.0, 1.0))
    assert float(t) == 0.0
    assert [float(g) for g in fd.jit(fd.grad(S.xlogy, argnums=(0, 1)))(0.0, 0.0)] == [0.0, 0.0]


def test_xlog1py_zero_convention_and_finite_derivatives():
    for y in (-1.0, -2.0, 0.5):
        assert float(S.xlog1py(0.0, y)) == 0.0 == float(sp.xlog1py(0.0, y))
    assert grads(S.xlog1py, 0.0, -1.0) == [0.0, 0.0]
    np.testing.assert_allclose(grads(S.xlog1py, 0.0, 1.0), [np.log(2.0), 0.0])
    assert np.all(np.isfinite(second_derivatives(S.xlog1py, 0.0, -1.0)))


def test_entr_special_values_and_derivative_at_zero():
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(S.entr(x), sp.entr(x))
    g = fd.grad(lambda x: np.sum(S.entr(x)))(x)
    np.testing.assert_allclose(g, [0.0, 0.0, -np.log(0.5) - 1, -np.log(2.0) - 1])


def test_distribution_outside_support_gives_minus_inf_and_zero_gradient():
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(T.gamma.logpdf(x, 2.0), st.gamma.logpdf(x, 2.0))
    np.testing.assert_allclose(T.gamma.logpdf(0.0, 1.0), st.gamma.logpdf(0.0, 1.0))
    np.testing.assert_allclose(T.beta.logpdf(x, 2.0, 3.0), st.beta.logpdf(x, 2.0, 3.0))
    k = np.array([-1.0, 1.5, 2.0, 0.0])
    np.testing.assert_allclose(T.poisson.logpmf(k, 2.0), st.poisson.logpmf(k, 2.0))
    np.testing.assert_allclose(T.poisson.logpmf(np.array([3, 5]), 2.0, loc=1),
                               st.poisson.logpmf(np.array([3, 5]), 2.0, loc=1))
    g = fd.grad(lambda a: T.gamma.logpdf(-1.0, a))(2.0)
    assert float(g) == 0.0
    g = fd.grad(lambda x: np.sum(T.beta.logpdf(x, 2.0, 3.0)))(np.array([-0.5, 1.5, 0.5]))
    np.testing.assert_array_equal(g[:2], [0.0, 0.0])
    assert np.isfinite(g[2])


def test_gamma_and_beta_special_values():
    x = np.array([-2.0, -1.0, 0.0, -2.5, 1.5])
    np.testing.assert_allclose(S.gamma(x), sp.gamma(x), rtol=1e-12)
    np.testing.assert_allclose(S.beta(-0.5, 2.3), sp.beta(-0.5, 2.3), rtol=1e-12)
    np.testing.assert_allclose(S.polygamma(np.array([0, 1, 3]), np.array([[1.5], [2.5]])),
                               sp.polygamma(np.array([0, 1, 3]), np.array([[1.5], [2.5]])),
                               rtol=1e-11)


# --- logsumexp, softmax: stability and invariances -----------------------------------------


def test_logsumexp_special_values_match_scipy():
    cases = [
        dict(a=np.array([-np.inf, -np.inf])),
        dict(a=np.array([1.0, np.inf])),
        dict(a=np.array([1.0, 2.0]), b=np.array([0.0, 1.0])),
        dict(a=np.array([np.inf, 2.0]), b=np.array([0.0, 1.0])),
        dict(a=np.array([[1.0, 2.0], [3.0, 4.0]]), b=np.array([1.0, -1.0]), axis=1,
             return_sign=True),
        dict(a=np.array([[1.0, 2.0], [3.0, 4.0]]), b=np.array([[1.0], [-1.0]]), axis=0,
             keepdims=True, return_sign=True),
        dict(a=np.array([1e308, 1e308])),
        dict(a=np.array(3.0)),
    ]
    for kw in cases:
        out, ref = S.logsumexp(**kw), sp.logsumexp(**kw)
        if kw.get("return_sign"):
            for o, r in zip(out, ref):
                assert np.shape(o) == np.shape(r)
                np.testing.assert_allclose(o, r, rtol=1e-14)
        else:
            assert np.shape(out) == np.shape(ref)
            np.testing.assert_allclose(out, ref, rtol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(S.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0])))
    assert type(S.logsumexp(np.ones(3))) is np.float64


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e5])
def test_logsumexp_softmax_derivatives_finite_for_huge_inputs(scale):
    x = np.array([[1.0, -1.0, 0.5], [-1.0, -1.0, 1.0]]) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no invalid value anywhere
        g = fd.grad(lambda x: np.sum(S.logsumexp(x, axis=1)))(x)
        h = fd.hessian(lambda x: S.logsumexp(x[0]))(x)
        gs = fd.grad(lambda x: np.sum(S.softmax(x, axis=1)[:, 0]))(x)
        gl = fd.grad(lambda x: np.sum(S.log_softmax(x, axis=1) * x))(x)
        _, t = fd.jvp(lambda x: S.log_softmax(x, axis=1), (x,), (np.ones_like(x),))
    for v in (g, h, gs, gl, t):
        assert np.all(np.isfinite(v))
    np.testing.assert_allclose(g, sp.softmax(x, axis=1), atol=1e-15)
    np.testing.assert_allclose(t, 0.0, atol=1e-12)  # log_softmax is shift-invariant


def test_softmax_vjp_sums_to_zero():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4))
    p, pullback = fd.vjp(lambda x: S.softmax(x, axis=1), x)
    for _ in range(3):
        u = rng.standard_normal((3, 4))
        (g,) = pullback(u)
        np.testing.assert_allclose(np.sum(g, axis=1), 0.0, atol=1e-15)
        # and the VJP is p * (u - <p, u>): a constant cotangent pulls back to zero
        np.testing.assert_allclose(g, p * (u - np.sum(p * u, axis=1, keepdims=True)),
                                   atol=1e-15)
    np.testing.assert_allclose(pullback(np.ones((3, 4)))[0], 0.0, atol=1e-15)


def test_log_ndtr_tails():
    x = np.array([-1e4, -200.0, -39.0, -20.5, -20.0, -19.5, -5.0, 0.0, 5.0, 20.0, 40.0])
    np.testing.assert_allclose(S.log_ndtr(x), sp.log_ndtr(x), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(T.norm.logcdf(x), st.norm.logcdf(x), rtol=1e-13, atol=1e-300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = fd.grad(lambda x: np.sum(S.log_ndtr(x)))(x)
        h = fd.vmap(fd.grad(fd.grad(S.log_ndtr)))(x)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    # d/dx log Phi(x) = phi(x) / Phi(x), ~ -x in the left tail, ~ phi(x) on the right
    # (the reference loses ~1e-8 relative at -1e4: exp of a difference of two ~5e7 logs)
    ref = np.exp(st.norm.logpdf(x) - st.norm.logcdf(x))
    np.testing.assert_allclose(g, ref, rtol=1e-8)
    assert abs(g[0] - 1e4 * (1 + 1e-8)) < 1e-9  # the Mills ratio -x (1 + 1/x^2 + ...)


# --- multivariate normal ---------------------------------------------------------------------


def _has_cholesky():
    try:
        from funcdiff.numpy import linalg
    except ImportError:
        return False
    return hasattr(linalg, "cholesky")


needs_cholesky = pytest.mark.skipif(not _has_cholesky(),
                                    reason="funcdiff.numpy.linalg.cholesky is not available")


def _spd(rng, d):
    a = rng.standard_normal((d, d))
    return a @ a.T + d * np.eye(d)


@needs_cholesky
def test_multivariate_normal_full_covariance():
    rng = np.random.default_rng(6)
    cov, mean = _spd(rng, 3), rng.standard_normal(3)
    x = rng.standard_normal((4, 3))
    np.testing.assert_allclose(T.multivariate_normal.logpdf(x, mean, cov),
                               st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(T.multivariate_normal.logpdf(x[0], mean, cov),
                               st.multivariate_normal.logpdf(x[0], mean, cov), rtol=1e-12)
    np.testing.assert_allclose(T.multivariate_normal.pdf(x, mean, cov),
                               st.multivariate_normal.pdf(x, mean, cov), rtol=1e-12)

    def f(x, mean, a):  # cov = a a^T + 3 I stays SPD under finite-difference steps
        return T.multivariate_normal.logpdf(x, mean, a @ a.T + 3.0 * np.eye(3))
    check_grads(f, (x, mean, rng.standard_normal((3, 3))), order=2)
    # the gradient in x is -cov^-1 (x - mean)
    g = fd.grad(lambda x: T.multivariate_normal.logpdf(x, mean, cov))(x[0])
    np.testing.assert_allclose(g, -np.linalg.solve(cov, x[0] - mean), rtol=1e-12)
    out = fd.vmap(lambda c: T.multivariate_normal.logpdf(x, mean, c))(np.stack([cov, 2 * cov]))
    np.testing.assert_allclose(out[1], st.multivariate_normal.logpdf(x, mean, 2 * cov))


def test_multivariate_normal_scalar_and_diagonal_covariance():
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    mean = np.array([0.5, 0.0, -0.5])
    for cov in (2.0, np.array([1.0, 2.0, 0.5])):
        ref_cov = cov * np.eye(3) if np.ndim(cov) == 0 else np.diag(cov)
        np.testing.assert_allclose(T.multivariate_normal.logpdf(x, mean, cov),
                                   st.multivariate_normal.logpdf(x, mean, ref_cov), rtol=1e-13)
    # d = 1: a 1-d x holds several points, as in scipy
    np.testing.assert_allclose(T.multivariate_normal.logpdf(np.array([1.0, 2.0, 3.0]), [0.0], 2.0),
                               st.multivariate_normal.logpdf([1.0, 2.0, 3.0], [0.0], 2.0))
    np.testing.assert_allclose(T.multivariate_normal.logpdf(x), st.multivariate_normal.logpdf(
        x, np.zeros(3), np.eye(3)))


def test_multivariate_normal_shape_errors_name_the_function():
    with pytest.raises(ShapeError, match="multivariate_normal.logpdf"):
        T.multivariate_normal.logpdf(np.zeros((2, 3)), np.zeros(2), 1.0)
    with pytest.raises(ShapeError, match="multivariate_normal.logpdf"):
        T.multivariate_normal.logpdf(np.zeros(3), None, np.ones((3, 2)))
    with pytest.raises(ShapeError, match="multivariate_normal.logpdf"):
        T.multivariate_normal.logpdf(np.zeros(3), np.zeros((3, 1)), 1.0)


# --- errors ------------------------------------------------------------------------------------


def test_bad_input_raises_funcdiff_errors_naming_the_function():
    with pytest.raises(InvalidArgumentError, match="polygamma"):
        S.polygamma(-1, 1.0)
    with pytest.raises(InvalidArgumentError, match="polygamma"):
        S.polygamma(1.5, 1.0)
    with pytest.raises(ConcretizationError, match="polygamma"):
        fd.jit(lambda n, x: S.polygamma(n, x))(1, 2.0)
    with pytest.raises(AxisError, match="logsumexp"):
        S.logsumexp(np.ones((2, 3)), axis=2)
    with pytest.raises(AxisError, match="softmax"):
        S.softmax(np.ones(3), axis=(0, 0))
    with pytest.raises(ShapeError):
        S.logsumexp(np.ones((2, 3)), b=np.ones(2))
    with pytest.raises(DTypeError, match="erf"):
        S.erf(np.array(["a"]))
    with pytest.raises(DTypeError, match="norm.logpdf"):
        T.norm.logpdf(np.array([1 + 1j]))
    with pytest.raises(ShapeError, match="xlogy"):
        S.xlogy(np.ones(2), np.ones(3))
    with pytest.raises(ShapeError, match="t.logpdf"):
        T.t.logpdf(np.ones(2), np.ones(3))


def test_integer_inputs_become_float64():
    assert S.gammaln(np.array([1, 2, 3])).dtype == np.float64
    assert S.xlogy(np.array([1, 2]), 3).dtype == np.float64
    np.testing.assert_allclose(T.poisson.logpmf(np.array([1, 2]), 3), st.poisson.logpmf([1, 2], 3))


def test_docstring_examples():
    from funcdiff.scipy import _special_erf, _special_gamma, _special_logsumexp, _special_xlogy
    distributions = [getattr(T, name) for name in T.__all__]   # one module per distribution
    for module in (_special_erf, _special_gamma, _special_xlogy, _special_logsumexp, *distributions):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0
        assert result.failed == 0, module.__name__
