"""isin, bincount, digitize and histogram: numpy's values and dtypes (float32
staying float32), derivatives in the weights (and in the data through the
histogram edges), jit against eager, vmap against a loop, and the errors that
say which static argument is needed."""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (ConcretizationError, DTypeError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)
F64 = RNG.standard_normal((3, 4))
F32 = RNG.standard_normal(7).astype(np.float32)
INTS = RNG.integers(0, 6, 10)
W = RNG.standard_normal(10)
EDGES = np.array([-1.0, -0.2, 0.0, 0.7, 1.5])


# One row per function and input kind: (id, funcdiff function, numpy function, args,
# kwargs, dtypes funcdiff returns where they differ from numpy's, by output position).
VALUE_ROWS = [
    ("isin-f64-2d", fnp.isin, np.isin, (F64, F64[1:, ::2]), {}, None),
    ("isin-f32", fnp.isin, np.isin, (F32, F32[::3]), {}, None),
    ("isin-int-vs-float", fnp.isin, np.isin, (INTS, np.array([1.0, 2.5, 4.0])), {}, None),
    ("isin-0d", fnp.isin, np.isin, (np.array(3), [1, 3]), {}, None),
    ("isin-empty-tests", fnp.isin, np.isin, (F64, np.array([])), {}, None),
    ("isin-invert", fnp.isin, np.isin, (INTS, [0, 5]), {"invert": True}, None),
    ("isin-nan", fnp.isin, np.isin, (np.array([np.nan, 1.0]), [np.nan, 1.0]), {}, None),
    ("bincount-int", fnp.bincount, np.bincount, (INTS,), {}, None),
    ("bincount-bool", fnp.bincount, np.bincount, (np.array([True, False, True]),), {}, None),
    ("bincount-uint8", fnp.bincount, np.bincount, (INTS.astype(np.uint8),), {}, None),
    ("bincount-empty", fnp.bincount, np.bincount, (np.zeros(0, int),), {}, None),
    ("bincount-minlength", fnp.bincount, np.bincount, (INTS,), {"minlength": 12}, None),
    ("bincount-weights", fnp.bincount, np.bincount, (INTS, W), {}, None),
    ("bincount-weights-f32", fnp.bincount, np.bincount, (INTS, W.astype(np.float32)), {},
     [np.float32]),
    ("bincount-weights-int", fnp.bincount, np.bincount, (INTS, INTS), {}, None),
    ("digitize-f64", fnp.digitize, np.digitize, (F64, EDGES), {}, None),
    ("digitize-right", fnp.digitize, np.digitize, (np.array([-1.0, 0.0, 0.5, 9.0]), EDGES),
     {"right": True}, None),
    ("digitize-decreasing", fnp.digitize, np.digitize, (F64, EDGES[::-1]), {}, None),
    ("digitize-decreasing-right", fnp.digitize, np.digitize, (EDGES, EDGES[::-1]),
     {"right": True}, None),
    ("digitize-equal-bins", fnp.digitize, np.digitize, (np.array([0.0, 1.0, 2.0]), [1, 1, 1]),
     {}, None),
    ("digitize-empty-bins", fnp.digitize, np.digitize, (F32, np.array([])), {}, None),
    ("digitize-int", fnp.digitize, np.digitize, (INTS, np.array([1, 3, 4])), {}, None),
    ("digitize-f32-nan", fnp.digitize, np.digitize,
     (np.array([np.nan, 0.1, -3.0], np.float32), EDGES), {}, None),
    ("digitize-0d", fnp.digitize, np.digitize, (0.5, EDGES), {}, None),
    ("histogram-default", fnp.histogram, np.histogram, (F64,), {}, None),
    ("histogram-f32", fnp.histogram, np.histogram, (F32, 3), {}, None),
    ("histogram-int-data", fnp.histogram, np.histogram, (INTS, 4), {}, None),
    ("histogram-range", fnp.histogram, np.histogram, (F64, 5), {"range": (-0.5, 0.5)}, None),
    ("histogram-edges", fnp.histogram, np.histogram, (F64, EDGES), {}, None),
    ("histogram-repeated-edges", fnp.histogram, np.histogram,
     (np.array([0.0, 1.0, 1.0, 2.0]), [0.0, 1.0, 1.0, 2.0]), {}, None),
    ("histogram-int-edges", fnp.histogram, np.histogram, (INTS, [0, 2, 5]), {}, None),
    ("histogram-weights", fnp.histogram, np.histogram, (W, 4), {"weights": W ** 2}, None),
    ("histogram-weights-f32", fnp.histogram, np.histogram, (F32, EDGES),
     {"weights": F32 * 2}, None),
    ("histogram-density", fnp.histogram, np.histogram, (F64, 6), {"density": True}, None),
    ("histogram-density-f32", fnp.histogram, np.histogram, (F32, 3), {"density": True},
     [np.float32, np.float32]),
    ("histogram-constant", fnp.histogram, np.histogram, (np.ones(3), 2), {}, None),
    ("histogram-empty", fnp.histogram, np.histogram, (np.zeros(0), 2), {}, None),
    ("histogram-nan-with-range", fnp.histogram, np.histogram,
     (np.array([np.nan, 0.5, 2.0]), 2), {"range": (0, 1)}, None),
    ("histogram_bin_edges", fnp.histogram_bin_edges, np.histogram_bin_edges, (F32, 4), {}, None),
]
ROW_IDS = [row[0] for row in VALUE_ROWS]


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _assert_same(got, want, dtypes=None):
    got, want = _outputs(got), _outputs(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape
        assert g.dtype == (np.dtype(dtypes[k]) if dtypes else w.dtype)
        tol = 1e-5 if g.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, w.astype(g.dtype), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,f,np_f,args,kwargs,dtypes", VALUE_ROWS, ids=ROW_IDS)
def test_values_and_dtypes_match_numpy(name, f, np_f, args, kwargs, dtypes):
    _assert_same(f(*args, **kwargs), np_f(*args, **kwargs), dtypes)


def _traceable_kwargs(name, args, kwargs):
    """bincount traces when length= fixes its number of bins."""
    if name.startswith("bincount"):
        return dict(kwargs, length=max(kwargs.get("minlength", 0),
                                       int(np.max(args[0].astype(int), initial=-1)) + 1))
    return kwargs


@pytest.mark.parametrize("name,f,np_f,args,kwargs,dtypes", VALUE_ROWS, ids=ROW_IDS)
def test_jit_equals_eager(name, f, np_f, args, kwargs, dtypes):
    kwargs = _traceable_kwargs(name, args, kwargs)
    arrays = [np.asarray(a) for a in args if not isinstance(a, int)]
    statics = [a for a in args if isinstance(a, int)]  # bin counts, always last

    def call(*arrs):
        return f(*arrs, *statics, **kwargs)

    _assert_same(fd.jit(call)(*arrays), call(*arrays), dtypes or None)


def _loop(f, *batched):
    results = [f(*items) for items in zip(*batched)]
    if isinstance(results[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*results))
    return np.stack(results)


VMAP_ROWS = [
    ("isin-element", lambda e, t: fnp.isin(e, t), (0, None),
     (RNG.integers(0, 5, (4, 3)), np.array([1, 3]))),
    ("isin-both", lambda e, t: fnp.isin(e, t, invert=True), (0, 0),
     (RNG.integers(0, 5, (4, 3)), RNG.integers(0, 5, (4, 2)))),
    ("bincount", lambda x, w: fnp.bincount(x, w, length=5), (0, 0),
     (RNG.integers(0, 7, (3, 6)), RNG.standard_normal((3, 6)))),
    ("bincount-shared-weights", lambda x, w: fnp.bincount(x, w, length=4), (0, None),
     (RNG.integers(0, 4, (3, 6)), RNG.standard_normal(6))),
    ("digitize-x", lambda x, b: fnp.digitize(x, b), (0, None),
     (RNG.standard_normal((4, 5)), EDGES)),
    ("digitize-bins", lambda x, b: fnp.digitize(x, b, right=True), (None, 0),
     (RNG.standard_normal(5), np.stack([EDGES, EDGES[::-1] * 2, np.sort(RNG.standard_normal(5))]))),
    ("histogram-int-bins", lambda a: fnp.histogram(a, 3), (0,),
     (RNG.standard_normal((4, 9)),)),
    ("histogram-edges-weights", lambda a, w: fnp.histogram(a, EDGES, weights=w, density=True),
     (0, 0), (RNG.standard_normal((4, 9)), RNG.random((4, 9)))),
]


@pytest.mark.parametrize("name,f,in_axes,args", VMAP_ROWS, ids=[r[0] for r in VMAP_ROWS])
def test_vmap_equals_a_loop(name, f, in_axes, args):
    batched = [a for a, ax in zip(args, in_axes) if ax is not None]

    def one(*items):
        it = iter(items)
        return f(*[next(it) if ax is not None else a for a, ax in zip(args, in_axes)])

    _assert_same(fd.vmap(f, in_axes=in_axes)(*args), _loop(one, *batched))


X = np.array([0.3, -1.2, 0.8, 2.1, -0.4, 1.7])
GRAD_ROWS = [
    ("bincount-weights", lambda w: fnp.bincount(np.array([2, 0, 2, 1, 5, 2]), w) ** 2, (X,)),
    ("bincount-length-drops", lambda w: fnp.bincount(np.array([2, 0, 2, 1, 5, 2]), w * w,
                                                     length=3), (X,)),
    ("histogram-weights", lambda w: fnp.histogram(X, 3, weights=w)[0] * w[:3], (X,)),
    ("histogram-edges-weights", lambda e, w: fnp.histogram(X, e, weights=w, density=True)[0],
     (EDGES * 1.5, X ** 2)),
    ("histogram-density-in-data", lambda a: fnp.histogram(a, 4, density=True)[0], (X,)),
    ("histogram-edges-in-data", lambda a: fnp.histogram(a, 4)[1] ** 2, (X,)),
    ("histogram-edges-in-range", lambda lo, hi: fnp.histogram_bin_edges(X, 3, (lo, hi)),
     (np.array(-1.0), np.array(2.5))),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_gradients(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_weight_gradients_are_the_bin_memberships():
    x = np.array([2, 0, 2, 1, 5, 2])
    g = fd.grad(lambda w: fnp.sum(fnp.bincount(x, w, length=3) * np.array([1.0, 10.0, 100.0])))(
        np.ones(6))
    np.testing.assert_array_equal(g, [100.0, 1.0, 100.0, 10.0, 0.0, 100.0])
    g = fd.grad(lambda w: fnp.histogram(X, EDGES, weights=w)[0][3])(np.ones(6))
    np.testing.assert_array_equal(g, (X >= 0.7) & (X < 1.5))


def test_numpy_functions_dispatch_on_tracers():
    f = fd.jit(lambda x, b: (np.digitize(x, b), np.isin(x, b)))
    got = f(F64, EDGES)
    np.testing.assert_array_equal(got[0], np.digitize(F64, EDGES))
    np.testing.assert_array_equal(got[1], np.isin(F64, EDGES))
    g = fd.grad(lambda w: np.sum(np.histogram(X, 3, weights=w)[0] ** 2))(X)
    bins = np.minimum(np.digitize(X, np.histogram_bin_edges(X, 3)), 3) - 1
    np.testing.assert_allclose(g, 2 * np.histogram(X, 3, weights=X)[0][bins])


def test_bincount_under_jit_drops_large_values_and_counts_negatives_in_bin_0():
    f = fd.jit(lambda x: fnp.bincount(x, length=3))
    np.testing.assert_array_equal(f(np.array([-2, 0, 1, 3, 7, 2])), [2, 1, 1])
    np.testing.assert_array_equal(fnp.bincount(np.array([0, 4, 1]), length=2), [1, 1])
    assert fnp.bincount(np.array([0, 4]), length=0).shape == (0,)


ERROR_ROWS = [
    ("bincount-needs-length", lambda: fd.jit(fnp.bincount)(INTS), ConcretizationError,
     "length="),
    ("bincount-vmap-needs-length", lambda: fd.vmap(fnp.bincount)(INTS[None]),
     ConcretizationError, "length="),
    ("bincount-float", lambda: fnp.bincount(np.array([1.0])), DTypeError, "astype"),
    ("bincount-2d", lambda: fnp.bincount(np.ones((2, 2), int)), ShapeError, "1-D"),
    ("bincount-negative", lambda: fnp.bincount(np.array([1, -1])), InvalidArgumentError,
     "non-negative"),
    ("bincount-weights-shape", lambda: fnp.bincount(INTS, np.ones(3)), ShapeError, "weights"),
    ("bincount-minlength", lambda: fnp.bincount(INTS, minlength=-1), InvalidArgumentError,
     "minlength"),
    ("bincount-length-traced", lambda: fd.jit(lambda n: fnp.bincount(INTS, length=n))(3),
     ConcretizationError, "length= as a Python int"),
    ("isin-kind", lambda: fnp.isin(INTS, [1], kind="hash"), InvalidArgumentError, "kind"),
    ("digitize-non-monotonic", lambda: fnp.digitize(F64, [0.0, 2.0, 1.0]),
     InvalidArgumentError, "monotonic"),
    ("digitize-2d-bins", lambda: fnp.digitize(F64, np.ones((2, 2))), ShapeError, "1-D"),
    ("histogram-named-bins", lambda: fnp.histogram(F64, "auto"), UnsupportedNumpyError, "auto"),
    ("histogram-zero-bins", lambda: fnp.histogram(F64, 0), InvalidArgumentError, "positive"),
    ("histogram-float-bins", lambda: fnp.histogram(F64, 2.5), InvalidArgumentError, "int"),
    ("histogram-traced-bins", lambda: fd.jit(lambda n: fnp.histogram(F64, n))(3),
     ConcretizationError, "Python int"),
    ("histogram-decreasing-edges", lambda: fnp.histogram(F64, EDGES[::-1]),
     InvalidArgumentError, "increase"),
    ("histogram-reversed-range", lambda: fnp.histogram(F64, 3, range=(1, 0)),
     InvalidArgumentError, "min <= max"),
    ("histogram-bad-range", lambda: fnp.histogram(F64, 3, range=1.0), InvalidArgumentError,
     "range"),
    ("histogram-nan-data", lambda: fnp.histogram(np.array([np.nan, 1.0])), InvalidArgumentError,
     "not finite"),
    ("histogram-weights-shape", lambda: fnp.histogram(F64, 3, weights=np.ones(3)), ShapeError,
     "weights"),
]


@pytest.mark.parametrize("name,call,error,match", ERROR_ROWS, ids=[r[0] for r in ERROR_ROWS])
def test_errors(name, call, error, match):
    with pytest.raises(error, match=match):
        call()
