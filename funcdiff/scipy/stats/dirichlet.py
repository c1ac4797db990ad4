"""The Dirichlet distribution with concentrations ``alpha`` (``scipy.stats.dirichlet``).

Points lie on the simplex: ``x`` has shape (K,) or, for N points, (K, N) (the
points are columns, as in scipy), or K - 1 entries per point, the last being
1 - sum. Differentiable in ``x`` and ``alpha``, to any order.

>>> import numpy as np
>>> from funcdiff.scipy.stats import dirichlet
>>> float(dirichlet.pdf(np.array([0.2, 0.8]), np.array([1.0, 1.0])))  # uniform on the simplex
1.0
"""

from __future__ import annotations

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import scipy_gamma_erf as G
from funcdiff.scipy import special
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import finish

__all__ = ["logpdf", "pdf", "mean", "var", "entropy"]

SIMPLEX_TOLERANCE = 1e-9  # scipy's: |sum(x) - 1| may not exceed 10e-10


def _points(name: str, x, alpha):
    """``x`` as (K,) or (K, N) points with all K coordinates, and ``alpha`` (K,)."""
    x_shape, a_shape = _util.shape_of(x), _util.shape_of(alpha)
    k = _dimension(name, alpha)
    if len(x_shape) not in (1, 2) or x_shape[0] not in (k - 1, k):
        raise ShapeError(
            f"{name}: x of shape {x_shape} does not fit alpha of shape {a_shape}; x needs "
            f"shape ({k},) or ({k}, N) (points as columns), or {k - 1} rows with the last "
            "coordinate implied")
    x, alpha = _floats(name, x, alpha, broadcast=False)
    if x_shape[0] == k - 1:
        total = fnp.sum(x, axis=0)
        last = ew.sub(_c(total, 1), total)
        x = fnp.concatenate([x, fnp.expand_dims(last, 0)], axis=0)
    if not isinstance(x, Tracer):
        _check_simplex(name, np.asarray(x))
    if len(x_shape) == 2:
        alpha = fnp.reshape(alpha, (k, 1))
    return x, alpha


def _check_simplex(name: str, x: np.ndarray) -> None:
    total = x.sum(axis=0)
    if np.any(x < 0) or np.any(x > 1) or np.any(np.abs(total - 1) > SIMPLEX_TOLERANCE):
        raise InvalidArgumentError(
            f"{name}: each point x must lie on the simplex (entries in [0, 1] summing to 1), "
            f"but the sums are {np.round(total, 12)} and the entries range over "
            f"[{x.min():g}, {x.max():g}]; normalise x (x / x.sum(axis=0)).")


def logpdf(x, alpha):
    """Log of the Dirichlet density ``prod x_i**(alpha_i - 1) / B(alpha)``.

    Args:
      x: a point of shape (K,), or N points as the columns of a (K, N) array (K - 1
        rows: the last coordinate is 1 minus their sum).
      alpha: concentrations of shape (K,), positive.

    Returns:
      The log-density: a scalar, or (N,) for N points.

    Raises:
      ShapeError: if x and alpha disagree on K.
      InvalidArgumentError: for a (concrete) point off the simplex.

    >>> import funcdiff as fd, numpy as np
    >>> from funcdiff.scipy.stats import dirichlet
    >>> x, alpha = np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0])
    >>> round(float(dirichlet.logpdf(x, alpha)), 12)
    1.69521099527
    >>> np.round(fd.grad(dirichlet.logpdf, argnums=1)(x, alpha), 6)  # log x - dlogB/dalpha
    array([0.146983, 0.166154, 0.17698 ])
    """
    name = "funcdiff.scipy.stats.dirichlet.logpdf"
    x, alpha = _points(name, x, alpha)
    log_beta = ew.sub(fnp.sum(G.gammaln(alpha)), G.gammaln(fnp.sum(alpha)))
    kernel = fnp.sum(special.xlogy(ew.sub(alpha, _c(alpha, 1)), x), axis=0)
    return finish(ew.sub(kernel, log_beta))


def pdf(x, alpha):
    """The Dirichlet density (see ``logpdf``).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import dirichlet
    >>> round(float(dirichlet.pdf(np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0]))), 10)
    5.447795303
    """
    return finish(ew.exp(logpdf(x, alpha)))


def _dimension(name: str, alpha) -> int:
    """K, the number of concentrations (at least 2)."""
    a_shape = _util.shape_of(alpha)
    if len(a_shape) != 1 or a_shape[0] < 2:
        raise ShapeError(f"{name} needs alpha of shape (K,) with K >= 2, got shape {a_shape}")
    return a_shape[0]


def _concentrations(name: str, alpha):
    _dimension(name, alpha)
    (alpha,) = _floats(name, alpha, broadcast=False)
    return alpha, fnp.sum(alpha)


def mean(alpha):
    """The mean ``alpha / sum(alpha)``.

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import dirichlet
    >>> dirichlet.mean(np.array([1.0, 3.0]))
    array([0.25, 0.75])
    """
    alpha, total = _concentrations("funcdiff.scipy.stats.dirichlet.mean", alpha)
    return ew.div(alpha, total)


def var(alpha):
    """The variances ``alpha (a0 - alpha) / (a0**2 (a0 + 1))``, a0 = sum(alpha).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import dirichlet
    >>> dirichlet.var(np.array([1.0, 3.0]))
    array([0.0375, 0.0375])
    """
    alpha, total = _concentrations("funcdiff.scipy.stats.dirichlet.var", alpha)
    return ew.div(ew.mul(alpha, ew.sub(total, alpha)),
                  ew.mul(ew.mul(total, total), ew.add(total, _c(total, 1))))


def entropy(alpha):
    """The differential entropy ``log B(alpha) + (a0 - K) digamma(a0)
    - sum((alpha - 1) digamma(alpha))``.

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import dirichlet
    >>> float(dirichlet.entropy(np.array([1.0, 1.0, 1.0])))  # uniform: -log 2
    -0.6931471805599453
    """
    alpha, total = _concentrations("funcdiff.scipy.stats.dirichlet.entropy", alpha)
    k = _util.shape_of(alpha)[0]
    log_beta = ew.sub(fnp.sum(G.gammaln(alpha)), G.gammaln(total))
    return finish(ew.sub(ew.add(log_beta, ew.mul(ew.sub(total, _c(total, k)), G.digamma(total))),
                         fnp.sum(ew.mul(ew.sub(alpha, _c(alpha, 1)), G.digamma(alpha)))))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
