"""Code ported from HIPS autograd runs with its imports changed: funcdiff.numpy.random is
numpy.random, each distribution of funcdiff.scipy.stats is a module of its own, and
elementwise_grad is autograd's gradient of an elementwise function."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.scipy import stats

DISTRIBUTIONS = ["norm", "t", "gamma", "beta", "poisson", "multivariate_normal"]


def test_numpy_random_is_numpy_random():
    import funcdiff.numpy.random as npr
    from funcdiff.numpy.random import RandomState, randn
    assert npr is np.random and fnp.random is np.random
    assert RandomState is np.random.RandomState and randn is np.random.randn
    npr.seed(3)
    a = fnp.random.randn(4)
    np.random.seed(3)
    assert np.array_equal(a, np.random.randn(4))       # one global state, numpy's
    assert "random" not in fnp.__all__                  # a module, not a function of the namespace


def test_random_draws_are_data_under_grad():
    rs = fnp.random.RandomState(0)
    noise = rs.randn(3)
    g = fd.grad(lambda m: fnp.sum((noise * fnp.exp(m[1]) + m[0]) ** 2))(np.array([0.5, -0.2]))
    s = np.exp(-0.2)
    assert np.allclose(g, [np.sum(2 * (noise * s + 0.5)), np.sum(2 * (noise * s + 0.5) * noise * s)])


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_each_distribution_is_an_importable_module(name):
    module = importlib.import_module(f"funcdiff.scipy.stats.{name}")
    assert getattr(stats, name) is module
    assert set(module.__all__) <= set(vars(module)) and module.__all__


def test_autograd_style_stats_imports_match_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    import funcdiff.scipy.stats.multivariate_normal as mvn
    import funcdiff.scipy.stats.norm as norm
    x = np.array([-1.5, 0.2, 3.0])
    assert np.allclose(norm.logpdf(x, 0.5, 2.0), scipy_stats.norm.logpdf(x, 0.5, 2.0))
    assert np.allclose(norm.cdf(x, 0.5, 2.0), scipy_stats.norm.cdf(x, 0.5, 2.0))
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    pts = np.array([[0.1, -0.4], [1.0, 2.0]])
    assert np.allclose(mvn.logpdf(pts, np.zeros(2), cov),
                       scipy_stats.multivariate_normal.logpdf(pts, np.zeros(2), cov))
    assert np.allclose(stats.t.logpdf(x, 3.0), scipy_stats.t.logpdf(x, 3.0))


def _central(f, x, h=1e-6):
    """Central differences of an elementwise f, element by element."""
    return (f(x + h) - f(x - h)) / (2 * h)


ELEMENTWISE = [
    ("tanh", fnp.tanh, np.tanh),
    ("logistic", lambda x: (1.0 - fnp.exp(-x)) / (1.0 + fnp.exp(-x)),
     lambda x: (1.0 - np.exp(-x)) / (1.0 + np.exp(-x))),
    ("x sin x", lambda x: x * fnp.sin(x), lambda x: x * np.sin(x)),
]


@pytest.mark.parametrize("name,f,f_np", ELEMENTWISE, ids=[r[0] for r in ELEMENTWISE])
def test_elementwise_grad_matches_grad_of_sum_and_finite_differences(name, f, f_np):
    x = np.linspace(-3.0, 3.0, 7).reshape(7, 1) * np.ones((1, 2))
    egrad = fd.elementwise_grad(f)(x)
    assert egrad.shape == x.shape
    assert np.allclose(egrad, fd.grad(lambda v: fnp.sum(f(v)))(x), rtol=1e-13, atol=0)
    assert np.allclose(egrad, _central(f_np, x), rtol=1e-7, atol=1e-9)
    second = fd.elementwise_grad(fd.elementwise_grad(f))(x)
    assert np.allclose(second, _central(lambda v: fd.elementwise_grad(f)(v), x), rtol=1e-6, atol=1e-8)
    assert np.allclose(second[:, 0], np.diagonal(fd.hessian(lambda v: fnp.sum(f(v)))(x[:, 0])),
                       rtol=1e-12, atol=1e-15)


def test_elementwise_grad_of_the_logistic_tanh_has_closed_forms():
    """autograd's tanh example: (1 - e^-x) / (1 + e^-x) = tanh(x / 2), four derivatives."""
    f = ELEMENTWISE[1][1]
    x = np.linspace(-7.0, 7.0, 9)
    t = np.tanh(x / 2)
    d1 = (1 - t ** 2) / 2
    d2 = -t * d1
    d3 = -(d1 * d1 + t * d2)
    d4 = -(3 * d1 * d2 + t * d3)
    egrad = fd.elementwise_grad
    got = [egrad(f), egrad(egrad(f)), egrad(egrad(egrad(f))), egrad(egrad(egrad(egrad(f))))]
    for g, want in zip(got, [d1, d2, d3, d4]):
        assert np.allclose(g(x), want, rtol=1e-9, atol=1e-12)


def test_elementwise_grad_arguments_aux_and_transforms():
    x, y = np.array([0.5, 1.5]), np.array([2.0, -1.0])
    gx, gy = fd.elementwise_grad(lambda a, b: a * b ** 2, argnums=(0, 1))(x, y)
    assert np.allclose(gx, y ** 2) and np.allclose(gy, 2 * x * y)
    g, aux = fd.elementwise_grad(lambda a: (fnp.exp(a), "aux"), has_aux=True)(x)
    assert np.allclose(g, np.exp(x)) and aux == "aux"
    jitted = fd.jit(fd.elementwise_grad(fnp.sin))(x)
    batched = fd.vmap(fd.elementwise_grad(fnp.sin))(x.reshape(2, 1))
    assert np.allclose(jitted, np.cos(x)) and np.allclose(batched.ravel(), np.cos(x))
    assert np.allclose(fd.jvp(fd.elementwise_grad(fnp.sin), (x,), (np.ones(2),))[1], -np.sin(x))


def test_elementwise_grad_errors_name_the_transform():
    with pytest.raises(fd.errors.DifferentiationError, match="elementwise_grad.*one array"):
        fd.elementwise_grad(lambda a: (a, a))(np.ones(2))
    with pytest.raises(fd.errors.DifferentiationError, match="elementwise_grad.*floating-point"):
        fd.elementwise_grad(lambda a: a > 0)(np.ones(2))
    with pytest.raises(fd.FunctionalDiffError, match="elementwise_grad"):
        fd.elementwise_grad(lambda a: a * 1.0)(np.arange(3))
