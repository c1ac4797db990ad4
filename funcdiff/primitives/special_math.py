"""Special functions in pure numpy: erf, erfc, erf_inv, lgamma, digamma, polygamma, bessel_i1,
bessel_i (orders >= 2) and the derivatives of sinc.

numpy has none of these and funcdiff must not need scipy at run time, so they
are written here from published approximations and classical series:

- erf / erfc: W. J. Cody's rational Chebyshev approximations (Math. Comp. 23,
  1969), in the three ranges |x| <= 0.46875, <= 4 and > 4, with exp(-x*x)
  evaluated in two parts so erfc keeps its relative accuracy in the tail.
- erf_inv: M. Giles' single-precision approximation ("Approximating the erfinv
  function", GPU Computing Gems, 2010), or an asymptotic inversion of erfc very
  near |x| = 1, refined by three Halley steps; for |x| > 1/2 the
  residual is taken through erfc(t) - (1 - |x|), which is exact to rounding.
- lgamma: the Taylor series of log Gamma(2 + z), |z| <= 1/2, whose
  coefficients are zeta values; the recurrence Gamma(x + 1) = x Gamma(x) up to
  x = 7.5 and Stirling's series beyond; reflection for x < 0.
- digamma: recurrence to x >= 10 and the asymptotic series; a Taylor series
  around the positive root x0 = 1.4616... (relative accuracy where psi is
  small); reflection for x < 1/2.
- polygamma(n, x), n >= 1: (-1)**(n+1) n! zeta(n+1, x), with the Hurwitz zeta
  function summed directly up to a shift and finished by Euler-Maclaurin (the
  direct sum is valid for negative x too); reflection (derivatives of
  pi cot(pi x)) for x < -30.
- bessel_i1, the modified Bessel function of the first kind of order 1 (numpy
  has i0 but not i1, which is i0's derivative): its power series
  sum (x/2)**(2k+1) / (k! (k+1)!), whose terms are all positive, up to
  |x| = 21, and Hankel's asymptotic series e**x / sqrt(2 pi x) (1 - 3/(8x) - ...)
  beyond, where its smallest term is below 1e-19; e**x is formed as
  e**(x/2) squared, so I1 stays finite up to x = 713.9. Odd in x.
- bessel_i(n, x), n >= 2: the same two series for I_n (the Hankel coefficients
  with 4 n**2 for 4), split at max(21, n**2 / 3). I_n(-x) = (-1)**n I_n(x).
- sinc_derivative(n, x), n >= 1: the n-th derivative of sin(pi x) / (pi x), as
  pi**n S^(n)(pi x) with S(y) = sin(y) / y. Near 0 (|y| < max(2, 1 + n/2)) the
  Taylor series sum_k (-1)**k y**(2k-n) / ((2k+1) (2k-n)!); elsewhere the upward
  recurrence y S^(m+1) = sin^(m+1)(y) - (m+1) S^(m), the (m+1)-th derivative of
  y S(y) = sin(y), which loses nothing there.

Every function is vectorised, evaluates in float64 (about 1e-15 relative
error) and returns the input's floating dtype: float32 in, float32 out.
Integer inputs give float64. Results follow scipy.special at poles and
infinities.
"""

from __future__ import annotations

import functools
import importlib
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from funcdiff.errors import DTypeError

__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "bessel_i1", "bessel_i",
           "sinc_derivative"]

_F64 = np.dtype(np.float64)
_EULER_GAMMA = 0.57721566490153286060651209008240243


def _prepare(x):
    """``x`` as a float64 array (complex128 for complex ``x``: only sinc's kernel,
    analytic, is given them), plus the dtype the result must have."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128, copy=False), x.dtype
    out_dtype = x.dtype if x.dtype.kind == "f" else _F64
    return x.astype(_F64, copy=False), out_dtype


def _horner(coeffs, z):
    """``sum(coeffs[k] * z**k)``, coefficients in increasing order."""
    acc = np.full_like(z, coeffs[-1])
    for c in coeffs[-2::-1]:
        acc = acc * z + c
    return acc


def _special(fun):
    """Wrap a float64 kernel: dtype handling, and no warnings from its
    internal branches (every branch is evaluated everywhere, then selected)."""
    @functools.wraps(fun)
    def wrapper(x, *args):
        x64, out_dtype = _prepare(x)
        with np.errstate(all="ignore"):
            out = fun(x64, *args)
        return out.astype(out_dtype, copy=False)
    return wrapper


def _bernoulli_numbers(n: int) -> tuple[Fraction, ...]:
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2), exactly."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return tuple(b)


_BERNOULLI = _bernoulli_numbers(2 * 12)


# ---------------------------------------------------------------------------
# erf, erfc (Cody 1969)

_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_ERF_SPLIT = 0.46875
_INV_SQRT_PI = 0.56418958354775628694807945156077259


def _erf_small(x):
    """erf(x) for |x| <= 0.46875."""
    z = x * x
    a, b = _ERF_A, _ERF_B
    num = (((a[4] * z + a[0]) * z + a[1]) * z + a[2]) * z + a[3]
    den = (((z + b[0]) * z + b[1]) * z + b[2]) * z + b[3]
    return x * num / den


def _erfc_large(a):
    """erfc(a) for a > 0.46875 (values below are computed but meaningless)."""
    a = np.clip(a, _ERF_SPLIT, 28.0)  # erfc(28) underflows to 0; clipping keeps NaN
    num, den = _ERF_C[8] * a, a
    for c, d in zip(_ERF_C[:7], _ERF_D[:7]):
        num, den = (num + c) * a, (den + d) * a
    middle = (num + _ERF_C[7]) / (den + _ERF_D[7])
    z = 1.0 / (a * a)
    num, den = _ERF_P[5] * z, z
    for p, q in zip(_ERF_P[:4], _ERF_Q[:4]):
        num, den = (num + p) * z, (den + q) * z
    tail = (_INV_SQRT_PI - z * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / a
    r = np.where(a <= 4.0, middle, tail)
    a16 = np.trunc(a * 16.0) / 16.0  # exp(-a*a) = exp(-a16**2) exp(-(a-a16)(a+a16))
    return np.exp(-a16 * a16) * np.exp(-(a - a16) * (a + a16)) * r


def _erf64(x):
    a = np.abs(x)
    return np.where(a <= _ERF_SPLIT, _erf_small(x), np.copysign(1.0 - _erfc_large(a), x))


def _erfc64(x):
    a = np.abs(x)
    big = _erfc_large(a)
    return np.where(a <= _ERF_SPLIT, 1.0 - _erf_small(x), np.where(x < 0, 2.0 - big, big))


def _with_complex_from_scipy(real_kernel, name: str):
    """``real_kernel`` for real values; complex ones (the Faddeeva function) from
    scipy.special, imported when first needed: funcdiff needs scipy only for them."""
    real = _special(real_kernel)

    @functools.wraps(real)
    def kernel(x):
        x = np.asarray(x)
        if x.dtype.kind != "c":
            return real(x)
        try:
            special = importlib.import_module("scipy.special")
        except ImportError:
            raise DTypeError(
                f"{name} of complex values is the Faddeeva function, which funcdiff takes "
                "from scipy: install scipy (pip install funcdiff[scipy]).") from None
        with np.errstate(all="ignore"):
            return getattr(special, name)(x).astype(x.dtype, copy=False)
    return kernel


erf = _with_complex_from_scipy(_erf64, "erf")
erf.__doc__ = "The error function 2/sqrt(pi) * integral_0^x exp(-t**2) dt, elementwise."
erfc = _with_complex_from_scipy(_erfc64, "erfc")
erfc.__doc__ = "The complementary error function 1 - erf(x), accurate for large x."


# ---------------------------------------------------------------------------
# erf_inv

_GILES_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
                  -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
               -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)
_TWO_OVER_SQRT_PI = 1.12837916709551257389615890312154517
_SQRT_PI = 1.77245385090551602729816748334114518


def _erf_inv64(x):
    a = np.minimum(np.abs(x), 1.0 - 2.0 ** -53)  # largest double below 1; NaN stays
    w = -np.log((1.0 - a) * (1.0 + a))
    t = a * np.where(w < 5.0, _horner(_GILES_CENTRAL, w - 2.5),
                     _horner(_GILES_TAIL, np.sqrt(w) - 3.0))
    # Giles' fit ends at w = 16 (float32's range). Beyond, invert the asymptotic
    # erfc(t) ~ exp(-t^2) / (t sqrt(pi)) (1 - 1/(2 t^2)) by fixed-point steps.
    log_q = np.log(1.0 - a)
    tail = np.sqrt(-log_q)
    for _ in range(2):
        tail = np.sqrt(-log_q - np.log(tail * _SQRT_PI) + np.log1p(-0.5 / (tail * tail)))
    t = np.where(w < 16.0, t, tail)
    central = a <= 0.5
    for _ in range(3):  # Halley: t -= u / (1 + t u), u = f / f', f = erf(t) - a
        f = np.where(central, _erf64(t) - a, (1.0 - a) - _erfc64(t))
        u = f / (_TWO_OVER_SQRT_PI * np.exp(-t * t))
        t = t - u / (1.0 + t * u)
    abs_x = np.abs(x)
    t = np.where(abs_x == 1.0, np.inf, np.where(abs_x > 1.0, np.nan, t))
    return np.copysign(t, x)


erf_inv = _special(_erf_inv64)
erf_inv.__doc__ = "The inverse of erf on (-1, 1); +-inf at +-1 and NaN outside."


# ---------------------------------------------------------------------------
# Hurwitz zeta, shared by lgamma, digamma and polygamma

_EM_TERMS = 12


@functools.lru_cache(maxsize=None)
def _em_coeffs(s: int) -> tuple[float, ...]:
    """Euler-Maclaurin tail coefficients B_2j / (2j)! * s (s+1) ... (s+2j-2)."""
    out = []
    rising = Fraction(s)
    for j in range(1, _EM_TERMS + 1):
        out.append(float(_BERNOULLI[2 * j] / math.factorial(2 * j) * rising))
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return tuple(out)


def _hurwitz_zeta(s: int, q):
    """zeta(s, q) = sum_k (q + k)**-s for an integer s >= 2 (float64 arrays; q may be
    negative: the sum then runs through the negative terms, poles give inf).

    Terms are summed directly until q + N >= s + 12, where the Euler-Maclaurin
    remainder with 12 Bernoulli terms is below 1e-18 relative.
    """
    threshold = float(s + 12)
    shift = np.maximum(0.0, np.ceil(threshold - q))
    shift = np.where(np.isfinite(shift), shift, 0.0)
    total = np.zeros_like(q)
    for k in range(int(shift.max(initial=0.0))):
        total = total + np.where(k < shift, (q + k) ** -s, 0.0)
    a = q + shift
    inv_a2 = 1.0 / (a * a)
    a_1s = a ** (1 - s)
    em = a_1s * inv_a2 * _horner(_em_coeffs(s), inv_a2)  # sum_j c_j a**(-s-2j+1)
    tail = a_1s / (s - 1) + 0.5 * a_1s / a + em
    return total + np.where(np.isinf(a), 0.0, tail)


# ---------------------------------------------------------------------------
# lgamma

_STIRLING_TERMS = 10
_HALF_LOG_2PI = 0.91893853320467274178032973640561764
_STIRLING = tuple(float(_BERNOULLI[2 * k] / (2 * k * (2 * k - 1)))
                  for k in range(1, _STIRLING_TERMS + 1))
_LGAMMA_SERIES_TERMS = 30


@functools.lru_cache(maxsize=None)
def _lgamma_series() -> tuple[float, ...]:
    """Taylor coefficients of lgamma(2 + z): (1 - gamma) z + sum (-1)**k (zeta(k) - 1)/k z**k."""
    coeffs = [0.0, 1.0 - _EULER_GAMMA]
    for k in range(2, _LGAMMA_SERIES_TERMS + 1):
        coeffs.append((-1) ** k * float(_hurwitz_zeta(k, np.array(2.0))) / k)
    return tuple(coeffs)


def _stirling_lgamma(x):
    """lgamma(x) for x >= 7.5 (Stirling's series with 10 Bernoulli terms)."""
    inv = 1.0 / x
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + inv * _horner(_STIRLING, inv * inv)


def _lgamma_positive(x):
    """lgamma(x) for x > 0 (values elsewhere are meaningless)."""
    m = np.floor(np.minimum(x, 8.0) + 0.5)  # nearest integer; z = x - m in [-1/2, 1/2)
    z = x - m
    series = _horner(_lgamma_series(), z)  # lgamma(2 + z)
    prod = np.ones_like(x)
    for j in range(2, 7):  # lgamma(m + z) = lgamma(2 + z) + log((2+z) ... (m-1+z))
        prod = np.where(m > j, prod * (j + z), prod)
    small = np.where(m == 1, series - np.log1p(z), series - np.log1p(z) - np.log(z))
    near = np.where(m >= 2, series + np.log(prod), small)
    return np.where(x >= 7.5, _stirling_lgamma(np.maximum(x, 7.5)), near)


def _abs_sin_pi(x):
    """|sin(pi x)| with exact argument reduction (x - round(x) is exact)."""
    return np.abs(np.sin(np.pi * (x - np.round(x))))


def _lgamma64(x):
    negative = x < 0
    pos = _lgamma_positive(np.where(negative, 1.0 - x, x))
    reflected = np.log(np.pi / _abs_sin_pi(x)) - pos  # Gamma(x) Gamma(1-x) = pi / sin(pi x)
    out = np.where(negative, reflected, pos)
    return np.where(np.isinf(x), np.inf, out)


lgamma = _special(_lgamma64)
lgamma.__doc__ = "log|Gamma(x)|, elementwise; +inf at the poles 0, -1, -2, ..."


# ---------------------------------------------------------------------------
# digamma

_DIGAMMA_ASYMPTOTIC = tuple(float(_BERNOULLI[2 * k] / (2 * k)) for k in range(1, 11))
_DIGAMMA_ROOT = Decimal("1.4616321449683623412626595423257213284681962040064")
_ROOT_HI = float(_DIGAMMA_ROOT)
_ROOT_LO = float(_DIGAMMA_ROOT - Decimal(_ROOT_HI))
_ROOT_RADIUS = 0.5
_ROOT_TERMS = 36


@functools.lru_cache(maxsize=None)
def _digamma_root_series() -> tuple[float, ...]:
    """Taylor coefficients of psi(x0 + z): sum_k (-1)**(k+1) zeta(k+1, x0) z**k."""
    x0 = np.array(_ROOT_HI)
    return (0.0,) + tuple((-1) ** (k + 1) * float(_hurwitz_zeta(k + 1, x0))
                          for k in range(1, _ROOT_TERMS + 1))


def _digamma_positive(x):
    """psi(x) for x >= 1/2."""
    shifted = x
    correction = np.zeros_like(x)
    for _ in range(10):  # psi(x) = psi(x + 1) - 1/x until x >= 10
        below = shifted < 10.0
        correction = correction - np.where(below, 1.0 / shifted, 0.0)
        shifted = np.where(below, shifted + 1.0, shifted)
    inv2 = 1.0 / (shifted * shifted)
    asymptotic = np.log(shifted) - 0.5 / shifted - inv2 * _horner(_DIGAMMA_ASYMPTOTIC, inv2)
    out = np.asarray(asymptotic + correction)
    z = np.asarray((x - _ROOT_HI) - _ROOT_LO)
    near = np.abs(z) < _ROOT_RADIUS  # the recurrence cancels there; the series does not
    if near.any():
        out[near] = _horner(_digamma_root_series(), z[near])
    return out


def _cot_pi(x):
    """cot(pi x) with exact argument reduction (cot has period 1)."""
    return 1.0 / np.tan(np.pi * (x - np.round(x)))


def _digamma64(x):
    reflect = x < 0.5
    pos = _digamma_positive(np.where(reflect, 1.0 - x, x))
    out = np.where(reflect, pos - np.pi * _cot_pi(x), pos)
    out = np.where(x == 0, -np.copysign(np.inf, x), out)  # psi(+-0) = -+inf
    return np.where((x < 0) & (x == np.floor(x)), np.nan, out)


digamma = _special(_digamma64)
digamma.__doc__ = "The digamma function psi(x) = d/dx log Gamma(x), elementwise."


# ---------------------------------------------------------------------------
# polygamma


@functools.lru_cache(maxsize=None)
def _cot_derivative_poly(n: int) -> tuple[int, ...]:
    """Coefficients of P_n with d^n/du^n cot(u) = P_n(cot u): P_0 = c, P_k+1 = -(1 + c^2) P_k'."""
    p = [0, 1]
    for _ in range(n):
        dp = [k * p[k] for k in range(1, len(p))] or [0]
        new = [0] * (len(dp) + 2)
        for k, c in enumerate(dp):
            new[k] -= c
            new[k + 2] -= c
        p = new
    return tuple(p)


_POLYGAMMA_REFLECT_BELOW = -30.0


def _polygamma64(x, n):
    if n == 0:
        return _digamma64(x)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)**(n+1)
    # For x >= -30 the Hurwitz sum runs through the negative terms directly (exact
    # for integer order); far below, reflection avoids a long recurrence:
    # psi^(n)(x) = (-1)**n psi^(n)(1 - x) - pi**(n+1) P_n(cot(pi x)).
    reflect = x < _POLYGAMMA_REFLECT_BELOW
    q = np.where(reflect, 1.0 - x, x)
    direct = sign * math.factorial(n) * _hurwitz_zeta(n + 1, q)
    out = direct
    if reflect.any():
        cot_poly = [float(c) for c in _cot_derivative_poly(n)]
        reflected = -sign * direct - np.pi ** (n + 1) * _horner(cot_poly, _cot_pi(x))
        out = np.where(reflect, reflected, direct)
    return np.where((x <= 0) & (x == np.floor(x)), sign * np.inf, out)


def polygamma(n: int, x):
    """The polygamma function psi^(n)(x), the n-th derivative of digamma (n >= 0)."""
    n = int(n)
    if n < 0:
        raise ValueError(f"polygamma needs an order n >= 0, got {n}")
    x64, out_dtype = _prepare(x)
    with np.errstate(all="ignore"):
        out = _polygamma64(x64, n)
    return out.astype(out_dtype, copy=False)


# ---------------------------------------------------------------------------
# bessel_i1

_I1_SPLIT = 21.0
# sum_k t**k / (k! (k+1)!), t = x**2 / 4: 36 terms reach 1e-18 relative at the split
_I1_SERIES = tuple(float(Fraction(1, math.factorial(k) * math.factorial(k + 1)))
                   for k in range(36))


def _hankel_i1_coeffs(n: int) -> tuple[float, ...]:
    """Coefficients of 1/x**k in I1(x) sqrt(2 pi x) e**-x ~ 1 - 3/(8x) - 15/(128x**2) ...,
    the products of ((2j - 1)**2 - 4) / (8j) over j = 1 ... k."""
    out, c = [], Fraction(1)
    for k in range(1, n + 1):
        out.append(float(c))
        c *= Fraction((2 * k - 1) ** 2 - 4, 8 * k)
    return tuple(out)


_I1_ASYMPTOTIC = _hankel_i1_coeffs(24)
_TWO_PI = 6.28318530717958647692528676655900577


def _bessel_i1_64(x):
    a = np.abs(x)
    half = 0.5 * np.minimum(a, _I1_SPLIT)
    series = half * _horner(_I1_SERIES, half * half)
    big = np.maximum(a, _I1_SPLIT)
    root = np.exp(0.5 * big)  # e**x as root * root: no overflow before I1 itself
    tail = root * (_horner(_I1_ASYMPTOTIC, 1.0 / big) / np.sqrt(_TWO_PI * big)) * root
    out = np.where(a <= _I1_SPLIT, series, np.where(np.isinf(a), np.inf, tail))
    return np.copysign(out, x)


bessel_i1 = _special(_bessel_i1_64)
bessel_i1.__doc__ = "The modified Bessel function of the first kind of order 1, I1(x), elementwise."


# ---------------------------------------------------------------------------
# bessel_i of order n >= 2


def _i_split(n: int) -> float:
    return max(_I1_SPLIT, n * n / 3)


@functools.lru_cache(maxsize=None)
def _i_series(n: int) -> tuple[float, ...]:
    # sum_k t**k / (k! (k+n)!), t = x**2 / 4, to 1e-18 relative at the split
    terms = int(1.2 * _i_split(n)) + 12
    return tuple(float(Fraction(1, math.factorial(k) * math.factorial(k + n)))
                 for k in range(terms))


@functools.lru_cache(maxsize=None)
def _hankel_i_coeffs(n: int, terms: int = 24) -> tuple[float, ...]:
    """Coefficients of 1/x**k in I_n(x) sqrt(2 pi x) e**-x: the products of
    ((2j - 1)**2 - 4 n**2) / (8j) over j = 1 ... k."""
    out, c = [], Fraction(1)
    for k in range(1, terms + 1):
        out.append(float(c))
        c *= Fraction((2 * k - 1) ** 2 - 4 * n * n, 8 * k)
    return tuple(out)


def _bessel_i64(x, n):
    a, split = np.abs(x), _i_split(n)
    half = 0.5 * np.minimum(a, split)
    series = half ** n * _horner(_i_series(n), half * half)
    big = np.maximum(a, split)
    root = np.exp(0.5 * big)
    tail = root * (_horner(_hankel_i_coeffs(n), 1.0 / big) / np.sqrt(_TWO_PI * big)) * root
    out = np.where(a <= split, series, np.where(np.isinf(a), np.inf, tail))
    return np.copysign(out, x) if n % 2 else out


_bessel_i = _special(_bessel_i64)


def bessel_i(n: int, x):
    """The modified Bessel function of the first kind of integer order n >= 2, I_n(x)."""
    return _bessel_i(x, n)


# ---------------------------------------------------------------------------
# Derivatives of sinc

_SINC_TERMS = 25


def _sinc_split(n: int) -> float:
    return max(2.0, 1.0 + n / 2)


@functools.lru_cache(maxsize=None)
def _sinc_series(n: int) -> tuple[float, ...]:
    """S^(n)(y) = y**(n % 2) * sum_j c_j (y**2)**j, S(y) = sin(y) / y."""
    first = (n + 1) // 2
    return tuple(float(Fraction((-1) ** k, (2 * k + 1) * math.factorial(2 * k - n)))
                 for k in range(first, first + _SINC_TERMS))


_SIN_DERIVATIVES = (np.sin, np.cos, lambda y: -np.sin(y), lambda y: -np.cos(y))


def _sinc_derivative64(x, n):
    y = np.pi * x
    near = np.abs(y) < _sinc_split(n)
    y_near = np.where(near, y, 0.0)
    series = _horner(_sinc_series(n), y_near * y_near)
    if n % 2:
        series = series * y_near
    y_far = np.where(near, 1.0, y)
    s = np.sin(y_far) / y_far
    for m in range(n):
        s = (_SIN_DERIVATIVES[(m + 1) % 4](y_far) - (m + 1) * s) / y_far
    return np.pi ** n * np.where(near, series, s)


_sinc_derivative = _special(_sinc_derivative64)


def sinc_derivative(n: int, x):
    """The n-th derivative (n >= 1) of the normalised sinc sin(pi x) / (pi x), elementwise."""
    return _sinc_derivative(x, n)
