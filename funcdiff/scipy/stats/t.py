"""Student's t distribution with ``df`` degrees of freedom (``scipy.stats.t``).

The cdf, sf and ppf take scipy's values (``stdtr``, ``stdtrit``); all are
differentiable in x (or q), df, loc and scale, the df derivative of the cdf
through the incomplete beta function.

>>> from funcdiff.scipy.stats import t
>>> round(float(t.logpdf(0.0, 1.0)), 12)  # Cauchy: -log(pi)
-1.144729885849
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.primitives import scipy_quantiles as Q
from funcdiff.scipy._special_util import c as _c
from funcdiff.scipy.stats._support import (LOG_PI, finish, log_probability, scaled_quantile,
                                           standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of the t density at ``x``.

    Args:
      x: array_like of points.
      df: degrees of freedom (> 0).
      loc, scale: location and scale (> 0).

    Returns:
      ``gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log(scale)
      - (df+1)/2 log1p(z**2/df)`` with ``z = (x - loc) / scale``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import t
    >>> round(float(fd.grad(t.logpdf, argnums=1)(0.0, 3.0)), 10)
    0.0264805139
    """
    z, log_scale, df = standardize("funcdiff.scipy.stats.t.logpdf", x, loc, scale, df)
    half, one = _c(z, 0.5), _c(z, 1)
    half_df_plus = ew.mul(half, ew.add(df, one))
    norm_const = ew.sub(ew.sub(G.gammaln(half_df_plus), G.gammaln(ew.mul(half, df))),
                        ew.mul(half, ew.add(ew.log(df), _c(z, LOG_PI))))
    kernel = ew.mul(half_df_plus, ew.log1p(ew.div(ew.mul(z, z), df)))
    return finish(ew.sub(ew.sub(norm_const, kernel), log_scale))


def pdf(x, df, loc=0, scale=1):
    """The t density at ``x``.

    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.pdf(0.0, 1.0)), 12)  # 1 / pi
    0.318309886184
    """
    return finish(ew.exp(logpdf(x, df, loc, scale)))


def cdf(x, df, loc=0, scale=1):
    """The t cdf at ``x`` (scipy.special.stdtr of the standardized x).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.cdf(1.0, 1.0)), 12)  # Cauchy: 3/4
    0.75
    >>> round(float(fd.grad(t.cdf)(1.0, 1.0)), 12)  # the density 1 / (2 pi)
    0.159154943092
    """
    z, _, df = standardize("funcdiff.scipy.stats.t.cdf", x, loc, scale, df)
    return finish(Q.stdtr(df, z))


def sf(x, df, loc=0, scale=1):
    """The t survival function ``cdf(-z)``, by symmetry.

    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.sf(1.0, 1.0)), 12)
    0.25
    """
    z, _, df = standardize("funcdiff.scipy.stats.t.sf", x, loc, scale, df)
    return finish(Q.stdtr(df, ew.neg(z)))


def logcdf(x, df, loc=0, scale=1):
    """Log of the t cdf.

    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.logcdf(1.0, 1.0)), 12)  # log 3/4
    -0.287682072452
    """
    return finish(log_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale)))


def logsf(x, df, loc=0, scale=1):
    """Log of the t survival function.

    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.logsf(1.0, 1.0)), 12)  # log 1/4
    -1.38629436112
    """
    return finish(log_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale)))


def ppf(q, df, loc=0, scale=1):
    """The t quantile ``loc + scale * stdtrit(df, q)`` (NaN off [0, 1]).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.ppf(0.75, 1.0)), 12)  # Cauchy: tan(pi/4)
    1.0
    >>> round(float(fd.grad(t.ppf)(0.75, 1.0)), 12)  # 1 / pdf(1) = 2 pi
    6.28318530718
    """
    return scaled_quantile("funcdiff.scipy.stats.t.ppf", Q.stdtrit, q, loc, scale, df)


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
