"""The negative binomial distribution (``scipy.stats.nbinom``): failures before ``n``
successes of probability ``p``.

``n > 0`` is a real number. The log-pmf is differentiable in ``n`` and ``p``
(through ``gammaln`` and ``xlog1py``); the cdf and sf, through the incomplete
beta function, in ``p`` and ``n``. The count ``k`` has no derivative (asking
for one raises a DifferentiationError naming ``k``).

>>> import funcdiff as fd
>>> from funcdiff.scipy.stats import nbinom
>>> float(nbinom.pmf(0, 2, 0.5))  # p**n
0.25
>>> float(nbinom.cdf(1, 2, 0.5))
0.5
>>> float(fd.grad(nbinom.logpmf, argnums=2)(3, 2.0, 0.5))  # n/p - k/(1-p)
-2.0
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.primitives import scipy_quantiles as Q
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import (finish, log_probability,
                                           no_derivative, outside_support, safe)

__all__ = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpmf(k, n, p, loc=0):
    """Log of ``Gamma(n + k) / (Gamma(n) k!) p**n (1 - p)**k`` at the count ``k - loc``.

    -inf where ``k - loc`` is negative or not an integer.

    Raises:
      DifferentiationError: for a derivative with respect to k.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import nbinom
    >>> round(float(fd.grad(nbinom.logpmf, argnums=1)(0, 2.0, 0.5)), 12)  # log p
    -0.69314718056
    """
    name = "funcdiff.scipy.stats.nbinom.logpmf"
    k, n, p, loc = _floats(name, k, n, p, loc)
    k = no_derivative(ew.sub(k, loc), name, "k")
    inside = ew.and_(ew.ge(k, _c(k, 0)), ew.eq(k, ew.floor(k)))
    k = safe(inside, k, 0.0)
    log_coefficient = ew.sub(G.gammaln(ew.add(n, k)),
                             ew.add(G.gammaln(ew.add(k, _c(k, 1))), G.gammaln(n)))
    value = ew.add(log_coefficient, ew.add(ew.mul(n, ew.log(p)), special.xlog1py(k, ew.neg(p))))
    return finish(outside_support(inside, value))

def pmf(k, n, p, loc=0):
    """The probability of the count ``k - loc`` (0 off the non-negative integers).

    >>> from funcdiff.scipy.stats import nbinom
    >>> round(float(nbinom.pmf(1, 2, 0.5)), 12)
    0.25
    """
    return finish(ew.exp(logpmf(k, n, p, loc)))


def _cdf_parts(name, k, n, p, loc):
    name = f"funcdiff.scipy.stats.nbinom.{name}"
    k, n, p, loc = _floats(name, k, n, p, loc)
    k = ew.floor(no_derivative(ew.sub(k, loc), name, "k"))
    inside = ew.ge(k, _c(k, 0))
    return safe(inside, k, 0.0), n, p, inside


def cdf(k, n, p, loc=0):
    """The probability of at most ``k - loc`` failures, ``betainc(n, k + 1, p)``.

    Raises:
      DifferentiationError: for a derivative with respect to k.

    >>> from funcdiff.scipy.stats import nbinom
    >>> float(nbinom.cdf(-1, 2, 0.5))
    0.0
    """
    k, n, p, inside = _cdf_parts("cdf", k, n, p, loc)
    value = special.betainc(n, ew.add(k, _c(k, 1)), p)
    return finish(ew.select(inside, value, _c(p, 0)))

def logcdf(k, n, p, loc=0):
    """Log of the cdf.

    >>> from funcdiff.scipy.stats import nbinom
    >>> round(float(nbinom.logcdf(0, 2, 0.5)), 12)  # log 1/4
    -1.38629436112
    """
    return finish(log_probability(cdf(k, n, p, loc), sf(k, n, p, loc)))

def sf(k, n, p, loc=0):
    """The probability of more than ``k - loc`` failures, ``betainc(k + 1, n, 1 - p)``.

    >>> from funcdiff.scipy.stats import nbinom
    >>> float(nbinom.sf(1, 2, 0.5))
    0.5
    """
    k, n, p, inside = _cdf_parts("sf", k, n, p, loc)
    value = special.betainc(ew.add(k, _c(k, 1)), n, ew.sub(_c(p, 1), p))
    return finish(ew.select(inside, value, _c(p, 1)))

def logsf(k, n, p, loc=0):
    """Log of the survival function.

    >>> from funcdiff.scipy.stats import nbinom
    >>> round(float(nbinom.logsf(1, 2, 0.5)), 12)  # log 1/2
    -0.69314718056
    """
    return finish(log_probability(sf(k, n, p, loc), cdf(k, n, p, loc)))


def ppf(q, n, p, loc=0):
    """The smallest count ``k`` with ``cdf(k) >= q``, plus ``loc`` (scipy's values;
    NaN off [0, 1]).

    A step function: its derivatives in q and n and p are zero wherever they exist.

    >>> from funcdiff.scipy.stats import nbinom
    >>> float(nbinom.ppf(0.5, 5, 0.5))
    4.0
    """
    name = "funcdiff.scipy.stats.nbinom.ppf"
    q, n, p, loc = _floats(name, q, n, p, loc)
    return finish(ew.add(Q.nbinom_ppf(q, n, p), loc))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
