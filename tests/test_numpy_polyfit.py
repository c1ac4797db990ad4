"""polyfit, polydiv, poly and roots: values and dtypes against numpy (float32
staying float32 where numpy widens it), derivatives (check_grads to order 2 in
both modes), vmap against a loop, jit against eager, numpy's functions
dispatching on tracers, where funcdiff differs from numpy on purpose, and the
errors for bad input, abstract static arguments and traced roots."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (ConcretizationError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.test_util import check_grads
from numpy_tables import Row, assert_matches, assert_vmap_equals_a_loop, both

RNG = np.random.default_rng(0)
F32 = "float32"

# sample points in [-1, 1], jittered so none repeat: a well-conditioned fit
X8 = np.linspace(-1.0, 1.0, 8) + 0.03 * RNG.standard_normal(8)
Y8 = np.sin(2.0 * X8) + 0.1 * RNG.standard_normal(8)
Y8x2 = np.stack([Y8, np.cos(X8)], axis=1)
W8 = RNG.uniform(0.5, 1.5, 8)
EXACT = np.polyval([0.5, -1.0, 2.0], X8)  # a quadratic: the degree-2 fit is exact
# The third derivatives of the cubic and higher fits in x are large enough that the
# default step's truncation error (eps**2 times them) exceeds the tolerance at order 2.
FIT_EPS = 1e-5



def _fit(deg, **kw):
    """polyfit of degree ``deg`` with settings ``kw``, in funcdiff and numpy."""
    return (lambda x, y, *w: fnp.polyfit(x, y, deg, **kw, **({"w": w[0]} if w else {})),
            lambda x, y, *w: np.polyfit(x, y, deg, **kw, **({"w": w[0]} if w else {})))


def _f32(*arrays):
    return tuple(a.astype(np.float32) for a in arrays)


ROWS = [
    # polyfit
    Row("polyfit-deg2", *_fit(2), (X8, Y8)),
    Row("polyfit-deg0", *_fit(0), (X8, Y8)),
    Row("polyfit-deg1", *_fit(1), (X8, Y8)),
    Row("polyfit-exact", *_fit(2), (X8, EXACT)),
    Row("polyfit-interpolating", *_fit(7), (X8, Y8)),
    Row("polyfit-weights", *_fit(3), (X8, Y8, W8), eps=FIT_EPS),
    Row("polyfit-2d-y", *_fit(2), (X8, Y8x2)),
    Row("polyfit-2d-y-weights", *_fit(2), (X8, Y8x2, W8)),
    Row("polyfit-rcond", *_fit(3, rcond=1e-10), (X8, Y8)),
    Row("polyfit-full", *_fit(2, full=True), (X8, Y8)),
    Row("polyfit-full-2d-y-weights", *_fit(3, full=True), (X8, Y8x2, W8), eps=FIT_EPS),
    Row("polyfit-full-no-residuals", *_fit(7, full=True), (X8, Y8), eps=FIT_EPS),
    Row("polyfit-cov", *_fit(2, cov=True), (X8, Y8)),
    Row("polyfit-cov-weights", *_fit(2, cov=True), (X8, Y8, W8)),
    Row("polyfit-cov-2d-y", *_fit(1, cov=True), (X8, Y8x2)),
    Row("polyfit-cov-unscaled", *_fit(2, cov="unscaled"), (X8, Y8)),
    Row("polyfit-cov-unscaled-2d-y", *_fit(2, cov="unscaled"), (X8, Y8x2)),
    Row("polyfit-f32", *_fit(2), _f32(X8, Y8), grad=False, dtype=F32),
    Row("polyfit-f32-weights", *_fit(2), _f32(X8, Y8, W8), grad=False, dtype=F32),
    Row("polyfit-f32-x-f64-y", *_fit(2), (X8.astype(np.float32), Y8), grad=False),
    Row("polyfit-full-f32-x-f64-y", *_fit(2, full=True), (X8.astype(np.float32), Y8),
        grad=False),
    Row("polyfit-int", *_fit(2), (np.arange(6), np.arange(6) ** 2 - 3), grad=False),
    # polydiv
    Row("polydiv", *both("polydiv"), (RNG.standard_normal(6), np.array([3.0, -1.0, 0.5]))),
    Row("polydiv-linear", *both("polydiv"), (RNG.standard_normal(4), np.array([3.0, 0.7]))),
    Row("polydiv-equal-degree", *both("polydiv"), (RNG.standard_normal(3),
                                                   np.array([3.0, 1.0, -2.0]))),
    Row("polydiv-constant-divisor", *both("polydiv"), (RNG.standard_normal(4), np.array([3.0]))),
    Row("polydiv-u-shorter", *both("polydiv"), (np.array([1.5, -2.0]),
                                                np.array([3.0, 1.0, 2.0]))),
    Row("polydiv-constants", *both("polydiv"), (np.array([2.0]), np.array([4.0]))),
    # a power-of-two leading coefficient: numpy keeps float32 rounding left in the leading
    # coefficients of the remainder (above its 1e-8 tolerance) and returns it longer
    Row("polydiv-f32", *both("polydiv"), _f32(RNG.standard_normal(5), np.array([2.0, 1.0])),
        grad=False),
    Row("polydiv-int", *both("polydiv"), (np.array([1, 3, 5]), np.array([1, 1])), grad=False),
    Row("polydiv-int-f32", *both("polydiv"), (np.array([1, 3, 5]),
                                              np.array([2.0, 1.0], np.float32)), grad=False),
    # poly
    Row("poly-roots", *both("poly"), (RNG.standard_normal(4),)),
    Row("poly-one-root", *both("poly"), (np.array([0.7]),)),
    Row("poly-repeated-roots", *both("poly"), (np.array([1.0, 1.0, -2.0]),)),
    Row("poly-matrix-2x2", *both("poly"), (RNG.standard_normal((2, 2)),)),
    Row("poly-matrix-4x4", *both("poly"), (RNG.standard_normal((4, 4)),)),
    Row("poly-symmetric-matrix", *both("poly"), (np.array([[2.0, 1.0], [1.0, 3.0]]),)),
    Row("poly-f32", *both("poly"), _f32(RNG.standard_normal(3)), grad=False),
    Row("poly-f32-matrix", *both("poly"), _f32(RNG.standard_normal((3, 3))), grad=False),
    Row("poly-int", *both("poly"), (np.array([1, -2, 3]),), grad=False),
    Row("poly-bool", *both("poly"), (np.array([True, False]),), grad=False),
    Row("poly-no-roots", *both("poly"), (np.zeros(0),), grad=False, vmap=False),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.RankWarning)  # the fits are well posed
        got = row.fn(*row.args)
    assert_matches(got, row.ref(*row.args), row.dtype, where=row.name)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_jit_equals_eager(row):
    assert_matches(fd.jit(row.fn)(*row.args), row.fn(*row.args), where=row.name)


VMAP_ROWS = [r for r in ROWS if r.vmap]


@pytest.mark.parametrize("row", VMAP_ROWS, ids=[r.name for r in VMAP_ROWS])
def test_vmap_equals_a_loop(row):
    assert_vmap_equals_a_loop(row.fn, row.args)


GRAD_ROWS = [r for r in ROWS if r.grad]


@pytest.mark.parametrize("row", GRAD_ROWS, ids=[r.name for r in GRAD_ROWS])
def test_derivatives_to_order_two(row):
    assert all(a.dtype == np.float64 for a in row.args)
    fn = row.fn
    if row.name.startswith("polyfit-full"):  # rank and rcond carry no derivative
        fn = lambda *a: tuple(row.fn(*a)[k] for k in (0, 1, 3))  # noqa: E731
    check_grads(fn, row.args, order=2, modes=("fwd", "rev"), eps=row.eps)


def test_the_functions_agree_with_calculus():
    # the gradient of the squared residual at the least-squares coefficients is zero,
    # so the fit's derivative in y is the pseudo-inverse: d p / d y = pinv(V)
    jacobian = fd.jacrev(lambda y: fnp.polyfit(X8, y, 3))(Y8)
    np.testing.assert_allclose(jacobian, np.linalg.pinv(np.vander(X8, 4)), atol=1e-10)
    # an exact fit moves with the data: y = p(x) for every x gives back p, so d p / d x = 0
    dx = fd.jacfwd(lambda x: fnp.polyfit(x, fnp.polyval(np.array([0.5, -1.0, 2.0]), x), 2))(X8)
    np.testing.assert_allclose(dx, 0.0, atol=1e-10)
    # u = q v + r, and the derivative of that identity in u is the identity
    u, v = RNG.standard_normal(6), np.array([2.0, -1.0, 0.5])
    q, r = fnp.polydiv(u, v)
    np.testing.assert_allclose(fnp.polyadd(fnp.polymul(q, v), r), u, atol=1e-12)
    ident = fd.jacfwd(lambda u: fnp.polyadd(fnp.polymul(fnp.polydiv(u, v)[0], v),
                                            fnp.polydiv(u, v)[1]))(u)
    np.testing.assert_allclose(ident, np.eye(6), atol=1e-12)
    # poly of the roots of p is p over its leading coefficient; the roots' polynomial
    # vanishes at each root
    z = np.array([-1.5, 0.25, 2.0])
    np.testing.assert_allclose(fnp.polyval(fnp.poly(z), z), 0.0, atol=1e-12)
    # the characteristic polynomial's derivative: d det(xI - A) / dA at x = 0 is
    # d (-1)^n det(A) / dA = (-1)^n det(A) A^-T
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(fd.grad(lambda a: fnp.poly(a)[-1])(a),
                               -np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10)


def test_numpy_functions_dispatch_on_tracers():
    got = fd.jit(lambda x, y, w: np.polyfit(x, y, 2, w=w))(X8, Y8, W8)
    np.testing.assert_allclose(got, np.polyfit(X8, Y8, 2, w=W8), rtol=1e-10)
    got = fd.jit(lambda u, v: np.polydiv(u, v))(np.array([1.0, 3.0, 5.0]), np.array([1.0, 1.0]))
    assert_matches(got, (np.array([1.0, 2.0]), np.array([3.0])))
    grad = fd.grad(lambda z: np.sum(np.poly(z)))(np.array([2.0, 3.0]))
    np.testing.assert_allclose(grad, [-(1 - 3.0), -(1 - 2.0)])  # p(1) = (1 - z0)(1 - z1)


def test_polydiv_keeps_the_remainder_length_static():
    # x^3 + x + 5 = x (x^2 + 1) + 5: the remainder 0 x + 5 has a zero leading coefficient,
    # which numpy strips and funcdiff keeps, so the shape does not depend on values
    u, v = np.array([1.0, 0.0, 1.0, 5.0]), np.array([1.0, 0.0, 1.0])
    q, r = fnp.polydiv(u, v)
    np.testing.assert_allclose(q, np.polydiv(u, v)[0])
    np.testing.assert_allclose(r, [0.0, 5.0])
    np.testing.assert_allclose(np.polydiv(u, v)[1], [5.0])
    assert_matches(fd.jit(fnp.polydiv)(u, v), (q, r), exact=True)


def test_rank_deficient_fits_warn_as_numpy_does():
    x = np.array([0.0, 0.0, 1.0, 1.0])  # two distinct points for three coefficients
    y = np.array([1.0, 2.0, 0.0, 1.0])
    with pytest.warns(np.exceptions.RankWarning, match="rank 2 for 3 coefficients"):
        got = fnp.polyfit(x, y, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        deficient = np.polyfit(x, y, 2)
    np.testing.assert_allclose(got, deficient, atol=1e-12)
    # the minimum-norm solution of an underdetermined fit, as numpy's
    with pytest.warns(np.exceptions.RankWarning):
        got = fnp.polyfit(X8[:3], Y8[:3], 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        want = np.polyfit(X8[:3], Y8[:3], 4)
    np.testing.assert_allclose(got, want, atol=1e-10)
    # full=True reports the rank instead of warning; numpy's residuals are then empty,
    # funcdiff's are the residuals of the minimum-norm solution (the rank may be traced)
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.RankWarning)
        c, residuals, rank, s, rcond = fnp.polyfit(x, y, 2, full=True)
    assert rank == 2 and rank.dtype == np.int32 and residuals.shape == (1,)
    np.testing.assert_allclose(residuals, [1.0])
    # under jit the rank is abstract: no warning, the same coefficients
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.RankWarning)
        np.testing.assert_allclose(fd.jit(lambda x, y: fnp.polyfit(x, y, 2))(x, y),
                                   deficient, atol=1e-12)


def test_deg_accepts_integral_numbers_and_needs_a_static_value():
    np.testing.assert_allclose(fnp.polyfit(X8, Y8, 2.0), np.polyfit(X8, Y8, 2), rtol=1e-10)
    np.testing.assert_allclose(fnp.polyfit(X8, Y8, np.int32(2)), np.polyfit(X8, Y8, 2),
                               rtol=1e-10)
    with pytest.raises(ConcretizationError, match="deg= as a Python int"):
        fd.jit(lambda x, y, d: fnp.polyfit(x, y, d))(X8, Y8, 2)
    out = fd.jit(lambda x, y, d: fnp.polyfit(x, y, d), static_argnums=2)(X8, Y8, 2)
    np.testing.assert_allclose(out, np.polyfit(X8, Y8, 2), rtol=1e-10)


def test_roots_is_numpys_on_concrete_values():
    for p in ([1.0, -3.0, 2.0], [1.0, 0.0, 1.0], [0.0, 0.0, 2.0, -4.0, 0.0], [5.0], [],
              np.array([1, 2, 3], np.int32), np.array([1.0, -1.0], np.float32)):
        assert_matches(fnp.roots(p), np.roots(p), where=str(p))
    np.testing.assert_allclose(fnp.roots(np.poly1d([1.0, -3.0, 2.0])), [2.0, 1.0])


_P3 = np.array([2.0, -3.0, -11.0, 6.0])  # 2 (x - 3)(x + 2)(x - 1/2): distinct real roots
_P2C = np.array([1.0, 2.0, 5.0])          # roots -1 +- 2i


@pytest.mark.parametrize("roots", [fnp.roots, np.roots], ids=["fnp", "np"])
@pytest.mark.parametrize("p", [_P3, _P2C], ids=["real-roots", "complex-roots"])
def test_roots_of_traced_values_are_eigenvalues_of_the_companion_matrix(roots, p):
    want = np.roots(p).astype(complex)
    np.testing.assert_allclose(fd.jit(roots)(p), want, rtol=1e-12)
    np.testing.assert_allclose(fd.vmap(roots)(np.stack([p, 2 * p])), [want, want], rtol=1e-12)
    # implicit derivative of a simple root: dr/dp[i] = -r**(n-i) / p'(r)
    n = len(p) - 1
    implicit = -want[:, None] ** np.arange(n, -1, -1) / np.polyval(np.polyder(p), want)[:, None]
    jac = fd.jacfwd(lambda q: fnp.stack([fnp.real(roots(q)), fnp.imag(roots(q))]))(p)
    np.testing.assert_allclose(jac[0] + 1j * jac[1], implicit, atol=1e-10)
    rev = fd.jacrev(lambda q: fnp.stack([fnp.real(roots(q)), fnp.imag(roots(q))]))(p)
    np.testing.assert_allclose(rev, jac, atol=1e-10)
    _, tangent = fd.jvp(roots, (p,), (p[::-1].copy(),))
    np.testing.assert_allclose(tangent, implicit @ p[::-1], atol=1e-10)


ERRORS = [
    ("polyfit-empty-x", lambda: fnp.polyfit(np.zeros(0), np.zeros(0), 1), ShapeError,
     "non-empty 1-D"),
    ("polyfit-2d-x", lambda: fnp.polyfit(np.ones((2, 2)), np.ones(2), 1), ShapeError,
     "non-empty 1-D"),
    ("polyfit-y-length", lambda: fnp.polyfit(X8, Y8[:5], 1), ShapeError, r"y of shape \(8,\)"),
    ("polyfit-3d-y", lambda: fnp.polyfit(X8, np.ones((8, 1, 1)), 1), ShapeError,
     "one column per data set"),
    ("polyfit-w-shape", lambda: fnp.polyfit(X8, Y8, 1, w=W8[:3]), ShapeError,
     "weights w as a 1-D array"),
    ("polyfit-negative-deg", lambda: fnp.polyfit(X8, Y8, -1), InvalidArgumentError,
     "non-negative int, got -1"),
    ("polyfit-fractional-deg", lambda: fnp.polyfit(X8, Y8, 1.5), InvalidArgumentError,
     "non-negative int, got 1.5"),
    ("polyfit-rcond", lambda: fnp.polyfit(X8, Y8, 1, rcond="small"), InvalidArgumentError,
     "rcond= must be a static number"),
    ("polyfit-cov-too-few-points", lambda: fnp.polyfit(X8[:3], Y8[:3], 2, cov=True),
     ShapeError, "more points than coefficients"),
    ("polydiv-empty", lambda: fnp.polydiv(np.ones(3), np.zeros(0)), ShapeError, "v is empty"),
    ("polydiv-2d", lambda: fnp.polydiv(np.ones((2, 2)), np.ones(2)), ShapeError, "u as a 1-D"),
    ("polydiv-poly1d", lambda: fnp.polydiv(np.poly1d([1.0, 2.0]), np.ones(2)),
     UnsupportedNumpyError, "u.coeffs"),
    ("poly-non-square", lambda: fnp.poly(np.ones((2, 3))), ShapeError,
     "non-empty square matrix"),
    ("poly-3d", lambda: fnp.poly(np.ones((2, 2, 2))), ShapeError, "non-empty square matrix"),
    ("roots-2d", lambda: fnp.roots(np.ones((2, 2))), ShapeError, "1-D array"),
]


@pytest.mark.parametrize("call,error,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
