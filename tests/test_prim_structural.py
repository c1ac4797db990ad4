"""Tests of the structural primitives and dot_general, driven by one table.

Each row of CASES is one primitive with one setting of its params and the
kinds and shapes of its operands. The table drives: impl against an
independent numpy reference (float64, float32, int64, 0-d where meaningful),
abstract_eval against the impl's output, staged evaluation against eager,
derivatives to order 2 in both modes against finite differences, the adjoint
identity of every transpose rule, and vmap against a Python loop with batch
axes at several positions. Errors, op-level normalisation, costs and
dot_general's BLAS fast paths have their own tests below.
"""
import doctest
import itertools
from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.core import bind, get_aval
from funcdiff.errors import AxisError, DTypeError, FunctionalDiffError, ShapeError
from funcdiff.interpreters.transpose import UndefinedPrimal
from funcdiff.ir import check_jaxpr
from funcdiff.primitives import dot as D
from funcdiff.primitives import reductions as R
from funcdiff.primitives import slicing as SL
from funcdiff.primitives import structural as S
from funcdiff.test_util import check_grads


class F(NamedTuple):
    """A floating (or, in the int64 runs, integer) operand of this shape."""
    shape: tuple


class I(NamedTuple):
    """A 0-d integer start index (never differentiated)."""
    value: int


# --- independent numpy references ---------------------------------------------------


def ref_broadcast_in_dim(x, *, shape, broadcast_dimensions):
    y = x
    for axis in range(len(shape)):
        if axis not in broadcast_dimensions:
            y = np.expand_dims(y, axis)
    return np.broadcast_to(y, shape)


def ref_slice(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(*t) for t in zip(start_indices, limit_indices, strides))]


def ref_pad(x, pv, *, padding_config):
    shape = [lo + hi + n + max(n - 1, 0) * i for n, (lo, hi, i) in zip(x.shape, padding_config)]
    out = np.full(shape, pv, dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo + k * (i + 1) for k, (lo, _, i) in zip(idx, padding_config))
        if all(0 <= p < s for p, s in zip(pos, shape)):
            out[pos] = x[idx]
    return out


def _window(starts, shape, sizes):
    starts = [int(np.clip(s, 0, n - k)) for s, n, k in zip(starts, shape, sizes)]
    return tuple(slice(s, s + k) for s, k in zip(starts, sizes))


def ref_dynamic_slice(x, *starts, slice_sizes):
    return x[_window(starts, x.shape, slice_sizes)]


def ref_dynamic_update_slice(x, update, *starts):
    out = x.copy()
    out[_window(starts, x.shape, update.shape)] = update
    return out


def ref_dot_general(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xs = [next(letters) for _ in range(x.ndim)]
    ys = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(lc + lb, rc + rb):
        ys[j] = xs[i]
    out = ([xs[i] for i in lb] + [xs[i] for i in range(x.ndim) if i not in lc + lb]
           + [ys[j] for j in range(y.ndim) if j not in rc + rb])
    return np.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)


class Case(NamedTuple):
    id: str
    prim: Any
    params: dict
    args: tuple
    ref: Callable
    bilinear: bool = False  # else linear in all its F operands jointly


def _dn(lc, rc, lb=(), rb=()):
    return {"dimension_numbers": ((lc, rc), (lb, rb))}


CASES = [
    Case("broadcast_in_dim", S.broadcast_in_dim_p, {"shape": (2, 3), "broadcast_dimensions": (1,)},
         (F((3,)),), ref_broadcast_in_dim),
    Case("broadcast_in_dim-size1", S.broadcast_in_dim_p,
         {"shape": (4, 3), "broadcast_dimensions": (0, 1)}, (F((1, 3)),), ref_broadcast_in_dim),
    Case("broadcast_in_dim-0d", S.broadcast_in_dim_p, {"shape": (2, 2), "broadcast_dimensions": ()},
         (F(()),), ref_broadcast_in_dim),
    Case("reshape", S.reshape_p, {"new_sizes": (3, 4)}, (F((2, 6)),),
         lambda x, new_sizes: x.reshape(new_sizes)),
    Case("reshape-0d", S.reshape_p, {"new_sizes": (1, 1)}, (F(()),),
         lambda x, new_sizes: x.reshape(new_sizes)),
    Case("transpose", S.transpose_p, {"permutation": (2, 0, 1)}, (F((2, 3, 4)),),
         lambda x, permutation: x.transpose(permutation)),
    Case("squeeze", S.squeeze_p, {"dimensions": (0, 2)}, (F((1, 3, 1)),),
         lambda x, dimensions: np.squeeze(x, dimensions)),
    Case("squeeze-to-0d", S.squeeze_p, {"dimensions": (0,)}, (F((1,)),),
         lambda x, dimensions: np.squeeze(x, dimensions)),
    Case("squeeze-middle", S.squeeze_p, {"dimensions": (1,)}, (F((2, 1, 3)),),
         lambda x, dimensions: np.squeeze(x, dimensions)),
    Case("expand_dims", S.expand_dims_p, {"dimensions": (0, 3)}, (F((2, 3)),),
         lambda x, dimensions: np.expand_dims(x, dimensions)),
    Case("expand_dims-0d", S.expand_dims_p, {"dimensions": (0,)}, (F(()),),
         lambda x, dimensions: np.expand_dims(x, dimensions)),
    Case("expand_dims-middle", S.expand_dims_p, {"dimensions": (1, 2)}, (F((2, 3)),),
         lambda x, dimensions: np.expand_dims(x, dimensions)),
    Case("rev", S.rev_p, {"dimensions": (0, 2)}, (F((2, 3, 4)),),
         lambda x, dimensions: np.flip(x, dimensions)),
    Case("rev-1d", S.rev_p, {"dimensions": (0,)}, (F((5,)),),
         lambda x, dimensions: np.flip(x, dimensions)),
    Case("rev-none", S.rev_p, {"dimensions": ()}, (F((2, 3)),), lambda x, dimensions: x),
    Case("concatenate-3", S.concatenate_p, {"dimension": 0}, (F((2, 3)), F((1, 3)), F((4, 3))),
         lambda *xs, dimension: np.concatenate(xs, dimension)),
    Case("concatenate-axis1", S.concatenate_p, {"dimension": 1}, (F((2, 1)), F((2, 3))),
         lambda *xs, dimension: np.concatenate(xs, dimension)),
    Case("concatenate-1", S.concatenate_p, {"dimension": 0}, (F((2, 2)),),
         lambda *xs, dimension: np.concatenate(xs, dimension)),
    Case("slice", SL.slice_p, {"start_indices": (1, 0), "limit_indices": (5, 5), "strides": None},
         (F((6, 5)),), ref_slice),
    Case("slice-strided", SL.slice_p,
         {"start_indices": (1, 0), "limit_indices": (6, 5), "strides": (2, 3)}, (F((6, 5)),),
         ref_slice),
    Case("slice-stride-1d", SL.slice_p, {"start_indices": (1,), "limit_indices": (7,),
                                        "strides": (3,)}, (F((7,)),), ref_slice),
    Case("slice-empty", SL.slice_p, {"start_indices": (2,), "limit_indices": (2,), "strides": None},
         (F((4,)),), ref_slice),
    Case("pad", SL.pad_p, {"padding_config": ((1, 2, 0),)}, (F((3,)), F(())), ref_pad),
    Case("pad-interior", SL.pad_p, {"padding_config": ((1, -1, 1), (0, 2, 2))},
         (F((3, 4)), F(())), ref_pad),
    Case("pad-crop-interior", SL.pad_p, {"padding_config": ((-2, 1, 2),)}, (F((3,)), F(())),
         ref_pad),
    Case("pad-crop", SL.pad_p, {"padding_config": ((-1, -1, 0), (2, -3, 1))},
         (F((2, 3)), F(())), ref_pad),
    Case("pad-0d", SL.pad_p, {"padding_config": ()}, (F(()), F(())), ref_pad),
    Case("dynamic_slice", SL.dynamic_slice_p, {"slice_sizes": (2, 2)}, (F((5, 4)), I(1), I(2)),
         ref_dynamic_slice),
    Case("dynamic_slice-clamp-high", SL.dynamic_slice_p, {"slice_sizes": (3,)}, (F((5,)), I(4)),
         ref_dynamic_slice),
    Case("dynamic_slice-clamp-low", SL.dynamic_slice_p, {"slice_sizes": (2, 4)},
         (F((3, 4)), I(-2), I(1)), ref_dynamic_slice),
    Case("dynamic_slice-whole", SL.dynamic_slice_p, {"slice_sizes": (3, 4)},
         (F((3, 4)), I(0), I(0)), ref_dynamic_slice),
    Case("dynamic_update_slice", SL.dynamic_update_slice_p, {}, (F((5, 4)), F((2, 3)), I(1), I(3)),
         ref_dynamic_update_slice),
    Case("dynamic_update_slice-whole", SL.dynamic_update_slice_p, {}, (F((4,)), F((4,)), I(0)),
         ref_dynamic_update_slice),
    Case("dynamic_update_slice-clamp-low", SL.dynamic_update_slice_p, {},
         (F((5,)), F((2,)), I(-1)), ref_dynamic_update_slice),
    Case("matmul", D.dot_general_p, _dn((1,), (0,)), (F((3, 4)), F((4, 5))), ref_dot_general, True),
    Case("matmul-Tx", D.dot_general_p, _dn((0,), (0,)), (F((4, 3)), F((4, 5))), ref_dot_general,
         True),
    Case("matmul-Ty", D.dot_general_p, _dn((1,), (1,)), (F((3, 4)), F((5, 4))), ref_dot_general,
         True),
    Case("matmul-TxTy", D.dot_general_p, _dn((0,), (1,)), (F((4, 3)), F((5, 4))),
         ref_dot_general, True),
    Case("vecvec", D.dot_general_p, _dn((0,), (0,)), (F((4,)), F((4,))), ref_dot_general, True),
    Case("matvec", D.dot_general_p, _dn((1,), (0,)), (F((3, 4)), F((4,))), ref_dot_general, True),
    Case("vecmat", D.dot_general_p, _dn((0,), (0,)), (F((4,)), F((4, 5))), ref_dot_general, True),
    Case("outer", D.dot_general_p, _dn((), ()), (F((3,)), F((2,))), ref_dot_general, True),
    Case("scalar-outer", D.dot_general_p, _dn((), ()), (F(()), F((2,))), ref_dot_general, True),
    Case("batched-matmul", D.dot_general_p, _dn((2,), (1,), (0,), (0,)),
         (F((2, 3, 4)), F((2, 4, 5))), ref_dot_general, True),
    Case("batched-odd-layout", D.dot_general_p, _dn((2,), (0,), (1,), (2,)),
         (F((3, 2, 4)), F((4, 5, 2))), ref_dot_general, True),
    Case("batched-no-free", D.dot_general_p, _dn((1,), (1,), (0,), (0,)),
         (F((3, 4)), F((3, 4))), ref_dot_general, True),
    Case("two-contracting", D.dot_general_p, _dn((1, 2), (1, 0)), (F((2, 3, 4)), F((4, 3, 5))),
         ref_dot_general, True),
    Case("two-contracting-unsorted", D.dot_general_p, _dn((2, 1), (0, 1)),
         (F((2, 3, 4)), F((4, 3, 5))), ref_dot_general, True),
    Case("full-contraction", D.dot_general_p, _dn((0, 1), (0, 1)), (F((3, 4)), F((3, 4))),
         ref_dot_general, True),
    Case("tensor-matrix", D.dot_general_p, _dn((2,), (0,)), (F((2, 3, 4)), F((4, 5))),
         ref_dot_general, True),
]

DTYPES = [np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)]


def make_arg(spec, dtype, rng):
    if isinstance(spec, I):
        return np.int64(spec.value)
    if dtype.kind == "f":
        return np.asarray(rng.standard_normal(spec.shape), dtype=dtype)
    return np.asarray(rng.integers(-9, 10, size=spec.shape), dtype=dtype)


def make_args(case, dtype=np.dtype(np.float64), seed=0):
    rng = np.random.default_rng(seed)
    return [make_arg(spec, dtype, rng) for spec in case.args]


def apply(case):
    return lambda *args: bind(case.prim, *args, **case.params)


def float_positions(case):
    return [i for i, spec in enumerate(case.args) if isinstance(spec, F)]


def with_floats(case, args):
    """``case``'s primitive as a function of its float operands only (indices fixed)."""
    positions = float_positions(case)

    def f(*floats):
        full_args = list(args)
        for i, v in zip(positions, floats):
            full_args[i] = v
        return bind(case.prim, *full_args, **case.params)
    return f, [args[i] for i in positions]


def vdot(a, b):
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


ids = [c.id for c in CASES]


# --- impl, abstract_eval, staging ------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_impl_matches_numpy(case, dtype):
    args = make_args(case, dtype)
    out = apply(case)(*args)
    expected = case.ref(*args, **case.params)
    assert np.asarray(out).dtype == dtype
    assert np.shape(out) == np.shape(expected)
    if dtype.kind == "f" and case.bilinear:  # summation order may differ from einsum's
        tol = 1e-5 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_abstract_eval_and_staging_match_impl(case, dtype):
    args = make_args(case, dtype)
    out = apply(case)(*args)
    aval = case.prim.abstract_eval(*[get_aval(a) for a in args], **case.params)
    assert aval == get_aval(out)
    closed = fd.make_jaxpr(apply(case))(*args)
    check_jaxpr(closed.jaxpr)
    (params,) = [e.params for e in closed.eqns]
    hash(tuple(params.items()))  # params are hashable
    for v in _param_leaves(params):
        assert v is None or type(v) is int, params
    (staged,) = closed(*args)
    np.testing.assert_array_equal(staged, out)


def _param_leaves(params):
    stack = list(params.values())
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(v)
        else:
            yield v


# --- derivatives --------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_grads_order2_both_modes(case):
    f, floats = with_floats(case, make_args(case, seed=1))
    check_grads(f, floats, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_float32_derivatives_stay_float32(case):
    f, floats = with_floats(case, make_args(case, np.dtype(np.float32), seed=1))
    out, tangent = fd.jvp(f, tuple(floats), tuple(np.ones_like(a) for a in floats))
    assert np.asarray(out).dtype == np.asarray(tangent).dtype == np.float32
    out, pullback = fd.vjp(f, *floats)
    cts = pullback(np.ones_like(out))
    assert [np.asarray(c).dtype for c in cts] == [np.dtype(np.float32)] * len(floats)
    check_grads(f, floats, order=1, modes=("fwd", "rev"))


def _transpose_subsets(case):
    positions = float_positions(case)
    singles = [[i] for i in positions]
    return singles if case.bilinear or len(positions) == 1 else [positions] + singles


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_transpose_is_adjoint(case):
    """<ct, L t> == <L^T ct, t> for the operands the rule transposes."""
    rng = np.random.default_rng(2)
    args = make_args(case, seed=3)
    for subset in _transpose_subsets(case):
        t = {i: np.asarray(rng.standard_normal(np.shape(args[i]))) for i in subset}
        forward = [t[i] if i in subset else
                   (np.zeros_like(a) if not case.bilinear and isinstance(case.args[i], F) else a)
                   for i, a in enumerate(args)]
        out = apply(case)(*forward)
        ct = np.asarray(rng.standard_normal(np.shape(out)))
        rule_args = [UndefinedPrimal(get_aval(a)) if i in subset else a for i, a in enumerate(args)]
        cts = case.prim.transpose(ct, *rule_args, **case.params)
        assert len(cts) == len(args)
        for i, c in enumerate(cts):
            if i in subset:
                assert get_aval(c) == get_aval(args[i]), (subset, i)
            else:
                assert c is None, (subset, i)
        lhs = vdot(ct, out)
        rhs = sum(vdot(cts[i], t[i]) for i in subset)
        assert np.isclose(lhs, rhs, rtol=1e-10, atol=1e-10), (subset, lhs, rhs)


def test_integer_index_arguments_get_no_tangent():
    x = np.arange(6.0)
    f = lambda x, i: R.reduce_sum(SL.dynamic_slice(x, i, slice_sizes=(2,)), axes=(0,))
    np.testing.assert_array_equal(fd.grad(f)(x, np.int64(3)), [0, 0, 0, 1, 1, 0])
    g = lambda x, u, i: R.reduce_sum(SL.dynamic_update_slice(x, u, i), axes=(0,))
    gx, gu = fd.grad(g, argnums=(0, 1))(x, np.ones(2), np.int64(9))  # clamped to start 4
    np.testing.assert_array_equal(gx, [1, 1, 1, 1, 0, 0])
    np.testing.assert_array_equal(gu, [1, 1])


# --- vmap ---------------------------------------------------------------------------

B = 3


def _batch_configs(case):
    """in_axes tuples: all at 0, all last, and each operand alone at a middle axis."""
    ranks = [len(s.shape) if isinstance(s, F) else 0 for s in case.args]
    configs = [tuple(0 for _ in ranks), tuple(ranks)]
    for i, r in enumerate(ranks):
        configs.append(tuple((r + 1) // 2 if j == i else None for j in range(len(ranks))))
    return list(dict.fromkeys(configs))


def _batched_arg(spec, axis, rng):
    if axis is None:
        return make_arg(spec, np.dtype(np.float64), rng)
    if isinstance(spec, I):  # differing starts, some clamped
        return np.array([spec.value, spec.value + 1, spec.value - 3], dtype=np.int64)
    shape = list(spec.shape)
    shape.insert(axis, B)
    return rng.standard_normal(shape)


VMAP_CASES = [(c, cfg) for c in CASES for cfg in _batch_configs(c)]


@pytest.mark.parametrize("case,in_axes", VMAP_CASES,
                         ids=[f"{c.id}-{cfg}" for c, cfg in VMAP_CASES])
def test_vmap_matches_loop(case, in_axes):
    rng = np.random.default_rng(4)
    args = [_batched_arg(s, ax, rng) for s, ax in zip(case.args, in_axes)]
    out = fd.vmap(apply(case), in_axes=in_axes)(*args)
    expected = np.stack([
        apply(case)(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)])
        for b in range(B)])
    assert np.shape(out) == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_vmap_out_axes_and_staging_with_batched_indices():
    x = np.arange(20.0).reshape(4, 5)
    starts = np.array([0, 3, 7])
    f = lambda x, i: SL.dynamic_slice(x, np.int64(1), i, slice_sizes=(2, 2))
    out = fd.vmap(f, in_axes=(None, 0), out_axes=2)(x, starts)
    expected = np.stack([x[1:3, min(s, 3):min(s, 3) + 2] for s in starts], axis=2)
    np.testing.assert_array_equal(out, expected)
    staged = fd.make_jaxpr(fd.vmap(f, in_axes=(None, 0)))(x, starts)
    check_jaxpr(staged.jaxpr)
    np.testing.assert_array_equal(staged(x, starts)[0], np.moveaxis(expected, 2, 0))


@pytest.mark.parametrize("in_axes", [(1, None, 0), (None, 0, None), (2, 0, 0), (0, None, None)])
def test_vmap_dynamic_slice_mixed_batching(in_axes):
    """Some starts batched and some not, with mixed integer dtypes, x at any axis."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 5))
    xb = x if in_axes[0] is None else np.stack([x * (b + 1) for b in range(B)], axis=in_axes[0])
    i = np.int32(1) if in_axes[1] is None else np.array([0, 3, 9], dtype=np.int32)
    j = np.uint8(2) if in_axes[2] is None else np.array([7, 0, 2], dtype=np.uint8)
    f = lambda x, i, j: SL.dynamic_slice(x, i, j, slice_sizes=(2, 3))
    out = fd.vmap(f, in_axes=in_axes)(xb, i, j)
    take = lambda a, b, ax: a if ax is None else np.take(a, b, axis=ax)
    expected = np.stack([ref_dynamic_slice(*[take(a, b, ax) for a, ax in zip((xb, i, j), in_axes)],
                                           slice_sizes=(2, 3)) for b in range(B)])
    np.testing.assert_array_equal(out, expected)
    g = lambda x, u, i, j: SL.dynamic_update_slice(x, u, i, j)
    u = rng.standard_normal((B, 2, 3))
    out = fd.vmap(g, in_axes=(in_axes[0], 0, in_axes[1], in_axes[2]))(xb, u, i, j)
    expected = np.stack([ref_dynamic_update_slice(
        take(xb, b, in_axes[0]), u[b], take(i, b, in_axes[1]), take(j, b, in_axes[2]))
        for b in range(B)])
    np.testing.assert_array_equal(out, expected)


def test_nested_vmap_with_batched_starts():
    x = np.arange(24.0).reshape(4, 6)
    starts = np.array([[0, 2, 5], [-1, 1, 3]])
    f = lambda x, s: SL.dynamic_slice(x, s, s, slice_sizes=(2, 2))
    out = fd.vmap(fd.vmap(f, in_axes=(None, 0)), in_axes=(None, 0))(x, starts)
    for a, b in itertools.product(range(2), range(3)):
        s = starts[a, b]
        np.testing.assert_array_equal(out[a, b], ref_dynamic_slice(x, s, s, slice_sizes=(2, 2)))
    g = lambda x, s: SL.dynamic_update_slice(x, -np.ones((2, 2)), s, s)
    out = fd.vmap(fd.vmap(g, in_axes=(None, 0)), in_axes=(None, 0))(x, starts)
    for a, b in itertools.product(range(2), range(3)):
        s = starts[a, b]
        expected = ref_dynamic_update_slice(x, -np.ones((2, 2)), s, s)
        np.testing.assert_array_equal(out[a, b], expected)


def test_vmap_of_grad_with_batched_indices():
    """Batched transposes: dynamic_update_slice and dynamic_slice with batched starts."""
    rng = np.random.default_rng(5)
    xs, ws, us = rng.standard_normal((3, 6)), rng.standard_normal(2), rng.standard_normal((3, 2))
    starts = np.array([1, 5, -2])

    def loss(x, u, i):
        y = SL.dynamic_update_slice(x, u, i)
        z = SL.dynamic_slice(y, i, slice_sizes=(2,))
        return R.reduce_sum(D.dot_general(z, ws, dimension_numbers=(((0,), (0,)), ((), ()))),
                            axes=())
    grads = fd.vmap(fd.grad(loss, argnums=(0, 1)))(xs, us, starts)
    for b in range(3):
        gx, gu = fd.grad(loss, argnums=(0, 1))(xs[b], us[b], starts[b])
        np.testing.assert_allclose(grads[0][b], gx)
        np.testing.assert_allclose(grads[1][b], gu)
    np.testing.assert_array_equal(grads[0], 0.0)  # the slice reads only the update


def test_vmap_pad_with_batched_padding_value():
    x = np.arange(6.0).reshape(2, 3)
    values = np.array([-1.0, 5.0, 7.0])
    config = ((1, 0, 1), (0, -1, 0))
    for in_axes, xb in (((None, 0), x), ((0, 0), np.stack([x, x + 1, x + 2]))):
        out = fd.vmap(lambda x, v: SL.pad(x, v, padding_config=config), in_axes=in_axes)(xb, values)
        for b in range(3):
            xm = xb if in_axes[0] is None else xb[b]
            np.testing.assert_array_equal(out[b], ref_pad(xm, values[b], padding_config=config))


# --- operations: normalisation and docstrings ------------------------------------------


def _params(f, *args):
    (eqn,) = fd.make_jaxpr(f)(*args).eqns
    return eqn.params


def test_ops_normalise_settings():
    x = np.zeros((1, 2, 1))
    assert _params(lambda x: S.squeeze(x, dimensions=-1), x) == {"dimensions": (2,)}
    assert _params(lambda x: S.expand_dims(x, dimensions=(-1, 0)), x) == {"dimensions": (0, 4)}
    assert _params(lambda x: S.rev(x, dimensions=[np.int64(-2)]), x) == {"dimensions": (1,)}
    assert _params(lambda x: S.concatenate(x, x, dimension=-1), x) == {"dimension": 2}
    assert _params(lambda x: SL.slice(x, start_indices=[0, 0, 0], limit_indices=(1, 2, 1),
                                     strides=(1, 1, 1)), x)["strides"] is None
    p = _params(lambda x: D.dot_general(x, x, dimension_numbers=[[[1], [1]], [[0], [0]]]), x)
    assert p == {"dimension_numbers": (((1,), (1,)), ((0,), (0,)))}
    out = SL.pad(np.arange(3, dtype=np.float32), 1, padding_config=[(1, 1, 0)])
    assert out.dtype == np.float32 and out.tolist() == [1, 0, 1, 2, 1]


def test_dot_matches_numpy_dot():
    rng = np.random.default_rng(6)
    for xs, ys in [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
                   ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 6)), ((), (3,))]:
        x, y = rng.standard_normal(xs), rng.standard_normal(ys)
        np.testing.assert_allclose(D.dot(x, y), np.dot(x, y), rtol=1e-12)
    check_grads(D.dot, (rng.standard_normal((3, 4)), rng.standard_normal(4)), order=2)


@pytest.mark.parametrize("module", [S, SL, D], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- errors -------------------------------------------------------------------------

x23 = np.zeros((2, 3))


def _dot_with(dimension_numbers):
    return lambda x, y: D.dot_general(x, y, dimension_numbers=dimension_numbers)


ERRORS = [
    ("squeeze-size", lambda x: S.squeeze(x, dimensions=(0,)), (x23,), ShapeError,
     ["squeeze", "f64[2,3]"]),
    ("squeeze-axis", lambda x: S.squeeze(x, dimensions=(2,)), (x23,), AxisError, ["squeeze", "2"]),
    ("expand_dims-repeat", lambda x: S.expand_dims(x, dimensions=(0, -4)), (x23,), AxisError,
     ["expand_dims"]),
    ("rev-axis", lambda x: S.rev(x, dimensions=(5,)), (x23,), AxisError, ["rev"]),
    ("concatenate-shapes", lambda x, y: S.concatenate(x, y, dimension=0),
     (x23, np.zeros((2, 4))), ShapeError, ["concatenate", "(2, 3)", "(2, 4)"]),
    ("concatenate-rank", lambda x, y: S.concatenate(x, y, dimension=0),
     (x23, np.zeros((2, 3, 1))), ShapeError, ["concatenate", "(2, 3, 1)"]),
    ("concatenate-0d", lambda x: S.concatenate(x, x, dimension=0), (np.float64(1.0),), AxisError,
     ["concatenate"]),
    ("slice-bounds", lambda x: SL.slice(x, start_indices=(0, 1), limit_indices=(2, 4)), (x23,),
     ShapeError, ["slice", "f64[2,3]", "(2, 4)"]),
    ("slice-rank", lambda x: SL.slice(x, start_indices=(0,), limit_indices=(2,)), (x23,),
     ShapeError, ["slice", "start_indices"]),
    ("pad-negative", lambda x: SL.pad(x, 0.0, padding_config=((0, 0, 0), (-2, -2, 0))), (x23,),
     ShapeError, ["pad", "f64[2,3]"]),
    ("pad-value-shape", lambda x: SL.pad(x, np.zeros(2), padding_config=((0, 0, 0),) * 2), (x23,),
     ShapeError, ["pad", "0-d"]),
    ("pad-interior", lambda x: SL.pad(x, 0.0, padding_config=((0, 0, -1),) * 2), (x23,),
     ShapeError, ["pad", "interior"]),
    ("dynamic_slice-size", lambda x: SL.dynamic_slice(x, 0, 0, slice_sizes=(3, 1)), (x23,),
     ShapeError, ["dynamic_slice", "(3, 1)"]),
    ("dynamic_slice-count", lambda x: SL.dynamic_slice(x, 0, slice_sizes=(1, 1)), (x23,),
     ShapeError, ["dynamic_slice", "start index"]),
    ("dynamic_slice-float", lambda x: SL.dynamic_slice(x, 0, 1.0, slice_sizes=(1, 1)), (x23,),
     DTypeError, ["dynamic_slice", "integer"]),
    ("dynamic_update_slice-big", lambda x, u: SL.dynamic_update_slice(x, u, 0, 0),
     (x23, np.zeros((3, 1))), ShapeError, ["dynamic_update_slice", "f64[2,3]", "f64[3,1]"]),
    ("dot_general-contract", _dot_with((((1,), (0,)), ((), ()))),
     (x23, np.zeros((4, 5))), ShapeError, ["dot_general", "f64[2,3]", "f64[4,5]"]),
    ("dot_general-batch", _dot_with((((2,), (1,)), ((0,), (0,)))),
     (np.zeros((1, 2, 3)), np.zeros((4, 3, 2))), ShapeError, ["dot_general", "batch"]),
    ("dot_general-axis", _dot_with((((2,), (0,)), ((), ()))),
     (x23, np.zeros((3, 5))), AxisError, ["dot_general", "left"]),
    ("dot_general-count", _dot_with((((1,), ()), ((), ()))),
     (x23, np.zeros((3, 5))), ShapeError, ["dot_general", "number"]),
    ("dot_general-malformed", lambda x, y: D.dot_general(x, y, dimension_numbers=((1,), (0,))),
     (x23, np.zeros((3, 5))), ShapeError, ["dimension_numbers"]),
]


@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
@pytest.mark.parametrize("name,f,args,exc,words", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_raises_funcdiff_error(name, f, args, exc, words, staged):
    with pytest.raises(exc) as info:
        fd.make_jaxpr(f)(*args) if staged else f(*args)
    assert isinstance(info.value, FunctionalDiffError)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


@pytest.mark.parametrize("f,args", [
    (lambda x, y: D.dot_general(x, y, dimension_numbers=(((1,), (0,)), ((), ()))),
     (x23, np.zeros((3, 2), np.float32))),
    (lambda x, y: S.concatenate(x, y, dimension=0), (x23, np.zeros((2, 3), np.int64))),
    (lambda x, y: SL.dynamic_update_slice(x, y, 0, 0), (x23, np.zeros((1, 1), np.float32))),
    (lambda x: SL.pad(x, np.float32(0), padding_config=((0, 0, 0),) * 2), (x23,)),
], ids=["dot_general", "concatenate", "dynamic_update_slice", "pad"])
def test_mixed_dtypes_rejected_when_staged(f, args):
    with pytest.raises(DTypeError, match="one dtype"):
        fd.make_jaxpr(f)(*args)


# --- costs and speed ------------------------------------------------------------------


def test_costs():
    f64 = lambda *shape: get_aval(np.zeros(shape))
    cost = D.dot_general_p.cost(f64(7, 2, 3, 4), f64(7, 4, 5),
                                dimension_numbers=(((3,), (1,)), ((0,), (0,))))
    assert cost["flops"] == 2 * 7 * (2 * 3) * 5 * 4
    assert cost["bytes"] == 8 * (7 * 2 * 3 * 4 + 7 * 4 * 5 + 7 * 2 * 3 * 5)
    cost = SL.slice_p.cost(f64(10, 10), start_indices=(0, 0), limit_indices=(10, 10), strides=(5, 2))
    assert cost == {"flops": 0, "bytes": 2 * 8 * 2 * 5}
    assert SL.dynamic_slice_p.cost(f64(10), f64(), slice_sizes=(3,))["bytes"] == 2 * 8 * 3
    for case in CASES:
        avals = [get_aval(a) for a in make_args(case)]
        c = case.prim.cost(*avals, **case.params)
        assert set(c) == {"flops", "bytes"} and all(type(v) is int and v >= 0 for v in c.values())


def test_rule_slots_filled():
    prims = {c.prim for c in CASES}
    assert {p.name for p in prims} >= {
        "squeeze", "expand_dims", "rev", "concatenate", "slice", "pad", "dynamic_slice",
        "dynamic_update_slice", "dot_general"}
    for p in prims:
        for slot in ("impl", "abstract_eval", "jvp", "transpose", "batch", "cost"):
            assert getattr(p, slot) is not None, (p, slot)


@pytest.mark.parametrize("contract", [((1,), (0,)), ((0,), (0,)), ((1,), (1,)), ((0,), (1,))])
def test_large_matmul_runs_on_blas(contract):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((400, 400)), rng.standard_normal((400, 400))
    xs = x if contract[0] == (1,) else x.T.copy()
    ys = y if contract[1] == (0,) else y.T.copy()
    numbers = (contract, ((), ()))
    # The same BLAS gemm gives bitwise numpy's result; a summation loop does not.
    np.testing.assert_array_equal(D.dot_general(xs, ys, dimension_numbers=numbers), x @ y)


def test_batched_matmul_runs_on_blas():
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((8, 128, 128)), rng.standard_normal((8, 128, 128))
    numbers = (((2,), (1,)), ((0,), (0,)))
    np.testing.assert_array_equal(D.dot_general(x, y, dimension_numbers=numbers), x @ y)
