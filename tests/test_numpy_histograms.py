"""histogram2d and histogramdd: values and dtypes against numpy (float32 weights
staying float32), derivatives in the weights and, through the edges, in the
data's extremes (check_grads to order 2 in both modes), vmap against a loop,
jit against eager, numpy's functions dispatching on tracers, and the errors."""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (ConcretizationError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.test_util import check_grads
from numpy_tables import assert_matches, assert_vmap_equals_a_loop

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal(25), RNG.standard_normal(25)
W = RNG.uniform(0.2, 1.5, 25)
P3 = RNG.standard_normal((30, 3))
EDGES = np.array([-2.0, -0.5, 0.0, 0.4, 2.5])


class Row(NamedTuple):
    name: str
    fn: Callable          # funcdiff version, called with the arrays
    ref: Callable         # numpy version
    args: tuple           # the arrays
    grad: tuple = ()      # the positions of the arguments to differentiate (float64)
    dtype: tuple | None = None  # result dtypes where they differ from numpy's, by position


def _h2(**kw):
    """histogram2d with settings ``kw``; the weights, when given, are the third argument."""
    return (lambda x, y, *w: fnp.histogram2d(x, y, **kw, **({"weights": w[0]} if w else {})),
            lambda x, y, *w: np.histogram2d(x, y, **kw, **({"weights": w[0]} if w else {})))


def _hdd(**kw):
    """histogramdd of an (N, D) sample with settings ``kw``; weights second when given."""
    return (lambda s, *w: fnp.histogramdd(s, **kw, **({"weights": w[0]} if w else {})),
            lambda s, *w: np.histogramdd(s, **kw, **({"weights": w[0]} if w else {})))


def _flat(result):
    """histogramdd's ``(hist, [edges...])`` as one flat tuple of arrays."""
    hist, edges = result
    return (hist, *edges)


F32, F64 = "float32", "float64"
ROWS = [
    Row("histogram2d-default", *_h2(), (X, Y), grad=(0, 1)),
    Row("histogram2d-bins", *_h2(bins=3), (X, Y), grad=(0, 1)),
    Row("histogram2d-two-counts", *_h2(bins=[2, 4]), (X, Y)),
    Row("histogram2d-shared-edges", *_h2(bins=EDGES), (X, Y)),
    Row("histogram2d-edges-and-count", *_h2(bins=[EDGES, 3]), (X, Y)),
    Row("histogram2d-range", *_h2(bins=4, range=[(-1, 1), (-0.5, 2)]), (X, Y)),
    Row("histogram2d-weights", *_h2(bins=3), (X, Y, W), grad=(2,)),
    Row("histogram2d-weights-range", *_h2(bins=3, range=[(-1, 1), (-1, 1)]), (X, Y, W),
        grad=(2,)),
    Row("histogram2d-density", *_h2(bins=[3, 2], density=True), (X, Y), grad=(0, 1)),
    Row("histogram2d-density-weights", *_h2(bins=EDGES, density=True), (X, Y, W), grad=(2,)),
    Row("histogram2d-f32", *_h2(bins=3), (X.astype(np.float32), Y.astype(np.float32))),
    Row("histogram2d-f32-weights", *_h2(bins=3), (X, Y, W.astype(np.float32)),
        dtype=(F32, F64, F64)),
    Row("histogram2d-int", *_h2(bins=3), (np.arange(10) % 4, np.arange(10) % 3)),
    Row("histogram2d-int-weights", *_h2(bins=2), (X, Y, np.arange(25))),
    Row("histogram2d-constant-data", *_h2(bins=2), (np.ones(4), np.arange(4.0))),
    Row("histogram2d-on-edges", *_h2(bins=2, range=[(0, 1), (0, 1)]),
        (np.array([0.0, 0.5, 1.0, 1.0, 1.5]), np.array([1.0, 0.5, 0.0, 1.0, 0.2]))),
    Row("histogramdd-3d", *_hdd(bins=(2, 3, 4)), (P3,), grad=(0,)),
    Row("histogramdd-one-count", *_hdd(bins=3), (P3,)),
    Row("histogramdd-range-weights", *_hdd(bins=3, range=[(-1, 1), None, (-2, 0)]),
        (P3, W[:1].repeat(30)), grad=(1,)),
    Row("histogramdd-edges", *_hdd(bins=[EDGES, EDGES[1:], 2]), (P3,)),
    Row("histogramdd-density", *_hdd(bins=2, density=True), (P3, RNG.uniform(0.5, 1, 30)),
        grad=(0, 1)),
    Row("histogramdd-1d-sample", *_hdd(bins=4), (X,)),
    Row("histogramdd-f32", *_hdd(bins=2), (P3.astype(np.float32),)),
    Row("histogramdd-f32-range", *_hdd(bins=2, range=[(-1, 1)] * 3), (P3.astype(np.float32),)),
    Row("histogramdd-empty", *_hdd(bins=2), (np.zeros((0, 2)),)),
]


def _results(row, result):
    return _flat(result) if row.name.startswith("histogramdd") else result


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    got, want = _results(row, row.fn(*row.args)), _results(row, row.ref(*row.args))
    for k, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, row.dtype[k] if row.dtype else None, where=row.name)
    assert len(got) == len(want)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_jit_equals_eager(row):
    assert_matches(_results(row, fd.jit(row.fn)(*row.args)), _results(row, row.fn(*row.args)),
                   where=row.name)


VMAP_ROWS = [r for r in ROWS if r.name != "histogramdd-empty"]


@pytest.mark.parametrize("row", VMAP_ROWS, ids=[r.name for r in VMAP_ROWS])
def test_vmap_equals_a_loop(row):
    assert_vmap_equals_a_loop(lambda *a: _results(row, row.fn(*a)), row.args)


GRAD_ROWS = [r for r in ROWS if r.grad]


@pytest.mark.parametrize("row", GRAD_ROWS, ids=[r.name for r in GRAD_ROWS])
def test_derivatives_to_order_two(row):
    args = list(row.args)

    def f(*diff):
        for position, value in zip(row.grad, diff):
            args[position] = value
        return _results(row, row.fn(*args))

    check_grads(f, tuple(row.args[k] for k in row.grad), order=2, modes=("fwd", "rev"))


def test_the_histogram_is_linear_in_the_weights():
    # d hist[i, j] / d w[k] is 1 where point k falls in bin (i, j), else 0
    jacobian = fd.jacrev(lambda w: fnp.histogram2d(X, Y, bins=3, weights=w)[0])(W)
    counts = np.histogram2d(X, Y, bins=3)[0]
    np.testing.assert_array_equal(jacobian.sum(axis=2), counts)
    assert set(np.unique(jacobian)) <= {0.0, 1.0}
    # histogramdd of an (N, 2) sample is histogram2d of its columns
    sample = np.stack([X, Y], axis=1)
    assert_matches(fnp.histogramdd(sample, bins=(3, 2), weights=W)[0],
                   fnp.histogram2d(X, Y, bins=(3, 2), weights=W)[0], exact=True)
    # a sequence of D arrays is D coordinates, as in numpy
    assert_matches(_flat(fnp.histogramdd([X, Y], bins=2)), _flat(fnp.histogramdd(sample, bins=2)),
                   exact=True)


def test_numpy_functions_dispatch_on_tracers():
    f = lambda w: np.sum(np.histogram2d(X, Y, bins=2, weights=w)[0][0])  # noqa: E731
    np.testing.assert_allclose(fd.jit(f)(W), f(W))
    np.testing.assert_array_equal(fd.grad(f)(W), ((X <= np.median(np.r_[X.min(), X.max()])))
                                  * 1.0)
    g = lambda s: np.histogramdd(s, bins=2)[0]  # noqa: E731
    np.testing.assert_array_equal(fd.jit(g)(P3), np.histogramdd(P3, bins=2)[0])


def test_bin_counts_must_be_static():
    with pytest.raises(ConcretizationError, match="number of bins fixes the result's shape"):
        fd.jit(lambda x, y, n: fnp.histogram2d(x, y, bins=n))(X, Y, 3)
    out = fd.jit(lambda x, y, n: fnp.histogram2d(x, y, bins=n), static_argnums=2)(X, Y, 3)
    assert_matches(out, np.histogram2d(X, Y, bins=3))
    # traced edges are fine
    edges = fd.jit(lambda x, y, e: fnp.histogram2d(x, y, bins=[e, e]))(X, Y, EDGES)
    assert_matches(edges, np.histogram2d(X, Y, bins=[EDGES, EDGES]))


ERRORS = [
    ("histogram2d-lengths", lambda: fnp.histogram2d(X, Y[:3]), ShapeError,
     "1-D arrays of the same length"),
    ("histogram2d-2d", lambda: fnp.histogram2d(P3, P3), ShapeError, "1-D arrays"),
    ("histogram2d-bins-one-entry", lambda: fnp.histogram2d(X, Y, bins=[3]), InvalidArgumentError,
     "one bins entry per dimension: 2, got 1"),
    ("histogram2d-negative-bins", lambda: fnp.histogram2d(X, Y, bins=0), InvalidArgumentError,
     "positive number of bins"),
    ("histogram2d-float-bins", lambda: fnp.histogram2d(X, Y, bins=[2.5, 2]),
     InvalidArgumentError, r"bins\[0\] to be an int"),
    ("histogram2d-decreasing-edges", lambda: fnp.histogram2d(X, Y, bins=[EDGES[::-1], 2]),
     InvalidArgumentError, r"bins\[0\] edges that increase"),
    ("histogram2d-range-entries", lambda: fnp.histogram2d(X, Y, range=[(0, 1)]),
     InvalidArgumentError, "one range entry per dimension: 2, got 1"),
    ("histogram2d-bad-range", lambda: fnp.histogram2d(X, Y, range=[(0, 1), 5]),
     InvalidArgumentError, r"range\[1\]=\(min, max\)"),
    ("histogram2d-weights-shape", lambda: fnp.histogram2d(X, Y, weights=W[:4]), ShapeError,
     "one weight per point"),
    ("histogramdd-3d-sample", lambda: fnp.histogramdd(np.ones((2, 2, 2))), ShapeError,
     r"\(N, D\) array"),
    ("histogramdd-bins-entries", lambda: fnp.histogramdd(P3, bins=[2, 2]), InvalidArgumentError,
     "one bins entry per dimension: 3, got 2"),
    ("histogramdd-string-bins", lambda: fnp.histogramdd(P3, bins="auto"), UnsupportedNumpyError,
     "does not support bins='auto'"),
    ("histogramdd-string-bin", lambda: fnp.histogramdd(P3, bins=[3, "auto", 3]),
     UnsupportedNumpyError, "does not support bins='auto'"),
    ("histogramdd-2d-bins", lambda: fnp.histogramdd(P3, bins=[np.ones((2, 2))] * 3),
     InvalidArgumentError, r"bins\[0\] to be an int or 1-D edges"),
]


@pytest.mark.parametrize("call,error,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
