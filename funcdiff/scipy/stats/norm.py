"""The normal distribution ``N(loc, scale**2)`` (``scipy.stats.norm``).

>>> from funcdiff.scipy.stats import norm
>>> round(float(norm.logpdf(0.0)), 12)
-0.918938533205
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import HALF_LOG_2PI, finish, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """Log of the normal density at ``x``.

    Args:
      x: array_like of points.
      loc: mean, broadcast against ``x``.
      scale: standard deviation (> 0), broadcast against ``x``.

    Returns:
      ``-(x - loc)**2 / (2 scale**2) - log(scale) - log(2 pi) / 2``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import norm
    >>> float(fd.grad(norm.logpdf)(1.5))  # -(x - loc) / scale**2
    -1.5
    """
    z, log_scale = standardize("funcdiff.scipy.stats.norm.logpdf", x, loc, scale)
    out = ew.sub(ew.mul(_c(z, -0.5), ew.mul(z, z)), ew.add(log_scale, _c(z, HALF_LOG_2PI)))
    return finish(out)

def pdf(x, loc=0, scale=1):
    """The normal density at ``x``.

    >>> from funcdiff.scipy.stats import norm
    >>> round(float(norm.pdf(0.0)), 12)
    0.398942280401
    """
    return finish(ew.exp(logpdf(x, loc, scale)))

def cdf(x, loc=0, scale=1):
    """The normal cumulative distribution function, accurate in the left tail.

    >>> from funcdiff.scipy.stats import norm
    >>> float(norm.cdf(1.0, loc=1.0, scale=2.0))
    0.5
    """
    z, _ = standardize("funcdiff.scipy.stats.norm.cdf", x, loc, scale)
    return finish(special.ndtr(z))

def logcdf(x, loc=0, scale=1):
    """Log of the normal cdf, accurate and finite far into the left tail.

    Uses ``funcdiff.scipy.special.log_ndtr``: ``log(erfc(-z/sqrt 2)/2)`` in
    the middle, ``log1p(-ndtr(-z))`` on the right and the asymptotic series
    below z = -20, each branch selected with NaN-free derivatives.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import norm
    >>> round(float(norm.logcdf(-100.0)), 6)
    -5005.524209
    >>> round(float(fd.grad(norm.logcdf)(-100.0)), 6)  # pdf / cdf ~ -z
    100.009998
    """
    z, _ = standardize("funcdiff.scipy.stats.norm.logcdf", x, loc, scale)
    return finish(special.log_ndtr(z))

def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, accurate in the right tail.

    >>> from funcdiff.scipy.stats import norm
    >>> float(norm.sf(0.0))
    0.5
    """
    z, _ = standardize("funcdiff.scipy.stats.norm.sf", x, loc, scale)
    return finish(special.ndtr(ew.neg(z)))

def logsf(x, loc=0, scale=1):
    """Log of the survival function, accurate far into the right tail.

    >>> from funcdiff.scipy.stats import norm
    >>> round(float(norm.logsf(100.0)), 6)
    -5005.524209
    """
    z, _ = standardize("funcdiff.scipy.stats.norm.logsf", x, loc, scale)
    return finish(special.log_ndtr(ew.neg(z)))

def ppf(q, loc=0, scale=1):
    """The quantile function, the inverse of ``cdf``.

    >>> from funcdiff.scipy.stats import norm
    >>> round(float(norm.ppf(0.975)), 6)
    1.959964
    """
    q, loc, scale = _floats("funcdiff.scipy.stats.norm.ppf", q, loc, scale)
    return finish(ew.add(loc, ew.mul(scale, special.ndtri(q))))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
