"""funcdiff.scipy.special's functions defined by integrals and series, with scipy's values.

The exponential integrals ``expi`` and ``exp1``, the dilogarithm ``spence``,
the regularized incomplete gamma functions ``gammainc`` and ``gammaincc``, the
regularized incomplete beta function ``betainc`` and the zeta function each bind
a card of ``primitives.scipy_special``. All are differentiable in every
argument, to any order: the derivatives in gammainc's a, betainc's a and b and
zeta's exponent come from series and continued fractions differentiated exactly
(``primitives.scipy_shape_derivatives``), accurate to about 1e-10 relative.
``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

from funcdiff.primitives import scipy_special as S
from funcdiff.scipy._special_util import floats


def expi(x):
    """The exponential integral Ei(x); its derivative is e^x / x.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.expi(1.0)), 12)
    1.895117816356
    >>> round(float(fd.grad(special.expi)(1.0)), 12)  # e
    2.718281828459
    """
    (x,) = floats("expi", x)
    return S.expi(x)


def exp1(x):
    """The exponential integral E1(x) for x > 0 (NaN for x < 0, as in scipy); E1' = -e^{-x} / x.

    >>> from funcdiff.scipy import special
    >>> round(float(special.exp1(1.0)), 12)
    0.219383934396
    """
    (x,) = floats("exp1", x)
    return S.exp1(x)


def spence(x):
    """scipy's dilogarithm: the integral of log(t) / (1 - t) from 1 to x, for x >= 0.

    Its derivative log(x) / (1 - x) is -1 at x = 1 (a series there, so higher
    derivatives are right too).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.spence(2.0)), 12)  # -pi**2 / 12
    -0.822467033424
    >>> float(fd.grad(special.spence)(1.0))
    -1.0
    """
    (x,) = floats("spence", x)
    return S.spence(x)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x, or Riemann's (q omitted).

    Args:
      x: the exponent, differentiable: d/dx zeta(x, q) = -sum_k log(k + q) (k + q)^-x
        (by Euler-Maclaurin summation; for Riemann's below 0 by the functional
        equation). NaN at x = 1 and, for Hurwitz's, for x <= 1.
      q: the shift, differentiable: d/dq zeta(x, q) = -x zeta(x + 1, q). Omitted,
        the Riemann zeta function (scipy's values, defined for x < 1 too).

    Returns:
      ``scipy.special.zeta(x, q)``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(fd.grad(special.zeta)(2.0)), 9)  # zeta'(2)
    -0.937548254
    >>> round(float(special.zeta(2.0)), 12)  # pi**2 / 6
    1.644934066848
    >>> round(float(fd.grad(lambda q: special.zeta(2.0, q))(2.0)), 12)  # -2 zeta(3, 2)
    -0.404113806319
    """
    if q is None:
        (x,) = floats("zeta", x)
        return S.riemann_zeta(x)
    x, q = floats("zeta", x, q)
    return S.hurwitz_zeta(x, q)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x).

    Args:
      a: the shape, a >= 0, differentiable (by the series of P for x < a + 1 and the
        continued fraction of Q beyond, differentiated exactly).
      x: x >= 0, differentiable: d/dx P(a, x) = x^{a-1} e^{-x} / Gamma(a).

    Returns:
      ``scipy.special.gammainc(a, x)``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.gammainc(2.0, 1.0)), 12)
    0.264241117657
    >>> round(float(fd.grad(special.gammainc, argnums=1)(2.0, 1.0)), 12)  # e^-1
    0.367879441171
    >>> round(float(fd.grad(special.gammainc)(2.0, 1.0)), 9)  # d/da
    -0.276196046
    """
    a, x = floats("gammainc", a, x)
    return S.gammainc(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Differentiable in a and x (the negatives of gammainc's derivatives).

    >>> from funcdiff.scipy import special
    >>> round(float(special.gammaincc(2.0, 1.0)), 12)
    0.735758882343
    """
    a, x = floats("gammaincc", a, x)
    return S.gammaincc(a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b).

    Args:
      a, b: the parameters, positive, differentiable (the continued fraction of
        I_x(a, b), or of 1 - I_{1-x}(b, a), differentiated exactly).
      x: in [0, 1], differentiable: d/dx I_x(a, b) = x^{a-1} (1 - x)^{b-1} / B(a, b).

    Returns:
      ``scipy.special.betainc(a, b, x)``.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> float(special.betainc(2.0, 3.0, 0.5))
    0.6875
    >>> round(float(fd.grad(special.betainc, argnums=2)(2.0, 3.0, 0.5)), 12)  # 12 x (1-x)^2
    1.5
    """
    a, b, x = floats("betainc", a, b, x)
    return S.betainc(a, b, x)
