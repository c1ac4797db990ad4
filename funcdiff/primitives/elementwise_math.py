"""Elementwise mathematical functions: sign and absolute value, exponentials,
logarithms, powers, roots, trigonometric, hyperbolic, logistic and special functions.

Most are unary; those numpy defines on complex values (exponentials,
logarithms, roots, pow, the trigonometric and hyperbolic functions and their
inverses) accept them, with numpy's principal branches, and their derivatives
are the complex derivatives f'(z) (acosh's as a product of two roots, so its
branch cuts are numpy's); the others (cbrt, atan2, the special functions, ...)
are float-only, as in numpy. pow and atan2 are binary, and integer_pow raises
to a static Python int. Each derivative is written with
funcdiff operations, so it can itself be differentiated; its constants are
0-d arrays of the operand's dtype. At kinks: abs'(0) = 0 (sign(x), as in
autograd and PyTorch; JAX gives 1) and sqrt'(0) = inf; derivatives that are infinite somewhere (sqrt and log at 0,
negative integer powers at 0) scale tangents with ``safe_mul``, so a zero
tangent stays zero. sign has no derivative. The special functions (erf,
lgamma, digamma, polygamma, ...) are computed by ``special_math``; of the
modified Bessel functions, bessel_i0 is numpy.i0 itself (bit for bit), and
bessel_i1 and bessel_i (orders >= 2) come from ``special_math``. polygamma,
sinc and bessel_i are families with a static ``order`` whose derivative is the
next member (``ordered_unary``): sinc and I0 are smooth at 0, where their
usual formulas divide by x, so each derivative is evaluated by its own series
there and every order is exact, not a select of a constant.
Re-exported by ``elementwise``. Declaring a differentiable unary primitive
takes the product that scales its tangent from the roles ``roles.MUL`` and
``roles.SAFE_MUL`` (``elementwise_cards.unary_elementwise``), which
``elementwise_arithmetic``, imported above, fills.

The operations ``abs`` and ``pow`` shadow Python builtins inside this module
on purpose (they are the JAX lax names).
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff import roles
from funcdiff.compiler.lowerings import lower_ufunc
from funcdiff.core import Primitive, Zero, bind, get_aval
from funcdiff.errors import InvalidArgumentError
from funcdiff.passes import traits as passes
from funcdiff.passes.rules import on_zeros, zeros
from funcdiff.passes.zero_propagation import ZERO
from funcdiff.primitives import special_math
from funcdiff.primitives.cards import elementwise_cost, make_op
from funcdiff.primitives.elementwise_arithmetic import add, div, mul, neg, safe_mul, sub
from funcdiff.primitives.elementwise_common import (ARITHMETIC, FLOAT, INEXACT, NUMERIC,
                                                    accepts, binary, const, unary,
                                                    unary_batch)
from funcdiff.primitives.elementwise_logic import and_, eq, select

# --- unary math ------------------------------------------------------------------------

sign_p = unary("sign", np.sign, nondifferentiable=True, kinds=NUMERIC)
sign = make_op(sign_p, "Elementwise sign: -1, 0 or 1 (NaN for NaN).")
sign_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING}
abs_p = unary("abs", np.abs, lambda x, y: sign(x), kinds=NUMERIC, scalar=math.fabs)
abs = make_op(abs_p, "Elementwise absolute value; its derivative at 0 is 0.")
abs_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING}

exp_p = unary("exp", np.exp, lambda x, y: y, kinds=INEXACT, flops=10, scalar=math.exp)
exp = make_op(exp_p, "Elementwise e ** x.")
roles.EXP.fill(exp_p)
exp2_p = unary("exp2", np.exp2, output_deriv=lambda y: mul(y, const(y, math.log(2))),
                kinds=INEXACT, flops=10)
exp2 = make_op(exp2_p, "Elementwise 2 ** x.")
log_p = unary("log", np.log, lambda x, y: div(const(x, 1), x), kinds=INEXACT, flops=10,
                singular=True, scalar=math.log)
log = make_op(log_p, "Elementwise natural logarithm.")
# numpy's log2 and log10 are exact at powers of their base, which log(x) / log(b) is not
log2_p = unary("log2", np.log2, lambda x, y: div(const(x, 1 / math.log(2)), x), kinds=INEXACT,
                flops=10, singular=True)
log2 = make_op(log2_p, "Elementwise base-2 logarithm.")
log10_p = unary("log10", np.log10, lambda x, y: div(const(x, 1 / math.log(10)), x),
                 kinds=INEXACT, flops=10, singular=True)
log10 = make_op(log10_p, "Elementwise base-10 logarithm.")
log1p_p = unary("log1p", np.log1p, lambda x, y: div(const(x, 1), add(x, const(x, 1))),
                 kinds=INEXACT, flops=10, singular=True, scalar=math.log1p)
log1p = make_op(log1p_p, "Elementwise log(1 + x), accurate for small x.")
log1p_p.traits |= {passes.ZERO_PRESERVING}
expm1_p = unary("expm1", np.expm1, output_deriv=lambda y: add(y, const(y, 1)), kinds=INEXACT,
                 flops=10,
                 scalar=math.expm1)
expm1 = make_op(expm1_p, "Elementwise exp(x) - 1, accurate for small x.")
expm1_p.traits |= {passes.ZERO_PRESERVING}
sqrt_p = unary("sqrt", np.sqrt, lambda x, y: div(const(y, 0.5), y), kinds=INEXACT, flops=4,
                singular=True,
                scalar=math.sqrt)
sqrt = make_op(sqrt_p, "Elementwise square root.")
sqrt_p.traits |= {passes.ZERO_PRESERVING}
rsqrt_p = unary("rsqrt", lambda x: 1 / np.sqrt(x),
                 lambda x, y: mul(const(y, -0.5), div(y, x)), kinds=INEXACT, flops=5,
                 singular=True)
rsqrt = make_op(rsqrt_p, "Elementwise 1 / sqrt(x).")
cbrt_p = unary("cbrt", np.cbrt, lambda x, y: mul(const(y, 1 / 3), integer_pow(y, y=-2)),
                flops=10, singular=True)
cbrt = make_op(cbrt_p, "Elementwise real cube root.")
cbrt_p.traits |= {passes.ZERO_PRESERVING}

sin_p = unary("sin", np.sin, lambda x, y: cos(x), kinds=INEXACT, flops=10, scalar=math.sin)
sin = make_op(sin_p, "Elementwise sine.")
sin_p.traits |= {passes.ZERO_PRESERVING}
cos_p = unary("cos", np.cos, lambda x, y: neg(sin(x)), kinds=INEXACT, flops=10,
               scalar=math.cos)
cos = make_op(cos_p, "Elementwise cosine.")
tan_p = unary("tan", np.tan, output_deriv=lambda y: add(const(y, 1), mul(y, y)),
               kinds=INEXACT, flops=10, scalar=math.tan)
tan = make_op(tan_p, "Elementwise tangent.")
tan_p.traits |= {passes.ZERO_PRESERVING}


def one_minus_square(x):
    return sub(const(x, 1), mul(x, x))


asin_p = unary("asin", np.arcsin, lambda x, y: rsqrt(one_minus_square(x)), kinds=INEXACT,
                flops=10, singular=True, scalar=math.asin)
asin = make_op(asin_p, "Elementwise inverse sine.")
asin_p.traits |= {passes.ZERO_PRESERVING}
acos_p = unary("acos", np.arccos, lambda x, y: neg(rsqrt(one_minus_square(x))),
                kinds=INEXACT, flops=10, singular=True, scalar=math.acos)
acos = make_op(acos_p, "Elementwise inverse cosine.")
atan_p = unary("atan", np.arctan,
                lambda x, y: div(const(x, 1), add(const(x, 1), mul(x, x))), kinds=INEXACT,
                flops=10, scalar=math.atan)
atan = make_op(atan_p, "Elementwise inverse tangent.")
atan_p.traits |= {passes.ZERO_PRESERVING}
sinh_p = unary("sinh", np.sinh, lambda x, y: cosh(x), kinds=INEXACT, flops=10,
                scalar=math.sinh)
sinh = make_op(sinh_p, "Elementwise hyperbolic sine.")
sinh_p.traits |= {passes.ZERO_PRESERVING}
cosh_p = unary("cosh", np.cosh, lambda x, y: sinh(x), kinds=INEXACT, flops=10,
                scalar=math.cosh)
cosh = make_op(cosh_p, "Elementwise hyperbolic cosine.")
tanh_p = unary("tanh", np.tanh, output_deriv=one_minus_square, kinds=INEXACT, flops=10,
                scalar=math.tanh)
tanh = make_op(tanh_p, "Elementwise hyperbolic tangent.")
tanh_p.traits |= {passes.ZERO_PRESERVING}
asinh_p = unary("asinh", np.arcsinh,
                 lambda x, y: rsqrt(add(mul(x, x), const(x, 1))), kinds=INEXACT, flops=10,
                 scalar=math.asinh)
asinh = make_op(asinh_p, "Elementwise inverse hyperbolic sine.")
asinh_p.traits |= {passes.ZERO_PRESERVING}


def acosh_derivative(x, y):
    # 1 / sqrt((x - 1)(x + 1)) for reals; for complex values the product of the two
    # roots, whose branch cuts are arccosh's own (sqrt(z*z - 1) is cut along the
    # imaginary axis too and has the opposite sign wherever Re z < 0)
    if get_aval(x).dtype.kind == "c":
        return mul(rsqrt(sub(x, const(x, 1))), rsqrt(add(x, const(x, 1))))
    return rsqrt(mul(sub(x, const(x, 1)), add(x, const(x, 1))))


acosh_p = unary("acosh", np.arccosh, acosh_derivative, kinds=INEXACT, flops=10,
                 singular=True, scalar=math.acosh)
acosh = make_op(acosh_p, "Elementwise inverse hyperbolic cosine.")
atanh_p = unary("atanh", np.arctanh, lambda x, y: div(
    const(x, 1), mul(sub(const(x, 1), x), add(const(x, 1), x))), kinds=INEXACT, flops=10,
    singular=True, scalar=math.atanh)
atanh = make_op(atanh_p, "Elementwise inverse hyperbolic tangent.")
atanh_p.traits |= {passes.ZERO_PRESERVING}


def logistic_impl(x):
    e = np.exp(-np.abs(x))  # never overflows; both branches are then exact
    return np.where(x >= 0, 1, e) / (1 + e)


logistic_p = unary("logistic", logistic_impl,
                    output_deriv=lambda y: mul(y, sub(const(y, 1), y)), flops=12)
logistic = make_op(logistic_p, "Elementwise sigmoid 1 / (1 + exp(-x)), stable for all x.")

# --- binary math: pow, atan2, logaddexp, logaddexp2, hypot ---------------------------


def pow_d_base(x, y, out):
    # y * x**(y-1); at x == y == 0 the base is replaced by 1 so the result is 0, not
    # 0 * inf. (Guarding on y == 0 alone, as JAX does, would zero d2/dxdy at y == 0.)
    at_origin = and_(eq(x, const(x, 0)), eq(y, const(y, 0)))
    return mul(y, pow(select(at_origin, const(x, 1), x), sub(y, const(y, 1))))


def pow_d_exponent(x, y, out):
    # log(x) * x**y, with log(1) = 0 standing in at x == 0 so no inf/NaN is formed
    safe_x = select(eq(x, const(x, 0)), const(x, 1), x)
    return mul(log(safe_x), out)


pow_p = binary("pow", np.power, (pow_d_base, pow_d_exponent), kinds=INEXACT, flops=20,
                singular=True, scalar=math.pow)
pow = make_op(pow_p, "Elementwise x ** y for floating or complex x and y (principal branch; "
                     "see integer_pow).")
pow_p.traits |= {passes.BROADCASTING}


def atan2_denominator(x, y):
    return add(mul(x, x), mul(y, y))


atan2_p = binary("atan2", np.arctan2,
                  (lambda x, y, out: div(y, atan2_denominator(x, y)),
                   lambda x, y, out: neg(div(x, atan2_denominator(x, y)))),
                  kinds=FLOAT, flops=20, scalar=math.atan2)
atan2 = make_op(atan2_p, "Elementwise four-quadrant arctangent of x / y.")
atan2_p.traits |= {passes.BROADCASTING}


# logaddexp, logaddexp2 and hypot are smooth where their stable implementations pass
# through max, abs or a select (at ties, at zeros): their derivatives are their own
# rules, so second and higher derivatives there are right, not zero.
def _shift(x, out):
    # x - out, the log-weight of x in log(exp(x) + exp(y)); 0 where x is the result
    # itself, which also covers x = out = +-inf (where x - out would be NaN): weight 1
    return select(eq(x, out), const(x, 0), sub(x, out))


logaddexp_p = binary("logaddexp", np.logaddexp,
                     (lambda x, y, out: exp(_shift(x, out)), lambda x, y, out: exp(_shift(y, out))),
                     kinds=FLOAT, flops=20)
logaddexp = make_op(logaddexp_p, "Elementwise log(exp(x) + exp(y)) without overflow.")
logaddexp2_p = binary("logaddexp2", np.logaddexp2,
                      (lambda x, y, out: exp2(_shift(x, out)),
                       lambda x, y, out: exp2(_shift(y, out))),
                      kinds=FLOAT, flops=20)
logaddexp2 = make_op(logaddexp2_p, "Elementwise log2(2**x + 2**y) without overflow.")


def _over_radius(x, out):
    # x / hypot(x, y); 0 at the origin, where hypot has no derivative (its smallest
    # subgradient, as for the norms)
    return div(x, select(eq(out, const(out, 0)), const(out, 1), out))


hypot_p = binary("hypot", np.hypot,
                 (lambda x, y, out: _over_radius(x, out), lambda x, y, out: _over_radius(y, out)),
                 kinds=FLOAT, flops=20, scalar=math.hypot)
hypot = make_op(hypot_p, "Elementwise sqrt(x**2 + y**2) without overflow.")
logaddexp_p.traits |= {passes.COMMUTATIVE}
logaddexp2_p.traits |= {passes.COMMUTATIVE}
hypot_p.traits |= {passes.COMMUTATIVE}

# --- special functions -------------------------------------------------------------------

TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def gaussian(x, scale):
    return mul(const(x, scale), exp(neg(mul(x, x))))


erf_p = unary("erf", special_math.erf, lambda x, y: gaussian(x, TWO_OVER_SQRT_PI),
               flops=30, kinds=INEXACT)  # complex: scipy's Faddeeva function
erf = make_op(erf_p, "Elementwise error function.")
erf_p.traits |= {passes.ZERO_PRESERVING}
erfc_p = unary("erfc", special_math.erfc, lambda x, y: gaussian(x, -TWO_OVER_SQRT_PI),
                flops=30, kinds=INEXACT)
erfc = make_op(erfc_p, "Elementwise complementary error function 1 - erf(x).")
erf_inv_p = unary("erf_inv", special_math.erf_inv, lambda x, y: mul(
    const(y, math.sqrt(math.pi) / 2), exp(mul(y, y))), flops=150, singular=True)
erf_inv = make_op(erf_inv_p, "Elementwise inverse error function on (-1, 1).")
erf_inv_p.traits |= {passes.ZERO_PRESERVING}
lgamma_p = unary("lgamma", special_math.lgamma, lambda x, y: digamma(x), flops=100, singular=True)
lgamma = make_op(lgamma_p, "Elementwise log |Gamma(x)|.")
digamma_p = unary("digamma", special_math.digamma, lambda x, y: polygamma(x, order=1),
                   flops=60, singular=True)
digamma = make_op(digamma_p, "Elementwise digamma function d/dx lgamma(x).")


bessel_i0_p = unary("bessel_i0", np.i0, lambda x, y: bessel_i1(x), flops=60)
bessel_i0 = make_op(bessel_i0_p, "Elementwise modified Bessel function of the first kind of "
                                 "order 0 (numpy.i0); its derivative is bessel_i1.")
bessel_i1_p = unary("bessel_i1", special_math.bessel_i1,
                    lambda x, y: bessel_i_derivative(x, 1), flops=80)
bessel_i1 = make_op(bessel_i1_p, "Elementwise modified Bessel function of the first kind of "
                                 "order 1.")
bessel_i1_p.traits |= {passes.ZERO_PRESERVING}


# --- families with a static order: each derivative is the next member ----------------


def ordered_unary(name, impl, derivative, *, lowest, flops, singular=False, kinds=FLOAT):
    """Declare a unary primitive with a static int param ``order`` >= ``lowest``
    whose derivative ``derivative(x, order)`` is again a member of its family (in
    funcdiff operations), so every order of derivative has its own rule.
    ``impl(x, *, order)`` is numpy's; ``singular`` scales with safe_mul and
    ``kinds`` are the accepted operand kinds, as for ``unary``."""
    prim = Primitive(name)
    prim.impl = impl
    scale = safe_mul if singular else mul

    def abstract_eval(x, *, order):
        if type(order) is not int or order < lowest:
            raise InvalidArgumentError(
                f"the primitive {name} needs a static int order >= {lowest}, got {order!r}")
        return x

    def jvp(primals, tangents, *, order):
        (x,), (t,) = primals, tangents
        return bind(prim, x, order=order), scale(t, derivative(x, order))

    def vjp(needed, out, x, *, order):
        d = derivative(x, order)
        return lambda ct: (scale(ct, d),)

    prim.abstract_eval = abstract_eval
    prim = accepts(prim, kinds)
    prim.jvp = jvp
    prim.vjp = vjp
    prim.batch = unary_batch(prim)
    prim.cost = lambda x, *, order: elementwise_cost(flops)(x)
    return prim


polygamma_p = ordered_unary("polygamma", lambda x, *, order: special_math.polygamma(order, x),
                            lambda x, order: polygamma(x, order=order + 1), lowest=0,
                            flops=200, singular=True)
polygamma = make_op(polygamma_p, "Elementwise polygamma(order, x): the order-th derivative "
                                 "of digamma; order is static (polygamma(x, order=1)).")


# sinc and I0 are smooth at 0, where their usual formulas divide by x (sin(pi x) / (pi x),
# I1' = I0 - I1 / x): their derivatives of every order are members of a family that
# is evaluated by a series there, never a select of a constant at 0.
def _sinc_impl(x, *, order):
    return np.sinc(x) if order == 0 else special_math.sinc_derivative(order, x)


sinc_p = ordered_unary("sinc", _sinc_impl, lambda x, order: sinc(x, order=order + 1),
                       lowest=0, flops=30, kinds=INEXACT)  # analytic: complex too
sinc = make_op(sinc_p, "Elementwise order-th derivative of the normalised sinc "
                       "sin(pi x) / (pi x) (numpy.sinc for order 0); order is static.")


def bessel_i_of_order(x, order):
    """I_order(x) for a static int order >= 0, through the primitive of that order."""
    if order == 0:
        return bessel_i0(x)
    return bessel_i1(x) if order == 1 else bessel_i(x, order=order)


def bessel_i_derivative(x, order):
    # I_n' = (I_{n-1} + I_{n+1}) / 2: no division by x, so no special case at 0
    below, above = bessel_i_of_order(x, order - 1), bessel_i_of_order(x, order + 1)
    return mul(const(x, 0.5), add(below, above))


bessel_i_p = ordered_unary("bessel_i", lambda x, *, order: special_math.bessel_i(order, x),
                           bessel_i_derivative, lowest=2, flops=100)
bessel_i = make_op(bessel_i_p, "Elementwise modified Bessel function of the first kind of a "
                               "static int order >= 2 (bessel_i0 and bessel_i1 are orders "
                               "0 and 1).")
bessel_i_p.traits |= {passes.ZERO_PRESERVING}

# --- integer_pow ---------------------------------------------------------------------------

integer_pow_p = Primitive("integer_pow")
integer_pow_p.impl = lambda x, *, y: np.power(x, y)


def integer_pow_abstract_eval(x, *, y):
    if type(y) is not int:
        raise InvalidArgumentError(
            f"the primitive integer_pow needs a static Python int exponent y, got {y!r}; "
            "use pow for array or float exponents.")
    if y < 0 and x.dtype.kind not in "fc":
        raise InvalidArgumentError(
            f"integer_pow cannot raise the integer array {x.str_short()} to the negative "
            f"power {y}; convert it to float first.")
    return x


def integer_pow_derivative(x, y):
    """``(scale, d)``: the derivative ``d`` of ``x ** y`` (None for y = 0, where it
    is zero; 1 for y = 1) and the product that applies it: safe_mul for
    negative powers, whose derivative is infinite at 0. The jvp and the tape's
    vjp both apply it."""
    if y == 0:
        return mul, None
    if y == 1:
        return mul, 1
    power = x if y == 2 else integer_pow(x, y=y - 1)
    return (safe_mul if y < 0 else mul), mul(const(x, y), power)


def integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow(x, y=y)
    scale, d = integer_pow_derivative(x, y)
    if d is None:
        return out, Zero(get_aval(out))
    return out, t if type(d) is int else scale(t, d)


def integer_pow_vjp(needed, out, x, *, y):
    scale, d = integer_pow_derivative(x, y)
    if d is None:
        return lambda ct: (None,)
    if type(d) is int:
        return lambda ct: (ct,)
    return lambda ct: (scale(ct, d),)


def integer_pow_cost(x, *, y):
    multiplies = 2 * (y if y >= 0 else -y).bit_length()  # repeated squaring
    return elementwise_cost(multiplies)(x)


def _integer_pow_scalar(ns, eqn, args, temp):
    # Python's float ** int is C pow, as numpy's
    return f"({args[0]} ** {ns.add('k', float(eqn.params['y']), False)})"


integer_pow_p.abstract_eval = integer_pow_abstract_eval
integer_pow_p = accepts(integer_pow_p, ARITHMETIC)
integer_pow_p.jvp = integer_pow_jvp
integer_pow_p.vjp = integer_pow_vjp
integer_pow_p.batch = unary_batch(integer_pow_p)
integer_pow_p.cost = integer_pow_cost
integer_pow_p.lowering = lower_ufunc(np.power, last_operand="y")
integer_pow_p.scalar_lowering = _integer_pow_scalar
integer_pow_p.rewrites = (
    on_zeros("0 ** y -> 0 for y > 0", (ZERO,), zeros, when=lambda eqn, z: eqn.params["y"] > 0),
)
integer_pow = make_op(integer_pow_p, "Elementwise x ** y for a static Python int y.")
