"""Tests of tracers as numpy arrays: operators, methods, and numpy's dispatch protocols.

The central table calls each function twice inside ``fd.make_jaxpr``, once as
``np.<name>`` (dispatched through ``__array_ufunc__`` / ``__array_function__``)
and once as ``fnp.<name>``; the two jaxprs must print identically, and the
staged program must reproduce numpy's values and dtypes. Operators and methods
get the same treatment against their funcdiff.numpy spelling. Unsupported numpy
functions, ``np.asarray(tracer)`` and the generated support list are checked too.
"""

from __future__ import annotations

import doctest
import os

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import TracerArrayConversionError, UnsupportedNumpyError
from funcdiff.numpy import _interop
from funcdiff.test_util import check_grads
from funcdiff.tree_util import tree_flatten, tree_unflatten

_interop.install_tracer_methods()  # idempotent; funcdiff.numpy does it at import


def _inputs(shapes, dtype="f8", seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if np.dtype(dtype).kind == "f":
            out.append(rng.uniform(0.5, 2.0, s).astype(dtype))
        elif np.dtype(dtype).kind == "b":
            out.append(rng.random(s) < 0.5)
        else:
            out.append(rng.integers(1, 5, s).astype(dtype))
    return out


def _assert_same(expected, actual, where=""):
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), where
        for e, a in zip(expected, actual):
            _assert_same(e, a, where)
        return
    e, a = np.asarray(expected), np.asarray(actual)
    assert (a.shape, a.dtype) == (e.shape, e.dtype), (
        f"{where}: {a.dtype}{a.shape} vs numpy's {e.dtype}{e.shape}")
    np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-12, err_msg=where)


def _run(closed, args):
    return tree_unflatten(closed.out_tree, closed(*tree_flatten(tuple(args))[0]))


# (name, call(module, *arrays), shapes, dtype)
W = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
DISPATCH_ROWS = [
    # ufuncs and elementwise functions
    ("sin", lambda m, x: m.sin(x), [(2, 3)], "f8"),
    ("exp", lambda m, x: m.exp(x), [(3,)], "f4"),
    ("log", lambda m, x: m.log(x), [(3,)], "f8"),
    ("add", lambda m, x, y: m.add(x, y), [(2, 3), (3,)], "f8"),
    ("add-scalar", lambda m, x: m.add(x, 2.0), [(3,)], "f4"),
    ("subtract", lambda m, x, y: m.subtract(x, y), [(2, 3), (2, 1)], "i8"),
    ("multiply", lambda m, x, y: m.multiply(x, y), [(3,), (3,)], "f8"),
    ("divide", lambda m, x, y: m.divide(x, y), [(3,), (3,)], "i8"),
    ("power", lambda m, x: m.power(x, 3), [(3,)], "f8"),
    ("maximum", lambda m, x, y: m.maximum(x, y), [(3,), (3,)], "f8"),
    ("arctan2", lambda m, x, y: m.arctan2(x, y), [(3,), (3,)], "f8"),
    ("abs", lambda m, x: m.abs(x), [(3,)], "i8"),
    ("sqrt", lambda m, x: m.sqrt(x), [(3,)], "f8"),
    ("greater", lambda m, x, y: m.greater(x, y), [(3,), (3,)], "f8"),
    ("logical_and", lambda m, x, y: m.logical_and(x, y), [(3,), (3,)], "b"),
    ("isfinite", lambda m, x: m.isfinite(x), [(3,)], "f8"),
    ("where", lambda m, c, x: m.where(c > 1.0, x, 0.0), [(3,), (3,)], "f8"),
    ("clip", lambda m, x: m.clip(x, 0.8, 1.5), [(4,)], "f8"),
    ("round", lambda m, x: m.round(x, 1), [(4,)], "f8"),
    ("nan_to_num", lambda m, x: m.nan_to_num(x), [(4,)], "f8"),
    # reductions
    ("sum", lambda m, x: m.sum(x, axis=0), [(2, 3)], "f8"),
    ("sum-all", lambda m, x: m.sum(x), [(2, 3)], "i8"),
    ("mean", lambda m, x: m.mean(x, axis=-1, keepdims=True), [(2, 3)], "f4"),
    ("var", lambda m, x: m.var(x, ddof=1), [(4,)], "f8"),
    ("std", lambda m, x: m.std(x, axis=0), [(3, 2)], "f8"),
    ("prod", lambda m, x: m.prod(x, axis=1), [(2, 3)], "f8"),
    ("max", lambda m, x: m.max(x, axis=1), [(2, 3)], "f8"),
    ("amin", lambda m, x: m.amin(x), [(2, 3)], "f8"),
    ("argmax", lambda m, x: m.argmax(x, axis=0), [(3, 2)], "f8"),
    ("any", lambda m, x: m.any(x, axis=0), [(3, 2)], "b"),
    ("average", lambda m, x, w: m.average(x, weights=w), [(4,), (4,)], "f8"),
    ("median", lambda m, x: m.median(x), [(5,)], "f8"),
    ("percentile", lambda m, x: m.percentile(x, 30.0), [(5,)], "f8"),
    # ufunc methods
    ("add.reduce", lambda m, x: m.add.reduce(x) if m is np else m.sum(x, axis=0), [(2, 3)], "f8"),
    ("multiply.reduce", lambda m, x: m.multiply.reduce(x, axis=1) if m is np else
     m.prod(x, axis=1), [(2, 3)], "f8"),
    ("maximum.reduce", lambda m, x: m.maximum.reduce(x, axis=None) if m is np else m.max(x),
     [(2, 3)], "f8"),
    ("add.accumulate", lambda m, x: m.add.accumulate(x) if m is np else m.cumsum(x, axis=0),
     [(2, 3)], "f8"),
    ("maximum.accumulate", lambda m, x: m.maximum.accumulate(x, axis=1) if m is np else
     m.maximum_accumulate(x, axis=1), [(2, 3)], "f8"),
    # linear algebra, cumulative and sorting
    ("matmul", lambda m, x, y: m.matmul(x, y), [(2, 3), (3, 4)], "f8"),
    ("dot", lambda m, x, y: m.dot(x, y), [(3,), (3, 2)], "f8"),
    ("outer", lambda m, x, y: m.outer(x, y), [(3,), (2,)], "f8"),
    ("tensordot", lambda m, x, y: m.tensordot(x, y, axes=1), [(2, 3), (3, 2)], "f8"),
    ("einsum", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [(2, 3), (3, 2)], "f8"),
    ("trace", lambda m, x: m.trace(x), [(3, 3)], "f8"),
    ("cumsum", lambda m, x: m.cumsum(x, axis=1), [(2, 3)], "f8"),
    ("diff", lambda m, x: m.diff(x), [(5,)], "f8"),
    ("sort", lambda m, x: m.sort(x), [(5,)], "f8"),
    ("argsort", lambda m, x: m.argsort(x), [(5,)], "f8"),
    ("convolve", lambda m, x, y: m.convolve(x, y), [(5,), (2,)], "f8"),
    # creation-like functions of arrays
    ("zeros_like", lambda m, x: m.zeros_like(x), [(2, 3)], "f8"),
    ("full_like", lambda m, x: m.full_like(x, 3.0), [(2, 3)], "f4"),
    ("tril", lambda m, x: m.tril(x), [(3, 3)], "f8"),
    ("diagonal", lambda m, x: m.diagonal(x), [(3, 3)], "f8"),
    # shape functions
    ("reshape", lambda m, x: m.reshape(x, (3, -1)), [(2, 3)], "f8"),
    ("ravel", lambda m, x: m.ravel(x), [(2, 3)], "f8"),
    ("transpose", lambda m, x: m.transpose(x, (1, 0, 2)), [(2, 3, 4)], "f8"),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), [(2, 3, 4)], "f8"),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 2), [(2, 3, 4)], "f8"),
    ("rollaxis", lambda m, x: m.rollaxis(x, 2), [(2, 3, 4)], "f8"),
    ("squeeze", lambda m, x: m.squeeze(x), [(1, 3, 1)], "f8"),
    ("expand_dims", lambda m, x: m.expand_dims(x, (0, 2)), [(2, 3)], "f8"),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3)), [(3,)], "f8"),
    ("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y), [(3,), (2, 1)], "f8"),
    ("atleast_2d", lambda m, x: m.atleast_2d(x), [(3,)], "f8"),
    ("atleast_3d", lambda m, x, y: m.atleast_3d(x, y), [(3,), (2, 2)], "f8"),
    ("concatenate", lambda m, x, y: m.concatenate([x, y], axis=1), [(2, 3), (2, 1)], "f8"),
    ("concatenate-numpy", lambda m, x: m.concatenate([x, W[:1]]), [(2, 4)], "f8"),
    ("stack", lambda m, x, y: m.stack([x, y], axis=-1), [(2, 3), (2, 3)], "f8"),
    ("hstack", lambda m, x, y: m.hstack((x, y)), [(2,), (3,)], "f8"),
    ("vstack", lambda m, x, y: m.vstack((x, y)), [(3,), (2, 3)], "f8"),
    ("dstack", lambda m, x, y: m.dstack((x, y)), [(2, 3), (2, 3)], "f8"),
    ("column_stack", lambda m, x, y: m.column_stack((x, y)), [(3,), (3,)], "f8"),
    ("split", lambda m, x: m.split(x, [1, 2], axis=1), [(2, 4)], "f8"),
    ("array_split", lambda m, x: m.array_split(x, 3), [(5,)], "f8"),
    ("hsplit", lambda m, x: m.hsplit(x, 2), [(2, 4)], "f8"),
    ("vsplit", lambda m, x: m.vsplit(x, 2), [(2, 4)], "f8"),
    ("dsplit", lambda m, x: m.dsplit(x, 2), [(2, 1, 4)], "f8"),
    ("tile", lambda m, x: m.tile(x, (2, 2)), [(2, 3)], "f8"),
    ("repeat", lambda m, x: m.repeat(x, [1, 2, 0], axis=1), [(2, 3)], "f8"),
    ("flip", lambda m, x: m.flip(x, 1), [(2, 3)], "f8"),
    ("fliplr", lambda m, x: m.fliplr(x), [(2, 3)], "f8"),
    ("flipud", lambda m, x: m.flipud(x), [(2, 3)], "f8"),
    ("roll", lambda m, x: m.roll(x, 2, axis=1), [(2, 3)], "f8"),
    ("rot90", lambda m, x: m.rot90(x, 3), [(2, 3)], "f8"),
    ("pad", lambda m, x: m.pad(x, ((1, 2), (2, 0)), mode="reflect"), [(3, 3)], "f8"),
    ("pad-constant", lambda m, x: m.pad(x, 1, constant_values=2.0), [(2, 3)], "f4"),
    ("take", lambda m, x: m.take(x, [0, -1, 0]), [(2, 3)], "f8"),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, np.array([[1, 0]]), axis=1),
     [(2, 3)], "f8"),
    ("tril_indices_from", lambda m, x: m.take(x, m.tril_indices_from(x)[0]), [(3, 3)], "f8"),
]


@pytest.mark.parametrize("row", DISPATCH_ROWS, ids=[r[0] for r in DISPATCH_ROWS])
def test_numpy_call_on_tracers_stages_like_funcdiff_numpy(row):
    name, call, shapes, dtype = row
    args = _inputs(shapes, dtype)
    via_numpy = fd.make_jaxpr(lambda *a: call(np, *a))(*args)
    via_fnp = fd.make_jaxpr(lambda *a: call(fnp, *a))(*args)
    assert str(via_numpy) == str(via_fnp)
    _assert_same(call(np, *args), _run(via_numpy, args), f"np.{name} staged vs numpy")


def test_every_shape_function_is_reachable_from_numpy():
    from funcdiff.numpy import _shape
    supported = set(_interop.supported_numpy_names())
    for name in _shape.__all__:
        if hasattr(np, name) and name != "put_along_axis":  # numpy's is in place
            assert f"numpy.{name}" in supported, name


# ---------------------------------------------------------------------------
# Operators and methods: (name, expression on tracers, funcdiff.numpy spelling)

OPERATOR_ROWS = [
    ("add", lambda x, y: x + y, lambda x, y: fnp.add(x, y)),
    ("radd", lambda x, y: 1.5 + x, lambda x, y: fnp.add(1.5, x)),
    ("sub", lambda x, y: x - y, lambda x, y: fnp.subtract(x, y)),
    ("rsub", lambda x, y: 2 - x, lambda x, y: fnp.subtract(2, x)),
    ("mul", lambda x, y: x * 2.0, lambda x, y: fnp.multiply(x, 2.0)),
    ("rmul", lambda x, y: 2.0 * x, lambda x, y: fnp.multiply(2.0, x)),
    ("truediv", lambda x, y: x / y, lambda x, y: fnp.true_divide(x, y)),
    ("rtruediv", lambda x, y: 1.0 / x, lambda x, y: fnp.true_divide(1.0, x)),
    ("floordiv", lambda x, y: x // y, lambda x, y: fnp.floor_divide(x, y)),
    ("mod", lambda x, y: x % 0.7, lambda x, y: fnp.remainder(x, 0.7)),
    ("pow", lambda x, y: x ** 2, lambda x, y: fnp.power(x, 2)),
    ("rpow", lambda x, y: 2.0 ** x, lambda x, y: fnp.power(2.0, x)),
    ("matmul", lambda x, y: x @ W, lambda x, y: fnp.matmul(x, W)),
    ("rmatmul", lambda x, y: W.T @ x.T, lambda x, y: fnp.matmul(W.T, fnp.transpose(x))),
    ("ndarray-mul", lambda x, y: W[:2, :3] * x, lambda x, y: fnp.multiply(W[:2, :3], x)),
    ("float64-scalar", lambda x, y: np.float64(2.0) * x,
     lambda x, y: fnp.multiply(np.float64(2.0), x)),
    ("neg", lambda x, y: -x, lambda x, y: fnp.negative(x)),
    ("pos", lambda x, y: +x, lambda x, y: fnp.positive(x)),
    ("abs", lambda x, y: abs(x), lambda x, y: fnp.absolute(x)),
    ("lt", lambda x, y: x < y, lambda x, y: fnp.less(x, y)),
    ("le", lambda x, y: x <= 1.0, lambda x, y: fnp.less_equal(x, 1.0)),
    ("gt", lambda x, y: 1.0 > x, lambda x, y: fnp.less(x, 1.0)),
    ("ge", lambda x, y: x >= y, lambda x, y: fnp.greater_equal(x, y)),
    ("eq", lambda x, y: x == y, lambda x, y: fnp.equal(x, y)),
    ("ne", lambda x, y: x != 1.0, lambda x, y: fnp.not_equal(x, 1.0)),
    ("and", lambda x, y: (x > 1.0) & (y > 1.0), lambda x, y: fnp.logical_and(x > 1.0, y > 1.0)),
    ("or", lambda x, y: (x > 1.0) | (y > 1.0), lambda x, y: fnp.logical_or(x > 1.0, y > 1.0)),
    ("getitem", lambda x, y: x[::-1, [0, 2]],
     lambda x, y: fnp.getitem(x, (slice(None, None, -1), [0, 2]))),
    ("at-set", lambda x, y: x.at[0, 1:].set(y[0, 1:]),
     lambda x, y: fnp.at(x)[0, 1:].set(fnp.getitem(y, (0, slice(1, None))))),
    ("at-add", lambda x, y: x.at[[0, 0]].add(1.0), lambda x, y: fnp.at(x)[[0, 0]].add(1.0)),
    ("reshape-varargs", lambda x, y: x.reshape(3, -1), lambda x, y: fnp.reshape(x, (3, -1))),
    ("reshape-tuple", lambda x, y: x.reshape((6,)), lambda x, y: fnp.reshape(x, (6,))),
    ("T", lambda x, y: x.T, lambda x, y: fnp.transpose(x)),
    ("transpose", lambda x, y: x.transpose(1, 0), lambda x, y: fnp.transpose(x, (1, 0))),
    ("astype", lambda x, y: x.astype(np.float32), lambda x, y: fnp.asarray(x, np.float32)),
    ("sum", lambda x, y: x.sum(axis=0), lambda x, y: fnp.sum(x, axis=0)),
    ("mean", lambda x, y: x.mean(), lambda x, y: fnp.mean(x)),
    ("max", lambda x, y: x.max(1), lambda x, y: fnp.max(x, 1)),
    ("min", lambda x, y: x.min(), lambda x, y: fnp.min(x)),
    ("prod", lambda x, y: x.prod(axis=1), lambda x, y: fnp.prod(x, axis=1)),
    ("std", lambda x, y: x.std(ddof=1), lambda x, y: fnp.std(x, ddof=1)),
    ("var", lambda x, y: x.var(0), lambda x, y: fnp.var(x, 0)),
    ("argmax", lambda x, y: x.argmax(), lambda x, y: fnp.argmax(x)),
    ("argmin", lambda x, y: x.argmin(axis=1), lambda x, y: fnp.argmin(x, axis=1)),
    ("any", lambda x, y: (x > 1.0).any(), lambda x, y: fnp.any(x > 1.0)),
    ("all", lambda x, y: (x > 1.0).all(0), lambda x, y: fnp.all(x > 1.0, 0)),
    ("dot", lambda x, y: x.dot(W), lambda x, y: fnp.dot(x, W)),
    ("ravel", lambda x, y: x.ravel(), lambda x, y: fnp.ravel(x)),
    ("flatten", lambda x, y: x.flatten(), lambda x, y: fnp.ravel(x)),
    ("squeeze", lambda x, y: x[None].squeeze(0), lambda x, y: fnp.squeeze(x[None], 0)),
    ("swapaxes", lambda x, y: x.swapaxes(0, 1), lambda x, y: fnp.swapaxes(x, 0, 1)),
    ("clip", lambda x, y: x.clip(0.8, 1.2), lambda x, y: fnp.clip(x, 0.8, 1.2)),
    ("cumsum", lambda x, y: x.cumsum(1), lambda x, y: fnp.cumsum(x, 1)),
    ("cumprod", lambda x, y: x.cumprod(), lambda x, y: fnp.cumprod(x)),
    ("round", lambda x, y: x.round(1), lambda x, y: fnp.round(x, 1)),
    ("copy-conj-real", lambda x, y: x.copy().conj().real, lambda x, y: x),
    ("sort", lambda x, y: x.sort(axis=0), lambda x, y: fnp.sort(x, axis=0)),
    ("argsort", lambda x, y: x.argsort(), lambda x, y: fnp.argsort(x)),
    ("repeat", lambda x, y: x.repeat(2, axis=0), lambda x, y: fnp.repeat(x, 2, axis=0)),
    ("take", lambda x, y: x.take([1, 0], axis=1), lambda x, y: fnp.take(x, [1, 0], axis=1)),
    ("trace", lambda x, y: x.trace(), lambda x, y: fnp.trace(x)),
    ("diagonal", lambda x, y: x.diagonal(), lambda x, y: fnp.diagonal(x)),
    ("mT", lambda x, y: x.mT, lambda x, y: fnp.swapaxes(x, -1, -2)),
]


def _row_name(row):
    return (row.values[0] if hasattr(row, "values") else row)[0]


@pytest.mark.parametrize("row", OPERATOR_ROWS, ids=[_row_name(r) for r in OPERATOR_ROWS])
@pytest.mark.parametrize("dtype", ["f8", "f4"])
def test_operators_and_methods(row, dtype):
    name, expr, spelled = row
    x, y = _inputs([(2, 3), (2, 3)], dtype, seed=1)
    staged = fd.make_jaxpr(expr)(x, y)
    assert str(staged) == str(fd.make_jaxpr(spelled)(x, y))
    out = _run(staged, (x, y))
    reference = _numpy_reference(name, expr, x, y)
    if reference is not None:
        _assert_same(reference, out, name)


def _numpy_reference(name, expr, x, y):
    """The same expression on plain numpy arrays (None where numpy spells it differently)."""
    if name.startswith("at-") or name == "sort":
        return None
    return expr(x, y)


def test_bitwise_operators():
    b = np.array([True, False, True])
    out = _run(fd.make_jaxpr(lambda v: ~(v & True) | (v ^ b))(b), (b,))
    _assert_same(~(b & True) | (b ^ b), out, "bool operators")
    i = np.array([1, 6, 3])
    if hasattr(fnp, "bitwise_and"):
        _assert_same(i & 5, _run(fd.make_jaxpr(lambda v: v & 5)(i), (i,)), "int &")
    else:  # never silently logical on integers
        with pytest.raises(UnsupportedNumpyError, match="__and__"):
            fd.make_jaxpr(lambda v: v & 5)(i)


def test_float32_tracer_times_python_float_stays_float32():
    x = np.ones(3, np.float32)
    for expr in (lambda v: v * 2.0, lambda v: 2.0 * v, lambda v: v / 3, lambda v: v ** 2,
                 lambda v: np.sin(v) + 1.0, lambda v: v @ np.ones(3, np.float32)):
        (aval,) = fd.make_jaxpr(expr)(x).out_avals
        assert aval.dtype == np.float32


def test_var_method_under_grad():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    np.testing.assert_allclose(fd.grad(lambda v: v.var())(x), 2 * (x - x.mean()) / x.size)


def test_method_results_under_grad():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    g = fd.grad(lambda v: (v.T @ v).sum() + v[0, ::2].mean() + np.sin(v).max())(x)
    eps, num = 1e-6, np.zeros_like(x)
    f = lambda v: (v.T @ v).sum() + v[0, ::2].mean() + np.sin(v).max()
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        num[i] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)


def test_shape_and_dtype_queries_work_on_abstract_tracers():
    def f(x):
        assert np.shape(x) == (2, 3) and np.ndim(x) == 2 and np.size(x) == 6
        assert np.size(x, 1) == 3 and not np.iscomplexobj(x) and np.isrealobj(x)
        assert np.result_type(x, 1.0) == np.float32 and np.can_cast(x, np.float64)
        return np.copy(x)
    assert str(fd.make_jaxpr(f)(np.ones((2, 3), np.float32))).count("=") == 0


def test_unmodified_numpy_program_differentiates():
    """A classifier loss written with numpy only: grad, vmap and make_jaxpr all work."""
    def loss(w1, b1, w2, x, y):
        h = np.tanh(x @ w1 + b1)
        logits = h @ w2
        logits = logits - np.max(logits, axis=1, keepdims=True)
        logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        picked = np.take_along_axis(logp, y[:, None], axis=1)
        return -np.mean(picked) + 0.01 * np.sum(w1 ** 2)
    rng = np.random.default_rng(0)
    params = (rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal((5, 3)))
    x, y = rng.standard_normal((6, 4)), rng.integers(0, 3, 6)
    check_grads(lambda *p: loss(*p, x, y), params, order=1)
    staged = fd.make_jaxpr(loss)(*params, x, y)
    np.testing.assert_allclose(staged(*params, x, y)[0], loss(*params, x, y))
    batched = fd.vmap(lambda xx: loss(*params, xx, y))(np.stack([x, 2 * x]))
    np.testing.assert_allclose(batched, [loss(*params, x, y), loss(*params, 2 * x, y)])


def test_nonzero_method_needs_a_concrete_value():
    x = np.array([0.0, 2.0, 0.0, 3.0])
    g = fd.grad(lambda v: v[(v > 0).nonzero()].sum())(x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 1.0])
    with pytest.raises(fd.FunctionalDiffError, match="where"):
        fd.make_jaxpr(lambda v: v.nonzero())(x)


# ---------------------------------------------------------------------------
# What is not supported


UNSUPPORTED = [
    (lambda x: np.bitwise_count(x.astype(np.uint8)), "numpy.bitwise_count"),
    (lambda x: np.trim_zeros(x), "numpy.trim_zeros"),
    (lambda x: np.copyto(x, 1.0), "numpy.copyto"),
    (lambda x: np.resize(x, 5), "numpy.resize"),
    (lambda x: np.add.reduceat(x, [0, 1]), "numpy.add.reduceat"),
    (lambda x: np.add.at(x, [0], 1.0), r"\.at\["),
    (lambda x: np.subtract.reduce(x), "numpy.subtract.reduce"),
    (lambda x: np.sin(x, out=np.zeros(3)), "out="),
    (lambda x: np.put_along_axis(x, np.array([0]), 1.0, 0), "fnp.put_along_axis"),
]


@pytest.mark.parametrize("case", range(len(UNSUPPORTED)))
def test_unsupported_numpy_functions_raise_naming_them(case):
    fn, pattern = UNSUPPORTED[case]
    with pytest.raises(UnsupportedNumpyError, match=pattern):
        fd.make_jaxpr(fn)(np.ones(3))
    with pytest.raises(UnsupportedNumpyError, match="funcdiff.numpy"):
        fd.grad(lambda x: fn(x))(np.ones(3))


# ---------------------------------------------------------------------------
# numpy.linalg and numpy.fft


def test_every_linalg_and_fft_function_dispatches():
    names = _interop.supported_numpy_names()
    for module in ("linalg", "fft"):
        fd_module = getattr(fnp, module)
        exported = {n for n in fd_module.__all__ if _interop.is_implementation(
            getattr(fd_module, n)) and f"{module}.{n}" not in _interop.NOT_DISPATCHED}
        assert {f"numpy.{module}.{n}" for n in exported} <= set(names), module
        functions = _interop.build_tables()["functions"]
        for n in exported:
            assert functions[getattr(getattr(np, module), n)] is getattr(fd_module, n), n


def test_grad_of_numpy_linalg_det():
    A = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.0, 0.4, 1.0]])
    g = fd.grad(lambda A: np.linalg.det(A))(A)
    np.testing.assert_allclose(g, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-12)


def test_grad_of_numpy_fft_power():
    x = np.random.default_rng(0).normal(size=8)
    g = fd.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(x)
    np.testing.assert_allclose(g, 2 * 8 * x, rtol=1e-10)


SUBMODULE_ROWS = [  # (numpy spelling, funcdiff spelling, argument)
    (lambda A: np.linalg.inv(A) @ A, lambda A: fnp.linalg.inv(A) @ A, np.eye(3) + 0.1),
    (lambda A: np.linalg.slogdet(A)[1], lambda A: fnp.linalg.slogdet(A)[1], np.eye(3) + 0.1),
    (lambda A: np.linalg.norm(A, axis=0), lambda A: fnp.linalg.norm(A, axis=0), np.ones((3, 2))),
    (lambda x: np.real(np.fft.ifft(np.fft.fft(x))),
     lambda x: fnp.real(fnp.fft.ifft(fnp.fft.fft(x))), np.ones(4)),
    (lambda x: np.fft.irfft(np.fft.rfft(x), n=5), lambda x: fnp.fft.irfft(fnp.fft.rfft(x), n=5),
     np.ones(5)),
]


@pytest.mark.parametrize("row", range(len(SUBMODULE_ROWS)))
def test_numpy_submodule_calls_stage_like_funcdiff_numpy(row):
    np_form, fnp_form, x = SUBMODULE_ROWS[row]
    assert str(fd.make_jaxpr(np_form)(x)) == str(fd.make_jaxpr(fnp_form)(x))


def test_asarray_of_abstract_tracer_explains_jit():
    for convert in (np.asarray, np.array, lambda t: np.array([t, t])):
        with pytest.raises(TracerArrayConversionError, match="jit or make_jaxpr"):
            fd.make_jaxpr(lambda x: convert(x))(np.ones(3))


def test_asarray_of_concrete_tracer_explains_stop_gradient():
    with pytest.raises(TracerArrayConversionError, match="stop_gradient"):
        fd.grad(lambda x: np.asarray(x).sum())(np.ones(3))
    with pytest.raises(TracerArrayConversionError, match="cut the derivative"):
        fd.jvp(lambda x: np.array(x), (np.ones(3),), (np.ones(3),))


def test_setitem_on_tracer_mentions_at():
    def f(x):
        x[1:] = 0.0
        return x
    with pytest.raises(fd.FunctionalDiffError, match=r"\.at\["):
        fd.grad(lambda x: f(x).sum())(np.ones(3))


# ---------------------------------------------------------------------------
# The generated list of supported names


def test_supported_names_cover_dispatch_and_exclude_the_rest():
    names = _interop.supported_numpy_names()
    assert names == sorted(set(names))
    for expected in ("numpy.sin", "numpy.concatenate", "numpy.pad", "numpy.where",
                     "numpy.add.reduce", "numpy.maximum.accumulate", "numpy.multiply.outer",
                     "numpy.concat", "numpy.permute_dims"):
        assert expected in names, expected
    for absent in ("numpy.trim_zeros", "numpy.bitwise_count", "numpy.subtract.reduce",
                   "numpy.fft.fftfreq"):  # fftfreq takes no arrays, so never dispatches
        assert absent not in names, absent
    tables = _interop.build_tables()
    for name in names:
        obj = np  # numpy.sin, numpy.add.reduce (the ufunc), numpy.polynomial.polynomial.polyval2d
        for part in name.split(".")[1:]:
            if obj is np or isinstance(obj, type(np)):
                obj = getattr(obj, part)
        assert obj in tables["ufuncs"] or obj in tables["functions"], name
    methods = _interop.supported_array_methods()
    for m in ("__add__", "__rmatmul__", "__getitem__", "at", "reshape", "T", "sum", "astype"):
        assert m in methods, m


def test_names_other_libraries_add_to_numpy_are_not_listed(monkeypatch):
    # numexpr sets numpy.expm1x = numpy.expm1 on import; the tables (and the generated
    # docs) follow numpy's own public names, whatever else is imported
    from funcdiff.numpy import _numpy_dispatch
    monkeypatch.setattr(np, "expm1_added_by_a_library", np.expm1, raising=False)
    names = {n for _, aliases in _numpy_dispatch.numpy_objects() for n in aliases}
    assert "expm1" in names and "expm1_added_by_a_library" not in names


def test_docs_list_is_in_sync_with_the_code():
    path = _interop.default_doc_path()
    assert os.path.exists(path), (
        "docs/numpy-support.md is missing; generate it with python -c \"from "
        "funcdiff.numpy._interop import write_numpy_support_doc; write_numpy_support_doc()\"")
    with open(path, encoding="utf-8") as f:
        assert f.read() == _interop.numpy_support_markdown(), (
            "docs/numpy-support.md is out of date; regenerate it with python -c \"from "
            "funcdiff.numpy._interop import write_numpy_support_doc; write_numpy_support_doc()\"")


def test_install_is_idempotent_and_doctests_run():
    before = fd.make_jaxpr(lambda x: x * 2.0 + 1.0)(np.ones(2))
    _interop.install_tracer_methods()
    assert str(fd.make_jaxpr(lambda x: x * 2.0 + 1.0)(np.ones(2))) == str(before)
    assert doctest.testmod(_interop).failed == 0
