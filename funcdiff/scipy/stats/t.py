"""Student's t distribution with ``df`` degrees of freedom (``scipy.stats.t``).

>>> from funcdiff.scipy.stats import t
>>> round(float(t.logpdf(0.0, 1.0)), 12)  # Cauchy: -log(pi)
-1.144729885849
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.scipy._special_util import c as _c
from funcdiff.scipy.stats._support import LOG_PI, finish, standardize

__all__ = ["logpdf", "pdf"]


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


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
