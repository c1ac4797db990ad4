"""piecewise, fromfunction and apply_over_axes: values and dtypes against numpy
(numpy's rules for which condlist is one condition, the default function,
constants, later conditions winning, results cast to x's dtype), derivatives
(check_grads to order 2 in both modes), vmap against a loop, jit against eager,
numpy's functions dispatching on tracers, and the errors."""

from __future__ import annotations


import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from numpy_tables import Row, assert_matches, transform_tests

RNG = np.random.default_rng(0)
X7 = np.array([-2.3, -1.1, -0.4, 0.3, 0.8, 1.6, 2.7])
X23 = RNG.standard_normal((2, 3))



def _piecewise(conditions, funclist):
    """piecewise of x with the conditions ``conditions(x)`` and ``funclist``, in funcdiff
    and in numpy (the functions use numpy's names, which dispatch on tracers)."""
    return (lambda x: fnp.piecewise(x, conditions(x), funclist),
            lambda x: np.piecewise(x, conditions(x), funclist))


def _both(name, *static, **kw):
    """``name(array, *static, **kw)`` in funcdiff and numpy."""
    return (lambda a: getattr(fnp, name)(*static[:1], a, *static[1:], **kw),
            lambda a: getattr(np, name)(*static[:1], a, *static[1:], **kw))


TWO_SIDES = [lambda v: v ** 2, lambda v: 3.0 * v]
ROWS = [
    # piecewise
    Row("piecewise-two-sides", *_piecewise(lambda x: [x < 0, x >= 0], TWO_SIDES), (X7,)),
    Row("piecewise-default-function", *_piecewise(
        lambda x: [x < -1, x > 1], [-1.0, 1.0, lambda v: v]), (X7,)),
    Row("piecewise-zero-where-none-holds", *_piecewise(
        lambda x: [x < -1, x > 1], [lambda v: np.sin(v), lambda v: np.exp(-v)]), (X7,)),
    Row("piecewise-later-condition-wins", *_piecewise(
        lambda x: [x < 1, x > -1], [lambda v: v + 10.0, lambda v: v * 2.0]), (X7,)),
    Row("piecewise-one-condition-array", *_piecewise(
        lambda x: x > 0, [lambda v: np.sqrt(np.abs(v)), lambda v: -v]), (X7,)),
    Row("piecewise-constants", *_piecewise(lambda x: [x < 0], [2.5, -1.5]), (X7,),
        grad=False),
    Row("piecewise-bool-condlist", *_piecewise(lambda x: True, [lambda v: v ** 3]), (X7,)),
    Row("piecewise-2d", *_piecewise(
        lambda x: [x < -0.5, np.abs(x) <= 0.5], [lambda v: v - 1, lambda v: v ** 3, 1.0]),
        (X23,)),
    Row("piecewise-args-kwargs", (lambda x: fnp.piecewise(
        x, [x < 0], [lambda v, a, b=1.0: a * v + b, lambda v, a, b=1.0: v / a - b], 2.0, b=0.5)),
        (lambda x: np.piecewise(x, [x < 0], [lambda v, a, b=1.0: a * v + b,
                                              lambda v, a, b=1.0: v / a - b], 2.0, b=0.5)), (X7,)),
    Row("piecewise-0d", *_piecewise(lambda x: [x < 0, x >= 0], TWO_SIDES), (np.array(0.7),)),
    Row("piecewise-0d-list-of-bools", *_piecewise(lambda x: [True, False], [1.0, 2.0, 3.0]),
        (np.array(0.7),), grad=False),
    Row("piecewise-f32", *_piecewise(lambda x: [x < 0], TWO_SIDES), (X7.astype(np.float32),),
        grad=False),
    Row("piecewise-int-truncates", *_piecewise(
        lambda x: [x < 0], [lambda v: v * 1.7, lambda v: v / 2]), (np.arange(-3, 4),),
        grad=False),
    Row("piecewise-empty", *_piecewise(lambda x: [x < 0], TWO_SIDES), (np.zeros(0),),
        grad=False),
    # apply_over_axes
    Row("apply_over_axes-sum", *_both("apply_over_axes", np.sum, [0, 2]),
        (RNG.standard_normal((2, 3, 4)),)),
    Row("apply_over_axes-negative-axis", *_both("apply_over_axes", np.mean, -1),
        (RNG.standard_normal((2, 3)),)),
    Row("apply_over_axes-keeps-rank", (lambda a: fnp.apply_over_axes(
        lambda v, ax: fnp.cumsum(v, axis=ax), a, (1, 0))), (lambda a: np.apply_over_axes(
            lambda v, ax: np.cumsum(v, axis=ax), a, (1, 0))), (RNG.standard_normal((3, 2)),)),
    Row("apply_over_axes-f32", *_both("apply_over_axes", np.max, (0, 1)),
        (RNG.standard_normal((3, 2)).astype(np.float32),), grad=False),
    Row("apply_over_axes-int", *_both("apply_over_axes", np.sum, 1), (np.arange(6).reshape(2, 3),),
        grad=False),
    Row("apply_over_axes-no-axes", *_both("apply_over_axes", np.sum, []), (X23,)),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    assert_matches(row.fn(*row.args), row.ref(*row.args), row.dtype, where=row.name)


test_jit_equals_eager, test_vmap_equals_a_loop, test_derivatives_to_order_two = \
    transform_tests(ROWS)


def test_piecewise_derivatives_are_the_selected_pieces():
    grad = fd.grad(lambda x: fnp.sum(fnp.piecewise(x, [x < 0, x >= 0], TWO_SIDES)))(X7)
    np.testing.assert_array_equal(grad, np.where(X7 < 0, 2 * X7, 3.0))
    # the derivative flows into what the functions close over, and the conditions may be
    # computed from other traced values
    def f(scale, shift):
        return fnp.sum(fnp.piecewise(X7, [X7 < shift], [lambda v: scale * v, 1.0]))
    np.testing.assert_allclose(fd.grad(f)(2.0, 0.0), X7[X7 < 0].sum())
    # a guarded argument keeps the derivative finite where the piece is not selected
    g = fd.grad(lambda x: fnp.sum(fnp.piecewise(
        x, [x > 0], [lambda v: fnp.sqrt(fnp.maximum(v, 1e-12)), 0.0])))(X7)
    np.testing.assert_allclose(g, np.where(X7 > 0, 0.5 / np.sqrt(np.abs(X7)), 0.0))


def test_piecewise_calls_each_function_once_on_all_of_x():
    shapes = []

    def record(v):
        shapes.append(np.shape(v))
        return v

    fnp.piecewise(X23, [X23 < 0], [record, record])
    assert shapes == [(2, 3), (2, 3)]


def test_fromfunction_calls_the_function_on_index_grids():
    cases = [(lambda i, j: i + 10 * j, (2, 3), {}), (lambda i: i ** 2, (4,), {}),
             (lambda i, j: i == j, (3, 3), {"dtype": int}),
             (lambda i, j, k: i * j - k, (2, 1, 3), {"dtype": np.float32}),
             (lambda i, j: i + j, (0, 2), {})]
    for fn, shape, kw in cases:
        assert_matches(fnp.fromfunction(fn, shape, **kw), np.fromfunction(fn, shape, **kw),
                       where=str(shape))
    # keyword arguments reach the function; the function may close over traced values
    got = fnp.fromfunction(lambda i, j, scale: scale * (i - j), (2, 2), scale=3.0)
    np.testing.assert_array_equal(got, [[0.0, -3.0], [3.0, 0.0]])
    weights = np.array([0.5, 2.0])
    grad = fd.grad(lambda w: fnp.sum(fnp.fromfunction(lambda i, j: w[0] * i + w[1] * j, (2, 3))))
    np.testing.assert_array_equal(grad(weights), [3.0, 6.0])
    jitted = fd.jit(lambda w: fnp.fromfunction(lambda i, j: w * i - j, (3, 2)))
    np.testing.assert_array_equal(jitted(2.0), np.fromfunction(lambda i, j: 2.0 * i - j, (3, 2)))


def test_numpy_functions_dispatch_on_tracers():
    f = lambda x: np.sum(np.piecewise(x, [x < 0], TWO_SIDES))  # noqa: E731
    np.testing.assert_allclose(fd.jit(f)(X7), f(X7))
    np.testing.assert_array_equal(fd.grad(f)(X7), np.where(X7 < 0, 2 * X7, 3.0))
    g = fd.grad(lambda a: np.sum(np.apply_over_axes(np.sum, a ** 2, [0, 1])))
    np.testing.assert_allclose(g(X23), 2 * X23)


ERRORS = [
    ("piecewise-too-many-functions", lambda: fnp.piecewise(X7, [X7 < 0], [1.0, 2.0, 3.0]),
     ShapeError, r"with 1 condition\(s\), either 1 or 2 functions"),
    ("piecewise-too-few-functions", lambda: fnp.piecewise(X7, [X7 < 0, X7 > 1, X7 > 2], [1.0]),
     ShapeError, r"with 3 condition\(s\), either 3 or 4"),
    ("piecewise-condition-shape", lambda: fnp.piecewise(X7, [np.ones(3, bool)], [1.0]),
     ShapeError, "condition 0 has shape"),
    ("piecewise-result-shape", lambda: fnp.piecewise(X7, [X7 < 0], [lambda v: v[:3]]),
     ShapeError, "calls every function on all of x"),
    ("piecewise-result-too-large", lambda: fnp.piecewise(X7, [X7 < 0], [lambda v: np.ones((2, 7))]),
     ShapeError, "larger than x's shape"),
    ("apply_over_axes-not-callable", lambda: fnp.apply_over_axes(X23, np.sum, 0),
     InvalidArgumentError, "argument order"),
    ("apply_over_axes-axis", lambda: fnp.apply_over_axes(np.sum, X23, 2), AxisError,
     "out of range"),
    ("apply_over_axes-rank", lambda: fnp.apply_over_axes(lambda a, ax: np.sum(a), X23, 0),
     ShapeError, "must return an array of rank 2"),
    ("fromfunction-not-callable", lambda: fnp.fromfunction((2, 3), np.add), InvalidArgumentError,
     "argument order"),
    ("fromfunction-int-shape", lambda: fnp.fromfunction(lambda i: i, 5), InvalidArgumentError,
     r"write \(5,\)"),
    ("fromfunction-negative", lambda: fnp.fromfunction(lambda i: i, (-1,)), InvalidArgumentError,
     "non-negative Python int"),
]


@pytest.mark.parametrize("call,error,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
