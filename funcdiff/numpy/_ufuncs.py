"""Elementwise functions, array creation and reductions of funcdiff.numpy.

Each function is an explicit composition of primitives with numpy 2's
semantics: arguments are promoted to one dtype (``funcdiff.dtypes``; Python
scalars are weak), integer arguments of float-only functions become the
smallest float that holds them (int8 -> float16, int64 -> float64, as numpy's
loop selection does), the binary primitives broadcast by themselves, and
reductions normalise ``axis`` (None, negative, tuples) and ``keepdims``.
Integer semantics follow numpy where numpy has them (``floor_divide`` and
``remainder`` floor, ``power`` of ints is exact); only floats are
differentiated. Arguments funcdiff does not support (``out=``, ``where=`` on
ufuncs, ``initial=``, object or string dtypes) raise errors naming the function.

The eager fast path matters: a call on a float numpy array checks one dtype
kind and binds, converting and promoting only when the arguments need it.
Creation functions whose result depends only on shapes and Python values
(``zeros``, ``eye``, ``arange``, ``linspace`` of constants) return numpy arrays
directly: constants need no primitive. Statistics that need an order (median,
quantile) sort with the ``sorting`` primitive; with a concrete ``q`` their
indices are settings computed with numpy, with a traced ``q`` they are traced.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, concrete_value, get_aval
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, FunctionalDiffError,
                             InvalidArgumentError, ShapeError, UnsupportedNumpyError)
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, reductions, sorting, structural
from funcdiff.primitives.cards import broadcast_shapes

_NoValue = object()  # numpy's "argument not given" (None is a meaningful value for some)
_PY_SCALARS = (bool, int, float)
_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_BOOL, _INT8, _INT64 = np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)


class ZeroWeightsError(FunctionalDiffError, ZeroDivisionError):
    """``average`` received weights that sum to zero."""


# ---------------------------------------------------------------------------
# Argument handling


def _fname(name: str) -> str:
    return f"funcdiff.numpy.{name}"


def _arg(name: str, x: Any) -> Any:
    """``x`` as an array, tracer, numpy scalar or (weak) Python scalar."""
    if isinstance(x, (np.ndarray, Tracer, np.generic)):
        if x.dtype.kind not in "biuf":
            dtypes.check_dtype(x.dtype, f"the input of {_fname(name)}")
        return x
    if type(x) in _PY_SCALARS:
        return x
    return _util.asarray(x, _fname(name))


def _array(name: str, x: Any) -> Any:
    """Like ``_arg``, but Python scalars become 0-d numpy arrays (strong dtypes)."""
    x = _arg(name, x)
    return np.asarray(x) if type(x) in _PY_SCALARS else x


def _dtype_arg(name: str, dtype: Any, what: str = "dtype=") -> np.dtype:
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{_fname(name)} got {what}{dtype!r}, which is not a dtype") from None
    return dtypes.check_dtype(dtype, f"the {what} argument of {_fname(name)}")


def _result_dtype(name: str, *args: Any) -> np.dtype:
    try:
        return dtypes.result_type(*args)
    except DTypeError as e:
        raise DTypeError(f"{_fname(name)}: {e}") from None


@functools.lru_cache(maxsize=None)
def _float_of(dtype: np.dtype) -> np.dtype:
    """The float dtype numpy computes float-only ufuncs in (int8 -> float16, int64 -> float64)."""
    return dtype if dtype.kind == "f" else np.promote_types(dtype, _F16)


def _cast(x: Any, dtype: np.dtype) -> Any:
    if type(x) in _PY_SCALARS:
        return np.asarray(x, dtype)  # raises OverflowError for out-of-range ints, like numpy
    if x.dtype == dtype:
        return x
    return ew.convert_element_type(x, dtype)


@functools.lru_cache(maxsize=1024)  # bounded: some values come from users (nan_to_num)
def _const(value: Any, dtype: np.dtype) -> np.ndarray:
    c = np.asarray(value, dtype)
    c.flags.writeable = False
    return c


def _c(x: Any, value: Any) -> np.ndarray:
    """``value`` as a 0-d constant of ``x``'s dtype (float32 code stays float32)."""
    return _const(value, x.dtype)


def _shape(x: Any) -> tuple[int, ...]:
    return get_aval(x).shape


def _float_arg(name: str, x: Any) -> Any:
    """``x`` converted for a float-only function."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        kind = dtype.kind
        if kind == "f":
            return x
        if kind in "biu":
            return ew.convert_element_type(x, _float_of(dtype))
    x = _arg(name, x)
    return _cast(x, _float_of(_result_dtype(name, x)))


def _num_arg(name: str, x: Any) -> Any:
    """``x`` for a dtype-preserving unary function (Python scalars get numpy's default dtype)."""
    if type(x) is np.ndarray and x.dtype.kind in "biuf":
        return x
    return _array(name, x)


# The Python scalar types that an array of each dtype kind absorbs without changing
# its dtype (numpy 2's weak scalars): a float array takes floats, ints and bools, ...
_ABSORBS = {"f": (float, int, bool), "i": (int, bool), "u": (int, bool), "b": (bool,)}


def _same_or_weak(x: Any, y: Any, kinds: str) -> tuple[Any, Any] | None:
    """The common fast cases of promotion: one dtype already, or an array of a dtype
    in ``kinds`` with a Python scalar it absorbs. None if promotion has work to do."""
    dx, dy = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if dx is not None:
        if dy is not None:
            if dx == dy and dx.kind in kinds:
                return x, y
        elif dx.kind in kinds and type(y) in _ABSORBS.get(dx.kind, ()):
            return x, np.asarray(y, dx)
    elif dy is not None and dy.kind in kinds and type(x) in _ABSORBS.get(dy.kind, ()):
        return np.asarray(x, dy), y
    return None


def _promote(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """``x`` and ``y`` converted to their numpy-2 common dtype."""
    fast = _same_or_weak(x, y, "biuf")
    if fast is not None:
        return fast
    x, y = _arg(name, x), _arg(name, y)
    dtype = _result_dtype(name, x, y)
    return _cast(x, dtype), _cast(y, dtype)


def _promote_float(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """``x`` and ``y`` in the float dtype of a float-only binary function."""
    fast = _same_or_weak(x, y, "f")
    if fast is not None:
        return fast
    x, y = _arg(name, x), _arg(name, y)
    dtype = _float_of(_result_dtype(name, x, y))
    return _cast(x, dtype), _cast(y, dtype)


def _promote_divide(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """Like ``_promote_float``, but integers divide in float64 (numpy's divide loops)."""
    fast = _same_or_weak(x, y, "f")
    if fast is not None:
        return fast
    x, y = _arg(name, x), _arg(name, y)
    dtype = _result_dtype(name, x, y)
    if dtype.kind != "f":
        dtype = _F64
    return _cast(x, dtype), _cast(y, dtype)


def _promote_int_bool(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """Promote; booleans become int8, as numpy's integer loops take them."""
    x, y = _promote(name, x, y)
    if x.dtype == _BOOL:
        return _cast(x, _INT8), _cast(y, _INT8)
    return x, y


def _promote_compare(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    try:
        return _promote(name, x, y)
    except OverflowError:
        # numpy 2 compares a Python int outside the array's integer range exactly.
        x, y = [np.asarray(v) if type(v) is int else v for v in (x, y)]
        return _promote(name, x, y)


def _bool_arg(name: str, x: Any) -> Any:
    x = _array(name, x)
    return x if x.dtype == _BOOL else ew.ne(x, _c(x, 0))


def _check_broadcast(name: str, *args: Any) -> tuple[int, ...]:
    """The broadcast shape of ``args``; ShapeError naming ``name`` and the shapes if none."""
    return broadcast_shapes(_fname(name), *[_shape(a) for a in args])


def _full(x_or_shape: Any, value: Any, dtype: np.dtype) -> Any:
    """A constant of ``x``'s shape: staged as one broadcast for tracers, numpy otherwise."""
    if isinstance(x_or_shape, tuple):
        return np.full(x_or_shape, value, dtype)
    shape = _shape(x_or_shape)
    if isinstance(x_or_shape, Tracer):
        return structural.full(shape, value, dtype)
    return np.full(shape, value, dtype)


def _reject_out(name: str, out: Any) -> None:
    if out is not None:
        raise UnsupportedNumpyError(
            f"{_fname(name)} does not support the argument out= (funcdiff arrays are "
            f"immutable and its functions are pure); call it without out= and use the "
            f"returned value.")


def _reject_where(name: str, where: Any) -> None:
    if where is not True and where is not _NoValue:
        raise UnsupportedNumpyError(
            f"{_fname(name)} does not support the argument where=; compute on all "
            f"elements and select afterwards with funcdiff.numpy.where(mask, result, other).")


def _reject_initial(name: str, initial: Any) -> None:
    if initial is not _NoValue:
        raise UnsupportedNumpyError(
            f"{_fname(name)} does not support the argument initial=; combine the result "
            f"with the initial value yourself, e.g. funcdiff.numpy.maximum(result, initial).")


def _ufunc_options(name: str, args: tuple, out: Any, where: Any, dtype: Any) -> list:
    """Validate the ufunc keywords; ``dtype=`` casts the inputs (numpy's loop dtype)."""
    _reject_out(name, out)
    _reject_where(name, where)
    if dtype is None:
        return list(args)
    dtype = _dtype_arg(name, dtype)
    return [_cast(_arg(name, a), dtype) for a in args]


def _doc(name: str, summary: str, example: str = "", nin: int = 1) -> str:
    args = "x: array_like" if nin == 1 else "x1, x2: array_like (broadcast against each other)"
    text = (f"{summary}\n\n    Like ``numpy.{name}``.\n\n    Args:\n      {args}.\n"
            f"      out, where: not supported (funcdiff functions are pure).\n"
            f"      dtype: optional dtype to compute in.\n\n"
            f"    Returns:\n      A numpy array (a tracer inside a transform).\n\n"
            f"    Raises:\n      UnsupportedNumpyError: for out= or where=.\n"
            f"      DTypeError: for dtypes funcdiff does not support.\n")
    if nin == 2:
        text += "      ShapeError: if the shapes do not broadcast.\n"
    if example:
        text += "\n" + "\n".join("    " + line for line in example.strip().splitlines()) + "\n"
    return text


def _unary_ufunc(name: str, prepare: Callable, op: Callable, summary: str,
                 example: str = "") -> Callable:
    def ufunc(x, /, out=None, *, where=True, dtype=None):
        if out is not None or where is not True or dtype is not None:
            (x,) = _ufunc_options(name, (x,), out, where, dtype)
        return op(prepare(name, x))
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = _doc(name, summary, example)
    return ufunc


def _binary_ufunc(name: str, prepare: Callable, op: Callable, summary: str,
                  example: str = "") -> Callable:
    def ufunc(x1, x2, /, out=None, *, where=True, dtype=None):
        if out is not None or where is not True or dtype is not None:
            x1, x2 = _ufunc_options(name, (x1, x2), out, where, dtype)
        a, b = prepare(name, x1, x2)
        try:
            return op(a, b)
        except ValueError:
            _check_broadcast(name, a, b)  # a ShapeError naming this function and the shapes
            raise
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = _doc(name, summary, example, nin=2)
    return ufunc


def _no_bool(name: str, x: Any) -> Any:
    if x.dtype == _BOOL:
        raise DTypeError(f"{_fname(name)} does not accept booleans (numpy neither); use "
                         f"funcdiff.numpy.logical_not or convert with astype(int) first.")
    return x


# ---------------------------------------------------------------------------
# Arithmetic

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _subtract(x, y):
    if x.dtype == _BOOL:
        _no_bool("subtract", x)
    return ew.sub(x, y)


add = _binary_ufunc("add", _promote, ew.add, "Elementwise sum ``x1 + x2``.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.add(np.array([1., 2.]), 1)
array([2., 3.])""")
subtract = _binary_ufunc("subtract", _promote, _subtract, "Elementwise difference ``x1 - x2``.")
multiply = _binary_ufunc("multiply", _promote, ew.mul, "Elementwise product ``x1 * x2``.")
divide = _binary_ufunc("divide", _promote_divide, ew.div,
                       "Elementwise true division ``x1 / x2`` (integers divide as float64).",
                       """
>>> import funcdiff.numpy as fnp
>>> fnp.divide(1, 4)
np.float64(0.25)""")
true_divide = divide


def _fmod(x, y):
    return ew.rem(x, y)


def _remainder(x, y):
    # numpy's mod has the sign of the divisor: fix C's fmod where the signs differ.
    r = ew.rem(x, y)
    zero = _c(r, 0)
    fix = ew.and_(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
    return ew.select(fix, ew.add(r, y), r)


def _floor_divide(x, y):
    zero = _c(x, 0)
    if x.dtype.kind != "f":
        # C division truncates; step down where the remainder's sign differs from y's.
        q, r = ew.div(x, y), ew.rem(x, y)
        fix = ew.and_(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
        return ew.sub(q, ew.convert_element_type(fix, x.dtype))
    # numpy's npy_divmod: exact for quotients that floor(x / y) would round wrongly.
    mod = ew.rem(x, y)
    div = ew.div(ew.sub(x, mod), y)
    fix = ew.and_(ew.ne(mod, zero), ew.ne(ew.lt(y, zero), ew.lt(mod, zero)))
    div = ew.select(fix, ew.sub(div, _c(x, 1)), div)
    floor = ew.floor(div)
    floor = ew.select(ew.gt(ew.sub(div, floor), _c(x, 0.5)), ew.add(floor, _c(x, 1)), floor)
    return ew.select(ew.eq(y, zero), ew.div(x, y), floor)


floor_divide = _binary_ufunc("floor_divide", _promote_int_bool, _floor_divide,
                             "Elementwise ``x1 // x2``: the quotient rounded toward minus "
                             "infinity.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.floor_divide(np.array([7, -7]), 2)
array([ 3, -4])""")
remainder = _binary_ufunc("remainder", _promote_int_bool, _remainder,
                          "Elementwise ``x1 % x2`` with the sign of ``x2`` (Python's modulo).",
                          """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.remainder(np.array([7., -7.]), 3)
array([1., 2.])""")
mod = remainder
fmod = _binary_ufunc("fmod", _promote_int_bool, _fmod,
                     "Elementwise C remainder of ``x1 / x2``, with the sign of ``x1``.")


def _negative(x):
    return ew.neg(_no_bool("negative", x))


def _positive(x):
    return _no_bool("positive", x)


negative = _unary_ufunc("negative", _num_arg, _negative, "Elementwise ``-x``.")
positive = _unary_ufunc("positive", _num_arg, _positive, "Elementwise ``+x`` (a no-op).")


def _int_power(x, y):
    """``x ** y`` for integer arrays by repeated squaring over the bits of ``y``."""
    if not isinstance(y, Tracer):
        if np.any(y < 0):
            raise InvalidArgumentError(
                "funcdiff.numpy.power: integers to negative integer powers are not allowed "
                "(numpy neither); convert the base to float first.")
        bits = int(np.max(y, initial=0)).bit_length()
    else:
        bits = 8 * y.dtype.itemsize - (y.dtype.kind == "i")
    one, zero = _c(x, 1), _c(y, 0)
    result = ew.select(ew.eq(x, x), one, x) if bits == 0 else None
    base = x
    for bit in range(bits):
        factor = ew.select(ew.ne(ew.and_(y, _c(y, 1 << bit)), zero), base, one)
        result = factor if result is None else ew.mul(result, factor)
        if bit + 1 < bits:
            base = ew.mul(base, base)
    return structural.broadcast_to(result, _check_broadcast("power", x, y))


def _power(name: str, x, y, dtype: np.dtype):
    if type(y) is int and dtype.kind in "iuf":
        if y < 0 and dtype.kind != "f":
            raise InvalidArgumentError(
                f"{_fname(name)}: integers to negative integer powers are not allowed "
                "(numpy neither); convert the base to float first.")
        return ew.integer_pow(_cast(x, dtype), y=y)  # np.power(x, int): the same values
    x, y = _cast(x, dtype), _cast(y, dtype)
    try:
        if dtype.kind == "f":
            return ew.pow(x, y)
        return _int_power(x, y)
    except ValueError:
        _check_broadcast(name, x, y)
        raise


def power(x1, x2, /, out=None, *, where=True, dtype=None):
    """Elementwise ``x1 ** x2``; integer powers of integers are exact.

    Like ``numpy.power``: the result has the promoted dtype of the arguments
    (booleans compute as int8), and a Python int exponent of a float array is
    differentiated as an integer power (well defined for negative bases).

    Args:
      x1, x2: array_like (broadcast against each other).
      out, where: not supported. dtype: optional dtype to compute in.

    Returns:
      The powers, as an array.

    Raises:
      InvalidArgumentError: for negative integer powers of integers.
      ShapeError: if the shapes do not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.power(np.array([2., 3.]), 2)
    array([4., 9.])
    """
    if out is not None or where is not True or dtype is not None:
        x1, x2 = _ufunc_options("power", (x1, x2), out, where, dtype)
    x1, x2 = _arg("power", x1), _arg("power", x2)
    rdtype = _result_dtype("power", x1, x2)
    return _power("power", x1, x2, _INT8 if rdtype == _BOOL else rdtype)


def float_power(x1, x2, /, out=None, *, where=True, dtype=None):
    """Elementwise ``x1 ** x2`` computed in at least float64 (like ``numpy.float_power``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.float_power(np.array([4], np.float32), 0.5)
    array([2.])
    """
    if out is not None or where is not True or dtype is not None:
        x1, x2 = _ufunc_options("float_power", (x1, x2), out, where, dtype)
    x1, x2 = _arg("float_power", x1), _arg("float_power", x2)
    rdtype = np.promote_types(_result_dtype("float_power", x1, x2), _F64)
    return _power("float_power", x1, x2, rdtype)


def _square(x):
    if x.dtype == _BOOL:
        x = _cast(x, _INT8)
    return ew.mul(x, x)


def _reciprocal(x):
    if x.dtype == _BOOL:
        x = _cast(x, _INT8)
    return ew.div(_c(x, 1), x)


square = _unary_ufunc("square", _num_arg, _square, "Elementwise ``x * x``.")
reciprocal = _unary_ufunc("reciprocal", _num_arg, _reciprocal,
                          "Elementwise ``1 / x`` (integer division for integers, as numpy).")
sqrt = _unary_ufunc("sqrt", _float_arg, ew.sqrt, "Elementwise non-negative square root.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.sqrt(np.array([4., 9.]))
array([2., 3.])""")
cbrt = _unary_ufunc("cbrt", _float_arg, ew.cbrt, "Elementwise real cube root.")

# ---------------------------------------------------------------------------
# Exponentials and logarithms


def _log2(x):
    return ew.div(ew.log(x), _c(x, _LN2))


def _log10(x):
    return ew.div(ew.log(x), _c(x, _LN10))


def _logaddexp(x, y):
    # max(x, y) + log1p(exp(-|x - y|)) never overflows; x - y is NaN only when both
    # are the same infinity (or a NaN is involved), where x + y is the answer.
    amax, delta = ew.max(x, y), ew.sub(x, y)
    out = ew.add(amax, ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return ew.select(ew.ne(delta, delta), ew.add(x, y), out)


def _logaddexp2(x, y):
    amax, delta = ew.max(x, y), ew.sub(x, y)
    tail = ew.div(ew.log1p(ew.exp2(ew.neg(ew.abs(delta)))), _c(x, _LN2))
    return ew.select(ew.ne(delta, delta), ew.add(x, y), ew.add(amax, tail))


exp = _unary_ufunc("exp", _float_arg, ew.exp, "Elementwise ``e ** x``.", """
>>> import funcdiff.numpy as fnp
>>> float(fnp.exp(0.0))
1.0""")
exp2 = _unary_ufunc("exp2", _float_arg, ew.exp2, "Elementwise ``2 ** x``.")
expm1 = _unary_ufunc("expm1", _float_arg, ew.expm1,
                     "Elementwise ``exp(x) - 1``, accurate for small ``x``.")
log = _unary_ufunc("log", _float_arg, ew.log, "Elementwise natural logarithm.")
log2 = _unary_ufunc("log2", _float_arg, _log2, "Elementwise base-2 logarithm.")
log10 = _unary_ufunc("log10", _float_arg, _log10, "Elementwise base-10 logarithm.")
log1p = _unary_ufunc("log1p", _float_arg, ew.log1p,
                     "Elementwise ``log(1 + x)``, accurate for small ``x``.")
logaddexp = _binary_ufunc("logaddexp", _promote_float, _logaddexp,
                          "Elementwise ``log(exp(x1) + exp(x2))`` without overflow.", """
>>> import funcdiff.numpy as fnp
>>> float(fnp.logaddexp(1000.0, 1000.0)) == 1000.0 + float(fnp.log(2.0))
True""")
logaddexp2 = _binary_ufunc("logaddexp2", _promote_float, _logaddexp2,
                           "Elementwise ``log2(2**x1 + 2**x2)`` without overflow.")

# ---------------------------------------------------------------------------
# Trigonometric and hyperbolic functions


def _hypot(x, y):
    # max * sqrt(1 + (min / max)**2): no overflow; inf wins over NaN as in C's hypot.
    ax, ay = ew.abs(x), ew.abs(y)
    big, small = ew.max(ax, ay), ew.min(ax, ay)
    zero, one = _c(big, 0), _c(big, 1)
    usable = ew.and_(ew.ne(big, zero), ew.is_finite(big))  # else the ratio is unused
    ratio = ew.div(small, ew.select(usable, big, one))
    out = ew.mul(big, ew.sqrt(ew.add(one, ew.mul(ratio, ratio))))
    inf = _c(big, np.inf)
    return ew.select(ew.or_(ew.eq(ax, inf), ew.eq(ay, inf)), inf, out)


def _sinc(x):
    # numpy's formula, including its stand-in 1e-20 at 0 (so sinc(0) = 1 exactly)
    y = ew.mul(_c(x, np.pi), ew.select(ew.eq(x, _c(x, 0)), _c(x, 1e-20), x))
    return ew.div(ew.sin(y), y)


def _sinc_arg(name, x):
    x = _arg(name, x)
    dtype = _result_dtype(name, x)
    return _cast(x, dtype if dtype.kind == "f" else _F64)


sin = _unary_ufunc("sin", _float_arg, ew.sin, "Elementwise sine.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.sin(np.array([0.0, np.pi / 2]))
array([0., 1.])""")
cos = _unary_ufunc("cos", _float_arg, ew.cos, "Elementwise cosine.")
tan = _unary_ufunc("tan", _float_arg, ew.tan, "Elementwise tangent.")
arcsin = _unary_ufunc("arcsin", _float_arg, ew.asin, "Elementwise inverse sine.")
arccos = _unary_ufunc("arccos", _float_arg, ew.acos, "Elementwise inverse cosine.")
arctan = _unary_ufunc("arctan", _float_arg, ew.atan, "Elementwise inverse tangent.")
sinh = _unary_ufunc("sinh", _float_arg, ew.sinh, "Elementwise hyperbolic sine.")
cosh = _unary_ufunc("cosh", _float_arg, ew.cosh, "Elementwise hyperbolic cosine.")
tanh = _unary_ufunc("tanh", _float_arg, ew.tanh, "Elementwise hyperbolic tangent.")
arcsinh = _unary_ufunc("arcsinh", _float_arg, ew.asinh, "Elementwise inverse hyperbolic sine.")
arccosh = _unary_ufunc("arccosh", _float_arg, ew.acosh,
                       "Elementwise inverse hyperbolic cosine.")
arctanh = _unary_ufunc("arctanh", _float_arg, ew.atanh,
                       "Elementwise inverse hyperbolic tangent.")
arctan2 = _binary_ufunc("arctan2", _promote_float, ew.atan2,
                        "Elementwise four-quadrant arctangent of ``x1 / x2``.")
hypot = _binary_ufunc("hypot", _promote_float, _hypot,
                      "Elementwise ``sqrt(x1**2 + x2**2)`` without overflow.", """
>>> import funcdiff.numpy as fnp
>>> float(fnp.hypot(3.0, 4.0))
5.0""")
sinc = _unary_ufunc("sinc", _sinc_arg, _sinc,
                    "Elementwise normalised sinc ``sin(pi x) / (pi x)`` (1 at 0).")
deg2rad = _unary_ufunc("deg2rad", _float_arg, lambda x: ew.mul(x, _c(x, np.pi / 180.0)),
                       "Elementwise conversion of degrees to radians.")
rad2deg = _unary_ufunc("rad2deg", _float_arg, lambda x: ew.mul(x, _c(x, 180.0 / np.pi)),
                       "Elementwise conversion of radians to degrees.")
radians = deg2rad
degrees = rad2deg

# ---------------------------------------------------------------------------
# Signs, extrema and rounding


def _abs(x):
    return x if x.dtype.kind in "bu" else ew.abs(x)


def _sign(x):
    return ew.sign(_no_bool("sign", x))


def _signbit(x):
    """True where ``x`` is negative, including -0.0 (NaN signs are not seen)."""
    zero = _c(x, 0)
    # atan2(-0.0, -1) = -pi but atan2(+0.0, -1) = +pi: the sign of zero, without 1/0
    neg_zero = ew.and_(ew.eq(x, zero), ew.lt(ew.atan2(x, _c(x, -1)), zero))
    return ew.or_(ew.lt(x, zero), neg_zero)


def _copysign(x, y):
    magnitude = ew.abs(x)
    return ew.select(_signbit(y), ew.neg(magnitude), magnitude)


def _fmax(x, y):
    if x.dtype.kind != "f":
        return ew.max(x, y)
    return ew.select(ew.ne(y, y), x, ew.select(ew.ne(x, x), y, ew.max(x, y)))


def _fmin(x, y):
    if x.dtype.kind != "f":
        return ew.min(x, y)
    return ew.select(ew.ne(y, y), x, ew.select(ew.ne(x, x), y, ew.min(x, y)))


def _heaviside(x, h0):
    zero = _c(x, 0)
    out = ew.select(ew.lt(x, zero), zero, ew.select(ew.gt(x, zero), _c(x, 1), h0))
    return ew.select(ew.ne(x, x), x, out)


abs = _unary_ufunc("abs", _num_arg, _abs, "Elementwise absolute value.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.abs(np.array([-2, 3]))
array([2, 3])""")
absolute = abs
fabs = _unary_ufunc("fabs", _float_arg, ew.abs, "Elementwise absolute value as a float.")
sign = _unary_ufunc("sign", _num_arg, _sign, "Elementwise sign: -1, 0 or 1 (NaN for NaN).")
signbit = _unary_ufunc("signbit", _float_arg, _signbit,
                       "Elementwise test for a negative sign, including -0.0.")
copysign = _binary_ufunc("copysign", _promote_float, _copysign,
                         "Elementwise magnitude of ``x1`` with the sign of ``x2``.")
maximum = _binary_ufunc("maximum", _promote, ew.max,
                        "Elementwise maximum; NaN propagates.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.maximum(np.array([1., 5.]), 3.)
array([3., 5.])""")
minimum = _binary_ufunc("minimum", _promote, ew.min, "Elementwise minimum; NaN propagates.")
fmax = _binary_ufunc("fmax", _promote, _fmax, "Elementwise maximum ignoring NaN.")
fmin = _binary_ufunc("fmin", _promote, _fmin, "Elementwise minimum ignoring NaN.")
heaviside = _binary_ufunc("heaviside", _promote_float, _heaviside,
                          "Elementwise step function: 0 below 0, ``x2`` at 0, 1 above.")


def clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue):
    """Limit the values of ``a`` to ``[a_min, a_max]`` (like ``numpy.clip``).

    Args:
      a: array_like.
      a_min, a_max (or min, max): bounds, broadcast against ``a``; None for no bound.
      out: not supported.

    Returns:
      ``minimum(maximum(a, a_min), a_max)`` in the promoted dtype; NaN propagates.

    Raises:
      InvalidArgumentError: if a bound is given twice. ShapeError: on shapes that do
      not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.clip(np.array([-1., 0.5, 2.]), 0, 1)
    array([0. , 0.5, 1. ])
    """
    _reject_out("clip", out)
    if min is not _NoValue:
        if a_min is not _NoValue:
            raise InvalidArgumentError("funcdiff.numpy.clip got both a_min= and min=")
        a_min = min
    if max is not _NoValue:
        if a_max is not _NoValue:
            raise InvalidArgumentError("funcdiff.numpy.clip got both a_max= and max=")
        a_max = max
    lo = None if a_min is _NoValue or a_min is None else _arg("clip", a_min)
    hi = None if a_max is _NoValue or a_max is None else _arg("clip", a_max)
    bounds = [b for b in (lo, hi) if b is not None]
    a = _arg("clip", a)
    dtype = _result_dtype("clip", a, *bounds)
    a = _cast(a, dtype)
    try:
        if lo is not None:
            a = ew.max(a, _cast(lo, dtype))
        if hi is not None:
            a = ew.min(a, _cast(hi, dtype))
    except ValueError:
        _check_broadcast("clip", a, *bounds)
        raise
    return a


def _floor(x):
    return ew.floor(x) if x.dtype.kind == "f" else x


def _ceil(x):
    return ew.ceil(x) if x.dtype.kind == "f" else x


def _trunc(x):
    if x.dtype.kind != "f":
        return x
    return ew.select(ew.lt(x, _c(x, 0)), ew.ceil(x), ew.floor(x))


floor = _unary_ufunc("floor", _num_arg, _floor, "Elementwise floor (integers unchanged).", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.floor(np.array([-1.5, 1.5]))
array([-2.,  1.])""")
ceil = _unary_ufunc("ceil", _num_arg, _ceil, "Elementwise ceiling (integers unchanged).")
trunc = _unary_ufunc("trunc", _num_arg, _trunc,
                     "Elementwise rounding toward zero (integers unchanged).")
rint = _unary_ufunc("rint", _float_arg, ew.round,
                    "Elementwise rounding to the nearest integer, halves to even.")


def fix(x, out=None):
    """Round toward zero elementwise (like ``numpy.fix``; integers unchanged).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fix(np.array([-1.7, 1.7]))
    array([-1.,  1.])
    """
    _reject_out("fix", out)
    return _trunc(_num_arg("fix", x))


def round(a, decimals=0, out=None):
    """Round to ``decimals`` decimal places, halves to even (like ``numpy.round``).

    numpy's algorithm: scale by ``10**decimals``, round to an integer, scale
    back; integers with ``decimals >= 0`` are returned unchanged.

    Args:
      a: array_like. decimals: int (negative rounds to tens, hundreds, ...).
      out: not supported.

    Returns:
      The rounded array, of ``a``'s dtype.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.round(np.array([1.25, 2.5, 15.]), 1)
    array([ 1.2,  2.5, 15. ])
    """
    _reject_out("round", out)
    a = _num_arg("round", a)
    decimals = operator.index(decimals)
    if a.dtype == _BOOL:
        a = _cast(a, _F16)  # numpy rounds booleans in float16
    kind = a.dtype.kind
    if kind != "f":
        if decimals >= 0:
            return a
        scale = _const(10.0 ** -decimals, _F64)
        scaled = ew.round(ew.div(_cast(a, _F64), scale))
        return _cast(ew.mul(scaled, scale), a.dtype)
    if decimals == 0:
        return ew.round(a)
    if decimals > 0:
        scale = _c(a, 10.0 ** decimals)
        return ew.div(ew.round(ew.mul(a, scale)), scale)
    scale = _c(a, 10.0 ** -decimals)
    return ew.mul(ew.round(ew.div(a, scale)), scale)


around = round

# ---------------------------------------------------------------------------
# Comparisons, logic and classification

equal = _binary_ufunc("equal", _promote_compare, ew.eq, "Elementwise ``x1 == x2``.")
not_equal = _binary_ufunc("not_equal", _promote_compare, ew.ne, "Elementwise ``x1 != x2``.")
less = _binary_ufunc("less", _promote_compare, ew.lt, "Elementwise ``x1 < x2``.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.less(np.array([1, 3]), 2)
array([ True, False])""")
less_equal = _binary_ufunc("less_equal", _promote_compare, ew.le, "Elementwise ``x1 <= x2``.")
greater = _binary_ufunc("greater", _promote_compare, ew.gt, "Elementwise ``x1 > x2``.")
greater_equal = _binary_ufunc("greater_equal", _promote_compare, ew.ge,
                              "Elementwise ``x1 >= x2``.")


def _bool_pair(name, x, y):
    return _bool_arg(name, x), _bool_arg(name, y)


logical_and = _binary_ufunc("logical_and", _bool_pair, ew.and_,
                            "Elementwise truth of ``x1 and x2``.")
logical_or = _binary_ufunc("logical_or", _bool_pair, ew.or_,
                           "Elementwise truth of ``x1 or x2``.")
logical_xor = _binary_ufunc("logical_xor", _bool_pair, ew.xor,
                            "Elementwise truth of ``x1 xor x2``.")
logical_not = _unary_ufunc("logical_not", _bool_arg, ew.not_, "Elementwise truth of ``not x``.")


def _isfinite(x):
    return ew.is_finite(x) if x.dtype.kind == "f" else _full(x, True, _BOOL)


def _isnan(x):
    return ew.ne(x, x) if x.dtype.kind == "f" else _full(x, False, _BOOL)


def _isinf(x):
    return ew.eq(ew.abs(x), _c(x, np.inf)) if x.dtype.kind == "f" else _full(x, False, _BOOL)


isfinite = _unary_ufunc("isfinite", _num_arg, _isfinite,
                        "Elementwise test for values that are neither inf nor NaN.")
isnan = _unary_ufunc("isnan", _num_arg, _isnan, "Elementwise test for NaN.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.isnan(np.array([1., np.nan]))
array([False,  True])""")
isinf = _unary_ufunc("isinf", _num_arg, _isinf, "Elementwise test for positive or negative "
                                                "infinity.")


def where(condition, x=_NoValue, y=_NoValue, /):
    """Choose elements of ``x`` where ``condition`` holds and of ``y`` elsewhere.

    Like ``numpy.where``: the three arguments broadcast together and ``x`` and
    ``y`` are promoted to one dtype. The result is differentiable in ``x`` and
    ``y``. With only ``condition`` it returns the indices of its nonzero
    elements, whose number depends on the values, so the condition must be
    concrete (not traced by jit or make_jaxpr).

    Args:
      condition: array_like, converted to bool.
      x, y: array_like; give both or neither.

    Returns:
      The selected array, or a tuple of index arrays for one argument.

    Raises:
      ConcretizationError: one-argument form on a traced condition.
      InvalidArgumentError: only one of ``x`` and ``y`` given.
      ShapeError: if the shapes do not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.where(np.array([True, False]), np.array([1., 2.]), 0.)
    array([1., 0.])
    """
    if x is _NoValue and y is _NoValue:
        if isinstance(condition, Tracer):
            try:
                condition = condition.to_concrete("funcdiff.numpy.where")
            except ConcretizationError:
                raise ConcretizationError(
                    "funcdiff.numpy.where(condition) with one argument returns the indices "
                    "of the nonzero elements, whose number depends on the values, so it "
                    "cannot be traced by jit or make_jaxpr. Use the three-argument form "
                    "where(condition, x, y), or pass the condition as a concrete value."
                ) from None
        condition = _array("where", condition)
        return np.nonzero(condition)
    if x is _NoValue or y is _NoValue:
        raise InvalidArgumentError(
            "funcdiff.numpy.where needs either both x and y or neither (got only one)")
    condition = _bool_arg("where", condition)
    x, y = _promote("where", x, y)
    try:
        return ew.select(condition, x, y)
    except ValueError:
        _check_broadcast("where", condition, x, y)
        raise


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by ``nan`` and infinities by large finite numbers (``numpy.nan_to_num``).

    Infinities become the largest finite values of the dtype unless ``posinf`` /
    ``neginf`` are given; integers and booleans are returned unchanged. The
    derivative is 1 where ``x`` is finite and 0 elsewhere.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nan_to_num(np.array([np.nan, 1., -np.inf]), neginf=-9.)
    array([ 0.,  1., -9.])
    """
    x = _num_arg("nan_to_num", x)
    if x.dtype.kind != "f":
        return x
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = ew.select(ew.ne(x, x), _c(x, nan), x)
    x = ew.select(ew.eq(x, _c(x, np.inf)), _c(x, big), x)
    return ew.select(ew.eq(x, _c(x, -np.inf)), _c(x, small), x)


def isposinf(x, out=None):
    """Elementwise test for positive infinity (like ``numpy.isposinf``)."""
    _reject_out("isposinf", out)
    x = _num_arg("isposinf", x)
    return ew.eq(x, _c(x, np.inf)) if x.dtype.kind == "f" else _full(x, False, _BOOL)


def isneginf(x, out=None):
    """Elementwise test for negative infinity (like ``numpy.isneginf``)."""
    _reject_out("isneginf", out)
    x = _num_arg("isneginf", x)
    return ew.eq(x, _c(x, -np.inf)) if x.dtype.kind == "f" else _full(x, False, _BOOL)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|``, infinities equal to themselves.

    Like ``numpy.isclose`` (``b`` is compared in at least its float dtype).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.isclose(np.array([1.0, 1.1]), 1.0)
    array([ True, False])
    """
    a, b = _arg("isclose", a), _arg("isclose", b)
    if type(b) in _PY_SCALARS:
        b = float(b)
    elif b.dtype.kind != "f":
        b = _cast(b, _result_dtype("isclose", b, 1.0))
    near = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    result = logical_or(logical_and(near, isfinite(b)), equal(a, b))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(a), isnan(b)))
    return _finish(result, (), False)


def _python_bool(x: Any) -> Any:
    """numpy's ``allclose``/``array_equal`` return Python bools; traced values stay traced."""
    return x if isinstance(x, Tracer) else builtins.bool(x)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (``all(isclose(...))``, like ``numpy.allclose``)."""
    return _python_bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """Whether two arrays have the same shape and elements (like ``numpy.array_equal``)."""
    a1, a2 = _array("array_equal", a1), _array("array_equal", a2)
    if _shape(a1) != _shape(a2):
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return _python_bool(all(same))


def array_equiv(a1, a2):
    """Whether two arrays are equal after broadcasting (like ``numpy.array_equiv``)."""
    a1, a2 = _array("array_equiv", a1), _array("array_equiv", a2)
    try:
        _check_broadcast("array_equiv", a1, a2)
    except ShapeError:
        return False
    return _python_bool(all(equal(a1, a2)))


def _bitwise_pair(name, x, y):
    x, y = _promote(name, x, y)
    if x.dtype.kind not in "biu":
        raise DTypeError(f"{_fname(name)} needs integer or boolean arguments, got "
                         f"{x.dtype}; use logical_and/logical_or/logical_xor on comparisons.")
    return x, y


def _integral_arg(name, x):
    x = _num_arg(name, x)
    if x.dtype.kind not in "biu":
        raise DTypeError(f"{_fname(name)} needs integer or boolean arguments, got "
                         f"{x.dtype}; use logical_not on comparisons.")
    return x


bitwise_and = _binary_ufunc("bitwise_and", _bitwise_pair, ew.and_,
                            "Elementwise bitwise and (logical and of booleans).")
bitwise_or = _binary_ufunc("bitwise_or", _bitwise_pair, ew.or_,
                           "Elementwise bitwise or (logical or of booleans).")
bitwise_xor = _binary_ufunc("bitwise_xor", _bitwise_pair, ew.xor,
                            "Elementwise bitwise exclusive or.")
invert = _unary_ufunc("invert", _integral_arg, ew.not_,
                      "Elementwise bitwise not (logical not of booleans).")
bitwise_not = bitwise_invert = invert


def divmod(x1, x2, /, out=(None, None), *, where=True, dtype=None):
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (like ``numpy.divmod``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.divmod(np.array([7, -7]), 3)
    (array([ 2, -3]), array([1, 2]))
    """
    if out != (None, None) and out is not None:
        _reject_out("divmod", out)
    return (floor_divide(x1, x2, where=where, dtype=dtype),
            remainder(x1, x2, where=where, dtype=dtype))


def modf(x, /, out=(None, None), *, where=True, dtype=None):
    """Fractional and integral parts, both with the sign of ``x`` (like ``numpy.modf``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.modf(np.array([2.5, -1.25]))
    (array([ 0.5 , -0.25]), array([ 2., -1.]))
    """
    if out != (None, None) and out is not None:
        _reject_out("modf", out)
    (x,) = _ufunc_options("modf", (x,), None, where, dtype)
    x = _float_arg("modf", x)
    whole = _trunc(x)
    fraction = ew.select(ew.eq(ew.abs(x), _c(x, np.inf)), _c(x, 0), ew.sub(x, whole))
    return fraction, whole


def ldexp(x1, x2, /, out=None, *, where=True, dtype=None):
    """``x1 * 2**x2`` for integer ``x2`` (like ``numpy.ldexp``); differentiable in ``x1``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.ldexp(np.array([0.75, 1.0]), 3)
    array([6., 8.])
    """
    if out is not None or where is not True or dtype is not None:
        (x1,) = _ufunc_options("ldexp", (x1,), out, where, dtype)
    x = _float_arg("ldexp", x1)
    e = _array("ldexp", x2)
    if e.dtype.kind not in "biu":
        raise DTypeError(f"{_fname('ldexp')} needs integer exponents, got {e.dtype}")
    try:
        return ew.mul(x, ew.exp2(_cast(e, x.dtype)))
    except ValueError:
        _check_broadcast("ldexp", x, e)
        raise


def conjugate(x, /, out=None, *, where=True, dtype=None):
    """Complex conjugate; funcdiff arrays are real, so this is ``x`` itself."""
    if out is not None or where is not True or dtype is not None:
        (x,) = _ufunc_options("conjugate", (x,), out, where, dtype)
    x = _num_arg("conjugate", x)
    return _cast(x, _INT8) if x.dtype == _BOOL else x  # numpy's loops take bool as int8


conj = conjugate


def real(val):
    """The real part: ``val`` itself for funcdiff's real arrays (like ``numpy.real``)."""
    return _num_arg("real", val)


def imag(val):
    """The imaginary part: zeros for funcdiff's real arrays (like ``numpy.imag``)."""
    val = _num_arg("imag", val)
    return _full(val, 0, val.dtype)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (like ``numpy.astype``; float to float keeps derivatives)."""
    return _cast(_array("astype", x), _dtype_arg("astype", dtype))


def select(condlist, choicelist, default=0):
    """Elements of the first choice whose condition holds, else ``default`` (``numpy.select``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> x = np.arange(5.)
    >>> fnp.select([x < 1, x > 3], [x, x ** 2], -1.)
    array([ 0., -1., -1., -1., 16.])
    """
    if len(condlist) != len(choicelist):
        raise InvalidArgumentError(
            f"funcdiff.numpy.select needs as many conditions as choices, got "
            f"{len(condlist)} and {len(choicelist)}")
    conds = [_array("select", c) for c in condlist]
    for c in conds:
        if c.dtype != _BOOL:
            raise DTypeError(f"funcdiff.numpy.select needs boolean conditions, got {c.dtype}")
    choices = [_array("select", c) for c in choicelist] + [_arg("select", default)]
    dtype = _result_dtype("select", *choices)
    result = _cast(choices[-1], dtype)
    for cond, choice in zip(reversed(conds), reversed(choices[:-1])):
        result = where(cond, _cast(choice, dtype), result)
    return result


acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh, pow = arctan, arctan2, arctanh, power


# ---------------------------------------------------------------------------
# Array creation


def _has_tracer(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return builtins.any(_has_tracer(e) for e in x)
    return False


def _checked_numpy(name: str, arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        dtypes.check_dtype(arr.dtype, f"the input of {_fname(name)}")
    return arr


def _creation_dtype(name: str, dtype: Any, default: np.dtype = _F64) -> np.dtype:
    return default if dtype is None else _dtype_arg(name, dtype)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """Create an array (like ``numpy.array``); nested lists may hold tracers.

    Outside transforms this is ``numpy.array`` (string and object data are
    rejected). Tracers, and lists containing them, are stacked with
    primitives, so the result stays differentiable.

    Args:
      object: array_like, a tracer, or nested lists of them.
      dtype: optional dtype of the result. copy, order, subok: as numpy.
      ndmin: minimum number of dimensions (leading axes are added).

    Returns:
      A numpy array, or a tracer inside a transform.

    Raises:
      DTypeError: for string, object or complex data. ShapeError: for ragged lists.

    >>> import funcdiff.numpy as fnp
    >>> fnp.array([[1, 2], [3, 4]], dtype=float)
    array([[1., 2.],
           [3., 4.]])
    """
    if like is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.array does not support like=")
    if isinstance(object, Tracer) or _has_tracer(object):
        dtype = None if dtype is None else _dtype_arg("array", dtype)
        out = _util.asarray(object, _fname("array"), dtype)
    else:
        dtype = None if dtype is None else _dtype_arg("array", dtype)
        try:
            out = np.array(object, dtype=dtype, copy=copy, order=order, subok=subok)
        except ValueError as e:
            raise ShapeError(f"{_fname('array')} cannot make an array of {object!r:.60}: "
                             f"{e}") from None
        out = _checked_numpy("array", out)
    ndim = _shape(out).__len__()
    if ndmin > ndim:
        out = structural.reshape(out, new_sizes=(1,) * (ndmin - ndim) + _shape(out)) \
            if isinstance(out, Tracer) else out.reshape((1,) * (ndmin - ndim) + out.shape)
    return out


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """Convert ``a`` to an array without copying when possible (like ``numpy.asarray``).

    Tracers are returned as they are (cast if ``dtype`` differs); nested lists
    holding tracers are stacked with primitives.

    >>> import funcdiff.numpy as fnp
    >>> fnp.asarray([1., 2.]).dtype
    dtype('float64')
    """
    if like is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.asarray does not support like=")
    dtype = None if dtype is None else _dtype_arg("asarray", dtype)
    if isinstance(a, Tracer) or _has_tracer(a):
        return _util.asarray(a, _fname("asarray"), dtype)
    try:
        out = np.asarray(a, dtype=dtype, order=order, copy=copy)
    except ValueError as e:
        raise ShapeError(f"{_fname('asarray')} cannot make an array of {a!r:.60}: {e}") from None
    return _checked_numpy("asarray", out)


def _shape_arg(name: str, shape: Any) -> tuple[int, ...]:
    shape = concrete_value(shape, _fname(name))
    try:
        if isinstance(shape, (list, tuple, np.ndarray)):
            return tuple(operator.index(concrete_value(s, _fname(name))) for s in shape)
        return (operator.index(shape),)
    except TypeError:
        raise InvalidArgumentError(
            f"{_fname(name)} needs a shape of Python ints, got {shape!r}") from None


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    """An array of zeros (like ``numpy.zeros``; float64 by default).

    >>> import funcdiff.numpy as fnp
    >>> fnp.zeros((2,), dtype=int)
    array([0, 0])
    """
    return np.zeros(_shape_arg("zeros", shape), _creation_dtype("zeros", dtype), order)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    """An array of ones (like ``numpy.ones``; float64 by default)."""
    return np.ones(_shape_arg("ones", shape), _creation_dtype("ones", dtype), order)


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    """A new array; funcdiff fills it with zeros so results are reproducible."""
    return np.zeros(_shape_arg("empty", shape), _creation_dtype("empty", dtype), order)


def _fill_dtype(name: str, fill_value: Any, dtype: Any) -> np.dtype:
    if dtype is not None:
        return _dtype_arg(name, dtype)
    fill_value = _arg(name, fill_value)
    return np.asarray(fill_value).dtype if type(fill_value) in _PY_SCALARS else fill_value.dtype


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """An array of ``shape`` filled with ``fill_value`` (like ``numpy.full``).

    ``fill_value`` may be a tracer (or an array that broadcasts to ``shape``);
    the result is then differentiable in it.

    >>> import funcdiff.numpy as fnp
    >>> fnp.full((2,), 7.)
    array([7., 7.])
    """
    shape = _shape_arg("full", shape)
    dtype = _fill_dtype("full", fill_value, dtype)
    if isinstance(fill_value, Tracer) or _has_tracer(fill_value):
        fill = _cast(_arg("full", fill_value), dtype)
        if broadcast_shapes(_fname("full"), _shape(fill), shape) != shape:
            raise ShapeError(f"{_fname('full')}: fill_value of shape {_shape(fill)} does not "
                             f"broadcast to the shape {shape}")
        return structural.broadcast_to(fill, shape)
    return _checked_numpy("full", np.full(shape, fill_value, dtype, order))


def _like(name: str, a: Any, dtype: Any, shape: Any) -> tuple[tuple[int, ...], np.dtype]:
    a = _array(name, a)
    dtype = a.dtype if dtype is None else _dtype_arg(name, dtype)
    shape = _shape(a) if shape is None else _shape_arg(name, shape)
    return shape, dtype


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros with the shape and dtype of ``a`` (like ``numpy.zeros_like``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.zeros_like(np.ones(2, np.float32))
    array([0., 0.], dtype=float32)
    """
    shape, dtype = _like("zeros_like", a, dtype, shape)
    return np.zeros(shape, dtype)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones with the shape and dtype of ``a`` (like ``numpy.ones_like``)."""
    shape, dtype = _like("ones_like", a, dtype, shape)
    return np.ones(shape, dtype)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """A new array like ``prototype``; funcdiff fills it with zeros."""
    shape, dtype = _like("empty_like", prototype, dtype, shape)
    return np.zeros(shape, dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``fill_value`` in the shape and dtype of ``a`` (like ``numpy.full_like``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.full_like(np.arange(3), 2.7)
    array([2, 2, 2])
    """
    shape, dtype = _like("full_like", a, dtype, shape)
    if isinstance(fill_value, Tracer) or _has_tracer(fill_value):
        return full(shape, fill_value, dtype)
    return _checked_numpy("full_like", np.full(shape, fill_value, dtype))


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    """A 2-d array with ones on the ``k``-th diagonal (like ``numpy.eye``).

    >>> import funcdiff.numpy as fnp
    >>> fnp.eye(2, dtype=int)
    array([[1, 0],
           [0, 1]])
    """
    name = _fname("eye")
    N, k = operator.index(concrete_value(N, name)), operator.index(concrete_value(k, name))
    M = None if M is None else operator.index(concrete_value(M, name))
    return np.eye(N, M, k, _creation_dtype("eye", dtype), order)


def identity(n, dtype=None, *, like=None):
    """The ``n x n`` identity matrix (like ``numpy.identity``)."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """Ones at and below the ``k``-th diagonal (like ``numpy.tri``)."""
    name = _fname("tri")
    N, k = operator.index(concrete_value(N, name)), operator.index(concrete_value(k, name))
    M = None if M is None else operator.index(concrete_value(M, name))
    return np.tri(N, M, k, _creation_dtype("tri", dtype))


def arange(start, stop=None, step=None, dtype=None, *, device=None, like=None):
    """Evenly spaced values in ``[start, stop)`` (like ``numpy.arange``).

    The length of the result depends on the values of the arguments, so they
    must be concrete (tracers with known values are accepted).

    Raises:
      ConcretizationError: an argument is traced by jit or make_jaxpr.

    >>> import funcdiff.numpy as fnp
    >>> fnp.arange(1, 7, 2)
    array([1, 3, 5])
    """
    name = _fname("arange")
    args = [concrete_value(v, name) for v in (start, stop, step)]
    for v in args:
        if v is not None:
            _arg("arange", v)
    dtype = None if dtype is None else _dtype_arg("arange", dtype)
    if args[1] is None:
        return _checked_numpy("arange", np.arange(args[0], step=args[2], dtype=dtype))
    return _checked_numpy("arange", np.arange(args[0], args[1], args[2], dtype=dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (like ``numpy.linspace``).

    With traced ``start``/``stop`` the samples are ``start + i * step``
    computed with primitives (the last one is ``stop`` exactly), so they are
    differentiable in both end points.

    Args:
      start, stop: array_like end points (broadcast together).
      num: number of samples (a concrete int). endpoint: include ``stop``.
      retstep: also return the step. dtype: result dtype (integers floor).
      axis: where the sample axis goes in the result.

    Returns:
      The samples, and the step if ``retstep``.

    >>> import funcdiff.numpy as fnp
    >>> fnp.linspace(0., 1., 5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    name = _fname("linspace")
    num = operator.index(concrete_value(num, name))
    if num < 0:
        raise InvalidArgumentError(f"{name} needs num >= 0, got {num}")
    if not (_has_tracer(start) or _has_tracer(stop)):
        start, stop = _arg("linspace", start), _arg("linspace", stop)
        dtype = None if dtype is None else _dtype_arg("linspace", dtype)
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    start, stop = _arg("linspace", start), _arg("linspace", stop)
    dt = _result_dtype("linspace", start, stop)
    dt = dt if dt.kind == "f" else _F64  # numpy: at least inexact, ints in float64
    start, stop = _cast(start, dt), _cast(stop, dt)
    shape = _check_broadcast("linspace", start, stop)
    start, stop = structural.broadcast_to(start, shape), structural.broadcast_to(stop, shape)
    div = (num - 1) if endpoint else num
    delta = ew.sub(stop, start)
    steps = np.arange(num, dtype=dt).reshape((num,) + (1,) * len(shape))
    step = ew.div(delta, _c(delta, div)) if div > 0 else _c(delta, np.nan)
    y = ew.add(ew.mul(steps, step if div > 0 else delta), start)
    if endpoint and num > 1:
        head = structural.slice(y, start_indices=(0,) * (len(shape) + 1),
                                limit_indices=(num - 1,) + shape)
        y = structural.concatenate(head, structural.reshape(stop, new_sizes=(1,) + shape),
                                   dimension=0)
    axis = _util.normalize_axis(axis, len(shape) + 1, name)
    y = structural.moveaxis(y, 0, axis)
    if dtype is not None:
        dtype = _dtype_arg("linspace", dtype)
        if dtype.kind in "iu":
            y = ew.floor(y)
        y = _cast(y, dtype)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)`` (like ``numpy.logspace``).

    >>> import funcdiff.numpy as fnp
    >>> fnp.logspace(0., 2., 3)
    array([  1.,  10., 100.])
    """
    if not (_has_tracer(start) or _has_tracer(stop) or _has_tracer(base)):
        start, stop, base = (_arg("logspace", v) for v in (start, stop, base))
        dtype = None if dtype is None else _dtype_arg("logspace", dtype)
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    base = _arg("logspace", base)
    if type(base) not in _PY_SCALARS and _shape(base):
        # an array base broadcasts with the end points, as in numpy
        start, stop = _array("logspace", start), _array("logspace", stop)
        ndmax = len(_check_broadcast("logspace", start, stop, base))
        start, stop, base = (structural.reshape(v, new_sizes=(1,) * (ndmax - len(_shape(v)))
                                                + _shape(v)) for v in (start, stop, base))
        base = structural.expand_dims(base, dimensions=(_util.normalize_axis(
            axis, ndmax + 1, _fname("logspace")),))
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    out = power(base, y)
    return out if dtype is None else _cast(out, _dtype_arg("logspace", dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors (like ``numpy.meshgrid``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> X, Y = fnp.meshgrid(np.array([1, 2, 3]), np.array([4, 5]))
    >>> X
    array([[1, 2, 3],
           [1, 2, 3]])
    """
    if indexing not in ("xy", "ij"):
        raise InvalidArgumentError(
            f"funcdiff.numpy.meshgrid needs indexing='xy' or 'ij', got {indexing!r}")
    xi = [_array("meshgrid", x) for x in xi]
    if not builtins.any(isinstance(x, Tracer) for x in xi):
        return tuple(np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing))
    ndim = len(xi)
    shapes = [[1] * ndim for _ in xi]
    for i, x in enumerate(xi):
        shapes[i][i] = get_aval(x).size
    if indexing == "xy" and ndim > 1:
        shapes[0][0], shapes[0][1] = 1, shapes[0][0]
        shapes[1][0], shapes[1][1] = shapes[1][1], 1
    outs = [structural.reshape(x, new_sizes=tuple(s)) for x, s in zip(xi, shapes)]
    if not sparse:
        full_shape = tuple(builtins.max(s[d] for s in shapes) for d in range(ndim))
        outs = [structural.broadcast_to(o, full_shape) for o in outs]
    return tuple(outs)


def _matrix_mask(name: str, m: Any, k: int, lower: bool) -> np.ndarray:
    shape = _shape(m)
    if len(shape) < 1:
        raise ShapeError(f"{_fname(name)} needs an array of at least 1 dimension, got a 0-d "
                         "array")
    rows, cols = shape[-2:] if len(shape) >= 2 else (shape[-1], shape[-1])
    if lower:
        return np.tri(rows, cols, k, dtype=bool)
    return ~np.tri(rows, cols, k - 1, dtype=bool)


def tril(m, k=0):
    """``m`` with the elements above the ``k``-th diagonal zeroed (like ``numpy.tril``).

    Works on the last two axes (a 1-d ``m`` is repeated as rows); the result is
    a ``select`` with a constant mask, so it is differentiable.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.tril(np.ones((2, 2)))
    array([[1., 0.],
           [1., 1.]])
    """
    m = _array("tril", m)
    k = operator.index(concrete_value(k, _fname("tril")))
    return ew.select(_matrix_mask("tril", m, k, True), m, _c(m, 0))


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal zeroed (like ``numpy.triu``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.triu(np.ones((2, 2)))
    array([[1., 1.],
           [0., 1.]])
    """
    m = _array("triu", m)
    k = operator.index(concrete_value(k, _fname("triu")))
    return ew.select(_matrix_mask("triu", m, k, False), m, _c(m, 0))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the ``(axis1, axis2)`` planes (like ``numpy.diagonal``).

    The two axes move to the end and are flattened; the diagonal of an
    ``n x m`` block is then every ``(m + 1)``-th element, one strided slice.
    The diagonal becomes the last axis of the result.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diagonal(np.arange(9.).reshape(3, 3), 1)
    array([1., 5.])
    """
    name = _fname("diagonal")
    a = _array("diagonal", a)
    shape = _shape(a)
    if len(shape) < 2:
        raise ShapeError(f"{name} needs an array of at least 2 dimensions, got shape {shape}")
    offset = operator.index(concrete_value(offset, name))
    ax1, ax2 = _util.normalize_axis(axis1, len(shape), name), \
        _util.normalize_axis(axis2, len(shape), name)
    if ax1 == ax2:
        raise AxisError(f"{name} needs two different axes, got axis1={axis1}, axis2={axis2}")
    rest = [i for i in range(len(shape)) if i not in (ax1, ax2)]
    perm = tuple(rest) + (ax1, ax2)
    if perm != tuple(range(len(shape))):
        a = structural.transpose(a, permutation=perm)
    n, m = shape[ax1], shape[ax2]
    lead = tuple(shape[i] for i in rest)
    count = builtins.max(0, builtins.min(n, m - offset) if offset >= 0
                         else builtins.min(n + offset, m))
    flat = structural.reshape(a, new_sizes=lead + (n * m,))
    begin = (offset if offset >= 0 else -offset * m) if count else 0
    end = begin + (count - 1) * (m + 1) + 1 if count else 0
    return structural.slice(flat, start_indices=(0,) * len(lead) + (begin,),
                            limit_indices=lead + (end,),
                            strides=(1,) * len(lead) + (m + 1,))


def diag(v, k=0):
    """Extract a diagonal of a 2-d array, or build a 2-d array from a 1-d diagonal.

    Like ``numpy.diag``. Building pads ``v``, broadcasts it along the rows (or
    columns) and keeps the ``k``-th diagonal with a constant mask, so the
    result is differentiable in ``v``.

    Raises:
      ShapeError: if ``v`` is not 1-d or 2-d.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diag(np.array([1., 2.]))
    array([[1., 0.],
           [0., 2.]])
    """
    v = _array("diag", v)
    k = operator.index(concrete_value(k, _fname("diag")))
    shape = _shape(v)
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ShapeError(f"{_fname('diag')} needs a 1-d or 2-d input, got shape {shape}")
    n = shape[0] + builtins.abs(k)
    padded = structural.pad(v, _c(v, 0), padding_config=((0, builtins.abs(k), 0),))
    spread = structural.broadcast_in_dim(padded, shape=(n, n),
                                         broadcast_dimensions=(0,) if k >= 0 else (1,))
    return ew.select(np.eye(n, k=k, dtype=bool), spread, _c(v, 0))


def diagflat(v, k=0):
    """A 2-d array with the flattened ``v`` on the ``k``-th diagonal (like ``numpy.diagflat``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.diagflat(np.array([[1, 2]]))
    array([[1, 0],
           [0, 2]])
    """
    v = _array("diagflat", v)
    return diag(structural.reshape(v, new_sizes=(get_aval(v).size,)), k)


# ---------------------------------------------------------------------------
# Reductions


@functools.lru_cache(maxsize=None)
def _all_axes(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim))


def _axis(name: str, axis: Any, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise AxisError(f"{_fname(name)} needs integer axes, got axis={axis!r}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{_fname(name)}: axis {axis} is out of bounds for an array of "
                        f"dimension {ndim}")
    return axis % ndim


def _axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence; negatives allowed) as a sorted tuple."""
    if axis is None:
        return _all_axes(ndim)
    if isinstance(axis, (tuple, list)):
        axes = tuple(_axis(name, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise AxisError(f"{_fname(name)} got a repeated axis in axis={axis!r}")
        return tuple(sorted(axes))
    return (_axis(name, axis, ndim),)


def _finish(out: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if keepdims and axes:
        return structural.expand_dims(out, dimensions=axes)
    if type(out) is np.ndarray and out.ndim == 0:
        return out[()]  # numpy returns scalars from full reductions
    return out


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[a] for a in axes)


def _check_nonempty(name: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    if 0 in shape and builtins.any(shape[a] == 0 for a in axes):
        raise ShapeError(
            f"{_fname(name)} cannot reduce an empty axis of shape {shape}: the operation "
            "has no identity (numpy raises too). Check the shape or reduce a non-empty axis.")


def _reduction_options(name: str, out: Any, initial: Any = _NoValue,
                       where: Any = _NoValue) -> None:
    _reject_out(name, out)
    _reject_initial(name, initial)
    _reject_where(name, where)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """numpy's accumulator of sum/prod: small ints widen to the platform int, bools count."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return _INT64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return _UINT64
    return dtype


def _sum(a, axes):
    if not axes:
        return a
    if a.dtype == _BOOL:
        return reductions.reduce_or(a, axes=axes)
    return reductions.reduce_sum(a, axes=axes)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Sum of array elements over the given axes (like ``numpy.sum``).

    Args:
      a: array_like.
      axis: None (all axes), an int or a tuple of ints; negatives count from the end.
      dtype: accumulator and result dtype (default: numpy's, e.g. int64 for int8).
      keepdims: keep the reduced axes with size 1.
      out, initial, where: not supported.

    Returns:
      The sums; a numpy scalar for a full reduction outside transforms.

    Raises:
      AxisError: for an axis out of range or repeated.
      UnsupportedNumpyError: for out=, initial= or where=.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.sum(np.array([[1., 2.], [3., 4.]]), axis=0)
    array([4., 6.])
    """
    if out is not None or initial is not _NoValue or where is not _NoValue:
        _reduction_options("sum", out, initial, where)
    a = _num_arg("sum", a)
    a = _cast(a, _sum_dtype(a.dtype) if dtype is None else _dtype_arg("sum", dtype))
    axes = _axes("sum", axis, a.ndim)
    return _finish(_sum(a, axes), axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Product of array elements over the given axes (like ``numpy.prod``).

    The derivative is exact where elements are zero.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.prod(np.array([1, 2, 3, 4]))
    np.int64(24)
    """
    _reduction_options("prod", out, initial, where)
    a = _num_arg("prod", a)
    a = _cast(a, _sum_dtype(a.dtype) if dtype is None else _dtype_arg("prod", dtype))
    axes = _axes("prod", axis, a.ndim)
    if not axes:
        result = a
    elif a.dtype == _BOOL:
        result = reductions.reduce_and(a, axes=axes)
    else:
        result = reductions.reduce_prod(a, axes=axes)
    return _finish(result, axes, keepdims)


def _divide_count(total: Any, count: int, result: np.dtype) -> Any:
    if total.dtype.kind == "f":
        return _cast(ew.div(total, _c(total, count)), result)
    return _cast(ew.div(_cast(total, _F64), _const(count, _F64)), result)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    """Arithmetic mean over the given axes (like ``numpy.mean``).

    Integers and booleans average in float64; float16 accumulates in float32.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.mean(np.array([1, 2, 3, 4]))
    np.float64(2.5)
    """
    if out is not None or where is not _NoValue:
        _reduction_options("mean", out, where=where)
    a = _num_arg("mean", a)
    if dtype is not None:
        work = result = _dtype_arg("mean", dtype)
    elif a.dtype.kind in "biu":
        work = result = _F64
    elif a.dtype == _F16:
        work, result = _F32, _F16
    else:
        work = result = a.dtype
    axes = _axes("mean", axis, a.ndim)
    a = _cast(a, work)
    total = reductions.reduce_sum(a, axes=axes) if axes else a
    return _finish(_divide_count(total, _count(_shape(a), axes), result), axes, keepdims)


def _var(name, a, axis, dtype, ddof, keepdims, mean_, correction):
    if mean_ is not _NoValue:
        raise UnsupportedNumpyError(f"{_fname(name)} does not support the argument mean=; "
                                    "it computes the mean itself.")
    if correction is not _NoValue:
        if ddof != 0:
            raise InvalidArgumentError(f"{_fname(name)} got both ddof= and correction=")
        ddof = correction
    a = _num_arg(name, a)
    if dtype is not None:
        work = _dtype_arg(name, dtype)
    else:
        work = _F64 if a.dtype.kind in "biu" else a.dtype
    a = _cast(a, work)
    axes = _axes(name, axis, a.ndim)
    n = _count(_shape(a), axes)
    if axes:
        centre = ew.div(reductions.reduce_sum(a, axes=axes), _c(a, n))
        deviation = ew.sub(a, structural.expand_dims(centre, dimensions=axes))
        squares = ew.mul(deviation, deviation)
        total = reductions.reduce_sum(squares, axes=axes)
    else:
        total = ew.mul(a, _c(a, 0))
    return total, axes, builtins.max(n - ddof, 0)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
        mean=_NoValue, correction=_NoValue):
    """Variance over the given axes, ``sum((a - mean)**2) / (n - ddof)`` (like ``numpy.var``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.var(np.array([1., 2., 3., 4.]), ddof=1)
    np.float64(1.6666666666666667)
    """
    _reduction_options("var", out, where=where)
    total, axes, count = _var("var", a, axis, dtype, ddof, keepdims, mean, correction)
    return _finish(ew.div(total, _c(total, count)), axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
        mean=_NoValue, correction=_NoValue):
    """Standard deviation over the given axes, ``sqrt(var(a, ...))`` (like ``numpy.std``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.std(np.array([1., 3.]))
    np.float64(1.0)
    """
    _reduction_options("std", out, where=where)
    total, axes, count = _var("std", a, axis, dtype, ddof, keepdims, mean, correction)
    return _finish(ew.sqrt(ew.div(total, _c(total, count))), axes, keepdims)


def _extremum(name, prim_op, a, axis, out, keepdims, initial, where):
    if out is not None or initial is not _NoValue or where is not _NoValue:
        _reduction_options(name, out, initial, where)
    a = _num_arg(name, a)
    axes = _axes(name, axis, a.ndim)
    _check_nonempty(name, _shape(a), axes)
    return _finish(prim_op(a, axes=axes) if axes else a, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Maximum over the given axes; NaN propagates (like ``numpy.max``).

    Where several elements attain the maximum they share its derivative equally.

    Raises:
      ShapeError: when reducing an empty axis.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.max(np.array([[1, 5], [7, 2]]), axis=1)
    array([5, 7])
    """
    return _extremum("max", reductions.reduce_max, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Minimum over the given axes; NaN propagates (like ``numpy.min``)."""
    return _extremum("min", reductions.reduce_min, a, axis, out, keepdims, initial, where)


def amax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Maximum over the given axes (an alias of ``max``, like ``numpy.amax``)."""
    return _extremum("amax", reductions.reduce_max, a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Minimum over the given axes (an alias of ``min``, like ``numpy.amin``)."""
    return _extremum("amin", reductions.reduce_min, a, axis, out, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range ``max - min`` over the given axes (like ``numpy.ptp``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.ptp(np.array([4., 1., 9.]))
    np.float64(8.0)
    """
    a = _num_arg("ptp", a)
    _no_bool("ptp", a)
    hi = _extremum("ptp", reductions.reduce_max, a, axis, out, keepdims, _NoValue, _NoValue)
    lo = _extremum("ptp", reductions.reduce_min, a, axis, out, keepdims, _NoValue, _NoValue)
    return ew.sub(hi, lo)


def _arg_extremum(name, prim_op, a, axis, out, keepdims):
    _reject_out(name, out)
    a = _num_arg(name, a)
    shape = _shape(a)
    if axis is None:
        if get_aval(a).size == 0:
            raise ShapeError(f"{_fname(name)} of an empty array is undefined (numpy raises "
                             "too)")
        flat = a if len(shape) == 1 else structural.reshape(a, new_sizes=(get_aval(a).size,))
        index = prim_op(flat, axis=0, index_dtype=_INT64)
        if keepdims:
            return structural.reshape(index, new_sizes=(1,) * len(shape))
        return _finish(index, (), False)
    ax = _axis(name, axis, len(shape))
    _check_nonempty(name, shape, (ax,))
    return _finish(prim_op(a, axis=ax, index_dtype=_INT64), (ax,), keepdims)


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum along ``axis`` (of the flattened array for None).

    Like ``numpy.argmax``; NaN counts as the maximum. The result is an int64
    array, which carries no derivative.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.argmax(np.array([[1, 5], [7, 2]]), axis=1)
    array([1, 0])
    """
    return _arg_extremum("argmax", reductions.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum along ``axis`` (of the flattened array for None)."""
    return _arg_extremum("argmin", reductions.argmin, a, axis, out, keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=_NoValue):
    """Whether any element over the given axes is true (like ``numpy.any``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.any(np.array([[0, 1], [0, 0]]), axis=1)
    array([ True, False])
    """
    _reduction_options("any", out, where=where)
    a = _bool_arg("any", a)
    axes = _axes("any", axis, len(_shape(a)))
    return _finish(reductions.reduce_or(a, axes=axes) if axes else a, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=_NoValue):
    """Whether all elements over the given axes are true (like ``numpy.all``)."""
    _reduction_options("all", out, where=where)
    a = _bool_arg("all", a)
    axes = _axes("all", axis, len(_shape(a)))
    return _finish(reductions.reduce_and(a, axes=axes) if axes else a, axes, keepdims)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over the given axes (like ``numpy.average``).

    ``weights`` has ``a``'s shape, or, with an ``axis``, the shape of ``a``
    along those axes. Differentiable in ``a`` and ``weights``.

    Args:
      a: array_like. axis: None, int or tuple. weights: array_like or None.
      returned: also return the sum of the weights (broadcast to the result).
      keepdims: keep the reduced axes with size 1.

    Returns:
      The average, or ``(average, sum_of_weights)`` if ``returned``.

    Raises:
      ShapeError: weights of the wrong shape. ZeroWeightsError: concrete weights
      summing to zero.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.average(np.array([1., 2., 4.]), weights=np.array([1., 1., 2.]))
    np.float64(2.75)
    """
    a = _num_arg("average", a)
    shape = _shape(a)
    axes = _axes("average", axis, len(shape))
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        avg_shape = _shape(avg)
        count = math.prod(shape) // builtins.max(math.prod(avg_shape), 1)
        return avg, _full(avg_shape, count, get_aval(avg).dtype)
    w = _array("average", weights)
    if a.dtype.kind in "biu":
        dtype = np.result_type(a.dtype, w.dtype, _F64)
    else:
        dtype = _result_dtype("average", a.dtype, w.dtype)
    w_shape = _shape(w)
    if w_shape != shape:
        if axis is None:
            raise ShapeError(
                f"{_fname('average')}: weights of shape {w_shape} differ from a's shape "
                f"{shape}; give axis= to weight along chosen axes.")
        given = tuple(_axis("average", ax, len(shape)) for ax in
                      (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if w_shape != tuple(shape[ax] for ax in given):
            raise ShapeError(
                f"{_fname('average')}: weights of shape {w_shape} must match a's shape "
                f"{shape} along axis {axis}, i.e. {tuple(shape[ax] for ax in given)}")
        order = tuple(int(i) for i in np.argsort(given))
        if order != tuple(range(len(order))):
            w = structural.transpose(w, permutation=order)
        w = structural.reshape(w, new_sizes=tuple(s if i in axes else 1
                                                  for i, s in enumerate(shape)))
    a, w = _cast(a, dtype), _cast(w, dtype)
    scale = sum(w, axis=axes, keepdims=keepdims) if axes else w
    if not isinstance(scale, Tracer) and np.any(np.asarray(scale) == 0):
        raise ZeroWeightsError(f"{_fname('average')}: the weights sum to zero, so they "
                               "cannot be normalised")
    total = sum(ew.mul(a, w), axis=axes, keepdims=keepdims) if axes else ew.mul(a, w)
    avg = ew.div(total, scale)
    if returned:
        return avg, structural.broadcast_to(scale, _shape(avg))
    return avg


# ---------------------------------------------------------------------------
# Order statistics


def _to_last(name: str, a: Any, axis: Any):
    """``a`` with the reduced axes moved to the end and merged into one."""
    shape = _shape(a)
    axes = _axes(name, axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    perm = rest + axes
    if perm != tuple(range(len(shape))):
        a = structural.transpose(a, permutation=perm)
    rest_shape = tuple(shape[i] for i in rest)
    n = _count(shape, axes)
    if _shape(a) != rest_shape + (n,):
        a = structural.reshape(a, new_sizes=rest_shape + (n,))
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return a, rest_shape, kept, n


def _last_element(x: Any, n: int) -> Any:
    """``x[..., n - 1]`` of an array whose last axis has size ``n``."""
    shape = _shape(x)
    last = len(shape) - 1
    top = structural.slice(x, start_indices=(0,) * last + (n - 1,), limit_indices=shape)
    return structural.squeeze(top, dimensions=(last,))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over the given axes (like ``numpy.median``); NaN if a slice holds NaN.

    The mean of the middle element(s) of the sorted data, so the derivative
    flows to the one or two middle elements.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.median(np.array([3., 1., 4., 2.]))
    np.float64(2.5)
    """
    _reject_out("median", out)
    a = _num_arg("median", a)
    x, rest, kept, n = _to_last("median", a, axis)
    last = len(rest)
    if n == 0:
        result = _full(rest, np.nan, _F64 if a.dtype.kind in "biu" else a.dtype)
    else:
        s = sorting.sort(x, axis=last)
        half = n // 2
        lo = half if n % 2 else half - 1
        middle = structural.slice(s, start_indices=(0,) * last + (lo,),
                                  limit_indices=rest + (half + 1,))
        result = mean(middle, axis=last)
        if a.dtype.kind == "f":
            top = _last_element(s, n)
            result = ew.select(ew.ne(top, top), _c(result, np.nan), result)
    if keepdims:
        result = structural.reshape(result, new_sizes=kept)
    return _finish(result, (), False)


def _quantile_indices_concrete(q: np.ndarray, n: int):
    """numpy's 'linear' method: neighbour indices and weights, from a concrete q."""
    virtual = (n - 1) * q
    if q.dtype.kind in "iu":  # integer quantiles (0 or 1) pick elements exactly
        index = np.asarray(virtual, np.int64)
        return index, index, None
    prev = np.floor(virtual)
    above, below = virtual >= n - 1, virtual < 0
    prev, nxt = (np.where(above, -1, np.where(below, 0, v)) for v in (prev, prev + 1))
    gamma = np.asarray(virtual - prev, dtype=virtual.dtype)
    lo = np.where(prev < 0, n - 1, prev).astype(np.int64)
    hi = np.where(nxt < 0, n - 1, nxt).astype(np.int64)
    return lo, hi, gamma


def _quantile_indices_traced(q: Any, n: int):
    """The same indices and weights computed with primitives, for a traced q."""
    one, zero = _c(q, 1), _c(q, 0)
    virtual = ew.mul(_c(q, n - 1), q)
    prev = ew.floor(virtual)
    above, below = ew.ge(virtual, _c(q, n - 1)), ew.lt(virtual, zero)
    minus_one = _c(q, -1)
    prev_adj = ew.select(above, minus_one, ew.select(below, zero, prev))
    next_adj = ew.select(above, minus_one, ew.select(below, zero, ew.add(prev, one)))
    gamma = ew.sub(virtual, prev_adj)
    last = _c(q, n - 1)
    lo = _cast(ew.select(ew.lt(prev_adj, zero), last, prev_adj), _INT64)
    hi = _cast(ew.select(ew.lt(next_adj, zero), last, next_adj), _INT64)
    return lo, hi, gamma


def _take_quantiles(s: Any, index: Any, q_shape: tuple, rest: tuple) -> Any:
    """Elements of the sorted ``s`` (rest + (n,)) at ``index`` (q_shape): q_shape + rest."""
    last = len(rest)
    flat = index if _shape(index) == (math.prod(q_shape),) else structural.reshape(
        index, new_sizes=(math.prod(q_shape),))
    taken = indexing.gather(s, flat, axis=last)
    taken = structural.moveaxis(taken, last, 0)
    return structural.reshape(taken, new_sizes=q_shape + rest)


def _quantile(name: str, a: Any, q: Any, axis: Any, keepdims: bool, method: str) -> Any:
    if method != "linear":
        raise UnsupportedNumpyError(
            f"{_fname(name)} supports only method='linear' (numpy's default), got "
            f"method={method!r}")
    a = _num_arg(name, a)
    if a.dtype == _BOOL:
        raise DTypeError(f"{_fname(name)} does not accept booleans (numpy neither); "
                         "convert with astype(float) first.")
    weak = type(q) in (int, float)
    traced = isinstance(q, Tracer)
    if not traced:
        q = np.asarray(_arg(name, q))
        if q.dtype.kind not in "iuf":
            raise DTypeError(f"{_fname(name)} needs numeric quantiles, got {q.dtype}")
        if not np.all((q >= 0) & (q <= 1)):
            raise InvalidArgumentError(f"{_fname(name)}: quantiles must be in the range "
                                       f"[0, 1] (percentiles in [0, 100]), got {q}")
    q_dtype = q.dtype
    integer_q = q_dtype.kind in "iu"
    if integer_q:
        work = a.dtype
    elif weak:
        work = a.dtype if a.dtype.kind == "f" else _F64
    else:
        work = np.result_type(a.dtype, q_dtype)
        work = work if work.kind == "f" else _F64
    # numpy sorts and subtracts neighbours in a's dtype, then interpolates in `work`
    x, rest, kept, n = _to_last(name, a, axis)
    if n == 0:
        raise ShapeError(f"{_fname(name)} of an empty array is undefined")
    last = len(rest)
    q_shape = _shape(q)
    s = sorting.sort(x, axis=last)
    if traced:
        lo_i, hi_i, gamma = _quantile_indices_traced(_cast(q, work), n)
    else:
        lo_i, hi_i, gamma = _quantile_indices_concrete(q, n)
    lo = _take_quantiles(s, lo_i, q_shape, rest)
    if gamma is None:
        result = lo
    else:
        hi = _take_quantiles(s, hi_i, q_shape, rest)
        t_shape = q_shape + (1,) * last
        if traced:
            t = structural.reshape(gamma, new_sizes=t_shape)
            upper, one_minus = ew.ge(t, _c(t, 0.5)), ew.sub(_c(t, 1), t)
        else:
            upper = (gamma >= 0.5).reshape(t_shape)
            one_minus = np.asarray(1 - gamma, work).reshape(t_shape)
            t = np.asarray(gamma, work).reshape(t_shape)
        diff = _cast(ew.sub(hi, lo), work)
        lo, hi = _cast(lo, work), _cast(hi, work)
        result = ew.select(upper, ew.sub(hi, ew.mul(diff, one_minus)),
                           ew.add(lo, ew.mul(diff, t)))
    if a.dtype.kind == "f":
        top = _last_element(s, n)
        result = ew.select(ew.ne(top, top), _c(result, np.nan), result)
    if keepdims:
        result = structural.reshape(result, new_sizes=q_shape + kept)
    return _finish(result, (), False)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles over the given axes, linear interpolation (``numpy.quantile``).

    ``q`` (in ``[0, 1]``) may be an array: its shape is prepended to the
    result. The result is differentiable in ``a`` and, when traced, in ``q``.

    Raises:
      UnsupportedNumpyError: for a method other than 'linear', weights=, out=.
      InvalidArgumentError: for a concrete q outside [0, 1].

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.quantile(np.array([1., 2., 3., 4.]), 0.5)
    np.float64(2.5)
    """
    _reject_out("quantile", out)
    if weights is not None or interpolation is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.quantile does not support weights= or "
                                    "interpolation=; use method='linear'.")
    return _quantile("quantile", a, q, axis, keepdims, method)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th percentiles (``q`` in ``[0, 100]``), like ``numpy.percentile``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.percentile(np.array([1., 2., 3., 4., 5.]), [25, 50])
    array([2., 3.])
    """
    _reject_out("percentile", out)
    if weights is not None or interpolation is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.percentile does not support weights= "
                                    "or interpolation=; use method='linear'.")
    if isinstance(q, Tracer):
        q = ew.div(q, _c(q, 100))
    elif type(q) in (int, float):
        q = q / 100
    else:
        q = np.true_divide(np.asarray(_arg("percentile", q)), 100)
    return _quantile("percentile", a, q, axis, keepdims, method)


# ---------------------------------------------------------------------------
# NaN-ignoring reductions


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
           where=_NoValue):
    """Sum treating NaN as zero (like ``numpy.nansum``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nansum(np.array([1., np.nan, 2.]))
    np.float64(3.0)
    """
    _reduction_options("nansum", out, initial, where)
    a = _num_arg("nansum", a)
    if a.dtype.kind == "f":
        a = ew.select(ew.ne(a, a), _c(a, 0), a)
    return sum(a, axis, dtype, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    """Mean of the non-NaN elements (like ``numpy.nanmean``; NaN where all are NaN).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nanmean(np.array([1., np.nan, 2.]))
    np.float64(1.5)
    """
    _reduction_options("nanmean", out, where=where)
    a = _num_arg("nanmean", a)
    if a.dtype.kind != "f":
        return mean(a, axis, dtype, keepdims=keepdims)
    if dtype is not None:
        a = _cast(a, _dtype_arg("nanmean", dtype))
    missing = ew.ne(a, a)
    total = sum(ew.select(missing, _c(a, 0), a), axis, keepdims=keepdims)
    count = sum(ew.not_(missing), axis, keepdims=keepdims)  # int64, as numpy counts
    # numpy divides by the integer count in float64 and casts back to a's dtype
    return _finish(_cast(ew.div(_cast(total, _F64), _cast(count, _F64)), a.dtype), (), False)


def _nan_extremum(name, prim_op, fill, a, axis, out, keepdims, initial, where):
    _reduction_options(name, out, initial, where)
    a = _num_arg(name, a)
    if a.dtype.kind != "f":
        return _extremum(name, prim_op, a, axis, None, keepdims, _NoValue, _NoValue)
    missing = ew.ne(a, a)
    result = _extremum(name, prim_op, ew.select(missing, _c(a, fill), a), axis, None,
                       keepdims, _NoValue, _NoValue)
    axes = _axes(name, axis, a.ndim)
    all_missing = reductions.reduce_and(missing, axes=axes) if axes else missing
    if keepdims and axes:
        all_missing = structural.expand_dims(all_missing, dimensions=axes)
    return _finish(ew.select(all_missing, _c(a, np.nan), result), (), False)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Maximum ignoring NaN (like ``numpy.nanmax``; NaN where all are NaN).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nanmax(np.array([1., np.nan, 2.]))
    np.float64(2.0)
    """
    return _nan_extremum("nanmax", reductions.reduce_max, -np.inf, a, axis, out, keepdims,
                         initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """Minimum ignoring NaN (like ``numpy.nanmin``; NaN where all are NaN)."""
    return _nan_extremum("nanmin", reductions.reduce_min, np.inf, a, axis, out, keepdims,
                         initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
            where=_NoValue):
    """Product treating NaN as one (like ``numpy.nanprod``)."""
    _reduction_options("nanprod", out, initial, where)
    a = _num_arg("nanprod", a)
    if a.dtype.kind == "f":
        a = ew.select(ew.ne(a, a), _c(a, 1), a)
    return prod(a, axis, dtype, keepdims=keepdims)


def _nan_var(name, a, axis, dtype, ddof, keepdims):
    a = _num_arg(name, a)
    if a.dtype.kind != "f":
        return None, a
    if dtype is not None:
        a = _cast(a, _dtype_arg(name, dtype))
    axes = _axes(name, axis, a.ndim)
    missing = ew.ne(a, a)
    zero = _c(a, 0)
    count = _cast(sum(ew.not_(missing), axis=axes, keepdims=True), a.dtype)
    centre = ew.div(sum(ew.select(missing, zero, a), axis=axes, keepdims=True), count)
    deviation = ew.select(missing, zero, ew.sub(a, centre))
    squares = sum(ew.mul(deviation, deviation), axis=axes, keepdims=keepdims)
    dof = ew.sub(count if keepdims else _drop_axes(count, axes), _c(a, ddof))
    var_ = ew.div(squares, ew.select(ew.gt(dof, zero), dof, _c(a, 1)))
    return ew.select(ew.gt(dof, zero), var_, _c(a, np.nan)), a


def _drop_axes(x, axes):
    return structural.squeeze(x, dimensions=axes) if axes else x


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
           mean=_NoValue, correction=_NoValue):
    """Variance of the non-NaN elements (like ``numpy.nanvar``; NaN where too few remain)."""
    _reduction_options("nanvar", out, where=where)
    if mean is not _NoValue or correction is not _NoValue:
        raise UnsupportedNumpyError("funcdiff.numpy.nanvar does not support mean= or "
                                    "correction=; use ddof=.")
    result, a = _nan_var("nanvar", a, axis, dtype, ddof, keepdims)
    if result is None:
        return var(a, axis, dtype, ddof=ddof, keepdims=keepdims)
    return _finish(result, (), False)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
           mean=_NoValue, correction=_NoValue):
    """Standard deviation of the non-NaN elements (like ``numpy.nanstd``)."""
    _reduction_options("nanstd", out, where=where)
    if mean is not _NoValue or correction is not _NoValue:
        raise UnsupportedNumpyError("funcdiff.numpy.nanstd does not support mean= or "
                                    "correction=; use ddof=.")
    result, a = _nan_var("nanstd", a, axis, dtype, ddof, keepdims)
    if result is None:
        return std(a, axis, dtype, ddof=ddof, keepdims=keepdims)
    return _finish(ew.sqrt(result), (), False)


def _nan_arg_extremum(name, prim_op, fill, a, axis, out, keepdims):
    a = _num_arg(name, a)
    if a.dtype.kind == "f":
        missing = ew.ne(a, a)
        if not isinstance(a, Tracer):
            axes = _axes(name, axis, a.ndim)
            if np.any(np.all(missing, axis=axes)):
                raise InvalidArgumentError(f"{_fname(name)}: all-NaN slice encountered "
                                           "(numpy raises too)")
        a = ew.select(missing, _c(a, fill), a)
    return _arg_extremum(name, prim_op, a, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum ignoring NaN (like ``numpy.nanargmax``)."""
    return _nan_arg_extremum("nanargmax", reductions.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum ignoring NaN (like ``numpy.nanargmin``)."""
    return _nan_arg_extremum("nanargmin", reductions.argmin, np.inf, a, axis, out, keepdims)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of nonzero elements over the given axes (like ``numpy.count_nonzero``)."""
    counted = sum(_bool_arg("count_nonzero", a), axis=axis, keepdims=keepdims)
    return int(counted) if axis is None and not keepdims and not isinstance(counted, Tracer) \
        else counted


def _nan_quantile(name, a, q, axis, keepdims, method):
    """Quantiles of the non-NaN elements: NaN sorts last, so each slice's first ``count``
    sorted entries are its data; the neighbour indices depend on that count."""
    if method != "linear":
        raise UnsupportedNumpyError(
            f"{_fname(name)} supports only method='linear' (numpy's default), got "
            f"method={method!r}")
    a = _num_arg(name, a)
    if a.dtype.kind != "f":
        return _quantile(name, a, q, axis, keepdims, method)
    weak = type(q) in (int, float)
    if not isinstance(q, Tracer):
        q = np.asarray(_arg(name, q))
        if not np.all((q >= 0) & (q <= 1)):
            raise InvalidArgumentError(f"{_fname(name)}: quantiles must be in the range "
                                       f"[0, 1] (percentiles in [0, 100]), got {q}")
    work = a.dtype if weak else np.result_type(a.dtype, q.dtype)
    work = work if work.kind == "f" else _F64
    x, rest, kept, n = _to_last(name, a, axis)
    if n == 0:
        raise ShapeError(f"{_fname(name)} of an empty array is undefined")
    last = len(rest)
    q_shape = _shape(q)
    s = sorting.sort(x, axis=last)
    # indices in q's float dtype, as numpy's (n - 1) * q: every (q, slice) pair
    q_float = q.dtype if q.dtype.kind == "f" else _F64
    count = reductions.reduce_sum(_cast(ew.eq(x, x), q_float), axes=(last,))  # rest
    qb = structural.reshape(_cast(q, q_float), new_sizes=q_shape + (1,) * last)
    virtual = ew.mul(ew.sub(count, _c(count, 1)), qb)
    prev = ew.floor(virtual)
    top = ew.sub(count, _c(count, 1))
    lo_f = ew.max(ew.min(prev, top), _c(count, 0))
    hi_f = ew.max(ew.min(ew.add(prev, _c(count, 1)), top), _c(count, 0))
    gamma = _cast(ew.sub(virtual, prev), work)
    out_shape = q_shape + rest

    def take(index):
        index = structural.broadcast_to(_cast(index, _INT64), out_shape)
        flat = structural.reshape(index, new_sizes=(math.prod(q_shape),) + rest)
        flat = structural.moveaxis(flat, 0, last)  # rest + (k,)
        taken = indexing.take_along_axis(s, flat, last)
        return structural.reshape(structural.moveaxis(taken, last, 0), new_sizes=out_shape)
    lo, hi = take(lo_f), take(hi_f)
    diff = _cast(ew.sub(hi, lo), work)
    lo, hi = _cast(lo, work), _cast(hi, work)
    t = structural.broadcast_to(gamma, out_shape)
    result = ew.select(ew.ge(t, _c(t, 0.5)), ew.sub(hi, ew.mul(diff, ew.sub(_c(t, 1), t))),
                       ew.add(lo, ew.mul(diff, t)))
    empty = structural.broadcast_to(ew.eq(count, _c(count, 0)), out_shape)
    result = ew.select(empty, _c(result, np.nan), result)
    if keepdims:
        result = structural.reshape(result, new_sizes=q_shape + kept)
    return _finish(result, (), False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """Quantiles of the non-NaN elements (like ``numpy.nanquantile``; NaN for all-NaN slices).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nanquantile(np.array([1., np.nan, 3.]), 0.5)
    np.float64(2.0)
    """
    _reject_out("nanquantile", out)
    if weights is not None or interpolation is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.nanquantile does not support weights= "
                                    "or interpolation=; use method='linear'.")
    return _nan_quantile("nanquantile", a, q, axis, keepdims, method)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """Percentiles of the non-NaN elements (like ``numpy.nanpercentile``)."""
    _reject_out("nanpercentile", out)
    if weights is not None or interpolation is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.nanpercentile does not support weights= "
                                    "or interpolation=; use method='linear'.")
    if isinstance(q, Tracer):
        q = ew.div(q, _c(q, 100))
    elif type(q) in (int, float):
        q = q / 100
    else:
        q = np.true_divide(np.asarray(_arg("nanpercentile", q)), 100)
    return _nan_quantile("nanpercentile", a, q, axis, keepdims, method)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-NaN elements (like ``numpy.nanmedian``; NaN for all-NaN slices)."""
    _reject_out("nanmedian", out)
    a = _num_arg("nanmedian", a)
    if a.dtype.kind != "f":
        return median(a, axis, keepdims=keepdims)
    return _nan_quantile("nanmedian", a, 0.5, axis, keepdims, "linear")


__all__ = [
    # arithmetic
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "fmod", "negative", "positive", "power", "float_power", "square", "reciprocal",
    "sqrt", "cbrt",
    # exponentials and logarithms
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    # trigonometry
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "arctan2", "hypot", "sinc", "deg2rad", "rad2deg", "radians",
    "degrees",
    # signs, extrema, rounding
    "abs", "absolute", "fabs", "sign", "signbit", "copysign", "maximum", "minimum", "fmax",
    "fmin", "heaviside", "clip", "floor", "ceil", "trunc", "rint", "fix", "round", "around",
    # comparisons, logic, classification
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "isfinite", "isnan", "isinf", "where",
    "nan_to_num",
    # creation
    "array", "asarray", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "eye", "identity", "tri", "arange", "linspace", "logspace",
    "meshgrid", "tril", "triu", "diag", "diagflat", "diagonal",
    # reductions and statistics
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "ptp", "argmax",
    "argmin", "any", "all", "average", "median", "quantile", "percentile", "nansum",
    "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd", "nanargmax", "nanargmin",
    "nanmedian", "nanquantile", "nanpercentile", "count_nonzero",
    # more numpy ufuncs and helpers
    "isposinf", "isneginf", "isclose", "allclose", "array_equal", "array_equiv",
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not", "bitwise_invert",
    "divmod", "modf", "ldexp", "conjugate", "conj", "real", "imag", "astype", "select",
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "pow",
    "ZeroWeightsError",
]
