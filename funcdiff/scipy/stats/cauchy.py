"""The Cauchy distribution (``scipy.stats.cauchy``), Student's t with one degree of freedom.

The cdf is ``atan2(1, -z) / pi``, ``z = (x - loc) / scale``, which keeps its
relative accuracy in the left tail (and the sf in the right one).

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import cauchy
>>> round(float(cauchy.logpdf(0.0)), 12)  # -log pi
-1.144729885849
>>> float(cauchy.cdf(1.0))
0.75
>>> float(fd.grad(cauchy.logpdf)(1.0))  # -2 z / (1 + z**2)
-1.0
"""

from __future__ import annotations

import math

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import LOG_PI, finish, nan_outside_unit, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(name, x, loc, scale):
    return standardize(f"funcdiff.scipy.stats.cauchy.{name}", x, loc, scale)


def logpdf(x, loc=0, scale=1):
    """Log of the Cauchy density, ``-log(pi scale) - log1p(z**2)``.

    For |z| > 1 it is ``-log(pi scale) - 2 log|z| - log1p(z**-2)``, so z**2
    never overflows.

    >>> from funcdiff.scipy.stats import cauchy
    >>> round(float(cauchy.logpdf(1e200)), 6)
    -922.178767
    """
    z, log_scale = _z("logpdf", x, loc, scale)
    one = _c(z, 1)
    small = ew.le(ew.abs(z), one)
    z_small = ew.select(small, z, _c(z, 0))
    z_large = ew.select(small, one, z)
    inner = ew.log1p(ew.mul(z_small, z_small))
    inverse = ew.div(one, z_large)
    outer = ew.add(ew.mul(_c(z, 2), ew.log(ew.abs(z_large))), ew.log1p(ew.mul(inverse, inverse)))
    value = ew.select(small, inner, outer)
    return finish(ew.neg(ew.add(value, ew.add(log_scale, _c(z, LOG_PI)))))

def pdf(x, loc=0, scale=1):
    """The Cauchy density at ``x``.

    >>> from funcdiff.scipy.stats import cauchy
    >>> round(float(cauchy.pdf(0.0)), 12)  # 1 / pi
    0.318309886184
    """
    return finish(ew.exp(logpdf(x, loc, scale)))

def cdf(x, loc=0, scale=1):
    """The cumulative distribution function ``atan2(1, -z) / pi``.

    >>> from funcdiff.scipy.stats import cauchy
    >>> float(cauchy.cdf(0.0))
    0.5
    """
    z, _ = _z("cdf", x, loc, scale)
    return finish(ew.div(ew.atan2(_c(z, 1), ew.neg(z)), _c(z, math.pi)))

def logcdf(x, loc=0, scale=1):
    """Log of the cdf.

    >>> from funcdiff.scipy.stats import cauchy
    >>> round(float(cauchy.logcdf(0.0)), 12)
    -0.69314718056
    """
    return finish(ew.log(cdf(x, loc, scale)))

def sf(x, loc=0, scale=1):
    """The survival function ``atan2(1, z) / pi``.

    >>> from funcdiff.scipy.stats import cauchy
    >>> float(cauchy.sf(1.0))
    0.25
    """
    z, _ = _z("sf", x, loc, scale)
    return finish(ew.div(ew.atan2(_c(z, 1), z), _c(z, math.pi)))

def logsf(x, loc=0, scale=1):
    """Log of the survival function.

    >>> from funcdiff.scipy.stats import cauchy
    >>> round(float(cauchy.logsf(1.0)), 12)  # log 1/4
    -1.38629436112
    """
    return finish(ew.log(sf(x, loc, scale)))

def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale tan(pi (q - 1/2))`` (NaN off [0, 1]).

    Computed as ``-1 / tan(pi q)`` below the median and ``1 / tan(pi (1 - q))``
    above it, so the tails keep their relative accuracy.

    >>> from funcdiff.scipy.stats import cauchy
    >>> round(float(cauchy.ppf(0.75)), 12)
    1.0
    """
    q, loc, scale = _floats("funcdiff.scipy.stats.cauchy.ppf", q, loc, scale)
    half, pi = _c(q, 0.5), _c(q, math.pi)
    low = ew.neg(ew.div(_c(q, 1), ew.tan(ew.mul(pi, ew.min(q, half)))))
    high = ew.div(_c(q, 1), ew.tan(ew.mul(pi, ew.sub(_c(q, 1), ew.max(q, half)))))
    z = ew.select(ew.gt(q, half), high, low)
    z = ew.select(ew.eq(q, half), _c(q, 0), z)
    return finish(nan_outside_unit(q, ew.add(loc, ew.mul(scale, z))))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
