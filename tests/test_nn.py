"""Tests of funcdiff.nn and funcdiff.nn.initializers.

A table of activations and softmax-family functions (funcdiff function, numpy
reference written out by hand, input sampler) drives values, derivatives to
order 2 in both modes, float32 and vmap. Then: derivatives at kinks, stability
for logits of magnitude 1e3, one_hot, cross_entropy (values, the exact gradient
softmax - onehot, label smoothing, errors), layer_norm and rms_norm (values and
the LayerNorm invariances), attention (against a numpy reference, masks,
gradients, vmap, jit), initialisers and the docstring examples.
"""
import doctest
import math
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.nn as nn
from funcdiff.errors import (AxisError, DTypeError, IndexOutOfBoundsError,
                             InvalidArgumentError, ShapeError)
from funcdiff.nn import initializers
from funcdiff.test_util import check_grads


def U(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def AWAY(lo, hi):
    """Magnitudes in [lo, hi] with random signs: clear of a kink at 0."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def N(rng, shape):
    return rng.standard_normal(shape)


def np_erf(x):
    return np.vectorize(math.erf)(x)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_softplus(x):
    return np.logaddexp(x, 0.0)


class Row(NamedTuple):
    name: str
    fun: Callable
    ref: Callable
    domain: Callable
    shape: tuple = (5,)


ROWS = [
    Row("relu", nn.relu, lambda x: np.maximum(x, 0), AWAY(0.1, 3)),
    Row("relu6", nn.relu6, lambda x: np.clip(x, 0, 6), U(0.2, 5.8)),
    Row("relu6_negative", nn.relu6, lambda x: np.clip(x, 0, 6), U(-3, -0.2)),
    Row("leaky_relu", lambda x: nn.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x),
        AWAY(0.1, 3)),
    Row("elu", lambda x: nn.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)),
        AWAY(0.1, 3)),
    Row("selu", nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x)), AWAY(0.1, 3)),
    Row("gelu_exact", lambda x: nn.gelu(x, approximate=False),
        lambda x: 0.5 * x * (1 + np_erf(x / np.sqrt(2))), U(-4, 4)),
    Row("gelu_tanh", nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(
        np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), U(-4, 4)),
    Row("sigmoid", nn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), U(-6, 6)),
    Row("silu", nn.silu, lambda x: x / (1 + np.exp(-x)), U(-6, 6)),
    Row("swish", nn.swish, lambda x: x / (1 + np.exp(-x)), U(-6, 6)),
    Row("softplus", nn.softplus, np_softplus, U(-6, 6)),
    Row("log_sigmoid", nn.log_sigmoid, lambda x: -np_softplus(-x), U(-6, 6)),
    Row("softmax", nn.softmax, np_softmax, N, (2, 4)),
    Row("softmax_axis0", lambda x: nn.softmax(x, axis=0), lambda x: np_softmax(x, 0), N, (3, 2)),
    Row("log_softmax", nn.log_softmax, np_log_softmax, N, (2, 4)),
    Row("logsumexp", lambda x: nn.logsumexp(x, axis=-1),
        lambda x: np.log(np.exp(x).sum(axis=-1)), N, (2, 4)),
    Row("layer_norm", nn.layer_norm, lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(
        x.var(-1, keepdims=True) + 1e-5), N, (2, 4)),
    Row("layer_norm_axes", lambda x: nn.layer_norm(x, axis=(0, 2), eps=1e-3),
        lambda x: (x - x.mean((0, 2), keepdims=True)) / np.sqrt(
            x.var((0, 2), keepdims=True) + 1e-3), N, (2, 3, 2)),
    Row("rms_norm", nn.rms_norm, lambda x: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6),
        N, (2, 4)),
]
IDS = [r.name for r in ROWS]


def sample(row, seed=0, dtype=np.float64):
    return row.domain(np.random.default_rng(seed), row.shape).astype(dtype)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_values_match_reference(row):
    x = sample(row)
    np.testing.assert_allclose(row.fun(x), row.ref(x), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_derivatives_order_2_both_modes(row):
    check_grads(row.fun, (sample(row, seed=1),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_float32_stays_float32(row):
    x = sample(row, dtype=np.float32)
    out = row.fun(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, row.ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
    assert fd.grad(lambda x: np.sum(row.fun(x)))(x).dtype == np.float32


@pytest.mark.parametrize("row", ROWS[::3], ids=IDS[::3])
def test_vmap_matches_loop(row):
    rng = np.random.default_rng(2)
    xs = np.stack([row.domain(rng, row.shape) for _ in range(3)])
    np.testing.assert_allclose(fd.vmap(row.fun)(xs), np.stack([row.fun(x) for x in xs]),
                               rtol=1e-14, atol=1e-15)


def test_integer_input_becomes_float64():
    out = nn.relu(np.array([-1, 2]))
    assert out.dtype == np.float64 and out.tolist() == [0.0, 2.0]


# --- kinks, smoothness and stability --------------------------------------------------------


def test_derivatives_at_kinks_follow_jax():
    d = lambda f, x: float(fd.grad(f)(x))  # noqa: E731
    assert d(nn.relu, 0.0) == 0.0 and d(nn.relu, 1.0) == 1.0
    assert d(nn.relu6, 0.0) == 0.0 and d(nn.relu6, 6.0) == 0.0 and d(nn.relu6, 3.0) == 1.0
    assert d(nn.leaky_relu, 0.0) == 1.0 and d(nn.leaky_relu, -1.0) == 0.01
    assert d(nn.elu, 0.0) == 1.0  # exp(0) from the left as well: elu is C1
    assert np.isnan(nn.relu(np.nan)) and np.isnan(nn.relu6(np.nan))


def test_softplus_and_log_sigmoid_exact_at_zero_and_stable_far_out():
    # derivatives of every order are those of the analytic function, even at 0
    assert float(fd.grad(nn.softplus)(0.0)) == 0.5
    assert float(fd.grad(fd.grad(nn.softplus))(0.0)) == 0.25
    np.testing.assert_allclose(float(fd.grad(fd.grad(fd.grad(nn.softplus)))(0.0)), 0.0, atol=1e-16)
    check_grads(nn.softplus, (np.array([0.0, -0.0, 1e-9]),), order=2)
    x = np.array([-1e3, -40.0, 40.0, 1e3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(nn.softplus(x), np_softplus(x), rtol=1e-15)
        np.testing.assert_allclose(nn.log_sigmoid(x), -np_softplus(-x), rtol=1e-15)
        g = fd.vmap(fd.grad(nn.softplus))(x)
        h = fd.vmap(fd.grad(fd.grad(nn.log_sigmoid)))(x)
        ge = fd.vmap(fd.grad(nn.elu))(x)
    np.testing.assert_allclose(g, np.exp(-np.logaddexp(0.0, -x)), rtol=1e-15)
    assert np.all(np.isfinite(h)) and np.all(np.isfinite(ge))


@pytest.mark.parametrize("fun", [nn.softmax, nn.log_softmax, lambda x: nn.logsumexp(x, axis=-1),
                                 lambda x: nn.cross_entropy(x, np.array([0, 2]))])
def test_softmax_family_derivatives_finite_at_logits_1e3(fun):
    x = np.array([[1e3, -1e3, 0.5e3], [-1e3, -1e3, 1e3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fun(x)
        _, pullback = fd.vjp(fun, x)
        (g,) = pullback(np.ones_like(out))
        _, t = fd.jvp(fun, (x,), (np.ones_like(x),))
        h = fd.hessian(lambda x: np.sum(fun(x)))(x)
    for v in (out, g, t, h):
        assert np.all(np.isfinite(v))


def test_softmax_vjp_sums_to_zero_against_p():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5)) * 3
    p, pullback = fd.vjp(nn.softmax, x)
    for _ in range(3):
        (g,) = pullback(rng.standard_normal((4, 5)))
        np.testing.assert_allclose(g.sum(axis=-1), 0.0, atol=1e-15)
    # the Jacobian is diag(p) - p p^T: it annihilates constants from both sides
    np.testing.assert_allclose(pullback(np.ones((4, 5)))[0], 0.0, atol=1e-15)
    _, t = fd.jvp(nn.softmax, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, 0.0, atol=1e-15)


# --- one_hot ----------------------------------------------------------------------------------


def test_one_hot():
    labels = np.array([[0, 2], [1, 5]])
    out = nn.one_hot(labels, 3)
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1, 0]].reshape(2, 2, 3) * np.array(
        [[[1], [1]], [[1], [0]]]))  # 5 is out of range: a zero row
    assert out.dtype == np.float64
    assert nn.one_hot(labels, 3, dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(nn.one_hot(np.array([1, 0]), 2, axis=0), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(fd.vmap(lambda l: nn.one_hot(l, 3))(labels), out)
    np.testing.assert_array_equal(fd.jit(lambda l: nn.one_hot(l, 3))(labels), out)
    for bad in (0, 2.5, True, np.array(3)):
        with pytest.raises(InvalidArgumentError, match="one_hot"):
            nn.one_hot(labels, bad)
    with pytest.raises(AxisError, match="one_hot"):
        nn.one_hot(labels, 3, axis=3)


# --- cross_entropy ------------------------------------------------------------------------------


def np_cross_entropy(logits, targets, axis=-1):
    return -np.sum(targets * np_log_softmax(logits, axis), axis=axis)


def test_cross_entropy_values():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((5, 3))
    labels = np.array([0, 2, 1, 1, 0])
    onehot = np.eye(3)[labels]
    per_example = np_cross_entropy(logits, onehot)
    np.testing.assert_allclose(nn.cross_entropy(logits, labels), per_example.mean(), rtol=1e-14)
    np.testing.assert_allclose(nn.cross_entropy(logits, labels, reduction="sum"),
                               per_example.sum(), rtol=1e-14)
    np.testing.assert_allclose(nn.cross_entropy(logits, labels, reduction="none"), per_example,
                               rtol=1e-14)
    # probability targets
    probs = np_softmax(rng.standard_normal((5, 3)))
    np.testing.assert_allclose(nn.cross_entropy(logits, probs, reduction="none"),
                               np_cross_entropy(logits, probs), rtol=1e-14)
    # label smoothing, the same with labels and with targets
    smooth = 0.9 * onehot + 0.1 / 3
    np.testing.assert_allclose(nn.cross_entropy(logits, labels, label_smoothing=0.1),
                               np_cross_entropy(logits, smooth).mean(), rtol=1e-14)
    np.testing.assert_allclose(nn.cross_entropy(logits, onehot, label_smoothing=0.1),
                               np_cross_entropy(logits, smooth).mean(), rtol=1e-14)
    # float32 stays float32, in the loss and in its gradient
    z32 = logits.astype(np.float32)
    assert nn.cross_entropy(z32, labels).dtype == np.float32
    assert fd.grad(nn.cross_entropy)(z32, labels).dtype == np.float32
    assert fd.grad(nn.cross_entropy)(z32, onehot.astype(np.float32)).dtype == np.float32
    # the class axis elsewhere
    np.testing.assert_allclose(nn.cross_entropy(logits.T, labels, axis=0, reduction="none"),
                               per_example, rtol=1e-14)
    # a masked class (-inf logit) with zero target contributes nothing, not NaN
    masked = np.array([[0.0, -np.inf, 1.0]])
    assert np.isfinite(nn.cross_entropy(masked, np.array([[0.5, 0.0, 0.5]])))
    g = fd.grad(nn.cross_entropy)(masked, np.array([2]))
    np.testing.assert_allclose(g, np_softmax(np.array([[0.0, -np.inf, 1.0]])) - [[0, 0, 1]],
                               atol=1e-15)


def test_cross_entropy_gradient_is_softmax_minus_onehot_over_batch():
    rng = np.random.default_rng(5)
    for scale in (1.0, 1e3):
        logits = rng.standard_normal((4, 6)) * scale
        labels = rng.integers(0, 6, 4)
        onehot = np.eye(6)[labels]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            g = fd.grad(nn.cross_entropy)(logits, labels)
            g_targets = fd.grad(nn.cross_entropy)(logits, onehot)
            g_sum = fd.grad(lambda z: nn.cross_entropy(z, labels, reduction="sum"))(logits)
        expected = np_softmax(logits) - onehot
        np.testing.assert_allclose(g, expected / 4, atol=1e-15)
        np.testing.assert_allclose(g_targets, expected / 4, atol=1e-15)
        np.testing.assert_allclose(g_sum, expected, atol=1e-15)
        np.testing.assert_allclose(g.sum(axis=-1), 0.0, atol=1e-15)
    # the gradient with respect to probability targets is -log_softmax
    logits = rng.standard_normal((2, 3))
    probs = np_softmax(rng.standard_normal((2, 3)))
    g = fd.grad(nn.cross_entropy, argnums=1)(logits, probs)
    np.testing.assert_allclose(g, -np_log_softmax(logits) / 2, rtol=1e-14)


def test_cross_entropy_derivatives_vmap_jit():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((3, 4))
    labels = np.array([3, 0, 1])
    probs = np_softmax(rng.standard_normal((3, 4)))
    check_grads(lambda z: nn.cross_entropy(z, labels, label_smoothing=0.2), (logits,), order=2)
    check_grads(lambda z, p: nn.cross_entropy(z, p, reduction="sum"), (logits, probs), order=2)
    per_example = fd.vmap(lambda z, l: nn.cross_entropy(z, l, reduction="sum"))(logits, labels)
    np.testing.assert_allclose(per_example, nn.cross_entropy(logits, labels, reduction="none"),
                               rtol=1e-14)
    f = lambda z, l: nn.cross_entropy(z, l)  # noqa: E731
    np.testing.assert_allclose(fd.jit(f)(logits, labels), f(logits, labels), rtol=1e-14)
    np.testing.assert_allclose(fd.jit(fd.grad(f))(logits, labels), fd.grad(f)(logits, labels),
                               rtol=1e-14)


def test_cross_entropy_fused_rule_higher_order_and_other_axes():
    rng = np.random.default_rng(12)
    logits = rng.standard_normal((4, 3, 2))  # classes along axis 1
    labels = rng.integers(0, 3, (4, 2))
    onehot = np.moveaxis(np.eye(3)[labels], -1, 1)
    smooth = 0.8 * onehot + 0.2 / 3
    f = lambda z: nn.cross_entropy(z, labels, axis=1, label_smoothing=0.2)  # noqa: E731
    np.testing.assert_allclose(f(logits), np_cross_entropy(logits, smooth, axis=1).mean(),
                               rtol=1e-14)
    np.testing.assert_allclose(fd.grad(f)(logits),
                               (np_softmax(logits, axis=1) - smooth) / 8, atol=1e-15)
    check_grads(f, (logits,), order=2)
    # the Hessian of the mean loss is block-diagonal with blocks (diag(p) - p p^T) / batch
    z = rng.standard_normal((2, 3))
    h = fd.hessian(lambda z: nn.cross_entropy(z, np.array([0, 2])))(z)
    p = np_softmax(z)
    for i in range(2):
        np.testing.assert_allclose(h[i, :, i, :], (np.diag(p[i]) - np.outer(p[i], p[i])) / 2,
                                   atol=1e-15)
        np.testing.assert_allclose(h[i, :, 1 - i, :], 0.0, atol=1e-15)
    # gradients with respect to smoothed probability targets, in both modes
    probs = np_softmax(rng.standard_normal((2, 3)))
    g = fd.grad(lambda y: nn.cross_entropy(z, y, label_smoothing=0.1), argnums=0)(probs)
    np.testing.assert_allclose(g, -0.9 * np_log_softmax(z) / 2, rtol=1e-14)
    check_grads(lambda z, y: nn.cross_entropy(z, y, axis=0, label_smoothing=0.1,
                                              reduction="none"), (z, probs), order=2)
    # per-example gradients: vmap of grad through the custom rule, and jit of it
    per = fd.vmap(fd.grad(lambda z, l: nn.cross_entropy(z, l)))(z[:, None], np.array([[0], [2]]))
    np.testing.assert_allclose(per[:, 0], np_softmax(z) - np.eye(3)[[0, 2]], atol=1e-15)
    jitted = fd.jit(fd.grad(lambda z, y: nn.cross_entropy(z, y, label_smoothing=0.1)))
    np.testing.assert_allclose(jitted(z, probs), fd.grad(
        lambda z, y: nn.cross_entropy(z, y, label_smoothing=0.1))(z, probs), rtol=1e-14)


def test_cross_entropy_bad_input_raises_errors_naming_the_function():
    logits = np.zeros((2, 3))
    with pytest.raises(InvalidArgumentError, match="cross_entropy.*reduction='avg'"):
        nn.cross_entropy(logits, np.array([0, 1]), reduction="avg")
    with pytest.raises(ShapeError, match="cross_entropy"):
        nn.cross_entropy(logits, np.array([0, 1, 2]))
    with pytest.raises(ShapeError, match="cross_entropy"):
        nn.cross_entropy(logits, np.zeros((2, 4)))
    with pytest.raises(ShapeError, match="cross_entropy"):
        nn.cross_entropy(np.zeros(()), np.array(0))
    with pytest.raises(DTypeError, match="cross_entropy"):
        nn.cross_entropy(logits, np.array([True, False]))
    with pytest.raises(IndexOutOfBoundsError, match="cross_entropy.*label 3"):
        nn.cross_entropy(logits, np.array([0, 3]))
    with pytest.raises(InvalidArgumentError, match="label_smoothing"):
        nn.cross_entropy(logits, np.array([0, 1]), label_smoothing=1.0)
    with pytest.raises(AxisError, match="cross_entropy"):
        nn.cross_entropy(logits, np.array([0, 1]), axis=2)


# --- layer_norm, rms_norm ---------------------------------------------------------------------


def test_layer_norm_with_scale_offset():
    rng = np.random.default_rng(7)
    x, scale, offset = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.layer_norm(x, scale=scale, offset=offset), ref * scale + offset,
                               rtol=1e-13)
    check_grads(lambda x, s, o: nn.layer_norm(x, scale=s, offset=o), (x, scale, offset), order=2)
    check_grads(lambda x, s: nn.rms_norm(x, scale=s), (x, scale), order=2)
    np.testing.assert_allclose(fd.vmap(lambda r: nn.layer_norm(r, scale=scale))(x),
                               nn.layer_norm(x, scale=scale), rtol=1e-14)
    np.testing.assert_allclose(fd.jit(nn.layer_norm)(x), nn.layer_norm(x), rtol=1e-14)
    with pytest.raises(ShapeError, match="layer_norm"):
        nn.layer_norm(x, scale=np.ones(3))
    with pytest.raises(ShapeError, match="rms_norm"):
        nn.rms_norm(x, scale=np.ones(5))
    with pytest.raises(AxisError, match="layer_norm"):
        nn.layer_norm(x, axis=2)


def test_layer_norm_gradient_invariances():
    """Gradients of any loss through layer_norm are orthogonal to the all-ones direction
    along the normalised axis (shift invariance) and, with eps = 0, to the normalised
    input (scale invariance)."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 6)) * 2 + 1
    w = rng.standard_normal((3, 6))

    def loss(x, eps):
        return np.sum(w * np.tanh(nn.layer_norm(x, eps=eps)) + nn.layer_norm(x, eps=eps) ** 3)

    g = fd.grad(loss)(x, 1e-5)
    np.testing.assert_allclose(g.sum(axis=-1), 0.0, atol=1e-12)
    g0 = fd.grad(loss)(x, 0.0)
    x_hat = nn.layer_norm(x, eps=0.0)
    np.testing.assert_allclose(g0.sum(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.sum(g0 * x_hat, axis=-1), 0.0, atol=1e-12)
    # differentiated once more: the Hessian annihilates the ones direction, and scale
    # invariance (a g(a x) = g(x)) gives H x = -g
    ones = np.ones_like(x)
    np.testing.assert_allclose(fd.hvp(lambda x: loss(x, 1e-5), (x,), (ones,)), 0.0, atol=1e-11)
    np.testing.assert_allclose(fd.hvp(lambda x: loss(x, 0.0), (x,), (x,)), -g0, atol=1e-11)
    # and over several axes
    g = fd.grad(lambda x: np.sum(w.reshape(3, 2, 3) * nn.layer_norm(x, axis=(1, 2)) ** 2 * 0.5
                                 + nn.layer_norm(x, axis=(1, 2))))(x.reshape(3, 2, 3))
    np.testing.assert_allclose(g.sum(axis=(1, 2)), 0.0, atol=1e-12)


# --- attention --------------------------------------------------------------------------------


def np_attention(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    keep = np.ones(s.shape, bool)
    if mask is not None:
        keep = keep & mask
    if causal:
        keep = keep & np.tril(np.ones(s.shape[-2:], bool))
    s = np.where(keep, s, -0.7 * np.finfo(s.dtype).max)
    return np_softmax(s) @ v


def qkv(rng, b=2, tq=3, tk=4, d=5, dv=2):
    return (rng.standard_normal((b, tq, d)), rng.standard_normal((b, tk, d)),
            rng.standard_normal((b, tk, dv)))


def test_attention_values():
    rng = np.random.default_rng(9)
    q, k, v = qkv(rng)
    mask = rng.random((2, 3, 4)) < 0.7
    for kw in (dict(), dict(causal=True), dict(mask=mask), dict(mask=mask, causal=True),
               dict(scale=0.3), dict(mask=mask[0])):
        np.testing.assert_allclose(nn.dot_product_attention(q, k, v, **kw),
                                   np_attention(q, k, v, **kw), rtol=1e-13, atol=1e-14)
    # leading axes (batch, heads) broadcast like matmul
    q4 = rng.standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(nn.dot_product_attention(q4, k[:, None], v[:, None]),
                               np_attention(q4, k[:, None], v[:, None]), rtol=1e-13)
    # a fully masked row attends uniformly: the mean of the values, no NaN
    none = np.zeros((2, 3, 4), bool)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v, mask=none),
                               np.broadcast_to(v.mean(axis=1, keepdims=True), (2, 3, 2)),
                               rtol=1e-13)


def test_attention_derivatives_vmap_jit():
    rng = np.random.default_rng(10)
    q, k, v = qkv(rng, b=1, tq=2, tk=3, d=2, dv=2)
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, causal=True), (q, k, v),
                order=2)
    mask = np.array([[[True, False, True], [False, True, True]]])
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, mask=mask), (q, k, v), order=2)
    # masked keys get exactly zero gradient: the first query never sees the later keys
    g = fd.grad(lambda k: np.sum(nn.dot_product_attention(q, k, v, causal=True)[:, 0]))(k)
    np.testing.assert_array_equal(g[:, 1:], 0.0)
    q, k, v = qkv(rng)
    per_example = fd.vmap(lambda q, k, v: nn.dot_product_attention(q, k, v, causal=True))(q, k, v)
    np.testing.assert_allclose(per_example, nn.dot_product_attention(q, k, v, causal=True),
                               rtol=1e-14)
    f = lambda q, k, v: nn.dot_product_attention(q, k, v, causal=True)  # noqa: E731
    np.testing.assert_allclose(fd.jit(f)(q, k, v), f(q, k, v), rtol=1e-14)
    # huge scores stay finite in every derivative
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = fd.grad(lambda q: np.sum(nn.dot_product_attention(q, k, v)))(q * 1e3)
    assert np.all(np.isfinite(g))


def test_attention_bad_input():
    q, k, v = qkv(np.random.default_rng(11))
    with pytest.raises(ShapeError, match="dot_product_attention"):
        nn.dot_product_attention(q, k[..., :4], v)
    with pytest.raises(ShapeError, match="dot_product_attention"):
        nn.dot_product_attention(q, k, v[:, :3])
    with pytest.raises(ShapeError, match="dot_product_attention"):
        nn.dot_product_attention(q[0, 0], k, v)
    with pytest.raises(DTypeError, match="dot_product_attention"):
        nn.dot_product_attention(q, k, v, mask=np.ones((3, 4)))
    with pytest.raises(ShapeError, match="dot_product_attention"):
        nn.dot_product_attention(q, k, v, mask=np.ones((3, 5), bool))


# --- initializers -----------------------------------------------------------------------------


@pytest.mark.parametrize("name, variance", [
    ("glorot_normal", 2 / (200 + 300)), ("glorot_uniform", 2 / (200 + 300)),
    ("xavier_normal", 2 / (200 + 300)), ("xavier_uniform", 2 / (200 + 300)),
    ("he_normal", 2 / 200), ("he_uniform", 2 / 200), ("kaiming_normal", 2 / 200),
    ("kaiming_uniform", 2 / 200), ("lecun_normal", 1 / 200), ("lecun_uniform", 1 / 200),
])
def test_variance_scaling_initializers(name, variance):
    init = getattr(initializers, name)
    w = init(np.random.default_rng(0), (200, 300))
    assert w.shape == (200, 300) and w.dtype == np.float64
    assert abs(w.mean()) < 0.05 * np.sqrt(variance)
    assert abs(w.var() / variance - 1) < 0.03
    if "normal" in name:  # truncated at two standard deviations of the underlying normal
        assert np.abs(w).max() <= 2 * np.sqrt(variance) / 0.87962566103423978
    assert init(np.random.default_rng(0), (4, 3), np.float32).dtype == np.float32
    np.testing.assert_array_equal(init(np.random.default_rng(1), (3, 2)),
                                  init(np.random.default_rng(1), (3, 2)))


def test_basic_initializers_and_fans():
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(initializers.zeros(rng, (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(initializers.ones(rng, 3), np.ones(3))
    w = initializers.normal(rng, (10000,), stddev=0.5)
    assert abs(w.std() - 0.5) < 0.02
    w = initializers.uniform(rng, (10000,), np.float32, scale=2.0)
    assert w.dtype == np.float32 and w.min() >= 0 and w.max() < 2 and abs(w.mean() - 1) < 0.05
    assert initializers.compute_fans((3, 3, 16, 32)) == (144, 288)
    assert initializers.compute_fans((5,)) == (5, 5)
    assert initializers.compute_fans(()) == (1, 1)
    assert initializers.compute_fans((32, 16, 3, 3), in_axis=1, out_axis=0) == (144, 288)
    w = initializers.variance_scaling(rng, (64, 3, 3, 3), scale=2.0, mode="fan_in",
                                      distribution="normal", in_axis=1, out_axis=0)
    assert abs(w.var() / (2 / 27) - 1) < 0.1
    w = initializers.he_normal(rng, (3, 3, 8, 400))  # HWIO convolution kernel
    assert abs(w.var() / (2 / 72) - 1) < 0.05


def test_initializer_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidArgumentError, match="glorot_normal.*Generator"):
        initializers.glorot_normal(0, (2, 2))
    with pytest.raises(DTypeError, match="he_uniform"):
        initializers.he_uniform(rng, (2, 2), np.int32)
    with pytest.raises(ShapeError, match="zeros"):
        initializers.zeros(rng, (2, -1))
    with pytest.raises(InvalidArgumentError, match="mode"):
        initializers.variance_scaling(rng, (2, 2), mode="fan_sum")
    with pytest.raises(InvalidArgumentError, match="distribution"):
        initializers.variance_scaling(rng, (2, 2), distribution="cauchy")
    with pytest.raises(InvalidArgumentError, match="in_axis"):
        initializers.lecun_normal(rng, (2, 2), in_axis=0, out_axis=0)


def test_fd_nn_namespace():
    assert fd.nn is nn and fd.nn.initializers is initializers
    for name in nn.__all__:
        assert getattr(nn, name).__doc__, name


def test_docstring_examples():
    for module in (nn, initializers):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0
        assert result.failed == 0, module.__name__
