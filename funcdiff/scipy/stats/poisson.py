"""The Poisson distribution with mean ``mu`` (``scipy.stats.poisson``).

>>> from funcdiff.scipy.stats import poisson
>>> round(float(poisson.logpmf(0, 2.0)), 12)
-2.0
"""

from __future__ import annotations

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import finish, outside_support

__all__ = ["logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """Log of the probability ``mu**k exp(-mu) / k!`` of the count ``k - loc``.

    -inf where ``k - loc`` is negative or not an integer; ``k`` may be an
    integer or a float array and is never differentiated.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy.stats import poisson
    >>> float(fd.grad(poisson.logpmf, argnums=1)(3, 2.0))  # k / mu - 1
    0.5
    """
    k, mu, loc = _floats("funcdiff.scipy.stats.poisson.logpmf", k, mu, loc)
    k = ew.sub(k, loc)
    inside = ew.and_(ew.ge(k, _c(k, 0)), ew.eq(k, ew.floor(k)))
    k = ew.select(inside, k, _c(k, 0))
    value = ew.sub(ew.sub(special.xlogy(k, mu), ew.lgamma(ew.add(k, _c(k, 1)))), mu)
    return finish(outside_support(inside, value))

def pmf(k, mu, loc=0):
    """The probability of the count ``k - loc`` (0 off the non-negative integers).

    >>> from funcdiff.scipy.stats import poisson
    >>> round(float(poisson.pmf(2, 2.0)), 12)
    0.270670566473
    """
    return finish(ew.exp(logpmf(k, mu, loc)))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
