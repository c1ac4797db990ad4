"""The multivariate normal distribution (``scipy.stats.multivariate_normal``).

>>> import numpy as np
>>> from funcdiff.scipy.stats import multivariate_normal
>>> round(float(multivariate_normal.logpdf(np.zeros(2), cov=np.eye(2))), 12)
-1.837877066409
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy import linalg as _linalg
from funcdiff.primitives import elementwise as ew
from funcdiff.scipy.linalg import solve_triangular
from funcdiff.scipy._special_util import c as _c, floats as _floats
from funcdiff.scipy.stats._support import HALF_LOG_2PI, finish, outside_support
import funcdiff.numpy as fnp

__all__ = ["logpdf", "pdf", "entropy"]


def logpdf(x, mean=None, cov=1, allow_singular=False):
    """Log of the density of ``N(mean, cov)`` at the points ``x``.

    A full covariance is factored by Cholesky (``cov = L L^T``) and the
    Mahalanobis term is ``|L^-1 (x - mean)|^2``; the log-determinant is
    ``2 sum(log diag L)``. A scalar or 1-d ``cov`` is a multiple of the
    identity or a diagonal and needs no factorisation. With ``allow_singular``
    a (d, d) covariance is factored by ``eigh`` instead, as scipy does: the
    eigenvalues above scipy's cutoff give the pseudo-determinant, the rank and
    the pseudo-inverse, and points off the covariance's range (the support) have
    density 0 (log-density -inf).

    Args:
      x: points of shape (d,) or (..., d); with d = 1 a 1-d ``x`` holds
        several points, as in scipy.
      mean: mean of shape (d,) (default zeros).
      cov: covariance: a scalar, the (d,) diagonal or a (d, d) symmetric
        positive definite matrix (positive semidefinite with ``allow_singular``).
      allow_singular: accept a singular (d, d) covariance.

    Returns:
      The log-density, of shape ``x.shape[:-1]`` (a scalar for one point).

    Raises:
      ShapeError: if x, mean and cov disagree on the dimension d.
      InvalidArgumentError: with ``allow_singular``, for a (concrete) covariance
        with a negative eigenvalue.

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import multivariate_normal
    >>> cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> round(float(multivariate_normal.logpdf(np.array([1.0, -1.0]), cov=cov)), 10)
    -3.2605421032
    >>> singular = np.array([[1.0, 1.0], [1.0, 1.0]])  # all mass on the line x0 = x1
    >>> multivariate_normal.logpdf(np.array([[0.5, 0.5], [0.5, -0.5]]), cov=singular,
    ...                            allow_singular=True)
    array([-1.39051212,        -inf])
    """
    name = "funcdiff.scipy.stats.multivariate_normal.logpdf"
    x, mean, cov, d, x_shape, cov_shape = _parameters(name, x, mean, cov)
    dev = ew.sub(x, mean)
    if len(cov_shape) < 2:
        variances = fnp.broadcast_to(cov, (d,))
        maha = fnp.sum(ew.div(ew.mul(dev, dev), variances), axis=-1)
        log_det = fnp.sum(ew.log(variances))
    elif allow_singular:
        return finish(_singular_logpdf(name, dev, cov, d))
    else:
        chol = _linalg.cholesky(cov)
        flat = fnp.reshape(dev, (-1, d))
        white = solve_triangular(chol, fnp.transpose(flat), lower=True)
        maha = fnp.reshape(fnp.sum(ew.mul(white, white), axis=0), x_shape[:-1])
        log_det = ew.mul(_c(dev, 2), fnp.sum(ew.log(fnp.diagonal(chol))))
    out = ew.mul(_c(dev, -0.5), ew.add(ew.add(maha, log_det), _c(dev, 2 * d * HALF_LOG_2PI)))
    return finish(out)


def _parameters(name, x, mean, cov):
    """``(x, mean, cov, d, x_shape, cov_shape)`` with the shapes checked and the
    values in one float dtype (``x`` None: the mean and covariance only)."""
    cov_shape = _util.shape_of(cov)
    mean_shape = None if mean is None else _util.shape_of(mean)
    x_shape = _util.shape_of(x) if x is not None else None
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
    if x is None:
        if (cov_shape and cov_shape[0] != d) or _util.shape_of(mean) != (d,):
            raise ShapeError(f"{name}: the mean of shape {_util.shape_of(mean)} and the "
                             f"covariance of shape {cov_shape} disagree on the dimension")
        mean, cov = _floats(name, mean, cov, broadcast=False)
        return None, mean, cov, d, None, cov_shape
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
    return x, mean, cov, d, x_shape, cov_shape


def _spectrum(name, cov):
    """``(eigenvalues, eigenvectors, kept)``: kept marks the eigenvalues above scipy's
    cutoff (1e6 float64 epsilons, 1e3 float32 ones, times the largest magnitude)."""
    s, u = _linalg.eigh(cov)
    dtype = _util.dtype_of(s)
    factor = 1e3 if dtype == np.float32 else 1e6
    eps = ew.mul(_c(s, factor * np.finfo(dtype).eps), fnp.max(ew.abs(s)))
    if not isinstance(s, Tracer) and np.min(s) < -eps:
        raise InvalidArgumentError(
            f"{name}: cov must be symmetric positive semidefinite, but it has the "
            f"eigenvalue {np.min(s):g}; with allow_singular=True only zero eigenvalues are "
            "accepted beside positive ones.")
    return s, u, ew.gt(s, eps), eps


def _pseudo_log_det(s, kept):
    return fnp.sum(ew.select(kept, ew.log(ew.select(kept, s, _c(s, 1))), _c(s, 0)))


def _singular_logpdf(name, dev, cov, d):
    s, u, kept, eps = _spectrum(name, cov)
    rank = fnp.sum(ew.select(kept, _c(s, 1), _c(s, 0)))
    inverse = ew.select(kept, ew.div(_c(s, 1), ew.select(kept, s, _c(s, 1))), _c(s, 0))
    coords = fnp.matmul(dev, u)  # the points in the eigenvector basis
    squares = ew.mul(coords, coords)
    maha = fnp.sum(ew.mul(squares, inverse), axis=-1)
    residual = ew.sqrt(fnp.sum(ew.select(kept, _c(squares, 0), squares), axis=-1))
    inside = ew.lt(residual, ew.mul(_c(eps, 1e3), eps))
    value = ew.mul(_c(dev, -0.5), ew.add(ew.add(maha, _pseudo_log_det(s, kept)),
                                           ew.mul(rank, _c(dev, 2 * HALF_LOG_2PI))))
    return outside_support(inside, value)


def entropy(mean=None, cov=1):
    """The differential entropy ``(rank (1 + log 2 pi) + log pdet cov) / 2`` of
    ``N(mean, cov)``: as scipy's, a singular covariance is accepted and gives its
    pseudo-determinant and rank (eigenvalues above scipy's cutoff).

    Raises:
      InvalidArgumentError: for a (concrete) covariance with a negative eigenvalue.

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.entropy(cov=np.eye(2))), 12)  # 1 + log 2 pi
    2.837877066409
    >>> round(float(multivariate_normal.entropy(cov=np.ones((2, 2)))), 12)  # rank 1
    1.765512123485
    """
    name = "funcdiff.scipy.stats.multivariate_normal.entropy"
    _, mean, cov, d, _, cov_shape = _parameters(name, None, mean, cov)
    if len(cov_shape) < 2:
        log_det = fnp.sum(ew.log(fnp.broadcast_to(cov, (d,))))
        rank = _c(log_det, d)
    else:
        s, _, kept, _ = _spectrum(name, cov)
        log_det = _pseudo_log_det(s, kept)
        rank = fnp.sum(ew.select(kept, _c(s, 1), _c(s, 0)))
    return finish(ew.mul(_c(log_det, 0.5),
                         ew.add(ew.mul(rank, _c(log_det, 1 + 2 * HALF_LOG_2PI)), log_det)))


def pdf(x, mean=None, cov=1, allow_singular=False):
    """The density of ``N(mean, cov)`` at the points ``x`` (see ``logpdf``).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.pdf(np.zeros(2), cov=np.array([1.0, 1.0]))), 12)
    0.159154943092
    """
    return finish(ew.exp(logpdf(x, mean, cov, allow_singular)))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
