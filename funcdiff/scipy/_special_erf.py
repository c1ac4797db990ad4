"""funcdiff.scipy.special's error function and normal distribution functions.

``erf``, ``erfc`` and ``erfinv`` bind the primitives ``erf``, ``erfc`` and
``erf_inv``; ``ndtr``, ``ndtri`` and ``log_ndtr`` (the standard normal CDF, its
inverse and its logarithm, accurate in both tails) are compositions of them.
``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

import math

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import _c, _floats

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_NDTR_LOWER = -20.0  # below this log_ndtr uses the asymptotic series (as JAX does;
                         # -10 in float32)
_LOG_NDTR_TERMS = 10


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
    (x,) = _floats("erf", x)
    return ew.erf(x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate in the right tail.

    >>> from funcdiff.scipy import special
    >>> float(special.erfc(10.0)) > 0
    True
    """
    (x,) = _floats("erfc", x)
    return ew.erfc(x)


def erfinv(y):
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1 and NaN outside.

    >>> from funcdiff.scipy import special
    >>> round(float(special.erfinv(special.erf(0.3))), 12)
    0.3
    """
    (y,) = _floats("erfinv", y)
    return ew.erf_inv(y)


def ndtr(x):
    """The standard normal cumulative distribution function ``Phi(x)``.

    Computed as ``erfc(-x / sqrt(2)) / 2``, so it keeps its relative accuracy in
    the left tail.

    >>> from funcdiff.scipy import special
    >>> float(special.ndtr(0.0))
    0.5
    """
    (x,) = _floats("ndtr", x)
    return ew.mul(_c(x, 0.5), ew.erfc(ew.mul(x, _c(x, -1 / _SQRT2))))


def ndtri(p):
    """The inverse of ``ndtr``: the standard normal quantile function.

    >>> from funcdiff.scipy import special
    >>> round(float(special.ndtri(0.975)), 6)
    1.959964
    """
    (p,) = _floats("ndtri", p)
    return ew.mul(_c(p, _SQRT2), ew.erf_inv(ew.sub(ew.mul(_c(p, 2), p), _c(p, 1))))


def _log_ndtr_asymptotic(z):
    """log Phi(z) for z <= -20 (-10 in float32): log(phi(z) / -z) + log of the series
    1 - 1/z^2 + 3/z^4 - 15/z^6 + ..."""
    inv_z2 = ew.div(_c(z, 1), ew.mul(z, z))
    series, term = _c(z, 1), _c(z, 1)
    for k in range(1, _LOG_NDTR_TERMS + 1):
        term = ew.mul(term, ew.mul(inv_z2, _c(z, -(2 * k - 1))))
        series = ew.add(series, term)
    log_pdf = ew.sub(ew.mul(_c(z, -0.5), ew.mul(z, z)), _c(z, _HALF_LOG_2PI))
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
    (x,) = _floats("log_ndtr", x)
    # ndtr underflows near -37 in float64 but near -13 in float32
    zero, lower = _c(x, 0), _c(x, _LOG_NDTR_LOWER if x.dtype.itemsize >= 8 else -10.0)
    positive = ew.gt(x, zero)
    far_left = ew.lt(x, lower)
    x_pos = ew.select(positive, x, zero)
    x_mid = ew.select(positive, zero, ew.select(far_left, lower, x))
    x_left = ew.select(far_left, x, lower)
    right = ew.log1p(ew.neg(ndtr(ew.neg(x_pos))))
    middle = ew.log(ndtr(x_mid))
    left = _log_ndtr_asymptotic(x_left)
    return ew.select(positive, right, ew.select(far_left, left, middle))
