"""Cards for quantile functions and Student's t cdf, valued by scipy.

- ``gammaincinv(a, q)``, ``betaincinv(a, b, q)`` and ``stdtrit(df, q)`` invert
  the gamma, beta and t cdfs in x. Their derivatives follow from the implicit
  function theorem at the quantile x: dx/dq = 1 / density(x) and, for a
  parameter theta, dx/dtheta = -(dF/dtheta)(x) / density(x), with the
  parameter derivatives of the cdfs written in funcdiff operations (so every
  order and both modes follow).
- ``stdtrit`` is -inf at q = 0, as scipy.stats.t.ppf (scipy.special.stdtrit
  gives +inf there). ``stdtr(df, t)`` is the t cdf; its derivative in df goes through the
  incomplete beta function: F = 1 - I_w(df/2, 1/2) / 2 for t > 0 (and
  I_w(df/2, 1/2) / 2 for t <= 0) with w = df / (df + t^2).
- The discrete quantiles (poisson, binom, nbinom) are step functions of q and
  of the parameters: their derivatives are zero wherever they exist.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

from funcdiff.primitives.cards import make_op
from funcdiff.primitives.elementwise import (add, div, exp, gt, lgamma, log, log1p, mul, neg,
                                             select, sub, const)
from funcdiff.primitives.scipy_cards import scipy_elementwise
from funcdiff.primitives.scipy_shape_derivatives import (beta_density, betainc_dab,
                                                         gamma_density, gammainc_da)

LOG_PI = math.log(math.pi)


def _scipy_stats():
    return importlib.import_module("scipy.stats")


def _reciprocal(x):
    return div(const(x, 1), x)


# --- the gamma and beta quantiles ------------------------------------------------------------

def _gammaincinv_da(a, q, out):
    return neg(div(gammainc_da(a, out, order=1), gamma_density(a, out)))


gammaincinv_p = scipy_elementwise(
    "gammaincinv", lambda s, a, q: s.gammaincinv(a, q), ("a", "q"),
    (_gammaincinv_da, lambda a, q, out: _reciprocal(gamma_density(a, out))), singular=True)
gammaincinv = make_op(gammaincinv_p, "Elementwise inverse of gammainc(a, x) in x "
                                     "(scipy.special.gammaincinv).")


def _betaincinv_partial(orders):
    def partial(a, b, q, out):
        return neg(div(betainc_dab(a, b, out, orders=orders), beta_density(a, b, out)))
    return partial


betaincinv_p = scipy_elementwise(
    "betaincinv", lambda s, a, b, q: s.betaincinv(a, b, q), ("a", "b", "q"),
    (_betaincinv_partial((1, 0)), _betaincinv_partial((0, 1)),
     lambda a, b, q, out: _reciprocal(beta_density(a, b, out))), singular=True)
betaincinv = make_op(betaincinv_p, "Elementwise inverse of betainc(a, b, x) in x "
                                   "(scipy.special.betaincinv).")


# --- Student's t ------------------------------------------------------------------------------

def t_density(df, t):
    """The standard t density with ``df`` degrees of freedom at ``t``."""
    half, one = const(df, 0.5), const(df, 1)
    half_df_plus = mul(half, add(df, one))
    log_norm = sub(sub(lgamma(half_df_plus), lgamma(mul(half, df))),
                   mul(half, add(log(df), const(df, LOG_PI))))
    return exp(sub(log_norm, mul(half_df_plus, log1p(div(mul(t, t), df)))))


def t_cdf_ddf(df, t):
    """d/d(df) of the t cdf at ``t``, through I_w(df/2, 1/2) with w = df / (df + t^2)."""
    half = const(df, 0.5)
    t2 = mul(t, t)
    total = add(df, t2)
    w = div(df, total)
    a, b = mul(half, df), half
    dw = div(t2, mul(total, total))
    d_incomplete = add(mul(half, betainc_dab(a, b, w, orders=(1, 0))),
                       mul(beta_density(a, b, w), dw))
    half_d = mul(half, d_incomplete)
    return select(gt(t, const(t, 0)), neg(half_d), half_d)


stdtr_p = scipy_elementwise(
    "stdtr", lambda s, df, t: s.stdtr(df, t), ("df", "t"),
    (lambda df, t, out: t_cdf_ddf(df, t), lambda df, t, out: t_density(df, t)), singular=True)
stdtr = make_op(stdtr_p, "Elementwise cdf of Student's t distribution (scipy.special.stdtr).")

stdtrit_p = scipy_elementwise(
    "stdtrit", lambda s, df, q: np.where(q == 0, -np.inf, s.stdtrit(df, q)), ("df", "q"),
    (lambda df, q, out: neg(div(t_cdf_ddf(df, out), t_density(df, out))),
     lambda df, q, out: _reciprocal(t_density(df, out))), singular=True)
stdtrit = make_op(stdtrit_p, "Elementwise quantile of Student's t distribution "
                             "(scipy.special.stdtrit).")


# --- discrete quantiles: steps, with zero derivatives -----------------------------------------

poisson_ppf_p = scipy_elementwise(
    "poisson_ppf", lambda s, q, mu: _scipy_stats().poisson.ppf(q, mu), ("q", "mu"), (None, None))
poisson_ppf = make_op(poisson_ppf_p, "Elementwise quantile of the Poisson distribution "
                                     "(scipy.stats.poisson.ppf); a step function.")
binom_ppf_p = scipy_elementwise(
    "binom_ppf", lambda s, q, n, p: _scipy_stats().binom.ppf(q, n, p), ("q", "n", "p"),
    (None, None, None))
binom_ppf = make_op(binom_ppf_p, "Elementwise quantile of the binomial distribution "
                                 "(scipy.stats.binom.ppf); a step function.")
nbinom_ppf_p = scipy_elementwise(
    "nbinom_ppf", lambda s, q, n, p: _scipy_stats().nbinom.ppf(q, n, p), ("q", "n", "p"),
    (None, None, None))
nbinom_ppf = make_op(nbinom_ppf_p, "Elementwise quantile of the negative binomial distribution "
                                   "(scipy.stats.nbinom.ppf); a step function.")
