"""Continuous samplers from uniform floats: uniform, normal, truncated_normal,
exponential, laplace, logistic, gumbel, cauchy and multivariate_normal.

Each is an inverse CDF (or a linear map of normals) written in funcdiff
operations, so its sample is differentiable in its parameters.
"""

from __future__ import annotations

import numpy as np

from funcdiff import numpy as fnp
from funcdiff.core import get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.random._keys import (check_key, concrete, float_dtype, param, result_shape,
                                   sample_shape, toward, unit_floats)
from funcdiff.scipy import special

__all__ = ["uniform", "normal", "truncated_normal", "exponential", "laplace", "logistic",
           "gumbel", "cauchy", "multivariate_normal", "standard_normal", "standard_gumbel"]


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform samples in ``[minval, maxval)``; differentiable in minval and maxval.

    Raises:
      InvalidArgumentError: when concrete bounds have ``minval >= maxval``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> u = fd.random.uniform(fd.random.key(0), (1000,), minval=2.0, maxval=3.0)
    >>> bool((u >= 2).all() and (u < 3).all())
    True
    """
    check_key(key, "uniform")
    shape, dtype = sample_shape(shape, "uniform"), float_dtype(dtype, "uniform")
    lo, hi = concrete(minval), concrete(maxval)
    if lo is not None and hi is not None and np.any(lo >= hi):
        raise InvalidArgumentError(
            f"funcdiff.random.uniform needs minval < maxval, got minval={minval!r} and "
            f"maxval={maxval!r}.")
    minval, maxval = param(minval, dtype), param(maxval, dtype)
    shape = result_shape("uniform", shape, minval, maxval)
    u = unit_floats(key, shape, dtype)
    # rounding may reach maxval: keep below it (the bound itself has no derivative)
    below = toward(maxval, minval)
    return fnp.minimum(minval + (maxval - minval) * u, below)


def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples, by the inverse CDF: ``sqrt(2) erfinv(2u - 1)``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> x = fd.random.normal(fd.random.key(0), (10000,))
    >>> bool(abs(x.mean()) < 0.05 and abs(x.std() - 1) < 0.05)
    True
    """
    check_key(key, "normal")
    shape, dtype = sample_shape(shape, "normal"), float_dtype(dtype, "normal")
    return standard_normal(key, shape, dtype)


def standard_normal(key, shape, dtype):
    u = unit_floats(key, shape, dtype, open_interval=True)
    return special.ndtri(u)


def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    """Standard normal samples conditioned on ``lower < x < upper``, by the inverse CDF.

    Differentiable in ``lower`` and ``upper`` (the sample is
    ``ndtri(ndtr(lower) + u (ndtr(upper) - ndtr(lower)))``). Bounds beyond about
    8 standard deviations on the same side lose precision.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> x = fd.random.truncated_normal(fd.random.key(0), -1.0, 2.0, (1000,))
    >>> bool((x > -1).all() and (x < 2).all())
    True
    """
    check_key(key, "truncated_normal")
    dtype = float_dtype(dtype, "truncated_normal")
    lo, hi = concrete(lower), concrete(upper)
    if lo is not None and hi is not None and np.any(lo >= hi):
        raise InvalidArgumentError(
            f"funcdiff.random.truncated_normal needs lower < upper, got lower={lower!r} and "
            f"upper={upper!r}.")
    lower, upper = param(lower, dtype), param(upper, dtype)
    shape = result_shape("truncated_normal", sample_shape(shape, "truncated_normal"), lower, upper)
    # the CDF's upper tail is taken by symmetry where it is more accurate
    flip = fnp.broadcast_to((lower + upper) > 0, shape)
    lo_, hi_ = fnp.where(flip, -upper, lower), fnp.where(flip, -lower, upper)
    a, b = special.ndtr(lo_), special.ndtr(hi_)
    u = unit_floats(key, shape, dtype, open_interval=True)
    x = special.ndtri(a + u * (b - a))
    x = fnp.where(flip, -x, x)
    return fnp.clip(x, toward(lower, upper), toward(upper, lower))


def exponential(key, shape=(), dtype=np.float64):
    """Exponential samples of rate 1, ``-log(1 - u)``; divide by a rate to rescale.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> bool((fd.random.exponential(fd.random.key(0), (100,)) >= 0).all())
    True
    """
    check_key(key, "exponential")
    shape, dtype = sample_shape(shape, "exponential"), float_dtype(dtype, "exponential")
    return -fnp.log1p(-unit_floats(key, shape, dtype))


def laplace(key, shape=(), dtype=np.float64):
    """Laplace samples of scale 1 (density ``exp(-|x|) / 2``), by the inverse CDF.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.laplace(fd.random.key(0), (2, 3)).shape
    (2, 3)
    """
    check_key(key, "laplace")
    shape, dtype = sample_shape(shape, "laplace"), float_dtype(dtype, "laplace")
    v = 2 * unit_floats(key, shape, dtype, open_interval=True) - 1    # in (-1, 1)
    return -fnp.sign(v) * fnp.log1p(-fnp.abs(v))


def logistic(key, shape=(), dtype=np.float64):
    """Standard logistic samples, ``log(u / (1 - u))``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.logistic(fd.random.key(0), (4,)).dtype
    dtype('float64')
    """
    check_key(key, "logistic")
    shape, dtype = sample_shape(shape, "logistic"), float_dtype(dtype, "logistic")
    u = unit_floats(key, shape, dtype, open_interval=True)
    return fnp.log(u) - fnp.log1p(-u)


def gumbel(key, shape=(), dtype=np.float64):
    """Standard Gumbel samples, ``-log(-log(u))``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.gumbel(fd.random.key(0), (3,)).shape
    (3,)
    """
    check_key(key, "gumbel")
    shape, dtype = sample_shape(shape, "gumbel"), float_dtype(dtype, "gumbel")
    return standard_gumbel(key, shape, dtype)


def standard_gumbel(key, shape, dtype):
    return -fnp.log(-fnp.log(unit_floats(key, shape, dtype, open_interval=True)))


def cauchy(key, shape=(), dtype=np.float64):
    """Standard Cauchy samples, ``tan(pi (u - 1/2))``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.cauchy(fd.random.key(0), (3,)).shape
    (3,)
    """
    check_key(key, "cauchy")
    shape, dtype = sample_shape(shape, "cauchy"), float_dtype(dtype, "cauchy")
    u = unit_floats(key, shape, dtype, open_interval=True)
    return fnp.tan(dtype.type(np.pi) * (u - dtype.type(0.5)))


def multivariate_normal(key, mean, cov, shape=None, dtype=np.float64, method="cholesky"):
    """Samples ``mean + A z`` with ``A A^T = cov``; differentiable in mean and cov.

    Args:
      mean: ``(..., n)``; cov: ``(..., n, n)`` symmetric positive definite (semi-definite
        for ``method="eigh"`` or ``"svd"``).
      shape: the batch shape of the result (default: the broadcast batch shapes of
        mean and cov); the result has shape ``shape + (n,)``.
      method: ``"cholesky"`` (A the Cholesky factor), ``"eigh"`` or ``"svd"``
        (A = U sqrt(S)).

    Raises:
      InvalidArgumentError: for an unknown method, or a concrete cov that is not
        positive definite (cholesky) or has negative eigenvalues (eigh, svd).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> x = fd.random.multivariate_normal(fd.random.key(0), np.zeros(2), cov, (20000,))
    >>> bool(np.allclose(np.cov(x.T), cov, atol=0.06))
    True
    """
    check_key(key, "multivariate_normal")
    dtype = float_dtype(dtype, "multivariate_normal")
    if method not in ("cholesky", "eigh", "svd"):
        raise InvalidArgumentError(f"funcdiff.random.multivariate_normal: method must be "
                                   f"'cholesky', 'eigh' or 'svd', got {method!r}.")
    mean, cov = param(mean, dtype), param(cov, dtype)
    mshape, cshape = get_aval(mean).shape, get_aval(cov).shape
    if not mshape or len(cshape) < 2 or cshape[-2:] != (mshape[-1],) * 2:
        raise ShapeError(f"funcdiff.random.multivariate_normal needs mean (..., n) and cov "
                         f"(..., n, n), got {mshape} and {cshape}.")
    _check_covariance(cov, method)
    batch = result_shape("multivariate_normal", sample_shape(shape, "multivariate_normal"),
                             fnp.zeros(mshape[:-1]), fnp.zeros(cshape[:-2]))
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(fnp.maximum(w, 0))[..., None, :]
    else:
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s)[..., None, :]
    z = standard_normal(key, batch + mshape[-1:], dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


def _check_covariance(cov, method):
    value = concrete(cov)
    if value is None:
        return
    w = np.linalg.eigvalsh((value + np.swapaxes(value, -1, -2)) / 2)
    scale = np.max(np.abs(w)) if w.size else 0.0
    bad = np.any(w <= 0) if method == "cholesky" else np.any(w < -1e-10 * scale)
    if bad:
        raise InvalidArgumentError(
            f"funcdiff.random.multivariate_normal: cov is not positive "
            f"{'definite' if method == 'cholesky' else 'semi-definite'} (smallest eigenvalue "
            f"{w.min():.3g}). Pass a symmetric positive definite covariance"
            + (", or method='eigh' for a semi-definite one." if method == "cholesky" else "."))
