"""The multivariate normal distribution (``scipy.stats.multivariate_normal``).

>>> import numpy as np
>>> from funcdiff.scipy.stats import multivariate_normal
>>> round(float(multivariate_normal.logpdf(np.zeros(2), cov=np.eye(2))), 12)
-1.837877066409
"""

from __future__ import annotations

import numpy as np

from funcdiff.errors import ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy import linalg as _linalg
from funcdiff.primitives import elementwise as ew
from funcdiff.scipy.linalg import solve_triangular
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import HALF_LOG_2PI, finish
import funcdiff.numpy as fnp

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean=None, cov=1):
    """Log of the density of ``N(mean, cov)`` at the points ``x``.

    A full covariance is factored by Cholesky (``cov = L L^T``) and the
    Mahalanobis term is ``|L^-1 (x - mean)|^2``; the log-determinant is
    ``2 sum(log diag L)``. A scalar or 1-d ``cov`` is a multiple of the
    identity or a diagonal and needs no factorisation.

    Args:
      x: points of shape (d,) or (..., d); with d = 1 a 1-d ``x`` holds
        several points, as in scipy.
      mean: mean of shape (d,) (default zeros).
      cov: covariance: a scalar, the (d,) diagonal or a (d, d) symmetric
        positive definite matrix.

    Returns:
      The log-density, of shape ``x.shape[:-1]`` (a scalar for one point).

    Raises:
      ShapeError: if x, mean and cov disagree on the dimension d.

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import multivariate_normal
    >>> cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> round(float(multivariate_normal.logpdf(np.array([1.0, -1.0]), cov=cov)), 10)
    -3.2605421032
    """
    name = "funcdiff.scipy.stats.multivariate_normal.logpdf"
    cov_shape = _util.shape_of(cov)
    mean_shape = None if mean is None else _util.shape_of(mean)
    x_shape = _util.shape_of(x)
    if mean_shape is not None and len(mean_shape) > 1:
        raise ShapeError(f"{name} needs a 1-d mean, got shape {mean_shape}")
    if len(cov_shape) > 2 or (len(cov_shape) == 2 and cov_shape[0] != cov_shape[1]):
        raise ShapeError(f"{name} needs cov as a scalar, a 1-d diagonal or a square "
                         f"matrix, got shape {cov_shape}")
    if mean_shape:
        d = mean_shape[0]
    elif cov_shape:
        d = cov_shape[0]
    else:
        d = x_shape[-1] if x_shape else 1
    if mean is None:
        mean = np.zeros(d)
    if d == 1 and len(x_shape) <= 1:
        x = fnp.reshape(x, (-1, 1)) if x_shape else fnp.reshape(x, (1,))
        x_shape = _util.shape_of(x)
    if not x_shape or x_shape[-1] != d or (cov_shape and cov_shape[0] != d) or (
            _util.shape_of(mean) != (d,)):
        raise ShapeError(
            f"{name}: the points x of shape {x_shape}, the mean of shape "
            f"{_util.shape_of(mean)} and the covariance of shape {cov_shape} disagree on "
            f"the dimension; x needs shape (..., d), mean (d,), cov (), (d,) or (d, d).")
    x, mean, cov = _floats(name, x, mean, cov, broadcast=False)
    dev = ew.sub(x, mean)
    if len(cov_shape) < 2:
        variances = fnp.broadcast_to(cov, (d,))
        maha = fnp.sum(ew.div(ew.mul(dev, dev), variances), axis=-1)
        log_det = fnp.sum(ew.log(variances))
    else:
        chol = _linalg.cholesky(cov)
        flat = fnp.reshape(dev, (-1, d))
        white = solve_triangular(chol, fnp.transpose(flat), lower=True)
        maha = fnp.reshape(fnp.sum(ew.mul(white, white), axis=0), x_shape[:-1])
        log_det = ew.mul(_c(dev, 2), fnp.sum(ew.log(fnp.diagonal(chol))))
    out = ew.mul(_c(dev, -0.5), ew.add(ew.add(maha, log_det), _c(dev, 2 * d * HALF_LOG_2PI)))
    return finish(out)

def pdf(x, mean=None, cov=1):
    """The density of ``N(mean, cov)`` at the points ``x`` (see ``logpdf``).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.pdf(np.zeros(2), cov=np.array([1.0, 1.0]))), 12)
    0.159154943092
    """
    return finish(ew.exp(logpdf(x, mean, cov)))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
