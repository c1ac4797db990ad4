"""The Laplace (double exponential) distribution (``scipy.stats.laplace``).

The density ``exp(-|z|) / (2 scale)``, ``z = (x - loc) / scale``. The log-cdf
and log-sf are exact in the far tails (``z - log 2`` on the left), where
``log(cdf)`` would underflow.

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import laplace
>>> round(float(laplace.logpdf(1.0)), 12)  # -1 - log 2
-1.69314718056
>>> float(laplace.cdf(0.0))
0.5
>>> float(fd.grad(laplace.logpdf, argnums=1)(3.0, 1.0))  # sign(x - loc) / scale
1.0
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import LOG_2, finish, nan_outside_unit, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(name, x, loc, scale):
    return standardize(f"funcdiff.scipy.stats.laplace.{name}", x, loc, scale)


def logpdf(x, loc=0, scale=1):
    """Log of the Laplace density, ``-|z| - log(2 scale)``.

    >>> from funcdiff.scipy.stats import laplace
    >>> round(float(laplace.logpdf(0.0)), 12)
    -0.69314718056
    """
    z, log_scale = _z("logpdf", x, loc, scale)
    return finish(ew.neg(ew.add(ew.abs(z), ew.add(log_scale, _c(z, LOG_2)))))

def pdf(x, loc=0, scale=1):
    """The Laplace density at ``x``.

    >>> from funcdiff.scipy.stats import laplace
    >>> float(laplace.pdf(0.0))
    0.5
    """
    return finish(ew.exp(logpdf(x, loc, scale)))


def _cdf(z):
    # each branch sees only its own side of 0, so neither exp overflows
    left = ew.mul(_c(z, 0.5), ew.exp(ew.min(z, _c(z, 0))))
    right = ew.sub(_c(z, 1), ew.mul(_c(z, 0.5), ew.exp(ew.neg(ew.max(z, _c(z, 0))))))
    return ew.select(ew.gt(z, _c(z, 0)), right, left)


def _logcdf(z):
    left = ew.sub(ew.min(z, _c(z, 0)), _c(z, LOG_2))
    right = ew.log1p(ew.mul(_c(z, -0.5), ew.exp(ew.neg(ew.max(z, _c(z, 0))))))
    return ew.select(ew.gt(z, _c(z, 0)), right, left)


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function.

    >>> from funcdiff.scipy.stats import laplace
    >>> round(float(laplace.cdf(1.0)), 12)
    0.816060279414
    """
    z, _ = _z("cdf", x, loc, scale)
    return finish(_cdf(z))

def logcdf(x, loc=0, scale=1):
    """Log of the cdf, exact far into the left tail.

    >>> from funcdiff.scipy.stats import laplace
    >>> round(float(laplace.logcdf(-1000.0)), 6)
    -1000.693147
    """
    z, _ = _z("logcdf", x, loc, scale)
    return finish(_logcdf(z))

def sf(x, loc=0, scale=1):
    """The survival function ``cdf(-z)``.

    >>> from funcdiff.scipy.stats import laplace
    >>> round(float(laplace.sf(1.0)), 12)
    0.183939720586
    """
    z, _ = _z("sf", x, loc, scale)
    return finish(_cdf(ew.neg(z)))

def logsf(x, loc=0, scale=1):
    """Log of the survival function, exact far into the right tail.

    >>> from funcdiff.scipy.stats import laplace
    >>> round(float(laplace.logsf(1000.0)), 6)
    -1000.693147
    """
    z, _ = _z("logsf", x, loc, scale)
    return finish(_logcdf(ew.neg(z)))

def ppf(q, loc=0, scale=1):
    """The quantile function: ``log(2q)`` below the median, ``-log(2(1-q))`` above.

    >>> from funcdiff.scipy.stats import laplace
    >>> float(laplace.ppf(0.5, loc=3.0))
    3.0
    """
    q, loc, scale = _floats("funcdiff.scipy.stats.laplace.ppf", q, loc, scale)
    half = _c(q, 0.5)
    low = ew.log(ew.mul(_c(q, 2), ew.min(q, half)))
    high = ew.neg(ew.log(ew.mul(_c(q, 2), ew.sub(_c(q, 1), ew.max(q, half)))))
    z = ew.select(ew.gt(q, half), high, low)
    return finish(nan_outside_unit(q, ew.add(loc, ew.mul(scale, z))))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
