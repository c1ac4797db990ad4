"""funcdiff.scipy.special's x log y and entropy: ``xlogy``, ``xlog1py``, ``entr``.

Each takes its convention at the singular point (``0 * log 0 = 0``,
``entr(0) = 0``) with a safe input: the singular argument is replaced before
the log and the result selected afterwards, so values and derivatives stay
finite. ``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

import numpy as np

from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c, floats


def xlogy(x, y):
    """``x * log(y)``, with ``0 * log(y) = 0`` for every y (even 0 and negatives).

    Derivatives stay finite at ``x = 0``: ``(log y, 0)`` for y > 0 and
    ``(0, 0)`` for y <= 0, where ``log`` is evaluated at 1 instead.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> float(special.xlogy(0.0, 0.0))
    0.0
    >>> [float(g) for g in fd.grad(special.xlogy, argnums=(0, 1))(0.0, 0.0)]
    [0.0, 0.0]
    """
    x, y = floats("xlogy", x, y)
    zero = c(x, 0)
    singular = ew.and_(ew.eq(x, zero), ew.le(y, zero))
    safe_y = ew.select(singular, c(y, 1), y)
    # safe_mul: 0 * log(inf) is 0 too, and its derivative never forms 0 * inf
    return ew.safe_mul(x, ew.log(safe_y))


def xlog1py(x, y):
    """``x * log1p(y)``, with ``0 * log1p(y) = 0`` for every y (even -1).

    Derivatives stay finite at ``x = 0`` as for ``xlogy``.

    >>> from funcdiff.scipy import special
    >>> float(special.xlog1py(0.0, -1.0))
    0.0
    """
    x, y = floats("xlog1py", x, y)
    zero = c(x, 0)
    singular = ew.and_(ew.eq(x, zero), ew.le(y, c(y, -1)))
    safe_y = ew.select(singular, c(y, 0), y)
    return ew.safe_mul(x, ew.log1p(safe_y))


def entr(x):
    """The elementwise entropy ``-x log x`` for x > 0, 0 at 0 and -inf for x < 0.

    The derivative at 0 is taken as 0 (finite), not the one-sided +inf.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> float(special.entr(0.0)), float(fd.grad(special.entr)(0.0))
    (0.0, 0.0)
    """
    (x,) = floats("entr", x)
    negative = ew.lt(x, c(x, 0))
    safe_x = ew.select(negative, c(x, 1), x)
    # 0 - xlogy rather than a negation, so entr(0) is +0.0 as in scipy
    return ew.select(negative, c(x, -np.inf), ew.sub(c(x, 0), xlogy(safe_x, safe_x)))
