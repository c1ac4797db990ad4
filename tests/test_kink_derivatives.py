"""Higher derivatives of smooth functions at the kinks of their implementations.

A numerically stable implementation of a smooth function often passes through
a select, max, abs or clip: sinc swaps in a stand-in at 0, logaddexp takes the
max of its arguments, softplus and log_ndtr switch branches, the norms guard
the zero vector. Differentiating that implementation gives derivatives that
vanish or are wrong at order 2 and up exactly there (equal arguments, zeros,
the point where a branch switches). Each function below gets its derivatives
from its own rule instead; the table checks orders 2 to 4 at those points
against closed forms or Taylor series, through five routes: nested grad,
hessian, jacfwd(jacrev), forward-over-reverse (jvp of grad) and jit.

The last tests hold the documented conventions of functions that are genuinely
not smooth there (elu, relu, the inf-norm), which stay as they are.
"""
import math
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.nn as nn
import funcdiff.numpy as fnp
from funcdiff.nn._activations import SELU_ALPHA, SELU_SCALE
from funcdiff.scipy import special as S

PI = math.pi
R0 = math.sqrt(2 / PI)  # phi(0) / Phi(0) = 2 phi(0), the slope of log_ndtr at 0


# --- references -------------------------------------------------------------------------


def sinc_series(x, n):
    """d^n/dx^n of sum_k (-1)^k (pi x)^(2k) / (2k+1)!, term by term."""
    total = 0.0
    for k in range((n + 1) // 2, 40):
        coeff = (-1) ** k * PI ** (2 * k) * math.factorial(2 * k) / math.factorial(2 * k + 1)
        total += coeff / math.factorial(2 * k - n) * x ** (2 * k - n)
    return total


def sinc_closed(x, n):
    """sinc^(m+1)(x) = (pi^m sin^(m+1)(pi x) - (m+1) sinc^(m)(x)) / x, the (m+1)-th
    derivative of x sinc(x) = sin(pi x) / pi; for x away from 0."""
    d = math.sin(PI * x) / (PI * x)
    for m in range(n):
        sin_derivative = (math.sin, math.cos, lambda v: -math.sin(v),
                          lambda v: -math.cos(v))[(m + 1) % 4](PI * x)
        d = (PI ** m * sin_derivative - (m + 1) * d) / x
    return d


def i0_series(x, n):
    """d^n/dx^n of I0(x) = sum_k (x/2)^(2k) / (k!)^2, term by term."""
    total = 0.0
    for k in range((n + 1) // 2, 60):
        coeff = math.factorial(2 * k) / (math.factorial(k) ** 2 * 4 ** k)
        total += coeff / math.factorial(2 * k - n) * x ** (2 * k - n)
    return total


def log_ndtr_tail(x):
    """log Phi(x) by the asymptotic series of the Mills ratio, written here from its
    definition: exact to 1e-19 at x = -20, where log_ndtr's middle branch ends."""
    series, term = 1.0, 1.0
    for k in range(1, 12):
        term = term * -(2 * k - 1) / (x * x)
        series = series + term
    return -0.5 * x * x - 0.5 * math.log(2 * PI) - fnp.log(-x) + fnp.log(series)


def nested_grad(f, n):
    for _ in range(n):
        f = fd.grad(f)
    return f


def tail_reference(n):
    return float(nested_grad(log_ndtr_tail, n)(-20.0))


# --- the table ---------------------------------------------------------------------------


class Kink(NamedTuple):
    name: str
    f: Callable          # a scalar function of a scalar
    x: float
    want: tuple          # the derivatives of orders 2, 3, 4
    rtol: tuple = (1e-12, 1e-12, 1e-12)


def with_zero(f):
    """``f(x, 0)`` for a binary function, keeping 0 a value of x's kind."""
    return lambda x: f(x, 0.0 * x)


TIED = lambda x: fnp.stack([x, 0.0 * x, 0.0 * x])  # noqa: E731  three tied entries at 0

KINKS = [
    Kink("sinc@0", fnp.sinc, 0.0, (-PI ** 2 / 3, 0.0, PI ** 4 / 5)),
    *[Kink(f"sinc@{x}", fnp.sinc, x, tuple(sinc_series(x, n) for n in (2, 3, 4)))
      for x in (1e-9, 1e-3, -0.3)],
    Kink("sinc@2.5", fnp.sinc, 2.5, tuple(sinc_closed(2.5, n) for n in (2, 3, 4)), (1e-11,) * 3),
    Kink("i0@0", fnp.i0, 0.0, (0.5, 0.0, 3 / 8)),
    *[Kink(f"i0@{x}", fnp.i0, x, tuple(i0_series(x, n) for n in (2, 3, 4)))
      for x in (1e-3, -2.0)],
    Kink("log_ndtr@0", S.log_ndtr, 0.0, (-R0 ** 2, 2 * R0 ** 3 - R0, 4 * R0 ** 2 - 6 * R0 ** 4)),
    # where the middle branch meets the tail series: orders 3 and 4 lose digits to the
    # cancellation in (phi / Phi)' = r (-x - r) with r = 20.05; order 4 was -inf
    Kink("log_ndtr@-20", S.log_ndtr, -20.0, tuple(tail_reference(n) for n in (2, 3, 4)),
         (1e-10, 1e-5, 1e-3)),
    Kink("softplus@0", nn.softplus, 0.0, (0.25, 0.0, -0.125)),
    Kink("log_sigmoid@0", nn.log_sigmoid, 0.0, (-0.25, 0.0, 0.125)),
    Kink("log_expit@0", S.log_expit, 0.0, (-0.25, 0.0, 0.125)),
    Kink("sigmoid@0", nn.sigmoid, 0.0, (0.0, -0.125, 0.0)),
    Kink("silu@0", nn.silu, 0.0, (0.5, 0.0, -0.5)),
    Kink("gelu@0", lambda x: nn.gelu(x, approximate=False), 0.0, (R0, 0.0, -2 * R0)),
    Kink("gelu-tanh@0", nn.gelu, 0.0,
         (R0, 0.0, 12 * (R0 * 0.044715 - R0 ** 3 / 3))),
    Kink("logaddexp@tie", with_zero(fnp.logaddexp), 0.0, (0.25, 0.0, -0.125)),
    Kink("hypot@0", lambda x: fnp.hypot(x, 3.0 + 0.0 * x), 0.0, (1 / 3, 0.0, -1 / 9)),
    Kink("logsumexp@tie", lambda x: S.logsumexp(TIED(x)), 0.0, (2 / 9, 2 / 27, -2 / 27)),
    # log(2 e^x + 3): weight w = 2/5; w(1-w), w(1-w)(1-2w), w(1-w)(1-6w+6w^2)
    Kink("logsumexp-b@tie", lambda x: S.logsumexp(fnp.stack([x, 0.0 * x]), b=np.array([2.0, 3.0])),
         0.0, (0.24, 0.048, 0.24 * (1 - 2.4 + 0.96))),
    Kink("log_softmax@tie", lambda x: nn.log_softmax(fnp.stack([x, 0.0 * x]))[0], 0.0,
         (-0.25, 0.0, 0.125)),
    Kink("softmax@tie", lambda x: nn.softmax(fnp.stack([x, 0.0 * x]))[0], 0.0,
         (0.0, -0.125, 0.0)),
    Kink("cross_entropy@tie", lambda x: nn.cross_entropy(fnp.stack([x, 0.0 * x])[None],
                                                          np.array([1])), 0.0, (0.25, 0.0, -0.125)),
    Kink("cross_entropy-smoothed@tie",
         lambda x: nn.cross_entropy(fnp.stack([x, 0.0 * x])[None], np.array([1]),
                                    label_smoothing=0.1), 0.0, (0.25, 0.0, -0.125)),
    Kink("cross_entropy-targets@tie",
         lambda x: nn.cross_entropy(fnp.stack([x, 0.0 * x])[None], np.array([[0.25, 0.75]])),
         0.0, (0.25, 0.0, -0.125)),
    # sqrt(x^2 + 25), a component at 0 of a nonzero vector: 1/5, 0, -3/125
    Kink("norm@zero-entry", lambda x: fnp.linalg.norm(fnp.stack([x, 3.0 + 0.0 * x, 4.0 + 0.0 * x])),
         0.0, (0.2, 0.0, -3 / 125)),
    Kink("vector_norm@zero-entry",
         lambda x: fnp.linalg.vector_norm(fnp.stack([x, 3.0 + 0.0 * x, 4.0 + 0.0 * x])),
         0.0, (0.2, 0.0, -3 / 125)),
    # t log(2 + t) at t = 0, the point where xlogy's convention 0 log y = 0 applies
    Kink("xlogy@0", lambda t: S.xlogy(t, 2.0 + t), 0.0, (1.0, -0.75, 1.0)),
    Kink("xlog1py@0", lambda t: S.xlog1py(t, 1.0 + t), 0.0, (1.0, -0.75, 1.0)),
]


def by_hessian(f, n):
    return {2: fd.hessian(f), 3: fd.jacfwd(fd.hessian(f)), 4: fd.hessian(fd.hessian(f))}[n]


def by_jacfwd_jacrev(f, n):
    for _ in range(n // 2):
        f = fd.jacfwd(fd.jacrev(f))
    return fd.jacfwd(f) if n % 2 else f


def by_jvp_of_grad(f, n):
    g = nested_grad(f, n - 1)
    return lambda x: fd.jvp(g, (x,), (np.ones_like(x),))[1]


ROUTES = {
    "grad": nested_grad,
    "hessian": by_hessian,
    "jacfwd(jacrev)": by_jacfwd_jacrev,
    "jvp(grad)": by_jvp_of_grad,
    "jit": lambda f, n: fd.jit(nested_grad(f, n)),
}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("kink", KINKS, ids=[k.name for k in KINKS])
def test_higher_derivatives_at_kinks(kink, route):
    x = np.float64(kink.x)
    for n, want, rtol in zip((2, 3, 4), kink.want, kink.rtol):
        if route == "hessian" and n == 4 and kink.name.startswith("cross_entropy"):
            continue  # hessian of hessian through custom_vjp's rule is order 4 twice over
        got = ROUTES[route](kink.f, n)(x)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-13 * max(1.0, abs(want)),
                                   err_msg=f"{kink.name}, order {n}, by {route}")


def test_hessians_at_ties_across_an_axis():
    # several tied maxima in a row, and weights b: the Hessian of logsumexp is
    # diag(w) - w w^T with the softmax weights w, tie or not
    a = np.array([[0.5, 0.5, 0.5, -1.0], [2.0, 2.0, 0.0, 2.0]])
    b = np.array([1.0, 2.0, 3.0, 0.5])
    h = fd.hessian(lambda m: S.logsumexp(m, axis=1, b=b).sum())(a)
    for i in range(2):
        w = b * np.exp(a[i]) / np.sum(b * np.exp(a[i]))
        np.testing.assert_allclose(h[i, :, i, :], np.diag(w) - np.outer(w, w), atol=1e-15)
    np.testing.assert_array_equal(h[0, :, 1, :], 0.0)
    p = np.exp(a[1]) / np.exp(a[1]).sum()
    h = fd.jit(fd.hessian(lambda v: nn.cross_entropy(v[None], np.array([2]))))(a[1])
    np.testing.assert_allclose(h, np.diag(p) - np.outer(p, p), atol=1e-15)


def test_norm_hessian_with_zero_components():
    x = np.array([0.0, 3.0, 0.0, 4.0])
    want = (np.eye(4) - np.outer(x, x) / 25) / 5
    for f in (fnp.linalg.norm, fnp.linalg.vector_norm,
              lambda v: fnp.linalg.norm(fnp.reshape(v, (2, 2)), "fro")):
        np.testing.assert_allclose(fd.hessian(f)(x), want, atol=1e-16)
        np.testing.assert_allclose(fd.jacfwd(fd.jacrev(f))(x), want, atol=1e-16)


def test_sinc_and_i0_near_zero_match_central_differences_of_the_lower_order():
    # across the series' switch (|pi x| = 2 for order 2) and at tiny x, the next
    # order is the central difference of the one below
    for f, n in ((fnp.sinc, 3), (fnp.i0, 3), (fnp.sinc, 4)):
        lower, upper = nested_grad(f, n - 1), fd.vmap(nested_grad(f, n))
        x = np.array([1e-6, 0.3, 2 / PI - 1e-3, 2 / PI + 1e-3, 1.7])
        h = 1e-5
        diff = (fd.vmap(lower)(x + h) - fd.vmap(lower)(x - h)) / (2 * h)
        np.testing.assert_allclose(upper(x), diff, rtol=1e-7, atol=1e-7)


# --- genuinely non-smooth functions keep their documented conventions -------------------


def test_conventions_of_non_smooth_functions_at_their_kinks():
    # elu and selu take the branch x <= 0 at 0: every derivative is alpha e^0 there
    for n in (1, 2, 3):
        assert nested_grad(lambda x: nn.elu(x, alpha=0.5), n)(0.0) == 0.5
        np.testing.assert_allclose(nested_grad(nn.selu, n)(0.0), SELU_SCALE * SELU_ALPHA)
    assert fd.grad(nn.relu)(0.0) == 0.0 and fd.grad(fd.grad(nn.relu))(0.0) == 0.0
    assert fd.grad(fnp.abs)(0.0) == 0.0
    # the inf-norm at a tie splits its gradient between the tied entries
    np.testing.assert_allclose(fd.grad(lambda v: fnp.linalg.norm(v, np.inf))(np.array([2.0, -2.0])),
                               [0.5, -0.5])
    assert fd.grad(S.entr)(0.0) == 0.0  # the one-sided limit is +inf
    np.testing.assert_array_equal(fd.grad(fnp.linalg.norm)(np.zeros(3)), 0.0)
