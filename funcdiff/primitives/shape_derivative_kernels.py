"""numpy kernels for the partial derivatives of gammainc, betainc and zeta in their parameters.

The impls of ``scipy_shape_derivatives``' cards. Each runs a classical series
or continued fraction on ``taylor_jets.Jet``s, which differentiates it in
forward mode to the order asked for; the series' terms are those scipy's
references use.

- ``gammainc_a(a, x, order)``: d^n/da^n P(a, x). For x < a + 1 the series
  P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)); otherwise the
  continued fraction Q = a x^a e^-x / Gamma(a + 1) / (x + 1 - a - 1 (1 - a) /
  (x + 3 - a - 2 (2 - a) / ...)) and d^n P = -d^n Q, so neither loses digits to
  1 - P. Both need O(sqrt(a)) terms.
- ``betainc_ab(a, b, x, orders)``: d^i/da^i d^j/db^j I_x(a, b) from the continued
  fraction I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) / (1 + d_1 / (1 + d_2 / ...)) for
  x < (a + 1) / (a + b + 2), and from I_x(a, b) = 1 - I_{1-x}(b, a) above.
- ``zeta_x(s, q, order)``: d^n/ds^n zeta(s, q) by Euler-Maclaurin summation:
  the terms (k + q)^-s up to k + q >= 10 + |s| / 2, the integral and half term
  there, and 12 Bernoulli corrections. ``riemann_zeta_x`` uses it at q = 1 for
  s >= 0 and the functional equation zeta(s) = 2^s pi^(s-1) sin(pi s / 2)
  Gamma(1 - s) zeta(1 - s) below 0.

Outside a function's domain (a < 0, x < 0, x > 1 for betainc, a or b <= 0 for
betainc's derivatives, s <= 1 or q <= 0 for Hurwitz's, s = 1 for Riemann's)
and where an iteration has not converged after ``MAX_TERMS`` terms the
derivative is NaN; where the function is constant (x = 0 or infinite, a
infinite; betainc's x = 0 or 1) it is 0.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from funcdiff.primitives.scipy_cards import scipy_special
from funcdiff.primitives.taylor_jets import Box, Jet, box

EPS = 2.0 ** -55  # relative size of a term (per coefficient) below which a sum has converged
MAX_TERMS = 50_000  # a series needs about 9 sqrt(a) terms: enough for a, b up to ~3e7


def _float64(*arrays):
    return np.broadcast_arrays(*(np.asarray(a, np.float64) for a in arrays))


def _iterate(state: tuple, step, converged, result, size: int) -> np.ndarray:
    """Run ``state = step(n, state)`` for n = 1, 2, ... on the elements not yet
    converged; each element's answer is ``result(state)`` at the first n where
    ``converged(state)`` holds for it (NaN if that never happens)."""
    out = np.full(size, np.nan)
    where = np.arange(size)
    for n in range(1, MAX_TERMS + 1):
        if where.size == 0:
            break
        state = step(n, state)
        done = converged(state)
        if done.any():
            out[where[done]] = result(_take(state, done))
            keep = ~done
            where, state = where[keep], _take(state, keep)
    return out


def _take(state, index):
    return tuple(s.take(index) if isinstance(s, Jet) else s[index] for s in state)


def _lgamma(b: Box, c, variables) -> Jet:
    """lgamma(c + sum of eps_v): its n-th derivative is polygamma(n - 1, c)."""
    s = scipy_special()
    return Jet.of_sum(b, lambda n: s.gammaln(c) if n == 0 else s.polygamma(n - 1, c), variables)


def _linear(b: Box, value, slope) -> Jet:
    """value + slope * eps_0."""
    return Jet.of_sum(b, lambda n: value if n == 0 else slope if n == 1 else 0.0 * value, (0,))


def _power(b: Box, base, exponent, sign: float) -> Jet:
    """base^(exponent + sign * eps_0)."""
    log_base = np.log(base)
    value = base ** exponent
    return Jet.of_sum(b, lambda n: value * (sign * log_base) ** n, (0,))


# --- the regularized incomplete gamma function in a ---------------------------------------


def _gamma_prefactor(b, a, x):
    """x^a e^-x / Gamma(a + 1) as a Jet in a."""
    return (Jet.variable(b, a, 0).scale(np.log(x)) - x - _lgamma(b, a + 1, (0,))).exp()


def _gammainc_series(b, a, x):
    def step(n, state):
        a, x, term, total = state
        term = term * (Jet.variable(b, a + n, 0).reciprocal().scale(x))
        return a, x, term, total + term

    def result(state):
        a, x, _, total = state
        return (_gamma_prefactor(b, a, x) * total).derivative()

    one = Jet.constant(b, np.ones_like(a))
    return _iterate((a, x, one, one), step, lambda s: s[2].max_abs_ratio(s[3]) < EPS, result,
                    a.size)


def _wallis(b, a_n, b_n, state):
    """One step of the recurrence for a continued fraction's convergent A_n / B_n,
    rescaled by B_n's value; ``state`` ends with (A_n-2, A_n-1, B_n-2, B_n-1, F_n-1)."""
    *rest, a2, a1, b2, b1, f_old = state
    a0 = a1 * b_n + a2 * a_n
    b0 = b1 * b_n + b2 * a_n
    scale = 1.0 / b0.value
    a0, b0, a1, b1 = a0.scale(scale), b0.scale(scale), a1.scale(scale), b1.scale(scale)
    return (*rest, a1, a0, b1, b0, a0 / b0, f_old)


def _wallis_start(b, size):
    one, zero = Jet.constant(b, np.ones(size)), Jet.constant(b, np.zeros(size))
    return one, zero, zero, one, zero  # A_-1, A_0, B_-1, B_0, F_0


def _converged_fraction(state):
    f, f_old = state[-2], state[-1]
    return (f - f_old).max_abs_ratio(f) < EPS


def _gammaincc_fraction(b, a, x):
    def step(n, state):
        a, x = state[:2]
        if n == 1:
            a_n = Jet.constant(b, np.ones_like(a))
        else:
            a_n = _linear(b, -(n - 1) * (n - 1 - a), np.full_like(a, n - 1.0))
        b_n = _linear(b, x + 2 * n - 1 - a, -np.ones_like(a))
        return _wallis(b, a_n, b_n, (a, x, *state[2:-1]))

    def result(state):
        a, x, f = state[0], state[1], state[-2]
        return (Jet.variable(b, a, 0) * _gamma_prefactor(b, a, x) * f).derivative()

    start = (a, x, *_wallis_start(b, a.size), Jet.constant(b, np.zeros_like(a)))
    return _iterate(start, step, _converged_fraction, result, a.size)


def gammainc_a(a, x, *, order: int) -> np.ndarray:
    """d^order / da^order of scipy.special.gammainc(a, x), float64."""
    a, x = _float64(a, x)
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        valid = (a >= 0) & (x >= 0) & ~((a == 0) & (x == 0))
        constant = valid & ((x == 0) | np.isinf(x) | np.isinf(a))
        out[constant] = 0.0
        b = box((order,))
        series = valid & ~constant & (x < a + 1)
        fraction = valid & ~constant & ~series
        out[series] = _gammainc_series(b, a[series], x[series])
        out[fraction] = -_gammaincc_fraction(b, a[fraction], x[fraction])
    return out.reshape(shape)


# --- the regularized incomplete beta function in a and b --------------------------------------


def _betainc_fraction(b, p, q, x):
    """The Jet in (p, q) of I_x(p, q) from its continued fraction."""
    def coefficient(n, p, q, x):
        big_p, big_q = Jet.variable(b, p, 0), Jet.variable(b, q, 1)
        m = n // 2
        if n % 2:
            num = (big_p + m) * (big_p + big_q + m)
            den = (big_p + 2 * m) * (big_p + 2 * m + 1)
            return -(num / den).scale(x)
        return ((big_q - m) / ((big_p + 2 * m - 1) * (big_p + 2 * m))).scale(m * x)

    def step(n, state):
        p, q, x = state[:3]
        a_n = Jet.constant(b, np.ones_like(p)) if n == 1 else coefficient(n - 1, p, q, x)
        return _wallis(b, a_n, 1.0, (p, q, x, *state[3:-1]))

    def result(state):
        p, q, x, f = state[0], state[1], state[2], state[-2]
        log_prefactor = (Jet.variable(b, p, 0).scale(np.log(x))
                         + Jet.variable(b, q, 1).scale(np.log1p(-x))
                         - _lgamma(b, p + 1, (0,)) - _lgamma(b, q, (1,))
                         + _lgamma(b, p + q, (0, 1)))
        return (log_prefactor.exp() * f).derivative()

    start = (p, q, x, *_wallis_start(b, p.size), Jet.constant(b, np.zeros_like(p)))
    return _iterate(start, step, _converged_fraction, result, p.size)


def betainc_ab(a, b, x, *, orders: tuple[int, int]) -> np.ndarray:
    """d^i/da^i d^j/db^j of scipy.special.betainc(a, b, x), (i, j) = orders, float64."""
    a, b, x = _float64(a, b, x)
    shape = a.shape
    a, b, x = a.ravel(), b.ravel(), x.ravel()
    out = np.full(a.shape, np.nan)
    i, j = orders
    with np.errstate(all="ignore"):
        valid = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b) & (x >= 0) & (x <= 1)
        constant = valid & ((x == 0) | (x == 1))
        out[constant] = 0.0
        direct = valid & ~constant & (x < (a + 1) / (a + b + 2))
        flipped = valid & ~constant & ~direct
        out[direct] = _betainc_fraction(box((i, j)), a[direct], b[direct], x[direct])
        out[flipped] = -_betainc_fraction(box((j, i)), b[flipped], a[flipped],
                                          1 - x[flipped])
    return out.reshape(shape)


# --- the zeta functions in their exponent -----------------------------------------------------


def _bernoulli(n: int) -> list[Fraction]:
    values = [Fraction(1)]
    for m in range(1, n + 1):
        values.append(-sum(math.comb(m + 1, k) * values[k] for k in range(m)) / (m + 1))
    return values


_CORRECTIONS = 12
_TAIL = tuple(float(b / math.factorial(2 * j))
              for j, b in enumerate(_bernoulli(2 * _CORRECTIONS)[2::2], 1))  # B_2j / (2j)!


def _hurwitz_jet(b, s, q) -> Jet:
    """The Jet in s of zeta(s, q), s >= 0 and s != 1, q > 0, by Euler-Maclaurin."""
    start = 10.0 + np.abs(s) / 2
    terms = np.maximum(np.ceil(start - q), 0.0)
    total = Jet.constant(b, np.zeros_like(s))
    for k in range(int(terms.max(initial=0))):
        base = np.where(k < terms, k + q, 1.0)  # elements past their own terms add 0
        total = total + _power(b, base, -s, -1.0).scale(k < terms)
    w = terms + q
    tail_power = _power(b, w, -s, -1.0)  # w^(-s - eps)
    big_s = Jet.variable(b, s, 0)
    integral = _power(b, w, 1 - s, -1.0) / (big_s - 1.0)
    rising = big_s  # s (s + 1) ... (s + 2j - 2)
    corrections = rising.scale(_TAIL[0] / w)
    for j in range(2, _CORRECTIONS + 1):
        rising = rising * (big_s + (2 * j - 3)) * (big_s + (2 * j - 2))
        corrections = corrections + rising.scale(_TAIL[j - 1] * w ** (1 - 2 * j))
    return total + integral + tail_power * (corrections + 0.5)


def zeta_x(s, q, *, order: int) -> np.ndarray:
    """d^order / ds^order of scipy.special.zeta(s, q), float64."""
    s, q = _float64(s, q)
    out = np.full(s.shape, np.nan)
    with np.errstate(all="ignore"):
        valid = (s > 1) & (q > 0) & np.isfinite(s) & np.isfinite(q)
        out[valid] = _hurwitz_jet(box((order,)), s[valid], q[valid]).derivative()
    return out


def _reflected(b, s) -> Jet:
    """The Jet in s of Riemann's zeta(s) for s < 0, by the functional equation."""
    sp = scipy_special()
    log_2pi = math.log(2 * math.pi)
    power = Jet.of_sum(b, lambda n: np.exp(s * log_2pi - math.log(math.pi)) * log_2pi ** n, (0,))
    turns = np.fmod(s, 4.0)  # sin(pi s / 2) has period 4 in s: reduced exactly
    sine = Jet.of_sum(b, lambda n: np.sin(np.pi / 2 * np.fmod(turns + n, 4.0))
                      * (np.pi / 2) ** n, (0,))
    u = 1 - s
    gamma = Jet.of_sum(b, lambda n: sp.gammaln(u) if n == 0
                       else (-1) ** n * sp.polygamma(n - 1, u), (0,)).exp()
    mirrored = _hurwitz_jet(b, u, np.ones_like(u))
    mirrored = Jet(b, [c * (-1) ** alpha[0] for c, alpha in zip(mirrored.coeffs, b.indices)])
    return power * sine * gamma * mirrored


def riemann_zeta_x(s, *, order: int) -> np.ndarray:
    """d^order / ds^order of scipy.special.zeta(s), float64."""
    (s,) = _float64(s)
    out = np.full(s.shape, np.nan)
    b = box((order,))
    with np.errstate(all="ignore"):
        right = np.isfinite(s) & (s >= 0) & (s != 1)
        left = np.isfinite(s) & (s < 0)
        out[right] = _hurwitz_jet(b, s[right], np.ones_like(s[right])).derivative()
        out[left] = _reflected(b, s[left]).derivative()
    return out
