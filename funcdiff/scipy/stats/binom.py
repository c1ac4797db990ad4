"""The binomial distribution of ``n`` trials with success probability ``p`` (``scipy.stats.binom``).

Differentiable in ``p``: the log-pmf through ``gammaln``, ``xlogy`` and
``xlog1py``, the cdf and sf through the incomplete beta function, in its x.
The counts ``k`` and ``n`` have no derivative; asking for one raises a
DifferentiationError naming the argument.

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import binom
>>> round(float(binom.pmf(1, 2, 0.5)), 12)
0.5
>>> float(binom.cdf(1, 2, 0.5))
0.75
>>> round(float(fd.grad(binom.logpmf, argnums=2)(3, 5, 0.25)), 12)  # k/p - (n-k)/(1-p)
9.333333333333
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.primitives import scipy_quantiles as Q
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import (finish, log_probability, no_derivative,
                                           outside_support, safe)

__all__ = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _counts(name, k, n, p, loc):
    name = f"funcdiff.scipy.stats.binom.{name}"
    k, n, p, loc = _floats(name, k, n, p, loc)
    return no_derivative(ew.sub(k, loc), name, "k"), no_derivative(n, name, "n"), p


def logpmf(k, n, p, loc=0):
    """Log of ``C(n, k) p**k (1 - p)**(n - k)`` at the count ``k - loc``.

    -inf where ``k - loc`` is not an integer in [0, n].

    Raises:
      DifferentiationError: for a derivative with respect to k or n.

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import binom
    >>> binom.logpmf(np.array([-1, 0, 2, 3]), 2, 0.5)
    array([       -inf, -1.38629436, -1.38629436,        -inf])
    """
    k, n, p = _counts("logpmf", k, n, p, loc)
    one = _c(k, 1)
    inside = ew.and_(ew.and_(ew.ge(k, _c(k, 0)), ew.le(k, n)), ew.eq(k, ew.floor(k)))
    k = safe(inside, k, 0.0)
    n_minus_k = ew.sub(n, k)
    log_choose = ew.sub(G.gammaln(ew.add(n, one)),
                        ew.add(G.gammaln(ew.add(k, one)), G.gammaln(ew.add(n_minus_k, one))))
    value = ew.add(log_choose, ew.add(special.xlogy(k, p), special.xlog1py(n_minus_k, ew.neg(p))))
    return finish(outside_support(inside, value))

def pmf(k, n, p, loc=0):
    """The probability of the count ``k - loc`` (0 off the integers of [0, n]).

    >>> from funcdiff.scipy.stats import binom
    >>> round(float(binom.pmf(0, 3, 0.5)), 12)
    0.125
    """
    return finish(ew.exp(logpmf(k, n, p, loc)))


def _cdf_parts(name, k, n, p, loc):
    """floor(k - loc), n and p, where the count is below 0, at least n, and between."""
    k, n, p = _counts(name, k, n, p, loc)
    k = ew.floor(k)
    below, above = ew.lt(k, _c(k, 0)), ew.ge(k, n)
    between = ew.not_(ew.or_(below, above))
    k = safe(between, k, 0.0)
    n = ew.select(between, n, ew.add(k, _c(k, 1)))
    return k, n, p, below, above


def cdf(k, n, p, loc=0):
    """The probability of at most ``k - loc`` successes, ``betainc(n - k, k + 1, 1 - p)``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import binom
    >>> float(fd.grad(binom.cdf, argnums=2)(0, 2, 0.5))  # -2 (1 - p)
    -1.0
    """
    k, n, p, below, above = _cdf_parts("cdf", k, n, p, loc)
    one = _c(k, 1)
    value = special.betainc(ew.sub(n, k), ew.add(k, one), ew.sub(one, p))
    return finish(ew.select(below, _c(p, 0), ew.select(above, _c(p, 1), value)))

def logcdf(k, n, p, loc=0):
    """Log of the cdf.

    >>> from funcdiff.scipy.stats import binom
    >>> round(float(binom.logcdf(0, 2, 0.5)), 12)  # log 1/4
    -1.38629436112
    """
    return finish(log_probability(cdf(k, n, p, loc), sf(k, n, p, loc)))

def sf(k, n, p, loc=0):
    """The probability of more than ``k - loc`` successes, ``betainc(k + 1, n - k, p)``.

    >>> from funcdiff.scipy.stats import binom
    >>> float(binom.sf(1, 2, 0.5))
    0.25
    """
    k, n, p, below, above = _cdf_parts("sf", k, n, p, loc)
    value = special.betainc(ew.add(k, _c(k, 1)), ew.sub(n, k), p)
    return finish(ew.select(below, _c(p, 1), ew.select(above, _c(p, 0), value)))

def logsf(k, n, p, loc=0):
    """Log of the survival function.

    >>> from funcdiff.scipy.stats import binom
    >>> round(float(binom.logsf(1, 2, 0.5)), 12)
    -1.38629436112
    """
    return finish(log_probability(sf(k, n, p, loc), cdf(k, n, p, loc)))


def ppf(q, n, p, loc=0):
    """The smallest count ``k`` with ``cdf(k) >= q``, plus ``loc`` (scipy's values;
    NaN off [0, 1]).

    A step function: its derivatives in q and n and p are zero wherever they exist.
    A derivative with respect to the count n raises a DifferentiationError.

    >>> from funcdiff.scipy.stats import binom
    >>> float(binom.ppf(0.5, 10, 0.3))
    3.0
    """
    name = "funcdiff.scipy.stats.binom.ppf"
    q, n, p, loc = _floats(name, q, n, p, loc)
    n = no_derivative(n, name, "n")
    return finish(ew.add(Q.binom_ppf(q, n, p), loc))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
