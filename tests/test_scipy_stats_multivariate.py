"""funcdiff.scipy.stats.dirichlet, and multivariate_normal with a singular covariance
and its entropy: values against scipy, derivatives against finite differences (on
the simplex, and along the support of a singular covariance, where the density
lives), jit and vmap against eager, and the refusals of bad input."""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.scipy.stats import dirichlet, multivariate_normal as mvn
from funcdiff.test_util import check_grads

st = pytest.importorskip("scipy.stats")

RNG = np.random.default_rng(0)
ALPHA = np.array([1.5, 2.0, 3.0, 0.7])
POINTS = RNG.dirichlet(ALPHA, size=5).T  # (K, N): points as columns, as scipy


@pytest.mark.parametrize("x", [POINTS[:, 0], POINTS, POINTS[:-1], POINTS[:-1, 0]],
                         ids=["one point", "columns", "K-1 rows", "K-1 entries"])
def test_dirichlet_values_match_scipy(x):
    np.testing.assert_allclose(dirichlet.logpdf(x, ALPHA), st.dirichlet.logpdf(x, ALPHA),
                               rtol=1e-13)
    np.testing.assert_allclose(dirichlet.pdf(x, ALPHA), st.dirichlet.pdf(x, ALPHA), rtol=1e-13)


def test_dirichlet_at_the_edge_of_the_simplex_is_scipys():
    x = np.array([0.0, 0.5, 0.5])
    alpha = np.array([1.0, 2.0, 3.0])  # x0 = 0 with alpha0 = 1: 0**0 = 1
    assert dirichlet.logpdf(x, alpha) == pytest.approx(st.dirichlet.logpdf(x, alpha), rel=1e-13)


def test_dirichlet_moments_and_entropy_match_scipy():
    for name in ("mean", "var", "entropy"):
        np.testing.assert_allclose(getattr(dirichlet, name)(ALPHA),
                                   getattr(st.dirichlet, name)(ALPHA), rtol=1e-13)
        check_grads(getattr(dirichlet, name), (ALPHA,), order=2)


def test_dirichlet_derivatives_order_2_both_modes():
    check_grads(lambda a: dirichlet.logpdf(POINTS, a), (ALPHA,), order=2)
    # in x: along the simplex, through its first K - 1 coordinates
    check_grads(lambda head: dirichlet.logpdf(head, ALPHA), (POINTS[:-1, :2],), order=2,
                eps=1e-5)
    g = fd.grad(lambda a: dirichlet.logpdf(POINTS[:, 0], a))(ALPHA)
    special = pytest.importorskip("scipy.special")
    expected = np.log(POINTS[:, 0]) - special.digamma(ALPHA) + special.digamma(ALPHA.sum())
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_dirichlet_under_jit_and_vmap():
    f = lambda a: dirichlet.logpdf(POINTS, a)  # noqa: E731
    np.testing.assert_allclose(fd.jit(f)(ALPHA), f(ALPHA), rtol=1e-14)
    alphas = ALPHA * np.array([[1.0], [1.5], [0.5]])
    np.testing.assert_allclose(fd.vmap(f)(alphas), np.stack([f(a) for a in alphas]),
                               rtol=1e-14)


def test_dirichlet_refuses_points_off_the_simplex_and_bad_shapes():
    with pytest.raises(InvalidArgumentError, match="must lie on the simplex"):
        dirichlet.logpdf(np.array([0.2, 0.3, 0.6]), ALPHA[:3])
    with pytest.raises(InvalidArgumentError, match="must lie on the simplex"):
        dirichlet.logpdf(np.array([-0.1, 0.6, 0.5]), ALPHA[:3])
    with pytest.raises(ShapeError, match=r"x needs shape \(4,\) or \(4, N\)"):
        dirichlet.logpdf(np.array([0.5, 0.5]), ALPHA)
    with pytest.raises(ShapeError, match="alpha of shape"):
        dirichlet.logpdf(np.array([1.0]), np.array([1.0]))


# --- multivariate normal: singular covariances and the entropy ---------------------------------

FACTOR = RNG.standard_normal((3, 2))
SINGULAR = FACTOR @ FACTOR.T  # rank 2 in three dimensions
MEAN = RNG.standard_normal(3)
ON_SUPPORT = MEAN + (FACTOR @ RNG.standard_normal((2, 4))).T
FULL = SINGULAR + np.eye(3)


@pytest.mark.parametrize("cov", [SINGULAR, np.outer([1.0, 2.0, -1.0], [1.0, 2.0, -1.0]), FULL],
                         ids=["rank 2", "rank 1", "full rank"])
def test_singular_logpdf_and_entropy_match_scipy(cov):
    points = np.concatenate([MEAN + (cov @ RNG.standard_normal((3, 3))).T,
                             MEAN + RNG.standard_normal((2, 3))])  # on, and mostly off, support
    ours = mvn.logpdf(points, MEAN, cov, allow_singular=True)
    want = st.multivariate_normal.logpdf(points, MEAN, cov, allow_singular=True)
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(ours[finite], want[finite], rtol=1e-10)
    np.testing.assert_allclose(mvn.pdf(points, MEAN, cov, allow_singular=True),
                               st.multivariate_normal.pdf(points, MEAN, cov, allow_singular=True),
                               rtol=1e-10)
    assert mvn.entropy(MEAN, cov) == pytest.approx(st.multivariate_normal.entropy(MEAN, cov),
                                                   rel=1e-12)


def test_entropy_of_diagonal_and_scalar_covariances():
    for cov in (2.5, np.array([0.5, 2.0, 3.0])):
        assert mvn.entropy(MEAN, cov) == pytest.approx(
            st.multivariate_normal.entropy(MEAN, np.diag(np.broadcast_to(cov, (3,)))), rel=1e-13)


def test_singular_derivatives_along_the_support():
    # the mean moved within the support, the covariance scaled: the density stays defined
    check_grads(lambda t: mvn.logpdf(ON_SUPPORT, MEAN + FACTOR @ t, SINGULAR, allow_singular=True),
                (np.zeros(2),), order=2)
    check_grads(lambda s: mvn.logpdf(ON_SUPPORT, MEAN, s * SINGULAR, allow_singular=True), (1.3,),
                order=2)
    check_grads(lambda b: mvn.logpdf(ON_SUPPORT, MEAN, b @ b.T + np.eye(3), allow_singular=True),
                (FACTOR @ FACTOR.T + 0.1,), order=2)
    check_grads(lambda s: mvn.entropy(MEAN, s * SINGULAR), (1.3,), order=2)
    check_grads(lambda b: mvn.entropy(MEAN, b @ b.T), (RNG.standard_normal((3, 3)),), order=2)


def test_singular_logpdf_under_jit_and_vmap():
    f = lambda m: mvn.logpdf(ON_SUPPORT, m, SINGULAR, allow_singular=True)  # noqa: E731
    np.testing.assert_allclose(fd.jit(f)(MEAN), f(MEAN), rtol=1e-13)
    per_point = fd.vmap(lambda x: mvn.logpdf(x, MEAN, SINGULAR, allow_singular=True))(ON_SUPPORT)
    np.testing.assert_allclose(per_point, f(MEAN), rtol=1e-13)
    g = fd.jit(fd.grad(lambda s: np.sum(mvn.logpdf(ON_SUPPORT, MEAN, s * SINGULAR,
                                                     allow_singular=True))))
    assert float(g(1.3)) == pytest.approx(
        float(fd.grad(lambda s: fd.numpy.sum(mvn.logpdf(ON_SUPPORT, MEAN, s * SINGULAR,
                                                         allow_singular=True)))(1.3)), rel=1e-12)


def test_a_covariance_with_a_negative_eigenvalue_is_refused():
    bad = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(InvalidArgumentError, match="positive semidefinite.*eigenvalue -1"):
        mvn.logpdf(MEAN, MEAN, bad, allow_singular=True)
    with pytest.raises(InvalidArgumentError, match="positive semidefinite"):
        mvn.entropy(MEAN, bad)
