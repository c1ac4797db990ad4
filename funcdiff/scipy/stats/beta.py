"""The beta distribution with shapes ``a`` and ``b`` (``scipy.stats.beta``).

>>> from funcdiff.scipy.stats import beta
>>> round(float(beta.logpdf(0.5, 2.0, 2.0)), 12)  # log 1.5
0.405465108108
"""

from __future__ import annotations

import numpy as np

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c
from funcdiff.scipy.stats._support import finish, outside_support, standardize

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, b, loc=0, scale=1):
    """Log of the beta density ``z**(a-1) (1-z)**(b-1) / B(a, b) / scale``.

    ``z = (x - loc) / scale``; -inf outside [0, 1] (with a zero derivative).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import beta
    >>> beta.logpdf(np.array([0.5, 1.5]), 2.0, 2.0)
    array([0.40546511,       -inf])
    """
    z, log_scale, a, b = standardize("funcdiff.scipy.stats.beta.logpdf", x, loc, scale, a, b)
    zero, one = _c(z, 0), _c(z, 1)
    inside = ew.and_(ew.ge(z, zero), ew.le(z, one))
    z = ew.select(inside, z, _c(z, 0.5))
    value = ew.add(special.xlogy(ew.sub(a, one), z), special.xlog1py(ew.sub(b, one), ew.neg(z)))
    value = ew.sub(value, ew.add(special.betaln(a, b), log_scale))
    return finish(outside_support(inside, value))

def pdf(x, a, b, loc=0, scale=1):
    """The beta density at ``x`` (0 outside the support).

    >>> from funcdiff.scipy.stats import beta
    >>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)
    1.5
    """
    return finish(ew.exp(logpdf(x, a, b, loc, scale)))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
