"""The chi-squared distribution with ``df`` degrees of freedom (``scipy.stats.chi2``).

The gamma distribution of shape ``df / 2`` and scale 2. The density is
differentiable in x, df, loc and scale; the cdf and sf (the regularized
incomplete gamma functions of ``funcdiff.scipy.special``) in x, df, loc and scale;
the ppf (scipy's inverse incomplete gamma function) in q, df, loc and scale.

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import chi2
>>> round(float(chi2.logpdf(2.0, 2.0)), 12)  # -1 - log 2
-1.69314718056
>>> round(float(chi2.cdf(2.0, 2.0)), 12)  # 1 - e^-1
0.632120558829
>>> round(float(fd.grad(chi2.cdf)(2.0, 2.0)), 12)  # the density e^-1 / 2
0.183939720586
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.primitives import scipy_quantiles as Q
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import (LOG_2, finish, log_probability,
                                           outside_support, safe, standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of the density ``z**(df/2-1) exp(-z/2) / (2**(df/2) Gamma(df/2)) / scale``.

    ``z = (x - loc) / scale``; -inf for z < 0 (with a zero derivative).

    >>> from funcdiff.scipy.stats import chi2
    >>> round(float(chi2.logpdf(1.0, 3.0)), 12)
    -1.418938533205
    """
    z, log_scale, df = standardize("funcdiff.scipy.stats.chi2.logpdf", x, loc, scale, df)
    inside = ew.ge(z, _c(z, 0))
    z = safe(inside, z, 1.0)
    half_df = ew.mul(_c(df, 0.5), df)
    value = ew.sub(special.xlogy(ew.sub(half_df, _c(df, 1)), z), ew.mul(_c(z, 0.5), z))
    value = ew.sub(value, ew.add(G.gammaln(half_df), ew.mul(_c(df, LOG_2), half_df)))
    return finish(outside_support(inside, ew.sub(value, log_scale)))

def pdf(x, df, loc=0, scale=1):
    """The chi-squared density at ``x`` (0 for x < loc).

    >>> from funcdiff.scipy.stats import chi2
    >>> round(float(chi2.pdf(2.0, 2.0)), 12)
    0.183939720586
    """
    return finish(ew.exp(logpdf(x, df, loc, scale)))


def _cdf_args(name, x, df, loc, scale):
    name = f"funcdiff.scipy.stats.chi2.{name}"
    z, _, df = standardize(name, x, loc, scale, df)
    inside = ew.ge(z, _c(z, 0))
    half_df = ew.mul(_c(df, 0.5), df)
    return ew.mul(_c(z, 0.5), safe(inside, z, 1.0)), half_df, inside


def cdf(x, df, loc=0, scale=1):
    """The chi-squared cdf ``gammainc(df/2, z/2)`` (0 for z < 0).

    >>> from funcdiff.scipy.stats import chi2
    >>> float(chi2.cdf(-1.0, 3.0))
    0.0
    """
    half_z, half_df, inside = _cdf_args("cdf", x, df, loc, scale)
    return finish(ew.select(inside, special.gammainc(half_df, half_z), _c(half_z, 0)))

def logcdf(x, df, loc=0, scale=1):
    """Log of the chi-squared cdf (-inf for z <= 0).

    >>> from funcdiff.scipy.stats import chi2
    >>> round(float(chi2.logcdf(2.0, 2.0)), 12)
    -0.458675145387
    """
    return finish(log_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale)))

def sf(x, df, loc=0, scale=1):
    """The chi-squared survival function ``gammaincc(df/2, z/2)`` (1 for z < 0).

    >>> from funcdiff.scipy.stats import chi2
    >>> round(float(chi2.sf(2.0, 2.0)), 12)  # e^-1
    0.367879441171
    """
    half_z, half_df, inside = _cdf_args("sf", x, df, loc, scale)
    return finish(ew.select(inside, special.gammaincc(half_df, half_z), _c(half_z, 1)))

def logsf(x, df, loc=0, scale=1):
    """Log of the chi-squared survival function.

    >>> from funcdiff.scipy.stats import chi2
    >>> float(chi2.logsf(6.0, 2.0))
    -3.0
    """
    return finish(log_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale)))


def ppf(q, df, loc=0, scale=1):
    """The quantile function ``loc + 2 scale gammaincinv(df/2, q)`` (NaN off [0, 1]).

    >>> from funcdiff.scipy.stats import chi2
    >>> round(float(chi2.ppf(0.95, 1.0)), 9)  # 1.96 squared
    3.841458821
    """
    q, df, loc, scale = _floats("funcdiff.scipy.stats.chi2.ppf", q, df, loc, scale)
    half = _c(q, 0.5)
    return finish(ew.add(loc, ew.mul(ew.add(scale, scale), Q.gammaincinv(ew.mul(half, df), q))))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
