"""Special functions other than Bessel's, with scipy.special's values and funcdiff's derivatives.

- Exponential integrals: expi' = e^x / x, exp1' = -e^{-x} / x; spence (scipy's
  integral of log(t) / (1 - t) from 1 to x), whose derivative log(x) / (1 - x)
  is evaluated near x = 1, where it is -1, by its Taylor series in u = x - 1.
- Gamma relatives: erfcinv' = -sqrt(pi)/2 e^{y^2}; rgamma = 1 / Gamma, whose
  derivative -digamma(x) rgamma(x) is 0 * inf at the non-positive integers and is
  there its limit (-1)^n n! (at x = -n); gammasgn, the sign of Gamma, has a zero
  derivative; multigammaln(a, d), the sum of gammaln(a - j/2) for j < d plus a
  constant, with derivative the sum of digamma. scipy raises for
  a <= (d - 1)/2; here those elements are NaN, like every other function
  outside its domain.
- The regularized incomplete gamma functions gammainc(a, x), gammaincc(a, x)
  and the regularized incomplete beta function betainc(a, b, x), differentiable
  in every argument: in x by their densities, in the parameters by the cards of
  ``scipy_shape_derivatives`` (which also holds the zeta functions' cards, since
  their derivatives in the exponent are of the same kind).
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.errors import InvalidArgumentError
from funcdiff.primitives.cards import make_op
from funcdiff.primitives.elementwise import (add, and_, cos, digamma, div, eq, exp, floor, le,
                                             lgamma, log, lt, mul, neg, select, sub,
                                             abs as abs_, const)
from funcdiff.primitives.scipy_cards import scipy_elementwise, static_order_check
from funcdiff.primitives.scipy_shape_derivatives import (  # noqa: F401 (zeta cards re-exported)
    beta_density, betainc_dab, gamma_density, gammainc_da, hurwitz_zeta, hurwitz_zeta_p,
    riemann_zeta, riemann_zeta_p)


def _unary(name, scipy_name, partial, **kw):
    return scipy_elementwise(name, lambda s, x: getattr(s, scipy_name)(x), ("x",), (partial,),
                             **kw)


# --- exponential integrals and the dilogarithm ------------------------------------------

expi_p = _unary("expi", "expi", lambda x, out: div(exp(x), x), singular=True)
expi = make_op(expi_p, "Elementwise exponential integral Ei(x) (scipy.special.expi).")
exp1_p = _unary("exp1", "exp1", lambda x, out: neg(div(exp(neg(x)), x)), singular=True)
exp1 = make_op(exp1_p, "Elementwise exponential integral E1(x) (scipy.special.exp1).")

# log(x) / (1 - x) = -log1p(u) / u = sum_k (-1)^(k+1) u^k / (k + 1), u = x - 1; for
# |u| < 1/16 the 14 terms leave less than 1e-17, and beyond it 1 - x loses nothing.
_SPENCE_NEAR_ONE = 1 / 16
_SPENCE_SERIES = tuple((-1) ** (k + 1) / (k + 1) for k in range(14))


def _spence_derivative(x, out):
    u = sub(x, const(x, 1))
    near = lt(abs_(u), const(x, _SPENCE_NEAR_ONE))
    series = const(x, _SPENCE_SERIES[-1])
    for c in _SPENCE_SERIES[-2::-1]:
        series = add(mul(series, u), const(x, c))
    far_x = select(near, const(x, 2), x)  # keeps the far branch's 0 / 0 out of the series'
    far = div(log(far_x), sub(const(x, 1), far_x))
    return select(near, series, far)


spence_p = _unary("spence", "spence", _spence_derivative, singular=True)
spence = make_op(spence_p, "Elementwise dilogarithm, scipy's spence: the integral of "
                           "log(t) / (1 - t) from 1 to x, for x >= 0.")

# --- relatives of the gamma function ------------------------------------------------------

erfcinv_p = _unary("erfcinv", "erfcinv", lambda x, out: mul(
    const(x, -math.sqrt(math.pi) / 2), exp(mul(out, out))), singular=True)
erfcinv = make_op(erfcinv_p, "Elementwise inverse of erfc on [0, 2] (scipy.special.erfcinv).")


def _rgamma_derivative(x, out):
    pole = and_(le(x, const(x, 0)), eq(x, floor(x)))  # Gamma's poles, where rgamma is 0
    at_pole = mul(cos(mul(const(x, math.pi), x)), exp(lgamma(sub(const(x, 1), x))))
    elsewhere = neg(mul(digamma(select(pole, const(x, 0.5), x)), out))
    return select(pole, at_pole, elsewhere)


rgamma_p = _unary("rgamma", "rgamma", _rgamma_derivative)
rgamma = make_op(rgamma_p, "Elementwise 1 / Gamma(x) (scipy.special.rgamma).")
gammasgn_p = _unary("gammasgn", "gammasgn", None, nondifferentiable=True)
gammasgn = make_op(gammasgn_p, "Elementwise sign of Gamma(x) (scipy.special.gammasgn); its "
                               "derivative is zero.")


def _multigammaln(s, a, *, d):
    a = np.asarray(a)
    valid = a > 0.5 * (d - 1)  # scipy raises for any other element; here it is NaN
    out = s.multigammaln(np.where(valid, a, 0.5 * (d - 1) + 1.0), d)
    return out if valid.all() else np.where(valid, out, np.nan)


def _multigammaln_derivative(a, out, *, d):
    total = digamma(a)
    for j in range(1, d):
        total = add(total, digamma(sub(a, const(a, j / 2))))
    return total


def _positive_dimension(*, d):
    static_order_check("multigammaln", integer=True, param="d")(d=d)
    if d < 1:
        raise InvalidArgumentError(
            f"the primitive multigammaln needs a dimension d >= 1, got {d}")


multigammaln_p = scipy_elementwise("multigammaln", _multigammaln, ("a",),
                                   (_multigammaln_derivative,),
                                   check_params=_positive_dimension, singular=True)
multigammaln = make_op(multigammaln_p, "Elementwise log of the multivariate gamma function of "
                                       "a static int dimension d >= 1 "
                                       "(scipy.special.multigammaln).")

# --- incomplete gamma and beta; the zeta functions ---------------------------------------------

gammainc_p = scipy_elementwise("gammainc", lambda s, a, x: s.gammainc(a, x), ("a", "x"),
                               (lambda a, x, out: gammainc_da(a, x, order=1),
                                lambda a, x, out: gamma_density(a, x)),
                               singular=True)
gammainc = make_op(gammainc_p, "Elementwise regularized lower incomplete gamma function "
                               "P(a, x) (scipy.special.gammainc).")
gammaincc_p = scipy_elementwise("gammaincc", lambda s, a, x: s.gammaincc(a, x), ("a", "x"),
                                (lambda a, x, out: neg(gammainc_da(a, x, order=1)),
                                 lambda a, x, out: neg(gamma_density(a, x))),
                                singular=True)
gammaincc = make_op(gammaincc_p, "Elementwise regularized upper incomplete gamma function "
                                 "Q(a, x) = 1 - P(a, x) (scipy.special.gammaincc).")
betainc_p = scipy_elementwise("betainc", lambda s, a, b, x: s.betainc(a, b, x), ("a", "b", "x"),
                              (lambda a, b, x, out: betainc_dab(a, b, x, orders=(1, 0)),
                               lambda a, b, x, out: betainc_dab(a, b, x, orders=(0, 1)),
                               lambda a, b, x, out: beta_density(a, b, x)), singular=True)
betainc = make_op(betainc_p, "Elementwise regularized incomplete beta function I_x(a, b) "
                             "(scipy.special.betainc).")
