"""Tests of funcdiff.numpy's shape functions, indexing (``getitem``) and ``.at[]`` updates.

Tables drive everything: each shape row is compared with numpy (values and
result dtype) for several dtypes, eagerly and staged through make_jaxpr +
eval_jaxpr, and float64 rows are gradient-checked. Each index expression is
compared with numpy eagerly, staged, and through vjp, whose pullback must equal
numpy's scatter-add of the cotangent (so repeated indices accumulate).
"""

from __future__ import annotations

import doctest
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import (AxisError, ConcretizationError, FunctionalDiffError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.numpy import _getitem
from funcdiff.numpy import _indexing as ix
import funcdiff.numpy as S  # the shape family (_shape, _broadcasting, _joining, ...)
from funcdiff.primitives import elementwise as el
from funcdiff.primitives import reductions
from funcdiff.primitives.indexing import IndexOutOfBoundsError
from funcdiff.test_util import check_grads
from funcdiff.tree_util import tree_flatten, tree_unflatten

RNG = np.random.default_rng(0)


def _value(shape, dtype, rng=RNG):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-5, 6, shape).astype(dtype)


def _assert_same(expected, actual, where=""):
    """Equal values, shapes and dtypes, recursing into tuples and lists."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), where
        for e, a in zip(expected, actual):
            _assert_same(e, a, where)
        return
    e, a = np.asarray(expected), np.asarray(actual)
    assert a.shape == e.shape, f"{where}: shape {a.shape} != numpy's {e.shape}"
    assert a.dtype == e.dtype, f"{where}: dtype {a.dtype} != numpy's {e.dtype}"
    np.testing.assert_array_equal(a, e, err_msg=where)


def _sum(x):
    return reductions.reduce_sum(x, axes=tuple(range(np.ndim(x) if not hasattr(x, "aval")
                                                     else x.aval.ndim)))


def _staged(f, *args):
    """``f(*args)`` through make_jaxpr and eval_jaxpr."""
    closed = fd.make_jaxpr(f)(*args)
    leaves = tree_flatten(args)[0]
    return tree_unflatten(closed.out_tree, closed(*leaves))


# ---------------------------------------------------------------------------
# Shape functions


class Row(NamedTuple):
    name: str
    call: Callable          # call(module, *arrays): module is numpy or funcdiff's
    shapes: tuple           # one shape per array argument
    dtypes: tuple = ("f8", "f4", "i8", "b")  # each applies to every argument
    grad: int = 1           # gradient order checked for float64 (0: none)


def _r(name, call, *shapes, dtypes=("f8", "f4", "i8", "b"), grad=1):
    return Row(name, call, shapes, dtypes, grad)


SHAPE_ROWS = [
    _r("reshape", lambda m, x: m.reshape(x, (4, -1)), (2, 3, 4), grad=2),
    _r("reshape", lambda m, x: m.reshape(x, 6), (2, 3)),
    _r("reshape", lambda m, x: m.reshape(x, (1, 1)), ()),
    _r("reshape", lambda m, x: m.reshape(x, (0, 2)), (2, 0)),
    _r("ravel", lambda m, x: m.ravel(x), (2, 3)),
    _r("transpose", lambda m, x: m.transpose(x), (2, 3, 4)),
    _r("transpose", lambda m, x: m.transpose(x, (2, 0, -2)), (2, 3, 4)),
    _r("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), (2, 3, 4)),
    _r("moveaxis", lambda m, x: m.moveaxis(x, [0, 1], [-1, -3]), (2, 3, 4)),
    _r("swapaxes", lambda m, x: m.swapaxes(x, 0, -1), (2, 3, 4)),
    _r("rollaxis", lambda m, x: m.rollaxis(x, 2), (2, 3, 4)),
    _r("rollaxis", lambda m, x: m.rollaxis(x, 0, 3), (2, 3, 4)),
    _r("rollaxis", lambda m, x: m.rollaxis(x, -1, -2), (2, 3, 4)),
    _r("squeeze", lambda m, x: m.squeeze(x), (1, 3, 1)),
    _r("squeeze", lambda m, x: m.squeeze(x, axis=(0, -1)), (1, 3, 1)),
    _r("expand_dims", lambda m, x: m.expand_dims(x, (0, -1)), (2, 3)),
    _r("expand_dims", lambda m, x: m.expand_dims(x, 1), (2, 3)),
    _r("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), (3, 1)),
    _r("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y), (3, 1), (2, 1, 4)),
    _r("atleast_1d", lambda m, x: m.atleast_1d(x), ()),
    _r("atleast_1d", lambda m, x, y: m.atleast_1d(x, y), (), (2, 2)),
    _r("atleast_2d", lambda m, x: m.atleast_2d(x), (3,)),
    _r("atleast_3d", lambda m, x: m.atleast_3d(x), ()),
    _r("atleast_3d", lambda m, x: m.atleast_3d(x), (3,)),
    _r("atleast_3d", lambda m, x: m.atleast_3d(x), (2, 3)),
    _r("concatenate", lambda m, x, y: m.concatenate([x, y]), (2, 3), (1, 3), grad=2),
    _r("concatenate", lambda m, x, y: m.concatenate((x, y), axis=-1), (2, 3), (2, 1)),
    _r("concatenate", lambda m, x, y: m.concatenate([x, y], axis=None), (2, 3), (4,)),
    _r("concatenate", lambda m, x: m.concatenate([x, np.array([1, 2], np.int32)]), (2,)),
    _r("concatenate", lambda m, x: m.concatenate([x, [1.5, 2.5]]), (2,)),
    _r("concatenate", lambda m, x: m.concatenate([x, x], dtype=np.float32), (2,), grad=0),
    _r("stack", lambda m, x, y: m.stack([x, y]), (2, 3), (2, 3)),
    _r("stack", lambda m, x, y: m.stack((x, y), axis=-1), (2, 3), (2, 3)),
    _r("hstack", lambda m, x, y: m.hstack([x, y]), (2,), (3,)),
    _r("hstack", lambda m, x, y: m.hstack([x, y]), (2, 1), (2, 3)),
    _r("vstack", lambda m, x, y: m.vstack([x, y]), (3,), (2, 3)),
    _r("dstack", lambda m, x, y: m.dstack([x, y]), (3,), (1, 3)),
    _r("column_stack", lambda m, x, y: m.column_stack([x, y]), (3,), (3, 2)),
    _r("split", lambda m, x: m.split(x, 2, axis=1), (3, 4)),
    _r("split", lambda m, x: m.split(x, [1, -1, 9]), (5, 2)),
    _r("split", lambda m, x: m.split(x, [3, 1]), (5,)),
    _r("array_split", lambda m, x: m.array_split(x, 3, axis=-1), (2, 7)),
    _r("array_split", lambda m, x: m.array_split(x, 4), (2,)),
    _r("hsplit", lambda m, x: m.hsplit(x, 2), (3, 4)),
    _r("hsplit", lambda m, x: m.hsplit(x, [1]), (4,)),
    _r("vsplit", lambda m, x: m.vsplit(x, [1]), (3, 4)),
    _r("dsplit", lambda m, x: m.dsplit(x, 2), (1, 2, 4)),
    _r("tile", lambda m, x: m.tile(x, 3), (2,), grad=2),
    _r("tile", lambda m, x: m.tile(x, (2, 1, 2)), (2, 3)),
    _r("tile", lambda m, x: m.tile(x, (2,)), (2, 3)),
    _r("tile", lambda m, x: m.tile(x, (0, 2)), (2,)),
    _r("repeat", lambda m, x: m.repeat(x, 2), (2, 3), grad=2),
    _r("repeat", lambda m, x: m.repeat(x, [1, 0, 3], axis=1), (2, 3)),
    _r("repeat", lambda m, x: m.repeat(x, [2], axis=-2), (2, 3)),
    _r("repeat", lambda m, x: m.repeat(x, 3), ()),
    _r("flip", lambda m, x: m.flip(x), (2, 3)),
    _r("flip", lambda m, x: m.flip(x, (0, -1)), (2, 3, 2)),
    _r("fliplr", lambda m, x: m.fliplr(x), (2, 3)),
    _r("flipud", lambda m, x: m.flipud(x), (3,)),
    _r("roll", lambda m, x: m.roll(x, 2), (2, 3)),
    _r("roll", lambda m, x: m.roll(x, -7, axis=1), (2, 3)),
    _r("roll", lambda m, x: m.roll(x, (1, 2, -1), axis=(0, 1, 0)), (3, 4), grad=2),
    _r("roll", lambda m, x: m.roll(x, 3, axis=0), (3, 2)),
    _r("rot90", lambda m, x: m.rot90(x), (2, 3)),
    _r("rot90", lambda m, x: m.rot90(x, 2), (2, 3)),
    _r("rot90", lambda m, x: m.rot90(x, 3, axes=(2, 0)), (2, 3, 4)),
    _r("rot90", lambda m, x: m.rot90(x, -1, axes=(1, -1)), (2, 3, 4)),
    _r("rot90", lambda m, x: m.rot90(x, 4), (2, 3)),
    *[_r("pad", lambda m, x, mode=mode, w=w: m.pad(x, w, mode=mode), s,
         grad=2 if mode == "reflect" else 1)
      for mode in ("constant", "edge", "reflect", "symmetric", "wrap")
      for s, w in [((4,), 2), ((3, 4), ((1, 2), (0, 3))), ((3, 4), ((5, 7), (9, 1))),
                   ((2, 3), (1, 2)), ((1, 3), 3)]],
    _r("pad", lambda m, x: m.pad(x, ((1, 2), (3, 1)), constant_values=((1, 2), (3, 4))), (2, 3)),
    _r("pad", lambda m, x: m.pad(x, 1, constant_values=7), (2, 3)),
    _r("pad", lambda m, x: m.pad(x, {1: (1, 2)}, mode="edge"), (2, 3)),
    _r("pad", lambda m, x: m.pad(x, 0, mode="reflect"), (2, 3)),
    _r("pad", lambda m, x: m.pad(x, 2, mode="symmetric", reflect_type="even"), (3,)),
    _r("pad", lambda m, x: m.pad(x, ((0, 0), (2, 1))), (0, 3)),
    _r("take", lambda m, x: m.take(x, [3, -1, 0, 3]), (2, 3), grad=2),
    _r("take", lambda m, x: m.take(x, [[0, -2], [1, 1]], axis=1), (2, 3, 2)),
    _r("take", lambda m, x: m.take(x, 1, axis=-1), (2, 3)),
    _r("take", lambda m, x: m.take(x, [-4, 7, 2], axis=0, mode="wrap"), (3, 2)),
    _r("take", lambda m, x: m.take(x, [-4, 7, 2], axis=0, mode="clip"), (3, 2)),
    _r("take_along_axis", lambda m, x: m.take_along_axis(x, np.array([[[0], [2]], [[-1], [1]]]), 1),
       (2, 3, 1)),
    _r("take_along_axis", lambda m, x: m.take_along_axis(x, np.array([[2, 0, 1, 0]]), axis=-1),
       (3, 3)),
    _r("take_along_axis", lambda m, x: m.take_along_axis(x, np.array([[1], [0]]), 0), (2, 4)),
    _r("take_along_axis", lambda m, x: m.take_along_axis(x, np.array([4, -1, 0]), None), (2, 3)),
]


def _row_ids(rows):
    return [f"{r.name}-{'-'.join(map(str, r.shapes))}-{i}" for i, r in enumerate(rows)]


@pytest.mark.parametrize("row", SHAPE_ROWS, ids=_row_ids(SHAPE_ROWS))
def test_shape_function_matches_numpy(row):
    for dtype in row.dtypes:
        args = [_value(s, dtype) for s in row.shapes]
        expected = row.call(np, *args)
        where = f"{row.name} {dtype}"
        _assert_same(expected, row.call(S, *args), where + " eager")
        _assert_same(expected, _staged(lambda *a: row.call(S, *a), *args), where + " staged")


GRAD_ROWS = [r for r in SHAPE_ROWS if r.grad and "f8" in r.dtypes]


@pytest.mark.parametrize("row", GRAD_ROWS, ids=_row_ids(GRAD_ROWS))
def test_shape_function_gradients(row):
    args = tuple(_value(s, "f8", np.random.default_rng(1)) for s in row.shapes)
    check_grads(lambda *a: row.call(S, *a), args, order=row.grad)


def test_put_along_axis_is_functional():
    x = _value((2, 3, 4), "f8")
    idx = np.array([[[0, 3]], [[-1, 1]]])
    for values in (np.float64(2.5), _value((2, 1, 2), "f8"), _value((2, 3, 2), "f8")):
        expected = x.copy()
        np.put_along_axis(expected, idx, values, axis=-1)
        before = x.copy()
        _assert_same(expected, S.put_along_axis(x, idx, values, axis=-1))
        _assert_same(expected, _staged(lambda a, v: S.put_along_axis(a, idx, v, -1), x, values))
        np.testing.assert_array_equal(x, before)  # the input is untouched
    expected = x.copy()
    np.put_along_axis(expected, np.array([0, 23, -2]), 7.0, axis=None)
    _assert_same(expected, S.put_along_axis(x, np.array([0, 23, -2]), 7.0, axis=None))
    xi = _value((3, 2), "i8")
    expected = xi.copy()
    np.put_along_axis(expected, np.array([[1], [0], [1]]), 9, axis=1)
    _assert_same(expected, S.put_along_axis(xi, np.array([[1], [0], [1]]), 9, axis=1))
    check_grads(lambda a, v: S.put_along_axis(a, idx, v, axis=-1),
                (x, _value((2, 1, 2), "f8")), order=2)


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices(name):
    for args in [(3,), (3, 1), (3, -1, 5), (4, 0, 2), (0,)]:
        _assert_same(getattr(np, name)(*args), getattr(S, name)(*args))
    a = np.ones((3, 5))
    for k in (-1, 0, 2):
        _assert_same(getattr(np, name + "_from")(a, k), getattr(S, name + "_from")(a, k))


def test_stack_nested_builds_traced_arrays():
    x = np.array([1.5, -2.0])

    def f(x):
        return S.stack_nested([[ix.getitem(x, 0), 2.0], [3, ix.getitem(x, 1)]])
    _assert_same(np.array([[1.5, 2.0], [3, -2.0]]), _staged(f, x))
    f32 = np.float32(1.0)
    _assert_same(np.array([[f32, f32], [f32, f32]]),
                 _staged(lambda v: S.stack_nested([[v, v], [v, v]]), f32))
    _assert_same(np.array([1, 2], dtype=np.float32),
                 S.stack_nested([1, 2], dtype=np.float32))
    g = fd.grad(lambda v: _sum(S.stack_nested([ix.getitem(v, 1), ix.getitem(v, 0),
                                                ix.getitem(v, 1)])))(x)
    np.testing.assert_allclose(g, [1.0, 2.0])
    with pytest.raises(ShapeError, match="ragged"):
        _staged(lambda v: S.stack_nested([[v, v], [v]]), 1.0)


SHAPE_ERRORS = [
    (lambda: S.reshape(np.ones(6), (4, -1)), ShapeError, "cannot reshape"),
    (lambda: S.reshape(np.ones(6), (-1, -1)), ShapeError, "at most one -1"),
    (lambda: S.reshape(np.ones(6), 6, order="F"), UnsupportedNumpyError, "order='C'"),
    (lambda: S.transpose(np.ones((2, 3)), (0, 0)), AxisError, "repeated"),
    (lambda: S.moveaxis(np.ones((2, 3)), 0, 5), AxisError, "out of bounds"),
    (lambda: S.squeeze(np.ones((2, 3)), 0), ShapeError, "size not equal to one"),
    (lambda: S.broadcast_to(np.ones(3), (2, 2)), ShapeError, r"\(3,\).*\(2, 2\)"),
    (lambda: S.concatenate([np.ones((2, 3)), np.ones((2, 2))]), ShapeError, r"\(2, 3\), \(2, 2\)"),
    (lambda: S.concatenate([np.float64(1)]), ShapeError, "zero-dimensional"),
    (lambda: S.concatenate([np.ones(2)], out=np.ones(2)), UnsupportedNumpyError, "out="),
    (lambda: S.stack([np.ones(2), np.ones(3)]), ShapeError, "same shape"),
    (lambda: S.split(np.ones(5), 2), ShapeError, "equal division"),
    (lambda: S.vsplit(np.ones(5), 5), ShapeError, "2 or more"),
    (lambda: S.repeat(np.ones(3), [1, 2]), ShapeError, "broadcast"),
    (lambda: S.repeat(np.ones(3), -1), ShapeError, "negative"),
    (lambda: S.pad(np.ones(3), 1, mode="mean"), UnsupportedNumpyError, "mode='mean'"),
    (lambda: S.pad(np.ones(3), -1), ShapeError, "negative"),
    (lambda: S.pad(np.ones(3), 1, mode="reflect", reflect_type="odd"), UnsupportedNumpyError,
     "even"),
    (lambda: S.pad(np.ones((0, 2)), 1, mode="wrap"), ShapeError, "empty axis"),
    (lambda: S.take(np.ones(3), [3]), IndexOutOfBoundsError, "out of bounds"),
    (lambda: S.take(np.ones(3), [0.5]), FunctionalDiffError, "integer"),
    (lambda: S.take_along_axis(np.ones((2, 3)), np.array([0]), 1), ShapeError, "dimensions"),
    (lambda: S.rot90(np.ones((2, 2)), axes=(0, 0)), AxisError, "different"),
    (lambda: S.stack_nested([1.0, "a"]), FunctionalDiffError, "dtype"),
]


@pytest.mark.parametrize("case", range(len(SHAPE_ERRORS)))
def test_shape_function_errors(case):
    fn, cls, pattern = SHAPE_ERRORS[case]
    with pytest.raises(cls, match=pattern):
        fn()


# ---------------------------------------------------------------------------
# Indexing

X_SHAPE = (3, 4, 5)
_MASK = np.random.default_rng(3).random(X_SHAPE) < 0.4
_MASK2 = np.random.default_rng(4).random((3, 4)) < 0.5

INDICES = [
    0, -1, 2, (1, 2), (-1, -2, -3), (slice(None), 1), (Ellipsis, 2), (0, Ellipsis, 1),
    slice(1, 3), slice(None, None, 2), slice(None, None, -1), (slice(3, 0, -2),),
    (slice(-100, 100, 3),), (slice(10, 20),), (slice(None), slice(None, None, -2), slice(1, -1)),
    (slice(2, None, -1), 0, slice(None, 1, -1)), None, (None, 0), (1, None, slice(None), None),
    (Ellipsis, None), (None, Ellipsis, None, 1),
    [0, 2, 0], [-1], [[0, 1], [2, 2]], ([0, 2], [1, 3]), ([0, 2], [1, 3], [4, -1]),
    (slice(None), [3, 0, 3]), (Ellipsis, [[4], [0]]), (slice(None), [0, 1], [2, 3]),
    ([0, 1], slice(None), [2, 3]), ([[0], [1]], slice(None), [2, 3]),
    (0, slice(None), [2, 3]), (slice(None), 1, [2, 3, 2]), ([1], 2, slice(None)),
    ([0, 2], None, [1, 3]), (slice(None), None, [1, 1]), ([2, 0], slice(1, None, -1), 3),
    (np.array([[0, 1], [2, 0]]), slice(None, None, -1), np.array([1, 4])),
    np.array(1), (np.int32(1), np.int64(-2)), [], (slice(None), []),
    _MASK, _MASK2, (_MASK2, 1), (slice(None), _MASK[0, :, 0]), (Ellipsis, _MASK[0, 0]),
    ([1, 0], slice(None), np.array([True, False, False, True, False])),
    (np.array([True, False, True]), slice(None), [0, 4]),
    True, False, (1, True), (Ellipsis, False),
    ([0, 0, 0], [1, 1, 1], [2, 2, 2]),  # the same element three times
]


def _positions(idx):
    return np.arange(np.prod(X_SHAPE)).reshape(X_SHAPE)[idx]


def _scatter_add_reference(idx, ct):
    return np.bincount(_positions(idx).ravel(), weights=np.ravel(ct),
                       minlength=int(np.prod(X_SHAPE))).reshape(X_SHAPE)


@pytest.mark.parametrize("idx", INDICES, ids=[f"{i}" for i in range(len(INDICES))])
def test_getitem_matches_numpy(idx):
    x = _value(X_SHAPE, "f8")
    expected = x[idx]
    _assert_same(expected, ix.getitem(x, idx), "eager")
    _assert_same(expected, _staged(lambda a: ix.getitem(a, idx), x), "staged")
    for dtype in ("f4", "i4", "b"):
        xd = _value(X_SHAPE, dtype)
        _assert_same(xd[idx], _staged(lambda a: ix.getitem(a, idx), xd), dtype)
    out, pullback = fd.vjp(lambda a: ix.getitem(a, idx), x)
    _assert_same(expected, out, "vjp primal")
    ct = _value(np.shape(expected), "f8")
    (ct_x,) = pullback(ct)
    np.testing.assert_allclose(ct_x, _scatter_add_reference(idx, ct), atol=1e-12)


def _random_index(rng, shape):
    """A random numpy index for ``shape``: ints, slices with steps, None, ellipsis,
    integer arrays and boolean masks, some out of range."""
    entries = []
    for n in shape:
        kind = rng.integers(0, 8)
        if kind == 0 and n:
            entries.append(int(rng.integers(-n, n)))
        elif kind == 1:
            lo, hi = (int(v) if rng.random() < 0.7 else None
                      for v in rng.integers(-n - 2, n + 3, 2))
            entries.append(slice(lo, hi, int(rng.choice([-3, -2, -1, 1, 2, 3]))))
        elif kind == 2 and n:
            entries.append(rng.integers(-n, n, int(rng.integers(1, 4))).tolist())
        elif kind == 3 and n:
            entries.append(rng.integers(-n - 1, n + 1, (2, 1)))
        elif kind == 4:
            entries.append(rng.random(n) < 0.5)
        else:
            entries.append(slice(None))
        if rng.random() < 0.15:
            entries.append(None)
    if entries and rng.random() < 0.3:
        entries[int(rng.integers(0, len(entries)))] = Ellipsis
    return tuple(entries)


def test_random_indices_match_numpy():
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(400):
        shape = tuple(int(n) for n in rng.integers(0, 4, int(rng.integers(1, 4))))
        x = rng.standard_normal(shape)
        idx = _random_index(rng, shape)
        try:
            expected = x[idx]
        except IndexError:
            with pytest.raises(IndexError):
                ix.getitem(x, idx)
            continue
        _assert_same(expected, ix.getitem(x, idx), f"{shape} {idx}")
        _assert_same(expected, _staged(lambda a: ix.getitem(a, idx), x), f"{shape} {idx}")
        v = rng.standard_normal(np.shape(expected))
        added = x.copy()
        np.add.at(added, idx, v)
        _assert_same(added, ix.at(x)[idx].add(v), f"add {shape} {idx}")
        checked += 1
    assert checked > 200


# Index expressions whose integer arrays are passed as traced arguments.
TRACED_INDICES = [
    (lambda i: i, [2, -1, 0]),
    (lambda i: (slice(None), i), [[3], [-4]]),
    (lambda i: (i, slice(None), i), [0, 2]),
    (lambda i: (Ellipsis, i, None), [4, 0, 4]),
    (lambda i: (1, i, slice(None, None, -1)), [-1, 1]),
    (lambda i: (i, 1), 2),  # a 0-d traced integer
]


@pytest.mark.parametrize("case", range(len(TRACED_INDICES)))
def test_getitem_traced_indices(case):
    make, index = TRACED_INDICES[case]
    x, i = _value(X_SHAPE, "f8"), np.asarray(index)
    expected = x[make(i)]

    def f(a, j):
        return ix.getitem(a, make(j))
    _assert_same(expected, _staged(f, x, i), "abstract indices")
    out, pullback = fd.vjp(f, x, i)  # traced indices with concrete values
    _assert_same(expected, out, "vjp primal")
    ct = _value(expected.shape, "f8")
    np.testing.assert_allclose(pullback(ct)[0], _scatter_add_reference(make(i), ct))
    batched = fd.vmap(f, in_axes=(None, 0))(x, np.stack([i, i]))
    _assert_same(np.stack([expected, expected]), batched, "vmap over indices")


def test_abstract_indices_are_clamped_like_jax():
    x = np.arange(12.0).reshape(3, 4)
    f = fd.make_jaxpr(lambda a, i, j: ix.getitem(a, (i, j)))(x, np.array([0]), np.array([0]))
    out = f(x, np.array([5, -7, 1]), np.array([1, 2, 9]))[0]
    np.testing.assert_array_equal(out, x[[2, 0, 1], [1, 2, 3]])


def test_repeated_indices_accumulate_in_reverse_mode():
    e = np.arange(4.0)
    g = fd.grad(lambda v: _sum(ix.getitem(v, [2, 0, 2])))(e)
    np.testing.assert_array_equal(g, [1.0, 0.0, 2.0, 0.0])
    def squares(v):
        picked = ix.getitem(v, ([0, 0, 1], [2, 2, 2]))
        return el.mul(picked, picked)
    check_grads(squares, (_value((2, 3), "f8"),), order=2)
    check_grads(lambda v: ix.getitem(v, (slice(None, None, -2), None, [1, 1, 0])),
                (_value((3, 2), "f8"),), order=2)


def test_boolean_masks():
    x = np.array([-1.0, 2.0, -3.0, 4.0])
    # Under grad the mask is a tracer with a concrete value: allowed.
    g = fd.grad(lambda v: _sum(ix.getitem(v, el.gt(v, np.float64(0)))))(x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 1.0])
    # Under make_jaxpr it is abstract: a clear error pointing to where.
    with pytest.raises(ix.NonConcreteBooleanIndexError, match="where"):
        fd.make_jaxpr(lambda v: ix.getitem(v, el.gt(v, np.float64(0))))(x)
    # .at[mask].set(number) is a select: no count of the mask needed, so jit works
    clipped = fd.jit(lambda v: ix.at(v)[el.gt(v, np.float64(0))].set(0.0))(x)
    np.testing.assert_array_equal(clipped, [-1.0, 0.0, -3.0, 0.0])
    g = fd.grad(lambda v: _sum(ix.at(v)[el.gt(v, np.float64(0))].add(1.0) ** 2))(x)
    np.testing.assert_array_equal(g, [-2.0, 6.0, -6.0, 10.0])
    # values of the mask's selection (not one number) still need the count
    with pytest.raises(ConcretizationError):
        fd.make_jaxpr(lambda v: ix.at(v)[el.gt(v, np.float64(0))].set(np.ones(2)))(x)


INDEX_ERRORS = [
    (5, IndexOutOfBoundsError, "index 5 is out of bounds for axis 0 with size 3"),
    ((0, -5), IndexOutOfBoundsError, "out of bounds"),
    ([0, 3], IndexOutOfBoundsError, "out of bounds"),
    ((slice(None), [[4]]), IndexOutOfBoundsError, "out of bounds"),
    ((0, 0, 0, 0), IndexError, "too many indices"),
    ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
    (1.5, IndexError, "valid indices"),
    (np.array([0.5]), IndexError, "integer"),
    ("a", IndexError, "valid indices"),
    (([0, 1], [0, 1, 2]), IndexError, "shape mismatch"),
    (np.ones(4, bool), IndexError, "boolean index did not match"),
]


@pytest.mark.parametrize("case", range(len(INDEX_ERRORS)))
def test_getitem_errors(case):
    idx, cls, pattern = INDEX_ERRORS[case]
    x = np.ones((3, 4, 5))
    with pytest.raises(cls, match=pattern):
        ix.getitem(x, idx)
    with pytest.raises(cls, match=pattern):
        fd.make_jaxpr(lambda a: ix.getitem(a, idx))(x)


def test_setitem_on_tracer_explains_at():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(FunctionalDiffError, match=r"\.at\["):
        fd.make_jaxpr(f)(np.zeros(3))


# ---------------------------------------------------------------------------
# .at[] functional updates

UPDATE_CASES = [
    (1, (4, 5)),
    ((slice(None), 2), (5,)),
    ([0, 2, 0], (5,)),                   # repeated rows
    (([1, 1, 1, 2], [0, 0, 0, 3]), ()),  # one element three times
    ((slice(None, None, -1), [3, 3]), (2, 5)),
    (_MASK2, (1,)),
    ((Ellipsis, None, 3), (3, 4, 1)),
]
_NUMPY_UPDATE = {
    "set": lambda y, i, v: y.__setitem__(i, v),
    "add": lambda y, i, v: np.add.at(y, i, v),
    "multiply": lambda y, i, v: np.multiply.at(y, i, v),
    "min": lambda y, i, v: np.minimum.at(y, i, v),
    "max": lambda y, i, v: np.maximum.at(y, i, v),
}


@pytest.mark.parametrize("method", sorted(_NUMPY_UPDATE))
@pytest.mark.parametrize("case", range(len(UPDATE_CASES)))
def test_at_updates_match_numpy(method, case):
    idx, vshape = UPDATE_CASES[case]
    for dtype in ("f8", "i8"):
        x, v = _value(X_SHAPE, dtype), _value(vshape, dtype)
        expected = x.copy()
        _NUMPY_UPDATE[method](expected, idx, v)
        before = x.copy()
        _assert_same(expected, getattr(ix.at(x)[idx], method)(v), f"{method} {dtype} eager")
        np.testing.assert_array_equal(x, before)
        _assert_same(expected, _staged(lambda a, b: getattr(ix.at(a)[idx], method)(b), x, v),
                     f"{method} {dtype} staged")
    _assert_same(x[idx], ix.at(x)[idx].get())


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_at_updates_with_abstract_indices(method):
    x, v = _value((6,), "f8"), _value((4,), "f8")
    i = np.array([4, -1, 4, 0])
    expected = x.copy()
    _NUMPY_UPDATE[method](expected, i, v)
    staged = _staged(lambda a, j, b: getattr(ix.at(a)[j], method)(b), x, i, v)
    np.testing.assert_allclose(staged, expected)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "max"])
def test_at_update_gradients(method):
    rng = np.random.default_rng(5)
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3,))
    idx = ([0, 2, 0], [1, 3, 1])  # position (0, 1) is updated twice
    check_grads(lambda a, b: getattr(ix.at(a)[idx], method)(b), (x, v),
                order=1 if method == "max" else 2)


def test_at_repeated_set_gradient_goes_to_the_last_write():
    def f(a, b):
        return _sum(ix.at(a)[[1, 1]].set(b))
    ga, gb = fd.grad(f, argnums=(0, 1))(np.zeros(3), np.array([5.0, 6.0]))
    np.testing.assert_array_equal(ga, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(gb, [0.0, 1.0])


def test_at_errors():
    x = np.zeros((3, 4))
    with pytest.raises(ShapeError, match=r"\(2,\).*\(3,\)"):
        ix.at(x)[:, 0].set(np.ones(2))
    with pytest.raises(IndexError, match="out of bounds"):
        ix.at(x)[5].add(1.0)
    with pytest.raises(UnsupportedNumpyError):
        ix.at(x)[0].get(mode="fill")


def test_vmap_of_getitem_and_at():
    xs = _value((4, 3, 5), "f8")
    out = fd.vmap(lambda a: ix.getitem(a, (slice(None, None, -1), [0, 4, 4])))(xs)
    _assert_same(np.stack([a[::-1, [0, 4, 4]] for a in xs]), out)
    upd = fd.vmap(lambda a: ix.at(a)[[0, 0], 1].add(1.0))(xs)
    expected = xs.copy()
    expected[:, 0, 1] += 2.0
    np.testing.assert_allclose(upd, expected)


def test_docstring_examples():
    for module in (S, _getitem, ix):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
