"""Structured control flow (fd.lax): cond, switch, while_loop, fori_loop, scan.

One table of representative programs drives the derivative checks (both
modes, order 2, eagerly), jit against eager, reverse mode under jit, and vmap
against a Python loop. Targeted tests follow: only one branch runs, closures
over outer tracers, perturbation confusion, Newton solves against the implicit
function theorem, batched predicates, printing, bad input and doctests.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import lax
from funcdiff.errors import (ControlFlowTypeError, DifferentiationError, FunctionalDiffError,
                             InvalidArgumentError, ShapeError)
from funcdiff.ir import check_jaxpr
from funcdiff.primitives import control_flow
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)


def _close(a, b, tol=1e-9):
    la, lb = fd.tree_util.tree_flatten(a)[0], fd.tree_util.tree_flatten(b)[0]
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Representative programs: (name, function, args, primitive it must stage)


def cond_sides(x):
    return lax.cond(fnp.sum(x) > 0, lambda v: fnp.sin(v) * v, lambda v: fnp.exp(v) * v[0], x)


def cond_pytree(x, w):
    def yes(ops):
        v, p = ops
        return {"a": v * p["s"], "b": fnp.tanh(v).sum()}

    def no(ops):
        v, p = ops
        return {"a": v ** 2, "b": p["s"] * v[0]}
    out = lax.cond(w > 0.5, yes, no, (x, {"s": w}))
    return out["a"].sum() * out["b"]


def switch3(x):
    branches = [lambda v: fnp.sin(v), lambda v: v ** 3, lambda v: fnp.cos(v) * v]
    return lax.switch(fnp.argmax(x), branches, x)


def sqrt_newton(a):
    step = lambda x: 0.5 * (x + a / x)  # noqa: E731
    return lax.while_loop(lambda x: fnp.abs(step(x) - x) > 1e-12, step, a)


def while_pytree(x, w):
    def body(c):
        i, v = c
        return i + 1, fnp.tanh(w * v) + x
    return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


def fori_concrete(x):
    return lax.fori_loop(0, 4, lambda i, v: v * fnp.cos(i * v) + 0.1, x)


def fori_traced(x, n):
    return lax.fori_loop(0, n, lambda i, v: fnp.sin(v) + v * 0.5, x)


def rnn(h0, xs, w):
    def cell(h, x):
        h = fnp.tanh(w * h + x)
        return h, h.sum()
    return lax.scan(cell, h0, xs)


def scan_reverse_pytree(c0, xs):
    def body(c, x):
        a, b = c
        new = (fnp.sin(a) + x["u"], b * fnp.cos(x["v"]))
        return new, {"p": a * b, "q": fnp.tanh(x["u"])}
    return lax.scan(body, c0, xs, reverse=True)


def nested(x, a):
    """A scan inside a cond inside a while."""
    def inner(v):
        return lax.scan(lambda c, _: (fnp.sin(c) * a + 0.1 * c, None), v, None, length=3)[0]

    def body(c):
        i, v = c
        return i + 1, lax.cond(v.sum() > 0, inner, lambda v: v * a, v)
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def mapped(x):
    return lax.map(lambda row: fnp.sum(fnp.sin(row) * row), x)


N3 = np.int64(3)
PROGRAMS = [
    # name, f, args, staged primitive, batched arg (vmap over arg 0 with this leading size)
    ("cond_true_side", cond_sides, (np.array([0.3, 0.7]),), "cond"),
    ("cond_false_side", cond_sides, (np.array([-0.3, -0.7]),), "cond"),
    ("cond_pytree", cond_pytree, (np.array([0.3, -0.2]), 0.8), "cond"),
    ("switch3", switch3, (np.array([0.2, 0.9, -0.4]),), "cond"),
    ("while_newton", sqrt_newton, (2.5,), "while"),
    ("while_pytree", while_pytree, (np.array([0.1, -0.3]), 0.7), "while"),
    ("fori_concrete", fori_concrete, (np.array([0.4, 0.9]),), "scan"),
    ("fori_traced", fori_traced, (np.array([0.4, 0.9]), N3), "while"),
    ("scan_rnn", rnn, (np.array([0.1, 0.2]), RNG.standard_normal((5, 2)), 0.6), "scan"),
    ("scan_reverse_pytree", scan_reverse_pytree,
     ((np.array([0.3, 0.1]), np.array([0.5, -0.4])),
      {"u": RNG.standard_normal((4, 2)), "v": RNG.standard_normal((4, 2))}), "scan"),
    ("nested", nested, (np.array([0.2, 0.4, -0.1]), 0.8), "while"),
    ("map", mapped, (RNG.standard_normal((3, 2)),), "scan"),
]
IDS = [p[0] for p in PROGRAMS]


def _float_argnums(args):
    return tuple(i for i, a in enumerate(args)
                 if np.asarray(fd.tree_util.tree_flatten(a)[0][0]).dtype.kind == "f")


def _scalar_loss(f, args):
    nums = _float_argnums(args)

    def loss(*dyn):
        full = list(args)
        for i, d in zip(nums, dyn):
            full[i] = d
        return sum(fnp.sum(fnp.sin(leaf)) for leaf in fd.tree_util.tree_flatten(f(*full))[0])
    return loss, tuple(args[i] for i in nums)


@pytest.mark.parametrize("name,f,args,prim", PROGRAMS, ids=IDS)
def test_check_grads_order2_both_modes(name, f, args, prim):
    loss, dyn = _scalar_loss(f, args)
    check_grads(loss, dyn, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,f,args,prim", PROGRAMS, ids=IDS)
def test_jit_equals_eager_and_stages_the_primitive(name, f, args, prim):
    _close(fd.jit(f)(*args), f(*args), 1e-12)
    jaxpr = fd.make_jaxpr(f)(*args)
    check_jaxpr(jaxpr.jaxpr)
    assert f"= {prim}[" in str(jaxpr)


@pytest.mark.parametrize("name,f,args,prim", PROGRAMS, ids=IDS)
def test_reverse_and_forward_mode_under_jit(name, f, args, prim):
    loss, dyn = _scalar_loss(f, args)
    nums = tuple(range(len(dyn)))
    expected = fd.grad(loss, argnums=nums)(*dyn)
    _close(fd.jit(fd.grad(loss, argnums=nums))(*dyn), expected)
    _close(fd.grad(fd.jit(loss), argnums=nums)(*dyn), expected)
    check_jaxpr(fd.make_jaxpr(fd.grad(loss, argnums=nums))(*dyn).jaxpr)
    tangents = tuple(fd.tree_util.tree_map(lambda x: np.ones_like(x), d) for d in dyn)
    _close(fd.jit(lambda *a: fd.jvp(loss, a, tangents))(*dyn), fd.jvp(loss, dyn, tangents))


@pytest.mark.parametrize("name,f,args,prim", PROGRAMS, ids=IDS)
def test_vmap_equals_loop(name, f, args, prim):
    first = args[0]
    leaves, tree = fd.tree_util.tree_flatten(first)
    # members on both sides of every branch; sqrt_newton needs positive inputs
    scale = (1.0, 0.5, 2.0) if f is sqrt_newton else (1.0, 0.5, -1.0)
    stacked = fd.tree_util.tree_unflatten(tree, [np.stack([scale[0] * l, scale[1] * l - 0.3 * (
        scale[2] < 0) + 0.3 * (scale[2] > 0), scale[2] * l]) for l in leaves])
    members = [fd.tree_util.tree_unflatten(tree, [np.asarray(s)[k] for s in
                                                  fd.tree_util.tree_flatten(stacked)[0]])
               for k in range(3)]
    in_axes = (0,) + (None,) * (len(args) - 1)
    batched = fd.vmap(f, in_axes=in_axes)(stacked, *args[1:])
    loop = [f(m, *args[1:]) for m in members]
    for k, expected in enumerate(loop):
        _close(fd.tree_util.tree_map(lambda b: np.asarray(b)[k], batched), expected)
    loss, _ = _scalar_loss(f, args)
    g = fd.vmap(fd.grad(lambda x: loss(x, *[args[i] for i in _float_argnums(args)[1:]])))
    batched_grads = g(stacked)
    for k, m in enumerate(members):
        expected = fd.grad(lambda x: loss(x, *[args[i] for i in _float_argnums(args)[1:]]))(m)
        _close(fd.tree_util.tree_map(lambda b: np.asarray(b)[k], batched_grads), expected)


# ---------------------------------------------------------------------------
# cond and switch


def test_only_the_chosen_branch_runs_eagerly_and_is_differentiated():
    def f(x):  # the untaken branch would raise under errstate(all="raise")
        return lax.cond(x > 0, lambda v: v * 3.0, lambda v: fnp.log(v - 10.0), x)
    with np.errstate(all="raise"):
        assert float(f(2.0)) == 6.0
        assert float(fd.grad(f)(2.0)) == 3.0
        assert float(fd.jvp(f, (2.0,), (1.0,))[1]) == 3.0


def test_batched_predicate_selects_between_both_branches():
    f = lambda x: lax.cond(x > 0, lambda v: v * 2.0, lambda v: -v ** 2, x)  # noqa: E731
    xs = np.array([-2.0, -0.5, 0.5, 3.0])
    np.testing.assert_allclose(fd.vmap(f)(xs), np.where(xs > 0, 2 * xs, -xs ** 2))
    np.testing.assert_allclose(fd.vmap(fd.grad(f))(xs), np.where(xs > 0, 2.0, -2 * xs))
    assert "select" in str(fd.make_jaxpr(fd.vmap(f))(xs))


def test_switch_clamps_and_batches_its_index():
    fs = [lambda v: v + 1.0, lambda v: v * 10.0, lambda v: -v]
    idx = np.array([-3, 0, 1, 2, 9])
    x = np.arange(5.0)
    out = fd.vmap(lambda i, v: lax.switch(i, fs, v))(idx, x)
    expected = [fs[min(max(i, 0), 2)](v) for i, v in zip(idx, x)]
    np.testing.assert_allclose(out, expected)
    assert float(lax.switch(np.int32(7), fs, 2.0)) == -2.0
    assert float(lax.switch(0, fs[:1], 2.0)) == 3.0  # one branch: called directly


def test_cond_with_no_operands_and_closures():
    a = np.array([1.0, 2.0])
    assert lax.cond(False, lambda: a * 2.0, lambda: a + 1.0).tolist() == [2.0, 3.0]
    g = fd.grad(lambda s: lax.cond(s > 0, lambda: (a * s).sum(), lambda: s ** 2))
    assert float(g(1.5)) == 3.0 and float(fd.jit(g)(-1.5)) == -3.0


def test_cond_transpose_and_linearize_under_jit():
    f = fd.jit(lambda x: lax.cond(x[0] > 0, lambda v: v * fnp.sin(v), lambda v: v[::-1] * 2.0, x))
    x = np.array([0.4, -1.1])
    y, f_jvp = fd.linearize(f, x)
    J = fd.jacfwd(f)(x)
    np.testing.assert_allclose(f_jvp(np.array([1.0, 0.0])), J[:, 0])
    np.testing.assert_allclose(fd.jacrev(f)(x), J)


# ---------------------------------------------------------------------------
# Loops


def test_closure_over_outer_tracers_in_bodies():
    scan_pow = lambda a: lax.scan(lambda c, x: (c * a, None), 1.0, None, length=3)[0]  # noqa
    assert float(fd.grad(scan_pow)(2.0)) == 12.0
    assert float(fd.jvp(scan_pow, (2.0,), (1.0,))[1]) == 12.0
    assert float(fd.grad(fd.grad(scan_pow))(2.0)) == 12.0
    np.testing.assert_allclose(fd.vmap(scan_pow)(np.array([1.0, 2.0])), [1.0, 8.0])
    np.testing.assert_allclose(fd.vmap(fd.grad(scan_pow))(np.array([1.0, 2.0])), [3.0, 12.0])
    grow = lambda a: lax.while_loop(lambda c: c < 10.0, lambda c: c * a, 1.0)  # noqa: E731
    assert float(fd.grad(grow)(3.0)) == 27.0  # 1 -> 3 -> 9 -> 27 = a ** 3
    assert float(fd.jacfwd(grow)(3.0)) == 27.0
    assert float(fd.jit(fd.grad(grow))(3.0)) == 27.0


def test_no_perturbation_confusion_through_loops():
    def f(x):
        inner = lambda y: lax.scan(lambda c, _: (c + x * y, None), 0.0, None, length=2)[0]  # noqa
        return x * fd.grad(inner)(1.0)
    assert float(fd.grad(f)(1.0)) == 4.0  # f(x) = 2 x ** 2


def test_grad_of_newton_solve_matches_implicit_function_theorem():
    A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 4.0]])
    b = np.array([1.0, -2.0, 0.5])

    def g(x, theta):  # solve g(x, theta) = 0 for x
        return A @ x + theta * fnp.tanh(x) - b

    def solve(theta):
        def step(c):
            x, _ = c
            J = A + theta * fnp.diag(1.0 - fnp.tanh(x) ** 2)
            dx = fnp.linalg.solve(J, g(x, theta))
            return x - dx, fnp.max(fnp.abs(dx))
        return lax.while_loop(lambda c: c[1] > 1e-13, step, (np.zeros(3), 1.0))[0]

    theta = 0.7
    x_star = solve(theta)
    np.testing.assert_allclose(g(x_star, theta), 0.0, atol=1e-12)
    J = A + theta * np.diag(1.0 - np.tanh(x_star) ** 2)
    implicit = -np.linalg.solve(J, np.tanh(x_star))  # dx*/dtheta
    np.testing.assert_allclose(fd.jacrev(solve)(theta), implicit, rtol=1e-10)
    np.testing.assert_allclose(fd.jacfwd(solve)(theta), implicit, rtol=1e-10)
    np.testing.assert_allclose(fd.jit(fd.jacrev(solve))(theta), implicit, rtol=1e-10)


def test_while_reverse_mode_under_jit_reruns_the_loop():
    xs = np.array([2.0, 4.0, 9.0])  # (at 1.0 the loop runs no step: the program is x -> x)
    expected = 0.5 / np.sqrt(xs)
    np.testing.assert_allclose(fd.jit(fd.vmap(fd.grad(sqrt_newton)))(xs), expected)
    np.testing.assert_allclose(fd.vmap(fd.grad(fd.jit(sqrt_newton)))(xs), expected)
    np.testing.assert_allclose(fd.jit(fd.jacrev(fd.vmap(sqrt_newton)))(xs), np.diag(expected))
    jaxpr = fd.make_jaxpr(fd.grad(sqrt_newton))(4.0)
    check_jaxpr(jaxpr.jaxpr)
    text = str(jaxpr)
    assert "while_cotangent[" in text and "any_in_batch" not in text
    # second order under jit is the documented limit; eagerly it works
    assert abs(float(fd.hessian(sqrt_newton)(4.0)) + 0.25 / 8) < 1e-9
    with pytest.raises(DifferentiationError, match="outside jit"):
        fd.jit(fd.hessian(sqrt_newton))(4.0)


def test_batched_while_predicate_freezes_finished_members():
    def count_to(limit):
        return lax.while_loop(lambda c: c[0] < limit, lambda c: (c[0] + 1.0, c[1] * 1.5),
                              (0.0, 1.0))
    limits = np.array([0.0, 1.0, 3.0, 6.0])
    steps, values = fd.vmap(count_to)(limits)
    np.testing.assert_allclose(steps, limits)
    np.testing.assert_allclose(values, 1.5 ** limits)
    grads = fd.vmap(fd.grad(lambda x: count_to(3.0)[1] * x + lax.while_loop(
        lambda c: c < x, lambda c: c + 1.0, 0.0)))(np.array([0.5, 2.5]))
    np.testing.assert_allclose(grads, [1.5 ** 3, 1.5 ** 3])


def test_fori_loop_lowers_to_scan_with_concrete_bounds_and_while_otherwise():
    body = lambda i, v: v * 2.0 + i  # noqa: E731
    assert "= scan[" in str(fd.make_jaxpr(lambda x: lax.fori_loop(0, 3, body, x))(1.0))
    traced = fd.make_jaxpr(lambda x, n: lax.fori_loop(0, n, body, x))(1.0, N3)
    assert "= while[" in str(traced)
    assert float(lax.fori_loop(2, 5, body, 1.0)) == 1.0 * 8 + 2 * 4 + 3 * 2 + 4
    assert float(lax.fori_loop(5, 2, body, 1.0)) == 1.0  # empty range
    traced_n = fd.jit(lambda n: lax.fori_loop(0, n, body, 1.0))
    assert float(traced_n(N3)) == ((1.0 * 2 + 0) * 2 + 1) * 2 + 2


def test_scan_edge_cases():
    carry, ys = lax.scan(lambda c, x: (c + x, c * x), np.ones(2), np.zeros((0, 2)))
    assert carry.tolist() == [1.0, 1.0] and ys.shape == (0, 2)
    c32, ys32 = lax.scan(lambda c, x: (c * x, c), np.float32(1.0), np.ones(3, np.float32))
    assert c32.dtype == np.float32 and ys32.dtype == np.float32
    g = fd.grad(lambda x: lax.scan(lambda c, xi: (c * xi, None), 1.0, x)[0])(np.array([2.0, 3.0]))
    np.testing.assert_allclose(g, [3.0, 2.0])
    cs = lambda xs: lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)[1]  # noqa: E731
    np.testing.assert_allclose(fd.linear_transpose(cs, np.ones(3))(np.ones(3))[0], [3, 2, 1])
    carry_i, _ = lax.scan(lambda c, x: (c + 1, None), 0, None, length=4)  # integer carry
    assert int(carry_i) == 4


def test_make_jaxpr_prints_sub_programs_indented():
    text = str(fd.make_jaxpr(nested)(np.ones(3), 0.5))
    assert "while[body_jaxpr=\n" in text and "cond[branches=(\n" in text
    assert "scan[jaxpr=\n" in text and "length=3 num_carry=1" in text
    for line in text.splitlines()[1:-1]:
        assert line.startswith("    ")


def test_costs_are_reported():
    from funcdiff.passes.pipeline import program_cost
    cost = program_cost(fd.make_jaxpr(lambda x: lax.scan(lambda c, v: (c * v, None), 1.0, x))(
        np.ones(10)))
    assert cost["flops"] == 10


# ---------------------------------------------------------------------------
# Bad input: each names the function and shows both types

BAD = [
    (lambda: lax.cond(True, lambda x: x, lambda x: x.astype(np.float32), np.ones(3)),
     ControlFlowTypeError, r"cond: .*f64\[3\] in true_fun's output and f32\[3\] in false_fun"),
    (lambda: lax.cond(True, lambda x: (x, x), lambda x: x, 1.0),
     ControlFlowTypeError, r"cond: .*structure.*\(\*, \*\).*PyTreeDef\(\*\)"),
    (lambda: lax.cond(np.array([True, False]), lambda x: x, lambda x: x, 1.0),
     ControlFlowTypeError, r"cond needs a scalar predicate, but pred is bool\[2\]"),
    (lambda: lax.cond(1.0, lambda x: x, lambda x: x, 1.0),
     ControlFlowTypeError, r"cond needs a boolean predicate, but pred is f64\[\]"),
    (lambda: lax.switch(1.0, [lambda x: x, lambda x: x], 1.0),
     ControlFlowTypeError, r"switch needs a scalar integer index, but index is f64\[\]"),
    (lambda: lax.switch(0, [lambda x: x, lambda x: x * np.ones(2)], 1.0),
     ControlFlowTypeError, r"switch: .*f64\[\] in branches\[0\]'s output and f64\[2\] in branches"),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4))),
     ShapeError, r"scan: .*leaf 0: f64\[3\], leaf 1: f64\[4\]"),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=4),
     ShapeError, r"scan got length=4, but the xs have leading size 3"),
    (lambda: lax.scan(lambda c, x: (fnp.stack([c, x]), x), 0.0, np.ones(3)),
     ControlFlowTypeError, r"scan: .*f64\[\] in init and f64\[2\] in the carry f returns"),
    (lambda: lax.scan(lambda c, x: c, 0.0, np.ones(3)),
     ControlFlowTypeError, r"scan: f must return a pair \(carry, y\)"),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0),
     ControlFlowTypeError, r"while_loop: .*i64\[\] in init_val and f64\[\] in body_fun's output"),
    (lambda: lax.while_loop(lambda c: c, lambda c: c + 1.0, 0.0),
     ControlFlowTypeError, r"while_loop: cond_fun must return a boolean scalar.*f64\[\]"),
    (lambda: lax.fori_loop(0, 3, lambda i, c: c * np.ones(2), 1.0),
     ControlFlowTypeError, r"fori_loop: .*f64\[\] in init_val and f64\[2\] in body_fun"),
    (lambda: lax.fori_loop(0.0, 3, lambda i, c: c, 1.0),
     ControlFlowTypeError, r"fori_loop needs integer scalar bounds, but lower is f64\[\]"),
    (lambda: lax.cond(True, lambda x: x, lambda x: x, "text"),
     InvalidArgumentError, r"cond: operand leaf 0 is a str"),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, None),
     InvalidArgumentError, r"scan needs xs"),
]


@pytest.mark.parametrize("call,error,pattern", BAD)
def test_bad_input_raises_clear_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()
    with pytest.raises(FunctionalDiffError):  # also under jit, where values are abstract
        fd.jit(lambda _: call())(0.0)


def test_primitive_level_type_checks():
    with pytest.raises(ControlFlowTypeError, match="scalar integer index"):
        control_flow.cond_p.abstract_eval(fd.core.ShapedArray((), np.dtype(float)),
                                          branches=())


# ---------------------------------------------------------------------------
# Docstrings


@pytest.mark.parametrize("module", [lax, control_flow])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and (module is control_flow or result.attempted >= 8)


def test_loop_bodies_run_eagerly_are_interpreted_until_compiling_pays():
    """Eager control flow traces a new body on each call: a short loop interprets
    it (compiling would cost more than the loop), a long one, or a body seen
    before (a loop inside a jitted function), is compiled."""
    from funcdiff.core import ShapedArray
    from funcdiff.compiler import evaluator
    from funcdiff.interpreters.staging import trace_to_jaxpr
    f64 = ShapedArray((3,), np.dtype("float64"))
    body = trace_to_jaxpr(lambda x: [fnp.sin(x) * 2.0 + x], [f64])
    x = np.array([0.1, 0.2, 0.3])
    once = evaluator.runner(body, "body", 1)
    assert body not in evaluator._compiled  # interpreted
    np.testing.assert_array_equal(once(x)[0], np.sin(x) * 2.0 + x)
    again = evaluator.runner(body, "body", 1)  # seen before: compiled
    assert body in evaluator._compiled
    np.testing.assert_array_equal(again(x)[0], once(x)[0])
    long_loop = trace_to_jaxpr(lambda x: [fnp.cos(x)], [f64])
    evaluator.runner(long_loop, "body", evaluator.COMPILE_AFTER)
    assert long_loop in evaluator._compiled
    # and the loops give the same values either way
    step = lambda c: (fnp.sin(c[0]) * 1.1, c[1] + 1)  # noqa: E731
    for n in (3, evaluator.COMPILE_AFTER):  # interpreted throughout; compiled part way
        got = lax.while_loop(lambda c: c[1] < n, step, (x, 0))[0]
        want = fd.jit(lambda x: lax.while_loop(lambda c: c[1] < n, step, (x, 0))[0])(x)
        np.testing.assert_allclose(got, want, rtol=1e-15)
