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
