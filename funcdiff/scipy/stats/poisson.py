"""The Poisson distribution with mean ``mu`` (``scipy.stats.poisson``).

Differentiable in ``mu`` (the cdf and sf through the incomplete gamma
functions, in their x); the count ``k`` has no derivative, and asking for one
raises a DifferentiationError naming ``k``.

>>> from funcdiff.scipy.stats import poisson
>>> round(float(poisson.logpmf(0, 2.0)), 12)
-2.0
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


def logpmf(k, mu, loc=0):
    """Log of the probability ``mu**k exp(-mu) / k!`` of the count ``k - loc``.

    -inf where ``k - loc`` is negative or not an integer; ``k`` may be an
    integer or a float array and is never differentiated.

    Raises:
      DifferentiationError: for a derivative with respect to k.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import poisson
    >>> float(fd.grad(poisson.logpmf, argnums=1)(3, 2.0))  # k / mu - 1
    0.5
    """
    k, mu, loc = _floats("funcdiff.scipy.stats.poisson.logpmf", k, mu, loc)
    k = no_derivative(ew.sub(k, loc), "funcdiff.scipy.stats.poisson.logpmf", "k")
    inside = ew.and_(ew.ge(k, _c(k, 0)), ew.eq(k, ew.floor(k)))
    k = ew.select(inside, k, _c(k, 0))
    value = ew.sub(ew.sub(special.xlogy(k, mu), G.gammaln(ew.add(k, _c(k, 1)))), mu)
    return finish(outside_support(inside, value))

def pmf(k, mu, loc=0):
    """The probability of the count ``k - loc`` (0 off the non-negative integers).

    >>> from funcdiff.scipy.stats import poisson
    >>> round(float(poisson.pmf(2, 2.0)), 12)
    0.270670566473
    """
    return finish(ew.exp(logpmf(k, mu, loc)))


def _count(name, k, mu, loc):
    """floor(k - loc), a safe stand-in 0 where it is negative, and where it is not."""
    name = f"funcdiff.scipy.stats.poisson.{name}"
    k, mu, loc = _floats(name, k, mu, loc)
    k = ew.floor(no_derivative(ew.sub(k, loc), name, "k"))
    inside = ew.ge(k, _c(k, 0))
    return safe(inside, k, 0.0), mu, inside


def cdf(k, mu, loc=0):
    """The probability of at most ``k - loc`` events, ``gammaincc(floor(k - loc) + 1, mu)``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import poisson
    >>> round(float(poisson.cdf(1, 2.0)), 12)  # 3 e^-2
    0.40600584971
    >>> round(float(fd.grad(poisson.cdf, argnums=1)(1, 2.0)), 12)  # -pmf(1)
    -0.270670566473
    """
    k, mu, inside = _count("cdf", k, mu, loc)
    return finish(ew.select(inside, special.gammaincc(ew.add(k, _c(k, 1)), mu), _c(mu, 0)))

def logcdf(k, mu, loc=0):
    """Log of the cdf (-inf below 0).

    >>> from funcdiff.scipy.stats import poisson
    >>> float(poisson.logcdf(0, 2.0))
    -2.0
    """
    return finish(log_probability(cdf(k, mu, loc), sf(k, mu, loc)))

def sf(k, mu, loc=0):
    """The probability of more than ``k - loc`` events, ``gammainc(floor(k - loc) + 1, mu)``.

    >>> from funcdiff.scipy.stats import poisson
    >>> round(float(poisson.sf(1, 2.0)), 12)
    0.59399415029
    """
    k, mu, inside = _count("sf", k, mu, loc)
    return finish(ew.select(inside, special.gammainc(ew.add(k, _c(k, 1)), mu), _c(mu, 1)))

def logsf(k, mu, loc=0):
    """Log of the survival function (0 below 0).

    >>> from funcdiff.scipy.stats import poisson
    >>> round(float(poisson.logsf(1, 2.0)), 12)
    -0.520885807664
    """
    return finish(log_probability(sf(k, mu, loc), cdf(k, mu, loc)))


def ppf(q, mu, loc=0):
    """The smallest count ``k`` with ``cdf(k) >= q``, plus ``loc`` (scipy's values;
    NaN off [0, 1]).

    A step function: its derivatives in q and mu are zero wherever they exist.

    >>> from funcdiff.scipy.stats import poisson
    >>> float(poisson.ppf(0.5, 3.0))
    3.0
    """
    name = "funcdiff.scipy.stats.poisson.ppf"
    q, mu, loc = _floats(name, q, mu, loc)
    return finish(ew.add(Q.poisson_ppf(q, mu), loc))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
