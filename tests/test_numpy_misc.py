"""Tests of copy, geomspace, block, broadcast_shapes, diag_indices, ix_, nancumsum,
nancumprod and unwrap of funcdiff.numpy.

One table row per (function, input kind). Every row is compared with numpy
(values and result dtype), run under jit against eager and vmapped over a
stacked batch of its arguments against a Python loop where the function
traces, and, for float64 rows marked differentiable, gradient-checked to order
2 in both modes. A second table holds the bad inputs and the errors they must
raise.
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
from numpy_tables import Row, assert_matches, assert_vmap_equals_a_loop, both

RNG = np.random.default_rng(1)



def _normal(*shape, dtype="f8"):
    return RNG.standard_normal(shape).astype(dtype)


def _with_nans(*shape, dtype="f8"):
    x = _normal(*shape, dtype=dtype)
    x.flat[::3] = np.nan
    return x


def _phases(*shape, dtype="f8"):
    """Phases that wander and wrap: running sums of steps up to 4 (jumps near pi are rare)."""
    return np.cumsum(RNG.uniform(-4.0, 4.0, shape), axis=-1).astype(dtype)




def _block_2x2(xp):
    return lambda a, b, c, d: xp.block([[a, b], [c, d]])


ROWS = [
    # copy
    Row("copy-2d", *both("copy"), (_normal(2, 3),)),
    Row("copy-f32", *both("copy"), (_normal(4, dtype="f4"),), grad=False),
    Row("copy-int", *both("copy"), (np.arange(5),), grad=False),
    Row("copy-0d", *both("copy"), (np.array(2.5),)),
    # geomspace
    Row("geomspace-scalars", *both("geomspace", num=5), (np.array(1.5), np.array(40.0))),
    Row("geomspace-negative", *both("geomspace", num=4), (np.array(-2.0), np.array(-50.0))),
    Row("geomspace-decreasing", *both("geomspace", num=6), (np.array(9.0), np.array(0.3))),
    Row("geomspace-no-endpoint", *both("geomspace", num=4, endpoint=False),
        (np.array(1.0), np.array(16.0))),
    Row("geomspace-arrays-axis1", *both("geomspace", num=3, axis=1),
        (np.array([1.0, 2.0]), np.array([10.0, 20.0]))),
    Row("geomspace-broadcast-axis-1", *both("geomspace", num=5, axis=-1),
        (np.array([1.0, -2.0]), np.array([[10.0, -3.0], [30.0, -0.5]]))),
    Row("geomspace-opposite-signs", *both("geomspace", num=4), (np.array(-1.0), np.array(8.0)),
        grad=False, traced=False),
    Row("geomspace-num1", *both("geomspace", num=1), (np.array(2.0), np.array(10.0))),
    Row("geomspace-num0", *both("geomspace", num=0), (np.array(2.0), np.array(10.0)),
        grad=False),
    Row("geomspace-f32", *both("geomspace", num=5),
        (np.float32(1.0) * np.ones(2, "f4"), np.array([8.0, 30.0], "f4")), grad=False,
        dtype="float32"),
    Row("geomspace-int", *both("geomspace", num=4), (np.array(1), np.array(1000)), grad=False),
    Row("geomspace-dtype-int", *both("geomspace", num=3, dtype=int),
        (np.array(1.0), np.array(10.0)), grad=False),
    Row("geomspace-dtype-f32", *both("geomspace", num=3, dtype=np.float32),
        (np.array(1.0), np.array(10.0)), grad=False),
    # block
    Row("block-1d", lambda a, b: fnp.block([a, b]), lambda a, b: np.block([a, b]),
        (_normal(3), _normal(2))),
    Row("block-2x2", _block_2x2(fnp), _block_2x2(np),
        (_normal(2, 2), _normal(2, 1), _normal(1, 2), _normal(1, 1))),
    Row("block-rows-of-different-splits", lambda a, b, c: fnp.block([[a, b], [c]]),
        lambda a, b, c: np.block([[a, b], [c]]), (_normal(2, 2), _normal(2, 1), _normal(1, 3))),
    Row("block-depth-below-rank", lambda a, b: fnp.block([a, b]),
        lambda a, b: np.block([a, b]), (_normal(2, 3, 4), _normal(2, 3, 1))),
    Row("block-rank-below-depth", lambda a, b: fnp.block([[[a]], [[b]]]),
        lambda a, b: np.block([[[a]], [[b]]]), (_normal(2), _normal(2))),
    Row("block-scalar-blocks", lambda a: fnp.block([[a, 1.0], [2.0, 3.0]]),
        lambda a: np.block([[a, 1.0], [2.0, 3.0]]), (np.array(0.5),)),
    Row("block-bare-array", *both("block"), (_normal(2, 2),)),
    Row("block-f32-with-python-float", lambda a: fnp.block([a, 1.0]),
        lambda a: np.block([a, 1.0]), (_normal(2, dtype="f4"),), grad=False),
    Row("block-f32", lambda a, b: fnp.block([a, b]), lambda a, b: np.block([a, b]),
        (_normal(2, dtype="f4"), _normal(3, dtype="f4")), grad=False),
    Row("block-int-and-float", lambda a, b: fnp.block([[a], [b]]),
        lambda a, b: np.block([[a], [b]]), (np.arange(3), _normal(3)), grad=False),
    # diag_indices (shapes only: numpy arrays, nothing to trace)
    Row("diag_indices-2d", lambda: fnp.diag_indices(4), lambda: np.diag_indices(4), (),
        grad=False, traced=False),
    Row("diag_indices-3d", lambda: fnp.diag_indices(2, ndim=3),
        lambda: np.diag_indices(2, ndim=3), (), grad=False, traced=False),
    Row("diag_indices-empty", lambda: fnp.diag_indices(0), lambda: np.diag_indices(0), (),
        grad=False, traced=False),
    # ix_
    Row("ix-two-int", lambda i, j: fnp.ix_(i, j), lambda i, j: np.ix_(i, j),
        (np.array([0, 2]), np.array([1, 0, 1])), grad=False),
    Row("ix-int32", lambda i: fnp.ix_(i), lambda i: np.ix_(i), (np.array([3, 1], "i4"),),
        grad=False),
    Row("ix-three", lambda i, j, k: fnp.ix_(i, j, k), lambda i, j, k: np.ix_(i, j, k),
        (np.array([1]), np.array([0, 1]), np.array([2, 0, 1])), grad=False),
    Row("ix-bool-mask", lambda i, m: fnp.ix_(i, m), lambda i, m: np.ix_(i, m),
        (np.array([0, 1]), np.array([True, False, True, True])), grad=False, traced=False),
    Row("ix-empty-list", lambda: fnp.ix_([], [1, 2]), lambda: np.ix_([], [1, 2]), (),
        grad=False, traced=False),
    Row("ix-none", lambda: fnp.ix_(), lambda: np.ix_(), (), grad=False, traced=False),
    # nancumsum, nancumprod
    Row("nancumsum-flat", *both("nancumsum"), (_with_nans(3, 4),)),
    Row("nancumsum-axis0", *both("nancumsum", axis=0), (_with_nans(3, 4),)),
    Row("nancumsum-axis-1", *both("nancumsum", axis=-1), (_with_nans(2, 3, 4),)),
    Row("nancumsum-no-nan", *both("nancumsum", axis=1), (_normal(2, 5),)),
    Row("nancumsum-all-nan", *both("nancumsum"), (np.full(3, np.nan),), grad=False),
    Row("nancumsum-0d", *both("nancumsum"), (np.array(2.0),)),
    Row("nancumsum-empty", *both("nancumsum", axis=0), (np.zeros((0, 2)),), grad=False),
    Row("nancumsum-f32", *both("nancumsum", axis=1), (_with_nans(2, 4, dtype="f4"),),
        grad=False),
    Row("nancumsum-dtype-f32", *both("nancumsum", dtype=np.float32), (_with_nans(5),),
        grad=False),
    Row("nancumsum-int8", *both("nancumsum"), (np.array([100, 100, -3], "i1"),), grad=False),
    Row("nancumsum-bool", *both("nancumsum"), (np.array([True, False, True]),), grad=False),
    Row("nancumprod-flat", *both("nancumprod"), (_with_nans(3, 3),)),
    Row("nancumprod-axis1", *both("nancumprod", axis=1), (_with_nans(2, 4),)),
    Row("nancumprod-with-zero", *both("nancumprod"), (np.array([2.0, np.nan, 0.0, 3.0]),)),
    Row("nancumprod-f32", *both("nancumprod", axis=0), (_with_nans(3, 2, dtype="f4"),),
        grad=False),
    Row("nancumprod-int", *both("nancumprod"), (np.array([[1, 2], [3, 4]]),), grad=False),
    Row("nancumprod-bool", *both("nancumprod"), (np.array([True, True, False]),), grad=False),
    # unwrap
    Row("unwrap-1d", *both("unwrap"), (_phases(9),)),
    Row("unwrap-2d-axis0", *both("unwrap", axis=0), (_phases(4, 6).T.copy(),)),
    Row("unwrap-2d-axis-1", *both("unwrap"), (_phases(3, 7),)),
    Row("unwrap-discont", *both("unwrap", discont=4.0), (_phases(8),)),
    Row("unwrap-small-discont", *both("unwrap", discont=0.5), (_phases(8),)),
    Row("unwrap-period", *both("unwrap", period=3.0), (_phases(8),)),
    Row("unwrap-traced-period", lambda p, t: fnp.unwrap(p, period=t),
        lambda p, t: np.unwrap(p, period=t), (_phases(8), np.array(3.5))),
    Row("unwrap-half-period-ties", *both("unwrap"),
        (np.array([0.0, np.pi, 2 * np.pi, np.pi, 0.0, -np.pi]),), grad=False),
    Row("unwrap-one-sample", *both("unwrap"), (np.array([7.0]),)),
    Row("unwrap-empty", *both("unwrap"), (np.zeros(0),), grad=False),
    Row("unwrap-f32", *both("unwrap"), (_phases(3, 6, dtype="f4"),), grad=False),
    Row("unwrap-int-float-period", *both("unwrap"), (np.array([0, 5, 10, 3]),), grad=False),
    Row("unwrap-int-even-period", *both("unwrap", period=8),
        (np.array([0, 4, 8, 0, 5, 10, 3]),), grad=False),
    Row("unwrap-int-odd-period", *both("unwrap", period=7),
        (np.array([0, 5, 10, 3, -1]),), grad=False),
]






@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = row.ref(*row.args)
        got = row.fn(*row.args)  # geomspace with end points of opposite signs warns, as numpy
    assert_matches(got, want, row.dtype)


TRACED = [r for r in ROWS if r.traced]


@pytest.mark.parametrize("row", TRACED, ids=[r.name for r in TRACED])
def test_jit_equals_eager(row):
    assert_matches(fd.jit(row.fn)(*row.args), row.fn(*row.args))


@pytest.mark.parametrize("row", TRACED, ids=[r.name for r in TRACED])
def test_vmap_equals_a_loop(row):
    # shifted by a positive amount: the end points of geomspace stay away from zero
    assert_vmap_equals_a_loop(row.fn, row.args, scales=((1, 0), (1.5, 0.25), (0.5, 0.1)))


GRAD_ROWS = [r for r in ROWS if r.grad]


@pytest.mark.parametrize("row", GRAD_ROWS, ids=[r.name for r in GRAD_ROWS])
def test_derivatives_to_order_two(row):
    assert all(a.dtype == np.float64 for a in row.args)
    check_grads(row.fn, row.args, order=2, modes=("fwd", "rev"))


def test_derivatives_have_the_closed_forms():
    # geomspace: sample i of n is start**(1 - t) * stop**t with t = i / (n - 1)
    d_start = fd.jacfwd(lambda a: fnp.geomspace(a, 8.0, 4))(1.0)
    np.testing.assert_allclose(d_start, [1.0, 2 / 3 * 2, 1 / 3 * 4, 0.0], atol=1e-12)
    d_stop = fd.jacrev(lambda b: fnp.geomspace(-1.0, b, 4))(-8.0)
    np.testing.assert_allclose(d_stop, [0.0, 1 / 3 * 2 / 8, 2 / 3 * 4 / 8, 1.0], atol=1e-12)
    # unwrap adds piecewise-constant corrections: its Jacobian is the identity
    p = _phases(6)
    np.testing.assert_allclose(fd.jacrev(fnp.unwrap)(p), np.eye(6), atol=1e-12)
    # NaN entries of nancumsum/nancumprod get zero derivatives
    x = np.array([2.0, np.nan, 3.0])
    np.testing.assert_allclose(fd.grad(lambda v: fnp.sum(fnp.nancumsum(v)))(x), [3.0, 0.0, 1.0])
    np.testing.assert_allclose(fd.grad(lambda v: fnp.sum(fnp.nancumprod(v)))(x), [5.0, 0.0, 2.0])
    # block and copy pass cotangents through to the blocks
    g = fd.grad(lambda a, b: fnp.sum(fnp.block([[a], [b]]) * np.arange(6.0).reshape(3, 2)),
                argnums=(0, 1))(np.ones((1, 2)), np.ones((2, 2)))
    np.testing.assert_array_equal(g[0], [[0.0, 1.0]])
    np.testing.assert_array_equal(g[1], [[2.0, 3.0], [4.0, 5.0]])
    assert fd.grad(lambda v: fnp.copy(v) * 3.0)(2.0) == 3.0


def test_copy_gives_a_new_array_and_a_new_tracer():
    x = np.array([1.0, 2.0])
    y = fnp.copy(x)
    assert y is not x and not np.shares_memory(x, y)
    y[0] = 5.0
    assert x[0] == 1.0
    assert fnp.copy([1, 2]).dtype == np.int64
    seen = []
    fd.jit(lambda v: seen.append(fnp.copy(v) is v) or v)(x)
    assert seen == [False]  # a write into the copy must leave v alone

    def write_into_copy(v):
        w = fnp.copy(v)
        w[0] = 0.0
        return fnp.sum(w * v)
    np.testing.assert_allclose(fd.grad(write_into_copy)(x), [0.0, 4.0])


def test_broadcast_shapes_matches_numpy():
    cases = [(), ((),), ((3,),), (3, (2, 1)), ((2, 1), 3, (1, 1, 3)), ((0,), (4, 1)),
             ((5, 1, 3), (1, 4, 1), (4, 3)), ([2, 3], (2, 1)), (np.int64(2), (1,))]
    for shapes in cases:
        got = fnp.broadcast_shapes(*shapes)
        assert got == np.broadcast_shapes(*shapes), shapes
        assert type(got) is tuple and all(type(d) is int for d in got)


def test_ix_and_diag_indices_index_like_numpy():
    a = np.arange(24.0).reshape(4, 6)
    for args in (([0, 3], [5, 1, 1]), ([True, False, True, False], np.array([2, 4]))):
        np.testing.assert_array_equal(a[fnp.ix_(*args)], a[np.ix_(*args)])
    cube = np.arange(27.0).reshape(3, 3, 3)
    np.testing.assert_array_equal(cube[fnp.diag_indices(3, 3)], cube[np.diag_indices(3, 3)])
    # under grad a boolean mask has a concrete value; the gather is differentiable
    g = fd.grad(lambda x: fnp.sum(x[fnp.ix_(np.array([True, False, True, False]), [1, 2])]))(a)
    assert g.sum() == 4.0 and g[0, 1] == g[2, 2] == 1.0


def test_float32_programs_compute_in_float32():
    x = _with_nans(5, dtype="f4")
    for fn, args in [(lambda a, b: fnp.geomspace(a, b, 4), (np.float32(2.0), np.float32(9.0))),
                     (fnp.unwrap, (_phases(6, dtype="f4"),)),
                     (lambda v: fnp.nancumsum(v) + fnp.nancumprod(v), (x,))]:
        jaxpr = str(fd.make_jaxpr(fn)(*args))
        assert "f64" not in jaxpr, jaxpr


def test_numpy_functions_on_tracers_dispatch_here():
    def f(x):
        mask = np.array([True, False, True])
        return (np.sum(np.copy(x)) + np.sum(np.geomspace(x[0] + 2.0, 5.0, 3))
                + np.sum(np.block([[x], [x]])) + np.sum(np.unwrap(x * 3.0))
                + np.sum(np.nancumsum(x)) + np.sum(np.nancumprod(x))
                + np.sum(np.outer(x, x)[np.ix_(mask, [0, 1])]))
    x = np.array([0.5, 1.5, 2.0])
    check_grads(f, (x,), order=1)
    np.testing.assert_allclose(fd.jit(f)(x), f(x))


ERRORS = [
    ("geomspace-zero-start", lambda: fnp.geomspace(0.0, 1.0), InvalidArgumentError,
     "cannot include zero"),
    ("geomspace-zero-stop-array", lambda: fnp.geomspace(1.0, np.array([2.0, 0.0])),
     InvalidArgumentError, "stop has a zero"),
    ("geomspace-negative-num", lambda: fnp.geomspace(1.0, 2.0, -1), InvalidArgumentError,
     "num >= 0"),
    ("geomspace-traced-num", lambda: fd.jit(lambda n: fnp.geomspace(1.0, 2.0, n))(3),
     ConcretizationError, "num"),
    ("geomspace-complex-dtype", lambda: fnp.geomspace(1.0, 2.0, 3, dtype=complex), DTypeError,
     "complex"),
    ("geomspace-axis", lambda: fnp.geomspace(1.0, 2.0, 3, axis=2), AxisError, "out of range"),
    ("block-empty", lambda: fnp.block([]), ShapeError, "the list arrays is empty"),
    ("block-empty-inner", lambda: fnp.block([[1.0], []]), ShapeError, r"arrays\[1\] is empty"),
    ("block-tuple", lambda: fnp.block((np.ones(2), np.ones(2))), InvalidArgumentError,
     "only lists arrange blocks"),
    ("block-depths", lambda: fnp.block([[np.ones(2)], np.ones(2)]), ShapeError,
     r"arrays\[1\] is nested 1 deep"),
    ("block-sizes", lambda: fnp.block([[np.ones((2, 2)), np.ones((3, 1))]]), ShapeError,
     "must match"),
    ("broadcast_shapes-mismatch", lambda: fnp.broadcast_shapes((2,), (3,)), ShapeError,
     "cannot broadcast"),
    ("broadcast_shapes-negative", lambda: fnp.broadcast_shapes((2, -1)), ShapeError,
     "non-negative"),
    ("broadcast_shapes-float", lambda: fnp.broadcast_shapes((2.0,)), InvalidArgumentError,
     "must be an integer"),
    ("diag_indices-traced-n", lambda: fd.jit(lambda n: fnp.diag_indices(n))(3),
     ConcretizationError, "static_argnums"),
    ("diag_indices-float-n", lambda: fnp.diag_indices(2.0), InvalidArgumentError,
     "n= is the size of each axis and must be a non-negative Python int"),
    ("ix-2d", lambda: fnp.ix_([[0, 1]]), ShapeError, "must be 1-D"),
    ("ix-float", lambda: fnp.ix_([0.5, 1.0]), DTypeError, "astype"),
    ("ix-traced-mask", lambda: fd.jit(lambda m: fnp.ix_(m))(np.array([True, False])),
     ConcretizationError, "size="),
    ("nancumsum-out", lambda: fnp.nancumsum(np.ones(2), out=np.ones(2)), UnsupportedNumpyError,
     "out="),
    ("nancumprod-axis", lambda: fnp.nancumprod(np.ones((2, 2)), axis=2), AxisError,
     "out of range"),
    ("unwrap-0d", lambda: fnp.unwrap(np.array(1.0)), AxisError, "0-d"),
    ("unwrap-axis", lambda: fnp.unwrap(np.ones((2, 2)), axis=-3), AxisError, "out of range"),
    ("unwrap-bool", lambda: fnp.unwrap(np.array([True, False])), DTypeError, "astype"),
    ("unwrap-traced-int-period", lambda: fd.jit(lambda p, t: fnp.unwrap(p, period=t))(
        np.arange(3), 4), ConcretizationError, "Python int"),
]


@pytest.mark.parametrize("call, error, match", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_bad_inputs_raise_teaching_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_floating_point_error_handling_passes_through_to_numpy():
    """seterr/geterr/errstate/seterrcall are numpy's: they govern the impls, under jit too."""
    assert fnp.errstate is np.errstate and fnp.seterr is np.seterr and fnp.geterr is np.geterr
    assert fnp.seterrcall is np.seterrcall and fnp.geterrcall is np.geterrcall
    with fnp.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            fd.jit(lambda x: fnp.log(x))(np.array([0.0, 1.0]))
    with fnp.errstate(divide="ignore"):
        assert fd.grad(lambda x: fnp.log(x).sum())(np.array([0.0, 1.0]))[0] == np.inf
