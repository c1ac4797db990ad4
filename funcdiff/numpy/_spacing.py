"""Evenly spaced values in funcdiff.numpy: linspace, logspace and geomspace.

With constant end points the result is a numpy array (constants need no
primitive); with traced end points it is built from primitives (a ramp
scaled between them), so it is differentiable in both ends. The number of
values must be concrete. ``geomspace`` is ``logspace`` of the logarithms of
its end points (divided by the sign of ``start``), so it is differentiable in
both too, and returns its end points exactly as numpy does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.numpy._arithmetic import power
from funcdiff.numpy._creation import has_tracer
from funcdiff.numpy._ufunc_support import (F64, PY_SCALARS, arg, _array, _c, cast,
                                           check_broadcast, dtype_arg, fname, result_dtype,
                                           shape_of)
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import slicing, structural

import funcdiff.numpy as fnp


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
    name = fname("linspace")
    num = _util.static_int(num, name, "num")
    if num < 0:
        raise InvalidArgumentError(f"{name} needs num >= 0, got {num}")
    if not (has_tracer(start) or has_tracer(stop)):
        start, stop = arg("linspace", start), arg("linspace", stop)
        dtype = None if dtype is None else dtype_arg("linspace", dtype, allow_complex=True)
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    start, stop = arg("linspace", start), arg("linspace", stop)
    dt = result_dtype("linspace", start, stop)
    dt = dt if dt.kind == "f" else F64  # numpy: at least inexact, ints in float64
    start, stop = cast(start, dt), cast(stop, dt)
    shape = check_broadcast("linspace", start, stop)
    start, stop = structural.broadcast_to(start, shape), structural.broadcast_to(stop, shape)
    div = (num - 1) if endpoint else num
    delta = ew.sub(stop, start)
    steps = np.arange(num, dtype=dt).reshape((num,) + (1,) * len(shape))
    step = ew.div(delta, _c(delta, div)) if div > 0 else _c(delta, np.nan)
    y = ew.add(ew.mul(steps, step if div > 0 else delta), start)
    if endpoint and num > 1:
        head = slicing.slice(y, start_indices=(0,) * (len(shape) + 1),
                                limit_indices=(num - 1,) + shape)
        y = structural.concatenate(head, structural.reshape(stop, new_sizes=(1,) + shape),
                                   dimension=0)
    axis = _util.normalize_axis(axis, len(shape) + 1, name)
    y = structural.moveaxis(y, 0, axis)
    if dtype is not None:
        dtype = dtype_arg("linspace", dtype, allow_complex=True)
        if dtype.kind in "iu":
            y = ew.floor(y)
        y = cast(y, dtype)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)`` (like ``numpy.logspace``).

    >>> import funcdiff.numpy as fnp
    >>> fnp.logspace(0., 2., 3)
    array([  1.,  10., 100.])
    """
    if not (has_tracer(start) or has_tracer(stop) or has_tracer(base)):
        start, stop, base = (arg("logspace", v) for v in (start, stop, base))
        dtype = None if dtype is None else dtype_arg("logspace", dtype)
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    base = arg("logspace", base)
    if type(base) not in PY_SCALARS and shape_of(base):
        # an array base broadcasts with the end points, as in numpy
        start, stop = _array("logspace", start), _array("logspace", stop)
        ndmax = len(check_broadcast("logspace", start, stop, base))
        start, stop, base = (structural.reshape(v, new_sizes=(1,) * (ndmax - len(shape_of(v)))
                                                + shape_of(v)) for v in (start, stop, base))
        base = structural.expand_dims(base, dimensions=(_util.normalize_axis(
            axis, ndmax + 1, fname("logspace")),))
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    out = power(base, y)
    return out if dtype is None else cast(out, dtype_arg("logspace", dtype))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` samples from ``start`` to ``stop`` spaced evenly on a log scale
    (like ``numpy.geomspace``).

    Each sample is ``start * (stop / start) ** t`` for ``t`` evenly spaced in
    ``[0, 1]``: ``logspace`` of the logarithms of the end points, with the end
    points returned exactly, as numpy does. Negative end points give a negative
    sequence; end points of opposite signs give NaN between them (numpy warns
    and does the same). The result is differentiable in ``start`` and ``stop``.
    Integer end points give float64; unlike numpy, which computes in float64
    always, float32 end points give float32 (as JAX does), so a float32 program
    stays float32.

    Args:
      start, stop: array_like end points (broadcast together); never zero.
      num: number of samples (a concrete int). endpoint: include ``stop``.
      dtype: result dtype (an integer dtype truncates, as numpy's ``astype``).
      axis: where the sample axis goes in the result.

    Returns:
      The samples, shape ``(num,) + broadcast shape`` with the sample axis at ``axis``.

    Raises:
      InvalidArgumentError: an end point is zero (checked where values are concrete),
        or ``num`` is negative.

    >>> import funcdiff.numpy as fnp
    >>> fnp.geomspace(1., 1000., 4)
    array([   1.,   10.,  100., 1000.])
    >>> fnp.geomspace(-2., -8., 3)
    array([-2., -4., -8.])
    """
    name = fname("geomspace")
    num = _util.static_int(num, name, "num")
    if num < 0:
        raise InvalidArgumentError(f"{name} needs num >= 0, got {num}")
    start, stop = _util.promote_to_float(name, arg("geomspace", start), arg("geomspace", stop))
    for which, end in (("start", start), ("stop", stop)):
        value = _known_value(end)
        if value is not None and np.any(value == 0):
            raise InvalidArgumentError(
                f"{name}: a geometric sequence cannot include zero, but {which} has a zero "
                f"({value!r:.60}). Choose non-zero end points of the same sign.")
    start, stop = fnp.broadcast_arrays(start, stop)
    shape = shape_of(start)
    # numpy's recipe: divide both end points by the sign of start, so that a negative
    # sequence is the positive one mirrored (the sign carries no derivative)
    sign = fnp.sign(start)
    first, last = fnp.divide(start, sign), fnp.divide(stop, sign)
    y = logspace(fnp.log10(first), fnp.log10(last), num=num, endpoint=endpoint, base=10.0)
    if num > 0:  # the end points exactly, not through log10 and power
        with_last = endpoint and num > 1
        pieces = [fnp.expand_dims(first, 0)]
        inner = num - 1 if with_last else num
        if inner > 1:
            pieces.append(slicing.slice(y, start_indices=(1,) + (0,) * len(shape),
                                           limit_indices=(inner,) + shape))
        if with_last:
            pieces.append(fnp.expand_dims(last, 0))
        y = fnp.concatenate(pieces, axis=0)
    y = fnp.multiply(y, sign)
    y = fnp.moveaxis(y, 0, _util.normalize_axis(axis, len(shape) + 1, name))
    return y if dtype is None else cast(y, dtype_arg("geomspace", dtype))


def _known_value(x: Any) -> np.ndarray | None:
    """The concrete value of ``x``, or None for a tracer with none (under jit or vmap)."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return np.asarray(x.to_concrete("funcdiff.numpy.geomspace"))
    except ConcretizationError:
        return None


__all__ = ["linspace", "logspace", "geomspace"]
