"""Bessel functions of a fixed order, differentiable in x, with scipy.special's values.

- One card per scipy function: the fixed orders j0, j1, y0, y1, i0e, i1e, and
  the families jv, yn, yv, iv, ive, kv, kve, whose order is a static param
  (a Python float, yn's an int), so a traced order cannot reach them.
- Every derivative comes from the recurrences, which never divide by x:
  J' = (J_{v-1} - J_{v+1}) / 2, Y likewise, I' = (I_{v-1} + I_{v+1}) / 2,
  K' = -(K_{v-1} + K_{v+1}) / 2. So j1'(0) = 1/2 exactly (j1' = (j0 - J_2) / 2),
  and each derivative is again a card, which makes every order of derivative
  free.
- The exponentially scaled forms: ive = iv e^{-|x|}, whose derivative gains
  -sign(x) ive (at 0 the subgradient 0 is taken for that term), and
  kve = kv e^{x}, which gains + kve.
- The Y and K families are infinite at 0: their tangents are scaled with
  safe_mul, so a zero tangent stays zero there.
"""

from __future__ import annotations

from funcdiff.passes import traits
from funcdiff.primitives.cards import make_op
from funcdiff.primitives.elementwise import add, const, mul, neg, sign, sub
from funcdiff.primitives.scipy_cards import scipy_elementwise, static_order_check


def _half(x, value):
    return mul(const(x, 0.5), value)


def _unscaled_part(x, scaled, out):
    """The derivative of f(x) e^{-|x|} from that of its scaled neighbours: the
    neighbours' half sum minus sign(x) times the value itself."""
    return sub(scaled, mul(sign(x), out))


def _fixed(name, scipy_name, partial, **kw):
    return scipy_elementwise(name, lambda s, x: getattr(s, scipy_name)(x), ("x",),
                             (partial,), **kw)


def _ordered(name, scipy_name, partial, *, integer=False, **kw):
    return scipy_elementwise(name, lambda s, x, *, order: getattr(s, scipy_name)(order, x),
                             ("x",), (partial,),
                             check_params=static_order_check(name, integer=integer), **kw)


# --- J: the Bessel functions of the first kind -------------------------------------------

bessel_j0_p = _fixed("bessel_j0", "j0", lambda x, out: neg(bessel_j1(x)))
bessel_j0 = make_op(bessel_j0_p, "Elementwise Bessel function of the first kind of order 0 "
                                 "(scipy.special.j0).")
bessel_j1_p = _fixed("bessel_j1", "j1",
                     lambda x, out: _half(x, sub(bessel_j0(x), bessel_jv(x, order=2.0))))
bessel_j1 = make_op(bessel_j1_p, "Elementwise Bessel function of the first kind of order 1 "
                                 "(scipy.special.j1).")
bessel_j1_p.traits |= {traits.ZERO_PRESERVING}
bessel_jv_p = _ordered("bessel_jv", "jv", lambda x, out, *, order: _half(
    x, sub(bessel_jv(x, order=order - 1), bessel_jv(x, order=order + 1))))
bessel_jv = make_op(bessel_jv_p, "Elementwise Bessel function of the first kind of a static "
                                 "real order (scipy.special.jv): bessel_jv(x, order=v).")

# --- Y: the Bessel functions of the second kind (infinite at 0) ---------------------------

bessel_y0_p = _fixed("bessel_y0", "y0", lambda x, out: neg(bessel_y1(x)), singular=True)
bessel_y0 = make_op(bessel_y0_p, "Elementwise Bessel function of the second kind of order 0 "
                                 "(scipy.special.y0).")
bessel_y1_p = _fixed("bessel_y1", "y1",
                     lambda x, out: _half(x, sub(bessel_y0(x), bessel_yn(x, order=2))),
                     singular=True)
bessel_y1 = make_op(bessel_y1_p, "Elementwise Bessel function of the second kind of order 1 "
                                 "(scipy.special.y1).")
bessel_yn_p = _ordered("bessel_yn", "yn", lambda x, out, *, order: _half(
    x, sub(bessel_yn(x, order=order - 1), bessel_yn(x, order=order + 1))),
    integer=True, singular=True)
bessel_yn = make_op(bessel_yn_p, "Elementwise Bessel function of the second kind of a static "
                                 "int order (scipy.special.yn): bessel_yn(x, order=n).")
bessel_yv_p = _ordered("bessel_yv", "yv", lambda x, out, *, order: _half(
    x, sub(bessel_yv(x, order=order - 1), bessel_yv(x, order=order + 1))), singular=True)
bessel_yv = make_op(bessel_yv_p, "Elementwise Bessel function of the second kind of a static "
                                 "real order (scipy.special.yv): bessel_yv(x, order=v).")

# --- I: the modified Bessel functions of the first kind, and e^{-|x|} I ----------------------

bessel_iv_p = _ordered("bessel_iv", "iv", lambda x, out, *, order: _half(
    x, add(bessel_iv(x, order=order - 1), bessel_iv(x, order=order + 1))))
bessel_iv = make_op(bessel_iv_p, "Elementwise modified Bessel function of the first kind of a "
                                 "static real order (scipy.special.iv).")
bessel_ive_p = _ordered("bessel_ive", "ive", lambda x, out, *, order: _unscaled_part(
    x, _half(x, add(bessel_ive(x, order=order - 1), bessel_ive(x, order=order + 1))), out))
bessel_ive = make_op(bessel_ive_p, "Elementwise iv(v, x) * exp(-|x|) of a static real order "
                                   "(scipy.special.ive).")
bessel_i0e_p = _fixed("bessel_i0e", "i0e",
                      lambda x, out: _unscaled_part(x, bessel_i1e(x), out))
bessel_i0e = make_op(bessel_i0e_p, "Elementwise i0(x) * exp(-|x|) (scipy.special.i0e).")
bessel_i1e_p = _fixed("bessel_i1e", "i1e", lambda x, out: _unscaled_part(
    x, _half(x, add(bessel_i0e(x), bessel_ive(x, order=2.0))), out))
bessel_i1e = make_op(bessel_i1e_p, "Elementwise i1(x) * exp(-|x|) (scipy.special.i1e).")
bessel_i1e_p.traits |= {traits.ZERO_PRESERVING}

# --- K: the modified Bessel functions of the second kind, and e^{x} K -----------------------

bessel_kv_p = _ordered("bessel_kv", "kv", lambda x, out, *, order: neg(_half(
    x, add(bessel_kv(x, order=order - 1), bessel_kv(x, order=order + 1)))), singular=True)
bessel_kv = make_op(bessel_kv_p, "Elementwise modified Bessel function of the second kind of a "
                                 "static real order (scipy.special.kv).")
bessel_kve_p = _ordered("bessel_kve", "kve", lambda x, out, *, order: sub(out, _half(
    x, add(bessel_kve(x, order=order - 1), bessel_kve(x, order=order + 1)))), singular=True)
bessel_kve = make_op(bessel_kve_p, "Elementwise kv(v, x) * exp(x) of a static real order "
                                   "(scipy.special.kve).")
