"""Tests of numpy 2's names in funcdiff.numpy: array-API aliases and products, the
cumulative_* functions, static queries, apply_along_axis and the window functions.

One table row per (function, input kind). Every row is compared with numpy
(values and result dtype), run under jit against eager, vmapped over a stacked
batch of its arguments against a Python loop, and, for float64 rows marked
differentiable, gradient-checked to order 2 in both modes. Further tables hold
the static queries, the windows, the numpy calls that must dispatch here, and
the bad inputs with the errors they must raise.
"""

from __future__ import annotations


import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (AxisError, ConcretizationError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.test_util import check_grads
from numpy_tables import Row, assert_matches, both, transform_tests

RNG = np.random.default_rng(0)



def _normal(*shape, dtype="f8"):
    return RNG.standard_normal(shape).astype(dtype)


def _ints(*shape, dtype="i8"):
    return RNG.integers(-4, 5, shape).astype(dtype)




def _concat(**kw):
    return (lambda *a: fnp.concat(list(a), **kw)), (lambda *a: np.concat(list(a), **kw))


def _along(func1d, np_func1d, axis, *extra, **kw):
    return (lambda a: fnp.apply_along_axis(func1d, axis, a, *extra, **kw),
            lambda a: np.apply_along_axis(np_func1d, axis, a, *extra, **kw))


ROWS = [
    Row("concat", *_concat(axis=1), (_normal(2, 3), _normal(2, 2))),
    Row("concat-axis-none", *_concat(axis=None), (_normal(2, 3), _normal(4))),
    Row("concat-int-float32", *_concat(), (_ints(2, dtype="i4"), _normal(3, dtype="f4")), False),
    Row("permute_dims", *both("permute_dims", axes=(2, 0, 1)), (_normal(2, 3, 4),)),
    Row("matrix_transpose", *both("matrix_transpose"), (_normal(4, 2, 3),)),
    Row("matrix_transpose-int32", *both("matrix_transpose"), (_ints(2, 3, dtype="i4"),), False),
    Row("vecdot", *both("vecdot"), (_normal(4, 3), _normal(3))),
    Row("vecdot-axis0", *both("vecdot", axis=0), (_normal(3, 2), _normal(3, 2))),
    Row("vecdot-broadcast", *both("vecdot", axis=-1), (_normal(2, 1, 3), _normal(4, 3))),
    Row("vecdot-float32", *both("vecdot"), (_normal(2, 3, dtype="f4"), _normal(3, dtype="f4")),
        False),
    Row("vecdot-int32", *both("vecdot"), (_ints(2, 3, dtype="i4"), _ints(3, dtype="i4")), False),
    Row("matvec", *both("matvec"), (_normal(2, 3), _normal(3))),
    Row("matvec-broadcast", *both("matvec"), (_normal(4, 2, 3), _normal(5, 1, 3))),
    Row("matvec-mixed", *both("matvec"), (_normal(2, 3, dtype="f4"), _normal(3)), False),
    Row("matvec-int", *both("matvec"), (_ints(2, 3), _ints(4, 3)), False),
    Row("vecmat", *both("vecmat"), (_normal(3), _normal(3, 2))),
    Row("vecmat-broadcast", *both("vecmat"), (_normal(4, 1, 3), _normal(5, 3, 2))),
    Row("vecmat-float32", *both("vecmat"), (_normal(3, dtype="f4"), _normal(3, 2, dtype="f4")),
        False),
    Row("unstack", *both("unstack"), (_normal(3, 2),)),
    Row("unstack-axis", *both("unstack", axis=-1), (_normal(2, 3, 4),)),
    Row("unstack-int", *both("unstack", axis=1), (_ints(2, 3),), False),
    Row("cumulative_sum", *both("cumulative_sum"), (_normal(5),)),
    Row("cumulative_sum-initial", *both("cumulative_sum", axis=1, include_initial=True),
        (_normal(2, 3),)),
    Row("cumulative_sum-0d", *both("cumulative_sum", include_initial=True), (np.array(1.5),)),
    Row("cumulative_sum-int32", *both("cumulative_sum", axis=0), (_ints(3, 2, dtype="i4"),),
        False),
    Row("cumulative_sum-bool", *both("cumulative_sum", include_initial=True),
        (np.array([True, False, True]),), False),
    Row("cumulative_sum-float32", *both("cumulative_sum", axis=-1, include_initial=True),
        (_normal(2, 3, dtype="f4"),), False),
    Row("cumulative_sum-dtype", *both("cumulative_sum", dtype=np.float32), (_ints(4),), False),
    Row("cumulative_prod", *both("cumulative_prod", axis=0), (_normal(3, 2),)),
    Row("cumulative_prod-initial", *both("cumulative_prod", include_initial=True), (_normal(4),)),
    Row("cumulative_prod-int8", *both("cumulative_prod", include_initial=True),
        (_ints(4, dtype="i1"),), False),
    Row("asanyarray", *both("asanyarray"), (_normal(2, 3),)),
    Row("ascontiguousarray-0d", *both("ascontiguousarray"), (np.array(2.5),)),
    Row("asfortranarray-float32", *both("asfortranarray", dtype=np.float64),
        (_normal(2, 2, dtype="f4"),), False),
    Row("apply_along_axis-scalar", *_along(lambda v: fnp.sum(v ** 2), lambda v: np.sum(v ** 2), 1),
        (_normal(2, 3, 4),)),
    Row("apply_along_axis-vector", *_along(fnp.sort, np.sort, 0), (_normal(3, 4),)),
    Row("apply_along_axis-matrix", *_along(lambda v: fnp.outer(v, v), lambda v: np.outer(v, v), 1),
        (_normal(2, 3, 2),)),
    Row("apply_along_axis-args", *_along(lambda v, c, *, p: c * v[:2] ** p,
                                         lambda v, c, *, p: c * v[:2] ** p, -1, 3.0, p=2),
        (_normal(2, 4),)),
    Row("apply_along_axis-int", *_along(lambda v: v[0] * v[-1], lambda v: v[0] * v[-1], 0),
        (_ints(3, 2),), False),
    Row("apply_along_axis-float32", *_along(fnp.cumsum, np.cumsum, 1),
        (_normal(2, 3, dtype="f4"),), False),
]






@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    assert_matches(row.fn(*row.args), row.ref(*row.args))


test_jit_equals_eager, test_vmap_equals_a_loop, test_derivatives_to_order_two = \
    transform_tests(ROWS)


def test_aliases_are_the_functions_they_name():
    assert fnp.concat is fnp.concatenate and fnp.permute_dims is fnp.transpose
    assert fnp.asanyarray is fnp.asarray


def test_apply_along_axis_gradient_has_the_closed_form():
    x = _normal(3, 4)
    g = fd.grad(lambda a: fnp.sum(fnp.apply_along_axis(lambda v: fnp.sum(v ** 3), 0, a)))(x)
    np.testing.assert_allclose(g, 3 * x ** 2)
    # func1d is traced once for all slices
    calls = []
    fnp.apply_along_axis(lambda v: calls.append(1) or fnp.sum(v), 1, np.ones((5, 3)))
    assert len(calls) == 1


def test_vecmat_and_vecdot_conjugate_the_vector():
    v, m = np.array([1 + 2j, 3 - 1j]), np.array([[1.0, 2.0], [0.5, -1.0]]) + 0j
    np.testing.assert_allclose(fnp.vecmat(v, m), np.vecmat(v, m))
    np.testing.assert_allclose(fnp.vecdot(v, v), np.vecdot(v, v))


# ---------------------------------------------------------------------------
# Static queries: the same answers for arrays, lists, scalars and (abstract) tracers

QUERY_INPUTS = [_normal(2, 3), _normal(4, dtype="f4"), np.array(1.5), [[1, 2, 3]], 3, 2.5,
                _ints(2, 0, 3)]


@pytest.mark.parametrize("name", ["shape", "ndim", "size", "iscomplexobj", "isrealobj"])
@pytest.mark.parametrize("x", QUERY_INPUTS, ids=[f"in{i}" for i in range(len(QUERY_INPUTS))])
def test_static_queries_match_numpy(name, x):
    assert getattr(fnp, name)(x) == getattr(np, name)(x)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        return
    seen = {}

    def f(t):
        seen["fnp"], seen["np"] = getattr(fnp, name)(t), getattr(np, name)(t)
        return t
    fd.jit(f)(x)  # abstract tracers: answered from the abstract value
    assert seen["fnp"] == seen["np"] == getattr(np, name)(x)


def test_size_along_axes_and_isscalar():
    x = _normal(2, 3, 4)
    for axis in (0, -1, (0, 2)):
        assert fnp.size(x, axis) == np.size(x, axis)
    for element in (1, 2.5, 1j, "a", np.float32(1), np.array(1.0), [1.0], None):
        assert fnp.isscalar(element) == np.isscalar(element), element
    fd.jit(lambda t: (None if fnp.isscalar(t) else t))(np.float64(1.0))  # a tracer is an array
    assert fd.jit(lambda t: t + fnp.isscalar(t))(1.0) == 1.0


def test_diag_indices_from():
    for shape in ((3, 3), (2, 2, 2)):
        a = _normal(*shape)
        for got, want in zip(fnp.diag_indices_from(a), np.diag_indices_from(a)):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
        np.testing.assert_array_equal(fd.jit(lambda t: t[fnp.diag_indices_from(t)])(a),
                                      a[np.diag_indices_from(a)])


# ---------------------------------------------------------------------------
# Windows: float64 constants of a concrete length


@pytest.mark.parametrize("name", ["hamming", "hanning", "bartlett", "blackman"])
def test_windows_match_numpy(name):
    for M in (-2, 0, 1, 2, 5, 8, np.int32(6)):
        got, want = getattr(fnp, name)(M), getattr(np, name)(M)
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    f = fd.jit(lambda x, M: x * getattr(fnp, name)(M), static_argnums=1)
    np.testing.assert_allclose(f(np.ones(7), 7), getattr(np, name)(7), atol=1e-15)
    # under grad, a traced length has a value and is read
    assert fd.grad(lambda x: fnp.sum(x * getattr(fnp, name)(4)))(1.0) == np.sum(
        getattr(np, name)(4))


# ---------------------------------------------------------------------------
# numpy calls on tracers dispatch here


def test_numpy_functions_on_tracers_dispatch_here():
    def f(x, m):
        return (np.sum(np.concat([x, x])) + np.sum(np.vecdot(m, x)) + np.sum(np.matvec(m, x))
                + np.sum(np.vecmat(x, np.matrix_transpose(m)))
                + np.sum(np.permute_dims(m, (1, 0)) ** 2) + sum(np.sum(u) for u in np.unstack(m))
                + np.sum(np.cumulative_sum(x, include_initial=True))
                + np.sum(np.cumulative_prod(m, axis=1))
                + np.sum(np.apply_along_axis(np.max, 1, m)) + np.ndim(m) + np.size(x))
    x, m = _normal(3), _normal(2, 3)
    check_grads(f, (x, m), order=1)
    np.testing.assert_allclose(fd.jit(f)(x, m), f(x, m))
    jaxpr = str(fd.make_jaxpr(f)(x, m))
    assert "dot_general" in jaxpr and "cumsum" in jaxpr


# ---------------------------------------------------------------------------
# Bad inputs

ERRORS = [
    ("matrix_transpose-1d", lambda: fnp.matrix_transpose(np.ones(3)), ShapeError, "at least 2"),
    ("vecdot-lengths", lambda: fnp.vecdot(np.ones(3), np.ones(2)), ShapeError, "different "
     "lengths"),
    ("vecdot-axis", lambda: fnp.vecdot(np.ones(3), np.ones(3), axis=1), AxisError,
     "out of range"),
    ("vecdot-0d", lambda: fnp.vecdot(np.array(1.0), np.ones(1)), ShapeError, "at least 1"),
    ("matvec-1d", lambda: fnp.matvec(np.ones(3), np.ones(3)), ShapeError, "matrices"),
    ("matvec-lengths", lambda: fnp.matvec(np.ones((2, 3)), np.ones(2)), ShapeError, "(3 and 2)"),
    ("vecmat-lengths", lambda: fnp.vecmat(np.ones(2), np.ones((3, 2))), ShapeError, "(2 and 3)"),
    ("unstack-0d", lambda: fnp.unstack(np.array(1.0)), ShapeError, "at least 1"),
    ("unstack-axis", lambda: fnp.unstack(np.ones(2), axis=1), AxisError, "out of range"),
    ("cumulative_sum-no-axis", lambda: fnp.cumulative_sum(np.ones((2, 2))), InvalidArgumentError,
     "needs axis="),
    ("cumulative_prod-out", lambda: fnp.cumulative_prod(np.ones(2), out=np.ones(2)),
     UnsupportedNumpyError, "out="),
    ("ascontiguousarray-like", lambda: fnp.ascontiguousarray([1.0], like=np.ones(1)),
     UnsupportedNumpyError, "like="),
    ("diag_indices_from-1d", lambda: fnp.diag_indices_from(np.ones(3)), ShapeError,
     "at least 2"),
    ("diag_indices_from-rect", lambda: fnp.diag_indices_from(np.ones((2, 3))), ShapeError,
     "same length"),
    ("size-0d-axis", lambda: fnp.size(np.array(1.0), 0), AxisError, "0-d"),
    ("apply-0d", lambda: fnp.apply_along_axis(fnp.sum, 0, np.array(1.0)), AxisError, "0-d"),
    ("apply-axis", lambda: fnp.apply_along_axis(fnp.sum, 2, np.ones((2, 2))), AxisError,
     "out of range"),
    ("apply-empty", lambda: fnp.apply_along_axis(fnp.sum, 1, np.ones((0, 3))), ShapeError,
     "zero length"),
    ("apply-not-callable", lambda: fnp.apply_along_axis(0, fnp.sum, np.ones(3)),
     InvalidArgumentError, "argument order"),
    ("hamming-float", lambda: fnp.hamming(4.5), InvalidArgumentError, "Python int"),
    ("hanning-bool", lambda: fnp.hanning(True), InvalidArgumentError, "Python int"),
    ("blackman-traced", lambda: fd.jit(fnp.blackman)(5), ConcretizationError, "static_argnums"),
]


@pytest.mark.parametrize("row", ERRORS, ids=[r[0] for r in ERRORS])
def test_bad_inputs_raise_teaching_errors(row):
    _, call, error, message = row
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
