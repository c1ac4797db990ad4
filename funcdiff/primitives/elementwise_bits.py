"""Elementwise primitives on the representation of numbers: integer shifts, gcd and
lcm, and the parts of floating-point values (frexp, ldexp, nextafter, spacing).

Every impl is the numpy ufunc of the same meaning, so values are numpy's bit
for bit, edge cases included: a shift by a count outside [0, bits) gives 0
(-1 for a negative value shifted right); shift_right is arithmetic on signed
and logical on unsigned integers, as numpy.right_shift; gcd and lcm are
non-negative (except where the absolute value of the most negative integer
wraps, as in numpy); frexp returns 0, inf and NaN as their own mantissas with
exponent 0. The integer primitives take integer operands only (funcdiff.numpy
casts booleans to int8 first, as numpy does) and have no derivative.

Derivatives of the float ones: frexp returns ``(mantissa, exponent)`` with an
int32 exponent; the mantissa ``x * 2**-exponent`` has the derivative
``2**-exponent`` (a power of two, exact; inf where it overflows, below the
normal range, and 1 at 0, inf and NaN, where the exponent is 0). Its inverse
``ldexp(x, e) = x * 2**e`` (an int32 or int64 ``e``) is linear in ``x``: its
tangent and cotangent are scaled by ``ldexp`` itself, exactly. spacing is
piecewise constant, so its derivative is zero, like floor's. nextafter moves
its first operand by one unit in the last place: it is neither constant nor
the identity, and, as in JAX (whose nextafter has no differentiation rule),
differentiating it raises an error. Re-exported by ``elementwise``.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, ShapedArray, Zero, get_aval, tangent_aval
from funcdiff.errors import DifferentiationError, DTypeError
from funcdiff.passes import traits as passes
from funcdiff.primitives.cards import (broadcast_shapes, checked_impl, deflinear,
                                       elementwise_cost, make_op, nbytes)
from funcdiff.primitives.elementwise_cards import (elementwise_batch,
                                                   multi_output_elementwise_batch)
from funcdiff.primitives.elementwise_arithmetic import neg, safe_mul
from funcdiff.primitives.elementwise_common import (FLOAT, INTEGER, accepts, binary, const,
                                                    unary, unbroadcast_ct)

_INT32, _INT64 = np.dtype(np.int32), np.dtype(np.int64)


def _integer_binary(name, impl, flops=1):
    prim = binary(name, impl, nondifferentiable=True, kinds=INTEGER, flops=flops)
    prim.impl = checked_impl(impl, prim)  # numpy's loop error becomes the DTypeError
    return prim


# --- integers: shifts, gcd, lcm --------------------------------------------------

shift_left_p = _integer_binary("shift_left", np.left_shift)
shift_left = make_op(shift_left_p, "Elementwise x << y for integers (numpy.left_shift): "
                                   "0 for counts outside [0, bits).")
shift_right_p = _integer_binary("shift_right", np.right_shift)
shift_right = make_op(shift_right_p, "Elementwise x >> y for integers (numpy.right_shift): "
                                     "arithmetic for signed, logical for unsigned types.")
gcd_p = _integer_binary("gcd", np.gcd, flops=40)
gcd = make_op(gcd_p, "Elementwise greatest common divisor of integers (numpy.gcd); "
                     "gcd(0, 0) = 0.")
lcm_p = _integer_binary("lcm", np.lcm, flops=45)
lcm = make_op(lcm_p, "Elementwise least common multiple of integers (numpy.lcm); 0 if "
                     "either is 0.")
gcd_p.traits |= {passes.COMMUTATIVE}
lcm_p.traits |= {passes.COMMUTATIVE}

# --- floating-point representation ------------------------------------------------

spacing_p = unary("spacing", np.spacing, nondifferentiable=True, flops=2)
spacing = make_op(spacing_p, "Elementwise signed distance from x to the next float away from zero "
                             "(numpy.spacing).")


def _nextafter_jvp(primals, tangents):
    raise DifferentiationError(
        "nextafter has no derivative (as in JAX): nextafter(x1, x2) is x1 moved by one unit "
        "in the last place toward x2, which is neither constant in x1 nor the identity. "
        "Pass fd.stop_gradient(x1) and fd.stop_gradient(x2) if a zero derivative is meant, "
        "or use x1 itself where the derivative of the identity is.")


nextafter_p = binary("nextafter", np.nextafter, kinds=FLOAT, flops=2)
nextafter_p.jvp = _nextafter_jvp
nextafter = make_op(nextafter_p, "Elementwise next float after x1 in the direction of x2 "
                                 "(numpy.nextafter); not differentiable.")

ldexp_p = Primitive("ldexp")


def _ldexp_abstract_eval(x, e):
    shape = broadcast_shapes("ldexp", x.shape, e.shape)
    if x.dtype.kind != "f" or e.dtype not in (_INT32, _INT64):
        raise DTypeError(
            f"the primitive ldexp needs a floating x and an int32 or int64 exponent e, but "
            f"got {x.dtype.name} and {e.dtype.name}. funcdiff.numpy.ldexp converts them; at "
            "the primitive level use convert_element_type.")
    return ShapedArray(shape, x.dtype)


def _ldexp_transpose(ct, x, e):
    return [unbroadcast_ct(ldexp(ct, e), x), None]


ldexp_p.impl = checked_impl(np.ldexp, _ldexp_abstract_eval)
ldexp_p.abstract_eval = _ldexp_abstract_eval
deflinear(ldexp_p, _ldexp_transpose, num_linear=1)  # linear in x; e is an integer
ldexp_p.batch = elementwise_batch(ldexp_p)
ldexp_p.cost = elementwise_cost(1)
ldexp = make_op(ldexp_p, "Elementwise x * 2**e for an integer e, rounded once (numpy.ldexp).")

frexp_p = Primitive("frexp", multiple_results=True)


def _frexp_impl(x):
    return list(np.frexp(x))


def _frexp_abstract_eval(x):
    return [x, ShapedArray(x.shape, _INT32)]


def _mantissa_derivative(x, exponent):
    """``2**-exponent`` in ``x``'s dtype, exactly (ldexp of 1). Its operands carry no
    tangent, so the higher derivatives of the mantissa are zero."""
    return ldexp(const(x, 1), neg(exponent))


def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    mantissa, exponent = frexp(x)
    # safe_mul: the derivative overflows to inf below the normal range
    t_mantissa = safe_mul(t, _mantissa_derivative(x, exponent))
    return [mantissa, exponent], [t_mantissa, Zero(tangent_aval(get_aval(exponent)))]


def _frexp_cost(x):
    return {"flops": 2 * x.size, "bytes": 2 * nbytes(x) + x.size * _INT32.itemsize}


frexp_p.impl = _frexp_impl
frexp_p.abstract_eval = _frexp_abstract_eval
frexp_p = accepts(frexp_p, FLOAT)
frexp_p.jvp = _frexp_jvp
frexp_p.batch = multi_output_elementwise_batch(frexp_p)
frexp_p.cost = _frexp_cost
frexp = make_op(frexp_p, "Elementwise (mantissa, exponent) with x = mantissa * 2**exponent, "
                         "0.5 <= |mantissa| < 1 and an int32 exponent (numpy.frexp).")
