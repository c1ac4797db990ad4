"""The gamma distribution with shape ``a`` (``scipy.stats.gamma``).

The cdf and sf are the regularized incomplete gamma functions of
``funcdiff.scipy.special``, differentiable in x, loc, scale and the shape ``a``;
the ppf is scipy's inverse, differentiable in q, a, loc and scale.

>>> from funcdiff.scipy.stats import gamma
>>> round(float(gamma.logpdf(1.0, 1.0)), 12)  # exponential: -x
-1.0
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.primitives import scipy_quantiles as Q
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c
from funcdiff.scipy.stats._support import (finish, log_probability,
                                           outside_support, safe, scaled_quantile,
                                           standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, a, loc=0, scale=1):
    """Log of the gamma density ``z**(a-1) exp(-z) / Gamma(a) / scale``.

    ``z = (x - loc) / scale``; -inf for z < 0 (with a zero derivative).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import gamma
    >>> gamma.logpdf(np.array([-1.0, 2.0]), 2.0, scale=2.0)
    array([       -inf, -1.69314718])
    """
    z, log_scale, a = standardize("funcdiff.scipy.stats.gamma.logpdf", x, loc, scale, a)
    inside = ew.ge(z, _c(z, 0))
    z = ew.select(inside, z, _c(z, 1))
    value = ew.sub(ew.sub(special.xlogy(ew.sub(a, _c(a, 1)), z), z),
                   ew.add(G.gammaln(a), log_scale))
    return finish(outside_support(inside, value))

def pdf(x, a, loc=0, scale=1):
    """The gamma density at ``x`` (0 outside the support).

    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.pdf(2.0, 3.0)), 12)
    0.270670566473
    """
    return finish(ew.exp(logpdf(x, a, loc, scale)))


def _cdf_args(name, x, a, loc, scale):
    name = f"funcdiff.scipy.stats.gamma.{name}"
    z, _, a = standardize(name, x, loc, scale, a)
    inside = ew.ge(z, _c(z, 0))
    return safe(inside, z, 1.0), a, inside


def cdf(x, a, loc=0, scale=1):
    """The gamma cdf ``gammainc(a, z)`` (0 for z < 0).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.cdf(1.0, 2.0)), 12)
    0.264241117657
    >>> round(float(fd.grad(gamma.cdf)(1.0, 2.0)), 12)  # the density, x e^-x
    0.367879441171
    """
    z, a, inside = _cdf_args("cdf", x, a, loc, scale)
    return finish(ew.select(inside, special.gammainc(a, z), _c(z, 0)))

def logcdf(x, a, loc=0, scale=1):
    """Log of the gamma cdf (-inf for z <= 0).

    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.logcdf(1.0, 1.0)), 12)
    -0.458675145387
    """
    return finish(log_probability(cdf(x, a, loc, scale), sf(x, a, loc, scale)))

def sf(x, a, loc=0, scale=1):
    """The gamma survival function ``gammaincc(a, z)`` (1 for z < 0).

    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.sf(1.0, 2.0)), 12)
    0.735758882343
    """
    z, a, inside = _cdf_args("sf", x, a, loc, scale)
    return finish(ew.select(inside, special.gammaincc(a, z), _c(z, 1)))

def logsf(x, a, loc=0, scale=1):
    """Log of the gamma survival function.

    >>> from funcdiff.scipy.stats import gamma
    >>> float(gamma.logsf(3.0, 1.0))
    -3.0
    """
    return finish(log_probability(sf(x, a, loc, scale), cdf(x, a, loc, scale)))


def ppf(q, a, loc=0, scale=1):
    """The quantile function ``loc + scale * gammaincinv(a, q)`` (NaN off [0, 1]).

    Derivatives by the implicit function theorem: dx/dq is 1 / pdf(x).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.ppf(0.5, 1.0)), 12)  # the exponential's median, log 2
    0.69314718056
    >>> round(float(fd.grad(gamma.ppf)(0.5, 1.0)), 12)  # 1 / pdf = 1 / (1 - q)
    2.0
    """
    return scaled_quantile("funcdiff.scipy.stats.gamma.ppf", Q.gammaincinv, q, loc, scale, a)


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
