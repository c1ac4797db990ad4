"""The logistic distribution (``scipy.stats.logistic``).

The cdf is ``expit(z)``, ``z = (x - loc) / scale``; log-cdf and log-sf use
``funcdiff.scipy.special.log_expit``, so they stay finite in both tails.

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import logistic
>>> round(float(logistic.logpdf(0.0)), 12)  # -2 log 2
-1.38629436112
>>> float(logistic.cdf(0.0))
0.5
>>> float(fd.grad(logistic.logcdf)(0.0))  # sf(0)
0.5
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import finish, nan_outside_unit, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(name, x, loc, scale):
    return standardize(f"funcdiff.scipy.stats.logistic.{name}", x, loc, scale)


def logpdf(x, loc=0, scale=1):
    """Log of the logistic density, ``-|z| - 2 log1p(exp(-|z|)) - log(scale)``.

    >>> from funcdiff.scipy.stats import logistic
    >>> round(float(logistic.logpdf(800.0)), 6)
    -800.0
    """
    z, log_scale = _z("logpdf", x, loc, scale)
    y = ew.neg(ew.abs(z))
    return finish(ew.sub(ew.sub(y, ew.mul(_c(z, 2), ew.log1p(ew.exp(y)))), log_scale))

def pdf(x, loc=0, scale=1):
    """The logistic density at ``x``.

    >>> from funcdiff.scipy.stats import logistic
    >>> float(logistic.pdf(0.0))
    0.25
    """
    return finish(ew.exp(logpdf(x, loc, scale)))

def cdf(x, loc=0, scale=1):
    """The cumulative distribution function ``expit(z)``.

    >>> from funcdiff.scipy.stats import logistic
    >>> round(float(logistic.cdf(1.0)), 12)
    0.73105857863
    """
    z, _ = _z("cdf", x, loc, scale)
    return finish(special.expit(z))

def logcdf(x, loc=0, scale=1):
    """Log of the cdf, ``log_expit(z)``.

    >>> from funcdiff.scipy.stats import logistic
    >>> round(float(logistic.logcdf(-800.0)), 6)
    -800.0
    """
    z, _ = _z("logcdf", x, loc, scale)
    return finish(special.log_expit(z))

def sf(x, loc=0, scale=1):
    """The survival function ``expit(-z)``.

    >>> from funcdiff.scipy.stats import logistic
    >>> round(float(logistic.sf(1.0)), 12)
    0.26894142137
    """
    z, _ = _z("sf", x, loc, scale)
    return finish(special.expit(ew.neg(z)))

def logsf(x, loc=0, scale=1):
    """Log of the survival function, ``log_expit(-z)``.

    >>> from funcdiff.scipy.stats import logistic
    >>> round(float(logistic.logsf(800.0)), 6)
    -800.0
    """
    z, _ = _z("logsf", x, loc, scale)
    return finish(special.log_expit(ew.neg(z)))

def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale logit(q)`` (NaN off [0, 1]).

    >>> from funcdiff.scipy.stats import logistic
    >>> float(logistic.ppf(0.5))
    0.0
    """
    q, loc, scale = _floats("funcdiff.scipy.stats.logistic.ppf", q, loc, scale)
    return finish(nan_outside_unit(q, ew.add(loc, ew.mul(scale, special.logit(q)))))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
