"""Shifts and sample frequencies of funcdiff.numpy.fft: fftshift, ifftshift, fftfreq, rfftfreq.

``fftshift``/``ifftshift`` roll each axis by half its size, built from slices
and a concatenation (complex values included). ``fftfreq``/``rfftfreq`` are
numpy arrays unless the spacing ``d`` is traced; then they are computed with
funcdiff.numpy, so they differentiate with respect to ``d``.
``funcdiff.numpy.fft`` re-exports them.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import AxisError, InvalidArgumentError
from funcdiff.numpy._fft_arguments import array, as_list, fname
from funcdiff.primitives import slicing, structural


def _roll(x: Any, shift: int, axis: int) -> Any:
    """``numpy.roll`` along one axis, from slices (complex values included)."""
    shape = get_aval(x).shape
    size = shape[axis]
    shift = shift % size if size else 0
    if shift == 0:
        return x
    zeros = (0,) * len(shape)

    def part(start, stop):
        starts = zeros[:axis] + (start,) + zeros[axis + 1:]
        limits = shape[:axis] + (stop,) + shape[axis + 1:]
        return slicing.slice(x, start_indices=starts, limit_indices=limits)
    return structural.concatenate(part(size - shift, size), part(0, size - shift),
                                  dimension=axis)


def _shift(name: str, x: Any, axes: Any, sign: int) -> Any:
    x = array(name, x, min_rank=0)
    shape = get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    for ax in as_list(axes):
        try:
            ax = operator.index(ax)
        except TypeError:
            raise AxisError(f"{fname(name)}: axes must be integers, got {ax!r}") from None
        if not -len(shape) <= ax < len(shape):
            raise AxisError(f"{fname(name)}: axis {ax} is out of range for an array of "
                            f"rank {len(shape)}.")
        ax %= len(shape)
        x = _roll(x, sign * (shape[ax] // 2), ax)
    return x


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (``numpy.fft.fftshift``).

    Args:
      x: array_like, real or complex.
      axes: axes to shift (default: all).

    Returns:
      ``x`` rolled by half its size along each axis.

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.fftshift(fnp.fft.fftfreq(5))
    array([-0.4, -0.2,  0. ,  0.2,  0.4])
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of ``fftshift`` (``numpy.fft.ifftshift``; they differ for odd sizes).

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.ifftshift(fnp.fft.fftshift(fnp.fft.fftfreq(5)))
    array([ 0. ,  0.2,  0.4, -0.4, -0.2])
    """
    return _shift("ifftshift", x, axes, -1)


def _frequencies(name: str, n: Any, d: Any, device: Any, dtype: Any,
                 counts: np.ndarray) -> Any:
    if device not in (None, "cpu"):
        raise InvalidArgumentError(f"{fname(name)} runs on the CPU only; got device={device!r}")
    if isinstance(d, Tracer):
        out = fnp.multiply(counts.astype(np.float64), fnp.divide(1.0, fnp.multiply(n, d)))
    else:
        out = counts * (1.0 / (n * d))
    return out if dtype is None else fnp.astype(out, dtype)


def _check_n(name: str, n: Any) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidArgumentError(f"{fname(name)} needs a positive integer n, got {n!r}")
    return int(n)


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of ``fft`` for ``n`` points spaced ``d`` apart
    (``numpy.fft.fftfreq``); ``d`` may be traced. ``dtype`` (the array API
    standard's keyword) casts the result.

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.fftfreq(4, d=0.5)
    array([ 0. ,  0.5, -1. , -0.5])
    """
    n = _check_n("fftfreq", n)
    counts = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", n, d, device, dtype, counts)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of ``rfft`` (``numpy.fft.rfftfreq``); ``d`` may be traced,
    and ``dtype`` casts the result.

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.rfftfreq(5)
    array([0. , 0.2, 0.4])
    """
    n = _check_n("rfftfreq", n)
    return _frequencies("rfftfreq", n, d, device, dtype, np.arange(0, n // 2 + 1))
