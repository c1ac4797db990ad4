"""Argument handling of funcdiff.numpy.fft: numpy's rules, checked once.

Every transform and helper of ``funcdiff.numpy.fft`` turns its arguments into
what the ``fft`` primitive needs here: the input as an array or tracer of a
supported dtype (complex included), ``norm`` as "backward", "ortho" or
"forward" (``FFTNormError`` otherwise), ``out=`` rejected, real input cast to
the float numpy 2 transforms it in (or made complex), ``s``/``axes`` resolved
to non-negative axes and transform sizes, and each axis cropped or zero-padded
to its size. Errors name the public function (``funcdiff.numpy.fft.<name>``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import (AxisError, DTypeError, FunctionalDiffError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.numpy import _util
from funcdiff.primitives import complex_ops, slicing
from funcdiff.primitives import elementwise as ew

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


class FFTNormError(FunctionalDiffError, ValueError):
    """``norm`` is not None, "backward", "ortho" or "forward" (numpy raises ValueError)."""


def fname(name: str) -> str:
    return f"funcdiff.numpy.fft.{name}"


def array(name: str, a: Any, min_rank: int = 1) -> Any:
    """``a`` as a tracer or numpy array of a dtype funcdiff supports (complex included)."""
    if not isinstance(a, (Tracer, np.ndarray)):
        if isinstance(a, (list, tuple)):
            a = _util.asarray(a, fname(name)) if _has_tracer(a) else np.asarray(a)
        else:
            a = np.asarray(a)
    if not isinstance(a, Tracer):
        dtypes.check_dtype(a.dtype, f"the input of {fname(name)}", allow_complex=True)
    if get_aval(a).ndim < min_rank:
        raise ShapeError(f"{fname(name)} needs an array of rank >= 1, got a 0-d value.")
    return a


def _has_tracer(seq) -> bool:
    return any(isinstance(e, Tracer) or (isinstance(e, (list, tuple)) and _has_tracer(e))
               for e in seq)


def _norm(name: str, norm: Any) -> str:
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise FFTNormError(f"{fname(name)} got norm={norm!r}; it must be None, 'backward', "
                           "'ortho' or 'forward'.") from None


def reject_out(name: str, out: Any) -> None:
    if out is not None:
        raise UnsupportedNumpyError(
            f"{fname(name)} does not support out= (funcdiff arrays are immutable); call "
            "it without out= and use the returned value.")


def real_float(name: str, x: Any) -> Any:
    """``x`` as the float numpy 2 transforms it in: float32 stays, float16 -> float32,
    integers and booleans -> float64."""
    dtype = get_aval(x).dtype
    if dtypes.is_complex(dtype):
        raise DTypeError(f"{fname(name)} needs real input, but got {dtype}; take "
                         "funcdiff.numpy.real of it, or use fft for complex input.")
    target = dtype if dtype in (_F32, _F64) else (_F32 if dtype == np.float16 else _F64)
    return x if dtype == target else ew.convert_element_type(x, target)


def as_complex(name: str, x: Any) -> Any:
    """``x`` as complex64/complex128: real input gets a zero imaginary part."""
    if dtypes.is_complex(get_aval(x).dtype):
        return x
    x = real_float(name, x)
    return complex_ops.complex(x, np.zeros((), get_aval(x).dtype))


def axes_and_sizes(name: str, a: Any, s: Any, axes: Any, inverse_real: bool):
    """numpy's rules for ``s`` and ``axes``: the transformed axes (non-negative) and
    the transform size of each (of the real signal for inverse real transforms)."""
    shape = get_aval(a).shape
    ndim = len(shape)
    if axes is not None:
        axes = as_list(axes)
    if s is None:
        axes = list(range(ndim)) if axes is None else axes
        sizes = [None] * len(axes)
    else:
        sizes = as_list(s)
        if axes is None:
            axes = list(range(-len(sizes), 0))
        if len(sizes) != len(axes):
            raise ShapeError(f"{fname(name)} got s={s!r} and axes={axes!r} of different "
                             "lengths; give one size per axis.")
    norm_axes = []
    for ax in axes:
        try:
            ax = operator.index(ax)
        except TypeError:
            raise AxisError(f"{fname(name)}: axes must be integers, got {ax!r}") from None
        if not -ndim <= ax < ndim:
            raise AxisError(f"{fname(name)}: axis {ax} is out of range for an array of rank "
                            f"{ndim}.")
        norm_axes.append(ax % ndim)
    if not norm_axes:
        raise AxisError(f"{fname(name)} needs at least one axis to transform.")
    out_sizes = []
    for i, (ax, n) in enumerate(zip(norm_axes, sizes)):
        if n is None:  # the default of the one-axis transform
            n = shape[ax]
            if inverse_real and i == len(norm_axes) - 1:
                n = 2 * (shape[ax] - 1)
        elif isinstance(n, (int, np.integer)) and n == -1:  # numpy 2: the input's size
            n = shape[ax]
        try:
            n = operator.index(n)
        except TypeError:
            raise ShapeError(f"{fname(name)} needs integer transform sizes, got {n!r}") from None
        if n < 1:
            raise ShapeError(f"{fname(name)}: invalid number of FFT data points ({n}) along "
                             f"axis {ax}; it must be at least 1.")
        out_sizes.append(n)
    return norm_axes, out_sizes


def as_list(v: Any) -> list:
    """An int (or numpy integer) as a one-element list, a sequence as a list."""
    try:
        return [operator.index(v)]
    except TypeError:
        return list(v)


def fit(x: Any, axis: int, size: int) -> Any:
    """``x`` cropped or zero-padded at the end of ``axis`` to ``size`` (numpy's n=)."""
    shape = get_aval(x).shape
    if shape[axis] == size:
        return x
    if shape[axis] > size:
        limits = shape[:axis] + (size,) + shape[axis + 1:]
        return slicing.slice(x, start_indices=(0,) * len(shape), limit_indices=limits)
    config = tuple((0, size - shape[axis] if d == axis else 0, 0) for d in range(len(shape)))
    return slicing.pad(x, np.zeros((), get_aval(x).dtype), padding_config=config)
