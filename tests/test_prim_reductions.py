"""Reductions, cumulative ops and sorting: impl, shapes, derivatives, batching, errors.

One table (CASES) drives the checks every primitive must pass: impl against
numpy, abstract evaluation against impl's output, derivatives against finite
differences to second order in both modes, and vmap against a Python loop with
the batch axis in several positions (also for the derivative rules, which vmap
the gathers, pads and scans they are built from). Separate tests pin down the
conventions at kinks: ties of max/min, zeros of products, stable NaN-last sorts.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pytest

import funcdiff as fd
from funcdiff import dtypes
from funcdiff.core import get_aval
from funcdiff.errors import AxisError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.primitives import cumulative as cu
from funcdiff.primitives import elementwise, slicing, structural
from funcdiff.primitives import reductions as rd
from funcdiff.primitives import sorting as so
from funcdiff.test_util import check_grads

F64, F32, I32, I64, BOOL = (np.dtype(d) for d in ("float64", "float32", "int32", "int64", "bool"))


@dataclasses.dataclass
class Case:
    name: str
    fun: Callable          # funcdiff operation applied to the inputs
    ref: Callable          # numpy reference
    args: tuple            # inputs (numpy arrays)
    grad: bool = False     # check derivatives (order 2, fwd and rev)

    def __str__(self):
        shapes = ",".join(f"{a.dtype.name}{list(a.shape)}" for a in self.args)
        return f"{self.name}({shapes})"


def _distinct(shape, dtype, rng, low=-2.0, high=2.0):
    """Random values without ties (so max/min/sort derivatives are smooth)."""
    size = int(np.prod(shape, dtype=np.int64))
    values = rng.permutation(np.linspace(low, high, max(size, 1)))[:size]
    values = values + rng.uniform(0, 0.3 * (high - low) / max(size, 1), size)
    return values.reshape(shape).astype(dtype)


def _data(shape, dtype, rng, domain="any"):
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-3, 4, shape).astype(dtype)  # small range: ties on purpose
    if domain == "nonzero":  # products stay moderate and away from zero
        return (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.6, 1.4, shape)).astype(dtype)
    return _distinct(shape, dtype, rng)


REDUCE_SHAPES = [((), ()), ((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0,)), ((3, 4), (0, 1)),
                 ((2, 3, 4), (0, 2)), ((2, 3, 4), ()), ((0, 3), (1,))]
EMPTY_REDUCE = [((3, 0), (1,)), ((0,), (0,))]  # fine where an identity exists


def _reduction_cases(rng):
    ops = [  # op, numpy ref, dtypes, domain, has identity
        (rd.reduce_sum, lambda x, a: np.sum(x, axis=a, dtype=x.dtype), (F64, F32, I32), "any", True),
        (rd.reduce_prod, lambda x, a: np.prod(x, axis=a, dtype=x.dtype), (F64, F32, I64), "nonzero", True),
        (rd.reduce_max, lambda x, a: np.max(x, axis=a), (F64, F32, I32, BOOL), "any", False),
        (rd.reduce_min, lambda x, a: np.min(x, axis=a), (F64, F32, I32, BOOL), "any", False),
        (rd.reduce_and, lambda x, a: np.all(x, axis=a), (BOOL,), "any", True),
        (rd.reduce_or, lambda x, a: np.any(x, axis=a), (BOOL,), "any", True),
    ]
    cases = []
    for op, ref, dts, domain, identity in ops:
        for shape, axes in REDUCE_SHAPES + (EMPTY_REDUCE if identity else []):
            for dt in dts:
                x = _data(shape, dt, rng, domain)
                cases.append(Case(f"{op.__name__}{axes}",
                                  lambda x, op=op, axes=axes: op(x, axes=axes),
                                  lambda x, ref=ref, axes=axes: ref(x, axes),
                                  (x,), grad=dt == F64 and x.size > 0))
    for op, ref in ((rd.argmax, np.argmax), (rd.argmin, np.argmin)):
        for shape, axis in (((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 2), ((0, 3), 1)):
            for dt in (F64, F32, I32, BOOL):
                for index_dtype in (I64, I32):
                    x = _data(shape, dt, rng)
                    cases.append(Case(
                        f"{op.__name__}[{axis},{index_dtype}]",
                        lambda x, op=op, axis=axis, i=index_dtype: op(x, axis=axis, index_dtype=i),
                        lambda x, ref=ref, axis=axis, i=index_dtype: ref(x, axis=axis).astype(i),
                        (x,)))
    return cases


def _cumulative_cases(rng):
    ops = [
        (cu.cumsum, lambda x, a: np.cumsum(x, a, dtype=x.dtype), (F64, F32, I32), "any"),
        (cu.cumprod, lambda x, a: np.cumprod(x, a, dtype=x.dtype), (F64, F32, I64), "nonzero"),
        (cu.cummax, np.maximum.accumulate, (F64, F32, I32, BOOL), "any"),
        (cu.cummin, np.minimum.accumulate, (F64, F32, I32, BOOL), "any"),
    ]
    cases = []
    for op, ref, dts, domain in ops:
        for shape, axis in (((6,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((0, 3), 1),
                            ((3, 0), 1), ((1,), 0)):
            for reverse in (False, True):
                for dt in dts:
                    x = _data(shape, dt, rng, domain)

                    def ref_fn(x, ref=ref, axis=axis, reverse=reverse):
                        if reverse:
                            return np.flip(ref(np.flip(x, axis), axis), axis)
                        return ref(x, axis)
                    cases.append(Case(
                        f"{op.__name__}[{axis},{'rev' if reverse else 'fwd'}]",
                        lambda x, op=op, axis=axis, reverse=reverse: op(x, axis=axis, reverse=reverse),
                        ref_fn, (x,), grad=dt == F64 and x.size > 0))
    return cases


def _sorting_cases(rng):
    cases = []
    for shape, axis in (((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((0, 3), 1)):
        for dt in (F64, F32, I32, BOOL):
            x = _data(shape, dt, rng)
            cases.append(Case(f"sort[{axis}]", lambda x, axis=axis: so.sort(x, axis=axis),
                              lambda x, axis=axis: np.sort(x, axis=axis, kind="stable"),
                              (x,), grad=dt == F64 and x.size > 0))
            cases.append(Case(f"argsort[{axis}]", lambda x, axis=axis: so.argsort(x, axis=axis),
                              lambda x, axis=axis: np.argsort(x, axis=axis, kind="stable"), (x,)))
        # Two keys with many ties in the first, a float payload carried along.
        k1 = rng.integers(0, 3, shape).astype(I32)
        k2 = _data(shape, F64, rng)
        payload = _data(shape, F64, rng)

        def ref2(k1, k2, p, axis=axis):
            perm = np.lexsort((k2, k1), axis=axis)
            return [np.take_along_axis(a, perm, axis) for a in (k1, k2, p)]
        cases.append(Case(f"sort_together[{axis},keys=2]",
                          lambda k1, k2, p, axis=axis: so.sort_together(
                              k1, k2, p, dimension=axis, num_keys=2),
                          ref2, (k1, k2, payload), grad=payload.size > 0))
    return cases


CASES = (_reduction_cases(np.random.default_rng(0)) + _cumulative_cases(np.random.default_rng(1))
         + _sorting_cases(np.random.default_rng(2)))
GRAD_CASES = [c for c in CASES if c.grad]


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _assert_same(actual, expected, rtol=0.0):
    """Same shapes and dtypes; equal values (floats within rtol: summation order)."""
    for a, e in zip(_as_list(actual), _as_list(expected), strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, a.dtype, e.shape, e.dtype)
        if rtol and a.dtype.kind == "f":
            np.testing.assert_allclose(a, e, rtol=rtol * (1e7 if a.dtype == F32 else 1))
        else:
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_impl_matches_numpy(case):
    _assert_same(case.fun(*case.args), case.ref(*case.args))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_abstract_eval_matches_impl(case):
    closed = trace_to_jaxpr(lambda *a: _as_list(case.fun(*a)), [get_aval(a) for a in case.args])
    outs = _as_list(case.fun(*case.args))
    assert [v.aval for v in closed.jaxpr.outvars] == [get_aval(np.asarray(o)) for o in outs]
    _assert_same(fd.eval_jaxpr(closed.jaxpr, closed.consts, *case.args), outs)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_jit_matches_eager(case):
    _assert_same(fd.jit(case.fun)(*case.args), case.fun(*case.args), rtol=1e-15)


def _float_argnums(case):
    return [i for i, a in enumerate(case.args) if a.dtype.kind == "f"]


def _on_float_args(case):
    """``case.fun`` as a function of its float arguments only (others fixed)."""
    nums = _float_argnums(case)

    def f(*floats):
        args = list(case.args)
        for i, v in zip(nums, floats):
            args[i] = v
        outs = [o for o in _as_list(case.fun(*args)) if get_aval(o).dtype.kind == "f"]
        return outs[0] if len(outs) == 1 else outs
    return f, tuple(case.args[i] for i in _float_argnums(case))


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_derivatives_match_finite_differences(case):
    f, args = _on_float_args(case)
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", [c for c in CASES if c.args[0].ndim >= 1], ids=str)
@pytest.mark.parametrize("bdim", [0, 1, -1])
def test_vmap_matches_loop(case, bdim):
    rng = np.random.default_rng(3)
    batch = [np.stack([_perturb(a, rng) for _ in range(3)], axis=bdim) for a in case.args]
    out = fd.vmap(case.fun, in_axes=bdim)(*batch)
    members = [case.fun(*[np.take(b, i, axis=bdim) for b in batch]) for i in range(3)]
    expected = [np.stack(m) for m in zip(*[_as_list(m) for m in members])]
    _assert_same(out, expected if isinstance(out, (list, tuple)) else expected[0], rtol=1e-13)


def _perturb(a, rng):
    if a.dtype.kind == "f":
        return (a + rng.uniform(-0.01, 0.01, a.shape)).astype(a.dtype)
    return a


@pytest.mark.parametrize("case", [c for c in GRAD_CASES if c.args[0].ndim >= 1], ids=str)
def test_vmap_of_derivatives_matches_loop(case):
    f, args = _on_float_args(case)
    rng = np.random.default_rng(4)
    xs = [np.stack([_perturb(a, rng) for _ in range(3)], axis=1) for a in args]
    ts = [rng.standard_normal(x.shape) for x in xs]
    jvp = lambda *xt: fd.jvp(f, xt[:len(args)], xt[len(args):])[1]
    out = fd.vmap(jvp, in_axes=1)(*xs, *ts)
    loop = [jvp(*[np.take(v, i, axis=1) for v in xs + ts]) for i in range(3)]
    for o, l in zip(_as_list(out), zip(*[_as_list(r) for r in loop]), strict=True):
        np.testing.assert_allclose(o, np.stack(l), rtol=1e-12, atol=1e-12)
    out_primal = f(*args)
    ct = [rng.standard_normal(np.shape(o)) for o in _as_list(out_primal)]
    ct = ct if isinstance(out_primal, list) else ct[0]
    vjp = lambda *x: fd.vjp(f, *x)[1](ct)
    out = fd.vmap(vjp, in_axes=1, out_axes=1)(*xs)
    loop = [vjp(*[np.take(v, i, axis=1) for v in xs]) for i in range(3)]
    for o, l in zip(_as_list(out), zip(*[_as_list(r) for r in loop]), strict=True):
        np.testing.assert_allclose(o, np.stack(l, axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_jit_of_reverse_mode_matches_eager(case):
    f, args = _on_float_args(case)
    out = f(*args)
    cts = [np.ones_like(o) for o in _as_list(out)]
    cts = cts if isinstance(out, list) else cts[0]
    pull = lambda *x: fd.vjp(f, *x)[1](cts)
    for a, b in zip(fd.jit(pull)(*args), pull(*args), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_vmap_with_unbatched_operands_and_nested_vmap():
    rng = np.random.default_rng(7)
    keys, payload = rng.integers(0, 3, (4, 6)).astype(I32), _distinct((6,), F64, rng)
    out = fd.vmap(lambda k, p: so.sort_together(k, p, dimension=0), in_axes=(0, None))(keys, payload)
    for i in range(4):
        _assert_same([o[i] for o in out], so.sort_together(keys[i], payload, dimension=0))
    x = _distinct((3, 6, 4, 5), F64, rng)
    f = lambda x: cu.cummax(rd.reduce_prod(x, axes=(0,)), axis=0, reverse=True)
    nested = fd.vmap(fd.vmap(f, in_axes=2), in_axes=3)(x)
    np.testing.assert_allclose(nested, np.stack([np.stack([f(x[:, :, j, i]) for j in range(4)])
                                                 for i in range(5)]), rtol=1e-13)


@pytest.mark.parametrize("case", [c for c in CASES if c.args[0].size == 0 and c.args[0].dtype == F64
                                  and c.args[0].ndim], ids=str)
def test_derivatives_of_empty_arrays_have_the_right_shapes(case):
    f, args = _on_float_args(case)
    out, tangent = fd.jvp(f, args, args)
    for o, t in zip(_as_list(out), _as_list(tangent), strict=True):
        assert np.shape(o) == np.shape(t) and not np.any(t)  # an empty input moves nothing
    cts = fd.vjp(f, *args)[1](out)
    assert [np.shape(c) for c in cts] == [np.shape(a) for a in args]


def test_float32_derivatives_stay_float32():
    x = _distinct((3, 4), F32, np.random.default_rng(5))
    for f in (lambda x: rd.reduce_max(x, axes=(1,)), lambda x: rd.reduce_prod(x, axes=(0,)),
              lambda x: cu.cumprod(x, axis=1, reverse=False),
              lambda x: cu.cummin(x, axis=0, reverse=True), lambda x: so.sort(x, axis=0)):
        y, t = fd.jvp(f, (x,), (np.ones_like(x),))
        assert np.asarray(t).dtype == F32 and np.asarray(y).dtype == F32
        check_grads(f, (x,), order=1)


# --- conventions at kinks ------------------------------------------------------------


def test_max_min_ties_split_the_gradient_evenly():
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, -1.0]])
    g = fd.grad(lambda x: rd.reduce_sum(rd.reduce_max(x, axes=(1,)), axes=(0,)))(x)
    np.testing.assert_allclose(g, [[0, 0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0]])
    g = fd.grad(lambda x: rd.reduce_min(x, axes=(0, 1)))(-x)
    np.testing.assert_allclose(g, [[0, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]])
    t = np.array([[0.0, 1.0, 7.0, 0.0], [3.0, 0.0, 0.0, 9.0]])
    _, dy = fd.jvp(lambda x: rd.reduce_max(x, axes=(1,)), (x,), (t,))
    np.testing.assert_allclose(dy, [4.0, 1.0])


def test_cummax_tangent_averages_over_the_prefix_entries_attaining_it():
    x = np.array([1.0, 3.0, 2.0, 3.0, 5.0, 5.0, 4.0])
    expected = np.array([[1, 0, 0, 0, 0, 0, 0],
                         [0, 1, 0, 0, 0, 0, 0],
                         [0, 1, 0, 0, 0, 0, 0],
                         [0, .5, 0, .5, 0, 0, 0],
                         [0, 0, 0, 0, 1, 0, 0],
                         [0, 0, 0, 0, .5, .5, 0],
                         [0, 0, 0, 0, .5, .5, 0]])
    for mode in (fd.jacfwd, fd.jacrev):
        np.testing.assert_allclose(mode(lambda x: cu.cummax(x, axis=0, reverse=False))(x), expected)
        np.testing.assert_allclose(mode(lambda x: cu.cummin(x, axis=0, reverse=False))(-x), expected)
        flip = lambda x: x[::-1]
        np.testing.assert_allclose(
            mode(lambda x: cu.cummax(x, axis=0, reverse=True))(flip(x)),
            expected[::-1, ::-1])
    # The last running maximum has exactly reduce_max's derivative, ties included.
    ties = np.array([[2.0, 0.0, 2.0, 1.0, 2.0], [1.0, 1.0, 0.0, 1.0, -3.0]])
    u = np.array([0.7, -1.3])
    last = lambda x: structural.squeeze(slicing.slice(
        cu.cummax(x, axis=1, reverse=False), start_indices=(0, 4), limit_indices=(2, 5)),
        dimensions=(1,))
    (pull_last,) = fd.vjp(last, ties)[1](u)
    (pull_max,) = fd.vjp(lambda x: rd.reduce_max(x, axes=(1,)), ties)[1](u)
    np.testing.assert_allclose(pull_last, pull_max)
    np.testing.assert_allclose(pull_max, [[u[0] / 3, 0, u[0] / 3, 0, u[0] / 3],
                                          [u[1] / 3, u[1] / 3, 0, u[1] / 3, 0]])


def _products_without(x, skip):
    return np.prod([v for k, v in enumerate(x) if k not in skip])


def test_prod_derivatives_are_exact_at_zeros():
    for x in (np.array([2.0, 0.0, 3.0]), np.array([0.0, -1.5, 0.0]), np.array([0.0])):
        n = x.size
        grad = np.array([_products_without(x, {i}) for i in range(n)])
        hess = np.array([[0.0 if i == j else _products_without(x, {i, j}) for j in range(n)]
                         for i in range(n)])
        prod = lambda x: rd.reduce_prod(x, axes=(0,))
        np.testing.assert_allclose(fd.grad(prod)(x), grad)
        np.testing.assert_allclose(fd.jacfwd(prod)(x), grad)
        np.testing.assert_allclose(fd.hessian(prod)(x), hess)
    # cumprod: d out_i / d x_j = prod_{k <= i, k != j} x_k, zeros included.
    x = np.array([2.0, 0.0, 3.0, -1.0, 0.0, 5.0])
    jac = np.array([[_products_without(x[:i + 1], {j}) if j <= i else 0.0 for j in range(6)]
                    for i in range(6)])
    for mode in (fd.jacfwd, fd.jacrev):
        np.testing.assert_allclose(mode(lambda x: cu.cumprod(x, axis=0, reverse=False))(x), jac)
        np.testing.assert_allclose(
            mode(lambda x: cu.cumprod(x, axis=0, reverse=True))(x[::-1]), jac[::-1, ::-1])
    check_grads(lambda x: cu.cumprod(x, axis=0, reverse=False), (x,), order=2)
    # A length that is not a power of two exercises every step of the scan.
    x = np.random.default_rng(8).uniform(-1.5, 1.5, 13)
    x[[3, 9]] = 0.0
    jac = np.array([[_products_without(x[:i + 1], {j}) if j <= i else 0.0 for j in range(13)]
                    for i in range(13)])
    np.testing.assert_allclose(fd.jacrev(lambda x: cu.cumprod(x, axis=0, reverse=False))(x), jac,
                               atol=1e-15)


def test_argmax_argmin_take_the_first_occurrence_and_nan_wins():
    x = np.array([[1, 4, 4, 0], [2, 2, 2, 2]], dtype=np.int32)
    np.testing.assert_array_equal(rd.argmax(x, axis=1, index_dtype=I64), [1, 0])
    np.testing.assert_array_equal(rd.argmin(-x, axis=1, index_dtype=I64), [1, 0])
    y = np.array([1.0, np.nan, 3.0, np.nan])
    assert rd.argmax(y, axis=0, index_dtype=I64) == 1 == rd.argmin(y, axis=0, index_dtype=I64)


def test_sort_is_stable_and_puts_nan_last():
    x = np.array([3.0, np.nan, -1.0, 3.0, -np.inf, np.nan, 0.0, -0.0])
    _assert_same(so.sort(x), np.sort(x))
    _assert_same(so.argsort(x), np.argsort(x, kind="stable"))
    # Tangents follow the stable permutation, also across ties.
    t = np.arange(8.0)
    _, dy = fd.jvp(so.sort, (x,), (t,))
    np.testing.assert_array_equal(dy, t[np.argsort(x, kind="stable")])
    with np.errstate(invalid="ignore"):  # the primal sum meets inf * 0
        g = fd.grad(lambda x: rd.reduce_sum(elementwise.mul(so.sort(x), np.arange(8.0)), axes=(0,)))(x)
    np.testing.assert_array_equal(g, np.argsort(np.argsort(x, kind="stable")).astype(float))


def test_integer_outputs_carry_no_tangent():
    x = _distinct((4,), F64, np.random.default_rng(6))
    for f in (so.argsort, lambda x: rd.argmax(x, axis=0, index_dtype=I64)):
        out, t = fd.jvp(f, (x,), (np.ones(4),))
        assert np.asarray(out).dtype.kind == "i"
        assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == np.shape(out)


# --- errors ----------------------------------------------------------------------


Z = np.zeros


@pytest.mark.parametrize("fun, arg, error, words", [
    (lambda x: rd.reduce_max(x, axes=(1,)), Z((3, 0)), ShapeError, ["reduce_max", "empty"]),
    (lambda x: rd.argmin(x, axis=1, index_dtype=I64), Z((2, 0)), ShapeError, ["argmin", "empty"]),
    (lambda x: rd.reduce_sum(x, axes=(2,)), Z((2, 3)), AxisError, ["reduce_sum", "(2,)"]),
    (lambda x: rd.reduce_sum(x, axes=(0,)), Z(3, bool), DTypeError, ["reduce_sum", "bool"]),
    (lambda x: rd.reduce_prod(x, axes=(0,)), Z(3, bool), DTypeError, ["reduce_prod", "bool"]),
    (lambda x: rd.reduce_or(x, axes=(0,)), Z(3), DTypeError, ["reduce_or", "float64"]),
    (lambda x: rd.argmax(x, axis=0, index_dtype=F64), Z(3), DTypeError, ["argmax", "index_dtype"]),
    (lambda x: cu.cumsum(x, axis=1, reverse=False), Z(3), AxisError, ["cumsum", "axis=1"]),
    (lambda x: cu.cumsum(x, axis=0, reverse=False), Z(()), AxisError, ["cumsum", "0-d"]),
    (lambda x: cu.cumprod(x, axis=0, reverse=False), Z(3, bool), DTypeError, ["cumprod", "bool"]),
    (lambda x: so.sort(x), Z(()), AxisError, ["sort", "0-d"]),
    (lambda x: so.sort_together(x, Z(4), dimension=0), Z(3), ShapeError, ["sort", "shape"]),
    (lambda x: so.sort_together(x, dimension=0, num_keys=2), Z(3), InvalidArgumentError,
     ["num_keys"]),
])
def test_errors_name_the_operation_eagerly_and_when_staging(fun, arg, error, words):
    for run in (fun, fd.make_jaxpr(fun)):
        with pytest.raises(error) as info:
            run(arg)
        for w in words:
            assert w in str(info.value)


@pytest.mark.parametrize("fun, arg, error, word", [
    (lambda x: rd.reduce_min(x, axes=(1, 0)), Z((2, 3)), AxisError, "sorted"),
    (lambda x: rd.argmax(x, axis=-1, index_dtype=I64), Z(3), AxisError, "axis=-1"),
    (lambda x: cu.cummax(x, axis=0, reverse=1), Z(3), InvalidArgumentError, "reverse=1"),
])
def test_unnormalised_params_are_rejected_when_staging(fun, arg, error, word):
    # Eagerly numpy gives these the obvious meaning and nothing checks them (the
    # eager path skips validation unless numpy fails); a staged program must
    # hold normalised params, so staging rejects them.
    with pytest.raises(error, match=word):
        fd.make_jaxpr(fun)(arg)


# --- every card is complete ---------------------------------------------------------

CARDS = [rd.reduce_sum_p, rd.reduce_max_p, rd.reduce_min_p, rd.reduce_prod_p, rd.argmax_p,
         rd.argmin_p, rd.reduce_and_p, rd.reduce_or_p, cu.cumsum_p, cu.cumprod_p, cu.cummax_p,
         cu.cummin_p, so.sort_p]


@pytest.mark.parametrize("prim", CARDS, ids=lambda p: p.name)
def test_cards_are_complete(prim):
    for slot in ("impl", "abstract_eval", "batch", "cost"):
        assert getattr(prim, slot) is not None, slot
    assert prim.nondifferentiable or prim.jvp is not None
    assert not prim.linear or prim.transpose is not None
    case = next(c for c in CASES if c.name.startswith(prim.name))
    params = fd.make_jaxpr(case.fun)(*case.args).jaxpr.eqns
    eqn = next(e for e in params if e.primitive is prim)
    cost = prim.cost(*[get_aval(a) for a in case.args], **eqn.params)
    assert set(cost) == {"flops", "bytes"} and all(isinstance(v, int) for v in cost.values())
    assert cost["bytes"] > 0 or case.args[0].size == 0
