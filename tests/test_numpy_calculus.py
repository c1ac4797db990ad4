"""Tests of funcdiff.numpy's calculus on samples: trapezoid, gradient, interp, cov, corrcoef.

One table row per (function, input kind). Every row is compared with numpy
(values and result dtype), run under jit against eager, vmapped over a stacked
batch of its arguments against a Python loop, and, for float64 rows marked
differentiable, gradient-checked to order 2 in both modes. A second table holds
the bad inputs and the errors they must raise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, InvalidArgumentError,
                             ShapeError, UnsupportedNumpyError)
from funcdiff.test_util import check_grads
from numpy_tables import Row, assert_matches, both, transform_tests

RNG = np.random.default_rng(0)



def _normal(*shape, dtype="f8"):
    return RNG.standard_normal(shape).astype(dtype)


def _increasing(n, dtype="f8"):
    return np.cumsum(RNG.uniform(0.3, 1.5, n)).astype(dtype)




XP = np.array([-1.0, 0.0, 0.5, 2.0, 3.5])
XP_DUPLICATE = np.array([0.0, 1.0, 1.0, 2.0])
X_OFF_KNOTS = np.array([-0.7, 0.2, 0.9, 1.3, 3.1, 0.45])  # inside, off the knots
X_EVERYWHERE = np.array([-3.0, -1.0, 0.0, 0.25, 0.5, 2.0, 3.0, 3.5, 9.0])  # knots, outside


def _interp_fp(**kw):
    """interp at fixed sample points ``XP``, differentiable in ``x`` and ``fp``."""
    return (lambda x, fp: fnp.interp(x, XP, fp, **kw)), (lambda x, fp: np.interp(x, XP, fp, **kw))


ROWS = [
    # trapezoid
    Row("trapezoid-1d", *both("trapezoid"), (_normal(7),)),
    Row("trapezoid-2d-axis0-dx", *both("trapezoid", dx=0.5, axis=0), (_normal(4, 3),)),
    Row("trapezoid-x-1d", *both("trapezoid", axis=1), (_normal(2, 5, 3), _increasing(5))),
    Row("trapezoid-x-nd", *both("trapezoid", axis=0),
        (_normal(4, 3), np.cumsum(RNG.uniform(0.2, 1.0, (4, 3)), axis=0))),
    Row("trapezoid-dx-array", lambda y, dx: fnp.trapezoid(y, dx=dx),
        lambda y, dx: np.trapezoid(y, dx=dx), (_normal(3, 6), np.array(0.3))),
    Row("trapezoid-f32", *both("trapezoid"), (_normal(3, 5, dtype="f4"),), grad=False),
    Row("trapezoid-f32-x-f64", *both("trapezoid"), (_normal(5, dtype="f4"), _increasing(5)),
        grad=False),
    Row("trapezoid-int", *both("trapezoid"), (np.arange(12).reshape(3, 4),), grad=False),
    Row("trapezoid-int-x-int", *both("trapezoid"), (np.arange(5) ** 2, np.array([0, 1, 3, 4, 8])),
        grad=False),
    Row("trapezoid-one-sample", *both("trapezoid"), (_normal(2, 1),)),
    Row("trapezoid-empty", *both("trapezoid"), (np.zeros((3, 0)),), grad=False),
    # gradient
    Row("gradient-1d", *both("gradient"), (_normal(6),)),
    Row("gradient-1d-h", *both("gradient", edge_order=2), (_normal(6),)),
    Row("gradient-spacing-scalar", lambda f: fnp.gradient(f, 0.3),
        lambda f: np.gradient(f, 0.3), (_normal(6),)),
    Row("gradient-spacing-traced", lambda f, h: fnp.gradient(f, h),
        lambda f, h: np.gradient(f, h), (_normal(5), np.array(0.7))),
    Row("gradient-coords-e1", *both("gradient"), (_normal(7), _increasing(7))),
    Row("gradient-coords-e2", *both("gradient", edge_order=2), (_normal(7), _increasing(7))),
    Row("gradient-2d-all-axes", lambda f: fnp.gradient(f, 2.0, edge_order=2),
        lambda f: np.gradient(f, 2.0, edge_order=2), (_normal(4, 5),)),
    Row("gradient-2d-mixed-spacing", lambda f, y: fnp.gradient(f, 0.5, y),
        lambda f, y: np.gradient(f, 0.5, y), (_normal(3, 5), _increasing(5))),
    Row("gradient-3d-axis-tuple", *both("gradient", axis=(2, 0)), (_normal(3, 2, 4),)),
    Row("gradient-3d-axis-negative", lambda f, x: fnp.gradient(f, x, axis=-2, edge_order=2),
        lambda f, x: np.gradient(f, x, axis=-2, edge_order=2), (_normal(2, 4, 3), _increasing(4))),
    Row("gradient-two-samples", *both("gradient"), (_normal(2, 3),)),
    Row("gradient-three-samples-e2", *both("gradient", edge_order=2), (_normal(3),)),
    Row("gradient-f32", *both("gradient", edge_order=2), (_normal(4, 3, dtype="f4"),),
        grad=False),
    Row("gradient-f32-coords-f64", *both("gradient"), (_normal(5, dtype="f4"), _increasing(5)),
        grad=False),
    Row("gradient-int", *both("gradient"), (np.array([1, 4, 9, 25, 16]),), grad=False),
    Row("gradient-int-coords", *both("gradient", edge_order=2),
        (_normal(5), np.array([0, 1, 3, 4, 7])), grad=False),
    # interp
    Row("interp-inside", *_interp_fp(), (X_OFF_KNOTS, _normal(5))),
    Row("interp-knots-and-outside", *_interp_fp(), (X_EVERYWHERE, _normal(5)), grad=False),
    Row("interp-left-right", *_interp_fp(left=-9.0, right=7.0),
        (np.array([-2.0, 0.3, 4.0]), _normal(5)), grad=False),
    Row("interp-x-2d", *_interp_fp(), (X_OFF_KNOTS.reshape(2, 3), _normal(5))),
    Row("interp-scalar-x", *_interp_fp(), (np.array(0.3), _normal(5))),
    Row("interp-period", *_interp_fp(period=2.5), (np.array([-4.0, -0.3, 0.7, 1.9, 7.1]),
                                                    _normal(5)), grad=False),
    Row("interp-period-smooth", *_interp_fp(period=4.75),
        (np.array([-4.1, -0.3, 0.7, 1.9, 7.1]), _normal(5))),
    Row("interp-one-point", lambda x, fp: fnp.interp(x, np.array([0.5]), fp),
        lambda x, fp: np.interp(x, np.array([0.5]), fp), (X_EVERYWHERE, _normal(1)), grad=False),
    Row("interp-duplicate-xp", lambda x, fp: fnp.interp(x, XP_DUPLICATE, fp),
        lambda x, fp: np.interp(x, XP_DUPLICATE, fp),
        (np.array([-1.0, 0.5, 1.0, 1.5, 2.0, 3.0]), _normal(4)), grad=False),
    Row("interp-nan-x", *_interp_fp(), (np.array([np.nan, 0.3]), np.ones(5)), grad=False),
    Row("interp-f32", fnp.interp, np.interp,
        (X_EVERYWHERE.astype("f4"), XP.astype("f4"), _normal(5, dtype="f4")), grad=False,
        dtype="float32"),
    Row("interp-f32-with-f64-points", *_interp_fp(),
        (X_EVERYWHERE.astype("f4"), _normal(5, dtype="f4")), grad=False),
    Row("interp-int", lambda x, xp, fp: fnp.interp(x, xp, fp), np.interp,
        (np.array([-1, 0, 1, 2, 5]), np.array([0, 2, 4]), np.array([3, 7, 1])), grad=False),
    # cov
    Row("cov-2d", *both("cov"), (_normal(3, 6),)),
    Row("cov-rowvar-false", *both("cov", rowvar=False), (_normal(6, 3),)),
    Row("cov-bias", *both("cov", bias=True), (_normal(2, 5),)),
    Row("cov-ddof", *both("cov", ddof=2), (_normal(2, 5),)),
    Row("cov-with-y", *both("cov"), (_normal(2, 5), _normal(5))),
    Row("cov-with-y-rowvar-false", *both("cov", rowvar=False), (_normal(5, 2), _normal(5, 3))),
    Row("cov-1d", *both("cov"), (_normal(6),)),
    Row("cov-f32", *both("cov"), (_normal(3, 4, dtype="f4"),), grad=False, dtype="float32"),
    Row("cov-int", *both("cov"), (np.array([[1, 2, 4], [0, 5, 5]]),), grad=False),
    Row("cov-dtype-f32", *both("cov", dtype=np.float32), (_normal(2, 4),), grad=False),
    # corrcoef
    Row("corrcoef-2d", *both("corrcoef"), (_normal(3, 6),)),
    Row("corrcoef-rowvar-false", *both("corrcoef", rowvar=False), (_normal(6, 2),)),
    Row("corrcoef-with-y", *both("corrcoef"), (_normal(5), _normal(5))),
    Row("corrcoef-1d", *both("corrcoef"), (_normal(4),), grad=False),
    Row("corrcoef-f32", *both("corrcoef"), (_normal(2, 5, dtype="f4"),), grad=False,
        dtype="float32"),
    Row("corrcoef-int", *both("corrcoef"), (np.array([[1, 2, 4, 3], [0, 5, 5, 1]]),),
        grad=False),
]






@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    assert_matches(row.fn(*row.args), row.ref(*row.args), row.dtype)


test_jit_equals_eager, test_vmap_equals_a_loop, test_derivatives_to_order_two = \
    transform_tests(ROWS)


def test_derivatives_have_the_closed_forms():
    # d/dfp of interp is the hat-function weights; d/dx the slope of the interval
    fp = np.array([0.0, 2.0, 3.0])
    xp = np.array([0.0, 1.0, 3.0])
    np.testing.assert_allclose(fd.grad(lambda f: fnp.interp(0.25, xp, f))(fp), [0.75, 0.25, 0])
    assert fd.grad(lambda x: fnp.interp(x, xp, fp))(1.0) == 0.5  # right of the knot
    assert fd.grad(lambda x: fnp.interp(x, xp, fp))(3.0) == 0.5  # at xp[-1]: from the left
    assert fd.grad(lambda x: fnp.interp(x, xp, fp))(4.0) == 0.0
    # repeated end points make zero-width intervals, which must not make NaN derivatives
    xp, x = np.array([0.0, 0.0, 1.0, 2.0, 2.0]), np.array([-1.0, 0.0, 0.5, 2.0, 3.0])
    g = fd.jacrev(lambda f: fnp.interp(x, xp, f))(np.arange(5.0))
    np.testing.assert_array_equal(g, [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0.5, 0.5, 0, 0],
                                      [0, 0, 0, 0, 1], [0, 0, 0, 0, 1]])
    h = fd.hessian(lambda v: fnp.sum(fnp.interp(v, xp, np.array([1.0, 1, 2, 3, 3])) ** 2))(x)
    np.testing.assert_array_equal(h, np.diag([0.0, 2.0, 2.0, 0.0, 0.0]))
    # trapezoid is linear in y with weights dx/2 at the ends and dx inside
    np.testing.assert_allclose(fd.grad(lambda y: fnp.trapezoid(y, dx=2.0))(np.ones(4)),
                               [1.0, 2.0, 2.0, 1.0])
    # the derivative of the variance of one variable is 2 (x - mean) / (n - 1)
    x = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(fd.grad(fnp.cov)(x), 2 * (x - x.mean()) / 2)


@pytest.mark.parametrize("fn", [
    lambda y: fnp.trapezoid(y, dx=0.1), lambda f: fnp.gradient(f, 0.3, edge_order=2),
    lambda f: fnp.gradient(f, axis=0), lambda v: fnp.interp(v, v, v, period=2.0),
    fnp.cov, fnp.corrcoef], ids=["trapezoid", "gradient-e2", "gradient", "interp", "cov",
                                 "corrcoef"])
def test_float32_programs_compute_in_float32(fn):
    jaxpr = str(fd.make_jaxpr(fn)(_normal(3, 4, dtype="f4") if fn in (fnp.cov, fnp.corrcoef)
                                  else np.sort(_normal(5, dtype="f4"))))
    assert "f64" not in jaxpr, jaxpr


def test_interp_is_exact_at_the_sample_points():
    # the last point is the one a slope times a width would round (in about 40% of cases)
    for _ in range(20):
        xp, fp = _increasing(6) * 0.1, _normal(6)
        np.testing.assert_array_equal(fnp.interp(xp, xp, fp), fp)
        np.testing.assert_array_equal(fd.jit(fnp.interp)(xp, xp, fp), fp)


def test_numpy_functions_on_tracers_dispatch_here():
    def f(y):
        return (np.trapezoid(y) + np.sum(np.gradient(y) ** 2)
                + np.sum(np.interp(np.array([0.5, 1.5]), np.arange(3.0), y))
                + np.sum(np.cov(np.stack([y, y ** 2]))) + np.sum(np.corrcoef(y, y ** 3)))
    y = np.array([1.0, 2.0, 5.0])
    check_grads(f, (y,), order=1)
    np.testing.assert_allclose(fd.jit(f)(y), f(y))


def test_cov_without_degrees_of_freedom_and_without_variables_follow_numpy():
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = fnp.cov(np.array([[1.0, 2.0], [0.0, 3.0]]), ddof=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.cov(np.array([[1.0, 2.0], [0.0, 3.0]]), ddof=2)
    np.testing.assert_array_equal(got, want)
    assert fnp.cov(np.zeros((0, 3))).shape == (0, 0)
    assert fnp.cov(np.array([1.0, 2.0]), ddof=np.float64(1.0)) == np.cov([1.0, 2.0])


ERRORS = [
    ("trapezoid-0d", lambda: fnp.trapezoid(np.array(1.0)), AxisError, "0-d"),
    ("trapezoid-axis", lambda: fnp.trapezoid(np.ones((2, 3)), axis=2), AxisError, "out of range"),
    ("trapezoid-x-length", lambda: fnp.trapezoid(np.ones(4), np.arange(3.0)), ShapeError,
     "one sample point per element"),
    ("gradient-bool", lambda: fnp.gradient(np.array([True, False])), DTypeError, "astype"),
    ("gradient-edge-order", lambda: fnp.gradient(np.ones(5), edge_order=3),
     InvalidArgumentError, "edge_order must be 1 or 2"),
    ("gradient-too-short", lambda: fnp.gradient(np.ones(2), edge_order=2), ShapeError,
     "at least edge_order"),
    ("gradient-spacings-count", lambda: fnp.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0),
     InvalidArgumentError, "one per differentiated axis"),
    ("gradient-coords-length", lambda: fnp.gradient(np.ones(4), np.arange(3.0)), ShapeError,
     "coordinates of length 4"),
    ("gradient-coords-2d", lambda: fnp.gradient(np.ones(4), np.ones((4, 1))), ShapeError,
     "scalar or 1-D"),
    ("gradient-repeated-axis", lambda: fnp.gradient(np.ones((3, 3)), axis=(0, -2)), AxisError,
     "repeated axis"),
    ("interp-xp-2d", lambda: fnp.interp(0.5, np.ones((2, 2)), np.ones((2, 2))), ShapeError,
     "1-D xp and fp"),
    ("interp-lengths", lambda: fnp.interp(0.5, np.arange(3.0), np.ones(2)), ShapeError,
     "one value fp per sample point"),
    ("interp-empty", lambda: fnp.interp(0.5, np.ones(0), np.ones(0)), ShapeError, "empty"),
    ("interp-period-zero", lambda: fnp.interp(0.5, XP, XP, period=0), InvalidArgumentError,
     "non-zero"),
    ("cov-fweights", lambda: fnp.cov(np.ones((2, 3)), fweights=np.ones(3)),
     UnsupportedNumpyError, "fweights"),
    ("cov-aweights", lambda: fnp.cov(np.ones((2, 3)), aweights=np.ones(3)),
     UnsupportedNumpyError, "aweights"),
    ("cov-3d", lambda: fnp.cov(np.ones((2, 3, 4))), ShapeError, "1-D or 2-D"),
    ("cov-y-observations", lambda: fnp.cov(np.ones((2, 3)), np.ones(4)), ShapeError,
     "as many observations"),
    ("cov-ddof-fraction", lambda: fnp.cov(np.ones((2, 3)), ddof=0.5), InvalidArgumentError,
     "ddof must be an integer"),
    ("cov-ddof-traced", lambda: fd.jit(lambda m, d: fnp.cov(m, ddof=d))(np.ones((2, 3)), 1),
     ConcretizationError, "static_argnums"),
    ("cov-int-dtype", lambda: fnp.cov(np.ones((2, 3)), dtype=np.int64), DTypeError,
     "float dtype"),
    ("corrcoef-3d", lambda: fnp.corrcoef(np.ones((2, 3, 4))), ShapeError, "1-D or 2-D"),
]


@pytest.mark.parametrize("call, error, match", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_bad_inputs_raise_teaching_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
