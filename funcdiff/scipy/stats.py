"""funcdiff.scipy.stats: log-densities of common distributions, differentiable in every mode.

Each distribution is an object with scipy's method names and arguments
(``norm.logpdf(x, loc=0, scale=1)``, ``gamma.logpdf(x, a, loc=0, scale=1)``,
...); every method is a composition of ``funcdiff.scipy.special`` and funcdiff
primitives, so derivatives with respect to the data *and* the parameters come
for free, to any order, under ``vmap`` and ``jit``. Arguments broadcast against
each other and are promoted like scipy's (integers become float64, float32
stays float32).

Values outside a distribution's support are ``-inf`` (log-densities) or 0
(densities), computed from a safe in-support stand-in and selected afterwards,
so their derivatives are exact zeros rather than NaN. Parameters are assumed
valid (positive scales, shapes and degrees of freedom); scipy returns NaN for
invalid parameters, funcdiff returns whatever the formula gives.

``norm.logcdf`` stays accurate and finite far into the left tail (it uses
``special.log_ndtr``). ``multivariate_normal.logpdf`` factors the covariance
by Cholesky and solves the triangular system (``funcdiff.numpy.linalg`` and
``funcdiff.scipy.linalg``).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from funcdiff.errors import ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy import linalg as _linalg
from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special
from funcdiff.scipy.linalg import solve_triangular
from funcdiff.scipy._special_util import c as _c, floats as _floats
import funcdiff.numpy as fnp

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)


def _standardize(name: str, x, loc, scale, *params):
    """``(z, log(scale), params...)`` with z = (x - loc) / scale, all in one float dtype."""
    x, loc, scale, *params = _floats(name, x, loc, scale, *params)
    z = ew.div(ew.sub(x, loc), scale)
    return (z, ew.log(scale), *params)


def _finish(x):
    if type(x) is np.ndarray and x.ndim == 0:
        return x[()]  # numpy scalars for scalar results, as scipy returns
    return x


def _documented(cls):
    """Add a ``Methods:`` list (signature and summary line of each method) to the class
    docstring, before its example, so ``help(norm)`` and the API reference show them."""
    lines = ["    Methods:", ""]
    for name, attr in vars(cls).items():
        if isinstance(attr, staticmethod):
            fun = attr.__func__
            summary = (fun.__doc__ or "").strip().splitlines()[0]
            lines.append(f"    - ``{name}{inspect.signature(fun)}``: {summary}")
    head, sep, example = cls.__doc__.partition("    >>>")
    cls.__doc__ = head + "\n".join(lines) + "\n\n" + sep + example
    return cls


def _outside_support(inside, value):
    """``value`` where ``inside``, else -inf."""
    return ew.select(inside, value, _c(value, -np.inf))


@_documented
class _Normal:
    """The normal distribution ``N(loc, scale**2)`` (``scipy.stats.norm``).

    >>> from funcdiff.scipy.stats import norm
    >>> round(float(norm.logpdf(0.0)), 12)
    -0.918938533205
    """

    @staticmethod
    def logpdf(x, loc=0, scale=1):
        """Log of the normal density at ``x``.

        Args:
          x: array_like of points.
          loc: mean, broadcast against ``x``.
          scale: standard deviation (> 0), broadcast against ``x``.

        Returns:
          ``-(x - loc)**2 / (2 scale**2) - log(scale) - log(2 pi) / 2``.

        >>> import funcdiff as fd
        >>> from funcdiff.scipy.stats import norm
        >>> float(fd.grad(norm.logpdf)(1.5))  # -(x - loc) / scale**2
        -1.5
        """
        z, log_scale = _standardize("funcdiff.scipy.stats.norm.logpdf", x, loc, scale)
        out = ew.sub(ew.mul(_c(z, -0.5), ew.mul(z, z)), ew.add(log_scale, _c(z, _HALF_LOG_2PI)))
        return _finish(out)

    @staticmethod
    def pdf(x, loc=0, scale=1):
        """The normal density at ``x``.

        >>> from funcdiff.scipy.stats import norm
        >>> round(float(norm.pdf(0.0)), 12)
        0.398942280401
        """
        return _finish(ew.exp(norm.logpdf(x, loc, scale)))

    @staticmethod
    def cdf(x, loc=0, scale=1):
        """The normal cumulative distribution function, accurate in the left tail.

        >>> from funcdiff.scipy.stats import norm
        >>> float(norm.cdf(1.0, loc=1.0, scale=2.0))
        0.5
        """
        z, _ = _standardize("funcdiff.scipy.stats.norm.cdf", x, loc, scale)
        return _finish(special.ndtr(z))

    @staticmethod
    def logcdf(x, loc=0, scale=1):
        """Log of the normal cdf, accurate and finite far into the left tail.

        Uses ``funcdiff.scipy.special.log_ndtr``: ``log(erfc(-z/sqrt 2)/2)`` in
        the middle, ``log1p(-ndtr(-z))`` on the right and the asymptotic series
        below z = -20, each branch selected with NaN-free derivatives.

        >>> import funcdiff as fd
        >>> from funcdiff.scipy.stats import norm
        >>> round(float(norm.logcdf(-100.0)), 6)
        -5005.524209
        >>> round(float(fd.grad(norm.logcdf)(-100.0)), 6)  # pdf / cdf ~ -z
        100.009998
        """
        z, _ = _standardize("funcdiff.scipy.stats.norm.logcdf", x, loc, scale)
        return _finish(special.log_ndtr(z))

    @staticmethod
    def sf(x, loc=0, scale=1):
        """The survival function ``1 - cdf``, accurate in the right tail.

        >>> from funcdiff.scipy.stats import norm
        >>> float(norm.sf(0.0))
        0.5
        """
        z, _ = _standardize("funcdiff.scipy.stats.norm.sf", x, loc, scale)
        return _finish(special.ndtr(ew.neg(z)))

    @staticmethod
    def logsf(x, loc=0, scale=1):
        """Log of the survival function, accurate far into the right tail.

        >>> from funcdiff.scipy.stats import norm
        >>> round(float(norm.logsf(100.0)), 6)
        -5005.524209
        """
        z, _ = _standardize("funcdiff.scipy.stats.norm.logsf", x, loc, scale)
        return _finish(special.log_ndtr(ew.neg(z)))

    @staticmethod
    def ppf(q, loc=0, scale=1):
        """The quantile function, the inverse of ``cdf``.

        >>> from funcdiff.scipy.stats import norm
        >>> round(float(norm.ppf(0.975)), 6)
        1.959964
        """
        q, loc, scale = _floats("funcdiff.scipy.stats.norm.ppf", q, loc, scale)
        return _finish(ew.add(loc, ew.mul(scale, special.ndtri(q))))


@_documented
class _StudentT:
    """Student's t distribution with ``df`` degrees of freedom (``scipy.stats.t``).

    >>> from funcdiff.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 12)  # Cauchy: -log(pi)
    -1.144729885849
    """

    @staticmethod
    def logpdf(x, df, loc=0, scale=1):
        """Log of the t density at ``x``.

        Args:
          x: array_like of points.
          df: degrees of freedom (> 0).
          loc, scale: location and scale (> 0).

        Returns:
          ``gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log(scale)
          - (df+1)/2 log1p(z**2/df)`` with ``z = (x - loc) / scale``.

        >>> import funcdiff as fd
        >>> from funcdiff.scipy.stats import t
        >>> round(float(fd.grad(t.logpdf, argnums=1)(0.0, 3.0)), 10)
        0.0264805139
        """
        z, log_scale, df = _standardize("funcdiff.scipy.stats.t.logpdf", x, loc, scale, df)
        half, one = _c(z, 0.5), _c(z, 1)
        half_df_plus = ew.mul(half, ew.add(df, one))
        norm_const = ew.sub(ew.sub(ew.lgamma(half_df_plus), ew.lgamma(ew.mul(half, df))),
                            ew.mul(half, ew.add(ew.log(df), _c(z, _LOG_PI))))
        kernel = ew.mul(half_df_plus, ew.log1p(ew.div(ew.mul(z, z), df)))
        return _finish(ew.sub(ew.sub(norm_const, kernel), log_scale))

    @staticmethod
    def pdf(x, df, loc=0, scale=1):
        """The t density at ``x``.

        >>> from funcdiff.scipy.stats import t
        >>> round(float(t.pdf(0.0, 1.0)), 12)  # 1 / pi
        0.318309886184
        """
        return _finish(ew.exp(t.logpdf(x, df, loc, scale)))


@_documented
class _Gamma:
    """The gamma distribution with shape ``a`` (``scipy.stats.gamma``).

    >>> from funcdiff.scipy.stats import gamma
    >>> round(float(gamma.logpdf(1.0, 1.0)), 12)  # exponential: -x
    -1.0
    """

    @staticmethod
    def logpdf(x, a, loc=0, scale=1):
        """Log of the gamma density ``z**(a-1) exp(-z) / Gamma(a) / scale``.

        ``z = (x - loc) / scale``; -inf for z < 0 (with a zero derivative).

        >>> import numpy as np
        >>> from funcdiff.scipy.stats import gamma
        >>> gamma.logpdf(np.array([-1.0, 2.0]), 2.0, scale=2.0)
        array([       -inf, -1.69314718])
        """
        z, log_scale, a = _standardize("funcdiff.scipy.stats.gamma.logpdf", x, loc, scale, a)
        inside = ew.ge(z, _c(z, 0))
        z = ew.select(inside, z, _c(z, 1))
        value = ew.sub(ew.sub(special.xlogy(ew.sub(a, _c(a, 1)), z), z),
                       ew.add(ew.lgamma(a), log_scale))
        return _finish(_outside_support(inside, value))

    @staticmethod
    def pdf(x, a, loc=0, scale=1):
        """The gamma density at ``x`` (0 outside the support).

        >>> from funcdiff.scipy.stats import gamma
        >>> round(float(gamma.pdf(2.0, 3.0)), 12)
        0.270670566473
        """
        return _finish(ew.exp(gamma.logpdf(x, a, loc, scale)))


@_documented
class _Beta:
    """The beta distribution with shapes ``a`` and ``b`` (``scipy.stats.beta``).

    >>> from funcdiff.scipy.stats import beta
    >>> round(float(beta.logpdf(0.5, 2.0, 2.0)), 12)  # log 1.5
    0.405465108108
    """

    @staticmethod
    def logpdf(x, a, b, loc=0, scale=1):
        """Log of the beta density ``z**(a-1) (1-z)**(b-1) / B(a, b) / scale``.

        ``z = (x - loc) / scale``; -inf outside [0, 1] (with a zero derivative).

        >>> import numpy as np
        >>> from funcdiff.scipy.stats import beta
        >>> beta.logpdf(np.array([0.5, 1.5]), 2.0, 2.0)
        array([0.40546511,       -inf])
        """
        z, log_scale, a, b = _standardize("funcdiff.scipy.stats.beta.logpdf", x, loc, scale, a, b)
        zero, one = _c(z, 0), _c(z, 1)
        inside = ew.and_(ew.ge(z, zero), ew.le(z, one))
        z = ew.select(inside, z, _c(z, 0.5))
        value = ew.add(special.xlogy(ew.sub(a, one), z), special.xlog1py(ew.sub(b, one), ew.neg(z)))
        value = ew.sub(value, ew.add(special.betaln(a, b), log_scale))
        return _finish(_outside_support(inside, value))

    @staticmethod
    def pdf(x, a, b, loc=0, scale=1):
        """The beta density at ``x`` (0 outside the support).

        >>> from funcdiff.scipy.stats import beta
        >>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)
        1.5
        """
        return _finish(ew.exp(beta.logpdf(x, a, b, loc, scale)))


@_documented
class _Poisson:
    """The Poisson distribution with mean ``mu`` (``scipy.stats.poisson``).

    >>> from funcdiff.scipy.stats import poisson
    >>> round(float(poisson.logpmf(0, 2.0)), 12)
    -2.0
    """

    @staticmethod
    def logpmf(k, mu, loc=0):
        """Log of the probability ``mu**k exp(-mu) / k!`` of the count ``k - loc``.

        -inf where ``k - loc`` is negative or not an integer; ``k`` may be an
        integer or a float array and is never differentiated.

        >>> import funcdiff as fd
        >>> from funcdiff.scipy.stats import poisson
        >>> float(fd.grad(poisson.logpmf, argnums=1)(3, 2.0))  # k / mu - 1
        0.5
        """
        k, mu, loc = _floats("funcdiff.scipy.stats.poisson.logpmf", k, mu, loc)
        k = ew.sub(k, loc)
        inside = ew.and_(ew.ge(k, _c(k, 0)), ew.eq(k, ew.floor(k)))
        k = ew.select(inside, k, _c(k, 0))
        value = ew.sub(ew.sub(special.xlogy(k, mu), ew.lgamma(ew.add(k, _c(k, 1)))), mu)
        return _finish(_outside_support(inside, value))

    @staticmethod
    def pmf(k, mu, loc=0):
        """The probability of the count ``k - loc`` (0 off the non-negative integers).

        >>> from funcdiff.scipy.stats import poisson
        >>> round(float(poisson.pmf(2, 2.0)), 12)
        0.270670566473
        """
        return _finish(ew.exp(poisson.logpmf(k, mu, loc)))


@_documented
class _MultivariateNormal:
    """The multivariate normal distribution (``scipy.stats.multivariate_normal``).

    >>> import numpy as np
    >>> from funcdiff.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.logpdf(np.zeros(2), cov=np.eye(2))), 12)
    -1.837877066409
    """

    @staticmethod
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
        out = ew.mul(_c(dev, -0.5), ew.add(ew.add(maha, log_det), _c(dev, 2 * d * _HALF_LOG_2PI)))
        return _finish(out)

    @staticmethod
    def pdf(x, mean=None, cov=1):
        """The density of ``N(mean, cov)`` at the points ``x`` (see ``logpdf``).

        >>> import numpy as np
        >>> from funcdiff.scipy.stats import multivariate_normal
        >>> round(float(multivariate_normal.pdf(np.zeros(2), cov=np.array([1.0, 1.0]))), 12)
        0.159154943092
        """
        return _finish(ew.exp(multivariate_normal.logpdf(x, mean, cov)))


norm = _Normal()
t = _StudentT()
gamma = _Gamma()
beta = _Beta()
poisson = _Poisson()
multivariate_normal = _MultivariateNormal()

__all__ = ["norm", "t", "gamma", "beta", "poisson", "multivariate_normal"]
