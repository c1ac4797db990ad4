"""The beta distribution with shapes ``a`` and ``b`` (``scipy.stats.beta``).

The cdf and sf are the regularized incomplete beta function of
``funcdiff.scipy.special``, differentiable in x, loc, scale and the shapes ``a``, ``b``.

>>> from funcdiff.scipy.stats import beta
>>> round(float(beta.logpdf(0.5, 2.0, 2.0)), 12)  # log 1.5
0.405465108108
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_quantiles as Q
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c
from funcdiff.scipy.stats._support import (finish, log_probability, outside_support, safe,
                                           scaled_quantile, standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, a, b, loc=0, scale=1):
    """Log of the beta density ``z**(a-1) (1-z)**(b-1) / B(a, b) / scale``.

    ``z = (x - loc) / scale``; -inf outside [0, 1] (with a zero derivative).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import beta
    >>> beta.logpdf(np.array([0.5, 1.5]), 2.0, 2.0)
    array([0.40546511,       -inf])
    """
    z, log_scale, a, b = standardize("funcdiff.scipy.stats.beta.logpdf", x, loc, scale, a, b)
    zero, one = _c(z, 0), _c(z, 1)
    inside = ew.and_(ew.ge(z, zero), ew.le(z, one))
    z = ew.select(inside, z, _c(z, 0.5))
    value = ew.add(special.xlogy(ew.sub(a, one), z), special.xlog1py(ew.sub(b, one), ew.neg(z)))
    value = ew.sub(value, ew.add(special.betaln(a, b), log_scale))
    return finish(outside_support(inside, value))

def pdf(x, a, b, loc=0, scale=1):
    """The beta density at ``x`` (0 outside the support).

    >>> from funcdiff.scipy.stats import beta
    >>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)
    1.5
    """
    return finish(ew.exp(logpdf(x, a, b, loc, scale)))


def _cdf_parts(name, x, a, b, loc, scale):
    name = f"funcdiff.scipy.stats.beta.{name}"
    z, _, a, b = standardize(name, x, loc, scale, a, b)
    below, above = ew.le(z, _c(z, 0)), ew.ge(z, _c(z, 1))
    return safe(ew.not_(ew.or_(below, above)), z, 0.5), a, b, below, above


def cdf(x, a, b, loc=0, scale=1):
    """The beta cdf ``betainc(a, b, z)`` (0 below the support, 1 above).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import beta
    >>> float(beta.cdf(0.5, 2.0, 3.0))
    0.6875
    >>> round(float(fd.grad(beta.cdf)(0.5, 2.0, 3.0)), 12)  # the density
    1.5
    """
    z, a, b, below, above = _cdf_parts("cdf", x, a, b, loc, scale)
    value = special.betainc(a, b, z)
    return finish(ew.select(below, _c(z, 0), ew.select(above, _c(z, 1), value)))

def logcdf(x, a, b, loc=0, scale=1):
    """Log of the beta cdf.

    >>> from funcdiff.scipy.stats import beta
    >>> round(float(beta.logcdf(0.5, 1.0, 1.0)), 12)
    -0.69314718056
    """
    return finish(log_probability(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale)))

def sf(x, a, b, loc=0, scale=1):
    """The beta survival function ``betainc(b, a, 1 - z)``.

    >>> from funcdiff.scipy.stats import beta
    >>> float(beta.sf(0.5, 2.0, 3.0))
    0.3125
    """
    z, a, b, below, above = _cdf_parts("sf", x, a, b, loc, scale)
    value = special.betainc(b, a, ew.sub(_c(z, 1), z))
    return finish(ew.select(below, _c(z, 1), ew.select(above, _c(z, 0), value)))

def logsf(x, a, b, loc=0, scale=1):
    """Log of the beta survival function.

    >>> from funcdiff.scipy.stats import beta
    >>> round(float(beta.logsf(0.75, 1.0, 1.0)), 12)  # log 1/4
    -1.38629436112
    """
    return finish(log_probability(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale)))


def ppf(q, a, b, loc=0, scale=1):
    """The quantile function ``loc + scale * betaincinv(a, b, q)`` (NaN off [0, 1]),
    differentiable in q, a, b, loc and scale.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import beta
    >>> float(beta.ppf(0.25, 2.0, 1.0))  # the cdf is z**2
    0.5
    >>> float(fd.grad(beta.ppf)(0.25, 2.0, 1.0))  # 1 / pdf = 1 / (2 z)
    1.0
    """
    return scaled_quantile("funcdiff.scipy.stats.beta.ppf", Q.betaincinv, q, loc, scale, a, b)


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
