"""Windowed reductions: ``reduce_window_max`` and ``reduce_window_min``, and window patches.

A windowed reduction slides a window over every axis of its operand (window
sizes, strides, low/high padding, base dilation of the operand and window
dilation, as in ``lax.reduce_window``) and reduces each window. Padding and
the holes of a base dilation hold the reduction's identity (-inf for max).

- The impl is a sliding-window view of the padded operand and one numpy
  reduction over the window axes: no copy of the windows.
- The derivative follows ``reduce_max``: each window's tangent is the average
  of the tangents at the positions attaining its extremum (a tie splits it
  evenly). It is written with ``window_patches``, a ``gather`` of each
  window's elements from the flattened padded operand, so it is linear in the
  tangent, transposes to a scatter-add and differentiates again.
- Sums of windows are convolutions with a kernel of ones and products are
  ``reduce_prod`` of patches (``fd.lax.reduce_window`` builds them): only the
  extrema need cards of their own.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.primitives import elementwise, reductions, slicing, structural
from funcdiff.primitives.cards import checked_impl, make_op, nbytes
from funcdiff.primitives.convolution_plan import output_spatial, placement
from funcdiff.primitives.indexing import gather


def _check(name, x, window_dimensions, window_strides, padding, base_dilation,
           window_dilation):
    where = f"{name} of {x.str_short()}"
    for what, value in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides), ("padding", padding),
                        ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(value) != x.ndim:
            raise ShapeError(f"{where}: {what}={value} needs one entry per axis ({x.ndim}).")
    for what, value in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if any(v < 1 for v in value):
            raise InvalidArgumentError(f"{where}: {what}={value} must be positive integers.")
    out = output_spatial(x.shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
    for d, size in enumerate(out):
        if size < 1:
            raise ShapeError(
                f"{where}: the window of axis {d} (size {window_dimensions[d]}, dilated "
                f"{(window_dimensions[d] - 1) * window_dilation[d] + 1}) is larger than the "
                f"padded operand ({x.shape[d]} padded by {padding[d]}). Pad more or use a "
                "smaller window.")
    return out


def identity_of(dtype: np.dtype, largest: bool):
    """The identity of max (``largest``) or min on ``dtype``: -inf/inf, or the integer limits."""
    if dtype.kind == "f":
        return -np.inf if largest else np.inf
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if largest else info.max
    return not largest  # booleans: max is any, min is all


@functools.lru_cache(maxsize=256)
def _patch_indices(shape, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    """Flat positions in the padded, dilated operand of every window's elements:
    an int array of shape (*output shape, window size)."""
    padded = tuple((s - 1) * b + 1 + lo + hi for s, (lo, hi), b in zip(shape, padding,
                                                                      base_dilation))
    out = output_spatial(shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
    nd = len(shape)
    flat = np.zeros((1,) * (2 * nd), np.int64)
    for d in range(nd):  # row-major: flat = ((p0 * size1 + p1) * size2 + p2) ...
        position = (np.arange(out[d])[:, None] * window_strides[d]
                    + np.arange(window_dimensions[d])[None, :] * window_dilation[d])
        shape_d = [1] * (2 * nd)
        shape_d[d], shape_d[nd + d] = out[d], window_dimensions[d]
        flat = flat * padded[d] + position.reshape(shape_d)
    return flat.reshape(out + (math.prod(window_dimensions),))


def window_patches(x, padding_value, *, window_dimensions, window_strides, padding,
                   base_dilation, window_dilation):
    """The elements of every window of ``x``: shape (*output shape, window size),
    padding and dilation holes filled with ``padding_value``. Linear in ``x``
    (a pad and a gather), so it transposes and differentiates like them."""
    aval = get_aval(x)
    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation))
    if any(c != (0, 0, 0) for c in config):
        x = slicing.pad(x, np.asarray(padding_value, aval.dtype), padding_config=config)
    x = structural.reshape(x, new_sizes=(math.prod(get_aval(x).shape),))
    indices = _patch_indices(aval.shape, window_dimensions, window_strides, padding,
                             base_dilation, window_dilation)
    return gather(x, indices, axis=0)


def _extremum_card(name: str, numpy_reduce, largest: bool) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(x, **params):
        return ShapedArray(_check(name, x, **params), x.dtype)

    def impl(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        x = np.asarray(x)
        nd = x.ndim
        shape, src, dst = placement(x.shape, padding, base_dilation)
        if shape is not None:  # (the indices lead with two axes of conv's layout)
            padded = np.full(shape, identity_of(x.dtype, largest), x.dtype)
            padded[dst[2:]] = x[src[2:]]
            x = padded
        window = tuple((k - 1) * d + 1 for k, d in zip(window_dimensions, window_dilation))
        out = output_spatial(get_aval(x).shape, window, window_strides, ((0, 0),) * nd,
                             (1,) * nd, (1,) * nd)
        windows = sliding_window_view(x, window)[
            tuple(slice(0, (y - 1) * s + 1, s) for y, s in zip(out, window_strides))
            + tuple(slice(None, None, d) for d in window_dilation)]
        return numpy_reduce(windows, axis=tuple(range(nd, 2 * nd)))

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, **params)
        dtype = get_aval(x).dtype
        last = get_aval(out).ndim
        # The positions attaining each window's extremum; their count shares the tangent.
        patches = window_patches(x, identity_of(dtype, largest), **params)
        shape = get_aval(patches).shape
        hit = elementwise.eq(patches, structural.broadcast_in_dim(
            out, shape=shape, broadcast_dimensions=tuple(range(last))))
        hit = elementwise.convert_element_type(hit, new_dtype=dtype)
        count = reductions.reduce_sum(hit, axes=(last,))
        moved = reductions.reduce_sum(elementwise.mul(window_patches(t, 0, **params), hit),
                                      axes=(last,))
        return out, elementwise.div(moved, count)

    def batch(vals, dims, *, window_dimensions, window_strides, padding, base_dilation,
              window_dilation):
        (x,), (d,) = vals, dims

        def put(values, one):
            return values[:d] + (one,) + values[d:]
        out = bind(prim, x, window_dimensions=put(window_dimensions, 1),
                   window_strides=put(window_strides, 1), padding=put(padding, (0, 0)),
                   base_dilation=put(base_dilation, 1), window_dilation=put(window_dilation, 1))
        return out, d

    def cost(x, **params):
        out = abstract_eval(x, **params)
        return {"flops": out.size * math.prod(params["window_dimensions"]),
                "bytes": nbytes(x) + nbytes(out)}

    prim.impl = checked_impl(impl, abstract_eval)
    prim.abstract_eval = abstract_eval
    prim.jvp = jvp
    prim.batch = batch
    prim.cost = cost
    return prim


reduce_window_max_p = _extremum_card("reduce_window_max", np.max, True)
reduce_window_max = make_op(reduce_window_max_p, "The maximum of each window of x (lax's "
                                                 "reduce_window_max; ties share the derivative).")
reduce_window_min_p = _extremum_card("reduce_window_min", np.min, False)
reduce_window_min = make_op(reduce_window_min_p, "The minimum of each window of x (lax's "
                                                 "reduce_window_min; ties share the derivative).")
