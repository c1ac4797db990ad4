"""funcdiff.scipy.special's error function and normal distribution functions.

``erf``, ``erfc`` and ``erfinv`` bind the primitives ``erf``, ``erfc`` and
``erf_inv``; ``ndtr``, ``ndtri`` and ``log_ndtr`` (the standard normal CDF, its
inverse and its logarithm, accurate in both tails) are compositions of them.
``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

import math

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c, floats

SQRT2 = math.sqrt(2.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_NDTR_LOWER = -20.0  # below this log_ndtr uses the asymptotic series (as JAX does;
                         # -10 in float32)
LOG_NDTR_TERMS = 10


def erf(x):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.

    Args:
      x: array_like of reals.

    Returns:
      ``erf(x)`` elementwise, float64 for integer input.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.erf(0.5)), 10)
    0.5204998778
    >>> round(float(fd.grad(special.erf)(0.0)), 10)  # 2 / sqrt(pi)
    1.1283791671
    """
    (x,) = floats("erf", x)
    return ew.erf(x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate in the right tail.

    >>> from funcdiff.scipy import special
    >>> float(special.erfc(10.0)) > 0
    True
    """
    (x,) = floats("erfc", x)
    return ew.erfc(x)


def erfinv(y):
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1 and NaN outside.

    >>> from funcdiff.scipy import special
    >>> round(float(special.erfinv(special.erf(0.3))), 12)
    0.3
    """
    (y,) = floats("erfinv", y)
    return ew.erf_inv(y)


def ndtr(x):
    """The standard normal cumulative distribution function ``Phi(x)``.

    Computed as ``erfc(-x / sqrt(2)) / 2``, so it keeps its relative accuracy in
    the left tail.

    >>> from funcdiff.scipy import special
    >>> float(special.ndtr(0.0))
    0.5
    """
    (x,) = floats("ndtr", x)
    return ew.mul(c(x, 0.5), ew.erfc(ew.mul(x, c(x, -1 / SQRT2))))


def ndtri(p):
    """The inverse of ``ndtr``: the standard normal quantile function.

    >>> from funcdiff.scipy import special
    >>> round(float(special.ndtri(0.975)), 6)
    1.959964
    """
    (p,) = floats("ndtri", p)
    return ew.mul(c(p, SQRT2), ew.erf_inv(ew.sub(ew.mul(c(p, 2), p), c(p, 1))))


def log_ndtr_asymptotic(z):
    """log Phi(z) for z <= -20 (-10 in float32): log(phi(z) / -z) + log of the series
    1 - 1/z^2 + 3/z^4 - 15/z^6 + ..."""
    inv_z2 = ew.div(c(z, 1), ew.mul(z, z))
    series, term = c(z, 1), c(z, 1)
    for k in range(1, LOG_NDTR_TERMS + 1):
        term = ew.mul(term, ew.mul(inv_z2, c(z, -(2 * k - 1))))
        series = ew.add(series, term)
    log_pdf = ew.sub(ew.mul(c(z, -0.5), ew.mul(z, z)), c(z, HALF_LOG_2PI))
    return ew.add(ew.sub(log_pdf, ew.log(ew.neg(z))), ew.log(series))


def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails and finite down to x = -1e150.

    Three branches, each evaluated at an input clamped into its own range and
    then selected, so every branch and its derivatives stay finite:
    ``log1p(-ndtr(-x))`` for x > 0, ``log(erfc(-x/sqrt 2)/2)`` for
    -20 <= x <= 0, and the asymptotic series of the Mills ratio below -20
    (-10 in float32, where ndtr underflows sooner).

    >>> from funcdiff.scipy import special
    >>> round(float(special.log_ndtr(-40.0)), 6)
    -804.608442
    """
    (x,) = floats("log_ndtr", x)
    # ndtr underflows near -37 in float64 but near -13 in float32
    zero, lower = c(x, 0), c(x, LOG_NDTR_LOWER if x.dtype.itemsize >= 8 else -10.0)
    positive = ew.gt(x, zero)
    far_left = ew.lt(x, lower)
    x_pos = ew.select(positive, x, zero)
    x_mid = ew.select(positive, zero, ew.select(far_left, lower, x))
    x_left = ew.select(far_left, x, lower)
    right = ew.log1p(ew.neg(ndtr(ew.neg(x_pos))))
    middle = ew.log(ndtr(x_mid))
    left = log_ndtr_asymptotic(x_left)
    return ew.select(positive, right, ew.select(far_left, left, middle))
