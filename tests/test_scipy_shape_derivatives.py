"""Derivatives of gammainc/gammaincc in a, betainc in a and b, and zeta in its exponent.

Checked against central differences of scipy's own values (the derivative is
ours, the function scipy's), against finite differences of our own first
derivatives to order 2 in both modes, across transforms (jit, vmap, jacfwd vs
jacrev), at the edges of each domain, and in float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import funcdiff as fd
from funcdiff.scipy import special as fs
from funcdiff.test_util import check_grads



def _lower_gamma(args):
    """P(a, x) from scipy, or -Q(a, x) (same derivative) where P is near 1 and loses digits."""
    return sp.gammainc if sp.gammainc(*args) < 0.5 else lambda a, x: -sp.gammaincc(a, x)


def _upper_gamma(args):
    lower = _lower_gamma(args)
    return lambda a, x: -lower(a, x)


def _beta(args):
    near_one = sp.betainc(*args) >= 0.5
    return (lambda a, b, x: -sp.betainc(b, a, 1 - x)) if near_one else sp.betainc


def _zeta(args):
    """Riemann's zeta as zetac = zeta - 1 (which keeps its digits for large x); Hurwitz's as is."""
    return sp.zetac if len(args) == 1 else sp.zeta


# (label, funcdiff function, reference(args) -> the scipy function to difference, argument, points: each a tuple of arguments)
FIRST = [
    ("gammainc_a", fs.gammainc, _lower_gamma, 0,
     [(0.1, 0.05), (0.5, 0.7), (1.0, 2.0), (3.0, 1.0), (10.0, 15.0), (50.0, 45.0),
      (200.0, 210.0), (1e4, 1e4), (2.5, 30.0)]),
    ("gammaincc_a", fs.gammaincc, _upper_gamma, 0,
     [(0.5, 0.7), (3.0, 1.0), (10.0, 15.0), (200.0, 190.0), (2.5, 30.0)]),
    ("betainc_a", fs.betainc, _beta, 0,
     [(0.5, 0.7, 0.3), (2.0, 3.0, 0.6), (5.0, 1.5, 0.95), (30.0, 40.0, 0.4),
      (0.2, 0.3, 0.01), (100.0, 200.0, 0.33)]),
    ("betainc_b", fs.betainc, _beta, 1,
     [(0.5, 0.7, 0.3), (2.0, 3.0, 0.6), (5.0, 1.5, 0.95), (30.0, 40.0, 0.4),
      (0.2, 0.3, 0.99), (100.0, 200.0, 0.33)]),
    ("hurwitz_zeta_x", fs.zeta, _zeta, 0,
     [(1.5, 0.5), (2.0, 1.0), (4.0, 3.0), (10.0, 0.2), (1.1, 7.0)]),
    ("riemann_zeta_x", fs.zeta, _zeta, 0,
     [(-7.5,), (-3.5,), (-0.5,), (0.0,), (0.5,), (0.99,), (1.01,), (2.0,), (5.0,), (40.0,)]),
]


def _central(f, args, argnum):
    """Fourth-order central difference of scipy's f in argument argnum."""
    h = 1e-4 * max(1.0, abs(args[argnum]))

    def at(shift):
        moved = list(args)
        moved[argnum] += shift
        return f(*moved)
    return (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h)


@pytest.mark.parametrize("label, f, ref, argnum, points", FIRST, ids=[row[0] for row in FIRST])
def test_first_derivative_matches_scipys_values(label, f, ref, argnum, points):
    for args in points:
        got = float(fd.grad(f, argnums=argnum)(*args))
        want = _central(ref(args), args, argnum)
        np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-300, err_msg=f"{label}{args}")


SECOND = [
    (fs.gammainc, (2.5, 1.7)), (fs.gammainc, (4.0, 9.0)), (fs.gammaincc, (0.7, 3.2)),
    (fs.betainc, (2.3, 1.6, 0.4)), (fs.betainc, (3.0, 4.0, 0.8)),
    (fs.zeta, (3.5, 1.4)), (fs.zeta, (2.5,)), (fs.zeta, (-1.5,)),
]


@pytest.mark.parametrize("f, args", SECOND)
def test_second_order_in_both_modes(f, args):
    check_grads(f, tuple(np.float64(a) for a in args), order=2, modes=("fwd", "rev"))


def test_betainc_mixed_partials_agree():
    """d2/dadb in either order, and the x-derivative of the a-derivative against differences."""
    a, b, x = 2.0, 3.0, 0.45
    hess = fd.hessian(fs.betainc, argnums=(0, 1, 2))(a, b, x)
    np.testing.assert_allclose(hess[0][1], hess[1][0], rtol=1e-12)
    np.testing.assert_allclose(hess[0][2], hess[2][0], rtol=1e-12)
    h = 1e-5
    da = fd.grad(fs.betainc, argnums=0)
    np.testing.assert_allclose(hess[0][2], (da(a, b, x + h) - da(a, b, x - h)) / (2 * h),
                               rtol=1e-6)


def test_transforms_agree():
    a = np.array([0.5, 2.0, 7.0, 30.0])
    x = np.array([0.3, 2.5, 5.0, 31.0])
    g = fd.grad(lambda a, x: fs.gammainc(a, x).sum(), argnums=(0, 1))
    eager = g(a, x)
    jitted = fd.jit(g)(a, x)
    looped = np.array([fd.grad(fs.gammainc)(ai, xi) for ai, xi in zip(a, x)])
    mapped = fd.vmap(fd.grad(fs.gammainc))(a, x)
    for got in (jitted[0], mapped):
        np.testing.assert_allclose(got, eager[0], rtol=1e-13)
    np.testing.assert_allclose(looped, eager[0], rtol=1e-13)
    p = np.array([1.5, 2.0, 0.7])
    q = np.array([0.3, 4.0, 2.0])
    y = np.array([0.2, 0.5, 0.9])
    forward = fd.jacfwd(lambda p: fs.betainc(p, q, y))(p)
    reverse = fd.jacrev(lambda p: fs.betainc(p, q, y))(p)
    np.testing.assert_allclose(forward, reverse, rtol=1e-13)
    assert np.count_nonzero(forward - np.diag(np.diag(forward))) == 0


def test_edges_of_the_domains():
    with np.errstate(all="ignore"):
        ga = fd.grad(fs.gammainc)
        assert float(ga(3.0, 0.0)) == 0.0 and float(ga(3.0, np.inf)) == 0.0
        for a, x in ((-1.0, 1.0), (2.0, -1.0), (np.nan, 1.0)):
            assert np.isnan(float(ga(a, x)))
        gb = fd.grad(fs.betainc, argnums=(0, 1))
        for x in (0.0, 1.0):
            assert [float(v) for v in gb(2.0, 3.0, x)] == [0.0, 0.0]
        for a, b, x in ((-1.0, 2.0, 0.5), (2.0, 0.0, 0.5), (2.0, 2.0, 1.5)):
            assert all(np.isnan(float(v)) for v in gb(a, b, x))
        gz = fd.grad(fs.zeta)
        assert np.isnan(float(gz(1.0))) and np.isnan(float(gz(0.5, 1.0)))


def test_float32_stays_float32():
    a, x = np.float32(2.5), np.float32(1.5)
    g = fd.grad(fs.gammainc)(a, x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, fd.grad(fs.gammainc)(2.5, 1.5), rtol=1e-6)
    assert fd.grad(fs.betainc, argnums=1)(np.float32(2), np.float32(3),
                                          np.float32(0.4)).dtype == np.float32


def test_parameter_derivative_cards_refuse_bad_orders():
    from funcdiff.errors import InvalidArgumentError
    from funcdiff.primitives import scipy_shape_derivatives as D
    with pytest.raises(InvalidArgumentError, match="gammainc_da needs order >= 1"):
        fd.jit(lambda a, x: D.gammainc_da(a, x, order=0))(1.0, 1.0)
    with pytest.raises(InvalidArgumentError, match="betainc_dab needs orders"):
        fd.jit(lambda a, b, x: D.betainc_dab(a, b, x, orders=(1,)))(1.0, 1.0, 0.5)


def _stats_cases():
    import scipy.stats as st
    from funcdiff.scipy import stats as T
    return [  # (ours, scipy's, arguments, index of the shape argument)
        (T.gamma.cdf, st.gamma.cdf, (1.7, 2.5), 1), (T.gamma.logsf, st.gamma.logsf, (1.7, 2.5), 1),
        (T.chi2.cdf, st.chi2.cdf, (2.2, 3.0), 1), (T.chi2.logcdf, st.chi2.logcdf, (2.2, 3.0), 1),
        (T.chi2.sf, st.chi2.sf, (2.2, 3.0), 1),
        (T.beta.cdf, st.beta.cdf, (0.3, 2.0, 3.0), 1), (T.beta.logsf, st.beta.logsf, (0.3, 2.0, 3.0), 2),
        (T.beta.sf, st.beta.sf, (0.3, 2.0, 3.0), 2),
        (T.nbinom.cdf, st.nbinom.cdf, (2.0, 5.5, 0.3), 1),
        (T.nbinom.logsf, st.nbinom.logsf, (2.0, 5.5, 0.3), 1),
    ]


@pytest.mark.parametrize("case", range(10))
def test_distribution_shape_derivatives_of_cdfs(case):
    ours, theirs, args, argnum = _stats_cases()[case]
    got = float(fd.grad(ours, argnums=argnum)(*args))
    np.testing.assert_allclose(got, _central(theirs, args, argnum), rtol=1e-7)
    forward = float(fd.jacfwd(ours, argnums=argnum)(*args))
    np.testing.assert_allclose(forward, got, rtol=1e-12)
