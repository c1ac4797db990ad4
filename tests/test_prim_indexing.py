"""Tests of the indexing primitives: gather, the scatters and take_along_axis.

Tables of cases drive every check: impl against numpy, abstract_eval against
impl, staged and jitted evaluation against eager, derivatives against central
finite differences to order 2 in both modes, the adjoint identity of the linear
maps, and vmap against a Python loop for every combination of batched arguments
and batch-axis positions.
"""
import doctest
import itertools

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.core import ShapedArray, Zero, get_aval
from funcdiff.errors import AxisError, DTypeError, FunctionalDiffError, ShapeError
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.ir import check_jaxpr
from funcdiff.primitives import elementwise as el
from funcdiff.primitives import indexing as ix
from funcdiff.primitives import reductions
from funcdiff.primitives.indexing import (IndexOutOfBoundsError, gather, scatter, scatter_add,
                                          scatter_max, scatter_min, scatter_mul)
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_data():
    """Each test draws the same data whichever tests ran before it (a subset chosen
    with -k would otherwise give scatter_max a near-tie, where its second
    derivative has a kink the finite differences straddle)."""
    global RNG
    RNG = np.random.default_rng(0)

# (operand shape, axis, indices): indices include repeats, scalars, empty and 2-D.
CASES = [
    ((5,), 0, [3, 0, 3, 4]),
    ((4, 3), 0, [[1, 2], [0, 3]]),
    ((4, 3), 1, [2, 2, 0]),
    ((2, 3, 4), 1, 2),
    ((2, 3, 4), 2, [[0, 3], [1, 1], [3, 2]]),
    ((3, 2), 0, np.zeros((0,), np.int64)),
]
CASE_IDS = [f"{s}-ax{a}-idx{np.shape(i)}" for s, a, i in CASES]
DTYPES = [np.float64, np.float32, np.int64]
INDEX_DTYPES = [np.int64, np.int32, np.uint8]


def _data(shape, dtype=np.float64):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-9, 10, shape).astype(dtype)


def _updates_shape(shape, axis, idx):
    return shape[:axis] + np.shape(idx) + shape[axis + 1:]


def _ref_scatter_add(op, idx, upd, axis):
    out = op.copy()
    np.add.at(out, (slice(None),) * axis + (idx,), upd)
    return out


def _ref_scatter(op, idx, upd, axis):
    out = op.copy()
    out[(slice(None),) * axis + (idx,)] = upd
    return out


def _ref_ufunc_at(ufunc):
    def ref(op, idx, upd, axis):
        out = op.copy()
        ufunc.at(out, (slice(None),) * axis + (idx,), upd)
        return out
    return ref


SCATTERS = [(scatter_add, _ref_scatter_add), (scatter, _ref_scatter),
            (scatter_mul, _ref_ufunc_at(np.multiply)), (scatter_min, _ref_ufunc_at(np.minimum)),
            (scatter_max, _ref_ufunc_at(np.maximum))]
SCATTER_OPS = [op for op, _ in SCATTERS]
SCATTER_IDS = [op.__name__ for op in SCATTER_OPS]


def _sum(x):
    return reductions.reduce_sum(x, axes=tuple(range(get_aval(x).ndim)))


# --- impl vs numpy, abstract_eval vs impl, staged vs eager --------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
def test_gather_impl_matches_numpy(shape, axis, idx, dtype, index_dtype):
    x, idx = _data(shape, dtype), np.asarray(idx, index_dtype)
    out = gather(x, idx, axis=axis)
    expected = np.take(x, idx, axis=axis)
    np.testing.assert_array_equal(out, expected)
    assert np.asarray(out).dtype == np.dtype(dtype)
    assert ix.gather_p.abstract_eval(get_aval(x), get_aval(idx), axis=axis) == get_aval(np.asarray(out))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("op,ref", SCATTERS, ids=SCATTER_IDS)
def test_scatter_impl_matches_numpy(op, ref, shape, axis, idx, dtype):
    operand, idx = _data(shape, dtype), np.asarray(idx)
    updates = _data(_updates_shape(shape, axis, idx), dtype)
    before = operand.copy()
    out = op(operand, idx, updates, axis=axis)
    np.testing.assert_array_equal(out, ref(operand, idx, updates, axis))
    np.testing.assert_array_equal(operand, before)  # the operand is not modified
    prim = getattr(ix, op.__name__ + "_p")
    assert prim.abstract_eval(get_aval(operand), get_aval(idx), get_aval(updates),
                              axis=axis) == get_aval(out)


def test_scatter_last_write_wins_and_add_accumulates():
    idx = np.array([1, 3, 1])
    upd = np.array([10., 20., 30.])
    np.testing.assert_array_equal(scatter(np.zeros(4), idx, upd, axis=0), [0, 30, 0, 20])
    np.testing.assert_array_equal(scatter_add(np.ones(4), idx, upd, axis=0), [1, 41, 1, 21])


@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
def test_staged_program_matches_eager(shape, axis, idx):
    x, idx = _data(shape), np.asarray(idx)
    upd = _data(_updates_shape(shape, axis, idx))

    def f(x, idx, upd):
        g = gather(x, idx, axis=axis)
        return [g, scatter_add(x, idx, upd, axis=axis), scatter(x, idx, upd, axis=axis)]
    closed = trace_to_jaxpr(f, [get_aval(x), get_aval(idx), get_aval(upd)])
    check_jaxpr(closed.jaxpr)
    assert "gather[axis=" in str(closed) and "scatter_add[axis=" in str(closed)
    for staged, eager in zip(closed(x, idx, upd), f(x, idx, upd)):
        np.testing.assert_array_equal(staged, eager)


@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
def test_jit_matches_eager(shape, axis, idx):
    x, idx = _data(shape), np.asarray(idx)
    upd = _data(_updates_shape(shape, axis, idx))

    def f(x, idx, upd):
        first = np.zeros((1,) * len(shape), np.int64)
        return [gather(x, idx, axis=axis), ix.take_along_axis(x, first, axis)] + [
            op(x, idx, upd, axis=axis) for op in SCATTER_OPS]

    def loss(x, upd, idx):
        return _sum(el.sin(scatter(el.mul(x, x), idx, el.sin(upd), axis=axis)))
    for jitted, eager in zip(fd.jit(f)(x, idx, upd), f(x, idx, upd)):
        np.testing.assert_array_equal(jitted, eager)
    grad = fd.grad(loss, argnums=(0, 1))
    for jitted, eager in zip(fd.jit(grad)(x, upd, idx), grad(x, upd, idx)):
        np.testing.assert_allclose(jitted, eager, rtol=1e-13)


def test_cost_rules():
    x, idx = ShapedArray((4, 3), np.dtype(np.float64)), ShapedArray((5,), np.dtype(np.int64))
    upd = ShapedArray((5, 3), np.dtype(np.float64))
    assert ix.gather_p.cost(x, idx, axis=0) == {"flops": 0, "bytes": 2 * 15 * 8 + 5 * 8}
    cost = ix.scatter_add_p.cost(x, idx, upd, axis=0)
    assert cost["flops"] == 15 and cost["bytes"] > 2 * 12 * 8
    assert ix.scatter_p.cost(x, idx, upd, axis=0)["flops"] == 0


def test_docstring_examples_run():
    for obj in (ix.gather, ix.take_along_axis, *SCATTER_OPS):
        finder = doctest.DocTestFinder(recurse=False)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        for test in finder.find(obj, obj.__name__, globs={"np": np, **vars(ix)}):
            assert test.examples, obj.__name__
            runner.run(test)
        assert runner.failures == 0, obj.__name__


# --- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [4, 9, -1], ids=["next member", "two members on", "negative"])
@pytest.mark.parametrize("name", ["gather", "scatter_add", "scatter"])
def test_vmap_with_batched_indices_reports_an_out_of_range_index(name, bad):
    """Folding the batch into the indexed axis must not let an index outside its
    own member's block reach a neighbour's values: it raises, eagerly and under jit."""
    x = np.arange(12.0).reshape(3, 4)
    indices = np.array([[0, 1], [2, bad], [3, 0]])
    ops = {"gather": lambda x, i: gather(x, i, axis=0),
           "scatter_add": lambda x, i: scatter_add(x, i, np.ones(2), axis=0),
           "scatter": lambda x, i: scatter(x, i, np.ones(2), axis=0)}
    batched = fd.vmap(ops[name])
    for run in (batched, fd.jit(batched)):
        with pytest.raises(IndexOutOfBoundsError, match=f"{name} got index"):
            run(x, indices)
    good = np.array([[0, 1], [2, 3], [3, 0]])
    np.testing.assert_array_equal(batched(x, good),
                                  np.stack([ops[name](x[b], good[b]) for b in range(3)]))


_X, _I = np.arange(6.).reshape(2, 3), np.array([0, 2])

ERRORS = [
    ("out of range", lambda: gather(_X, np.array([0, 3]), axis=1), IndexOutOfBoundsError, "index 3"),
    ("negative", lambda: gather(_X, np.array([-1]), axis=1), IndexOutOfBoundsError, r"\[0, 3\)"),
    ("unsigned out of range", lambda: gather(_X, np.array([7], np.uint8), axis=1),
     IndexOutOfBoundsError, "index 7"),
    ("scatter_max out of range", lambda: scatter_max(_X, np.array([2, 3]), np.ones((2, 2)), axis=1),
     IndexOutOfBoundsError, "scatter_max got index 3"),
    ("float indices", lambda: gather(_X, np.array([0.0]), axis=1), DTypeError, "integer indices"),
    ("bool indices", lambda: gather(_X, np.array([True]), axis=1), DTypeError, "integer indices"),
    ("bad axis", lambda: gather(_X, _I, axis=2), AxisError, "axis=2"),
    ("0-d operand", lambda: gather(np.float64(1.0), _I, axis=0), AxisError, "0-d"),
    ("scatter out of range", lambda: scatter_add(_X, np.array([5]), np.ones((2, 1)), axis=1),
     IndexOutOfBoundsError, "scatter_add got index 5"),
    ("scatter negative", lambda: scatter(_X, np.array([-1]), np.ones((2, 1)), axis=1),
     IndexOutOfBoundsError, "scatter got index -1"),
    ("update shape", lambda: scatter_add(_X, _I, np.ones((2, 3)), axis=1), ShapeError, r"\(2, 2\)"),
    ("update dtype", lambda: scatter(_X, _I, np.ones((2, 2), np.float32), axis=1), DTypeError,
     "one dtype"),
    ("scatter axis", lambda: scatter(_X, _I, np.ones((2, 2)), axis=-1), AxisError, "axis=-1"),
    ("take_along_axis rank", lambda: ix.take_along_axis(_X, _I, axis=1), ShapeError, "same rank"),
    ("take_along_axis broadcast", lambda: ix.take_along_axis(_X, np.zeros((3, 1), int), axis=1),
     ShapeError, "broadcast"),
]


@pytest.mark.parametrize("call,exc,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_funcdiff_errors(call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call()
    assert isinstance(info.value, FunctionalDiffError)


def test_errors_when_staged():
    with pytest.raises(ShapeError, match="needs updates of shape"):
        trace_to_jaxpr(lambda o, u: [scatter_add(o, _I, u, axis=0)],
                       [ShapedArray((4,), np.dtype(np.float64)), ShapedArray((3,), np.dtype(np.float64))])
    with pytest.raises(DTypeError, match="integer indices"):
        trace_to_jaxpr(lambda x, i: [gather(x, i, axis=0)],
                       [ShapedArray((4,), np.dtype(np.float64)), ShapedArray((2,), np.dtype(np.float64))])


# --- derivatives ----------------------------------------------------------------------


def test_repeated_indices_accumulate_in_reverse_mode():
    e = np.arange(4.)
    grad = fd.grad(lambda x: _sum(gather(x, np.array([2, 0, 2]), axis=0)))(e)
    np.testing.assert_array_equal(grad, [1., 0., 2., 0.])


@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
def test_gather_grads(shape, axis, idx):
    idx = np.asarray(idx)
    check_grads(lambda x: el.sin(gather(el.mul(x, x), idx, axis=axis)), (_data(shape),), order=2)


@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("op", SCATTER_OPS, ids=SCATTER_IDS)
def test_scatter_grads(op, shape, axis, idx):
    # Repeated indices included: reverse mode of scatter must credit only the
    # surviving update, which the finite differences see.
    idx = np.asarray(idx)
    operand, updates = _data(shape), _data(_updates_shape(shape, axis, idx))

    def f(operand, updates):
        return el.sin(op(el.mul(operand, operand), idx, el.sin(updates), axis=axis))
    check_grads(f, (operand, updates), order=2)
    # one argument constant: the rules see a symbolic zero tangent for the other
    check_grads(lambda o: f(o, updates), (operand,), order=2)
    check_grads(lambda u: f(operand, u), (updates,), order=2)


def test_float32_derivatives_stay_float32():
    x = _data((5,), np.float32)
    out, t = fd.jvp(lambda x: gather(x, np.array([1, 1]), axis=0), (x,), (np.ones(5, np.float32),))
    assert np.asarray(t).dtype == np.float32
    g = fd.grad(lambda x: _sum(scatter(x, np.array([0]), np.ones(1, np.float32), axis=0)))(x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [0, 1, 1, 1, 1])


def test_integer_operand_has_no_tangent():
    x, f = np.arange(3.0), lambda x: [gather(el.mul(x, x), np.array([2, 0]), axis=0)]
    (out,), (t,) = jvp_flat(lambda i: [gather(i, np.array([2, 0]), axis=0)], [np.arange(3)],
                            [Zero.from_value(np.arange(3))])
    np.testing.assert_array_equal(out, [2, 0])
    assert type(t) is Zero
    (out,), (t,) = jvp_flat(f, [x], [np.ones(3)])
    np.testing.assert_array_equal(t, [4.0, 0.0])


def _inner(a, b):
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


@pytest.mark.parametrize("shape,axis,idx", CASES, ids=CASE_IDS)
def test_adjoint_identity_of_linear_maps(shape, axis, idx):
    """<ct, f(t)> == <f^T(ct), t> for gather, scatter_add and scatter (repeats included)."""
    idx = np.asarray(idx)
    ushape = _updates_shape(shape, axis, idx)
    t_x, t_u = _data(shape), _data(ushape)

    g = lambda x: gather(x, idx, axis=axis)  # noqa: E731
    ct = _data(ushape)
    (ct_x,) = fd.linear_transpose(g, t_x)(ct)
    assert abs(_inner(ct, g(t_x)) - _inner(ct_x, t_x)) < 1e-10
    for op in (scatter_add, scatter):
        f = lambda o, u: op(o, idx, u, axis=axis)  # noqa: E731
        ct = _data(shape)
        ct_o, ct_u = fd.linear_transpose(f, t_x, t_u)(ct)
        assert abs(_inner(ct, f(t_x, t_u)) - _inner(ct_o, t_x) - _inner(ct_u, t_u)) < 1e-10
        # reverse mode through linearize + transpose agrees with linear_transpose
        _, pullback = fd.vjp(f, t_x, t_u)
        for a, b in zip(pullback(ct), (ct_o, ct_u)):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_scatter_reverse_mode_credits_only_the_last_write():
    idx = np.array([1, 3, 1, 1])
    f = lambda u: _sum(el.mul(scatter(np.zeros(4), idx, u, axis=0), np.arange(4.)))  # noqa: E731
    np.testing.assert_array_equal(fd.grad(f)(np.ones(4)), [0., 3., 0., 1.])


def test_scatter_extrema_split_ties_equally():
    idx = np.array([0, 0, 1])
    for op in (scatter_max, scatter_min):
        f = lambda o, u: _sum(op(o, idx, u, axis=0))  # noqa: E731
        g_o, g_u = fd.grad(f, argnums=(0, 1))(np.array([1., 5.]), np.array([1., 1., 5.]))
        np.testing.assert_allclose(g_o, [1 / 3, 1 / 2])
        np.testing.assert_allclose(g_u, [1 / 3, 1 / 3, 1 / 2])


@pytest.mark.parametrize("updates,order", [([0., 3., 2., 5.], 2), ([4., 3., 0., 0.], 2),
                                           ([0., 0., 2., 5.], 1), ([0., 0., 0., 5.], 1)])
def test_scatter_mul_derivative_at_zero_updates(updates, order):
    idx = np.array([1, 1, 1, 2])
    f = lambda o, u: scatter_mul(o, idx, u, axis=0)  # noqa: E731
    check_grads(f, (np.array([2., 3., 4.]), np.array(updates)), order=order)


# --- vmap vs a Python loop ----------------------------------------------------------


def _stack(items, bdim):
    return np.stack(items, axis=bdim)


def _batch_args(makers, dims, size):
    """Per-member arguments and their batched forms (shared when dim is None)."""
    members, batched = [], []
    for make, d in zip(makers, dims):
        if d is None:
            v = make()
            members.append([v] * size)
            batched.append(v)
        else:
            vs = [make() for _ in range(size)]
            members.append(vs)
            batched.append(_stack(vs, d))
    return members, batched


def _check_vmap(f, makers, ndims, size=3):
    """vmap(f) == loop for every combination of (unbatched, first, last) per argument."""
    options = [(None, 0, n) for n in ndims]
    for dims in itertools.product(*options):
        if all(d is None for d in dims):
            continue
        members, batched = _batch_args(makers, dims, size)
        for out_axis in (0, -1):
            got = fd.vmap(f, in_axes=tuple(dims), out_axes=out_axis)(*batched)
            want = np.stack([f(*[m[b] for m in members]) for b in range(size)], axis=out_axis)
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"in_axes={dims}")


def _indices_maker(shape, size):
    return lambda: RNG.integers(0, size, shape)


VMAP_CASES = [c for c in CASES if np.size(c[2]) > 0] + [((4, 3), 0, [3, 3, 3, 1])]


@pytest.mark.parametrize("shape,axis,idx", VMAP_CASES, ids=[f"{s}-ax{a}-idx{np.shape(i)}" for s, a, i in VMAP_CASES])
def test_gather_vmap_matches_loop(shape, axis, idx):
    ishape = np.shape(idx)
    f = lambda x, i: gather(x, i, axis=axis)  # noqa: E731
    _check_vmap(f, [lambda: _data(shape), _indices_maker(ishape, shape[axis])],
                [len(shape), len(ishape)])


@pytest.mark.parametrize("shape,axis,idx", VMAP_CASES, ids=[f"{s}-ax{a}-idx{np.shape(i)}" for s, a, i in VMAP_CASES])
@pytest.mark.parametrize("op", SCATTER_OPS, ids=SCATTER_IDS)
def test_scatter_vmap_matches_loop(op, shape, axis, idx):
    ishape = np.shape(idx)
    ushape = _updates_shape(shape, axis, np.asarray(idx))
    f = lambda o, i, u: op(o, i, u, axis=axis)  # noqa: E731
    _check_vmap(f, [lambda: _data(shape), _indices_maker(ishape, shape[axis]), lambda: _data(ushape)],
                [len(shape), len(ishape), len(ushape)])


def test_vmap_of_integer_indices_widens_small_dtypes():
    # batch * axis size = 400 does not fit uint8, so the folded indices must widen
    x = _data((100, 4, 2))
    idx = RNG.integers(0, 4, (100, 3)).astype(np.uint8)
    got = fd.vmap(lambda x, i: gather(x, i, axis=0))(x, idx)
    np.testing.assert_array_equal(got, np.stack([np.take(x[b], idx[b], axis=0) for b in range(100)]))


@pytest.mark.parametrize("op", SCATTER_OPS + [gather], ids=SCATTER_IDS + ["gather"])
def test_vmap_of_grad_with_batched_repeated_indices(op):
    shape, axis, size = (4, 2), 0, 3
    idx = np.array([[1, 1, 3], [0, 2, 0], [3, 3, 3]])
    x = _data((size,) + shape)
    u = _data((size, 3, 2))
    if op is gather:
        f = lambda x, i, u: _sum(el.sin(gather(x, i, axis=axis)))  # noqa: E731
    else:
        f = lambda x, i, u: _sum(el.sin(op(x, i, el.mul(u, u), axis=axis)))  # noqa: E731
    grad = fd.grad(f, argnums=(0, 2))
    got = fd.vmap(grad)(x, idx, u)
    for b in range(size):
        want = grad(x[b], idx[b], u[b])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g[b], w, rtol=1e-12, atol=1e-14)


def test_grad_of_vmap():
    idx = np.array([[1, 1], [0, 2]])
    f = lambda x: _sum(el.sin(fd.vmap(lambda x, i: gather(x, i, axis=0))(x, idx)))  # noqa: E731
    check_grads(f, (_data((2, 3)),), order=2)


# --- take_along_axis ----------------------------------------------------------------

TAKE_CASES = [
    ((5,), (7,), 0),
    ((3, 4), (3, 2), 1),
    ((3, 4), (2, 4), 0),
    ((3, 4), (3, 4), -1),
    ((3, 1, 4), (3, 5, 2), 2),   # x broadcasts against indices
    ((3, 2, 4), (1, 2, 6), 2),   # indices broadcast against x
    ((2, 3, 4), (2, 5, 4), 1),
    ((2, 3), (4,), None),
]


@pytest.mark.parametrize("x_shape,i_shape,axis", TAKE_CASES)
def test_take_along_axis(x_shape, i_shape, axis):
    x = _data(x_shape)
    n = x.size if axis is None else x_shape[axis]
    idx = RNG.integers(0, n, i_shape)
    np.testing.assert_array_equal(ix.take_along_axis(x, idx, axis), np.take_along_axis(x, idx, axis))
    check_grads(lambda x: el.sin(ix.take_along_axis(el.mul(x, x), idx, axis)), (x,), order=2)
    if axis is not None:
        got = fd.vmap(lambda x, i: ix.take_along_axis(x, i, axis), in_axes=(0, 0))(
            np.stack([x, x + 1]), np.stack([idx, idx[::-1] if idx.shape[0] > 1 else idx]))
        np.testing.assert_array_equal(got[1], np.take_along_axis(
            x + 1, idx[::-1] if idx.shape[0] > 1 else idx, axis))


def test_take_along_axis_small_index_dtype():
    x = _data((30, 20))
    idx = RNG.integers(0, 20, (30, 3)).astype(np.uint8)  # flat positions exceed 255
    np.testing.assert_array_equal(ix.take_along_axis(x, idx, 1), np.take_along_axis(x, idx, 1))



def test_docstring_examples():
    """The examples in the docstrings of the family's operations (bound
    operations are made by ``make_op``, so doctest.testmod would not find them)."""
    from funcdiff.primitives import indexing
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for name in indexing.__all__:
        for test in finder.find(getattr(indexing, name), name, module=False,
                                globs=dict(vars(indexing))):
            runner.run(test)
    assert runner.tries >= 6 and runner.failures == 0
