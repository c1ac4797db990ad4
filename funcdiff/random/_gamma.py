"""Gamma samples and the distributions built on them: gamma, beta, dirichlet, t.

Gamma is sampled by Marsaglia and Tsang's method in a ``while_loop`` and
differentiated in its shape parameter by implicit reparameterisation (see
``gamma``); beta, dirichlet and t are functions of gamma samples and inherit
that derivative.
"""

from __future__ import annotations

import numpy as np

from funcdiff import lax
from funcdiff import numpy as fnp
from funcdiff.core import get_aval
from funcdiff.custom_derivatives import custom_jvp
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.random._continuous import standard_normal
from funcdiff.random._keys import (check_key, concrete, float_dtype, fold_in, param,
                                   result_shape, sample_shape, split, unit_floats)
from funcdiff.scipy import special

__all__ = ["gamma", "beta", "dirichlet", "t", "standard_gamma"]

# ---------------------------------------------------------------------------
# Gamma and the distributions built on it


def gamma(key, a, shape=None, dtype=np.float64):
    """Gamma samples of shape ``a`` and scale 1 (divide by a rate to rescale).

    Sampling: Marsaglia and Tsang's squeeze method (a cubed normal accepted by
    a log-uniform test, at least 95% of draws per round) in a ``while_loop``
    whose every round draws for all elements from ``fold_in(key, round)`` and
    keeps the first accepted value of each; for ``a < 1`` a sample of
    ``a + 1`` times ``u ** (1 / a)``, in logarithms.

    Derivative in ``a``: implicit reparameterisation, ``dx/da = -(dP/da) /
    (dP/dx)`` with ``P(a, x)`` the regularised lower incomplete gamma function,
    whose ``a``-derivative is summed from the series ``P = sum_n x**(a+n)
    exp(-x) / Gamma(a + n + 1)`` over 256 terms around its peak term:
    ``dx/da = sum_n x**(n+1) Gamma(a) / Gamma(a+n+1) (digamma(a+n+1) - log x)``.
    The window holds the series for samples up to about x = 200 (a up to about
    150); beyond, the derivative is nan rather than a wrong number.

    Raises:
      InvalidArgumentError: when a concrete ``a`` is not positive.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> g = fd.random.gamma(fd.random.key(0), 3.0, (20000,))
    >>> bool(abs(g.mean() - 3.0) < 0.05)
    True
    >>> dx = fd.grad(lambda a: fd.random.gamma(fd.random.key(0), a))(3.0)   # reparameterised
    """
    check_key(key, "gamma")
    dtype = float_dtype(dtype, "gamma")
    a_value = concrete(a)
    if a_value is not None and not np.all(a_value > 0):
        raise InvalidArgumentError(f"funcdiff.random.gamma needs a > 0, got a={a!r}.")
    a = param(a, dtype)
    shape = result_shape("gamma", sample_shape(shape, "gamma"), a)
    return standard_gamma(key, fnp.broadcast_to(a, shape))


@custom_jvp
def standard_gamma(key, a):
    return _marsaglia_tsang(key, a)


@standard_gamma.defjvp
def _gamma_jvp(primals, tangents):
    key, a = primals
    x = standard_gamma(key, a)
    return x, _gamma_dx_da(x, a) * tangents[1]


def _marsaglia_tsang(key, a):
    dtype, shape = get_aval(a).dtype, get_aval(a).shape
    boost = a < 1
    d = fnp.where(boost, a + 1, a) - dtype.type(1 / 3)
    c = 1 / fnp.sqrt(9 * d)
    key_rounds, key_boost = split(key)

    def round_(state):
        i, x, done = state
        kz, ku = split(fold_in(key_rounds, i))
        z, u = standard_normal(kz, shape, dtype), unit_floats(ku, shape, dtype, open_interval=True)
        v = (1 + c * z) ** 3
        v_safe = fnp.where(v > 0, v, 1)
        ok = (v > 0) & (fnp.log(u) < z * z / 2 + d - d * v_safe + d * fnp.log(v_safe))
        return i + 1, fnp.where(done | ~ok, x, d * v_safe), done | ok

    start = (np.int64(0), fnp.zeros(shape, dtype), fnp.zeros(shape, bool))
    _, x, _ = lax.while_loop(lambda s: ~fnp.all(s[2]), round_, start)
    log_u = fnp.log(unit_floats(key_boost, shape, dtype, open_interval=True))
    return fnp.where(boost, fnp.exp(fnp.log(x) + log_u / fnp.where(boost, a, 1)), x)


_DERIVATIVE_TERMS = 256


def _gamma_dx_da(x, a):
    """dx/da of a gamma sample by implicit reparameterisation (see ``gamma``)."""
    dtype = get_aval(x).dtype
    positive = x > 0
    xs = fnp.where(positive, x, 1)[..., None]
    a_ = a[..., None]
    log_x = fnp.log(xs)
    # the terms peak near n = x - a; sum a window of _DERIVATIVE_TERMS around it
    start = fnp.floor(fnp.maximum(xs - a_ - _DERIVATIVE_TERMS / 2, 0))
    n = start + fnp.arange(_DERIVATIVE_TERMS, dtype=dtype)
    log_term = (n + 1) * log_x + special.gammaln(a_) - special.gammaln(a_ + n + 1)
    terms = fnp.exp(log_term) * (special.digamma(a_ + n + 1) - log_x)
    total = fnp.sum(terms, axis=-1)
    # the window's edges must be negligible, else the series was cut short
    edge = fnp.maximum(fnp.where(start[..., 0] > 0, log_term[..., 0], -np.inf), log_term[..., -1])
    converged = edge < fnp.max(log_term, axis=-1) - 40
    return fnp.where(positive, fnp.where(converged, total, np.nan), 0)


def beta(key, a, b, shape=None, dtype=np.float64):
    """Beta samples, ``X / (X + Y)`` for gammas X of ``a`` and Y of ``b``; differentiable in a, b.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> x = fd.random.beta(fd.random.key(0), 2.0, 3.0, (20000,))
    >>> bool(abs(x.mean() - 0.4) < 0.01)
    True
    """
    check_key(key, "beta")
    dtype = float_dtype(dtype, "beta")
    for name, v in (("a", a), ("b", b)):
        value = concrete(v)
        if value is not None and not np.all(value > 0):
            raise InvalidArgumentError(f"funcdiff.random.beta needs {name} > 0, got {name}={v!r}.")
    a, b = param(a, dtype), param(b, dtype)
    shape = result_shape("beta", sample_shape(shape, "beta"), a, b)
    ka, kb = split(key)
    x = standard_gamma(ka, fnp.broadcast_to(a, shape))
    y = standard_gamma(kb, fnp.broadcast_to(b, shape))
    return x / (x + y)


def dirichlet(key, alpha, shape=None, dtype=np.float64):
    """Dirichlet samples over ``alpha``'s last axis (normalised gammas); differentiable in alpha.

    ``shape`` is the batch shape (default ``alpha.shape[:-1]``); the result has
    shape ``shape + alpha.shape[-1:]``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.dirichlet(fd.random.key(0), np.ones(3), (4,)).sum(axis=-1).round(12).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    check_key(key, "dirichlet")
    dtype = float_dtype(dtype, "dirichlet")
    value = concrete(alpha)
    if value is not None and not np.all(value > 0):
        raise InvalidArgumentError(f"funcdiff.random.dirichlet needs alpha > 0, got {alpha!r}.")
    alpha = param(alpha, dtype)
    ashape = get_aval(alpha).shape
    if not ashape:
        raise ShapeError("funcdiff.random.dirichlet needs alpha with at least one axis.")
    batch = sample_shape(shape, "dirichlet")
    batch = result_shape("dirichlet", batch, fnp.zeros(ashape[:-1]))
    g = standard_gamma(key, fnp.broadcast_to(alpha, batch + ashape[-1:]))
    return g / fnp.sum(g, axis=-1, keepdims=True)


def t(key, df, shape=(), dtype=np.float64):
    """Student's t samples with ``df`` degrees of freedom, ``z sqrt(df / chi2_df)``.

    Differentiable in ``df`` (through the gamma sample).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.t(fd.random.key(0), 5.0, (3,)).shape
    (3,)
    """
    check_key(key, "t")
    dtype = float_dtype(dtype, "t")
    value = concrete(df)
    if value is not None and not np.all(value > 0):
        raise InvalidArgumentError(f"funcdiff.random.t needs df > 0, got df={df!r}.")
    df = param(df, dtype)
    shape = result_shape("t", sample_shape(shape, "t"), df)
    kz, kg = split(key)
    half = fnp.broadcast_to(df / 2, shape)
    return standard_normal(kz, shape, dtype) * fnp.sqrt(half / standard_gamma(kg, half))
