"""Comparisons, logic, classification and selection of funcdiff.numpy.

Comparisons promote like numpy 2 (a Python int outside an integer array's
range still compares exactly); the logical functions take the truth of any
numeric argument, the bitwise ones integers and booleans only. ``isnan``,
``isinf`` and ``isfinite`` of integer arrays are constants; a complex value
is NaN (infinite) when either part is, finite when both parts are. ``where`` and
``select`` choose elementwise and are differentiable in the chosen values.
``isclose`` compares elementwise; ``allclose``, ``array_equal`` and
``array_equiv`` reduce the comparison to one Python bool outside transforms.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.numpy._arithmetic import add, multiply, subtract
from funcdiff.numpy._reductions import finish, all
from funcdiff.numpy._nonzero import nonzero
from funcdiff.numpy._rounding import absolute
from funcdiff.numpy._ufunc_support import (BOOL, PY_SCALARS, arg, _array, binary_ufunc,
                                           bool_arg, _c, cast, check_broadcast, fname, full,
                                           NoValue, num_arg, promote, promote_compare,
                                           reject_out, result_dtype, shape_of, unary_ufunc)
from funcdiff.primitives import complex_ops
from funcdiff.primitives import elementwise as ew
from funcdiff.numpy._views import returns_copies


# ---------------------------------------------------------------------------
# Comparisons, logic and classification

equal = binary_ufunc("equal", promote_compare, ew.eq, "Elementwise ``x1 == x2``.")
not_equal = binary_ufunc("not_equal", promote_compare, ew.ne, "Elementwise ``x1 != x2``.")
less = binary_ufunc("less", promote_compare, ew.lt, "Elementwise ``x1 < x2``.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.less(np.array([1, 3]), 2)
array([ True, False])""")
less_equal = binary_ufunc("less_equal", promote_compare, ew.le, "Elementwise ``x1 <= x2``.")
greater = binary_ufunc("greater", promote_compare, ew.gt, "Elementwise ``x1 > x2``.")
greater_equal = binary_ufunc("greater_equal", promote_compare, ew.ge,
                              "Elementwise ``x1 >= x2``.")


def _bool_pair(name, x, y):
    return bool_arg(name, x), bool_arg(name, y)


logical_and = binary_ufunc("logical_and", _bool_pair, ew.and_,
                            "Elementwise truth of ``x1 and x2``.")
logical_or = binary_ufunc("logical_or", _bool_pair, ew.or_,
                           "Elementwise truth of ``x1 or x2``.")
logical_xor = binary_ufunc("logical_xor", _bool_pair, ew.xor,
                            "Elementwise truth of ``x1 xor x2``.")
logical_not = unary_ufunc("logical_not", bool_arg, ew.not_, "Elementwise truth of ``not x``.")


def _parts(x, test, combine):
    """``test`` of a complex ``x``'s real and imaginary parts, joined by ``combine``."""
    return combine(test(complex_ops.real(x)), test(complex_ops.imag(x)))


def _isfinite(x):
    if x.dtype.kind == "c":
        return _parts(x, _isfinite, ew.and_)
    return ew.is_finite(x) if x.dtype.kind == "f" else full(x, True, BOOL)


def _isnan(x):
    if x.dtype.kind == "c":
        return _parts(x, _isnan, ew.or_)
    return ew.ne(x, x) if x.dtype.kind == "f" else full(x, False, BOOL)


def _isinf(x):
    if x.dtype.kind == "c":
        return _parts(x, _isinf, ew.or_)
    return ew.eq(ew.abs(x), _c(x, np.inf)) if x.dtype.kind == "f" else full(x, False, BOOL)


isfinite = unary_ufunc("isfinite", num_arg, _isfinite,
                        "Elementwise test for values that are neither inf nor NaN.")
isnan = unary_ufunc("isnan", num_arg, _isnan, "Elementwise test for NaN.", """
>>> import funcdiff.numpy as fnp, numpy as np
>>> fnp.isnan(np.array([1., np.nan]))
array([False,  True])""")
isinf = unary_ufunc("isinf", num_arg, _isinf, "Elementwise test for positive or negative "
                                                "infinity.")


def where(condition, x=NoValue, y=NoValue, /, *, size=None, fill_value=None):
    """Choose elements of ``x`` where ``condition`` holds and of ``y`` elsewhere.

    Like ``numpy.where``: the three arguments broadcast together and ``x`` and
    ``y`` are promoted to one dtype. The result is differentiable in ``x`` and
    ``y``. With only ``condition`` it returns the indices of its nonzero
    elements, whose number depends on the values, so the condition must be
    concrete (not traced by jit or make_jaxpr), unless ``size`` fixes the number
    (JAX's form: see ``nonzero``).

    Args:
      condition: array_like, converted to bool.
      x, y: array_like; give both or neither.
      size, fill_value: one-argument form only: return exactly ``size`` indices
        per axis, padded with ``fill_value`` (default 0), as ``nonzero`` does.

    Returns:
      The selected array, or a tuple of index arrays for one argument.

    Raises:
      ConcretizationError: one-argument form on a traced condition.
      InvalidArgumentError: only one of ``x`` and ``y`` given.
      ShapeError: if the shapes do not broadcast.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.where(np.array([True, False]), np.array([1., 2.]), 0.)
    array([1., 0.])
    >>> fnp.where(np.array([0, 3, 0, 5]), size=3, fill_value=-1)
    (array([ 1,  3, -1]),)
    """
    if size is not None or fill_value is not None:
        if x is not NoValue or y is not NoValue:
            raise InvalidArgumentError(
                "funcdiff.numpy.where: size= and fill_value= belong to the one-argument form "
                "where(condition, size=...), which returns indices; drop them with x and y.")
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is NoValue and y is NoValue:
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
    if x is NoValue or y is NoValue:
        raise InvalidArgumentError(
            "funcdiff.numpy.where needs either both x and y or neither (got only one)")
    condition = bool_arg("where", condition)
    x, y = promote("where", x, y)
    try:
        return ew.select(condition, x, y)
    except ValueError:
        check_broadcast("where", condition, x, y)
        raise


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
        if c.dtype != BOOL:
            raise DTypeError(f"funcdiff.numpy.select needs boolean conditions, got {c.dtype}")
    choices = [_array("select", c) for c in choicelist] + [arg("select", default)]
    dtype = result_dtype("select", *choices)
    result = cast(choices[-1], dtype)
    for cond, choice in zip(reversed(conds), reversed(choices[:-1])):
        result = where(cond, cast(choice, dtype), result)
    return result


@returns_copies
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by ``nan`` and infinities by large finite numbers (``numpy.nan_to_num``).

    Infinities become the largest finite values of the dtype unless ``posinf`` /
    ``neginf`` are given; integers and booleans are returned unchanged. The
    derivative is 1 where ``x`` is finite and 0 elsewhere.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.nan_to_num(np.array([np.nan, 1., -np.inf]), neginf=-9.)
    array([ 0.,  1., -9.])
    """
    x = num_arg("nan_to_num", x)
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
    reject_out("isposinf", out)
    x = num_arg("isposinf", x)
    return ew.eq(x, _c(x, np.inf)) if x.dtype.kind == "f" else full(x, False, BOOL)


def isneginf(x, out=None):
    """Elementwise test for negative infinity (like ``numpy.isneginf``)."""
    reject_out("isneginf", out)
    x = num_arg("isneginf", x)
    return ew.eq(x, _c(x, -np.inf)) if x.dtype.kind == "f" else full(x, False, BOOL)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|``, infinities equal to themselves.

    Like ``numpy.isclose`` (``b`` is compared in at least its float dtype).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.isclose(np.array([1.0, 1.1]), 1.0)
    array([ True, False])
    """
    a, b = arg("isclose", a), arg("isclose", b)
    if type(b) is complex:
        b = _array("isclose", b)
    if type(b) in PY_SCALARS:
        b = float(b)
    elif b.dtype.kind not in "fc":
        b = cast(b, result_dtype("isclose", b, 1.0))
    near = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    result = logical_or(logical_and(near, isfinite(b)), equal(a, b))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(a), isnan(b)))
    return finish(result, (), False)


def _python_bool(x: Any) -> Any:
    """numpy's ``allclose``/``array_equal`` return Python bools; traced values stay traced."""
    return x if isinstance(x, Tracer) else builtins.bool(x)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (``all(isclose(...))``, like ``numpy.allclose``)."""
    return _python_bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """Whether two arrays have the same shape and elements (like ``numpy.array_equal``)."""
    a1, a2 = _array("array_equal", a1), _array("array_equal", a2)
    if shape_of(a1) != shape_of(a2):
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return _python_bool(all(same))


def array_equiv(a1, a2):
    """Whether two arrays are equal after broadcasting (like ``numpy.array_equiv``)."""
    a1, a2 = _array("array_equiv", a1), _array("array_equiv", a2)
    try:
        check_broadcast("array_equiv", a1, a2)
    except ShapeError:
        return False
    return _python_bool(all(equal(a1, a2)))


def _bitwise_pair(name, x, y):
    x, y = promote(name, x, y)
    if x.dtype.kind not in "biu":
        raise DTypeError(f"{fname(name)} needs integer or boolean arguments, got "
                         f"{x.dtype}; use logical_and/logical_or/logical_xor on comparisons.")
    return x, y


def _integral_arg(name, x):
    x = num_arg(name, x)
    if x.dtype.kind not in "biu":
        raise DTypeError(f"{fname(name)} needs integer or boolean arguments, got "
                         f"{x.dtype}; use logical_not on comparisons.")
    return x


bitwise_and = binary_ufunc("bitwise_and", _bitwise_pair, ew.and_,
                            "Elementwise bitwise and (logical and of booleans).")
bitwise_or = binary_ufunc("bitwise_or", _bitwise_pair, ew.or_,
                           "Elementwise bitwise or (logical or of booleans).")
bitwise_xor = binary_ufunc("bitwise_xor", _bitwise_pair, ew.xor,
                            "Elementwise bitwise exclusive or.")
invert = unary_ufunc("invert", _integral_arg, ew.not_,
                      "Elementwise bitwise not (logical not of booleans).")
bitwise_not = bitwise_invert = invert


__all__ = [
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "isfinite", "isnan", "isinf", "where",
    "nan_to_num", "isposinf", "isneginf", "isclose", "allclose", "array_equal", "array_equiv",
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not", "bitwise_invert",
    "select",
]
