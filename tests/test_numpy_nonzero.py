"""nonzero, flatnonzero, argwhere and unique(size=): numpy's results on concrete
arrays, JAX's fixed-size forms under jit and vmap, and the errors that say when
a value is needed."""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import ConcretizationError, InvalidArgumentError, ShapeError

RNG = np.random.default_rng(0)
ARRAYS = [np.array([0.0, 2.0, 0.0, -1.0]), np.array([[0, 3], [4, 0], [0, 0]]),
          (RNG.standard_normal((2, 3, 4)) > 0.3).astype(np.float32), np.zeros((2, 2)),
          np.array([True, False, True])]


def _padded(indices, size, fill):
    out = np.full(size, fill, np.int64)
    out[:min(size, len(indices))] = indices[:size]
    return out


@pytest.mark.parametrize("a", ARRAYS, ids=range(len(ARRAYS)))
def test_match_numpy_on_concrete_arrays(a):
    for got, want in zip(fnp.nonzero(a), np.nonzero(a)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.int64
    np.testing.assert_array_equal(fnp.argwhere(a), np.argwhere(a))
    np.testing.assert_array_equal(fnp.flatnonzero(a), np.flatnonzero(a))
    # the same through numpy's own functions on a tracer with a concrete value (grad)
    if a.dtype.kind == "f":
        fd.grad(lambda x: fnp.sum(x[np.nonzero(x)]) * 1.0)(a)


@pytest.mark.parametrize("a", ARRAYS, ids=range(len(ARRAYS)))
@pytest.mark.parametrize("size", [0, 1, 3, 30])
def test_fixed_size_forms_trace_and_match_the_padded_numpy_result(a, size):
    want = [_padded(i, size, -1) for i in np.nonzero(a)]
    for f in (lambda x: fnp.nonzero(x, size=size, fill_value=-1),
              fd.jit(lambda x: fnp.nonzero(x, size=size, fill_value=-1))):
        for got, w in zip(f(a), want):
            np.testing.assert_array_equal(got, w)
    flat = _padded(np.flatnonzero(a), size, 7)
    np.testing.assert_array_equal(fd.jit(lambda x: fnp.flatnonzero(x, size=size, fill_value=7))(a),
                                  flat)
    rows = fd.jit(lambda x: fnp.argwhere(x, size=size))(a)
    assert rows.shape == (size, a.ndim)
    np.testing.assert_array_equal(rows, np.stack([_padded(i, size, 0) for i in np.nonzero(a)], 1))


def test_vmap_of_the_fixed_size_forms_equals_a_loop():
    xs = (RNG.standard_normal((5, 3, 4)) > 0.5) * RNG.standard_normal((5, 3, 4))
    f = lambda x: fnp.nonzero(x, size=4, fill_value=(9, 8))  # noqa: E731
    batched = fd.vmap(f)(xs)
    for k, x in enumerate(xs):
        for got, want in zip(batched, f(x)):
            np.testing.assert_array_equal(got[k], want)
    np.testing.assert_array_equal(fd.vmap(lambda x: fnp.unique(x, size=6))(xs),
                                  np.stack([fnp.unique(x, size=6) for x in xs]))


def test_unique_with_size_pads_traces_and_differentiates():
    x = np.array([3.0, 1.0, 3.0, np.nan, 2.0, np.nan])
    np.testing.assert_array_equal(fnp.unique(x, size=3), np.unique(x)[:3])
    np.testing.assert_array_equal(fnp.unique(x, size=6), [1.0, 2.0, 3.0, np.nan, 1.0, 1.0])
    np.testing.assert_array_equal(fd.jit(lambda v: fnp.unique(v, size=6, fill_value=-1.0))(x),
                                  [1.0, 2.0, 3.0, np.nan, -1.0, -1.0])
    assert fnp.unique(x, size=6, equal_nan=False)[4] != fnp.unique(x, size=6, equal_nan=False)[4]
    # the values are gathered from the sorted input: each comes from one element
    g = fd.grad(lambda v: fnp.sum(fnp.unique(v, size=2) * np.array([1.0, 10.0])))(
        np.array([3.0, 1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 10.0])
    assert fnp.unique(np.ones(3, np.float32), size=2).dtype == np.float32


def test_errors_say_what_is_needed():
    a = np.array([0.0, 1.0])
    with pytest.raises(ConcretizationError, match="size="):
        fd.jit(lambda x: fnp.nonzero(x))(a)
    with pytest.raises(ConcretizationError, match="size="):
        fd.vmap(lambda x: fnp.argwhere(x))(np.ones((2, 2)))
    with pytest.raises(ConcretizationError, match="size"):
        fd.jit(lambda x: fnp.unique(x))(a)
    with pytest.raises(ShapeError, match="at least one dimension"):
        fnp.nonzero(np.array(1.0))
    with pytest.raises(InvalidArgumentError, match="non-negative Python int"):
        fnp.nonzero(a, size=-1)
    with pytest.raises(InvalidArgumentError, match="one index per axis"):
        fnp.nonzero(np.ones((2, 2)), size=2, fill_value=(1, 2, 3))
    with pytest.raises(InvalidArgumentError, match="flattened array only"):
        fnp.unique(a, size=2, return_counts=True)
