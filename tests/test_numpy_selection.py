"""Tests of choose, compress, extract, partition, argpartition and lexsort.

One table row per (function, input kind). Every row is compared with numpy
(values and result dtype), run under jit against eager and vmapped over a
batch against a Python loop; float64 rows marked differentiable are
gradient-checked to order 2 in both modes. Arguments listed in a row's
``fixed`` stay concrete under jit and vmap (closed over), as a selector in
mode='raise' or a condition without size= must. partition and argpartition
are compared with numpy's partition property and with the sorted order they
promise. A second table holds the bad inputs and their errors.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError, UnsupportedNumpyError)
from funcdiff.test_util import check_grads
from numpy_tables import assert_matches, both, leaves

RNG = np.random.default_rng(0)


class Row(NamedTuple):
    name: str
    fn: Callable          # funcdiff version, called with the arrays
    ref: Callable         # numpy version
    args: tuple           # the arrays
    grad: bool = True     # check derivatives in the float64 arguments
    fixed: tuple = ()     # indices of arguments closed over (kept concrete) under jit/vmap


def _normal(*shape, dtype="f8"):
    return RNG.standard_normal(shape).astype(dtype)




def _choose(**kw):
    """choose with the selector first and the choices as the remaining arguments."""
    return (lambda a, *c: fnp.choose(a, list(c), **kw)), (lambda a, *c: np.choose(a, c, **kw))


def _padded(ref, size, fill, axis=0):
    """numpy's compress/extract result cut or padded to ``size`` along ``axis``."""
    def padded(*args):
        out = np.moveaxis(ref(*args), axis, 0)[:size]
        pad = np.full((size - out.shape[0],) + out.shape[1:], fill, out.dtype)
        return np.moveaxis(np.concatenate([out, pad]), 0, axis)
    return padded


def _sorted_partition(kth, axis=-1):
    """numpy's partition, then sorted: the order funcdiff promises, in numpy's dtype."""
    return (lambda a: fnp.partition(a, kth, axis=axis),
            lambda a: np.sort(np.partition(a, kth, axis=axis), axis=axis, kind="stable"))


def _sorted_argpartition(kth, axis=-1):
    return (lambda a: fnp.argpartition(a, kth, axis=axis),
            lambda a: np.argsort(a, axis=axis, kind="stable").astype(
                np.argpartition(a, kth, axis=axis).dtype))


SELECTOR = np.array([[2, 0, 1, 1], [1, 1, 0, 2]])
CONDITION = np.array([True, False, True, True])
TIES = np.array([2.0, np.nan, 1.0, 2.0, -0.0, 0.0, np.nan, 1.0])

ROWS = [
    # choose
    Row("choose-broadcast", *_choose(), (SELECTOR, _normal(4), _normal(2, 4), _normal(1, 4)),
        fixed=(0,)),
    Row("choose-array-choices", lambda a, c: fnp.choose(a, c), np.choose,
        (np.array([2, 0, 1]), _normal(3, 3)), fixed=(0,)),
    # an array of scalar choices against a 2-D selector: each choice broadcasts alone
    Row("choose-array-of-scalar-choices", lambda a, c: fnp.choose(a, c), np.choose,
        (np.array([[1, 0, 2], [2, 2, 0]]), _normal(3)), fixed=(0,)),
    Row("choose-array-choices-lower-rank", lambda a, c: fnp.choose(a, c), np.choose,
        (np.array([[[1, 0], [0, 1]], [[1, 1], [0, 0]]]), _normal(2, 2)), fixed=(0,)),
    Row("choose-wrap", *_choose(mode="wrap"), (np.array([[-1, 5, 3], [0, 4, -4]]),
                                               _normal(3), _normal(2, 3))),
    Row("choose-clip", *_choose(mode="clip"), (np.array([-3, 0, 1, 7]), _normal(4), _normal(4))),
    Row("choose-f32", *_choose(), (SELECTOR, _normal(4, dtype="f4"), _normal(2, 4, dtype="f4"),
                                   _normal(4, dtype="f4")), grad=False, fixed=(0,)),
    Row("choose-int-promotes", *_choose(), (np.array([0, 1, 1]), np.array([1, 2, 3], np.int32),
                                            np.array([7, 8, 9], np.int8)), fixed=(0,)),
    Row("choose-int-and-float", *_choose(), (np.array([0, 1, 1]), np.array([1, 2, 3]),
                                             _normal(3, dtype="f4")), grad=False, fixed=(0,)),
    Row("choose-weak-scalar", lambda a, x: fnp.choose(a, [x, 1.5]),
        lambda a, x: np.choose(a, [x, 1.5]), (np.array([0, 1, 0]), _normal(3, dtype="f4")),
        grad=False, fixed=(0,)),
    Row("choose-bool-selector", *_choose(), (np.array([True, False, True]), _normal(3),
                                             _normal(3)), fixed=(0,)),
    Row("choose-0d", *_choose(), (np.array(1), _normal(), _normal(), _normal()), fixed=(0,)),
    # compress
    Row("compress-flat", *both("compress"), (CONDITION, _normal(2, 3)), fixed=(0,)),
    Row("compress-axis0", *both("compress", axis=0), (CONDITION, _normal(4, 3)), fixed=(0,)),
    Row("compress-axis-negative", *both("compress", axis=-2), (np.array([0, 1]),
                                                                 _normal(3, 2, 2)), fixed=(0,)),
    Row("compress-short-condition", *both("compress", axis=1),
        (np.array([True, True]), _normal(2, 4)), fixed=(0,)),
    Row("compress-long-false-tail", *both("compress"),
        (np.array([1, 0, 1, 0, 0]), _normal(3)), fixed=(0,)),
    Row("compress-float-condition", *both("compress"), (np.array([0.5, 0.0, -2.0]), _normal(3)),
        fixed=(0,)),
    Row("compress-nothing", *both("compress", axis=1), (np.zeros(3, bool), _normal(2, 3)),
        fixed=(0,)),
    Row("compress-0d", *both("compress"), (np.array([True, False]), _normal()), fixed=(0,)),
    Row("compress-f32", *both("compress", axis=0), (CONDITION, _normal(4, 2, dtype="f4")),
        grad=False, fixed=(0,)),
    Row("compress-int", *both("compress"), (CONDITION, np.arange(4)), fixed=(0,)),
    Row("compress-bool", *both("compress"), (CONDITION, np.array([True, True, False, True])),
        fixed=(0,)),
    Row("compress-size-pads", lambda c, a: fnp.compress(c, a, axis=1, size=4, fill_value=-1.0),
        _padded(lambda c, a: np.compress(c, a, axis=1), 4, -1.0, axis=1),
        (np.array([1, 0, 0, 1, 0]), _normal(2, 5))),
    Row("compress-size-cuts", lambda c, a: fnp.compress(c, a, size=2),
        _padded(np.compress, 2, 0.0), (np.array([1, 1, 0, 1]), _normal(4))),
    Row("compress-size-concrete", lambda c, a: fnp.compress(c, a, size=3),
        _padded(np.compress, 3, 0.0), (CONDITION, _normal(4)), fixed=(0,)),
    Row("compress-size-short-condition", lambda c, a: fnp.compress(c, a, size=3),
        _padded(np.compress, 3, 0.0), (np.array([0, 1]), _normal(4))),
    Row("compress-size-int", lambda c, a: fnp.compress(c, a, size=3, fill_value=-7),
        _padded(np.compress, 3, -7), (np.array([0, 1, 1, 1, 1]), np.arange(5, dtype=np.int32))),
    # extract
    Row("extract-2d", *both("extract"), (np.array([[1, 0, 1], [0, 1, 1]]), _normal(2, 3)),
        fixed=(0,)),
    Row("extract-short-condition", *both("extract"), (np.array([True, False, True]),
                                                       _normal(2, 3)), fixed=(0,)),
    Row("extract-int", *both("extract"), (np.array([0, 3, 0, 1]), np.arange(4)), fixed=(0,)),
    Row("extract-size", lambda c, a: fnp.extract(c, a, size=4, fill_value=2.5),
        _padded(np.extract, 4, 2.5), (np.array([[0, 1], [1, 0]]), _normal(2, 2))),
    # partition and argpartition
    Row("partition-1d", *_sorted_partition(2), (_normal(6),)),
    Row("partition-2d-axis0", *_sorted_partition(1, axis=0), (_normal(4, 3),)),
    Row("partition-kth-list", *_sorted_partition([0, -1, 3]), (_normal(2, 5),)),
    Row("partition-negative-kth", *_sorted_partition(-4), (_normal(3, 4),)),
    Row("partition-axis-none", *_sorted_partition(5, axis=None), (_normal(2, 3),)),
    Row("partition-f32", *_sorted_partition(1), (_normal(3, dtype="f4"),), grad=False),
    Row("partition-int", *_sorted_partition(3), (RNG.integers(-5, 5, (2, 7)),)),
    Row("partition-bool", *_sorted_partition(1), (np.array([True, False, True]),)),
    Row("partition-nan-ties", *_sorted_partition(4), (TIES,), grad=False),
    Row("argpartition-1d", *_sorted_argpartition(2), (_normal(6),)),
    Row("argpartition-3d-axis1", *_sorted_argpartition([0, 2], axis=1), (_normal(2, 3, 2),)),
    Row("argpartition-axis-none", *_sorted_argpartition(0, axis=None), (_normal(2, 2),)),
    Row("argpartition-int-ties", *_sorted_argpartition(1), (np.array([3, 1, 3, 1, 2]),)),
    Row("argpartition-nan-ties", *_sorted_argpartition(-1), (TIES,)),
    Row("argpartition-0d", *_sorted_argpartition(0), (np.array(2.0),)),
    # lexsort
    Row("lexsort-two-keys", lambda a, b: fnp.lexsort((a, b)), lambda a, b: np.lexsort((a, b)),
        (_normal(6), np.array([1, 0, 1, 0, 1, 1]))),
    Row("lexsort-ties-nan", lambda a, b: fnp.lexsort([a, b]), lambda a, b: np.lexsort([a, b]),
        (TIES[::-1].copy(), TIES)),
    Row("lexsort-stacked-keys", *both("lexsort"), (RNG.integers(0, 3, (3, 8)),)),
    Row("lexsort-axis0", *both("lexsort", axis=0), (RNG.integers(0, 2, (2, 5, 3)),)),
    Row("lexsort-mixed-dtypes", lambda a, b, c: fnp.lexsort((a, b, c)),
        lambda a, b, c: np.lexsort((a, b, c)),
        (np.array([0.5, 0.5, 0.1, 0.1], np.float32), np.array([True, False, True, False]),
         np.array([2, 2, 2, 1], np.int8))),
    Row("lexsort-one-key", lambda a: fnp.lexsort((a,)), lambda a: np.lexsort((a,)),
        (np.array([3.0, 1.0, 3.0, 2.0]),)),
]






def _split(row, args=None):
    """The row's function of its non-fixed arguments, and those arguments."""
    args = row.args if args is None else args
    free = [k for k in range(len(args)) if k not in row.fixed]

    def f(*free_args):
        merged = list(args)
        for k, v in zip(free, free_args):
            merged[k] = v
        return row.fn(*merged)
    return f, [args[k] for k in free]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    assert_matches(row.fn(*row.args), row.ref(*row.args), exact=True)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_jit_equals_eager(row):
    f, free = _split(row)
    assert_matches(fd.jit(f)(*free), row.fn(*row.args), exact=True)


def _vary(a, k):
    """The ``k``-th batch member made from ``a``: floats scaled and shifted, integers
    and booleans rolled (so every member stays valid)."""
    if a.dtype.kind == "f":
        return (a * (1 + 0.5 * k) + 0.25 * k).astype(a.dtype)
    return np.roll(a, k)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_vmap_equals_a_loop(row):
    batch = [tuple(a if i in row.fixed else _vary(a, k) for i, a in enumerate(row.args))
             for k in range(3)]
    f, _ = _split(row)
    stacked = [np.stack(column) for i, column in enumerate(zip(*batch)) if i not in row.fixed]
    batched = leaves(fd.vmap(f)(*stacked))
    for k, args in enumerate(batch):
        for got, want in zip(batched, leaves(row.fn(*args))):
            np.testing.assert_array_equal(got[k], want)


GRAD_ROWS = [r for r in ROWS if r.grad and any(a.dtype == np.float64 for a in r.args)]


@pytest.mark.parametrize("row", GRAD_ROWS, ids=[r.name for r in GRAD_ROWS])
def test_derivatives_to_order_two(row):
    floats = [k for k, a in enumerate(row.args) if a.dtype == np.float64 and k not in row.fixed]

    def f(*float_args):
        merged = list(row.args)
        for k, v in zip(floats, float_args):
            merged[k] = v
        return row.fn(*merged)
    out = np.asarray(f(*[row.args[k] for k in floats]))
    if out.dtype.kind != "f":  # integer results (argpartition, lexsort): no derivative
        return
    check_grads(f, tuple(row.args[k] for k in floats), order=2, modes=("fwd", "rev"))


def test_derivatives_have_the_closed_forms():
    # choose routes each cotangent to the choice it was picked from
    x, y = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    gx, gy = fd.grad(lambda x, y: fnp.sum(fnp.choose(np.array([0, 1, 0]), [x, y])
                                          * np.array([1.0, 10.0, 100.0])), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 100.0])
    np.testing.assert_array_equal(gy, [0.0, 10.0, 0.0])
    # a choice broadcast to several places collects all their cotangents
    assert fd.grad(lambda s: fnp.sum(fnp.choose(np.array([1, 1, 0]), [x, s])))(2.0) == 2.0
    # compress(size=) pads with fill_value, which receives the padded slots' cotangents
    g, gf = fd.grad(lambda a, f: fnp.sum(fnp.compress(np.array([1, 0, 1]), a, size=4,
                                                      fill_value=f)), argnums=(0, 1))(x, 0.0)
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0])
    assert gf == 2.0
    # under grad the condition may come from the input: its value is concrete
    g = fd.grad(lambda a: fnp.sum(fnp.extract(a > 1.5, a) ** 2))(x)
    np.testing.assert_array_equal(g, [0.0, 4.0, 6.0])
    # partition permutes the derivative like the values
    np.testing.assert_array_equal(fd.jacrev(lambda a: fnp.partition(a, 1))(np.array([3.0, 1.0])),
                                  [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("kth", [0, 2, -1, (1, 4), [0, 5]])
def test_partition_is_a_valid_numpy_partition(kth):
    a = _normal(3, 6)
    got, order = fnp.partition(a, kth), fnp.argpartition(a, kth)
    for k in np.atleast_1d(kth):
        np.testing.assert_array_equal(got[:, k], np.partition(a, kth)[:, k])
        assert (got[:, :k % 6] <= got[:, k:k % 6 + 1]).all()
        assert (got[:, k % 6:] >= got[:, k:k % 6 + 1]).all()
    np.testing.assert_array_equal(np.take_along_axis(a, order, axis=-1), got)


def test_vmap_of_traced_selectors_and_conditions():
    # a batched condition needs size=; a batched selector needs mode 'wrap' or 'clip'
    conditions = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]])
    xs = _normal(3, 4)
    got = fd.vmap(lambda c, x: fnp.compress(c, x, size=3, fill_value=9.0))(conditions, xs)
    for c, x, g in zip(conditions, xs, got):
        np.testing.assert_array_equal(g, _padded(np.compress, 3, 9.0)(c, x))
    selectors = np.array([[0, 1, 2], [2, 2, 2], [5, -1, 1]])
    got = fd.vmap(lambda a: fnp.choose(a, [xs[0, :3], xs[1, :3], 0.5], mode="wrap"))(selectors)
    for a, g in zip(selectors, got):
        np.testing.assert_array_equal(g, np.choose(a, [xs[0, :3], xs[1, :3], 0.5], mode="wrap"))


def test_numpy_functions_on_tracers_dispatch_here():
    def f(x):
        return (np.sum(np.choose(np.array([1, 0, 1]), [x, x ** 2]))
                + np.sum(np.compress(np.array([True, False, True]), x))
                + np.sum(np.extract(np.array([0, 1, 1]), x) ** 2)
                + np.sum(np.partition(x, 1) * np.arange(3.0))
                + np.sum(x[np.argpartition(x, 0)] * np.arange(3.0))
                + np.sum(x[np.lexsort((x, -x))] * np.arange(3.0)))
    x = np.array([0.3, -1.2, 2.0])
    check_grads(f, (x,), order=1)
    np.testing.assert_allclose(fd.jit(f)(x), f(x))


def test_make_jaxpr_of_compress_with_size_has_no_data_dependent_shape():
    jaxpr = fd.make_jaxpr(lambda c, x: fnp.compress(c, x, size=2))(CONDITION, _normal(4))
    assert "f64[2]" in str(jaxpr)


ERRORS = [
    ("choose-out-of-range", lambda: fnp.choose(np.array([0, 3]), [np.ones(2)] * 3),
     IndexOutOfBoundsError, "entry 3.*mode='wrap'"),
    ("choose-negative", lambda: fnp.choose(np.array([-1]), [np.ones(1)] * 2),
     IndexOutOfBoundsError, r"\[0, 2\)"),
    ("choose-traced-raise", lambda: fd.jit(lambda a: fnp.choose(a, [1.0, 2.0]))(np.array([0])),
     ConcretizationError, "mode='wrap' or mode='clip'"),
    ("choose-float-selector", lambda: fnp.choose(np.array([0.0]), [np.ones(1)]), DTypeError,
     "integer selector"),
    ("choose-no-choices", lambda: fnp.choose(np.array([0]), []), InvalidArgumentError,
     "at least one choice"),
    ("choose-0d-choices", lambda: fnp.choose(np.array([0]), np.array(1.0)),
     InvalidArgumentError, "at least one choice"),
    ("choose-mode", lambda: fnp.choose(np.array([0]), [1.0], mode="bad"), InvalidArgumentError,
     "'raise', 'wrap' or 'clip'"),
    ("choose-shapes", lambda: fnp.choose(np.array([0, 1]), [np.ones(3), np.ones(3)]),
     ShapeError, "choose"),
    ("choose-out", lambda: fnp.choose(np.array([0]), [1.0], out=np.zeros(1)),
     UnsupportedNumpyError, "out="),
    ("compress-traced-condition", lambda: fd.jit(fnp.compress)(CONDITION, np.ones(4)),
     ConcretizationError, "size="),
    ("compress-vmapped-condition", lambda: fd.vmap(fnp.extract)(np.ones((2, 2)), np.ones((2, 2))),
     ConcretizationError, "size="),
    ("compress-2d-condition", lambda: fnp.compress(np.ones((1, 2)), np.ones(2)), ShapeError,
     "1-D condition"),
    ("compress-true-tail", lambda: fnp.compress(np.array([0, 1, 0, 1]), np.ones(3)),
     IndexOutOfBoundsError, "index 3"),
    ("extract-true-tail", lambda: fnp.extract(np.ones(5), np.ones((2, 2))),
     IndexOutOfBoundsError, "beyond the axis of length 4"),
    ("compress-axis", lambda: fnp.compress(CONDITION, np.ones(4), axis=1), AxisError,
     "out of range"),
    ("compress-0d-axis", lambda: fnp.compress(CONDITION, np.array(1.0), axis=0), AxisError,
     "axis=None"),
    ("compress-size-negative", lambda: fnp.compress(CONDITION, np.ones(4), size=-1),
     InvalidArgumentError, "non-negative Python int"),
    ("partition-kth-range", lambda: fnp.partition(np.ones(3), 3), IndexOutOfBoundsError,
     r"kth=3 is out of bounds.*\[-3, 3\)"),
    ("partition-kth-negative-range", lambda: fnp.partition(np.ones(3), [0, -4]),
     IndexOutOfBoundsError, "kth=-4"),
    ("partition-kth-bool", lambda: fnp.partition(np.ones(3), True), InvalidArgumentError,
     "not booleans"),
    ("partition-kth-float", lambda: fnp.argpartition(np.ones(3), 1.0), InvalidArgumentError,
     "sequence of ints"),
    ("partition-kth-traced", lambda: fd.jit(fnp.partition)(np.ones(3), 1), ConcretizationError,
     "static_argnums"),
    ("partition-0d", lambda: fnp.partition(np.array(1.0), 0), AxisError, "0-d"),
    ("partition-kind", lambda: fnp.partition(np.ones(3), 0, kind="quick"), InvalidArgumentError,
     "introselect"),
    ("partition-order", lambda: fnp.argpartition(np.ones(3), 0, order="x"),
     UnsupportedNumpyError, "order="),
    ("lexsort-empty", lambda: fnp.lexsort([]), InvalidArgumentError, "at least one key"),
    ("lexsort-shapes", lambda: fnp.lexsort((np.ones(3), np.ones(2))), ShapeError, "one shape"),
    ("lexsort-axis-none", lambda: fnp.lexsort((np.ones(3),), axis=None), InvalidArgumentError,
     "axis=None"),
    ("lexsort-axis-range", lambda: fnp.lexsort((np.ones(3),), axis=1), AxisError, "out of range"),
]


@pytest.mark.parametrize("call, error, match", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_bad_inputs_raise_teaching_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
