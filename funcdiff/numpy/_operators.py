"""Tracer operators and array methods, each forwarding to funcdiff.numpy.

The arithmetic and comparison operators, indexing (``x[idx]``, ``x.at[idx]``)
and the common ndarray methods and attributes (``sum``, ``reshape``, ``T``,
``astype``, ``real``, ...), each forwarding to the ``funcdiff.numpy`` function
of the same meaning, so promotion is numpy 2's (``float32 tracer * 2.0`` stays
float32). Functions are looked up on first call, with fallbacks when
funcdiff.numpy spells one differently (``divide`` for ``true_divide``);
``&``, ``|``, ``^``, ``~`` on booleans are the logical functions. ``_interop``
installs these on ``Tracer``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.numpy import _shape, _util
from funcdiff.numpy._indexing import IndexUpdateHelper, getitem
from funcdiff.numpy._numpy_dispatch import _fnp
from funcdiff.numpy._tracer_conversion import unsupported
from funcdiff.primitives import elementwise


# ---------------------------------------------------------------------------
# Operators and methods

# operator suffix -> funcdiff.numpy function (reflected variants swap the operands)
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                "gt": "greater", "ge": "greater_equal"}
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}
# function names tried when the first is missing from funcdiff.numpy
FALLBACKS = {"true_divide": ("divide",), "remainder": ("mod",), "power": ("pow",),
              "absolute": ("abs",), "invert": ("logical_not",), "bitwise_and": ("logical_and",),
              "bitwise_or": ("logical_or",), "bitwise_xor": ("logical_xor",),
              "left_shift": ("bitwise_left_shift",), "right_shift": ("bitwise_right_shift",),
              "round": ("around",)}
# Array methods: name -> funcdiff.numpy function taking the array first, same signature.
METHODS = {name: name for name in (
    "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all",
    "dot", "swapaxes", "clip", "cumsum", "cumprod", "round", "sort", "argsort", "repeat",
    "take", "trace", "diagonal", "squeeze", "ravel")}
METHODS["flatten"] = "ravel"

resolved: dict[str, Callable] = {}


def resolve(name: str, what: str) -> Callable:
    fn = resolved.get(name)
    if fn is None:
        fnp = _fnp()
        for candidate in (name,) + FALLBACKS.get(name, ()):
            fn = getattr(fnp, candidate, None)
            if fn is not None:
                break
        else:
            raise unsupported(what, f"(funcdiff.numpy.{name} does not exist.)")
        resolved[name] = fn
    return fn


LOGICAL_OF = {"bitwise_and": "logical_and", "bitwise_or": "logical_or",
               "bitwise_xor": "logical_xor", "invert": "logical_not"}


def is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_


def _bitwise(name: str, what: str) -> Callable:
    """``&``, ``|``, ``^``, ``~``: the bitwise function if funcdiff.numpy has it, else the
    logical one for booleans (the same thing there) and an error for integers."""
    def op(*args):
        fn = getattr(_fnp(), name, None)
        if fn is not None:
            return fn(*args)
        if all(is_bool(a) for a in args):
            return resolve(LOGICAL_OF[name], what)(*args)
        raise unsupported(what, f"(funcdiff.numpy.{name} does not exist; on booleans the "
                                 f"operator works as {LOGICAL_OF[name]}.)")
    return op


FLOAT_SCALAR_OPS = {"add": "add", "subtract": "sub", "multiply": "mul"}


def binary(name: str, dunder: str, reflected: bool) -> Callable:
    what = f"the operator {dunder}"
    if name in LOGICAL_OF:
        fn = _bitwise(name, what)
        method = (lambda self, other: fn(other, self)) if reflected else (
            lambda self, other: fn(self, other))
        method.__name__ = dunder
        return method
    fast = FLOAT_SCALAR_OPS.get(name)
    if fast is not None:
        # A float array with a Python float, the commonest operator call: numpy 2
        # keeps the array's dtype, so the primitive applies directly. So it does with
        # a float array or tracer of the same dtype (a layer's bias). Should the
        # primitive fail (shapes that do not broadcast), the general path runs and
        # reports it as funcdiff.numpy's function does.
        op = getattr(elementwise, fast)
        if reflected:
            def method(self, other):  # (an array on the left is numpy's: __array_ufunc__)
                if type(other) is float:
                    dtype = self.dtype
                    if dtype.kind == "f":
                        return op(dtype.type(other), self)
                return resolve(name, what)(other, self)
        else:
            def method(self, other):
                t = type(other)
                if t is float:
                    dtype = self.dtype
                    if dtype.kind == "f":
                        return op(self, dtype.type(other))
                elif ((t is type(self) or t is np.ndarray) and other.dtype is self.dtype
                      and other.dtype.kind == "f"):
                    try:
                        return op(self, other)
                    except Exception:  # noqa: BLE001  reported by the general path
                        pass
                return resolve(name, what)(self, other)
    elif reflected:
        def method(self, other):
            return resolve(name, what)(other, self)
    else:
        def method(self, other):
            return resolve(name, what)(self, other)
    method.__name__ = dunder
    method.__doc__ = f"``{dunder}`` via funcdiff.numpy.{name}."
    return method


def unary(name: str, dunder: str) -> Callable:
    bitwise = _bitwise(name, f"the operator {dunder}") if name in LOGICAL_OF else None

    def method(self):
        if bitwise is not None:
            return bitwise(self)
        return resolve(name, dunder)(self)
    method.__name__ = dunder
    return method


def array_method(method_name: str, fn_name: str) -> Callable:
    def method(self, *args, **kwargs):
        return resolve(fn_name, f"the array method .{method_name}()")(self, *args, **kwargs)
    method.__name__ = method_name
    method.__doc__ = f"``x.{method_name}(...)`` is ``funcdiff.numpy.{fn_name}(x, ...)``."
    return method


def reshape_method(self, *shape, order="C", **kwargs):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not shape and "shape" in kwargs:
        shape = kwargs.pop("shape")
    return _shape.reshape(self, shape, order=order, **kwargs)


def transpose_method(self, *axes):
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _shape.transpose(self, axes if axes else None)


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """``x.astype(dtype)``: a cast (a copy when the dtype already matches, as numpy's)."""
    out = _util.cast(self, dtypes.check_dtype(dtype, "the dtype of astype", allow_complex=True))
    return out.fresh_copy() if copy and out is self else out


def identity(self, *args, **kwargs):
    return self


def copy_method(self, *args, **kwargs):
    """``x.copy()``: a new tracer, so that a write to either leaves the other alone."""
    return self.fresh_copy()


def real(self):
    return _fnp().real(self)


def imag(self):
    return _fnp().imag(self)


def conj(self):
    return _fnp().conjugate(self)


def nonzero(self, *, size=None, fill_value=None):
    """Indices of the non-zero elements (``fnp.nonzero``): a concrete value, or ``size``."""
    return _fnp().nonzero(self, size=size, fill_value=fill_value)


def _getitem(self, idx):
    return getitem(self, idx)


def at(self):
    """Functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``, ``.min(v)``,
    ``.max(v)``, ``.get()``."""
    return IndexUpdateHelper(self)


def swap_last_two(self):
    return _shape.swapaxes(self, -1, -2)
