"""The exponential distribution with rate ``1 / scale`` (``scipy.stats.expon``).

Support ``x >= loc``; off it the density is 0, the cdf 0 and the survival
function 1, with zero derivatives.

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import expon
>>> round(float(expon.logpdf(2.0, scale=2.0)), 12)  # -1 - log 2
-1.69314718056
>>> round(float(expon.cdf(1.0)), 12)
0.632120558829
>>> float(fd.grad(expon.logsf, argnums=2)(3.0, 0.0, 1.5))  # z / scale
1.3333333333333333
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import (LOG_2, finish, nan_outside_unit, outside_support, safe,
                                           standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(name, x, loc, scale):
    z, log_scale = standardize(f"funcdiff.scipy.stats.expon.{name}", x, loc, scale)
    inside = ew.ge(z, _c(z, 0))
    return safe(inside, z, 1.0), inside, log_scale


def logpdf(x, loc=0, scale=1):
    """Log of the density ``exp(-z) / scale``, ``z = (x - loc) / scale`` (-inf for z < 0).

    >>> from funcdiff.scipy.stats import expon
    >>> float(expon.logpdf(1.0))
    -1.0
    """
    z, inside, log_scale = _z("logpdf", x, loc, scale)
    return finish(outside_support(inside, ew.neg(ew.add(z, log_scale))))

def pdf(x, loc=0, scale=1):
    """The exponential density at ``x`` (0 for x < loc).

    >>> from funcdiff.scipy.stats import expon
    >>> float(expon.pdf(0.0))
    1.0
    """
    return finish(ew.exp(logpdf(x, loc, scale)))

def cdf(x, loc=0, scale=1):
    """The cumulative distribution function ``1 - exp(-z)`` (by expm1).

    >>> from funcdiff.scipy.stats import expon
    >>> float(expon.cdf(-1.0))
    0.0
    """
    z, inside, _ = _z("cdf", x, loc, scale)
    return finish(ew.select(inside, ew.neg(ew.expm1(ew.neg(z))), _c(z, 0)))

def logcdf(x, loc=0, scale=1):
    """Log of the cdf, ``log(1 - exp(-z))`` (-inf for z <= 0).

    >>> from funcdiff.scipy.stats import expon
    >>> round(float(expon.logcdf(1.0)), 12)
    -0.458675145387
    """
    z, inside, _ = _z("logcdf", x, loc, scale)
    # log(-expm1(-z)) near 0, log1p(-exp(-z)) beyond log 2: each accurate where it is used
    near = ew.lt(z, _c(z, LOG_2))
    z_near = ew.select(near, ew.max(z, _c(z, 1e-300)), _c(z, 1))
    value = ew.select(near, ew.log(ew.neg(ew.expm1(ew.neg(z_near)))),
                      ew.log1p(ew.neg(ew.exp(ew.neg(ew.max(z, _c(z, LOG_2)))))))
    return finish(outside_support(ew.and_(inside, ew.gt(z, _c(z, 0))), value))

def sf(x, loc=0, scale=1):
    """The survival function ``exp(-z)`` (1 for z < 0).

    >>> from funcdiff.scipy.stats import expon
    >>> round(float(expon.sf(1.0)), 12)
    0.367879441171
    """
    z, inside, _ = _z("sf", x, loc, scale)
    return finish(ew.select(inside, ew.exp(ew.neg(z)), _c(z, 1)))

def logsf(x, loc=0, scale=1):
    """Log of the survival function, ``-z`` (0 for z < 0).

    >>> from funcdiff.scipy.stats import expon
    >>> float(expon.logsf(2.0))
    -2.0
    """
    z, inside, _ = _z("logsf", x, loc, scale)
    return finish(ew.select(inside, ew.neg(z), _c(z, 0)))

def ppf(q, loc=0, scale=1):
    """The quantile function ``loc - scale log(1 - q)`` (NaN off [0, 1]).

    >>> from funcdiff.scipy.stats import expon
    >>> round(float(expon.ppf(0.5)), 12)  # log 2
    0.69314718056
    """
    q, loc, scale = _floats("funcdiff.scipy.stats.expon.ppf", q, loc, scale)
    value = ew.sub(loc, ew.mul(scale, ew.log1p(ew.neg(q))))
    return finish(nan_outside_unit(q, value))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
