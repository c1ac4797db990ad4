"""custom_jvp, custom_vjp and stop_gradient: known facts, every mode, composition, bad input."""

import doctest

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import custom_derivatives
from funcdiff.errors import (ConcretizationError, CustomRuleError, DifferentiationError,
                             InvalidArgumentError)
from funcdiff.test_util import check_grads

rng = np.random.default_rng(0)


# ---------------------------------------------------------------------------
# Fused softmax cross-entropy: cotangent p - y (divided by the batch for the mean)


def _logsumexp(logits):
    m = fnp.max(logits, axis=-1, keepdims=True)
    return m + fnp.log(fnp.sum(fnp.exp(logits - m), axis=-1, keepdims=True))


@fd.custom_vjp
def softmax_xent(logits, labels):
    return fnp.mean(fnp.sum(labels * (_logsumexp(logits) - logits), axis=-1))


def _xent_fwd(logits, labels):
    shifted = logits - fnp.max(logits, axis=-1, keepdims=True)
    e = fnp.exp(shifted)
    total = fnp.sum(e, axis=-1, keepdims=True)
    neg_logp = fnp.log(total) - shifted
    return fnp.mean(fnp.sum(labels * neg_logp, axis=-1)), (e / total, labels, neg_logp)


def _xent_bwd(res, g):
    p, labels, neg_logp = res
    batch = p.shape[0]
    return g * (p - labels) / batch, g * neg_logp / batch


softmax_xent.defvjp(_xent_fwd, _xent_bwd)


def composed_xent(logits, labels):
    softmax = fnp.exp(logits) / fnp.sum(fnp.exp(logits), axis=-1, keepdims=True)
    return -fnp.mean(fnp.sum(labels * fnp.log(softmax), axis=-1))


LOGITS = rng.standard_normal((4, 5))
LABELS = np.eye(5)[[0, 3, 1, 3]]


def test_fused_xent_equals_composed_when_well_conditioned():
    for f in (fd.grad, lambda h: fd.jit(fd.grad(h))):
        np.testing.assert_allclose(f(softmax_xent)(LOGITS, LABELS),
                                   fd.grad(composed_xent)(LOGITS, LABELS), atol=1e-15)
    np.testing.assert_allclose(fd.grad(softmax_xent, argnums=1)(LOGITS, LABELS),
                               fd.grad(composed_xent, argnums=1)(LOGITS, LABELS), atol=1e-15)
    np.testing.assert_allclose(fd.hessian(softmax_xent)(LOGITS, LABELS),
                               fd.hessian(composed_xent)(LOGITS, LABELS), atol=1e-14)


def test_fused_xent_is_exact_where_composed_overflows():
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 1000.0]])
    labels = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    with np.errstate(all="ignore"):
        assert not np.all(np.isfinite(fd.grad(composed_xent)(logits, labels)))
    g = fd.grad(softmax_xent)(logits, labels)
    p = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])
    np.testing.assert_array_equal(g, (p - labels) / 2)
    assert float(softmax_xent(logits, labels)) == pytest.approx(2000.0 + np.log(2) / 2)
    assert float(fd.value_and_grad(softmax_xent)(logits, labels)[0]) == pytest.approx(
        2000.0 + np.log(2) / 2)


def test_fused_xent_composes_with_vmap_and_check_grads():
    batched = fd.vmap(fd.grad(softmax_xent))(np.stack([LOGITS, 2 * LOGITS]),
                                             np.stack([LABELS, LABELS]))
    np.testing.assert_allclose(batched[1], fd.grad(composed_xent)(2 * LOGITS, LABELS),
                               atol=1e-15)
    np.testing.assert_allclose(fd.grad(lambda l: fd.vmap(softmax_xent)(l, LABELS[None]).sum())(
        LOGITS[None]), fd.grad(composed_xent)(LOGITS, LABELS)[None], atol=1e-15)
    check_grads(softmax_xent, (LOGITS, LABELS), order=2)


# ---------------------------------------------------------------------------
# Straight-through estimator, SiLU, the rule is what is used


@fd.custom_jvp
def round_ste(x):
    return fnp.round(x)


@round_ste.defjvp
def _round_ste_jvp(primals, tangents):
    return round_ste(primals[0]), tangents[0]


def test_straight_through_rounding_has_identity_gradient():
    x = np.array([0.2, 1.7, -2.4])
    np.testing.assert_array_equal(round_ste(x), np.round(x))
    for grad in (fd.grad, lambda f: fd.jit(fd.grad(f))):
        np.testing.assert_array_equal(grad(lambda v: fnp.sum(round_ste(v)))(x), np.ones(3))
    np.testing.assert_array_equal(fd.jacfwd(round_ste)(x), np.eye(3))
    np.testing.assert_array_equal(fd.vmap(fd.grad(round_ste))(x), np.ones(3))
    assert float(fd.grad(lambda v: fnp.sum(fnp.round(v)))(x).sum()) == 0.0  # autodiff: zero


@fd.custom_jvp
def silu(x):
    return x / (1.0 + fnp.exp(-x))


@silu.defjvp
def _silu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s = 1.0 / (1.0 + fnp.exp(-x))
    y = x * s
    return y, t * (s + y * (1.0 - s))


def test_silu_custom_rule_passes_check_grads_to_order_two():
    x = np.array([-2.1, -0.3, 0.4, 1.9])
    check_grads(silu, (x,), order=2)
    hess = fd.hessian(lambda v: fnp.sum(silu(v)))(x)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(np.diag(hess), s * (1 - s) * (2 + x * (1 - 2 * s)), rtol=1e-12)


@fd.custom_jvp
def sin_doubled_rule(x):
    return fnp.sin(x)


sin_doubled_rule.defjvp(lambda p, t: (fnp.sin(p[0]), 2.0 * fnp.cos(p[0]) * t[0]))


def test_the_custom_rule_is_used_in_every_mode():
    x, expected = 0.7, 2 * np.cos(0.7)
    assert fd.grad(sin_doubled_rule)(x) == pytest.approx(expected)
    assert fd.jvp(sin_doubled_rule, (x,), (1.0,))[1] == pytest.approx(expected)
    assert fd.vjp(sin_doubled_rule, x)[1](1.0)[0] == pytest.approx(expected)
    assert fd.linearize(sin_doubled_rule, x)[1](1.0) == pytest.approx(expected)
    assert fd.jit(fd.grad(sin_doubled_rule))(x) == pytest.approx(expected)
    assert fd.grad(fd.jit(sin_doubled_rule))(x) == pytest.approx(expected)
    assert fd.grad(fd.grad(sin_doubled_rule))(x) == pytest.approx(-2 * np.sin(x))
    np.testing.assert_allclose(fd.vmap(fd.grad(sin_doubled_rule))(np.array([x, 0.0])),
                               [expected, 2.0])
    np.testing.assert_allclose(fd.grad(lambda v: fd.vmap(sin_doubled_rule)(v).sum())(
        np.array([x, 0.0])), [expected, 2.0])
    assert "custom_jvp_call" in str(fd.make_jaxpr(sin_doubled_rule)(x))


def test_defjvps_one_rule_per_argument():
    @fd.custom_jvp
    def f(x, y):
        return x * fnp.sin(y)
    f.defjvps(lambda tx, ans, x, y: tx * fnp.sin(y),
              lambda ty, ans, x, y: 10.0 * ty)   # a deliberately different rule
    assert fd.grad(f, argnums=0)(2.0, 0.5) == pytest.approx(np.sin(0.5))
    assert fd.grad(f, argnums=1)(2.0, 0.5) == pytest.approx(10.0)
    assert fd.jvp(f, (2.0, 0.5), (1.0, 1.0))[1] == pytest.approx(np.sin(0.5) + 10.0)


def test_nondiff_argnums_and_pytrees():
    from functools import partial

    @partial(fd.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _apply_jvp(fn, primals, tangents):
        return apply(fn, primals[0]), 3.0 * tangents[0]
    assert fd.grad(lambda x: apply(fnp.sin, x))(1.0) == 3.0

    @fd.custom_vjp(nondiff_argnums=(1,))
    def scale(params, k):
        return {"y": params["a"] * k + params["b"]}
    scale.defvjp(lambda params, k: (scale(params, k), None),
                 lambda k, res, ct: ({"a": ct["y"] * k, "b": ct["y"]},))
    g = fd.grad(lambda p: fnp.sum(scale(p, 4.0)["y"]))({"a": np.ones(2), "b": np.ones(2)})
    np.testing.assert_array_equal(g["a"], [4.0, 4.0])
    np.testing.assert_array_equal(g["b"], [1.0, 1.0])


def test_closed_over_values_are_differentiated_by_autodiff():
    @fd.custom_jvp
    def f(x):
        return x * 1.0

    f.defjvp(lambda p, t: (f(p[0]), 5.0 * t[0]))

    def g(w, x):
        @fd.custom_jvp
        def h(x):
            return w * f(x)
        h.defjvp(lambda p, t: (h(p[0]), 7.0 * t[0]))
        return h(x)
    assert fd.grad(g, argnums=1)(2.0, 3.0) == 7.0   # the rule, for the argument
    assert fd.grad(g, argnums=0)(2.0, 3.0) == 3.0   # autodiff, for the closed-over w
    assert fd.jit(fd.grad(g, argnums=0))(2.0, 3.0) == 3.0
    np.testing.assert_array_equal(fd.vmap(g, in_axes=(0, None))(np.array([1.0, 2.0]), 3.0),
                                  [3.0, 6.0])

    def k(w, x):
        @fd.custom_vjp
        def h(x):
            return w * fnp.sin(x)
        h.defvjp(lambda x: (h(x), None), lambda res, ct: (7.0 * ct,))
        return h(x)
    assert fd.grad(k, argnums=1)(2.0, 0.3) == 7.0
    assert fd.grad(k, argnums=0)(2.0, 0.3) == pytest.approx(np.sin(0.3))
    assert fd.grad(lambda w: k(w, w))(2.0) == pytest.approx(7.0 + np.sin(2.0))


def test_eager_reverse_mode_linearizes_custom_jvp_at_the_concrete_values():
    """With no other transform active, grad linearizes the rule at the concrete values
    without staging the function; a rule that touches values on the tape it closes
    over takes the staged route, where autodiff differentiates the closure."""
    from funcdiff.interpreters import tape
    calls = {"fun": 0, "rule": 0}

    @fd.custom_jvp
    def f(x, y):
        calls["fun"] += 1
        return {"s": fnp.sin(x) * y}

    @f.defjvp
    def f_jvp(p, t):
        calls["rule"] += 1
        (x, y), (tx, ty) = p, t
        return {"s": fnp.sin(x) * y}, {"s": fnp.cos(x) * y * tx + fnp.sin(x) * ty}

    def loss(x, y):
        return fnp.sum(f(x, y)["s"] ** 2)
    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    got = fd.grad(loss, argnums=(0, 1))(x, y)
    assert calls == {"fun": 0, "rule": 1}
    with tape.disabled():
        staged = fd.grad(loss, argnums=(0, 1))(x, y)
    s = np.sin(x) * y
    for g, st, expected in zip(got, staged, (2 * s * np.cos(x) * y, 2 * s * np.sin(x))):
        np.testing.assert_allclose(g, st, rtol=1e-13)
        np.testing.assert_allclose(g, expected, rtol=1e-13)
    np.testing.assert_allclose(fd.jacrev(lambda x: f(x, y)["s"])(x), np.diag(np.cos(x) * y),
                               rtol=1e-13)

    def g(w, x):
        @fd.custom_jvp
        def h(x):
            return w * x
        h.defjvp(lambda p, t: (h(p[0]), 7.0 * t[0]))
        return h(x)
    assert fd.grad(lambda w: g(w, w))(2.0) == pytest.approx(9.0)   # 7 by the rule, + x


def test_a_custom_function_of_untraced_arguments_just_runs():
    """With no argument traced, no transform can ask for the rule: the function runs as
    it is (no staging, no custom call in a jaxpr) and what it closes over is
    differentiated by autodiff, in every mode."""
    c = np.array([0.3, 0.7])
    for decorate in ("jvp", "vjp"):
        def g(w):
            if decorate == "jvp":
                @fd.custom_jvp
                def h(x):
                    return w * fnp.sin(x)
                h.defjvp(lambda p, t: (h(p[0]), 7.0 * t[0]))
            else:
                @fd.custom_vjp
                def h(x):
                    return w * fnp.sin(x)
                h.defvjp(lambda x: (h(x), None), lambda res, ct: (7.0 * ct,))
            return fnp.sum(h(c))
        assert fd.grad(g)(2.0) == pytest.approx(np.sin(c).sum())
        assert fd.jvp(g, (2.0,), (1.0,))[1] == pytest.approx(np.sin(c).sum())
        assert fd.jit(fd.grad(g))(2.0) == pytest.approx(np.sin(c).sum())
        np.testing.assert_allclose(fd.vmap(fd.grad(g))(np.array([1.0, 2.0])),
                                   [np.sin(c).sum()] * 2)
        assert "custom" not in str(fd.make_jaxpr(g)(2.0))


def test_python_control_flow_in_the_function_works_eagerly_but_not_under_jit():
    @fd.custom_jvp
    def relu(x):
        return x if float(x) > 0 else 0.0 * x
    relu.defjvp(lambda p, t: (relu(p[0]), t[0] if float(p[0]) > 0 else 0.0 * t[0]))
    assert fd.grad(relu)(2.0) == 1.0 and fd.grad(relu)(-2.0) == 0.0
    with pytest.raises(ConcretizationError):
        fd.jit(relu)(2.0)


# ---------------------------------------------------------------------------
# custom_vjp: implicit differentiation of a fixed point, higher order, forward mode


@fd.custom_vjp
def fixed_point(W, b):
    """x* = tanh(W x* + b), by iterating to convergence (Python control flow)."""
    x = np.zeros(b.shape)
    for _ in range(500):
        x_new = fnp.tanh(W @ x + b)
        if float(fnp.max(fnp.abs(x_new - x))) < 1e-15:
            return x_new
        x = x_new
    return x


def _fixed_point_fwd(W, b):
    x = fixed_point(W, b)
    return x, (W, x)


def _fixed_point_bwd(res, g):
    # x = tanh(W x + b): (I - D W)^T u = g with D = diag(1 - x²), then pull u back to W, b
    W, x = res
    d = 1.0 - x * x
    u = fnp.linalg.solve(fnp.eye(x.shape[0]) - (d[:, None] * W).T, g)
    gb = d * u
    return fnp.outer(gb, x), gb


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_bwd)


def unrolled_fixed_point(W, b):
    x = fnp.zeros(b.shape)
    for _ in range(120):
        x = fnp.tanh(W @ x + b)
    return x


def test_implicit_differentiation_matches_unrolled():
    W, b = 0.3 * rng.standard_normal((5, 5)), rng.standard_normal(5)

    def loss(f):
        return lambda W, b: fnp.sum(f(W, b) ** 2) + fnp.sum(f(W, b)[:2])
    gi = fd.grad(loss(fixed_point), argnums=(0, 1))(W, b)
    gu = fd.grad(loss(unrolled_fixed_point), argnums=(0, 1))(W, b)
    for a, c in zip(gi, gu):
        np.testing.assert_allclose(a, c, atol=1e-12)
    # forward mode transposes bwd; second order differentiates bwd
    np.testing.assert_allclose(fd.jacfwd(fixed_point, argnums=1)(W, b),
                               fd.jacrev(unrolled_fixed_point, argnums=1)(W, b), atol=1e-12)
    np.testing.assert_allclose(fd.hessian(loss(fixed_point), argnums=1)(W, b),
                               fd.hessian(loss(unrolled_fixed_point), argnums=1)(W, b),
                               atol=1e-10)


@fd.custom_vjp
def sin_vjp(x):
    return fnp.sin(x)


sin_vjp.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda cos_x, g: (g * cos_x,))


def test_custom_vjp_every_mode_and_order():
    x = np.array([0.3, 1.1, -0.8])
    check_grads(sin_vjp, (x,), order=2)
    assert fd.grad(fd.grad(sin_vjp))(0.3) == pytest.approx(-np.sin(0.3))
    assert fd.grad(lambda v: fd.jvp(sin_vjp, (v,), (1.0,))[1])(0.3) == pytest.approx(-np.sin(0.3))
    np.testing.assert_allclose(fd.jvp(sin_vjp, (x,), (np.ones(3),))[1], np.cos(x))
    np.testing.assert_allclose(fd.jacfwd(sin_vjp)(x), np.diag(np.cos(x)))
    np.testing.assert_allclose(fd.linearize(sin_vjp, x)[1](np.ones(3)), np.cos(x))
    np.testing.assert_allclose(fd.jit(fd.grad(lambda v: sin_vjp(v).sum()))(x), np.cos(x))
    np.testing.assert_allclose(fd.vmap(fd.grad(sin_vjp))(x), np.cos(x))
    np.testing.assert_allclose(fd.grad(lambda v: fd.vmap(sin_vjp)(v).sum())(x), np.cos(x))
    np.testing.assert_allclose(fd.vmap(lambda v, t: fd.jvp(sin_vjp, (v,), (t,))[1])(x, x),
                               np.cos(x) * x)
    np.testing.assert_allclose(fd.grad(lambda v: fd.jit(sin_vjp)(v).sum())(x), np.cos(x))


def test_custom_vjp_with_batched_and_unbatched_arguments():
    @fd.custom_vjp
    def axpy(a, x):
        return a * x
    axpy.defvjp(lambda a, x: (a * x, (a, x)), lambda r, g: (fnp.sum(g * r[1]), g * r[0]))
    xs = rng.standard_normal((3, 4))
    ga = fd.vmap(fd.grad(lambda a, x: axpy(a, x).sum()), in_axes=(None, 0))(2.0, xs)
    np.testing.assert_allclose(ga, xs.sum(axis=1))
    gx = fd.grad(lambda a: fd.vmap(axpy, in_axes=(None, 0))(a, xs).sum())(2.0)
    assert gx == pytest.approx(xs.sum())


def test_eager_reverse_mode_records_custom_vjp_on_the_tape():
    """With no other transform active, grad runs fwd once on concrete values and records
    bwd as the node's pullback (the function itself is not run or staged); the result
    equals the staged route's, for every output and argument kind."""
    from funcdiff.interpreters import tape
    calls = {"fun": 0, "fwd": 0, "bwd": 0}

    @fd.custom_vjp(nondiff_argnums=(2,))
    def f(x, pair, power):
        calls["fun"] += 1
        return {"y": x ** power * pair[0], "n": fnp.argmax(x)}, pair[1] * 2.0

    def fwd(x, pair, power):
        calls["fwd"] += 1
        assert not isinstance(x, fd.core.Tracer)  # concrete values, not tracers
        return ({"y": x ** power * pair[0], "n": fnp.argmax(x)}, pair[1] * 2.0), (x, pair[0])

    def bwd(power, res, cts):
        calls["bwd"] += 1
        x, a = res
        out, g2 = cts
        return (out["y"] * power * x ** (power - 1) * a,
                (fnp.sum(out["y"] * x ** power), g2 * 2.0))
    f.defvjp(fwd, bwd)

    def loss(x, a, b):
        out, doubled = f(x, (a, b), 3)
        return fnp.sum(fnp.sin(out["y"])) + fnp.sum(doubled ** 2) + out["n"] * 0.0
    x, a, b = np.array([0.3, -0.7, 1.1]), np.float64(1.5), np.array([0.2, 0.4])
    got = fd.grad(loss, argnums=(0, 1, 2))(x, a, b)
    assert calls == {"fun": 0, "fwd": 1, "bwd": 1}
    with tape.disabled():
        staged = fd.grad(loss, argnums=(0, 1, 2))(x, a, b)
    for g, s in zip(got, staged):
        np.testing.assert_allclose(g, s, rtol=1e-13)
    np.testing.assert_allclose(got[0], np.cos(x ** 3 * a) * 3 * x ** 2 * a, rtol=1e-13)
    # an argument that is not differentiated: its cotangent from bwd is dropped
    g = fd.grad(loss)(x, a, b)
    np.testing.assert_allclose(g, got[0], rtol=1e-13)
    # jacrev's batched pass over the node, against forward mode
    jac = fd.jacrev(lambda x: f(x, (a, b), 3)[0]["y"])(x)
    np.testing.assert_allclose(jac, np.diag(3 * x ** 2 * a), rtol=1e-13)
    # a custom_vjp function called with no argument on the tape is just evaluated
    assert fd.grad(lambda c: c * f(x, (a, b), 2)[0]["y"][0])(2.0) == pytest.approx(x[0] ** 2 * a)


def test_forward_mode_through_a_nonlinear_bwd_suggests_custom_jvp():
    @fd.custom_vjp
    def f(x):
        return x
    f.defvjp(lambda x: (x, None), lambda res, g: (g if float(g) > 0 else -g,))
    assert fd.grad(f)(1.0) == 1.0
    with pytest.raises(DifferentiationError, match=r"custom_vjp function f.*custom_jvp"):
        fd.jvp(f, (1.0,), (1.0,))


# ---------------------------------------------------------------------------
# stop_gradient: zero in every mode and order


def test_stop_gradient_is_zero_in_every_mode_and_order():
    sg = fd.stop_gradient

    def f(x):
        return fnp.sum(x ** 2 + sg(x ** 3) * x)   # d/dx = 2x + x³ (the stopped factor)
    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(fd.grad(f)(x), 2 * x + x ** 3)
    np.testing.assert_allclose(fd.jvp(f, (x,), (np.ones(2),))[1], np.sum(2 * x + x ** 3))
    np.testing.assert_allclose(fd.vjp(f, x)[1](1.0)[0], 2 * x + x ** 3)
    np.testing.assert_allclose(fd.hessian(f)(x), np.diag([2.0, 2.0]))
    np.testing.assert_allclose(fd.jacfwd(fd.grad(f))(x), fd.jacrev(fd.grad(f))(x))
    np.testing.assert_allclose(fd.jvp(fd.grad(f), (x,), (np.ones(2),))[1], [2.0, 2.0])
    np.testing.assert_allclose(fd.vmap(fd.grad(f))(np.stack([x, 2 * x])),
                               np.stack([2 * x + x ** 3, 4 * x + 8 * x ** 3]))
    np.testing.assert_allclose(fd.jit(fd.grad(f))(x), 2 * x + x ** 3)
    assert fd.grad(lambda v: sg(v) * 3.0)(2.0) == 0.0
    assert fd.grad(fd.grad(lambda v: sg(v) ** 3 + v))(2.0) == 0.0
    assert float(fd.jvp(lambda v: sg(fnp.sin(v)), (1.0,), (1.0,))[1]) == 0.0
    np.testing.assert_array_equal(fd.jacrev(sg)(x), np.zeros((2, 2)))
    np.testing.assert_array_equal(fd.vmap(fd.grad(sg))(x), np.zeros(2))
    tree = sg({"a": np.ones(2), "b": 3.0})
    assert set(tree) == {"a", "b"}


# ---------------------------------------------------------------------------
# Bad input


def test_bwd_returning_the_wrong_number_of_cotangents():
    @fd.custom_vjp
    def mul(x, y):
        return x * y
    mul.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(CustomRuleError, match=r"bwd rule <lambda> of custom_vjp function mul "
                                              r"returned 1 cotangent\(s\).*2 differentiable"):
        fd.grad(mul)(1.0, 2.0)


def test_bwd_returning_a_wrong_shape_names_function_position_and_shape():
    @fd.custom_vjp
    def mul(x, y):
        return x * y

    def mul_bwd(res, g):
        return g * res[1], np.ones(2)
    mul.defvjp(lambda x, y: (x * y, (x, y)), mul_bwd)
    with pytest.raises(CustomRuleError, match=r"argument 1 returned by the bwd rule mul_bwd of "
                                              r"custom_vjp function mul has shape \(2,\).*"
                                              r"expected shape \(3,\)"):
        fd.grad(lambda x, y: fnp.sum(mul(x, y)))(np.ones(3), np.ones(3))


def test_bwd_returning_a_bare_array_and_fwd_returning_no_pair():
    @fd.custom_vjp
    def f(x):
        return 2.0 * x
    f.defvjp(lambda x: (2.0 * x, None), lambda res, g: 2.0 * g)
    with pytest.raises(CustomRuleError,
                       match="returned a (float64|ndarray).*tuple with one cotangent"):
        fd.grad(f)(1.0)
    f.defvjp(lambda x: 2.0 * x, lambda res, g: (2.0 * g,))
    with pytest.raises(CustomRuleError, match=r"fwd rule <lambda> of custom_vjp function f must "
                                              r"return a pair"):
        fd.grad(f)(1.0)


def test_custom_jvp_rule_with_mismatched_tangents():
    @fd.custom_jvp
    def pair(x):
        return x, 2.0 * x
    pair.defjvp(lambda p, t: (pair(p[0]), t[0]))
    with pytest.raises(CustomRuleError, match="tangent output of structure PyTreeDef.*primal "
                                              "output has structure PyTreeDef"):
        fd.jvp(pair, (1.0,), (1.0,))

    @fd.custom_jvp
    def f(x):
        return fnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), fnp.ones(5)))
    with pytest.raises(CustomRuleError, match=r"tangent output leaf 0.*shape \(5,\).*f64\[3\]"):
        fd.grad(lambda x: fnp.sum(f(x)))(np.ones(3))


def test_missing_rule_and_bad_arguments():
    @fd.custom_jvp
    def f(x):
        return x
    with pytest.raises(CustomRuleError, match=r"no derivative rule.*@f.defjvp"):
        f(1.0)
    g = fd.custom_jvp(lambda label, x: x)
    g.defjvp(lambda p, t: (p[1], t[1]))
    with pytest.raises(InvalidArgumentError, match="nondiff_argnums"):
        fd.grad(lambda x: g("label", x))(1.0)
    with pytest.raises(InvalidArgumentError, match="nondiff_argnums=.*called with 1"):
        h = fd.custom_jvp(lambda x: x, nondiff_argnums=(3,))
        h.defjvp(lambda *a: a[-2:])
        fd.grad(h)(1.0)


def test_module_doctests():
    results = [doctest.testmod(m, optionflags=doctest.NORMALIZE_WHITESPACE)
               for m in (custom_derivatives.common, custom_derivatives.jvp,
                         custom_derivatives.lin, custom_derivatives.vjp)]
    assert sum(r.attempted for r in results) >= 2 and sum(r.failed for r in results) == 0
