"""Argument handling shared by funcdiff.numpy's elementwise functions, creation and reductions.

Arguments are converted and promoted with numpy 2's semantics: to one dtype
(``funcdiff.dtypes``; Python scalars are weak), and integer arguments of
float-only functions become the smallest float that holds them (int8 ->
float16, int64 -> float64, as numpy's loop selection does). Keywords funcdiff
does not support (``out=``, ``where=`` on ufuncs, ``initial=``, object or
string dtypes) raise errors naming the function. ``unary_ufunc`` and
``binary_ufunc`` build a numpy-style ufunc, with its docstring, from the
preparation of its arguments and an operation on primitives.

The eager fast path matters: a call on a float numpy array checks one dtype
kind and binds, converting and promoting only when the arguments need it.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import DTypeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._views import distinct
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes


NoValue = object()  # numpy's "argument not given" (None is a meaningful value for some)
PY_SCALARS = (bool, int, float)
_WEAK_SCALARS = PY_SCALARS + (complex,)  # Python scalars that promote weakly (NEP 50)
_HAVE_DTYPES = (np.ndarray, Tracer, np.generic)  # arrays, tracers and numpy scalars
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BOOL, INT8, INT64 = np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.int64)
UINT64 = np.dtype(np.uint64)


# ---------------------------------------------------------------------------
# Argument handling


def fname(name: str) -> str:
    return f"funcdiff.numpy.{name}"


def arg(name: str, x: Any) -> Any:
    """``x`` as an array, tracer, numpy scalar or (weak) Python scalar. Complex values
    pass: they are intermediates (transform inputs are checked to be real elsewhere)."""
    if isinstance(x, _HAVE_DTYPES):
        if x.dtype.kind not in "biuf":
            dtypes.check_dtype(x.dtype, f"the input of {fname(name)}", allow_complex=True)
        return x
    if type(x) in _WEAK_SCALARS:
        return x
    return _util.asarray(x, fname(name))


def _array(name: str, x: Any) -> Any:
    """Like ``arg``, but Python scalars become 0-d numpy arrays (strong dtypes)."""
    x = arg(name, x)
    return np.asarray(x) if type(x) in _WEAK_SCALARS else x


def dtype_arg(name: str, dtype: Any, what: str = "dtype=", *,
               allow_complex: bool = False) -> np.dtype:
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{fname(name)} got {what}{dtype!r}, which is not a dtype") from None
    return dtypes.check_dtype(dtype, f"the {what} argument of {fname(name)}",
                              allow_complex=allow_complex)


def result_dtype(name: str, *args: Any) -> np.dtype:
    try:
        return dtypes.result_type(*args)
    except DTypeError as e:
        raise DTypeError(f"{fname(name)}: {e}") from None


@functools.lru_cache(maxsize=None)
def _float_of(dtype: np.dtype) -> np.dtype:
    """The float dtype numpy computes float-only ufuncs in (int8 -> float16, int64 -> float64)."""
    return dtype if dtype.kind == "f" else np.promote_types(dtype, F16)


def cast(x: Any, dtype: np.dtype) -> Any:
    if type(x) in _WEAK_SCALARS:
        return np.asarray(x, dtype)  # raises OverflowError for out-of-range ints, like numpy
    if x.dtype == dtype:
        return x
    return ew.convert_element_type(x, dtype)


@functools.lru_cache(maxsize=1024)  # bounded: some values come from users (nan_to_num)
def const(value: Any, dtype: np.dtype) -> np.ndarray:
    c = np.asarray(value, dtype)
    c.flags.writeable = False
    return c


def _c(x: Any, value: Any) -> np.ndarray:
    """``value`` as a 0-d constant of ``x``'s dtype (float32 code stays float32)."""
    return const(value, x.dtype)


def shape_of(x: Any) -> tuple[int, ...]:
    return get_aval(x).shape


def float_arg(name: str, x: Any) -> Any:
    """``x`` converted for a float-only function."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        kind = dtype.kind
        if kind == "f":
            return x
        if kind in "biu":
            return ew.convert_element_type(x, _float_of(dtype))
    x = arg(name, x)
    return cast(x, _float_of(result_dtype(name, x)))


def refuse_complex(name: str, x: Any) -> Any:
    """``x`` itself, or a DTypeError naming ``name`` for a complex ``x``: for the
    functions numpy does not define on complex values (floor, cbrt, hypot, ...),
    which must never drop an imaginary part silently."""
    if x.dtype.kind == "c":
        raise DTypeError(
            f"{fname(name)} is not defined for complex values (numpy's {name} neither), got "
            f"{x.dtype}; apply it to funcdiff.numpy.real(z) and imag(z), or to abs(z), as "
            f"your formula needs.")
    return x


def real_arg(name: str, x: Any) -> Any:
    """``x`` converted for a float-only function that refuses complex values."""
    return refuse_complex(name, float_arg(name, x))


def real_num_arg(name: str, x: Any) -> Any:
    """``x`` for a dtype-preserving unary function that refuses complex values."""
    return refuse_complex(name, num_arg(name, x))


def promote_real(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """``promote_float`` for a binary function that refuses complex values."""
    x, y = promote_float(name, x, y)
    return refuse_complex(name, x), y  # (one dtype: checking x checks both)


def promote_int_bool_real(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """``promote_int_bool`` for a binary function that refuses complex values."""
    x, y = promote_int_bool(name, x, y)
    return refuse_complex(name, x), y


def num_arg(name: str, x: Any) -> Any:
    """``x`` for a dtype-preserving unary function (Python scalars get numpy's default dtype)."""
    if isinstance(x, _HAVE_DTYPES) and x.dtype.kind in "biuf":
        return x
    return _array(name, x)


# The Python scalar types that an array of each dtype kind absorbs without changing
# its dtype (numpy 2's weak scalars): a float array takes floats, ints and bools, ...
_ABSORBS = {"f": (float, int, bool), "i": (int, bool), "u": (int, bool), "b": (bool,)}


def _same_or_weak(x: Any, y: Any, kinds: str) -> tuple[Any, Any] | None:
    """The common fast cases of promotion: one dtype already, or an array of a dtype
    in ``kinds`` with a Python scalar it absorbs. None if promotion has work to do."""
    dx, dy = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if not isinstance(dx, (np.dtype, type(None))) or not isinstance(dy, (np.dtype, type(None))):
        return None  # a foreign library's dtype: the general path converts the operands
    if dx is not None:
        if dy is not None:
            if dx == dy and dx.kind in kinds:
                return x, y
        elif dx.kind in kinds and type(y) in _ABSORBS.get(dx.kind, ()):
            return x, dx.type(y)  # a numpy scalar: cheaper to make than a 0-d array
    elif dy is not None and dy.kind in kinds and type(x) in _ABSORBS.get(dy.kind, ()):
        return dy.type(x), y
    return None


def promote(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """``x`` and ``y`` converted to their numpy-2 common dtype."""
    fast = _same_or_weak(x, y, "biuf")
    if fast is not None:
        return fast
    x, y = arg(name, x), arg(name, y)
    dtype = result_dtype(name, x, y)
    return cast(x, dtype), cast(y, dtype)


def promote_float(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """``x`` and ``y`` in the float dtype of a float-only binary function."""
    fast = _same_or_weak(x, y, "f")
    if fast is not None:
        return fast
    x, y = arg(name, x), arg(name, y)
    dtype = _float_of(result_dtype(name, x, y))
    return cast(x, dtype), cast(y, dtype)


def promote_divide(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """Like ``promote_float``, but integers divide in float64 (numpy's divide loops)."""
    fast = _same_or_weak(x, y, "f")
    if fast is not None:
        return fast
    x, y = arg(name, x), arg(name, y)
    dtype = result_dtype(name, x, y)
    if dtype.kind not in "fc":
        dtype = F64
    return cast(x, dtype), cast(y, dtype)


def promote_int_bool(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """Promote; booleans become int8, as numpy's integer loops take them."""
    x, y = promote(name, x, y)
    if x.dtype == BOOL:
        return cast(x, INT8), cast(y, INT8)
    return x, y


def promote_compare(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    try:
        return promote(name, x, y)
    except OverflowError:
        # numpy 2 compares a Python int outside the array's integer range exactly.
        x, y = [np.asarray(v) if type(v) is int else v for v in (x, y)]
        return promote(name, x, y)


def bool_arg(name: str, x: Any) -> Any:
    x = _array(name, x)
    return x if x.dtype == BOOL else ew.ne(x, _c(x, 0))


def check_broadcast(name: str, *args: Any) -> tuple[int, ...]:
    """The broadcast shape of ``args``; ShapeError naming ``name`` and the shapes if none."""
    return broadcast_shapes(fname(name), *[shape_of(a) for a in args])


def full(x_or_shape: Any, value: Any, dtype: np.dtype) -> Any:
    """A constant of ``x``'s shape: staged as one broadcast for tracers, numpy otherwise."""
    if isinstance(x_or_shape, tuple):
        return np.full(x_or_shape, value, dtype)
    shape = shape_of(x_or_shape)
    if isinstance(x_or_shape, Tracer):
        return structural.full(shape, value, dtype)
    return np.full(shape, value, dtype)


def reject_out(name: str, out: Any) -> None:
    """An error for any ``out`` but None (or, for the two-output functions
    divmod, modf and frexp, a tuple of Nones)."""
    if out is not None and not (type(out) is tuple and all(o is None for o in out)):
        raise UnsupportedNumpyError(
            f"{fname(name)} does not support the argument out= (funcdiff arrays are "
            f"immutable and its functions are pure); call it without out= and use the "
            f"returned value.")


def reject_where(name: str, where: Any) -> None:
    if where is not True and where is not NoValue:
        raise UnsupportedNumpyError(
            f"{fname(name)} does not support the argument where=; compute on all "
            f"elements and select afterwards with funcdiff.numpy.where(mask, result, other).")


def reject_initial(name: str, initial: Any) -> None:
    if initial is not NoValue:
        raise UnsupportedNumpyError(
            f"{fname(name)} does not support the argument initial=; combine the result "
            f"with the initial value yourself, e.g. funcdiff.numpy.maximum(result, initial).")


def ufunc_options(name: str, args: tuple, out: Any, where: Any, dtype: Any) -> list:
    """Validate the ufunc keywords; ``dtype=`` casts the inputs (numpy's loop dtype)."""
    reject_out(name, out)
    reject_where(name, where)
    if dtype is None:
        return list(args)
    dtype = dtype_arg(name, dtype)
    return [cast(arg(name, a), dtype) for a in args]


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


def _caller_module() -> str:
    """The module calling the ufunc factory: the ufunc belongs to it, as a namedtuple class
    belongs to the module that creates it, so pickle, help() and inspect find it there."""
    return sys._getframe(2).f_globals.get("__name__", __name__)


def unary_ufunc(name: str, prepare: Callable, op: Callable, summary: str,
                 example: str = "") -> Callable:
    floats_pass = prepare is float_arg  # its commonest case, a float input, checked inline

    def ufunc(x, /, out=None, *, where=True, dtype=None):
        if out is not None or where is not True or dtype is not None:
            (x,) = ufunc_options(name, (x,), out, where, dtype)
        if floats_pass:
            kind = getattr(getattr(x, "dtype", None), "kind", None)
            result = op(x if kind == "f" else prepare(name, x))
        else:
            result = op(prepare(name, x))
        return distinct(result) if result is x else result  # numpy's ufuncs never alias
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__module__ = _caller_module()
    ufunc.__doc__ = _doc(name, summary, example)
    return ufunc


def binary_ufunc(name: str, prepare: Callable, op: Callable, summary: str,
                  example: str = "") -> Callable:
    def ufunc(x1, x2, /, out=None, *, where=True, dtype=None):
        if out is not None or where is not True or dtype is not None:
            x1, x2 = ufunc_options(name, (x1, x2), out, where, dtype)
        a, b = prepare(name, x1, x2)
        try:
            return op(a, b)
        except ValueError:
            check_broadcast(name, a, b)  # a ShapeError naming this function and the shapes
            raise
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__module__ = _caller_module()
    ufunc.__doc__ = _doc(name, summary, example, nin=2)
    return ufunc


def no_bool(name: str, x: Any) -> Any:
    if x.dtype == BOOL:
        raise DTypeError(f"{fname(name)} does not accept booleans (numpy neither); use "
                         f"funcdiff.numpy.logical_not or convert with astype(int) first.")
    return x


__all__: list[str] = []
