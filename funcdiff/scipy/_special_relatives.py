"""funcdiff.scipy.special's relatives of the gamma and error functions, with scipy's values.

``rgamma`` (1 / Gamma), ``gammasgn`` (the sign of Gamma, zero derivative),
``multigammaln`` (the log of the multivariate gamma function) and ``erfcinv``
each bind a card of ``primitives.scipy_special``. ``funcdiff.scipy.special``
re-exports them.
"""

from __future__ import annotations

from funcdiff.errors import InvalidArgumentError
from funcdiff.primitives import scipy_special as S
from funcdiff.scipy._special_bessel import static_param
from funcdiff.scipy._special_util import floats


def rgamma(x):
    """1 / Gamma(x), an entire function: 0 at the poles of Gamma.

    Its derivative is -digamma(x) rgamma(x), and (-1)^n n! at x = -n.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.rgamma(0.5)), 12)  # 1 / sqrt(pi)
    0.564189583548
    >>> float(fd.grad(special.rgamma)(-2.0))
    2.0
    """
    (x,) = floats("rgamma", x)
    return S.rgamma(x)


def gammasgn(x):
    """The sign of Gamma(x): 1, -1, or NaN at the non-positive integers (scipy's values).

    Its derivative is zero.

    >>> from funcdiff.scipy import special
    >>> float(special.gammasgn(-1.5)), float(special.gammasgn(-2.5))
    (1.0, -1.0)
    """
    (x,) = floats("gammasgn", x)
    return S.gammasgn(x)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d.

    Args:
      a: array_like of reals; a > (d - 1) / 2, else NaN (scipy raises a ValueError).
      d: the dimension, a concrete positive integer.

    Returns:
      ``d (d - 1) / 4 log(pi) + sum_{j < d} gammaln(a - j / 2)``, scipy's values;
      its derivative in a is ``sum_{j < d} digamma(a - j / 2)``.

    Raises:
      InvalidArgumentError: for a d that is not a positive integer.
      ConcretizationError, DifferentiationError: for a traced d.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.multigammaln(3.0, 2)), 12)
    1.550194993958
    >>> round(float(fd.grad(lambda a: special.multigammaln(a, 2))(3.0)), 12)  # psi(3) + psi(2.5)
    1.625940975744
    """
    dims = static_param("multigammaln", "d", d, integer=True)
    if dims.ndim != 0 or int(dims) < 1:
        raise InvalidArgumentError(
            f"funcdiff.scipy.special.multigammaln needs a positive integer dimension d, got "
            f"{d!r}.")
    (a,) = floats("multigammaln", a)
    return S.multigammaln(a, d=int(dims))


def erfcinv(x):
    """The inverse of erfc on [0, 2] (+inf at 0, -inf at 2, NaN outside).

    Its derivative is -sqrt(pi) / 2 exp(erfcinv(x)^2).

    >>> from funcdiff.scipy import special
    >>> round(float(special.erfcinv(0.5)), 12)
    0.476936276204
    """
    (x,) = floats("erfcinv", x)
    return S.erfcinv(x)
