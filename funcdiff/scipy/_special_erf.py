"""funcdiff.scipy.special's error function and normal distribution functions.

``erf``, ``erfc`` and ``erfinv`` bind the cards of ``primitives.scipy_gamma_erf``
(scipy.special's values); ``ndtr``, ``ndtri`` and ``log_ndtr`` (the standard normal CDF, its
inverse and its logarithm, accurate in both tails) are compositions of them;
``log_ndtr``'s derivative ``phi / Phi`` is its own rule (a ``custom_jvp``), finite
at every order where the composition's would overflow.
``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.custom_derivatives import custom_jvp
from funcdiff.errors import DTypeError
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.scipy._special_util import c, floats

SQRT2 = math.sqrt(2.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
INV_SQRT_2PI = 1 / math.sqrt(2.0 * math.pi)
LOG_NDTR_LOWER = -20.0  # below this log_ndtr uses the asymptotic series (as JAX does;
                         # -10 in float32)
LOG_NDTR_TERMS = 10


def _erf_operand(name, x):
    """``x`` for erf and erfc: complex values pass as they are (scipy's Faddeeva
    function computes them), real ones become floats."""
    dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    if dtype.kind == "c":
        return x if hasattr(x, "dtype") else np.asarray(x)
    (x,) = floats(name, x)
    return x


def erf(x):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.

    Complex values are scipy's (the Faddeeva function, so scipy must be
    installed for them); the derivative ``2/sqrt(pi) exp(-z**2)`` is the
    holomorphic one.

    Args:
      x: array_like of reals or complex values.

    Returns:
      ``erf(x)`` elementwise, float64 for integer input.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.erf(0.5)), 10)
    0.5204998778
    >>> round(float(fd.grad(special.erf)(0.0)), 10)  # 2 / sqrt(pi)
    1.1283791671
    >>> complex(fd.grad(special.erf, holomorphic=True)(1j)) == 2 / np.sqrt(np.pi) * np.e
    True
    """
    return G.erf(_erf_operand("erf", x))


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate in the right tail.

    >>> from funcdiff.scipy import special
    >>> float(special.erfc(10.0)) > 0
    True
    """
    return G.erfc(_erf_operand("erfc", x))


def erfinv(y):
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1 and NaN outside.

    >>> from funcdiff.scipy import special
    >>> round(float(special.erfinv(special.erf(0.3))), 12)
    0.3
    """
    (y,) = floats("erfinv", y)
    return G.erfinv(y)


def ndtr(x):
    """The standard normal cumulative distribution function ``Phi(x)``.

    Computed as ``erfc(-x / sqrt(2)) / 2``, so it keeps its relative accuracy in
    the left tail.

    >>> from funcdiff.scipy import special
    >>> float(special.ndtr(0.0))
    0.5
    """
    (x,) = floats("ndtr", x)
    return ew.mul(c(x, 0.5), G.erfc(ew.mul(x, c(x, -1 / SQRT2))))


def ndtri(p):
    """The inverse of ``ndtr``: the standard normal quantile function.

    >>> from funcdiff.scipy import special
    >>> round(float(special.ndtri(0.975)), 6)
    1.959964
    """
    (p,) = floats("ndtri", p)
    return ew.mul(c(p, SQRT2), G.erfinv(ew.sub(ew.mul(c(p, 2), p), c(p, 1))))


def log_ndtr_asymptotic(z):
    """log Phi(z) for z <= -20 (-10 in float32): log(phi(z) / -z) + log of the series
    1 - 1/z^2 + 3/z^4 - 15/z^6 + ..."""
    series = c(z, 1)
    for term in mills_terms(z):
        series = ew.add(series, term)
    return ew.add(ew.sub(log_pdf(z), ew.log(ew.neg(z))), ew.log(series))


def mills_terms(z):
    """The terms (-1)^k (2k-1)!! / z^(2k), k = 1 ... LOG_NDTR_TERMS, of that series."""
    inv_z2 = ew.div(c(z, 1), ew.mul(z, z))
    terms, term = [], c(z, 1)
    for k in range(1, LOG_NDTR_TERMS + 1):
        term = ew.mul(term, ew.mul(inv_z2, c(z, -(2 * k - 1))))
        terms.append(term)
    return terms


def tail_slope(z):
    """The derivative of log_ndtr_asymptotic: -z - 1/z + S'(z) / S(z), where
    z S'(z) = sum -2k term_k."""
    series, z_slope = c(z, 1), c(z, 0)
    for k, term in enumerate(mills_terms(z), 1):
        series = ew.add(series, term)
        z_slope = ew.add(z_slope, ew.mul(c(z, -2 * k), term))
    return ew.sub(ew.div(ew.sub(ew.div(z_slope, series), c(z, 1)), z), z)


def log_pdf(z):
    return ew.sub(ew.mul(c(z, -0.5), ew.mul(z, z)), c(z, HALF_LOG_2PI))


def tail_start(x):
    # ndtr underflows near -37 in float64 but near -13 in float32
    return c(x, LOG_NDTR_LOWER if x.dtype.itemsize >= 8 else -10.0)


def log_ndtr_branches(x):
    """The three branches' masks and inputs, each clamped into its own range."""
    zero, lower = c(x, 0), tail_start(x)
    positive, far_left = ew.gt(x, zero), ew.lt(x, lower)
    x_pos = ew.select(positive, x, zero)
    x_mid = ew.select(positive, zero, ew.select(far_left, lower, x))
    x_left = ew.select(far_left, x, lower)
    return positive, far_left, x_pos, x_mid, x_left


@custom_jvp
def log_ndtr_kernel(x):
    positive, far_left, x_pos, x_mid, x_left = log_ndtr_branches(x)
    right = ew.log1p(ew.neg(ndtr(ew.neg(x_pos))))
    middle = ew.log(ndtr(x_mid))
    left = log_ndtr_asymptotic(x_left)
    return ew.select(positive, right, ew.select(far_left, left, middle))


@log_ndtr_kernel.defjvp
def log_ndtr_jvp(primals, tangents):
    # The derivative phi / Phi, by its own rule. Differentiating log(ndtr(x)) divides
    # by Phi**k at order k, which overflows near x = -20 from order 4 on (Phi(-20)
    # is 3e-89); the ratio and the tail's own derivative never do.
    (x,), (t,) = primals, tangents
    _, far_left, _, _, x_left = log_ndtr_branches(x)
    ratio = normal_ratio(ew.select(far_left, tail_start(x), x))
    slope = ew.select(far_left, tail_slope(x_left), ratio)
    return log_ndtr_kernel(x), ew.mul(t, slope)


@custom_jvp
def normal_ratio(x):
    """phi(x) / Phi(x) for x >= -20 (-10 in float32), the derivative of log_ndtr there.
    Both are taken at ndtr's own z = -x / sqrt 2: the rounding of z, which a large |x|
    magnifies in each, then cancels in the quotient."""
    z = ew.mul(x, c(x, -1 / SQRT2))
    gaussian = ew.mul(c(x, INV_SQRT_2PI), ew.exp(ew.neg(ew.mul(z, z))))
    return ew.div(gaussian, ew.mul(c(x, 0.5), G.erfc(z)))


@normal_ratio.defjvp
def normal_ratio_jvp(primals, tangents):
    # (phi / Phi)' = r (-x - r), of moderate numbers only, at every order
    (x,), (t,) = primals, tangents
    r = normal_ratio(x)
    return r, ew.mul(t, ew.mul(r, ew.sub(ew.neg(x), r)))


def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails and finite down to x = -1e150.

    Three branches, each evaluated at an input clamped into its own range and
    then selected, so every branch and its derivatives stay finite:
    ``log1p(-ndtr(-x))`` for x > 0, ``log(erfc(-x/sqrt 2)/2)`` for
    -20 <= x <= 0, and the asymptotic series of the Mills ratio below -20
    (-10 in float32, where ndtr underflows sooner). The derivative is its own
    rule, ``phi(x) / Phi(x)`` per branch, finite at every order.

    >>> from funcdiff.scipy import special
    >>> round(float(special.log_ndtr(-40.0)), 6)
    -804.608442
    """
    (x,) = floats("log_ndtr", x)
    return log_ndtr_kernel(x)
