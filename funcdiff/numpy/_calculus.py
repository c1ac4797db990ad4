"""Calculus on sampled data: trapezoid, gradient, interp and unwrap.

Each function treats an array as samples of a function and is composed of funcdiff.numpy operations (slices, differences, gathers,
``where``, products), so it is differentiated, batched and compiled like any
other code. Every result shape follows from the input shapes alone; only
settings that change shapes or formulas (axes, ``edge_order``, ``ddof``) must
be concrete. ``trapezoid`` and ``gradient`` keep float32 as numpy does;
``interp`` keeps float32 too (numpy computes it in float64 always), as JAX
does, so a float32 program stays float32. (cov and corrcoef, statistics of
sampled variables, are in ``_statistics``.) ``unwrap`` adds the running sum of
whole-period corrections, which are piecewise constant, so its derivative in
``p`` is the identity.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, InvalidArgumentError,
                             ShapeError)
from funcdiff.numpy import _util
from funcdiff.numpy._shape import slice_axis

F64 = np.dtype(np.float64)


def shape_of(x: Any) -> tuple[int, ...]:
    return _util.shape_of(x)


def _along(v: Any, axis: int, ndim: int) -> Any:
    """The 1-D ``v`` reshaped to broadcast against an ``ndim`` array along ``axis``."""
    shape = [1] * ndim
    shape[axis] = shape_of(v)[0]
    return fnp.reshape(v, tuple(shape))


def static_int(value: Any, name: str, what: str, fix: str) -> int:
    """``value`` as a Python int; a traced value gets a ConcretizationError saying ``fix``."""
    if isinstance(value, Tracer):
        try:
            value = value.to_concrete(name)
        except ConcretizationError:
            raise ConcretizationError(
                f"funcdiff.numpy.{name}: {what} must be a concrete integer, but got the abstract "
                f"{value.aval.str_short()} (under jit, make_jaxpr or vmap). {fix}") from None
    try:
        return operator.index(value)
    except TypeError:
        pass
    if np.ndim(value) == 0 and np.asarray(value).dtype.kind == "f" and float(value).is_integer():
        return int(value)  # numpy accepts integral floats such as 1.0
    raise InvalidArgumentError(
        f"funcdiff.numpy.{name}: {what} must be an integer, got {value!r}")


# ---------------------------------------------------------------------------
# Integration


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integrate ``y`` along ``axis`` with the composite trapezoidal rule (numpy.trapezoid).

    Args:
      y: samples of the integrand.
      x: sample points: 1-D of length ``y.shape[axis]``, or an array of ``y``'s
        shape; default: evenly spaced ``dx`` apart.
      dx: spacing of the samples when ``x`` is None.
      axis: the axis to integrate along.

    Returns:
      ``sum(d * (y[1:] + y[:-1]) / 2)`` along ``axis`` (0 for fewer than two
      samples). Differentiable in ``y``, ``x`` and ``dx``.

    Raises:
      AxisError: for a 0-d ``y`` or an axis out of range.
      ShapeError: for a 1-D ``x`` whose length is not ``y.shape[axis]``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.trapezoid(np.array([1., 2., 3.])))
    4.0
    >>> float(fnp.trapezoid(np.array([1., 2., 3.]), x=np.array([0., 1., 3.])))
    6.5
    """
    y = _util.asarray(y, "trapezoid")
    ndim = len(shape_of(y))
    if ndim == 0:
        raise AxisError("funcdiff.numpy.trapezoid integrates along an axis, but y is 0-d; "
                        "pass samples of at least one dimension.")
    ax = _util.normalize_axis(axis, ndim, "trapezoid")
    n = shape_of(y)[ax]
    if x is None:
        d = dx
    else:
        x = _util.asarray(x, "trapezoid")
        if len(shape_of(x)) == 1:
            if shape_of(x)[0] != n:
                raise ShapeError(
                    f"funcdiff.numpy.trapezoid: the 1-D x needs one sample point per element "
                    f"of y along axis {axis} ({n}), got {shape_of(x)[0]}.")
            d = _along(fnp.diff(x), ax, ndim)
        else:
            d = fnp.diff(x, axis=axis)
    ends = fnp.add(slice_axis(y, ax, min(1, n), n), slice_axis(y, ax, 0, max(n - 1, 0)))
    return fnp.sum(fnp.divide(fnp.multiply(d, ends), 2.0), axis=axis)


# ---------------------------------------------------------------------------
# Differentiation


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Estimate the gradient of sampled ``f`` by finite differences (numpy.gradient).

    Second-order central differences inside, one-sided differences of order
    ``edge_order`` at both ends of each axis. Spacing coordinate arrays use the
    formulas for uneven spacing (numpy switches to the even formula when the
    spacing is constant, which agrees to rounding).

    Args:
      f: samples, at least ``edge_order + 1`` along every differentiated axis.
      *varargs: the spacing: nothing (1), one scalar for all axes, or one entry
        per axis, each a scalar spacing or a 1-D array of coordinates as long
        as that axis.
      axis: an axis or tuple of axes (default: all), in the order returned.
      edge_order: 1 or 2, the accuracy of the boundary differences.

    Returns:
      One array (a single axis) or a tuple of arrays of ``f``'s shape; float
      inputs keep their dtype, integers give float64. Differentiable in ``f``
      and in the spacing.

    Raises:
      DTypeError: for boolean ``f`` (numpy cannot subtract booleans either).
      InvalidArgumentError: for a wrong number of spacings or an edge_order
        other than 1 and 2.
      ShapeError: for an axis too short or coordinates of the wrong shape.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.gradient(np.array([1., 2., 4., 7., 11.]))
    array([1. , 1.5, 2.5, 3.5, 4. ])
    >>> fnp.gradient(np.array([1., 4., 9.]), np.array([1., 2., 3.]), edge_order=2)
    array([2., 4., 6.])
    """
    f = _util.asarray(f, "gradient")
    if f.dtype == np.bool_:
        raise DTypeError("funcdiff.numpy.gradient subtracts neighbouring samples, which "
                         "booleans do not support (numpy raises too); convert f with "
                         "astype(float) first.")
    if not dtypes.is_float(f.dtype):
        f = _util.cast(f, F64)
    shape = shape_of(f)
    axes = _gradient_axes(axis, len(shape))
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise InvalidArgumentError(f"funcdiff.numpy.gradient: edge_order must be 1 or 2, got "
                                   f"{edge_order!r}.")
    spacings = _spacings(varargs, axes, shape, f.dtype)
    outs = []
    for ax, h in zip(axes, spacings):
        if shape[ax] < edge_order + 1:
            raise ShapeError(
                f"funcdiff.numpy.gradient needs at least edge_order + 1 = {edge_order + 1} "
                f"samples along axis {ax}, got {shape[ax]}; use edge_order=1 or more samples.")
        outs.append(_util.cast(_differences(f, ax, h, edge_order), f.dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gradient_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    many = isinstance(axis, (tuple, list))
    axes = tuple(_util.normalize_axis(a, ndim, "gradient") for a in (axis if many else (axis,)))
    if len(set(axes)) != len(axes):
        raise AxisError(f"funcdiff.numpy.gradient: repeated axis in {axis!r}; name each once.")
    return axes


def _spacings(varargs: tuple, axes: tuple[int, ...], shape: tuple[int, ...],
              dtype: np.dtype) -> list:
    """One spacing per axis: a scalar, or the coordinate differences (1-D)."""
    if not varargs:
        return [np.asarray(1.0, dtype)] * len(axes)
    if len(varargs) == 1 and len(shape_of(varargs[0])) == 0:
        return [_scalar(varargs[0], dtype)] * len(axes)
    if len(varargs) != len(axes):
        raise InvalidArgumentError(
            f"funcdiff.numpy.gradient takes no spacing, one scalar spacing, or one per "
            f"differentiated axis ({len(axes)}), got {len(varargs)}.")
    out = []
    for ax, h in zip(axes, varargs):
        rank = len(shape_of(h))
        if rank == 0:
            out.append(_scalar(h, dtype))
            continue
        if rank != 1 or shape_of(h)[0] != shape[ax]:
            raise ShapeError(
                f"funcdiff.numpy.gradient: the spacing of axis {ax} must be a scalar or 1-D "
                f"coordinates of length {shape[ax]}, got shape {shape_of(h)}.")
        coords = _util.asarray(h, "gradient")
        if not dtypes.is_float(coords.dtype):
            coords = _util.cast(coords, F64)
        out.append(fnp.diff(coords))
    return out


def _scalar(h: Any, dtype: np.dtype) -> Any:
    """A scalar spacing; Python numbers take ``f``'s dtype, as they would in an operation."""
    if type(h) in (bool, int, float):
        return np.asarray(h, dtype)
    return _util.asarray(h, "gradient")


def _differences(f: Any, ax: int, h: Any, edge_order: int) -> Any:
    """The derivative along ``ax``: the stencils of both edges and the central one, joined."""
    n, ndim = shape_of(f)[ax], len(shape_of(f))

    def at(i):  # f[i] along ax, keeping the axis
        return slice_axis(f, ax, i, i + 1)

    if len(shape_of(h)) == 0:  # even spacing h
        def step(i, j):
            return h
        inner = fnp.divide(fnp.subtract(slice_axis(f, ax, 2, n), slice_axis(f, ax, 0, n - 2)),
                           fnp.multiply(2.0, h))
    else:  # coordinate differences h[i] = x[i+1] - x[i]
        def step(i, j):  # h[i:j], shaped to broadcast along ax
            return _along(slice_axis(h, 0, i, j), ax, ndim)
        inner = _stencil(_three_point_weights(step(0, n - 2), step(1, n - 1), 1),
                         [slice_axis(f, ax, k, n - 2 + k) for k in range(3)])
    if edge_order == 1:
        first = fnp.divide(fnp.subtract(at(1), at(0)), step(0, 1))
        last = fnp.divide(fnp.subtract(at(n - 1), at(n - 2)), step(n - 2, n - 1))
    else:
        first = _stencil(_three_point_weights(step(0, 1), step(1, 2), 0), [at(0), at(1), at(2)])
        last = _stencil(_three_point_weights(step(n - 3, n - 2), step(n - 2, n - 1), 2),
                        [at(n - 3), at(n - 2), at(n - 1)])
    return fnp.concatenate([first, inner, last], axis=ax)


def _three_point_weights(a: Any, b: Any, k: int) -> list:
    """Weights ``w`` with ``f'(t_k) ~ w[0] f(t_0) + w[1] f(t_1) + w[2] f(t_2)`` for nodes
    ``t_1 = t_0 + a`` and ``t_2 = t_1 + b``: the slopes at ``t_k`` of the three Lagrange
    basis polynomials (exact for quadratics, so second-order accurate)."""
    gaps = {(0, 1): a, (1, 2): b, (0, 2): fnp.add(a, b)}

    def t(i, j):  # t_i - t_j
        if i == j:
            return 0.0
        return fnp.negative(gaps[(i, j)]) if i < j else gaps[(j, i)]

    weights = []
    for j in range(3):
        p, q = (m for m in range(3) if m != j)
        weights.append(fnp.divide(fnp.add(t(k, p), t(k, q)),
                                  fnp.multiply(t(j, p), t(j, q))))
    return weights


def _stencil(weights: list, samples: list) -> Any:
    total = fnp.multiply(weights[0], samples[0])
    for w, sample in zip(weights[1:], samples[1:]):
        total = fnp.add(total, fnp.multiply(w, sample))
    return total


# ---------------------------------------------------------------------------
# Interpolation


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (numpy.interp).

    ``xp`` must be increasing (not checked, as in numpy). Outside
    ``[xp[0], xp[-1]]`` the result is ``left``/``right`` (default ``fp[0]`` and
    ``fp[-1]``); with ``period``, ``x`` and ``xp`` are taken modulo it and
    ``left``/``right`` are ignored. Traced inputs find the interval of each ``x``
    by counting comparisons (``O(len(xp) * x.size)``), so jit and vmap work.

    Args:
      x: where to evaluate, any shape.
      xp, fp: 1-D sample points and values of equal, non-zero length.
      left, right: the values below and above the range of ``xp``.
      period: the period of the coordinates, a non-zero scalar.

    Returns:
      An array of ``x``'s shape, float64 unless all inputs are float32 (numpy
      always gives float64). Differentiable in ``x`` (the slope of the interval
      to the right of a knot, to the left at ``xp[-1]``), in ``fp``, ``left``
      and ``right``.

    Raises:
      ShapeError: for ``xp``/``fp`` that are not 1-D, differ in length or are empty.
      InvalidArgumentError: for a zero or non-scalar ``period``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.interp(np.array([-1., 0.5, 1.5, 3.]), np.array([0., 1., 2.]), np.array([0., 10., 0.]))
    array([0., 5., 5., 0.])
    """
    x, xp, fp = (_util.asarray(v, "interp") for v in (x, xp, fp))
    if len(shape_of(xp)) != 1 or len(shape_of(fp)) != 1:
        raise ShapeError(f"funcdiff.numpy.interp needs 1-D xp and fp, got shapes {shape_of(xp)} "
                         f"and {shape_of(fp)}.")
    if shape_of(xp) != shape_of(fp):
        raise ShapeError(f"funcdiff.numpy.interp needs one value fp per sample point xp, got "
                         f"{shape_of(fp)[0]} values and {shape_of(xp)[0]} points.")
    if shape_of(xp)[0] == 0:
        raise ShapeError("funcdiff.numpy.interp needs at least one sample point; xp is empty.")
    x, xp, fp = _util.promote_to_float("interp", x, xp, fp)
    if period is not None:
        x, xp, fp = _periodic(x, xp, fp, period)
        left = right = None
    n = shape_of(xp)[0]
    first, last, fp_first, fp_last = xp[0], xp[n - 1], fp[0], fp[n - 1]
    if n == 1:
        out = fnp.broadcast_to(fp_first, shape_of(x))
    else:
        j = fnp.clip(fnp.subtract(fnp.searchsorted(xp, x, side="right"), 1), 0, n - 2)
        x0, x1 = fnp.take(xp, j), fnp.take(xp, fnp.add(j, 1))
        y0, y1 = fnp.take(fp, j), fnp.take(fp, fnp.add(j, 1))
        width = fnp.subtract(x1, x0)
        # a zero-width interval is never used (only masked-out ends can pick one);
        # dividing by 1 there keeps its second derivatives finite (not NaN)
        slope = fnp.divide(fnp.subtract(y1, y0), fnp.where(fnp.equal(width, 0), 1.0, width))
        from_left = fnp.add(fnp.multiply(slope, fnp.subtract(x, x0)), y0)
        from_right = fnp.add(fnp.multiply(slope, fnp.subtract(x, x1)), y1)
        # numpy's fallbacks when infinities make the value NaN: the other end, then
        # the common value of a flat interval, then the value at an exact knot
        out = fnp.where(fnp.isnan(from_left), from_right, from_left)
        out = fnp.where(fnp.logical_and(fnp.isnan(out), fnp.equal(y0, y1)), y0, out)
        out = fnp.where(fnp.logical_and(fnp.isnan(from_left), fnp.equal(x, x0)), y0, out)
        # at xp[-1] exactly fp[-1]; from_right equals it there and keeps the left slope
        out = fnp.where(fnp.equal(x, last),
                        fnp.where(fnp.isnan(from_right), fp_last, from_right), out)
    dtype = fp.dtype
    below = fp_first if left is None else _util.cast(_util.asarray(left, "interp"), dtype)
    above = fp_last if right is None else _util.cast(_util.asarray(right, "interp"), dtype)
    out = fnp.where(fnp.greater(x, last), above, out)
    out = fnp.where(fnp.less(x, first), below, out)
    return fnp.where(fnp.isnan(x), x, out)


def _periodic(x: Any, xp: Any, fp: Any, period: Any) -> tuple:
    """``x`` and the samples wrapped into one period, with one sample copied past each end."""
    if len(shape_of(period)) != 0:
        raise InvalidArgumentError(f"funcdiff.numpy.interp: period must be a scalar, got shape "
                                   f"{shape_of(period)}.")
    if not isinstance(period, Tracer) and period == 0:
        raise InvalidArgumentError("funcdiff.numpy.interp: period must be non-zero (it is the "
                                   "length after which the coordinates repeat).")
    period = fnp.abs(_util.cast(_util.asarray(period, "interp"), xp.dtype))
    x, xp = fnp.remainder(x, period), fnp.remainder(xp, period)
    order = fnp.argsort(xp)
    xp, fp = fnp.take(xp, order), fnp.take(fp, order)
    n = shape_of(xp)[0]
    xp = fnp.concatenate([fnp.subtract(xp[n - 1:], period), xp, fnp.add(xp[:1], period)])
    fp = fnp.concatenate([fp[n - 1:], fp, fp[:1]])
    return x, xp, fp


# ---------------------------------------------------------------------------
# Phase unwrapping


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi) -> Any:
    """Unwrap a phase by removing jumps larger than ``discont`` (numpy.unwrap).

    Wherever consecutive values along ``axis`` differ by more than
    ``max(discont, period / 2)``, a whole number of periods is added to the
    later values so that the difference becomes its equivalent in
    ``[-period/2, period/2]`` (``+period/2`` for a positive jump of exactly half
    a period, as numpy). The corrections are piecewise constant, so the
    derivative with respect to ``p`` is the identity. The dtype is numpy's:
    ``p``'s floats stay (float32 too, with a Python ``period``), integers give
    float64 unless ``period`` is an integer, which keeps integer arithmetic.

    Args:
      p: the phases, at least 1-D.
      discont: the smallest jump to correct (default ``period / 2``; smaller
        values act as ``period / 2``).
      axis: the axis to unwrap along.
      period: the period of the phase (default ``2 * pi``).

    Returns:
      The unwrapped phases, the shape of ``p``.

    Raises:
      AxisError: ``p`` is 0-d or ``axis`` is out of range.
      DTypeError: ``p`` is boolean.
      ConcretizationError: an integer ``period`` is traced (it decides the formula).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unwrap(np.array([0., 3., 6.5, 10.]))
    array([ 0.        ,  3.        ,  0.21681469, -2.56637061])
    >>> fnp.unwrap(np.array([0, 5, 10, 3]), period=8)
    array([ 0, -3, -6, -5])
    """
    p = _util.asarray(p, "unwrap")
    if p.dtype.kind == "b":
        raise DTypeError("funcdiff.numpy.unwrap needs numeric phases, got a boolean array; "
                         "convert it with astype(float).")
    ndim = len(shape_of(p))
    if ndim == 0:
        raise AxisError("funcdiff.numpy.unwrap works along an axis, but p is 0-d; pass phases "
                        "of at least one dimension.")
    ax = _util.normalize_axis(axis, ndim, "unwrap")
    n = shape_of(p)[ax]
    dd = fnp.diff(p, axis=ax)
    dtype = dtypes.result_type(dd, period)
    if dtype.kind in "iu":
        high, rem = divmod(static_int(period, "unwrap", "an integer period",
                                       "Pass period as a Python int or float."), 2)
        ambiguous = rem == 0  # an odd period has no jump of exactly half of it
    else:
        high = period / 2 if type(period) in (int, float) else fnp.divide(period, 2)
        ambiguous = True
    low = -high if type(high) in (int, float) else fnp.negative(high)
    dd_mod = fnp.add(fnp.mod(fnp.subtract(dd, low), period), low)
    if ambiguous:  # mod maps a jump of +period/2 to -period/2; numpy keeps its sign
        dd_mod = fnp.where(fnp.logical_and(fnp.equal(dd_mod, low), fnp.greater(dd, 0)),
                           high, dd_mod)
    correction = fnp.subtract(dd_mod, dd)
    if discont is None:
        discont = period / 2 if type(period) in (int, float) else fnp.divide(period, 2)
    correction = fnp.where(fnp.less(fnp.abs(dd), discont), 0, correction)
    later = fnp.add(slice_axis(p, ax, min(1, n), n), fnp.cumsum(correction, axis=ax))
    first = slice_axis(p, ax, 0, min(1, n))
    return fnp.concatenate([fnp.astype(first, dtype), fnp.astype(later, dtype)], axis=ax)


__all__ = ["trapezoid", "gradient", "interp", "unwrap"]
