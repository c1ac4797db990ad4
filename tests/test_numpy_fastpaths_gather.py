"""Fast paths of funcdiff.numpy's sort, argsort, cumsum, diag, diagonal, take and trace.

These functions skip argument normalisation in their common case (a numpy
array or tracer, plain int axes in range, concrete in-range int64 indices).
The same call with an axis given as a numpy integer (or with negative
indices) takes the general path. One table row per call compares the two
paths with numpy: values and dtypes (float32 stays float32), the primitives
they bind (make_jaxpr), and their grad, jvp, hessian, vmap and jit results.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import AxisError, FunctionalDiffError
from funcdiff.test_util import check_grads

I = np.int64  # an axis (or offset) of this type takes the general path
IDX = np.array([0, 3, 5, 3])  # in range for an axis of 6: the fast path of take
NEG = IDX - 6                 # the same positions counted from the end: the general path


class Row(NamedTuple):
    name: str
    fast: Callable
    general: Callable
    ref: Callable           # numpy
    shape: tuple
    prims: tuple            # primitive names bound, in order, for a float64 input
    differentiable: bool = True  # argsort's output is an integer array


ROWS = [
    Row("sort", lambda x: fnp.sort(x), lambda x: fnp.sort(x, axis=I(-1)),
        lambda x: np.sort(x, kind="stable"), (3, 5), ("sort",)),
    Row("sort[0]", lambda x: fnp.sort(x, axis=0), lambda x: fnp.sort(x, axis=I(0)),
        lambda x: np.sort(x, axis=0, kind="stable"), (4, 3), ("sort",)),
    Row("argsort", lambda x: fnp.argsort(x), lambda x: fnp.argsort(x, axis=I(0)),
        lambda x: np.argsort(x, kind="stable"), (6,), ("iota", "stop_gradient", "sort"),
        differentiable=False),
    Row("argsort[-2]", lambda x: fnp.argsort(x, axis=-2), lambda x: fnp.argsort(x, axis=I(0)),
        lambda x: np.argsort(x, axis=0, kind="stable"), (4, 3),
        ("iota", "stop_gradient", "sort"), differentiable=False),
    Row("cumsum", lambda x: fnp.cumsum(x), lambda x: fnp.cumsum(x, axis=I(0)),
        np.cumsum, (6,), ("cumsum",)),
    Row("cumsum[-1]", lambda x: fnp.cumsum(x, axis=-1), lambda x: fnp.cumsum(x, axis=I(1)),
        lambda x: np.cumsum(x, axis=-1), (3, 4), ("cumsum",)),
    Row("cumprod[0]", lambda x: fnp.cumprod(x, axis=0), lambda x: fnp.cumprod(x, axis=I(0)),
        lambda x: np.cumprod(x, axis=0), (3, 4), ("cumprod",)),
    Row("diag(v)", lambda x: fnp.diag(x), lambda x: fnp.diag(x, I(0)),
        np.diag, (5,), ("select",)),
    Row("diag(v, 2)", lambda x: fnp.diag(x, 2), lambda x: fnp.diag(x, I(2)),
        lambda x: np.diag(x, 2), (4,), ("pad", "select")),
    Row("diag(v, -3)", lambda x: fnp.diag(x, -3), lambda x: fnp.diag(x, I(-3)),
        lambda x: np.diag(x, -3), (4,), ("pad", "select")),
    Row("diag(A)", lambda x: fnp.diag(x), lambda x: fnp.diag(x, I(0)),
        np.diag, (4, 4), ("reshape", "slice")),
    Row("diag(A, -1)", lambda x: fnp.diag(x, -1), lambda x: fnp.diag(x, I(-1)),
        lambda x: np.diag(x, -1), (3, 5), ("reshape", "slice")),
    Row("diag(A, 7)", lambda x: fnp.diag(x, 7), lambda x: fnp.diag(x, I(7)),
        lambda x: np.diag(x, 7), (3, 5), ("reshape", "slice")),
    Row("diagonal", lambda x: fnp.diagonal(x, 1, 2, 0),
        lambda x: fnp.diagonal(x, I(1), I(2), I(0)),
        lambda x: np.diagonal(x, 1, 2, 0), (3, 4, 5), ("transpose", "reshape", "slice")),
    Row("take", lambda x: fnp.take(x, IDX), lambda x: fnp.take(x, NEG),
        lambda x: np.take(x, IDX), (6,), ("gather",)),
    Row("take[1]", lambda x: fnp.take(x, IDX, axis=1), lambda x: fnp.take(x, NEG, axis=I(1)),
        lambda x: np.take(x, IDX, axis=1), (2, 6, 3), ("gather",)),
    Row("take[None]", lambda x: fnp.take(x, IDX), lambda x: fnp.take(x, NEG),
        lambda x: np.take(x, IDX), (2, 3), ("reshape", "gather")),
    Row("trace", lambda x: fnp.trace(x), lambda x: fnp.trace(x, axis1=I(0)),
        np.trace, (4, 4), ("reshape", "slice", "reduce_sum")),
    Row("trace(-1)", lambda x: fnp.trace(x, -1), lambda x: fnp.trace(x, I(-1)),
        lambda x: np.trace(x, -1), (3, 5), ("reshape", "slice", "reduce_sum")),
]
IDS = [r.name for r in ROWS]


def _input(row: Row, dtype: str = "f8", seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).permutation(int(np.prod(row.shape))).reshape(row.shape)
    return (x - 2).astype(dtype) / (1 if dtype[0] == "i" else 3)


def _weights(y) -> np.ndarray:
    return np.linspace(0.5, 1.5, np.size(y)).reshape(np.shape(y))


def _scalar(f, w):
    """A scalar function of ``f``'s output that depends on where each value lands."""
    return lambda x: fnp.sum(fnp.sin(f(x)) * w)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
@pytest.mark.parametrize("dtype", ["f8", "f4", "i8"])
def test_both_paths_match_numpy(row, dtype):
    x = _input(row, dtype)
    ref = row.ref(x)
    for path in (row.fast, row.general):
        out = path(x)
        assert type(out) is type(ref) and out.dtype == ref.dtype
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_both_paths_bind_the_same_primitives(row):
    x = _input(row)
    for path in (row.fast, row.general):
        names = tuple(e.primitive.name for e in fd.make_jaxpr(path)(x).jaxpr.eqns)
        assert names == row.prims


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_jit_and_vmap(row):
    x = _input(row)
    np.testing.assert_array_equal(fd.jit(row.fast)(x), row.ref(x))
    batch = np.stack([_input(row, seed=s) for s in range(3)])
    for in_axes in (0, 1):
        xs = np.moveaxis(batch, 0, in_axes)
        expected = np.stack([row.ref(b) for b in batch])
        np.testing.assert_array_equal(fd.vmap(row.fast, in_axes=in_axes)(xs), expected)


@pytest.mark.parametrize("row", [r for r in ROWS if r.differentiable],
                         ids=[r.name for r in ROWS if r.differentiable])
def test_derivatives_agree_between_paths(row):
    x = _input(row)
    w = _weights(row.ref(x))
    fast, general = _scalar(row.fast, w), _scalar(row.general, w)
    np.testing.assert_allclose(fd.grad(fast)(x), fd.grad(general)(x), rtol=1e-13)
    t = _weights(x)[::-1].reshape(x.shape) if x.ndim == 1 else _weights(x)
    np.testing.assert_allclose(fd.jvp(row.fast, (x,), (t,))[1],
                               fd.jvp(row.general, (x,), (t,))[1], rtol=1e-13)
    np.testing.assert_allclose(fd.hessian(fast)(x), fd.hessian(general)(x), atol=1e-13)
    check_grads(row.fast, (x,), order=2)


def test_float32_derivatives_stay_float32():
    v32 = np.array([3., 1., 2.], np.float32)
    for f in (fnp.sort, fnp.cumsum, fnp.diag, lambda v: fnp.take(v, np.array([2, 0])),
              lambda v: fnp.trace(fnp.diag(v))):
        g = fd.grad(lambda v: fnp.sum(f(v) * f(v)))(v32)
        assert g.dtype == np.float32


def test_argsort_is_not_differentiated():
    x = np.array([3., 1., 2.])
    g = fd.grad(lambda x: fnp.sum(x * fnp.argsort(x)))(x)
    np.testing.assert_array_equal(g, np.argsort(x))


@pytest.mark.parametrize("f", [
    lambda x: fnp.sort(x, axis=2), lambda x: fnp.argsort(x, axis=-3),
    lambda x: fnp.cumsum(x, axis=2), lambda x: fnp.take(x, IDX[:2], axis=2),
    lambda x: fnp.diagonal(x, 0, 1, -3), lambda x: fnp.trace(x, axis1=0, axis2=2)])
def test_bad_axes_raise_like_the_general_path(f):
    x = np.ones((2, 2))
    with pytest.raises(AxisError):
        f(x)


def test_take_out_of_range_indices_take_the_general_path():
    v = np.arange(6.)
    with pytest.raises(FunctionalDiffError, match="funcdiff.numpy.take: index 6 is out of"):
        fnp.take(v, np.array([0, 6]))
    np.testing.assert_array_equal(fnp.take(v, np.array([7, -7]), mode="wrap"), [1., 5.])
    np.testing.assert_array_equal(fnp.take(v, np.array([9, -1]), mode="clip"), [5., 0.])
    np.testing.assert_array_equal(fnp.take(v, np.arange(40) % 6), np.arange(40) % 6)
    with pytest.raises(FunctionalDiffError, match="index -7 is out of bounds"):
        fnp.take(v, np.arange(40) - 7)
    np.testing.assert_array_equal(fnp.take(v, np.zeros((0,), np.int64)), np.zeros(0))


def test_diag_results_do_not_share_the_cached_mask():
    out = fnp.diag(np.ones(3))
    out[0, 1] = 7.0  # the result is the caller's to write
    np.testing.assert_array_equal(fnp.diag(np.ones(3)), np.eye(3))
    np.testing.assert_array_equal(fnp.diag(np.arange(300.)), np.diag(np.arange(300.)))
