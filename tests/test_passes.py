"""Tests of the optimisation passes (funcdiff/passes/pipeline.py).

Each pass gets unit tests on small traced programs that assert the pass fired
(equation counts, primitives present or gone) and that the program computes
the same values; a pass with nothing to do returns its input object. A
hypothesis property test then builds random programs from the primitive set
(elementwise unary/binary with broadcasting, reductions, reshape, transpose,
broadcast, dot_general, select, plus the patterns differentiation leaves
behind), and checks that ``optimize`` keeps them well typed and computing the
same values, also for their reverse-mode derivatives, and that the compiled
programs agree. Last, the facts the passes read on the cards: each trait's
promise is checked on every primitive that declares it, every role is played,
and a rule added to a card runs.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.core import all_primitives, bind, get_aval
from funcdiff.passes import pipeline as passes
from funcdiff.compiler.compile import compile_jaxpr
from funcdiff.ir import check_jaxpr, eval_jaxpr

RNG = np.random.default_rng(0)


def P(name, *args, **params):
    """Bind the primitive called ``name``: programs here are built from primitives."""
    return bind(all_primitives()[name], *args, **params)


def trace(f, *args):
    return fd.make_jaxpr(f)(*args)


def names(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def run(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def assert_same_values(before, after, *args, rtol=1e-13):
    check_jaxpr(after.jaxpr)
    for a, b in zip(run(before, *args), run(after, *args), strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-300)


X23 = RNG.standard_normal((2, 3))
X3 = RNG.standard_normal(3)


# --- eliminate_dead_code ------------------------------------------------------------------


def test_dce_drops_unused_equations_and_constants():
    c = np.arange(3.0)

    def f(x):
        P("sin", P("add", x, c))      # unused, and the only user of the constant c
        return P("cos", x)
    before = trace(f, X3)
    after = passes.eliminate_dead_code(before)
    assert names(before) == ["add", "sin", "cos"] and names(after) == ["cos"]
    assert len(before.consts) == 1 and after.consts == []
    assert_same_values(before, after, X3)


def test_passes_return_their_input_when_nothing_applies():
    closed = trace(lambda x: P("sin", x), X3)
    for p in passes.PASSES + [passes.inline_calls]:
        assert p(closed) is closed, p.__name__
    assert passes.optimize(closed) is closed


# --- eliminate_common_subexpressions ------------------------------------------------------


def test_cse_merges_equal_equations_and_commuted_operands():
    def f(x, y):
        a, b = P("sin", x), P("sin", x)
        s, t = P("add", x, y), P("add", y, x)
        return P("mul", a, b), P("sub", s, t)
    before = trace(f, X3, X3[::-1].copy())
    after = passes.eliminate_dead_code(passes.eliminate_common_subexpressions(before))
    assert names(before).count("sin") == 2 and names(after).count("sin") == 1
    assert names(after).count("add") == 1
    assert_same_values(before, after, X3, X3[::-1].copy())


def test_cse_keeps_different_params_literals_and_signed_zeros_apart():
    def f(x):
        return (P("reduce_sum", x, axes=(0,)), P("reduce_sum", x, axes=(1,)),
                P("mul", x, 0.0), P("mul", x, -0.0), P("sub", x, 1.0), P("sub", x, 2.0))
    before = trace(f, X23)
    after = passes.eliminate_common_subexpressions(before)
    assert after is before


# --- fold_constants -----------------------------------------------------------------------


def test_fold_constants_evaluates_constant_equations_into_read_only_constants():
    c = np.arange(6.0).reshape(2, 3)

    def f(x):
        k = P("exp", P("mul", c, 0.5))       # depends on constants only
        return P("add", x, k)
    before = trace(f, X23)
    after = passes.eliminate_dead_code(passes.fold_constants(before))
    assert names(before) == ["mul", "exp", "add"] and names(after) == ["add"]
    (folded,) = after.consts
    assert not folded.flags.writeable  # nobody can change the program through its output
    np.testing.assert_allclose(folded, np.exp(c * 0.5))
    assert_same_values(before, after, X23)


def test_fold_constants_keeps_large_broadcasts_and_failing_equations():
    def f(x):
        big = P("broadcast_in_dim", 2.0, shape=(200, 200), broadcast_dimensions=())
        bad = P("gather", np.arange(3.0), np.array([5]), axis=0)  # out of bounds
        return P("add", x, P("reduce_sum", big, axes=(0, 1))), bad
    before = trace(f, 1.0)
    after = passes.fold_constants(before)
    assert "broadcast_in_dim" in names(after) and "gather" in names(after)
    with pytest.raises(fd.FunctionalDiffError, match="gather"):
        run(after, 1.0)


# --- forward_identities -------------------------------------------------------------------


def test_forward_identities_drops_ops_that_change_nothing():
    def f(x):
        y = P("reshape", x, new_sizes=(2, 3))
        y = P("transpose", y, permutation=(0, 1))
        y = P("convert_element_type", y, new_dtype=np.dtype(np.float64))
        y = P("broadcast_in_dim", y, shape=(2, 3), broadcast_dimensions=(0, 1))
        y = P("reduce_sum", y, axes=())
        y = P("slice", y, start_indices=(0, 0), limit_indices=(2, 3), strides=None)
        y = P("squeeze", y, dimensions=())
        return P("sin", y)
    before = trace(f, X23)
    after = passes.eliminate_dead_code(passes.forward_identities(before))
    assert len(before.eqns) == 8 and names(after) == ["sin"]
    assert_same_values(before, after, X23)


def test_forward_identities_keeps_real_moves():
    def f(x):
        return (P("transpose", x, permutation=(1, 0)), P("reshape", x, new_sizes=(3, 2)),
                P("rev", x, dimensions=(1,)), P("convert_element_type", x,
                                                  new_dtype=np.dtype(np.float32)))
    before = trace(f, X23)
    assert passes.forward_identities(before) is before


# --- simplify_algebra ---------------------------------------------------------------------


def opt_simplify(closed):
    return passes.eliminate_dead_code(passes.simplify_algebra(closed))


SIMPLIFY_RULES = [  # (id, program, primitives left)
    ("x*1", lambda x: P("mul", x, 1.0), []),
    ("1*x", lambda x: P("mul", 1.0, x), []),
    ("x*ones", lambda x: P("mul", x, P("broadcast_in_dim", 1.0, shape=(2, 3),
                                       broadcast_dimensions=())), []),
    ("x/1", lambda x: P("div", x, 1.0), []),
    ("x+0", lambda x: P("add", x, 0.0), []),
    ("0+x", lambda x: P("add", 0.0, x), []),
    ("x-0", lambda x: P("sub", x, 0.0), []),
    ("0-x", lambda x: P("sub", 0.0, x), ["neg"]),
    ("x*-1", lambda x: P("mul", x, -1.0), ["neg"]),
    ("neg-neg", lambda x: P("neg", P("neg", x)), []),
    ("a+neg-b", lambda x: P("add", P("sin", x), P("neg", x)), ["sin", "sub"]),
    ("neg-a+b", lambda x: P("add", P("neg", x), P("sin", x)), ["sin", "sub"]),
    ("a-neg-b", lambda x: P("sub", P("sin", x), P("neg", x)), ["sin", "add"]),
    ("neg-travels-to-sub", lambda x: P("add", x, P("reduce_sum", P("mul", P("neg", P("sin", x)), x),
                                                   axes=())), ["sin", "mul", "reduce_sum", "sub"]),
    ("neg-of-a-scaling", lambda x: P("neg", P("div", P("sin", x), 8.0)), ["sin", "div"]),
    ("neg-times-neg", lambda x: P("mul", P("neg", P("sin", x)), P("neg", x)), ["sin", "mul"]),
    ("transpose-transpose", lambda x: P("transpose", P("transpose", x, permutation=(1, 0)),
                                        permutation=(1, 0)), []),
    ("reshape-chain", lambda x: P("reshape", P("expand_dims", x, dimensions=(0,)),
                                  new_sizes=(2, 3)), []),
    ("squeeze-reshape", lambda x: P("squeeze", P("reshape", x, new_sizes=(1, 6)),
                                    dimensions=(0,)), ["reshape"]),
    ("expand_dims-is-a-reshape", lambda x: P("expand_dims", x, dimensions=(1,)), ["reshape"]),
    ("f64-f32-f64-kept", lambda x: P("convert_element_type", P(
        "convert_element_type", x, new_dtype=np.dtype(np.float32)),
        new_dtype=np.dtype(np.float64)), ["convert_element_type"] * 2),
]


@pytest.mark.parametrize("f,expected", [r[1:] for r in SIMPLIFY_RULES],
                         ids=[r[0] for r in SIMPLIFY_RULES])
def test_simplify_algebra_rules(f, expected):
    before = trace(f, X23)
    after = opt_simplify(before)
    assert names(after) == expected, (names(before), names(after))
    assert_same_values(before, after, X23)


def test_round_trip_through_a_wider_float_is_dropped():
    x = X23.astype(np.float32)
    before = trace(lambda x: P("convert_element_type", P(
        "convert_element_type", x, new_dtype=np.dtype(np.float64)),
        new_dtype=np.dtype(np.float32)), x)
    after = opt_simplify(before)
    assert names(after) == []
    assert_same_values(before, after, x)


def test_double_transpose_composes_into_one():
    x = RNG.standard_normal((2, 3, 4))
    before = trace(lambda x: P("transpose", P("transpose", x, permutation=(1, 2, 0)),
                               permutation=(1, 2, 0)), x)
    after = opt_simplify(before)
    assert names(after) == ["transpose"] and after.eqns[0].params["permutation"] == (2, 0, 1)
    assert_same_values(before, after, x)


def test_reduce_sum_of_a_broadcast_scalar_becomes_a_multiply_by_the_count():
    before = trace(lambda s: P("reduce_sum", P("broadcast_in_dim", s, shape=(4, 5),
                                               broadcast_dimensions=()), axes=(0, 1)), 1.5)
    after = opt_simplify(before)
    assert names(after) == ["mul"] and after.eqns[0].invars[1].val == 20
    assert_same_values(before, after, 1.5)


def test_partial_reduce_sum_of_a_broadcast_becomes_a_smaller_broadcast():
    v = RNG.standard_normal(3)

    def f(v):
        b = P("broadcast_in_dim", v, shape=(4, 3, 5), broadcast_dimensions=(1,))
        return P("reduce_sum", b, axes=(0,))    # (3, 5): each entry is 4 * v[i]
    before = trace(f, v)
    after = opt_simplify(before)
    assert names(after) == ["mul", "broadcast_in_dim"]
    assert after.eqns[1].params["shape"] == (3, 5)
    assert_same_values(before, after, v)
    # summing the axis v lives on too: a sum of v times 4 * 5 copies
    before = trace(lambda v: P("reduce_sum", P("broadcast_in_dim", v, shape=(4, 3, 5),
                                               broadcast_dimensions=(1,)), axes=(0, 1, 2)), v)
    after = opt_simplify(before)
    assert names(after) == ["reduce_sum", "mul"] and after.eqns[0].invars[0].aval.shape == (3,)
    assert_same_values(before, after, v, rtol=1e-14)


def test_broadcast_of_a_broadcast_is_one_broadcast():
    before = trace(lambda v: P("broadcast_in_dim", P("broadcast_in_dim", v, shape=(2, 3),
                                                     broadcast_dimensions=(1,)),
                               shape=(4, 2, 3), broadcast_dimensions=(1, 2)), X3)
    after = opt_simplify(before)
    assert names(after) == ["broadcast_in_dim"]
    assert after.eqns[0].params["broadcast_dimensions"] == (2,)
    assert_same_values(before, after, X3)


def test_broadcasts_feeding_only_broadcasting_ops_become_reshapes():
    v = RNG.standard_normal(2)

    def f(x, v, s):
        bv = P("broadcast_in_dim", v, shape=(2, 3), broadcast_dimensions=(0,))
        bs = P("broadcast_in_dim", s, shape=(2, 3), broadcast_dimensions=())
        return P("mul", P("add", x, bv), bs)
    before = trace(f, X23, v, 2.0)
    after = opt_simplify(before)
    assert names(after) == ["reshape", "add", "mul"]
    assert after.eqns[0].params["new_sizes"] == (2, 1)
    assert_same_values(before, after, X23, v, 2.0)
    # a broadcast that is also an output stays
    before = trace(lambda s: (P("broadcast_in_dim", s, shape=(3,), broadcast_dimensions=()),), 2.0)
    assert opt_simplify(before) is before


# --- eliminate_zeros ----------------------------------------------------------------------


def zeros(shape):
    return P("broadcast_in_dim", 0.0, shape=shape, broadcast_dimensions=())


def opt_zeros(closed):
    return passes.eliminate_dead_code(passes.eliminate_zeros(closed))


def test_adds_of_broadcast_zeros_disappear():
    before = trace(lambda x: P("sub", P("add", x, zeros((2, 3))), zeros((2, 3))), X23)
    after = opt_zeros(before)
    assert names(after) == []
    assert_same_values(before, after, X23)
    before = trace(lambda v: P("add", zeros((2, 3)), v), X3)  # the zero was larger: broadcast
    after = opt_zeros(before)
    assert names(after) == ["broadcast_in_dim"]
    assert_same_values(before, after, X3)
    before = trace(lambda x: P("sub", zeros((2, 3)), x), X23)
    assert names(opt_zeros(before)) == ["neg"]


def test_products_with_zeros_are_zeros_and_zeros_propagate():
    w = RNG.standard_normal((3, 4))

    def f(x):
        z = P("safe_mul", P("sin", x), zeros((2, 3)))
        z = P("dot_general", z, w, dimension_numbers=(((1,), (0,)), ((), ())))
        z = P("reduce_sum", P("neg", P("transpose", z, permutation=(1, 0))), axes=(1,))
        return P("add", P("cos", x), P("reduce_sum", z, axes=(0,)))
    before = trace(f, X23)
    after = passes.optimize(before)
    assert names(after) == ["cos"]
    assert_same_values(before, after, X23)


def test_zero_times_a_value_that_may_be_inf_stays():
    before = trace(lambda x: P("mul", x, zeros((3,))), np.array([1.0, np.inf, np.nan]))
    assert passes.eliminate_zeros(before) is before  # inf * 0 and nan * 0 are nan
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(run(passes.optimize(before), np.array([1.0, np.inf, 2.0])),
                                      [[0.0, np.nan, 0.0]])
    # integers, and floats converted from them, are finite: their products vanish
    before = trace(lambda i: P("mul", P("convert_element_type", i,
                                        new_dtype=np.dtype(np.float64)), zeros((3,))),
                   np.arange(3))
    assert names(opt_zeros(before)) == ["broadcast_in_dim"]
    assert_same_values(before, opt_zeros(before), np.arange(3))


def test_scatter_add_of_zero_updates_returns_the_operand():
    idx = np.array([0, 2])
    before = trace(lambda x: P("scatter_add", x, idx, zeros((2,)), axis=0), X3)
    after = opt_zeros(before)
    assert names(after) == []
    assert_same_values(before, after, X3)


def test_zero_elimination_leaves_nonzero_fills_alone():
    before = trace(lambda x: P("mul", x, P("broadcast_in_dim", 2.0, shape=(3,),
                                            broadcast_dimensions=())), X3)
    assert passes.eliminate_zeros(before) is before


# --- drop_softmax_shift_cotangents ---------------------------------------------------------


def _other_passes_to_a_fixed_point(closed):
    """Every pass but drop_softmax_shift_cotangents, run until nothing changes."""
    others = [p for p in passes.PASSES if p is not passes.drop_softmax_shift_cotangents]
    for _ in range(10):
        before = closed
        for p in others:
            closed = p(closed)
        if closed is before:
            return closed
    raise AssertionError("no fixed point")


def _log_softmax(x, axis):
    z = x - fnp.max(x, axis=axis, keepdims=True)
    return z - fnp.log(fnp.sum(fnp.exp(z), axis=axis, keepdims=True))


def _softmax(x, axis):
    e = fnp.exp(x - fnp.max(x, axis=axis, keepdims=True))
    return e / fnp.sum(e, axis=axis, keepdims=True)


SOFTMAX_LOSSES = [  # (loss of x and weights w, reduced axis)
    (lambda x, w: -fnp.sum(w * _log_softmax(x, 1)), 1),     # cross-entropy with soft labels
    (lambda x, w: fnp.sum(_softmax(x, 1) * w), 1),
    (lambda x, w: fnp.sum(_log_softmax(x, 0) ** 2 * w), 0),  # leading axis: no keepdims reshape
    (lambda x, w: fnp.sum(fnp.sin(_softmax(x.T, -1)) * w.T), -1),
]


@pytest.mark.parametrize("loss, axis", SOFTMAX_LOSSES)
def test_the_cotangent_of_a_softmax_shift_is_dropped(loss, axis):
    x, w = RNG.standard_normal((4, 5)), RNG.uniform(0, 1, (4, 5))
    x[1, 2] = x[1, 4] = x[1].max() + 1.0  # a tie: the max cotangent is shared between two
    before = _other_passes_to_a_fixed_point(fd.make_jaxpr(fd.grad(loss))(x, w))
    after = passes.drop_softmax_shift_cotangents(before)
    after = passes.eliminate_dead_code(after)
    assert "eq" in names(before) and "eq" not in names(after)  # the argmax mask is gone
    assert names(after).count("reduce_sum") < names(before).count("reduce_sum")
    assert_same_values(before, after, x, w, rtol=1e-12)
    np.testing.assert_allclose(run(after, x, w)[0], fd.grad(loss)(x, w), rtol=1e-12)


def test_rows_holding_a_nan_stay_nan_without_the_shift_cotangent():
    loss = SOFTMAX_LOSSES[0][0]
    x, w = RNG.standard_normal((3, 4)), RNG.uniform(0, 1, (3, 4))
    x[1, 1] = np.nan
    before = fd.make_jaxpr(fd.grad(loss))(x, w)
    after = passes.optimize(before)
    assert "eq" not in names(after)
    got, want = run(after, x, w)[0], run(before, x, w)[0]
    assert np.isnan(got[1]).all() and np.isnan(want[1]).all()
    np.testing.assert_allclose(got[[0, 2]], want[[0, 2]], rtol=1e-12)


@pytest.mark.parametrize("loss", [
    lambda x: fnp.sum((x - fnp.max(x, axis=1, keepdims=True)) ** 2),        # not shift-invariant
    lambda x: fnp.sum(fnp.exp(x - fnp.max(x, axis=1, keepdims=True))),      # not normalised
    lambda x: fnp.sum(fnp.exp(x - fnp.max(x, axis=1, keepdims=True))
                      / fnp.sum(fnp.exp(x), axis=1, keepdims=True)),        # shifted once only
])
def test_a_max_whose_cotangent_does_not_vanish_keeps_it(loss):
    x = RNG.standard_normal((3, 4))
    before = _other_passes_to_a_fixed_point(fd.make_jaxpr(fd.grad(loss))(x))
    assert passes.drop_softmax_shift_cotangents(before) is before
    np.testing.assert_allclose(run(passes.optimize(before), x)[0], fd.grad(loss)(x), rtol=1e-12)


def test_only_the_softmax_part_of_a_max_cotangent_is_dropped():
    def loss(x):  # the max also scales the result: that part of its cotangent stays
        return fnp.sum(_softmax(x, 1) * fnp.max(x, axis=1, keepdims=True))
    x = RNG.standard_normal((3, 4))
    before = _other_passes_to_a_fixed_point(fd.make_jaxpr(fd.grad(loss))(x))
    after = passes.eliminate_dead_code(passes.drop_softmax_shift_cotangents(before))
    assert len(after.eqns) < len(before.eqns) and "eq" in names(after)
    assert_same_values(before, after, x, rtol=1e-12)


# --- inline_calls and optimize ------------------------------------------------------------


def test_inline_calls_splices_inner_jits_with_fresh_variables():
    inner = fd.jit(lambda x: P("sin", P("mul", x, 2.0)))

    def f(x):
        return P("add", inner(x), inner(P("cos", x)))  # the same inner program twice
    before = trace(f, X3)
    assert names(before).count("call") == 2
    after = passes.inline_calls(before)
    assert "call" not in names(after) and names(after).count("sin") == 2
    assert_same_values(before, after, X3)


def test_optimize_cleans_up_a_gradient_program():
    def loss(w, x):
        return fnp.sum(fnp.tanh(x @ w) ** 2) + fnp.sum(w * w)
    w, x = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3))
    before = fd.make_jaxpr(fd.grad(loss))(w, x)
    after = passes.optimize(before)
    assert len(after.eqns) < len(before.eqns)
    assert passes.optimize(after) is after  # a fixed point
    assert_same_values(before, after, w, x, rtol=1e-12)


# --- random programs ----------------------------------------------------------------------

SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3), (4, 2, 3)]
UNARY = ["sin", "cos", "tanh", "neg", "atan", "logistic", "exp_tanh", "square_tanh", "abs"]
BINARY = ["add", "sub", "mul", "max", "min", "div_soft"]
OPS = (["unary"] * 4 + ["binary"] * 4
       + ["reduce_sum", "reduce_max", "reshape", "transpose", "broadcast", "dot", "select",
          "mul_one", "add_zero", "add_zeros", "mul_zeros", "neg_neg", "transpose_twice",
          "sum_of_broadcast", "const", "duplicate", "reshape_twice", "convert_twice",
          "log_softmax", "take_along"])


def _compatible(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def _apply(op, a, b, k, consts):
    """One random operation on pool values ``a`` and ``b`` (``k`` picks variants)."""
    sa = get_aval(a).shape
    if op == "unary":
        name = UNARY[k % len(UNARY)]
        if name == "exp_tanh":
            return P("exp", P("tanh", a))
        if name == "square_tanh":
            return P("integer_pow", P("tanh", a), y=2)
        return P(name, a)
    if op == "binary" or op == "select":
        if not _compatible(a, b):
            b = P("reduce_sum", b, axes=tuple(range(get_aval(b).ndim)))
        if op == "select":
            return P("select", P("gt", a, 0.0), a, b)
        name = BINARY[k % len(BINARY)]
        if name == "div_soft":
            return P("div", a, P("add", 1.0, P("mul", b, b)))
        return P(name, a, b)
    if op in ("reduce_sum", "reduce_max"):
        axes = tuple(i for i in range(len(sa)) if (k >> i) & 1)
        return P(op, a, axes=axes)
    if op == "reshape":
        return P("reshape", a, new_sizes=(int(np.prod(sa)),) if k % 2 else sa + (1,))
    if op == "transpose":
        perm = tuple(np.random.default_rng(k).permutation(len(sa)))
        return P("transpose", a, permutation=tuple(int(i) for i in perm))
    if op == "broadcast":
        return P("broadcast_in_dim", a, shape=(2,) + sa,
                 broadcast_dimensions=tuple(range(1, len(sa) + 1)))
    if op == "dot":
        if sa and get_aval(b).shape and sa[-1] == get_aval(b).shape[0]:
            return P("dot_general", a, b, dimension_numbers=(((len(sa) - 1,), (0,)), ((), ())))
        axes = tuple(range(len(sa)))
        return P("dot_general", a, a, dimension_numbers=((axes, axes), ((), ())))
    if op == "mul_one":
        return P("mul", a, 1.0) if k % 2 else P("mul", P("broadcast_in_dim", 1.0, shape=sa,
                                                           broadcast_dimensions=()), a)
    if op == "add_zero":
        return P("add", 0.0, a) if k % 2 else P("sub", a, 0.0)
    if op == "add_zeros":
        return P("add", a, P("broadcast_in_dim", 0.0, shape=(2,) + sa, broadcast_dimensions=()))
    if op == "mul_zeros":
        z = P("broadcast_in_dim", 0.0, shape=sa, broadcast_dimensions=())
        return P("add", P("mul", z, a), a) if k % 2 else P("mul", a, z)
    if op == "neg_neg":
        return P("neg", P("neg", a))
    if op == "transpose_twice":
        perm = tuple(int(i) for i in np.random.default_rng(k).permutation(len(sa)))
        return P("transpose", P("transpose", a, permutation=perm), permutation=perm)
    if op == "sum_of_broadcast":
        bc = P("broadcast_in_dim", a, shape=(3,) + sa,
               broadcast_dimensions=tuple(range(1, len(sa) + 1)))
        return P("reduce_sum", bc, axes=(0,) if k % 2 else tuple(range(len(sa) + 1)))
    if op == "const":
        c = consts[k % len(consts)]
        return P("add", a, P("mul", c, P("cos", c))) if _compatible(a, c) else P("mul", c, 2.0)
    if op == "duplicate":
        return P("add", P("sin", a), P("sin", a))
    if op == "reshape_twice":
        return P("reshape", P("reshape", a, new_sizes=(int(np.prod(sa)),)), new_sizes=sa)
    if op == "convert_twice":
        f32 = P("convert_element_type", a, new_dtype=np.dtype(np.float32))
        return P("convert_element_type", f32, new_dtype=np.dtype(np.float64))
    if op == "log_softmax":  # stabilised by the max: its cotangent vanishes
        if not sa:
            return P("exp", a)
        axis = k % len(sa)
        z = a - fnp.max(a, axis=axis, keepdims=True)
        if k % 2:
            return z - fnp.log(fnp.sum(fnp.exp(z), axis=axis, keepdims=True))
        return fnp.exp(z) / fnp.sum(fnp.exp(z), axis=axis, keepdims=True)
    if op == "take_along":  # traced indices in [-n, n): the wrap of negatives is exercised
        if not sa:
            return P("sin", a)
        axis = k % len(sa)
        src = a if k % 2 else fnp.max(a, axis=axis, keepdims=True)
        # floor(t * (n - 0.5)) for t in [-1, 1] (tanh reaches 1.0 in float64) is in [-n, n)
        idx = P("convert_element_type",
                P("floor", P("mul", P("tanh", src), float(sa[axis]) - 0.5)),
                new_dtype=np.dtype(np.int64))
        return fnp.take_along_axis(a, idx, axis=axis)
    raise AssertionError(op)


@st.composite
def random_programs(draw):
    in_shapes = draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3))
    ops = draw(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 7), st.integers(0, 7),
                                  st.integers(0, 15)), min_size=1, max_size=14))
    n_out = draw(st.integers(1, 3))
    return in_shapes, ops, n_out


def _build(spec):
    in_shapes, ops, n_out = spec
    consts = [np.linspace(-1, 1, 3), np.array(0.5), np.full((2, 3), 0.25)]

    def f(*xs):
        pool = list(xs)
        for op, i, j, k in ops:
            pool.append(_apply(op, pool[i % len(pool)], pool[j % len(pool)], k, consts))
        return pool[-n_out:]
    args = [np.random.default_rng(7).uniform(-2, 2, s) for s in in_shapes]
    return f, args


def _assert_close(got, want, rtol):
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_programs())
def test_optimized_random_programs_compute_the_same_values(spec):
    f, args = _build(spec)
    before = trace(lambda *a: f(*a), *args)
    after = passes.optimize(before)
    check_jaxpr(after.jaxpr)
    want = run(before, *args)
    _assert_close(run(after, *args), want, 1e-11)
    _assert_close(compile_jaxpr(after)(*args), want, 1e-11)
    _assert_close(compile_jaxpr(before)(*args), want, 0)
    assert passes.optimize(after) is after or len(passes.optimize(after).eqns) <= len(after.eqns)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_programs())
def test_optimized_gradient_programs_compute_the_same_values(spec):
    f, args = _build(spec)

    def loss(*a):
        return sum(P("reduce_sum", P("mul", o, o), axes=tuple(range(o.aval.ndim)))
                   if hasattr(o, "aval") else 0.0 for o in f(*a))
    grad = fd.grad(loss, argnums=tuple(range(len(args))))
    before = fd.make_jaxpr(grad)(*args)
    after = passes.optimize(before)
    check_jaxpr(after.jaxpr)
    assert len(after.eqns) <= len(before.eqns)
    _assert_close(run(after, *args), run(before, *args), 1e-11)


@pytest.mark.parametrize("op", sorted(set(OPS)))
def test_every_operation_of_the_generator_optimizes_correctly(op):
    """Each kind of random operation on each shape, so rare draws are covered too."""
    for shape in SHAPES:
        for k in range(4):
            spec = ([shape, (3,)], [("unary", 0, 0, 1), (op, 2, 1, k), ("binary", 3, 0, k)], 2)
            f, args = _build(spec)
            before = trace(lambda *a: f(*a), *args)
            after = passes.optimize(before)
            check_jaxpr(after.jaxpr)
            _assert_close(run(after, *args), run(before, *args), 1e-11)
            _assert_close(compile_jaxpr(after)(*args), run(before, *args), 1e-11)


# --- the facts the passes read on the cards ----------------------------------------------
# Each trait of passes/traits.py promises what its sentence says; these tests check the
# promise on every card that declares the trait, so a wrong declaration fails by name.
# A card that declares a trait needs an example row below (the test says which).

from funcdiff.core import Primitive, Trait  # noqa: E402
from funcdiff import roles  # noqa: E402
from funcdiff.roles import Role  # noqa: E402
from funcdiff.passes import traits as T  # noqa: E402
from funcdiff.passes.algebra import forward_identities, simplify_algebra  # noqa: E402
from funcdiff.passes.rules import (ALGEBRA, IDENTITIES, IDIOMS, ZEROS, Rewrite,  # noqa: E402
                                   defined_by, identity, rewrite)

A = RNG.uniform(-0.9, 0.9, (2, 3))
B = RNG.uniform(-0.9, 0.9, (2, 3))
M = RNG.uniform(-0.9, 0.9, (3, 4))
BOOLS = A > 0, B > 0
_UNARY = ("neg", "sin", "tan", "tanh", "sinh", "asin", "atan", "asinh", "atanh", "sqrt", "cbrt",
          "expm1", "log1p", "abs", "sign", "floor", "ceil", "round", "erf", "erf_inv", "scipy_erf", "scipy_erfinv",
          "stop_gradient")
_BINARY = ("add", "sub", "mul", "safe_mul", "div", "rem", "max", "min", "atan2", "logaddexp",
           "logaddexp2", "hypot", "eq", "ne",
           "lt", "le", "gt", "ge")
EXAMPLES = {  # primitive name -> (operands, params)
    **{n: ((A,), {}) for n in _UNARY},
    **{n: ((A, B), {}) for n in _BINARY},
    "pow": ((np.abs(A) + 0.5, B), {}),
    **{n: (BOOLS, {}) for n in ("and", "or", "xor")},
    "select": ((A > B, A, B), {}),
    "convert_element_type": ((A,), {"new_dtype": np.dtype(np.float32)}),
    "reshape": ((A,), {"new_sizes": (3, 2)}),
    "squeeze": ((A[None],), {"dimensions": (0,)}),
    "expand_dims": ((A,), {"dimensions": (1,)}),
    "transpose": ((A,), {"permutation": (1, 0)}),
    "broadcast_in_dim": ((A,), {"shape": (4, 2, 3), "broadcast_dimensions": (1, 2)}),
    "rev": ((A,), {"dimensions": (0,)}),
    "slice": ((A,), {"start_indices": (0, 1), "limit_indices": (2, 3), "strides": None}),
    **{n: ((A,), {"axes": (1,)}) for n in ("reduce_sum", "reduce_max", "reduce_min")},
    **{n: ((A,), {"axis": 1, "reverse": False}) for n in ("cumsum", "cummax", "cummin")},
    "dot_general": ((A, M), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
    "iota": ((), {"dtype": np.dtype(np.float64), "shape": (2, 3), "dimension": 1}),
    "is_finite": ((np.array([1.0, np.inf, np.nan]),), {}),
    **{n: ((np.array([0, 4, -6, 9]), np.array([3, 6, 4, 0])), {}) for n in ("gcd", "lcm")},
    "bessel_i1": ((A,), {}),
    "bessel_i": ((A,), {"order": 2}),
    "bessel_j1": ((A,), {}),
    "bessel_i1e": ((A,), {}),
    "debug_print": ((A,), {"fmt": "{}", "tree": fd.tree_util.tree_structure(((0,), {}))}),
    "no_derivative": ((A,), {"function": "f", "argument": "k", "reason": "it counts."}),
}
KEEPDIMS_EXAMPLES = {  # the reduced axis 1 of A's rows restored as size 1
    "reshape": {"new_sizes": (2, 1)}, "expand_dims": {"dimensions": (1,)},
    "broadcast_in_dim": {"shape": (2, 1), "broadcast_dimensions": (0,)}}
TRAITS = [v for v in vars(T).values() if isinstance(v, Trait)]
ROLES = [v for v in vars(roles).values() if isinstance(v, Role)]


def with_trait(trait):
    return sorted((p for p in all_primitives().values() if trait in p.traits),
                  key=lambda p: p.name)


def apply(prim, args, params):
    with np.errstate(all="ignore"):
        return np.asarray(prim.impl(*args, **params))


def example(prim):
    return EXAMPLES[prim.name]


def trait_cases(*traits):
    return [pytest.param(t, p, id=f"{t.name}-{p.name}") for t in traits for p in with_trait(t)]


@pytest.mark.parametrize("trait", TRAITS, ids=[t.name for t in TRAITS])
def test_every_card_with_a_trait_has_an_example_to_check_it_on(trait):
    missing = [p.name for p in with_trait(trait) if p.name not in EXAMPLES]
    assert not missing, f"add rows for {missing} (trait {trait.name}) to EXAMPLES"


@pytest.mark.parametrize("trait, prim", trait_cases(T.EFFECTFUL))
def test_effectful_primitives_survive_every_pass(trait, prim, capsys):
    args, params = example(prim)

    def f(x):  # constant operands (foldable), unused results (dead), twice (common)
        prim.bind(*args, **params)
        prim.bind(*args, **params)
        return x
    optimized = passes.optimize(fd.make_jaxpr(f)(1.0))
    assert [e.primitive for e in optimized.jaxpr.eqns] == [prim, prim]
    capsys.readouterr()
    fd.jit(f)(1.0)
    once = capsys.readouterr().out
    assert once and once == (once[:len(once) // 2]) * 2  # twice, and not while optimising


@pytest.mark.parametrize("trait, prim", trait_cases(T.COMMUTATIVE))
def test_commutative_primitives_commute(trait, prim):
    (a, b), params = example(prim)
    np.testing.assert_array_equal(apply(prim, (a, b), params), apply(prim, (b, a), params))


@pytest.mark.parametrize("trait, prim", trait_cases(T.NEG_COMMUTING))
def test_neg_commuting_primitives_are_odd_in_every_operand(trait, prim):
    args, params = example(prim)
    out = apply(prim, args, params)
    for k in range(len(args)):
        negated = list(args)
        negated[k] = -args[k]
        np.testing.assert_array_equal(apply(prim, negated, params), -out)


@pytest.mark.parametrize("trait, prim", trait_cases(T.ZERO_PRESERVING))
def test_zero_preserving_primitives_map_zeros_to_zeros(trait, prim):
    args, params = example(prim)
    out = apply(prim, (np.zeros_like(args[0]),) + tuple(args[1:]), params)
    assert out.size and np.all(out == 0)


@pytest.mark.parametrize("trait, prim", trait_cases(T.FINITE_PRESERVING))
def test_finite_preserving_primitives_keep_huge_values_finite(trait, prim):
    args, params = example(prim)
    assert np.all(np.isfinite(apply(prim, (args[0] * 1e307,) + tuple(args[1:]), params)))


@pytest.mark.parametrize("trait, prim", trait_cases(T.ALWAYS_FINITE, T.FINITE_FROM_INTEGERS))
def test_always_finite_primitives_and_casts_from_integers_give_finite_values(trait, prim):
    args, params = example(prim)
    if trait is T.FINITE_FROM_INTEGERS:
        args = (np.array([np.iinfo(np.int64).max, 0, -7]),) + tuple(args[1:])
    assert np.all(np.isfinite(apply(prim, args, params)))


@pytest.mark.parametrize("trait, prim", trait_cases(T.BROADCASTING))
def test_broadcasting_primitives_take_operands_of_any_broadcastable_shape(trait, prim):
    args, params = example(prim)
    small = [a[:, :1] if k % 2 == 0 else a[:1, :] for k, a in enumerate(args)]
    out_aval = prim.abstract_eval(*[get_aval(a) for a in small], **params)
    assert out_aval.shape == np.broadcast_shapes(*[a.shape for a in small])
    full = [np.broadcast_to(a, out_aval.shape) for a in small]
    np.testing.assert_array_equal(apply(prim, small, params), apply(prim, full, params))


@pytest.mark.parametrize("trait, prim", trait_cases(T.RESHAPING))
def test_reshaping_primitives_keep_the_elements_in_order(trait, prim):
    args, params = example(prim)
    np.testing.assert_array_equal(apply(prim, args, params).ravel(), args[0].ravel())


@pytest.mark.parametrize("trait, prim", trait_cases(T.KEEPDIMS_MOVE))
def test_keepdims_moves_restore_a_reduced_axis_as_size_one(trait, prim):
    assert prim.name in KEEPDIMS_EXAMPLES, f"add a row for {prim.name} to KEEPDIMS_EXAMPLES"
    row = A.sum(axis=1)
    out = apply(prim, (row,), KEEPDIMS_EXAMPLES[prim.name])
    np.testing.assert_array_equal(out, A.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("trait, prim", trait_cases(T.PRODUCT))
def test_product_primitives_multiply(trait, prim):
    (a, b), params = example(prim)
    np.testing.assert_array_equal(apply(prim, (a, b), params), a * b)


@pytest.mark.parametrize("trait, prim", trait_cases(T.EXTREMUM_REDUCTION))
def test_extremum_reductions_return_an_element_of_each_reduced_row(trait, prim):
    (x,), params = example(prim)
    out = apply(prim, (x,), params)
    assert all(v in row for v, row in zip(out, x))


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_every_role_is_played_by_a_card(role):
    assert isinstance(role.primitive, Primitive)


def test_each_primitive_plays_one_role_at_most():
    """Every layer that needs "the product" reads the same role: no fact stated twice."""
    assert ROLES
    players = [role.primitive for role in ROLES]
    assert len(set(players)) == len(players), sorted(p.name for p in players)


def test_every_card_rewrite_is_a_documented_rule_of_a_known_pass():
    stages = {IDENTITIES, ALGEBRA, ZEROS, IDIOMS}
    for prim in all_primitives().values():
        for rule in prim.rewrites:
            assert isinstance(rule, Rewrite) and rule.stage in stages and rule.doc, (prim, rule)


def test_a_rule_added_to_a_card_runs_looked_up_by_object(monkeypatch):
    """log(exp x) -> x declared on log's card (for this test only) runs; so does an
    identity rule, and the passes see the change although they cache rules per card."""
    exp_p, log_p = all_primitives()["exp"], all_primitives()["log"]
    closed = trace(lambda x: P("log", P("exp", x)), X3)
    assert simplify_algebra(closed) is closed
    monkeypatch.setattr(log_p, "rewrites", log_p.rewrites + (
        rewrite("log(exp x) -> x", (defined_by(exp_p),), lambda rw, eqn, e: e.invars[0]),
        identity("log of an empty array", lambda eqn, x: x.aval.size == 0),
    ))
    after = simplify_algebra(closed)
    assert after.jaxpr.outvars == after.jaxpr.invars  # the log is gone; the exp is dead
    empty = trace(lambda x: P("log", x), np.ones(0))
    assert forward_identities(empty).jaxpr.eqns == []
    alone = trace(lambda x: P("log", x), X3)
    assert forward_identities(alone) is alone and simplify_algebra(alone) is alone


# --- a card that forgets a trait its values show fails by name -------------------------------

import test_prim_elementwise as EW  # noqa: E402

# Cards whose values show a trait they rightly do not declare: card -> why.
UNDECLARED = {
    "integer_pow": "zero-preserving only for y > 0: eliminate_zeros has its own rule for that",
    "convert_element_type": "zeros convert to zeros; zero_propagation's cast rule covers it",
    "sinc": "its derivatives of odd order map zeros to zeros, sinc itself and the even ones not",
}


def _single_output_rows(arity):
    return [r for r in EW.ROWS if len(r.domain) == arity and r.out is None
            and not r.prim.multiple_results and r.prim.name not in UNDECLARED]


@pytest.mark.parametrize("row", _single_output_rows(1), ids=lambda r: r.id)
def test_unary_cards_that_map_zeros_to_zeros_say_so(row):
    outs = []
    with np.errstate(all="ignore"):
        for dtype in row.dtypes:
            zeros = np.zeros(3, dtype)
            outs.append(np.asarray(bind(row.prim, zeros, **row.params)))
    keeps_zeros = all(o.shape == (3,) and np.all(o == 0) for o in outs)
    assert keeps_zeros == (T.ZERO_PRESERVING in row.prim.traits), (
        f"{row.prim.name} {'maps' if keeps_zeros else 'does not map'} zeros to zeros: "
        f"{'declare' if keeps_zeros else 'drop'} passes.traits.ZERO_PRESERVING on its card "
        "(or list it in UNDECLARED with the reason)")


@pytest.mark.parametrize("row", _single_output_rows(2), ids=lambda r: r.id)
def test_binary_cards_that_commute_say_so(row):
    agree = True
    with np.errstate(all="ignore"):
        for dtype in row.dtypes:
            a, b = (EW.make_args(row, dtype, ((4,), (4,)))[k] for k in (0, 1))
            if np.asarray(a).dtype != np.asarray(b).dtype:
                agree = False  # operands of different kinds cannot change places
                break
            x, y = bind(row.prim, a, b, **row.params), bind(row.prim, b, a, **row.params)
            agree &= bool(np.array_equal(x, y, equal_nan=True))
    assert agree == (T.COMMUTATIVE in row.prim.traits), (
        f"{row.prim.name} {'commutes' if agree else 'does not commute'} on its table's inputs: "
        f"{'declare' if agree else 'drop'} passes.traits.COMMUTATIVE on its card")
