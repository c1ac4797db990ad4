"""funcdiff.scipy.special's gamma function and its relatives.

``gammaln``, ``digamma`` (``psi``) and ``polygamma`` bind the cards of
``primitives.scipy_gamma_erf`` (scipy.special's values; the core primitives
``lgamma``, ``digamma`` and ``polygamma`` keep numpy kernels for funcdiff.numpy);
``gamma``, ``beta`` and ``betaln`` are compositions of ``gammaln`` with the sign
of Gamma taken apart.
``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

import math  # noqa: F401  the docstring examples use it
from typing import Any

import numpy as np

from funcdiff.core import concrete_value
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.scipy._special_util import c, floats
import funcdiff.numpy as fnp


def gammaln(x):
    """``log |Gamma(x)|``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.gammaln(5.0)), 12) == round(math.log(24.0), 12)
    True
    """
    (x,) = floats("gammaln", x)
    return G.gammaln(x)


def digamma(x):
    """The digamma function ``psi(x) = d/dx gammaln(x)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.digamma(1.0)), 12)  # -Euler's gamma
    -0.577215664902
    """
    (x,) = floats("digamma", x)
    return G.digamma(x)


psi = digamma


def static_order(n: Any) -> Any:
    """polygamma's order: a Python int, or a concrete integer array."""
    try:
        n = concrete_value(n, "funcdiff.scipy.special.polygamma's order n")
    except ConcretizationError:
        raise ConcretizationError(
            "funcdiff.scipy.special.polygamma needs a concrete order n (it selects the "
            "primitive's static order), but n is traced. Pass n as a Python int, or mark it "
            "static with jit(..., static_argnums=...).") from None
    arr = np.asarray(n)
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or np.any(arr < 0):
        raise InvalidArgumentError(
            f"funcdiff.scipy.special.polygamma needs a non-negative integer order n, got "
            f"{n!r}.")
    return arr


def polygamma_of_order(order: int, x):
    return G.digamma(x) if order == 0 else G.polygamma(x, order=order)


def polygamma(n, x):
    """The n-th derivative of the digamma function, ``psi^(n)(x)``.

    Args:
      n: non-negative integer order: a Python int or a concrete integer array
        (not traced; it selects the primitive's static order).
      x: array_like of reals.

    Returns:
      ``psi^(n)(x)`` with the shape of ``n`` and ``x`` broadcast together.

    Raises:
      InvalidArgumentError: for a negative or non-integer order.
      ConcretizationError: for a traced order.

    >>> from funcdiff.scipy import special
    >>> round(float(special.polygamma(1, 1.0)), 12)  # pi**2 / 6
    1.644934066848
    """
    orders = static_order(n)
    (x,) = floats("polygamma", x)
    if orders.ndim == 0:
        return polygamma_of_order(int(orders), x)
    shape = np.broadcast_shapes(orders.shape, _util.shape_of(x))
    x = fnp.broadcast_to(x, shape)
    orders = np.broadcast_to(orders, shape)
    out = fnp.zeros(shape, x.dtype)
    for order in np.unique(orders):
        out = fnp.where(orders == order, polygamma_of_order(int(order), x), out)
    return out


def gamma_sign(x):
    """The sign of Gamma(x): -1 where x < 0 and floor(x) is odd, else +1 (no derivative)."""
    odd = ew.ne(ew.rem(ew.floor(x), c(x, 2)), c(x, 0))
    negative = ew.and_(ew.lt(x, c(x, 0)), odd)
    return ew.select(negative, c(x, -1), c(x, 1))


def gamma(x):
    """The gamma function, as ``sign * exp(gammaln(x))``; NaN at the negative integers.

    >>> from funcdiff.scipy import special
    >>> round(float(special.gamma(5.0)), 9)
    24.0
    >>> round(float(special.gamma(-0.5)), 9)  # -2 sqrt(pi)
    -3.544907702
    """
    (x,) = floats("gamma", x)
    out = ew.mul(gamma_sign(x), ew.exp(G.gammaln(x)))
    # the negative integers are poles with no sign (scipy: NaN); 0 gives +inf
    pole = ew.and_(ew.lt(x, c(x, 0)), ew.eq(x, ew.floor(x)))
    return ew.select(pole, c(x, np.nan), out)


def betaln(a, b):
    """``log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.betaln(2.0, 3.0)), 12) == round(math.log(1 / 12), 12)
    True
    """
    a, b = floats("betaln", a, b)
    return ew.sub(ew.add(G.gammaln(a), G.gammaln(b)), G.gammaln(ew.add(a, b)))


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.beta(2.0, 3.0)), 12)
    0.083333333333
    """
    a, b = floats("beta", a, b)
    s = ew.add(a, b)
    sign = ew.mul(ew.mul(gamma_sign(a), gamma_sign(b)), gamma_sign(s))
    log_abs = ew.sub(ew.add(G.gammaln(a), G.gammaln(b)), G.gammaln(s))
    return ew.mul(sign, ew.exp(log_abs))
