"""Cards for the derivatives of gammainc, betainc and zeta in their parameters.

- ``gammainc_da(a, x, order=n)`` is d^n/da^n P(a, x); ``betainc_dab(a, b, x,
  orders=(i, j))`` is d^i/da^i d^j/db^j I_x(a, b); ``hurwitz_zeta_dx(x, q,
  order=n)`` and ``riemann_zeta_dx(x, order=n)`` are d^n/dx^n of the zeta
  functions. Their values come from ``shape_derivative_kernels`` (series and
  continued fractions run on Taylor jets, accurate to about 1e-10 relative);
  each card's own derivatives are cards of the same family one order higher,
  or closed forms, so every order and both modes follow.
- The derivatives in x of the parameter derivatives are parameter derivatives of
  the densities: d/dx d^n/da^n P(a, x) = d^n/da^n e^{L(a)} with L = (a - 1) log x
  - x - lgamma(a). ``_exp_derivative`` writes d^alpha e^L = e^L E_alpha with the
  Leibniz recurrence E_{alpha + e_v} = sum over beta <= alpha of
  C(alpha, beta) L_{alpha - beta + e_v} E_beta, whose partials of L are
  polygammas. Where x = 0 and the density vanishes with all its parameter
  derivatives (a > 1; a > 1 and b > 1 at the ends of betainc's interval) the
  derivative is 0 rather than 0 * inf.
- The densities themselves (the derivatives in x of gammainc and betainc) live
  here too, so that ``scipy_special`` takes both kinds of partials from one place.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

from funcdiff.errors import InvalidArgumentError
from funcdiff.primitives import shape_derivative_kernels as kernels
from funcdiff.primitives.cards import make_op
from funcdiff.primitives.elementwise import (add, and_, digamma, eq, exp, gt, lgamma, log, log1p,
                                             mul, neg, or_, polygamma, select, sub, const)
from funcdiff.primitives.scipy_cards import scipy_elementwise, static_order_check


# --- the densities and their parameter derivatives -------------------------------------------


def _xlog(a, x, log_fun, at):
    """(a - 1) log_fun(x), 0 where a == 1 and x == at (the density's 0^0 = 1)."""
    corner = and_(eq(a, const(a, 1)), eq(x, const(x, at)))
    return mul(sub(a, const(a, 1)), log_fun(select(corner, const(x, 1 - at), x)))


def _log_one_minus(x):
    return log1p(neg(x))


def _gamma_log_density(a, x):
    return sub(sub(_xlog(a, x, log, 0), x), lgamma(a))


def gamma_density(a, x):
    """x^{a-1} e^{-x} / Gamma(a), the derivative of gammainc(a, x) in x."""
    return exp(_gamma_log_density(a, x))


def _beta_log_density(a, b, x):
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return sub(add(_xlog(a, x, log, 0), _xlog(b, x, _log_one_minus, 1)), log_beta)


def beta_density(a, b, x):
    """x^{a-1} (1 - x)^{b-1} / B(a, b), the derivative of betainc(a, b, x) in x."""
    return exp(_beta_log_density(a, b, x))


def _psi(order: int, x):
    """polygamma(order, x) for order >= 0."""
    return digamma(x) if order == 0 else polygamma(x, order=order)


def _exp_derivative(log_density, partial: Callable, top: tuple[int, ...]):
    """d^top e^L for L = ``log_density`` whose partial d^alpha L (|alpha| >= 1) is
    ``partial(alpha)``: e^L times E_top of the Leibniz recurrence."""
    terms: dict[tuple[int, ...], object] = {}
    partials: dict[tuple[int, ...], object] = {}

    def l_at(alpha):
        if alpha not in partials:
            partials[alpha] = partial(alpha)
        return partials[alpha]

    def e_at(alpha):
        if alpha in terms:
            return terms[alpha]
        v = next(v for v, n in enumerate(alpha) if n)  # E_alpha = E_{(alpha - e_v) + e_v}
        lower = tuple(n - (w == v) for w, n in enumerate(alpha))
        total = None
        for beta in itertools.product(*(range(n + 1) for n in lower)):
            weight = math.prod(math.comb(n, k) for n, k in zip(lower, beta))
            shift = tuple(n - k + (w == v) for w, (n, k) in enumerate(zip(lower, beta)))
            term = l_at(shift)
            if any(beta):
                term = mul(term, e_at(beta))
            if weight != 1:
                term = mul(const(term, weight), term)
            total = term if total is None else add(total, term)
        terms[alpha] = total
        return total

    return mul(exp(log_density), e_at(top))


def _vanishing_corner(x, at, *exponents):
    """Where x == at and each exponent > 1: the density and all its parameter derivatives are 0."""
    corner = eq(x, const(x, at))
    for a in exponents:
        corner = and_(corner, gt(a, const(a, 1)))
    return corner


def gamma_density_da(a, x, order: int):
    """d^order/da^order of ``gamma_density(a, x)``."""
    if order == 0:
        return gamma_density(a, x)

    def partial(alpha):
        (n,) = alpha
        if n == 1:
            return sub(log(x), digamma(a))
        return neg(_psi(n - 1, a))

    out = _exp_derivative(_gamma_log_density(a, x), partial, (order,))
    return select(_vanishing_corner(x, 0, a), const(out, 0), out)


def beta_density_dab(a, b, x, orders: tuple[int, int]):
    """d^i/da^i d^j/db^j of ``beta_density(a, b, x)``, (i, j) = orders."""
    if orders == (0, 0):
        return beta_density(a, b, x)
    total = add(a, b)

    def partial(alpha):
        i, j = alpha
        if (i, j) == (1, 0):
            return add(sub(log(x), digamma(a)), digamma(total))
        if (i, j) == (0, 1):
            return add(sub(_log_one_minus(x), digamma(b)), digamma(total))
        out = _psi(i + j - 1, total)
        if j == 0:
            out = sub(out, _psi(i - 1, a))
        if i == 0:
            out = sub(out, _psi(j - 1, b))
        return out

    out = _exp_derivative(_beta_log_density(a, b, x), partial, orders)
    corner = or_(_vanishing_corner(x, 0, a), _vanishing_corner(x, 1, b))
    return select(corner, const(out, 0), out)


# --- the cards ---------------------------------------------------------------------------------


def _positive_order(name):
    check = static_order_check(name, integer=True)

    def positive(**params):
        check(**params)
        if params["order"] < 1:
            raise InvalidArgumentError(f"the primitive {name} needs order >= 1, got "
                                       f"{params['order']}")
    return positive


def _orders_check(**params):
    orders = params["orders"]
    if (type(orders) is not tuple or len(orders) != 2
            or any(type(n) is not int or n < 0 for n in orders) or orders == (0, 0)):
        raise InvalidArgumentError(
            f"the primitive betainc_dab needs orders as a tuple of two non-negative Python "
            f"ints, not both 0, got {orders!r}")


gammainc_da_p = scipy_elementwise(
    "gammainc_da", lambda s, a, x, *, order: kernels.gammainc_a(a, x, order=order), ("a", "x"),
    (lambda a, x, out, order: gammainc_da(a, x, order=order + 1),
     lambda a, x, out, order: gamma_density_da(a, x, order)),
    check_params=_positive_order("gammainc_da"), flops=2000, singular=True)
gammainc_da = make_op(gammainc_da_p, "Elementwise d^order/da^order of the regularized lower "
                                     "incomplete gamma function P(a, x); order static >= 1.")


def _betainc_partial(shift: tuple[int, int]):
    def partial(a, b, x, out, orders):
        return betainc_dab(a, b, x, orders=(orders[0] + shift[0], orders[1] + shift[1]))
    return partial


betainc_dab_p = scipy_elementwise(
    "betainc_dab", lambda s, a, b, x, *, orders: kernels.betainc_ab(a, b, x, orders=orders),
    ("a", "b", "x"),
    (_betainc_partial((1, 0)), _betainc_partial((0, 1)),
     lambda a, b, x, out, orders: beta_density_dab(a, b, x, orders)),
    check_params=_orders_check, flops=4000, singular=True)
betainc_dab = make_op(betainc_dab_p, "Elementwise d^i/da^i d^j/db^j of the regularized "
                                     "incomplete beta function I_x(a, b); orders=(i, j) static.")


hurwitz_zeta_p = scipy_elementwise(
    "hurwitz_zeta", lambda s, x, q: s.zeta(x, q), ("x", "q"),
    (lambda x, q, out: hurwitz_zeta_dx(x, q, order=1),
     lambda x, q, out: _hurwitz_in_q(x, q, out, order=0)),
    singular=True)
hurwitz_zeta = make_op(hurwitz_zeta_p, "Elementwise Hurwitz zeta function zeta(x, q) "
                                       "(scipy.special.zeta).")


def _hurwitz_order(x, q, order: int):
    """d^order/dx^order zeta(x, q) (order 0: zeta itself)."""
    return hurwitz_zeta(x, q) if order == 0 else hurwitz_zeta_dx(x, q, order=order)


def _hurwitz_in_q(x, q, out, order):
    # d/dq zeta(x, q) = -x zeta(x + 1, q), differentiated ``order`` times in x (Leibniz)
    shifted = add(x, const(x, 1))
    term = mul(x, _hurwitz_order(shifted, q, order))
    if order:
        term = add(term, mul(const(x, order), _hurwitz_order(shifted, q, order - 1)))
    return neg(term)


hurwitz_zeta_dx_p = scipy_elementwise(
    "hurwitz_zeta_dx", lambda s, x, q, *, order: kernels.zeta_x(x, q, order=order),
    ("x", "q"),
    (lambda x, q, out, order: hurwitz_zeta_dx(x, q, order=order + 1), _hurwitz_in_q),
    check_params=_positive_order("hurwitz_zeta_dx"), flops=2000, singular=True)
hurwitz_zeta_dx = make_op(hurwitz_zeta_dx_p, "Elementwise d^order/dx^order of the Hurwitz "
                                             "zeta function zeta(x, q); order static >= 1.")

# scipy's Riemann zeta differs from zeta(x, 1) in the last bit and extends to x < 1: a card
riemann_zeta_p = scipy_elementwise("riemann_zeta", lambda s, x: s.zeta(x), ("x",),
                                   (lambda x, out: riemann_zeta_dx(x, order=1),),
                                   singular=True)
riemann_zeta = make_op(riemann_zeta_p, "Elementwise Riemann zeta function (scipy.special.zeta "
                                       "with one argument).")
riemann_zeta_dx_p = scipy_elementwise(
    "riemann_zeta_dx", lambda s, x, *, order: kernels.riemann_zeta_x(x, order=order), ("x",),
    (lambda x, out, order: riemann_zeta_dx(x, order=order + 1),),
    check_params=_positive_order("riemann_zeta_dx"), flops=2000, singular=True)
riemann_zeta_dx = make_op(riemann_zeta_dx_p, "Elementwise d^order/dx^order of the Riemann "
                                             "zeta function; order static >= 1.")
