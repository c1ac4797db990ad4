"""Elementwise comparisons, logic and select: the primitives of boolean values.

The comparisons (eq, ne, lt, le, gt, ge) and is_finite return booleans; the
logical operations (and, or, xor, not) are logical on booleans and bitwise on
integers. These have no derivative. ``select`` chooses elementwise between two
values by a boolean predicate, broadcasting all three; it is linear in the
chosen values, and the unselected side gets exact zeros even where the
cotangent is inf or NaN. Re-exported by ``elementwise``.
"""

from __future__ import annotations

import numpy as np

from funcdiff import roles
from funcdiff.compiler import fusion
from funcdiff.compiler.scalar import scalar_operator
from funcdiff.core import Primitive, ShapedArray, Zero, get_aval
from funcdiff.errors import DTypeError
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.passes import traits as passes
from funcdiff.passes.rules import ANY, on_zeros, zeros
from funcdiff.passes.zero_propagation import ZERO
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes, make_op, nbytes, same_dtype
from funcdiff.primitives.elementwise_cards import elementwise_batch
from funcdiff.primitives.elementwise_common import (_ANY, INTEGRAL, binary, unary,
                                                    unbroadcast_ct)

# --- comparisons and logic (boolean results, no derivative) ---------------------

eq_p = binary("eq", np.equal, nondifferentiable=True, result_dtype=np.bool_)
eq = make_op(eq_p, "Elementwise x == y.")
ne_p = binary("ne", np.not_equal, nondifferentiable=True, result_dtype=np.bool_)
ne = make_op(ne_p, "Elementwise x != y.")
lt_p = binary("lt", np.less, nondifferentiable=True, result_dtype=np.bool_)
lt = make_op(lt_p, "Elementwise x < y.")
le_p = binary("le", np.less_equal, nondifferentiable=True, result_dtype=np.bool_)
le = make_op(le_p, "Elementwise x <= y.")
gt_p = binary("gt", np.greater, nondifferentiable=True, result_dtype=np.bool_)
gt = make_op(gt_p, "Elementwise x > y.")
ge_p = binary("ge", np.greater_equal, nondifferentiable=True, result_dtype=np.bool_)
ge = make_op(ge_p, "Elementwise x >= y.")
# Python-float forms (of floats or bools) and the role the compiler's fusion reads
eq_p.scalar_lowering = scalar_operator("({0} == {1})", float_only=False)
ne_p.scalar_lowering = scalar_operator("({0} != {1})", float_only=False)
lt_p.scalar_lowering = scalar_operator("({0} < {1})", float_only=False)
le_p.scalar_lowering = scalar_operator("({0} <= {1})", float_only=False)
gt_p.scalar_lowering = scalar_operator("({0} > {1})", float_only=False)
ge_p.scalar_lowering = scalar_operator("({0} >= {1})", float_only=False)
roles.LESS_THAN.fill(lt_p)
roles.EQ.fill(eq_p)
eq_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
ne_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
lt_p.traits |= {passes.BROADCASTING}
le_p.traits |= {passes.BROADCASTING}
gt_p.traits |= {passes.BROADCASTING}
ge_p.traits |= {passes.BROADCASTING}

and_p = binary("and", np.bitwise_and, nondifferentiable=True, kinds=INTEGRAL)
and_ = make_op(and_p, "Elementwise logical (bool) or bitwise (integer) and.")
or_p = binary("or", np.bitwise_or, nondifferentiable=True, kinds=INTEGRAL)
or_ = make_op(or_p, "Elementwise logical (bool) or bitwise (integer) or.")
xor_p = binary("xor", np.bitwise_xor, nondifferentiable=True, kinds=INTEGRAL)
xor = make_op(xor_p, "Elementwise logical (bool) or bitwise (integer) exclusive or.")
and_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
and_p.rewrites = (on_zeros("x & 0 -> 0", (ANY, ANY), zeros),)
or_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
xor_p.traits |= {passes.COMMUTATIVE, passes.BROADCASTING}
not_p = unary("not", np.invert, nondifferentiable=True, kinds=INTEGRAL)
not_ = make_op(not_p, "Elementwise logical (bool) or bitwise (integer) not.")

is_finite_p = unary("is_finite", np.isfinite, nondifferentiable=True, kinds=_ANY)
is_finite_p.abstract_eval = lambda x: ShapedArray(x.shape, np.dtype(np.bool_))
is_finite = make_op(is_finite_p, "Elementwise test for neither inf nor NaN (bool result).")
is_finite_p.traits |= {passes.ALWAYS_FINITE}

# --- select -----------------------------------------------------------------------

select_p = Primitive("select")
select_p.impl = np.where


def select_abstract_eval(pred, on_true, on_false):
    if pred.dtype != np.bool_:
        raise DTypeError(
            f"the primitive select needs a boolean predicate, but got {pred.str_short()}. "
            "Compare first, e.g. ne(x, 0).")
    dtype = same_dtype("select", on_true, on_false)
    return ShapedArray(broadcast_shapes("select", pred.shape, on_true.shape,
                                        on_false.shape), dtype)


def select_jvp(primals, tangents):
    pred, on_true, on_false = primals
    _, t_true, t_false = tangents
    out = select(pred, on_true, on_false)
    out_aval = get_aval(out)
    if type(t_true) is Zero and type(t_false) is Zero:
        return out, Zero(out_aval)
    zero = np.zeros((), out_aval.dtype)  # broadcasts: no zero array is materialised
    t = select(pred, zero if type(t_true) is Zero else t_true,
               zero if type(t_false) is Zero else t_false)
    return out, structural.broadcast_to(t, out_aval.shape)


def select_transpose(ct, pred, on_true, on_false):
    # select, not a multiply by the mask: the unselected side gets exact zeros even
    # where ct is inf or NaN.
    zero = np.zeros((), get_aval(ct).dtype)
    return [None,
            unbroadcast_ct(select(pred, ct, zero), on_true) if is_undefined(on_true) else None,
            unbroadcast_ct(select(pred, zero, ct), on_false) if is_undefined(on_false) else None]


def select_cost(pred, on_true, on_false):
    shape = broadcast_shapes("select", pred.shape, on_true.shape, on_false.shape)
    out = nbytes(ShapedArray(shape, on_true.dtype))
    return {"flops": out // on_true.dtype.itemsize,
            "bytes": nbytes(pred) + nbytes(on_true) + nbytes(on_false) + out}


select_p.abstract_eval = select_abstract_eval
select_p.jvp = select_jvp
select_p.transpose = select_transpose
select_p.linear = True  # in on_true and on_false; pred is never differentiated
select_p.batch = elementwise_batch(select_p)
select_p.cost = select_cost
select_p.traits |= {passes.BROADCASTING}
select_p.rewrites = (
    on_zeros("select(p, 0, 0) -> 0", (ANY, ZERO, ZERO), zeros),
)
select = make_op(select_p, "Elementwise pred ? on_true : on_false, broadcasting all three.")
select_p.scalar_lowering = scalar_operator("({1} if {0} else {2})", float_only=False)
roles.SELECT.fill(select_p)
