"""append, insert, delete, indices, unravel_index and ravel_multi_index.

Tables drive the tests: each assembly row (one function, obj and axis, and the
shapes of its array arguments) is compared with numpy for several dtype
combinations, gradient-checked to order 2 in both modes in float64, batched
with vmap against a Python loop and compiled with jit against eager. The index
arithmetic rows are compared with numpy, and traced index arrays with numpy's
results under jit and vmap. A last table holds the bad inputs and their errors.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.test_util import check_grads
from numpy_tables import assert_matches

RNG = np.random.default_rng(0)


def _value(shape, dtype, rng=RNG):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-5, 6, shape).astype(dtype)


def _assert_same(expected, actual, where=""):
    """Equal values, shapes and dtypes (funcdiff's ``actual`` against ``expected``)."""
    assert_matches(actual, expected, exact=True, where=where)


# ---------------------------------------------------------------------------
# append, insert, delete


class Row(NamedTuple):
    name: str
    call: Callable          # call(module, *arrays): module is numpy or funcdiff.numpy
    shapes: tuple           # one shape per array argument
    dtypes: tuple           # combinations: one dtype per array argument


SAME = (("f8", "f8"), ("f4", "f4"), ("i8", "i8"), ("b", "b"))
MIXED = SAME + (("i4", "f8"), ("f4", "f8"), ("f8", "i8"))
ONE = (("f8",), ("f4",), ("i8",), ("b",))

ROWS = [
    Row("append_flat", lambda m, a, v: m.append(a, v), ((2, 3), (4,)), MIXED),
    Row("append_axis0", lambda m, a, v: m.append(a, v, axis=0), ((2, 3), (1, 3)), MIXED),
    Row("append_axis-1", lambda m, a, v: m.append(a, v, axis=-1), ((2, 3), (2, 2)), SAME),
    Row("append_to_empty", lambda m, a, v: m.append(a, v), ((0,), (3,)), SAME),
    Row("append_0d", lambda m, a, v: m.append(a, v), ((), ()), SAME),
    Row("insert_int_scalar", lambda m, a, v: m.insert(a, 2, v), ((2, 3), ()), MIXED),
    Row("insert_int_column", lambda m, a, v: m.insert(a, 1, v, axis=1), ((2, 3), (2,)), MIXED),
    Row("insert_list1_rows", lambda m, a, v: m.insert(a, [1], v, axis=1), ((2, 3), (2,)), SAME),
    Row("insert_repeated_unsorted", lambda m, a, v: m.insert(a, [3, 0, 3, -1], v, axis=0),
        ((3, 3), (4, 3)), MIXED),
    Row("insert_broadcast_values", lambda m, a, v: m.insert(a, [0, 2, 2], v, axis=1),
        ((2, 3), (1, 3)), SAME),
    Row("insert_slice", lambda m, a, v: m.insert(a, slice(0, 3), v, axis=1),
        ((2, 3), (2, 3)), SAME),
    Row("insert_slice_one", lambda m, a, v: m.insert(a, slice(1, 2), v), ((3,), (2,)), SAME),
    Row("insert_at_end", lambda m, a, v: m.insert(a, 4, v), ((4,), (2,)), SAME),
    Row("insert_nothing", lambda m, a, v: m.insert(a, [], v), ((3,), ()), SAME),
    Row("insert_into_0d", lambda m, a, v: m.insert(a, 0, v), ((), (3,)), SAME),
    Row("insert_3d_negative", lambda m, a, v: m.insert(a, -2, v, axis=1),
        ((2, 3, 4), (2, 4)), SAME),
    Row("delete_int", lambda m, a: m.delete(a, -1), ((5,),), ONE),
    Row("delete_repeats_axis1", lambda m, a: m.delete(a, [0, -1, 0], axis=1), ((2, 4),), ONE),
    Row("delete_slice_step", lambda m, a: m.delete(a, slice(None, None, 2), axis=-1),
        ((2, 5),), ONE),
    Row("delete_reversed_slice", lambda m, a: m.delete(a, slice(None, None, -2)), ((5,),), ONE),
    Row("delete_mask", lambda m, a: m.delete(a, np.array([True, False, True]), axis=0),
        ((3, 2),), ONE),
    Row("delete_everything", lambda m, a: m.delete(a, slice(None)), ((3,),), ONE),
    Row("delete_flattened", lambda m, a: m.delete(a, [1, 4]), ((2, 3),), ONE),
    Row("delete_nothing", lambda m, a: m.delete(a, []), ((3,),), ONE),
]


def _args(row, dtypes):
    return [_value(s, d) for s, d in zip(row.shapes, dtypes)]


def _float64(row):
    return ("f8",) * len(row.shapes)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_values_and_dtypes_match_numpy(row):
    for dtypes in row.dtypes:
        args = _args(row, dtypes)
        _assert_same(row.call(np, *args), row.call(fnp, *args), f"{row.name} {dtypes}")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_gradients_to_order_two(row):
    args = _args(row, _float64(row))
    check_grads(lambda *a: row.call(fnp, *a), args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_jit_equals_eager(row):
    for dtypes in row.dtypes[:3]:
        args = _args(row, dtypes)
        f = lambda *a: row.call(fnp, *a)  # noqa: E731
        _assert_same(f(*args), fd.jit(f)(*args), f"{row.name} {dtypes}")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_vmap_equals_a_loop(row):
    batches = [_value((3,) + s, "f8") for s in row.shapes]
    f = lambda *a: row.call(fnp, *a)  # noqa: E731
    want = np.stack([f(*[b[k] for b in batches]) for k in range(3)])
    _assert_same(want, fd.vmap(f)(*batches), row.name)


def test_numpy_functions_dispatch_on_tracers_and_carry_derivatives():
    x = np.array([1.0, 2.0, 3.0])
    g = fd.grad(lambda v: np.sum(np.insert(v, 1, 10.0 * v[0]) ** 2))(x)
    np.testing.assert_allclose(g, [2.0 + 200.0 * 1.0, 4.0, 6.0])
    # v0 * (v1 + v2 + v0 + v1 + v2): the repeated deletion removes v0 once
    g = fd.grad(lambda v: np.sum(np.append(np.delete(v, [0, 0]), v) * v[0]))(x)
    np.testing.assert_allclose(g, [2.0 * (1.0 + 2.0 + 3.0), 2.0, 2.0])
    np.testing.assert_array_equal(fd.jit(lambda i: np.unravel_index(i, (2, 3))[1])(
        np.array([4, 5])), [1, 2])


def test_a_traced_obj_works_where_it_has_a_value():
    # under grad the positions are concrete, so they may come from a computation
    f = lambda x: fnp.sum(fnp.delete(x, fnp.argmax(x)) ** 2)  # noqa: E731
    np.testing.assert_allclose(fd.grad(f)(np.array([1.0, 5.0, 2.0])), [2.0, 0.0, 4.0])
    g = fd.grad(lambda x: fnp.sum(fnp.insert(x, [fnp.argmin(x)], 3.0 * x[1])))(
        np.array([1.0, 0.0]))
    np.testing.assert_allclose(g, [1.0, 4.0])


# ---------------------------------------------------------------------------
# Index arithmetic


INDEX_ROWS = [
    ("unravel_1d", lambda m: m.unravel_index(np.array([0, 4, 5]), (2, 3))),
    ("unravel_2d_F", lambda m: m.unravel_index(np.array([[1, 59], [7, 30]]), (3, 4, 5),
                                               order="F")),
    ("unravel_int32", lambda m: m.unravel_index(np.array([3, 1], np.int32), (4,))),
    ("unravel_uint8", lambda m: m.unravel_index(np.array([3, 1], np.uint8), [2, 2])),
    ("unravel_scalar", lambda m: m.unravel_index(5, (2, 3))),
    ("unravel_empty_shape", lambda m: m.unravel_index(0, ())),
    ("unravel_no_indices", lambda m: m.unravel_index(np.zeros(0, int), (0, 2))),
    ("ravel_broadcast", lambda m: m.ravel_multi_index(
        (np.array([[0], [1]]), np.array([0, 2, 1])), (2, 3))),
    ("ravel_F", lambda m: m.ravel_multi_index((np.array([1, 2]), np.array([3, 0])), (3, 4),
                                              order="F")),
    ("ravel_wrap", lambda m: m.ravel_multi_index((np.array([-1, 5]), np.array([7, -9])), (2, 3),
                                                 mode="wrap")),
    ("ravel_modes", lambda m: m.ravel_multi_index((np.array([-4, 5]), np.array([7, -9])),
                                                  (2, 3), mode=("clip", "wrap"))),
    ("ravel_array_arg", lambda m: m.ravel_multi_index(np.array([[1, 1], [0, 2]]), (2, 3))),
    ("ravel_int32", lambda m: m.ravel_multi_index((np.array([1], np.int32), [2]), (2, 3))),
    ("ravel_scalars", lambda m: m.ravel_multi_index((1, 2), (2, 3))),
    ("indices_2d", lambda m: m.indices((2, 3))),
    ("indices_float", lambda m: m.indices((3, 1, 2), dtype=float)),
    ("indices_sparse", lambda m: m.indices((2, 3, 4), sparse=True)),
    ("indices_empty", lambda m: m.indices((2, 0))),
    ("indices_0d", lambda m: m.indices(())),
    ("indices_int32", lambda m: m.indices([4], dtype=np.int32)),
]


@pytest.mark.parametrize("name,call", INDEX_ROWS, ids=[r[0] for r in INDEX_ROWS])
def test_index_arithmetic_matches_numpy(name, call):
    want = call(np)
    got = call(fnp)
    _assert_same(want, got if isinstance(want, tuple) else np.asarray(got), name)


SHAPES = [(2, 3), (4,), (3, 1, 5)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_trace_under_jit_and_vmap(shape, order):
    size = int(np.prod(shape))
    flat = RNG.integers(0, size, (4, 6))
    want = np.unravel_index(flat, shape, order=order)
    _assert_same(want, fd.jit(lambda i: fnp.unravel_index(i, shape, order=order))(flat))
    batched = fd.vmap(lambda i: fnp.unravel_index(i, shape, order=order))(flat)
    _assert_same(want, batched)
    for mode in ("wrap", "clip"):
        coords = tuple(RNG.integers(-6, 8, (4, 6)) for _ in shape)
        want = np.ravel_multi_index(coords, shape, mode=mode, order=order)
        f = lambda *c: fnp.ravel_multi_index(c, shape, mode=mode, order=order)  # noqa: E731
        _assert_same(want, fd.jit(f)(*coords))
        _assert_same(want, fd.vmap(f)(*coords))
        # round trip: unravelling the flat indices and ravelling them again is the identity
        round_trip = fd.jit(lambda i: fnp.ravel_multi_index(
            fnp.unravel_index(i, shape, order=order), shape, mode="clip", order=order))
        _assert_same(want, round_trip(want))


def test_abstract_flat_indices_are_clipped_as_in_jax():
    got = fd.jit(lambda i: fnp.unravel_index(i, (2, 3)))(np.array([-1, 6, 100, 2]))
    _assert_same((np.array([1, 1, 1, 0]), np.array([2, 2, 2, 2])), got)


# ---------------------------------------------------------------------------
# Errors

X = np.arange(6.0).reshape(2, 3)

ERRORS = [
    ("insert_float_obj", lambda: fnp.insert(X, 1.5, 0.0), DTypeError, "astype"),
    ("insert_2d_obj", lambda: fnp.insert(X, [[1]], 0.0, axis=1), ShapeError, "one-dimensional"),
    ("insert_beyond_end", lambda: fnp.insert(X, 4, 0.0, axis=1), IndexOutOfBoundsError,
     "position 4 is out of bounds for axis 1 of size 3"),
    ("insert_before_start", lambda: fnp.insert(X, [0, -4], 0.0, axis=1), IndexOutOfBoundsError,
     "position -4"),
    ("insert_mask", lambda: fnp.insert(X, [True, False], 0.0, axis=0), InvalidArgumentError,
     "flatnonzero"),
    ("insert_bad_values", lambda: fnp.insert(X, [0, 1], np.ones(2), axis=0), ShapeError,
     r"values of shape \(1, 2\)"),
    ("insert_bad_values_2", lambda: fnp.insert(X, [0, 1], np.ones((3, 3)), axis=0), ShapeError,
     r"cannot be broadcast to \(2, 3\)"),
    ("insert_bad_axis", lambda: fnp.insert(X, 0, 1.0, axis=2), AxisError, "out of bounds"),
    ("insert_jit_obj", lambda: fd.jit(lambda i: fnp.insert(X, i, 1.0))(1), ConcretizationError,
     "static_argnums"),
    ("delete_beyond_end", lambda: fnp.delete(X, 3, axis=1), IndexOutOfBoundsError,
     r"valid: -3..2"),
    ("delete_float_obj", lambda: fnp.delete(X, [1.0]), DTypeError, "integer sequence"),
    ("delete_bad_mask", lambda: fnp.delete(X, np.array([True]), axis=1), ShapeError,
     r"shape \(3,\)"),
    ("delete_0d_axis", lambda: fnp.delete(np.float64(1.0), 0, axis=0), AxisError, "dimension 0"),
    ("delete_vmap_obj", lambda: fd.vmap(lambda i: fnp.delete(X, i))(np.array([0, 1])),
     ConcretizationError, "obj decides the shape"),
    ("append_mismatch", lambda: fnp.append(X, np.ones(3), axis=0), ShapeError,
     "funcdiff.numpy.append"),
    ("unravel_float", lambda: fnp.unravel_index(np.array([1.0]), (2, 3)), DTypeError,
     "integer indices"),
    ("unravel_too_large", lambda: fnp.unravel_index(np.array([1, 6]), (2, 3)),
     IndexOutOfBoundsError, "index 6 is out of bounds"),
    ("unravel_negative", lambda: fnp.unravel_index(-1, (2, 3)), IndexOutOfBoundsError,
     "does not wrap"),
    ("unravel_order", lambda: fnp.unravel_index(1, (2, 3), order="A"), InvalidArgumentError,
     "'C' or 'F'"),
    ("unravel_traced_shape", lambda: fnp.unravel_index(1, (2.0, 3)), InvalidArgumentError,
     "Python ints"),
    ("unravel_empty_jit", lambda: fd.jit(lambda i: fnp.unravel_index(i, (0,)))(np.array([0])),
     IndexOutOfBoundsError, "no elements"),
    ("ravel_out_of_range", lambda: fnp.ravel_multi_index(([1], [3]), (2, 3)),
     IndexOutOfBoundsError, "coordinate 3 is out of bounds for dimension 1"),
    ("ravel_negative", lambda: fnp.ravel_multi_index(([-1], [0]), (2, 3)),
     IndexOutOfBoundsError, "mode='wrap'"),
    ("ravel_jit_raise", lambda: fd.jit(lambda i: fnp.ravel_multi_index((i, i), (2, 3)))(
        np.array([1])), ConcretizationError, "mode='wrap' or mode='clip'"),
    ("ravel_vmap_raise", lambda: fd.vmap(lambda i: fnp.ravel_multi_index((i, i), (2, 3)))(
        np.array([1])), ConcretizationError, "mode='raise'"),
    ("ravel_length", lambda: fnp.ravel_multi_index(([1],), (2, 3)), ShapeError,
     "sequence of 2 coordinate arrays"),
    ("ravel_mode", lambda: fnp.ravel_multi_index(([1], [1]), (2, 3), mode="nearest"),
     InvalidArgumentError, "'raise', 'wrap' or 'clip'"),
    ("ravel_modes_length", lambda: fnp.ravel_multi_index(([1], [1]), (2, 3), mode=("clip",)),
     InvalidArgumentError, r"one of them per dimension \(2\)"),
    ("ravel_float", lambda: fnp.ravel_multi_index(([1.0], [1]), (2, 3)), DTypeError,
     "integer multi_index"),
    ("ravel_wrap_empty_dim", lambda: fnp.ravel_multi_index(([1], [1]), (2, 0), mode="wrap"),
     IndexOutOfBoundsError, "size 0"),
    ("indices_negative", lambda: fnp.indices((2, -1)), ShapeError, "non-negative"),
    ("indices_not_int", lambda: fnp.indices((2, "a")), InvalidArgumentError, "Python ints"),
]


@pytest.mark.parametrize("name,call,error,match", ERRORS, ids=[r[0] for r in ERRORS])
def test_bad_inputs_raise_teaching_errors(name, call, error, match):
    with pytest.raises(error, match=match):
        call()
