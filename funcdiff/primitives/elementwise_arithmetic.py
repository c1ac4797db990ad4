"""Elementwise arithmetic: negation, sum, difference, products, quotient, remainder,
maximum and minimum, and rounding.

Binary primitives broadcast like numpy but require operands of one dtype
(``elementwise_common``). add, sub and neg are linear, mul is linear in each
operand; ``safe_mul`` is the product in which 0 times anything, even inf, is
0, used to scale tangents by derivatives that can be infinite. div rounds
integers toward zero and rem follows numpy.fmod (C semantics). Derivatives are
written with funcdiff operations, so they can themselves be differentiated;
max/min ties split the tangent in halves, as in JAX. floor, ceil and round
have no derivative. Re-exported by ``elementwise``.

The operations ``round``, ``max`` and ``min`` shadow Python builtins inside
this module on purpose (they are the JAX lax names).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from funcdiff.backends import as_array
from funcdiff import roles
from funcdiff.compiler.lowerings import lower_safe_mul, lower_ufunc
from funcdiff.compiler.scalar import scalar_operator
from funcdiff.core import Zero, get_aval
from funcdiff.errors import NonlinearTransposeError
from funcdiff.interpreters import batching
from funcdiff.interpreters.tape_nodes import SumRule
from funcdiff.interpreters.transpose import UndefinedPrimal, is_undefined
from funcdiff.ir import Literal
from funcdiff.passes import traits as passes
from funcdiff.passes.idioms import SHIFT_COTANGENT
from funcdiff.passes.rewriter import scalar_literal
from funcdiff.passes.rules import (ANY, SAME_AS_RESULT, defined_by, fill, idiom, on_zeros,
                                   rewrite, zeros)
from funcdiff.passes.zero_propagation import ZERO, ZERO_OR_FINITE
from funcdiff.primitives import structural
from funcdiff.primitives.cards import deflinear, make_op
from funcdiff.primitives.elementwise_cards import binary_elementwise
from funcdiff.primitives.elementwise_common import (ARITHMETIC, NUMERIC, binary, const,
                                                    unary, unbroadcast_ct)
from funcdiff.primitives.elementwise_logic import eq, select

# --- arithmetic --------------------------------------------------------------
# add, sub and mul run as Python operators: on arrays they are the numpy ufuncs,
# and on numpy scalars they skip the ufunc machinery (about 8x faster on 0-d
# values). Operands are always numpy values here: funcdiff.numpy converts Python
# scalars before binding. The jit compiler still emits the ufuncs (with out=:
# their lowerings), and Python-float programs the operators (scalar lowerings).

neg_p = unary("neg", np.negative, kinds=ARITHMETIC)
neg = make_op(neg_p, "Elementwise negation.")
neg_p.scalar_lowering = scalar_operator("(-{0})")
deflinear(neg_p, lambda ct, x: [neg(ct)])
neg_p.vjp_factor = lambda i, out, x: const(out, -1.0)  # the tape's factor node
roles.NEG.fill(neg_p)
neg_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING}


def _negated_literal_factor(rw, eqn, product):
    x, c = product.invars
    if type(c) is not Literal or c.aval.dtype.kind not in "fc":
        return None
    return rw.add(product.primitive, x, scalar_literal(-np.asarray(c.val), c.aval.dtype))


neg_p.rewrites = (
    rewrite("neg(neg x) -> x", (defined_by(neg_p),), lambda rw, eqn, n: n.invars[0]),
    rewrite("neg(x * c) -> x * -c and neg(x / c) -> x / -c for a literal c (exact)",
            (defined_by(roles.MUL, roles.DIV, once=True),), _negated_literal_factor),
)

add_p = binary_elementwise("add", operator.add)
add = make_op(add_p, "Elementwise sum with numpy broadcasting.")
roles.ADD.fill(add_p)
add_p.lowering = lower_ufunc(np.add)
add_p.scalar_lowering = scalar_operator("({0} + {1})")


def add_transpose(ct, x, y):
    # type() rather than is_undefined: the eager tape runs this once per addition
    return [unbroadcast_ct(ct, x) if type(x) is UndefinedPrimal else None,
            unbroadcast_ct(ct, y) if type(y) is UndefinedPrimal else None]


def add_jvp(primals, tangents):
    out = add(*primals)
    shape = get_aval(out).shape
    tx, ty = tangents
    if type(tx) is Zero:
        t = ty
    elif type(ty) is Zero:
        t = tx
    else:
        return out, add(tx, ty)
    return out, t if get_aval(t).shape == shape else structural.broadcast_to(t, shape)


add_p.linear = True
add_p.jvp = add_jvp
add_p.transpose = add_transpose
add_p.vjp_factor = lambda i, out, x, y: None  # both partials are 1
add_p.vjp = SumRule(negate=False)  # the tape's SumNode, for broadcasting and two operands
add_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
add_p.rewrites = (
    rewrite("x + 0 -> x", (SAME_AS_RESULT, fill(0)), lambda rw, eqn, x, z: x),
    rewrite("0 + y -> y", (fill(0), SAME_AS_RESULT), lambda rw, eqn, z, y: y),
    rewrite("a + neg(b) -> a - b", (ANY, defined_by(neg_p)),
            lambda rw, eqn, a, n: rw.add(sub_p, a, n.invars[0])),
    rewrite("neg(a) + b -> b - a", (defined_by(neg_p), ANY),
            lambda rw, eqn, n, b: rw.add(sub_p, b, n.invars[0])),
    on_zeros("0 + 0 -> 0", (ZERO, ZERO), zeros),
    on_zeros("x + 0 -> x (broadcast)", (ANY, ZERO),
             lambda rw, eqn, x, z: rw.broadcast(x, eqn.outvars[0].aval)),
    on_zeros("0 + y -> y (broadcast)", (ZERO, ANY),
             lambda rw, eqn, z, y: rw.broadcast(y, eqn.outvars[0].aval)),
    idiom("a + t -> a for t the cotangent of a softmax's shift", (SAME_AS_RESULT, SHIFT_COTANGENT),
          lambda rw, eqn, a, t: a, kinds="f"),
    idiom("t + b -> b for t the cotangent of a softmax's shift", (SHIFT_COTANGENT, SAME_AS_RESULT),
          lambda rw, eqn, t, b: b, kinds="f"),
)

sub_p = binary("sub", operator.sub, kinds=ARITHMETIC)
sub = make_op(sub_p, "Elementwise difference with numpy broadcasting.")


def sub_jvp(primals, tangents):
    out = sub(*primals)
    shape = get_aval(out).shape
    tx, ty = tangents
    if type(ty) is Zero:
        t = tx
    elif type(tx) is Zero:
        t = neg(ty)
    else:
        return out, sub(tx, ty)
    return out, t if get_aval(t).shape == shape else structural.broadcast_to(t, shape)


def sub_transpose(ct, x, y):
    return [unbroadcast_ct(ct, x) if type(x) is UndefinedPrimal else None,
            unbroadcast_ct(neg(ct), y) if type(y) is UndefinedPrimal else None]


sub_p.linear = True
sub_p.jvp = sub_jvp
sub_p.transpose = sub_transpose
sub_p.vjp_factor = lambda i, out, x, y: const(out, -1.0) if i else None
sub_p.vjp = SumRule(negate=True)
sub_p.lowering = lower_ufunc(np.subtract)
sub_p.scalar_lowering = scalar_operator("({0} - {1})")
roles.SUB.fill(sub_p)
sub_p.traits |= {passes.BROADCASTING}


def _negated_broadcast(rw, eqn, z, y):
    y = rw.broadcast(y, eqn.outvars[0].aval)
    return None if y is None else rw.add(neg_p, y)


sub_p.rewrites = (
    rewrite("x - 0 -> x", (SAME_AS_RESULT, fill(0)), lambda rw, eqn, x, z: x),
    rewrite("0 - y -> neg y", (fill(0), SAME_AS_RESULT), lambda rw, eqn, z, y: rw.add(neg_p, y)),
    rewrite("a - neg(b) -> a + b", (ANY, defined_by(neg_p)),
            lambda rw, eqn, a, n: rw.add(add_p, a, n.invars[0])),
    on_zeros("0 - 0 -> 0", (ZERO, ZERO), zeros),
    on_zeros("x - 0 -> x (broadcast)", (ANY, ZERO),
             lambda rw, eqn, x, z: rw.broadcast(x, eqn.outvars[0].aval)),
    on_zeros("0 - y -> neg y (broadcast)", (ZERO, ANY), _negated_broadcast),
    idiom("a - t -> a for t the cotangent of a softmax's shift", (SAME_AS_RESULT, SHIFT_COTANGENT),
          lambda rw, eqn, a, t: a, kinds="f"),
)

mul_p = binary_elementwise("mul", operator.mul,
                           (lambda x, y, out: y, lambda x, y, out: x))
mul = make_op(mul_p, "Elementwise product with numpy broadcasting.")
roles.MUL.fill(mul_p)
mul_p.lowering = lower_ufunc(np.multiply)
mul_p.scalar_lowering = scalar_operator("({0} * {1})")
mul_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING, passes.NEG_COMMUTING, passes.PRODUCT}
_UNIT_FACTORS = (  # mul's and safe_mul's
    rewrite("x * 1 -> x", (SAME_AS_RESULT, fill(1)), lambda rw, eqn, x, one: x),
    rewrite("1 * y -> y", (fill(1), SAME_AS_RESULT), lambda rw, eqn, one, y: y),
    rewrite("x * -1 -> neg x", (SAME_AS_RESULT, fill(-1)),
            lambda rw, eqn, x, minus_one: rw.add(neg_p, x), kinds="if"),
    rewrite("-1 * y -> neg y", (fill(-1), SAME_AS_RESULT),
            lambda rw, eqn, minus_one, y: rw.add(neg_p, y), kinds="if"),
)
mul_p.rewrites = _UNIT_FACTORS + (
    on_zeros("x * 0 -> 0 for x certainly finite (inf * 0 is nan)",
             (ZERO_OR_FINITE, ZERO_OR_FINITE), zeros),
)


def mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise NonlinearTransposeError(
            "transpose of mul reached a product of two tangents, which is not linear")
    if is_undefined(x):
        return [unbroadcast_ct(mul(ct, y), x), None]
    return [None, unbroadcast_ct(mul(x, ct), y)]


mul_p.transpose = mul_transpose
mul_p.vjp_factor = lambda i, out, x, y: x if i else y  # the partials, with no call each


# safe_mul is mul where 0 * anything is 0, even 0 * inf. Derivatives that can be
# infinite (sqrt at 0, log at 0) scale tangents with it, so a zero tangent or
# cotangent, e.g. from the unselected branch of where(x > 0, sqrt(x), 0), stays
# zero instead of becoming NaN. The check costs one pass only when the product
# is not finite.
def safe_mul_impl(x, y):
    with np.errstate(invalid="ignore"):
        out = np.multiply(x, y)
    if not np.isfinite(out).all():
        out = np.where((as_array(x) == 0) | (as_array(y) == 0), np.zeros((), out.dtype), out)
    return out


def safe_mul_transpose(ct, x, y):
    if is_undefined(x):
        return [unbroadcast_ct(safe_mul(ct, y), x), None]
    return [None, unbroadcast_ct(safe_mul(x, ct), y)]


safe_mul_p = binary_elementwise("safe_mul", safe_mul_impl,
                                (lambda x, y, out: y, lambda x, y, out: x), singular=True)
safe_mul_p.transpose = safe_mul_transpose
safe_mul = make_op(safe_mul_p, "Elementwise product in which 0 times anything, even inf, is 0.")
roles.SAFE_MUL.fill(safe_mul_p)
safe_mul_p.lowering = lower_safe_mul
safe_mul_p.scalar_lowering = scalar_operator(  # 0 * anything is 0, even 0 * inf
    "({t} if ({t} := {0} * {1}) - {t} == 0.0 or ({0} != 0.0 and {1} != 0.0) else 0.0)",
    float_only=False)
safe_mul_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING, passes.NEG_COMMUTING,
                      passes.PRODUCT}
safe_mul_p.rewrites = _UNIT_FACTORS + (
    on_zeros("x * 0 -> 0, even for x = inf", (ANY, ANY), zeros),
)


def div_impl(x, y):
    x = as_array(x)
    if x.dtype.kind in "fc":
        return np.divide(x, y)
    q = np.floor_divide(x, y)  # integers round toward zero, as in C and JAX
    return q + ((q < 0) & (q * y != x))


def div_transpose(ct, x, y):
    if is_undefined(y):
        raise NonlinearTransposeError(
            "transpose of div reached a tangent in the denominator, which is not linear")
    return [unbroadcast_ct(div(ct, y), x), None]


div_p = binary("div", div_impl, (lambda x, y, out: div(const(y, 1), y),
                                   lambda x, y, out: neg(div(out, y))),
                kinds=ARITHMETIC, flops=4, singular=True)
div_p.transpose = div_transpose
div = make_op(div_p, "Elementwise quotient; integers round toward zero (C, not numpy, "
                     "semantics).")
div_p.lowering = lower_ufunc(np.true_divide, kinds="fc")  # (integers: the impl)
div_p.scalar_lowering = scalar_operator("({0} / {1})")
roles.DIV.fill(div_p)
div_p.traits |= {passes.BROADCASTING}
div_p.rewrites = (
    rewrite("x / 1 -> x", (SAME_AS_RESULT, fill(1)), lambda rw, eqn, x, one: x),
    rewrite("x / -1 -> neg x", (SAME_AS_RESULT, fill(-1)),
            lambda rw, eqn, x, minus_one: rw.add(neg_p, x), kinds="if"),
    rewrite("neg(a) / y -> neg(a / y) (exact)", (defined_by(neg_p, once=True), ANY),
            lambda rw, eqn, n, y: rw.add(neg_p, rw.add(div_p, n.invars[0], y)), kinds="fc"),
)

rem_p = binary("rem", np.fmod, (lambda x, y, out: const(x, 1),
                                 lambda x, y, out: neg(round(div(sub(x, out), y)))),
                kinds=NUMERIC, flops=4, scalar=math.fmod)
rem = make_op(rem_p, "Elementwise C-style remainder x - trunc(x / y) * y (numpy.fmod); "
                     "its sign follows x.")
rem_p.traits |= {passes.BROADCASTING}


def balanced_eq(x, z, y):
    """1 where x alone attains z, 1/2 where x and y both do, else 0 (JAX's max/min rule)."""
    return select(eq(x, z), select(eq(y, z), const(z, 0.5), const(z, 1)), const(z, 0))


max_p = binary("max", np.maximum, (lambda x, y, out: balanced_eq(x, out, y),
                                    lambda x, y, out: balanced_eq(y, out, x)))
max = make_op(max_p, "Elementwise maximum (NaN propagates); ties split the derivative.")
max_p.scalar_lowering = scalar_operator("({0} if {0} > {1} or {0} != {0} else {1})")
max_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
min_p = binary("min", np.minimum, (lambda x, y, out: balanced_eq(x, out, y),
                                    lambda x, y, out: balanced_eq(y, out, x)))
min = make_op(min_p, "Elementwise minimum (NaN propagates); ties split the derivative.")
min_p.scalar_lowering = scalar_operator("({0} if {0} < {1} or {0} != {0} else {1})")
min_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}

# --- rounding ------------------------------------------------------------------

floor_p = unary("floor", np.floor, nondifferentiable=True)
floor = make_op(floor_p, "Elementwise floor of a float array.")
ceil_p = unary("ceil", np.ceil, nondifferentiable=True)
ceil = make_op(ceil_p, "Elementwise ceiling of a float array.")
round_p = unary("round", np.round, nondifferentiable=True)
round = make_op(round_p, "Elementwise rounding to the nearest integer, halves to even.")
floor_p.traits |= {passes.ZERO_PRESERVING}
ceil_p.traits |= {passes.ZERO_PRESERVING}
round_p.traits |= {passes.ZERO_PRESERVING}
