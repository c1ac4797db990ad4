"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

Binary primitives broadcast like numpy but require operands of one dtype;
``funcdiff.numpy`` promotes (and casts integers to float for float-only
functions) before binding. Derivatives are written with the operations of this
module, so they can themselves be differentiated; their constants are 0-d
arrays of the operand's dtype, so float32 programs stay float32. Kinks follow
JAX: abs'(0) = 0, max/min ties split the tangent in halves, sqrt'(0) = inf.
The special functions (erf, lgamma, ...) are computed by ``special_math``.

The operations ``abs``, ``round``, ``pow``, ``max`` and ``min`` shadow Python
builtins inside this module on purpose (they are the JAX lax names).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, Zero, bind, get_aval, tangent_aval
from funcdiff.errors import DifferentiationError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.interpreters.transpose import UndefinedPrimal, is_undefined
from funcdiff.primitives import structural
from funcdiff.primitives import special_math
from funcdiff.primitives.cards import (binary_elementwise, broadcast_shapes, deflinear,
                                       elementwise_batch, elementwise_cost, make_op, nbytes,
                                       same_dtype, unary_elementwise)


def _unbroadcast_ct(ct, x):
    shape = x.aval.shape
    return ct if get_aval(ct).shape == shape else structural.unbroadcast(ct, shape)


def _const(x, value):
    """``value`` as a numpy scalar of ``x``'s dtype (a Python float would be float64)."""
    return get_aval(x).dtype.type(value)


# Complex values are intermediates only (funcdiff.dtypes): arithmetic and exp/log accept
# them, float-only functions (comparisons of order, special functions, ...) do not.
_FLOAT, _NUMERIC, _INTEGRAL, _ANY = "f", "iuf", "biu", "biuf"
_INEXACT, _ARITHMETIC = "fc", "iufc"
_KIND_TEXT = {
    _FLOAT: ("floating", "Convert integers first with convert_element_type(x, "
             "new_dtype=np.dtype('float64')); funcdiff.numpy does this for you."),
    _INEXACT: ("floating or complex", "Convert integers first with convert_element_type(x, "
               "new_dtype=np.dtype('float64')); funcdiff.numpy does this for you."),
    _NUMERIC: ("integer or floating", "Convert booleans first with convert_element_type."),
    _ARITHMETIC: ("integer, floating or complex",
                  "Convert booleans first with convert_element_type."),
    _INTEGRAL: ("boolean or integer", "Compare floats with ne(x, 0) first to get booleans."),
}


def _accepts(prim: Primitive, kinds: str) -> Primitive:
    """Wrap ``prim``'s abstract_eval with a check of its operands' dtype kinds."""
    if kinds == _ANY:
        return prim
    inner = prim.abstract_eval
    what, fix = _KIND_TEXT[kinds]

    def abstract_eval(*avals, **params):
        for aval in avals:
            if aval.dtype.kind not in kinds:
                raise DTypeError(
                    f"the primitive {prim.name} needs {what} operands, but got "
                    f"{', '.join(a.str_short() for a in avals)}. {fix}")
        return inner(*avals, **params)
    prim.abstract_eval = abstract_eval
    return prim


def _unary(name, impl, deriv=None, *, kinds=_FLOAT, flops=1, nondifferentiable=False,
           singular=False):
    prim = unary_elementwise(name, impl, deriv, nondifferentiable=nondifferentiable,
                             flops=flops, singular=singular)
    return _accepts(prim, kinds)


def _binary(name, impl, partials=None, *, kinds=_ANY, flops=1, nondifferentiable=False,
            result_dtype=None, singular=False):
    prim = binary_elementwise(name, impl, partials, nondifferentiable=nondifferentiable,
                              result_dtype=result_dtype, flops=flops, singular=singular)
    return _accepts(prim, kinds)


def _unary_batch(prim):
    return lambda vals, dims, **params: (bind(prim, vals[0], **params), dims[0])


# --- arithmetic --------------------------------------------------------------
# add, sub and mul run as Python operators: on arrays they are the numpy ufuncs,
# and on numpy scalars they skip the ufunc machinery (about 8x faster on 0-d
# values). Operands are always numpy values here: funcdiff.numpy converts Python
# scalars before binding. The jit compiler still emits the ufuncs (with out=).

neg_p = _unary("neg", np.negative, kinds=_ARITHMETIC)
neg = make_op(neg_p, "Elementwise negation.")
deflinear(neg_p, lambda ct, x: [neg(ct)])

add_p = binary_elementwise("add", operator.add)
add = make_op(add_p, "Elementwise sum with numpy broadcasting.")


def _add_transpose(ct, x, y):
    # type() rather than is_undefined: the eager tape runs this once per addition
    return [_unbroadcast_ct(ct, x) if type(x) is UndefinedPrimal else None,
            _unbroadcast_ct(ct, y) if type(y) is UndefinedPrimal else None]


def _add_jvp(primals, tangents):
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
add_p.jvp = _add_jvp
add_p.transpose = _add_transpose
add_p.vjp_factor = lambda i, out, x, y: None  # both partials are 1

sub_p = _binary("sub", operator.sub, kinds=_ARITHMETIC)
sub = make_op(sub_p, "Elementwise difference with numpy broadcasting.")


def _sub_jvp(primals, tangents):
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


def _sub_transpose(ct, x, y):
    return [_unbroadcast_ct(ct, x) if type(x) is UndefinedPrimal else None,
            _unbroadcast_ct(neg(ct), y) if type(y) is UndefinedPrimal else None]


sub_p.linear = True
sub_p.jvp = _sub_jvp
sub_p.transpose = _sub_transpose
sub_p.vjp_factor = lambda i, out, x, y: _const(out, -1.0) if i else None

mul_p = binary_elementwise("mul", operator.mul,
                           (lambda x, y, out: y, lambda x, y, out: x))
mul = make_op(mul_p, "Elementwise product with numpy broadcasting.")


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise DifferentiationError(
            "transpose of mul reached a product of two tangents, which is not linear; "
            "this is a bug in a jvp rule, please report it.")
    if is_undefined(x):
        return [_unbroadcast_ct(mul(ct, y), x), None]
    return [None, _unbroadcast_ct(mul(x, ct), y)]


mul_p.transpose = _mul_transpose


# safe_mul is mul where 0 * anything is 0, even 0 * inf. Derivatives that can be
# infinite (sqrt at 0, log at 0) scale tangents with it, so a zero tangent or
# cotangent, e.g. from the unselected branch of where(x > 0, sqrt(x), 0), stays
# zero instead of becoming NaN. The check costs one pass only when the product
# is not finite.
def _safe_mul_impl(x, y):
    with np.errstate(invalid="ignore"):
        out = np.multiply(x, y)
    if not np.isfinite(out).all():
        out = np.where((np.asarray(x) == 0) | (np.asarray(y) == 0), np.zeros((), out.dtype), out)
    return out


def _safe_mul_transpose(ct, x, y):
    if is_undefined(x):
        return [_unbroadcast_ct(safe_mul(ct, y), x), None]
    return [None, _unbroadcast_ct(safe_mul(x, ct), y)]


safe_mul_p = binary_elementwise("safe_mul", _safe_mul_impl,
                                (lambda x, y, out: y, lambda x, y, out: x), singular=True)
safe_mul_p.transpose = _safe_mul_transpose
safe_mul = make_op(safe_mul_p, "Elementwise product in which 0 times anything, even inf, is 0.")


def _div_impl(x, y):
    x = np.asarray(x)
    if x.dtype.kind in "fc":
        return np.divide(x, y)
    q = np.floor_divide(x, y)  # integers round toward zero, as in C and JAX
    return q + ((q < 0) & (q * y != x))


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise DifferentiationError(
            "transpose of div reached a tangent in the denominator, which is not linear; "
            "this is a bug in a jvp rule, please report it.")
    return [_unbroadcast_ct(div(ct, y), x), None]


div_p = _binary("div", _div_impl, (lambda x, y, out: div(_const(y, 1), y),
                                   lambda x, y, out: neg(div(out, y))),
                kinds=_ARITHMETIC, flops=4, singular=True)
div_p.transpose = _div_transpose
div = make_op(div_p, "Elementwise quotient; integers round toward zero (C, not numpy, "
                     "semantics).")

rem_p = _binary("rem", np.fmod, (lambda x, y, out: _const(x, 1),
                                 lambda x, y, out: neg(round(div(sub(x, out), y)))),
                kinds=_NUMERIC, flops=4)
rem = make_op(rem_p, "Elementwise C-style remainder x - trunc(x / y) * y (numpy.fmod); "
                     "its sign follows x.")


def _pow_d_base(x, y, out):
    # y * x**(y-1); at x == y == 0 the base is replaced by 1 so the result is 0, not
    # 0 * inf. (Guarding on y == 0 alone, as JAX does, would zero d2/dxdy at y == 0.)
    at_origin = and_(eq(x, _const(x, 0)), eq(y, _const(y, 0)))
    return mul(y, pow(select(at_origin, _const(x, 1), x), sub(y, _const(y, 1))))


def _pow_d_exponent(x, y, out):
    # log(x) * x**y, with log(1) = 0 standing in at x == 0 so no inf/NaN is formed
    safe_x = select(eq(x, _const(x, 0)), _const(x, 1), x)
    return mul(log(safe_x), out)


pow_p = _binary("pow", np.power, (_pow_d_base, _pow_d_exponent), kinds=_FLOAT, flops=20, singular=True)
pow = make_op(pow_p, "Elementwise x ** y for floating x and y (see integer_pow).")


def _balanced_eq(x, z, y):
    """1 where x alone attains z, 1/2 where x and y both do, else 0 (JAX's max/min rule)."""
    return select(eq(x, z), select(eq(y, z), _const(z, 0.5), _const(z, 1)), _const(z, 0))


max_p = _binary("max", np.maximum, (lambda x, y, out: _balanced_eq(x, out, y),
                                    lambda x, y, out: _balanced_eq(y, out, x)))
max = make_op(max_p, "Elementwise maximum (NaN propagates); ties split the derivative.")
min_p = _binary("min", np.minimum, (lambda x, y, out: _balanced_eq(x, out, y),
                                    lambda x, y, out: _balanced_eq(y, out, x)))
min = make_op(min_p, "Elementwise minimum (NaN propagates); ties split the derivative.")


def _atan2_denominator(x, y):
    return add(mul(x, x), mul(y, y))


atan2_p = _binary("atan2", np.arctan2,
                  (lambda x, y, out: div(y, _atan2_denominator(x, y)),
                   lambda x, y, out: neg(div(x, _atan2_denominator(x, y)))),
                  kinds=_FLOAT, flops=20)
atan2 = make_op(atan2_p, "Elementwise four-quadrant arctangent of x / y.")

# --- comparisons and logic (boolean results, no derivative) ---------------------

eq_p = _binary("eq", np.equal, nondifferentiable=True, result_dtype=np.bool_)
eq = make_op(eq_p, "Elementwise x == y.")
ne_p = _binary("ne", np.not_equal, nondifferentiable=True, result_dtype=np.bool_)
ne = make_op(ne_p, "Elementwise x != y.")
lt_p = _binary("lt", np.less, nondifferentiable=True, result_dtype=np.bool_)
lt = make_op(lt_p, "Elementwise x < y.")
le_p = _binary("le", np.less_equal, nondifferentiable=True, result_dtype=np.bool_)
le = make_op(le_p, "Elementwise x <= y.")
gt_p = _binary("gt", np.greater, nondifferentiable=True, result_dtype=np.bool_)
gt = make_op(gt_p, "Elementwise x > y.")
ge_p = _binary("ge", np.greater_equal, nondifferentiable=True, result_dtype=np.bool_)
ge = make_op(ge_p, "Elementwise x >= y.")

and_p = _binary("and", np.bitwise_and, nondifferentiable=True, kinds=_INTEGRAL)
and_ = make_op(and_p, "Elementwise logical (bool) or bitwise (integer) and.")
or_p = _binary("or", np.bitwise_or, nondifferentiable=True, kinds=_INTEGRAL)
or_ = make_op(or_p, "Elementwise logical (bool) or bitwise (integer) or.")
xor_p = _binary("xor", np.bitwise_xor, nondifferentiable=True, kinds=_INTEGRAL)
xor = make_op(xor_p, "Elementwise logical (bool) or bitwise (integer) exclusive or.")
not_p = _unary("not", np.invert, nondifferentiable=True, kinds=_INTEGRAL)
not_ = make_op(not_p, "Elementwise logical (bool) or bitwise (integer) not.")

is_finite_p = _unary("is_finite", np.isfinite, nondifferentiable=True, kinds=_ANY)
is_finite_p.abstract_eval = lambda x: ShapedArray(x.shape, np.dtype(np.bool_))
is_finite = make_op(is_finite_p, "Elementwise test for neither inf nor NaN (bool result).")

# --- select -----------------------------------------------------------------------

select_p = Primitive("select")
select_p.impl = np.where


def _select_abstract_eval(pred, on_true, on_false):
    if pred.dtype != np.bool_:
        raise DTypeError(
            f"the primitive select needs a boolean predicate, but got {pred.str_short()}. "
            "Compare first, e.g. ne(x, 0).")
    dtype = same_dtype("select", on_true, on_false)
    return ShapedArray(broadcast_shapes("select", pred.shape, on_true.shape,
                                        on_false.shape), dtype)


def _select_jvp(primals, tangents):
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


def _select_transpose(ct, pred, on_true, on_false):
    # select, not a multiply by the mask: the unselected side gets exact zeros even
    # where ct is inf or NaN.
    zero = np.zeros((), get_aval(ct).dtype)
    return [None,
            _unbroadcast_ct(select(pred, ct, zero), on_true) if is_undefined(on_true) else None,
            _unbroadcast_ct(select(pred, zero, ct), on_false) if is_undefined(on_false) else None]


def _select_cost(pred, on_true, on_false):
    shape = broadcast_shapes("select", pred.shape, on_true.shape, on_false.shape)
    out = nbytes(ShapedArray(shape, on_true.dtype))
    return {"flops": out // on_true.dtype.itemsize,
            "bytes": nbytes(pred) + nbytes(on_true) + nbytes(on_false) + out}


select_p.abstract_eval = _select_abstract_eval
select_p.jvp = _select_jvp
select_p.transpose = _select_transpose
select_p.linear = True  # in on_true and on_false; pred is never differentiated
select_p.batch = elementwise_batch(select_p)
select_p.cost = _select_cost
select = make_op(select_p, "Elementwise pred ? on_true : on_false, broadcasting all three.")

# --- convert_element_type ---------------------------------------------------------

convert_element_type_p = Primitive("convert_element_type")


def _convert_impl(x, *, new_dtype):
    x = np.asarray(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":  # numpy would drop the imaginary part
        _convert_abstract_eval(get_aval(x), new_dtype=new_dtype)
    return x.astype(new_dtype, copy=False)


convert_element_type_p.impl = _convert_impl


def _convert_abstract_eval(x, *, new_dtype):
    if not isinstance(new_dtype, np.dtype):
        raise InvalidArgumentError(
            f"convert_element_type needs new_dtype as a numpy.dtype, got {new_dtype!r}; "
            "pass np.dtype(...).")
    new_dtype = dtypes.check_dtype(new_dtype, "convert_element_type's result",
                                   allow_complex=True)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        raise DTypeError(
            f"convert_element_type cannot cast the complex {x.str_short()} to {new_dtype}: "
            "that would drop the imaginary part silently. Take fnp.real(z) (or fnp.abs(z)) "
            "explicitly.")
    return ShapedArray(x.shape, new_dtype)


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if dtypes.is_inexact(new_dtype) and dtypes.is_inexact(get_aval(x).dtype):
        return out, convert_element_type_p.bind(t, new_dtype=new_dtype)
    return out, Zero(tangent_aval(get_aval(out)))  # to integer/bool: zero tangent


def _convert_transpose(ct, x, *, new_dtype):
    if dtypes.is_complex(new_dtype) and not dtypes.is_complex(x.aval.dtype):
        # real -> complex embeds R in C; its transpose keeps the real part
        from funcdiff.primitives import complex_ops
        ct = complex_ops.real(ct)
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype)]


def _convert_cost(x, *, new_dtype):
    return {"flops": x.size, "bytes": nbytes(x) + x.size * new_dtype.itemsize}


convert_element_type_p.abstract_eval = _convert_abstract_eval
convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.transpose = _convert_transpose  # reached only float -> float
convert_element_type_p.linear = True
convert_element_type_p.batch = _unary_batch(convert_element_type_p)
convert_element_type_p.cost = _convert_cost


def convert_element_type(x, new_dtype):
    """Cast ``x`` to ``new_dtype`` (numpy ``astype`` semantics).

    Float -> float, float -> complex and complex -> complex casts carry a
    tangent (the transpose of float -> complex keeps the real part); casts to
    or from integers and booleans have a zero derivative; complex -> real is an
    error (use ``real``). Returns ``x`` itself when nothing changes.

    >>> convert_element_type(np.arange(3), np.float32)
    array([0., 1., 2.], dtype=float32)
    """
    new_dtype = dtypes.check_dtype(new_dtype, "convert_element_type's new_dtype",
                                   allow_complex=True)
    if type(x) not in (int, float, bool) and get_aval(x).dtype == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


# --- iota -----------------------------------------------------------------------------

iota_p = Primitive("iota")


def _iota_impl(*, dtype, shape, dimension):
    ramp = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(ramp.reshape([-1 if i == dimension else 1
                                         for i in range(len(shape))]), shape)


def _iota_abstract_eval(*, dtype, shape, dimension):
    if not (isinstance(shape, tuple) and all(type(s) is int and s >= 0 for s in shape)):
        raise ShapeError(f"iota needs shape as a tuple of non-negative ints, got {shape!r}")
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"iota got dimension={dimension} for the rank-{len(shape)} shape "
                         f"{shape}; it must be in [0, {len(shape)}).")
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iuf":
        raise DTypeError(f"iota needs an integer or floating numpy.dtype, got {dtype!r}")
    return ShapedArray(shape, dtype)


iota_p.impl = _iota_impl
iota_p.abstract_eval = _iota_abstract_eval
iota_p.nondifferentiable = True
# iota has no operands, so vmap never sees a batched one; the rule only exists so
# that every primitive fills every slot.
iota_p.batch = lambda vals, dims, **params: (iota_p.bind(**params), None)
iota_p.cost = lambda **p: {"flops": 0, "bytes": nbytes(_iota_abstract_eval(**p))}


def iota(dtype, shape, dimension=0):
    """An array of ``shape`` whose entries count 0, 1, ... along ``dimension``.

    >>> iota(np.int64, (2, 3), dimension=1)
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    params = dict(dtype=np.dtype(dtype), shape=tuple(int(s) for s in shape),
                  dimension=int(dimension))
    _iota_abstract_eval(**params)  # eager binds skip abstract_eval; iota is never hot
    return iota_p.bind(**params)


# --- unary math ------------------------------------------------------------------------

sign_p = _unary("sign", np.sign, nondifferentiable=True, kinds=_NUMERIC)
sign = make_op(sign_p, "Elementwise sign: -1, 0 or 1 (NaN for NaN).")
floor_p = _unary("floor", np.floor, nondifferentiable=True)
floor = make_op(floor_p, "Elementwise floor of a float array.")
ceil_p = _unary("ceil", np.ceil, nondifferentiable=True)
ceil = make_op(ceil_p, "Elementwise ceiling of a float array.")
round_p = _unary("round", np.round, nondifferentiable=True)
round = make_op(round_p, "Elementwise rounding to the nearest integer, halves to even.")
abs_p = _unary("abs", np.abs, lambda x, y: sign(x), kinds=_NUMERIC)
abs = make_op(abs_p, "Elementwise absolute value; its derivative at 0 is 0.")

exp_p = _unary("exp", np.exp, lambda x, y: y, kinds=_INEXACT, flops=10)
exp = make_op(exp_p, "Elementwise e ** x.")
exp2_p = _unary("exp2", np.exp2, lambda x, y: mul(y, _const(y, math.log(2))), flops=10)
exp2 = make_op(exp2_p, "Elementwise 2 ** x.")
log_p = _unary("log", np.log, lambda x, y: div(_const(x, 1), x), kinds=_INEXACT, flops=10,
                singular=True)
log = make_op(log_p, "Elementwise natural logarithm.")
log1p_p = _unary("log1p", np.log1p, lambda x, y: div(_const(x, 1), add(x, _const(x, 1))),
                 flops=10, singular=True)
log1p = make_op(log1p_p, "Elementwise log(1 + x), accurate for small x.")
expm1_p = _unary("expm1", np.expm1, lambda x, y: add(y, _const(y, 1)), flops=10)
expm1 = make_op(expm1_p, "Elementwise exp(x) - 1, accurate for small x.")
sqrt_p = _unary("sqrt", np.sqrt, lambda x, y: div(_const(y, 0.5), y), flops=4, singular=True)
sqrt = make_op(sqrt_p, "Elementwise square root.")
rsqrt_p = _unary("rsqrt", lambda x: 1 / np.sqrt(x),
                 lambda x, y: mul(_const(y, -0.5), div(y, x)), flops=5, singular=True)
rsqrt = make_op(rsqrt_p, "Elementwise 1 / sqrt(x).")
cbrt_p = _unary("cbrt", np.cbrt, lambda x, y: mul(_const(y, 1 / 3), integer_pow(y, y=-2)),
                flops=10, singular=True)
cbrt = make_op(cbrt_p, "Elementwise real cube root.")

sin_p = _unary("sin", np.sin, lambda x, y: cos(x), flops=10)
sin = make_op(sin_p, "Elementwise sine.")
cos_p = _unary("cos", np.cos, lambda x, y: neg(sin(x)), flops=10)
cos = make_op(cos_p, "Elementwise cosine.")
tan_p = _unary("tan", np.tan, lambda x, y: add(_const(y, 1), mul(y, y)), flops=10)
tan = make_op(tan_p, "Elementwise tangent.")


def _one_minus_square(x):
    return sub(_const(x, 1), mul(x, x))


asin_p = _unary("asin", np.arcsin, lambda x, y: rsqrt(_one_minus_square(x)), flops=10, singular=True)
asin = make_op(asin_p, "Elementwise inverse sine.")
acos_p = _unary("acos", np.arccos, lambda x, y: neg(rsqrt(_one_minus_square(x))), flops=10, singular=True)
acos = make_op(acos_p, "Elementwise inverse cosine.")
atan_p = _unary("atan", np.arctan,
                lambda x, y: div(_const(x, 1), add(_const(x, 1), mul(x, x))), flops=10)
atan = make_op(atan_p, "Elementwise inverse tangent.")
sinh_p = _unary("sinh", np.sinh, lambda x, y: cosh(x), flops=10)
sinh = make_op(sinh_p, "Elementwise hyperbolic sine.")
cosh_p = _unary("cosh", np.cosh, lambda x, y: sinh(x), flops=10)
cosh = make_op(cosh_p, "Elementwise hyperbolic cosine.")
tanh_p = _unary("tanh", np.tanh, lambda x, y: _one_minus_square(y), flops=10)
tanh = make_op(tanh_p, "Elementwise hyperbolic tangent.")
asinh_p = _unary("asinh", np.arcsinh,
                 lambda x, y: rsqrt(add(mul(x, x), _const(x, 1))), flops=10)
asinh = make_op(asinh_p, "Elementwise inverse hyperbolic sine.")
acosh_p = _unary("acosh", np.arccosh,
                 lambda x, y: rsqrt(mul(sub(x, _const(x, 1)), add(x, _const(x, 1)))),
                 flops=10, singular=True)
acosh = make_op(acosh_p, "Elementwise inverse hyperbolic cosine.")
atanh_p = _unary("atanh", np.arctanh, lambda x, y: div(
    _const(x, 1), mul(sub(_const(x, 1), x), add(_const(x, 1), x))), flops=10, singular=True)
atanh = make_op(atanh_p, "Elementwise inverse hyperbolic tangent.")


def _logistic_impl(x):
    e = np.exp(-np.abs(x))  # never overflows; both branches are then exact
    return np.where(x >= 0, 1, e) / (1 + e)


logistic_p = _unary("logistic", _logistic_impl, lambda x, y: mul(y, sub(_const(y, 1), y)),
                    flops=12)
logistic = make_op(logistic_p, "Elementwise sigmoid 1 / (1 + exp(-x)), stable for all x.")

# --- special functions -------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _gaussian(x, scale):
    return mul(_const(x, scale), exp(neg(mul(x, x))))


erf_p = _unary("erf", special_math.erf, lambda x, y: _gaussian(x, _TWO_OVER_SQRT_PI),
               flops=30)
erf = make_op(erf_p, "Elementwise error function.")
erfc_p = _unary("erfc", special_math.erfc, lambda x, y: _gaussian(x, -_TWO_OVER_SQRT_PI),
                flops=30)
erfc = make_op(erfc_p, "Elementwise complementary error function 1 - erf(x).")
erf_inv_p = _unary("erf_inv", special_math.erf_inv, lambda x, y: mul(
    _const(y, math.sqrt(math.pi) / 2), exp(mul(y, y))), flops=150, singular=True)
erf_inv = make_op(erf_inv_p, "Elementwise inverse error function on (-1, 1).")
lgamma_p = _unary("lgamma", special_math.lgamma, lambda x, y: digamma(x), flops=100, singular=True)
lgamma = make_op(lgamma_p, "Elementwise log |Gamma(x)|.")
digamma_p = _unary("digamma", special_math.digamma, lambda x, y: polygamma(x, order=1),
                   flops=60, singular=True)
digamma = make_op(digamma_p, "Elementwise digamma function d/dx lgamma(x).")

polygamma_p = Primitive("polygamma")
polygamma_p.impl = lambda x, *, order: special_math.polygamma(order, x)


def _polygamma_abstract_eval(x, *, order):
    if type(order) is not int or order < 0:
        raise InvalidArgumentError(
            f"the primitive polygamma needs a static int order >= 0, got {order!r}")
    return x


def _polygamma_derivative(x, order):
    return polygamma(x, order=order + 1)


def _polygamma_jvp(primals, tangents, *, order):
    (x,), (t,) = primals, tangents
    return polygamma(x, order=order), safe_mul(t, _polygamma_derivative(x, order))


def _polygamma_vjp(needed, out, x, *, order):
    d = _polygamma_derivative(x, order)
    return lambda ct: (safe_mul(ct, d),)


polygamma_p.abstract_eval = _polygamma_abstract_eval
polygamma_p = _accepts(polygamma_p, _FLOAT)
polygamma_p.jvp = _polygamma_jvp
polygamma_p.vjp = _polygamma_vjp
polygamma_p.batch = _unary_batch(polygamma_p)
polygamma_p.cost = lambda x, *, order: elementwise_cost(200)(x)
polygamma = make_op(polygamma_p, "Elementwise polygamma(order, x): the order-th derivative "
                                 "of digamma; order is static (polygamma(x, order=1)).")

# --- integer_pow ---------------------------------------------------------------------------

integer_pow_p = Primitive("integer_pow")
integer_pow_p.impl = lambda x, *, y: np.power(x, y)


def _integer_pow_abstract_eval(x, *, y):
    if type(y) is not int:
        raise InvalidArgumentError(
            f"the primitive integer_pow needs a static Python int exponent y, got {y!r}; "
            "use pow for array or float exponents.")
    if y < 0 and x.dtype.kind not in "fc":
        raise InvalidArgumentError(
            f"integer_pow cannot raise the integer array {x.str_short()} to the negative "
            f"power {y}; convert it to float first.")
    return x


def _integer_pow_derivative(x, y):
    """``(scale, d)``: the derivative ``d`` of ``x ** y`` (None for y = 0, where it
    is zero; 1 for y = 1) and the product that applies it: safe_mul for
    negative powers, whose derivative is infinite at 0. The jvp and the tape's
    vjp both apply it."""
    if y == 0:
        return mul, None
    if y == 1:
        return mul, 1
    power = x if y == 2 else integer_pow(x, y=y - 1)
    return (safe_mul if y < 0 else mul), mul(_const(x, y), power)


def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow(x, y=y)
    scale, d = _integer_pow_derivative(x, y)
    if d is None:
        return out, Zero(get_aval(out))
    return out, t if type(d) is int else scale(t, d)


def _integer_pow_vjp(needed, out, x, *, y):
    scale, d = _integer_pow_derivative(x, y)
    if d is None:
        return lambda ct: (None,)
    if type(d) is int:
        return lambda ct: (ct,)
    return lambda ct: (scale(ct, d),)


def _integer_pow_cost(x, *, y):
    multiplies = 2 * (y if y >= 0 else -y).bit_length()  # repeated squaring
    return elementwise_cost(multiplies)(x)


integer_pow_p.abstract_eval = _integer_pow_abstract_eval
integer_pow_p = _accepts(integer_pow_p, _ARITHMETIC)
integer_pow_p.jvp = _integer_pow_jvp
integer_pow_p.vjp = _integer_pow_vjp
integer_pow_p.batch = _unary_batch(integer_pow_p)
integer_pow_p.cost = _integer_pow_cost
integer_pow = make_op(integer_pow_p, "Elementwise x ** y for a static Python int y.")
