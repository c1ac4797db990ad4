"""Dtypes funcdiff accepts and numpy-2 (NEP 50) promotion, computed in one place.

funcdiff supports boolean, signed and unsigned integer, and floating dtypes.
complex64 and complex128 are supported as *intermediate* values only (they
arise inside ``funcdiff.numpy.fft`` and ``funcdiff.numpy.real/imag/conj/abs``):
``check_dtype`` rejects them unless its caller asks for ``allow_complex=True``,
so transform inputs, ``dtype=`` arguments and casts stay real.
Python scalars are *weak*: ``float32_array * 2.0`` stays float32, as in numpy 2.
``result_type`` is the single function every operation uses to promote; it is
memoised on the (dtype or Python-scalar type) of its arguments, so promotion
costs one dictionary lookup on the hot path.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from funcdiff.errors import DTypeError

float0 = np.dtype([("float0", np.void, 0)])  # dtype of tangents of integer values

SUPPORTED_KINDS = frozenset("biuf")
_COMPLEX_DTYPES = frozenset({np.dtype(np.complex64), np.dtype(np.complex128)})
_SCALAR_STAND_INS = {bool: False, int: 0, float: 0.0, complex: 0j}
default_float = np.dtype(np.float64)
default_int = np.dtype(np.int64)


def check_dtype(dtype: Any, what: str = "value", *, allow_complex: bool = True) -> np.dtype:
    """Return ``dtype`` as a numpy dtype, raising DTypeError if funcdiff cannot use it.

    funcdiff computes with bool, integer, floating and complex (complex64,
    complex128) values; ``allow_complex=False`` is for the places that take
    real values only (a real-only function's ``dtype=``).
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in SUPPORTED_KINDS:
        if allow_complex and dtype in _COMPLEX_DTYPES:
            return dtype
        if dtype.kind == "c" and dtype in _COMPLEX_DTYPES:
            raise DTypeError(
                f"{what} must be real, but has dtype {dtype}. Take the real part "
                "(fnp.real) or the magnitude (fnp.abs) first, or use a real dtype.")
        raise DTypeError(
            f"funcdiff does not support {what} of dtype {dtype}; it supports bool, "
            "integer, floating and complex (complex64, complex128) dtypes. Convert the "
            "input with .astype(float) first.")
    return dtype


def is_float(dtype: np.dtype) -> bool:
    """True for real floating dtypes."""
    return dtype.kind == "f"


def is_complex(dtype: np.dtype) -> bool:
    """True for complex dtypes."""
    return dtype.kind == "c"


def is_inexact(dtype: np.dtype) -> bool:
    """True for floating and complex dtypes: the values that carry tangents."""
    return dtype.kind in "fc"


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype with ``dtype``'s precision: float32 -> complex64, else complex128."""
    return np.dtype(np.complex64) if dtype in _SINGLE else np.dtype(np.complex128)


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a complex dtype's parts (complex64 -> float32); floats map to themselves."""
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


_SINGLE = frozenset({np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)})


def _key(x: Any) -> Any:
    t = type(x)
    if t in _SCALAR_STAND_INS:
        return t
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(x)
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return dtype
    if isinstance(x, (bool, np.bool_)):
        return bool
    if isinstance(x, int):
        return int
    if isinstance(x, float):
        return float
    return np.dtype(x)


@functools.lru_cache(maxsize=None)
def _result_type_of_keys(*keys: Any) -> np.dtype:
    stand_ins = [_SCALAR_STAND_INS.get(k, k) for k in keys]
    if all(isinstance(k, type) for k in keys):  # only Python scalars: numpy's defaults
        stand_ins = [np.asarray(s) for s in stand_ins]
    try:
        dtype = np.result_type(*stand_ins)
    except TypeError as e:
        raise DTypeError(f"funcdiff cannot promote the dtypes {keys}: {e}") from None
    return check_dtype(dtype, allow_complex=True)


def result_type(*args: Any) -> np.dtype:
    """The dtype numpy 2 gives an operation on ``args``; Python scalars are weak.

    Args:
      *args: arrays, tracers, dtypes or Python scalars.

    Returns:
      The promoted ``numpy.dtype``.

    Raises:
      DTypeError: if an argument has a dtype funcdiff does not support.

    >>> import numpy as np
    >>> result_type(np.float32, 2.0)
    dtype('float32')
    >>> result_type(np.arange(3), 0.5)
    dtype('float64')
    """
    return _result_type_of_keys(*[_key(a) for a in args])


def dtype_of(x: Any) -> np.dtype:
    """The dtype funcdiff gives ``x``: a Python float is float64, an int int64."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return dtype
    return result_type(x)
