"""funcdiff's namespace for the Python array API standard (version 2024.12).

A funcdiff tracer's ``__array_namespace__()`` returns this module, so a library
written against the standard (scipy with ``SCIPY_ARRAY_API=1``, scikit-learn
with ``array_api_dispatch=True``, array-api-extra) computes with funcdiff
operations when it meets a traced value, and is differentiated, batched and
compiled like funcdiff.numpy code.

- Most names are funcdiff.numpy's own: numpy 2 follows the standard, and so
  does funcdiff.numpy.
- Where the standard and numpy differ, this module has the standard's version:
  ``sort``/``argsort`` (``descending``, stable by default), ``can_cast`` (no
  casts between kinds), ``finfo`` and ``iinfo`` (which take arrays too and give
  Python numbers), ``count_nonzero`` (always an array). The ``linalg`` and ``fft``
  extensions are funcdiff.numpy's.
- Array-API libraries fill arrays in place (``out = xp.zeros(n);
  out[1:] = ...``, as scipy's ``rosen_hess`` does), so inside a transform the
  creation functions return tracers, which accept ``x[idx] = v`` (see
  ``funcdiff.core.Tracer``), and ``asarray(x, copy=True)`` a fresh copy.
- ``__array_namespace_info__()`` describes the namespace. Its capabilities are
  what holds under every transform: no boolean indexing and no data-dependent
  output shapes, since under ``jit`` a mask's count is unknown (both work
  eagerly).

>>> import funcdiff as fd, numpy as np
>>> def loss(x):
...     xp = x.__array_namespace__()
...     return xp.sum(xp.sort(x, descending=True)[:2] ** 2)
>>> fd.grad(loss)(np.array([1.0, 3.0, 2.0])).tolist()
[0.0, 6.0, 4.0]
"""

from __future__ import annotations

import builtins
import functools
from typing import Any, NamedTuple

import numpy as np

from funcdiff import dtypes
import funcdiff.numpy as fnp
from funcdiff.core import Tracer, get_aval, innermost_constant
from funcdiff.numpy import fft  # noqa: F401  the standard's fft extension
from funcdiff.numpy import linalg  # noqa: F401  the standard's linalg extension
from funcdiff.numpy import (  # noqa: F401  the standard's names that numpy 2 shares
    abs, acos, acosh, add, all, any, argmax, argmin, asin, asinh, astype,
    atan, atan2, atanh, bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_or,
    bitwise_right_shift, bitwise_xor, broadcast_arrays, broadcast_shapes, broadcast_to, ceil,
    clip, concat, conj, copysign, cos, cosh, cumulative_prod, cumulative_sum,
    diff, divide, e, equal, exp, expand_dims, expm1, flip, floor,
    floor_divide, greater, greater_equal, hypot, imag, inf, isfinite, isin,
    isinf, isnan, less, less_equal, log, log10, log1p, log2, logaddexp, logical_and,
    logical_not, logical_or, logical_xor, matmul, matrix_transpose, max, maximum, mean,
    meshgrid, min, minimum, moveaxis, multiply, nan, negative, newaxis, nextafter, nonzero,
    not_equal, permute_dims, pi, positive, pow, prod, real, reciprocal,
    remainder, repeat, reshape, result_type, roll, round, searchsorted, sign, signbit, sin,
    sinh, sqrt, square, squeeze, stack, std, subtract, sum, take, take_along_axis, tan, tanh,
    tensordot, tile, tril, triu, trunc, unique_all, unique_counts, unique_inverse,
    unique_values, unstack, var, vecdot, where)
from funcdiff.numpy._sorting import argsort as _numpy_argsort
from funcdiff.numpy._sorting import sort as _numpy_sort

__array_api_version__ = "2024.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

bool = np.bool_  # noqa: A001  the standard's dtype names
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
isdtype = np.isdtype
from_dlpack = np.from_dlpack  # its input is another library's array, never a traced value


def _dtype(x: Any) -> np.dtype:
    """A dtype, or an array's (tracers included)."""
    if isinstance(x, (type, np.dtype, str)):
        return np.dtype(x)
    return get_aval(x).dtype


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the standard's rules.

    The standard's lattice has no edges between kinds: booleans cast only to
    bool and integers never to floating dtypes (numpy allows both: int8 to
    float32 is safe there).

    >>> can_cast(float32, float64), can_cast(float64, int32), can_cast(int32, float64)
    (True, False, False)
    """
    source, target = _dtype(from_), np.dtype(to)
    if source.kind == "b" and target.kind != "b":
        return False
    if source.kind in "iu" and target.kind in "fc":
        return False
    return builtins.bool(np.can_cast(source, target))


class finfo_object(NamedTuple):  # noqa: N801  the standard's name
    """What ``finfo`` returns: the standard's fields, as Python floats."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


class iinfo_object(NamedTuple):  # noqa: N801
    """What ``iinfo`` returns: the standard's fields, as Python ints."""
    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:  # noqa: A002  the standard's parameter name
    """Machine limits of a floating dtype, or of an array's dtype (Python floats, as the
    standard asks; ``numpy.finfo`` gives numpy scalars). For a complex dtype they are its
    real part's.

    >>> finfo(float32).eps == float(np.finfo(np.float32).eps), finfo(complex128).dtype
    (True, dtype('float64'))
    """
    info = np.finfo(_dtype(type))
    return finfo_object(int(info.bits), float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), np.dtype(info.dtype))


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002
    """Machine limits of an integer dtype, or of an array's dtype.

    >>> iinfo(int8).max, iinfo(uint8).min
    (127, 0)
    """
    info = np.iinfo(_dtype(type))
    return iinfo_object(int(info.bits), int(info.max), int(info.min), np.dtype(info.dtype))


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    """The number of nonzero elements of ``x``, over ``axis`` (an array, also for a total:
    numpy's ``count_nonzero`` returns a Python int there).

    >>> count_nonzero(np.array([0.0, 1.5, -2.0]))
    array(2)
    """
    return fnp.asarray(fnp.count_nonzero(x, axis=axis, keepdims=keepdims))


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """``x`` sorted along ``axis``, ascending or (``descending=True``) descending.

    A descending stable sort keeps equal elements in their original order, as
    the standard asks; the derivative flows to the element each output came from.

    >>> sort(np.array([2.0, 3.0, 1.0]), descending=True).tolist()
    [3.0, 2.0, 1.0]
    """
    if not descending:
        return _numpy_sort(x, axis=axis, stable=stable)
    return take_along_axis(x, argsort(x, axis=axis, descending=True, stable=stable),
                           axis=axis)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """Indices that sort ``x`` along ``axis`` (ties in their original order).

    Descending order sorts the reversed axis ascending, so that equal elements
    keep their original order, and maps the indices back.

    >>> argsort(np.array([1.0, 3.0, 1.0]), descending=True).tolist()
    [1, 0, 2]
    """
    if not descending:
        return _numpy_argsort(x, axis=axis, stable=stable)
    n = get_aval(x).shape[axis]
    return (n - 1) - flip(_numpy_argsort(flip(x, axis=axis), axis=axis, stable=stable),
                          axis=axis)


class ArrayNamespaceInfo:
    """What ``__array_namespace_info__()`` returns: devices, dtypes and capabilities."""

    __slots__ = ()

    def capabilities(self) -> dict:
        # What holds under every transform; eagerly both work.
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list:
        return ["cpu"]

    def default_dtypes(self, *, device: Any = None) -> dict:
        return {"real floating": dtypes.default_float,
                "complex floating": dtypes.complex_dtype(dtypes.default_float),
                "integral": dtypes.default_int, "indexing": np.dtype(np.intp)}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict:
        return np.__array_namespace_info__().dtypes(kind=kind)


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The namespace's inspection object (devices, dtypes, capabilities).

    >>> __array_namespace_info__().default_dtypes()["real floating"]
    dtype('float64')
    """
    return ArrayNamespaceInfo()


# ---------------------------------------------------------------------------
# Creation: inside a transform, the results are tracers (which take writes)


def _in_trace(out: Any) -> Any:
    return out if isinstance(out, Tracer) else innermost_constant(out)


def _creation(make: Any) -> Any:
    """``make`` (a funcdiff.numpy creation function) returning tracers inside transforms."""
    @functools.wraps(make)
    def create(*args: Any, **kwargs: Any) -> Any:
        return _in_trace(make(*args, **kwargs))
    return create


zeros, ones, empty, full = map(_creation, (fnp.zeros, fnp.ones, fnp.empty, fnp.full))
zeros_like, ones_like, empty_like, full_like = map(
    _creation, (fnp.zeros_like, fnp.ones_like, fnp.empty_like, fnp.full_like))
eye, arange, linspace = map(_creation, (fnp.eye, fnp.arange, fnp.linspace))


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    """``obj`` as an array of this namespace (the standard's ``asarray``).

    Inside a transform the namespace's arrays are tracers, so a numpy array or
    a list becomes a constant tracer: array-API libraries then see one
    namespace (they refuse a mix of numpy arrays and tracers). ``copy=True``
    gives a copy, which libraries then update in place.

    >>> import funcdiff as fd
    >>> def f(x):
    ...     y = asarray(x, copy=True)
    ...     y[0] = 0.0
    ...     return (y * x).sum()
    >>> fd.grad(f)(np.array([3.0, 2.0])).tolist()
    [0.0, 4.0]
    """
    out = fnp.asarray(obj, dtype=dtype, device=device, copy=copy)
    if isinstance(out, Tracer):
        return out.fresh_copy() if copy else out
    return innermost_constant(out)
