"""union1d, intersect1d, setdiff1d, setxor1d and numpy 2's unique_values,
unique_counts, unique_inverse and unique_all: numpy's values and dtypes
(float32 staying float32, NaN as numpy 2 treats it, empty and 0-d inputs,
arrays flattened), JAX's size=/fill_value= forms under jit equal to numpy's
result padded, vmap against a loop, derivatives of the values, dispatch from
numpy's own functions and the errors that say size= is needed."""

import doctest

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.numpy import _sets, _unique_api
from funcdiff.test_util import check_grads
from numpy_tables import assert_matches, assert_vmap_equals_a_loop, leaves

RNG = np.random.default_rng(0)
INTS = RNG.integers(0, 7, (3, 4))
MORE_INTS = RNG.integers(3, 10, 5)
NAN = np.nan

# Inputs of the two-array routines: (id, ar1, ar2).
PAIRS = [
    ("f64-2d", INTS.astype(float), MORE_INTS.astype(float)),
    ("f32", INTS.astype(np.float32), MORE_INTS.astype(np.float32)),
    ("int", INTS, MORE_INTS),
    ("bool", np.array([[True, True], [True, True]]), np.array([False, True])),
    ("int-and-float", INTS, np.array([2.5, 3.0, 4.0])),
    ("int32-and-f32", INTS.astype(np.int32), np.array([2.5, 3.0], np.float32)),
    ("uint8", INTS.astype(np.uint8), MORE_INTS.astype(np.uint8)),
    ("nan", np.array([3.0, NAN, 1.0, 3.0, NAN, 2.0]), np.array([[NAN, 2.0], [5.0, 1.0]])),
    ("nan-first-only", np.array([NAN, 1.0, NAN]), np.array([1.0, 2.0])),
    ("signed-zero", np.array([0.0, -0.0, 1.0]), np.array([-0.0, 4.0])),
    ("0d", np.float64(2.0), np.array([2.0, 3.0])),
    ("empty-first", np.zeros(0), np.array([1.0, 2.0, 1.0])),
    ("empty-second", np.array([2.0, 1.0, 2.0]), np.zeros((2, 0))),
    ("empty-both", np.zeros(0), np.zeros(0)),
    ("disjoint", np.array([4, 1]), np.array([3, 2])),
]
# Inputs of unique_*: (id, x).
SINGLES = [
    ("f64-2d", INTS.astype(float)),
    ("f32", INTS.astype(np.float32)),
    ("int", INTS),
    ("bool", np.array([[True, False], [True, True]])),
    ("uint8", MORE_INTS.astype(np.uint8)),
    ("nan", np.array([[3.0, NAN], [NAN, 3.0]])),
    ("signed-zero", np.array([0.0, -0.0, 1.0, 0.0])),
    ("0d", np.float64(2.0)),
    ("empty", np.zeros((0, 3))),
    ("distinct", np.array([2.0, -1.0, 5.0])),
]
UNIQUE_PAIRS = [p for p in PAIRS if p[0] in ("f64-2d", "int", "nan", "disjoint", "empty-first")]


def _unique_values_sorted(x):
    """numpy 2.3+ returns unique_values in an unspecified order; funcdiff sorts them."""
    return np.sort(np.unique_values(x))


# One row per function, input and setting: (id, name, numpy reference, args, kwargs).
ROWS = (
    [(f"{name}-{pid}", name, getattr(np, name), (a, b), {})
     for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d") for pid, a, b in PAIRS]
    + [(f"intersect1d-indices-{pid}", "intersect1d", np.intersect1d, (a, b),
        {"return_indices": True}) for pid, a, b in PAIRS]
    + [(f"{name}-assume-unique-{pid}", name, getattr(np, name), (np.unique(a)[::-1], np.unique(b)),
        dict(assume_unique=True, **extra))
       for name, extra in (("intersect1d", {"return_indices": True}), ("setdiff1d", {}),
                           ("setxor1d", {}))
       for pid, a, b in UNIQUE_PAIRS]
    + [(f"{name}-{xid}", name, _unique_values_sorted if name == "unique_values"
        else getattr(np, name), (x,), {})
       for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all")
       for xid, x in SINGLES]
)
ROW_IDS = [row[0] for row in ROWS]


def _call(name, args, kwargs):
    return getattr(fnp, name)(*args, **kwargs)


@pytest.mark.parametrize("rid,name,np_f,args,kwargs", ROWS, ids=ROW_IDS)
def test_values_and_dtypes_match_numpy(rid, name, np_f, args, kwargs):
    assert_matches(_call(name, args, kwargs), np_f(*args, **kwargs), exact=True, where=rid)


def test_results_are_numpys_named_tuples():
    x = np.array([2, 1, 2])
    for name in ("unique_counts", "unique_inverse", "unique_all"):
        got, want = getattr(fnp, name)(x), getattr(np, name)(x)
        assert type(got).__name__ == type(want).__name__
        assert got._fields == want._fields


# What pads each output under size=: "value" (fill_value, or the first value, or
# 0), "first" (the first entry, or 0), an int, or None (the output is not padded).
PADS = {"unique_all": ("value", "first", None, 0), "unique_counts": ("value", 0),
        "unique_inverse": ("value", None)}


def _padded(name, args, kwargs, want, size, fill_value):
    """numpy's result cut or padded to ``size`` as funcdiff's size= promises."""
    pads = PADS.get(name, ("value",))
    if name == "intersect1d" and kwargs.get("return_indices"):
        pads = ("value", np.size(args[0]), np.size(args[1]))
    outs = []
    for out, pad in zip(leaves(want), pads):
        out = np.asarray(out)
        if pad is None:
            outs.append(out)
            continue
        if pad == "value" and fill_value is not None:
            pad = np.asarray(fill_value).astype(out.dtype)
        elif pad in ("value", "first"):
            pad = out[0] if out.size else 0
        padded = np.full(size, pad, out.dtype)
        padded[:min(size, out.size)] = out[:size]
        outs.append(padded)
    return outs


@pytest.mark.parametrize("size", [0, 2, 12])
@pytest.mark.parametrize("rid,name,np_f,args,kwargs", ROWS, ids=ROW_IDS)
def test_size_under_jit_equals_eager_and_padded_numpy(rid, name, np_f, args, kwargs, size):
    fill_value = -1 if size == 12 and len(rid) % 2 else None  # half the rows set a fill

    def f(*arrays):
        return _call(name, arrays, dict(kwargs, size=size, fill_value=fill_value))

    want = _padded(name, args, kwargs, np_f(*args, **kwargs), size, fill_value)
    assert_matches(f(*args), want, exact=True, where=f"eager {rid}")
    assert_matches(fd.jit(f)(*args), want, exact=True, where=f"jit {rid}")


VMAP_ROWS = [
    ("union1d", lambda a, b: fnp.union1d(a, b, size=9), (INTS[0] * 1.0, MORE_INTS * 1.0)),
    ("intersect1d", lambda a, b: fnp.intersect1d(a, b, return_indices=True, size=4),
     (INTS[1] * 1.0, np.concatenate([MORE_INTS, INTS[1, :2]]) * 1.0)),
    ("intersect1d-int", lambda a, b: fnp.intersect1d(a, b, size=3, fill_value=-1),
     (INTS[2], MORE_INTS)),
    ("setdiff1d", lambda a, b: fnp.setdiff1d(a, b, size=5), (INTS.ravel() * 1.0, MORE_INTS * 1.0)),
    ("setdiff1d-assume-unique", lambda a, b: fnp.setdiff1d(a, b, True, size=3),
     (np.array([4.0, 1.0, 6.0, 3.0]), np.array([3.0, 5.0]))),
    ("setxor1d", lambda a, b: fnp.setxor1d(a, b, size=8), (INTS[0] * 1.0, MORE_INTS * 1.0)),
    ("setxor1d-nan", lambda a, b: fnp.setxor1d(a, b, size=6),
     (np.array([NAN, 1.0, NAN]), np.array([NAN, 2.0]))),
    ("unique_all", lambda x: fnp.unique_all(x, size=6), (INTS * 1.0,)),
    ("unique_all-f32", lambda x: fnp.unique_all(x, size=4), (INTS.astype(np.float32),)),
    ("unique_counts-int", lambda x: fnp.unique_counts(x, size=3), (INTS,)),
    ("unique_inverse-nan", lambda x: fnp.unique_inverse(x, size=5),
     (np.array([[3.0, NAN], [NAN, 3.0]]),)),
]


@pytest.mark.parametrize("rid,fn,args", VMAP_ROWS, ids=[r[0] for r in VMAP_ROWS])
def test_vmap_with_size_equals_a_loop(rid, fn, args):
    assert_vmap_equals_a_loop(fn, args)


X = np.array([0.3, -1.2, 0.8, 2.1])
Y = np.array([1.5, -0.4, 3.3])


def _cat(*parts):
    return fnp.concatenate(parts)


# Repeated values are built from the same input element, so they stay equal when
# check_grads perturbs it and the selection does not change.
GRAD_ROWS = [
    ("union1d", lambda x, y: fnp.union1d(x, _cat(y, x[:2])) ** 2, (X, Y)),
    ("intersect1d", lambda x, y: fnp.intersect1d(_cat(x, x[:2]), _cat(y, x[1:3])) * x[0], (X, Y)),
    ("setdiff1d", lambda x, y: fnp.setdiff1d(_cat(x, x), _cat(y, x[:1])) ** 3, (X, Y)),
    ("setdiff1d-assume-unique", lambda x, y: fnp.setdiff1d(x, _cat(y, x[2:3]), True) ** 2,
     (X, Y)),
    ("setxor1d", lambda x, y: fnp.sin(fnp.setxor1d(x, _cat(y, x[:2]))), (X, Y)),
    ("unique_values", lambda x: fnp.unique_values(_cat(x, x[::-1], x[:1])) ** 2, (X,)),
    ("unique_all", lambda x: fnp.unique_all(fnp.reshape(_cat(x, x), (2, 4))).values ** 3, (X,)),
    ("union1d-size-jit", lambda x, y: fd.jit(lambda x, y: fnp.union1d(x, y, size=9))(x, y) ** 2,
     (X, Y)),
    ("unique_counts-size-jit",
     lambda x: fd.jit(lambda x: fnp.unique_counts(_cat(x, x[1:]), size=3).values)(x) ** 2, (X,)),
]


@pytest.mark.parametrize("rid,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_gradients(rid, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_derivatives_reach_the_first_occurrence_only():
    weights = np.array([1.0, 10.0, 100.0])
    x = np.array([2.0, 1.0, 2.0, 3.0, 1.0])
    g = fd.grad(lambda x: fnp.sum(fnp.unique_values(x) * weights))(x)
    np.testing.assert_array_equal(g, [10.0, 1.0, 0.0, 100.0, 0.0])
    g1, g2 = fd.grad(lambda a, b: fnp.sum(fnp.intersect1d(a, b) * weights), (0, 1))(x, x[::-1])
    np.testing.assert_array_equal(g1, [10.0, 1.0, 0.0, 100.0, 0.0])  # ar1 carries the values
    np.testing.assert_array_equal(g2, np.zeros(5))
    g = fd.grad(lambda x: fnp.sum(fd.jit(lambda x: fnp.unique_values(x, size=3))(x) * weights))(x)
    np.testing.assert_array_equal(g, [10.0, 1.0, 0.0, 100.0, 0.0])
    assert fnp.unique_counts(x).counts.dtype == np.int64


def test_default_fill_is_the_smallest_value_or_zero():
    f = fd.jit(lambda a, b: (fnp.union1d(a, b, size=5), fnp.intersect1d(a, b, size=3),
                             fnp.setxor1d(a, b, size=5), fnp.setdiff1d(b, a, size=2)))
    union, common, xor, diff = f(np.array([4.0, 2.0]), np.array([2.0, 3.0]))
    np.testing.assert_array_equal(union, [2.0, 3.0, 4.0, 2.0, 2.0])
    np.testing.assert_array_equal(common, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(xor, [3.0, 4.0, 3.0, 3.0, 3.0])
    np.testing.assert_array_equal(diff, [3.0, 3.0])
    none = fd.jit(lambda a, b: fnp.intersect1d(a, b, return_indices=True, size=2))(
        np.array([1, 2]), np.array([3]))
    for got, want in zip(none, ([0, 0], [2, 2], [1, 1])):
        np.testing.assert_array_equal(got, want)


def test_numpy_functions_dispatch_on_tracers():
    y = np.array([0.8, 5.0])
    g = fd.grad(lambda x: np.sum(np.union1d(x, y) ** 2) + np.sum(np.setdiff1d(x, y)))(X)
    np.testing.assert_allclose(g, 2 * X + (X != 0.8))
    g = fd.grad(lambda x: np.sum(np.unique_all(np.concatenate([x, x])).values))(X)
    np.testing.assert_array_equal(g, np.ones(4))
    with pytest.raises(ConcretizationError, match="size="):
        fd.jit(lambda x: np.intersect1d(x, y))(X)


ERROR_ROWS = [
    ("jit-needs-size", lambda: fd.jit(lambda a: fnp.union1d(a, Y))(X), ConcretizationError,
     r"union1d .*abstract f64\[4\].*Pass size="),
    ("jit-second-abstract", lambda: fd.jit(lambda b: fnp.setdiff1d(X, b))(Y),
     ConcretizationError, r"setdiff1d .*abstract f64\[3\]"),
    ("vmap-needs-size", lambda: fd.vmap(fnp.unique_values)(INTS), ConcretizationError, "size="),
    ("make_jaxpr-needs-size", lambda: fd.make_jaxpr(lambda a: fnp.setxor1d(a, a))(X),
     ConcretizationError, "size="),
    ("negative-size", lambda: fnp.intersect1d(X, Y, size=-1), InvalidArgumentError,
     "non-negative"),
    ("bool-size", lambda: fnp.unique_all(X, size=True), InvalidArgumentError, "size="),
    ("traced-size", lambda: fd.jit(lambda n: fnp.unique_counts(X, size=n))(3),
     ConcretizationError, "size= as a Python int"),
    ("fill-without-size", lambda: fnp.union1d(X, Y, fill_value=0.0), InvalidArgumentError,
     "needs size="),
    ("fill-not-scalar", lambda: fnp.setxor1d(X, Y, size=9, fill_value=[1.0, 2.0]),
     InvalidArgumentError, "real scalar"),
    ("fill-string", lambda: fnp.unique_values(X, size=5, fill_value="x"), InvalidArgumentError,
     "real scalar"),
    ("fill-traced-array", lambda: fd.jit(lambda f: fnp.setdiff1d(X, Y, size=5, fill_value=f))(X),
     InvalidArgumentError, "real scalar"),
]


@pytest.mark.parametrize("rid,call,error,match", ERROR_ROWS, ids=[r[0] for r in ERROR_ROWS])
def test_errors(rid, call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_module_doctests():
    for module in (_sets, _unique_api):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__
