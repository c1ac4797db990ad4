"""The gamma distribution with shape ``a`` (``scipy.stats.gamma``).

>>> from funcdiff.scipy.stats import gamma
>>> round(float(gamma.logpdf(1.0, 1.0)), 12)  # exponential: -x
-1.0
"""

from __future__ import annotations

import numpy as np

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c
from funcdiff.scipy.stats._support import finish, outside_support, standardize

__all__ = ["logpdf", "pdf"]


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
                   ew.add(ew.lgamma(a), log_scale))
    return finish(outside_support(inside, value))

def pdf(x, a, loc=0, scale=1):
    """The gamma density at ``x`` (0 outside the support).

    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.pdf(2.0, 3.0)), 12)
    0.270670566473
    """
    return finish(ew.exp(logpdf(x, a, loc, scale)))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
