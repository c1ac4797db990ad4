"""The gamma-function family and the error functions with scipy.special's values.

The core primitives ``lgamma``, ``digamma``, ``polygamma``, ``erf``, ``erfc`` and
``erf_inv`` compute their values in numpy (``special_math``), because
funcdiff.numpy needs them without scipy. funcdiff.scipy.special and the
distributions bind these cards instead: the values are scipy's own ufuncs (bit
for bit, and several times faster than the numpy kernels), the derivatives the
same formulas: gammaln' = digamma, polygamma(n)' = polygamma(n + 1), erf' =
2/sqrt(pi) e^{-x^2} (holomorphic for complex x), erfc' = -erf', erfinv' =
sqrt(pi)/2 e^{y^2}.
"""

from __future__ import annotations

import math

from funcdiff.bridge import NamespaceArray
from funcdiff.passes import traits as passes
from funcdiff.primitives.cards import make_op
from funcdiff.primitives.elementwise import const, exp, mul, neg
from funcdiff.primitives.elementwise_common import INEXACT
from funcdiff.primitives.scipy_cards import scipy_elementwise, static_order_check

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _gaussian(x, scale):
    return mul(const(x, scale), exp(neg(mul(x, x))))


gammaln_p = scipy_elementwise("scipy_gammaln", lambda s, x: s.gammaln(x), ("x",),
                              (lambda x, out: digamma(x),), flops=40, singular=True)
gammaln = make_op(gammaln_p, "Elementwise log |Gamma(x)| (scipy.special.gammaln).")
digamma_p = scipy_elementwise("scipy_digamma", lambda s, x: s.digamma(x), ("x",),
                              (lambda x, out: polygamma(x, order=1),), flops=40, singular=True)
digamma = make_op(digamma_p, "Elementwise digamma function (scipy.special.digamma).")
polygamma_p = scipy_elementwise(
    "scipy_polygamma", lambda s, x, *, order: (
        s.polygamma(order, x) if type(x) is not NamespaceArray  # scipy's converts with asarray
        else x.call_library("polygamma", order, x)), ("x",),
    (lambda x, out, order: polygamma(x, order=order + 1),),
    check_params=static_order_check("scipy_polygamma", integer=True), flops=200, singular=True)
polygamma = make_op(polygamma_p, "Elementwise polygamma(order, x), order a static int >= 1 "
                                 "(scipy.special.polygamma).")

erf_p = scipy_elementwise("scipy_erf", lambda s, x: s.erf(x), ("x",),
                          (lambda x, out: _gaussian(x, _TWO_OVER_SQRT_PI),), flops=30,
                          kinds=INEXACT)
erf_p.traits |= {passes.ZERO_PRESERVING}
erf = make_op(erf_p, "Elementwise error function (scipy.special.erf; complex too).")
erfc_p = scipy_elementwise("scipy_erfc", lambda s, x: s.erfc(x), ("x",),
                           (lambda x, out: _gaussian(x, -_TWO_OVER_SQRT_PI),), flops=30,
                           kinds=INEXACT)
erfc = make_op(erfc_p, "Elementwise complementary error function (scipy.special.erfc).")
erfinv_p = scipy_elementwise("scipy_erfinv", lambda s, y: s.erfinv(y), ("y",),
                             (lambda y, out: mul(const(y, math.sqrt(math.pi) / 2),
                                                 exp(mul(out, out))),),
                             flops=40, singular=True)
erfinv_p.traits |= {passes.ZERO_PRESERVING}
erfinv = make_op(erfinv_p, "Elementwise inverse error function (scipy.special.erfinv).")
