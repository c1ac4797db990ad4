"""Gather along one axis, and ``take_along_axis`` built from it.

``gather(x, indices, axis=a)`` is ``numpy.take``: one axis of ``x`` is replaced
by the (any-shaped) integer array ``indices``. Indices are never
differentiated. ``gather`` is linear in ``x`` and its transpose is
``scatter_add``, so reverse mode accumulates repeated indices; the transpose
rule reaches it through the role ``roles.SCATTER_ADD``, which the scatter_add card
fills (``indexing_scatter`` imports ``gather`` from here). The batch rule moves the batch axis out of the
indexed axis' way; when indices and data are both batched, the batch axis is
folded into the indexed axis and each batch member's indices are offset into
its own block. ``take_along_axis`` is an operation, not a primitive: one
``gather`` from the flattened ``x`` at computed flat positions, so every
transform comes for free. ``indexing`` re-exports both.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.backends import as_array
from funcdiff import roles
from funcdiff.compiler import fusion
from funcdiff.core import Primitive, ShapedArray, get_aval
from funcdiff.errors import AxisError, ShapeError
from funcdiff.primitives import elementwise, structural
from funcdiff.primitives.cards import make_op, nbytes
from funcdiff.primitives.indexing_common import (check_axis, check_index_dtype, gathered_shape,
                                                 has_negative, offset_batched_indices,
                                                 out_of_bounds, ramp, reshape, widen_indices,
                                                 zeros_like)


# --- gather ---------------------------------------------------------------------

gather_p = Primitive("gather")


def gather_abstract_eval(x, indices, *, axis):
    check_axis("gather", x, axis)
    check_index_dtype("gather", indices)
    return ShapedArray(gathered_shape(x.shape, indices.shape, axis), x.dtype)


def gather_impl(x, indices, *, axis):
    x, indices = as_array(x), np.asarray(indices)
    if indices.dtype.kind not in "iu" or type(axis) is not int or not 0 <= axis < x.ndim:
        gather_abstract_eval(get_aval(x), get_aval(indices), axis=axis)  # raises
    if has_negative(indices):
        raise out_of_bounds("gather", indices, x.shape[axis], axis)
    try:
        return x.take(indices, axis=axis) if type(x) is np.ndarray else np.take(x, indices,
                                                                                 axis=axis)
    except IndexError:
        raise out_of_bounds("gather", indices, x.shape[axis], axis) from None


def gather_jvp(primals, tangents, *, axis):
    (x, indices), (x_dot, _) = primals, tangents
    # The indices' tangent is always zero, so x_dot is not when this rule runs.
    return gather(x, indices, axis=axis), gather(x_dot, indices, axis=axis)


def gather_transpose(ct, x, indices, *, axis):
    # Repeated indices read one element several times, so their cotangents add.
    if type(ct) is np.ndarray and type(indices) is np.ndarray and ct.dtype == x.aval.dtype:
        # concrete (the eager tape's backward pass): scatter_add's impl, without a bind
        scatter_add = roles.SCATTER_ADD.primitive
        return [scatter_add.raw_impl(np.zeros(x.aval.shape, ct.dtype), indices, ct, axis=axis),
                None]
    return [roles.SCATTER_ADD.primitive.bind(zeros_like(x), indices, ct, axis=axis), None]


def gather_batch(vals, dims, *, axis):
    (x, indices), (x_bdim, i_bdim) = vals, dims
    if i_bdim is None:  # the batch axis of x stays where it is, shifted by the index axes
        real_axis = axis + (x_bdim <= axis)
        out_bdim = x_bdim if x_bdim < real_axis else x_bdim + get_aval(indices).ndim - 1
        return gather(x, indices, axis=real_axis), out_bdim
    if x_bdim is None:  # the batch axis of indices lands among the gathered axes
        return gather(x, indices, axis=axis), axis + i_bdim
    size = get_aval(x).shape[x_bdim]
    x = structural.moveaxis(x, x_bdim, axis)  # (..., B, n, ...): fold B into the indexed axis
    shape = get_aval(x).shape
    n = shape[axis + 1]
    x = structural.reshape(x, new_sizes=shape[:axis] + (size * n,) + shape[axis + 2:])
    indices = offset_batched_indices(indices, i_bdim, size, n)
    return gather(x, indices, axis=axis), axis


def gather_cost(x, indices, *, axis):
    out = ShapedArray(gathered_shape(x.shape, indices.shape, axis), x.dtype)
    return {"flops": 0, "bytes": 2 * nbytes(out) + nbytes(indices)}


gather_p.impl = gather_impl
gather_p.abstract_eval = gather_abstract_eval
gather_p.jvp = gather_jvp
gather_p.linear = True
gather_p.transpose = gather_transpose
gather_p.batch = gather_batch
gather_p.cost = gather_cost
roles.GATHER.fill(gather_p)  # along-axis indexing, fused by the compiler
gather = make_op(gather_p, """Take elements of ``x`` along ``axis`` at integer ``indices`` (numpy.take).

Args:
  x: array of rank >= 1.
  indices: integer array of any shape with values in ``[0, x.shape[axis])``.
  axis: keyword-only Python int in ``[0, x.ndim)``.

Returns:
  ``x.shape[:axis] + indices.shape + x.shape[axis+1:]`` array of x's dtype.
  Linear in ``x``; repeated indices accumulate in reverse mode.

Raises:
  AxisError, DTypeError: bad ``axis`` or non-integer indices.
  IndexOutOfBoundsError: (eagerly) an index outside the axis.

>>> import numpy as np
>>> gather(np.array([10., 20., 30.]), np.array([[2, 0], [1, 1]]), axis=0)
array([[30., 10.],
       [20., 20.]])
""")

# --- take_along_axis (an operation built from gather) ---------------------------


def take_along_axis(x, indices, axis):
    """Pick values of ``x`` along ``axis`` at ``indices`` (numpy.take_along_axis).

    ``indices`` has x's rank and broadcasts against ``x`` in every other axis;
    its values must lie in ``[0, x.shape[axis])`` (negative indices are not
    wrapped here: funcdiff.numpy normalises them). ``axis=None`` works on the
    flattened ``x``. Built as one ``gather`` from the flattened ``x`` at
    computed flat positions, so every transform comes for free.

    Args:
      x: array.
      indices: integer array of x's rank (1-D when ``axis`` is None).
      axis: int (negative counts from the end) or None.

    Returns:
      Array of shape ``broadcast(x.shape, indices.shape)`` except
      ``indices.shape[axis]`` along ``axis``.

    Raises:
      ShapeError, AxisError, DTypeError.

    >>> import numpy as np
    >>> take_along_axis(np.array([[1., 2.], [3., 4.]]), np.array([[1], [0]]), axis=1)
    array([[2.],
           [3.]])
    """
    x_aval, i_aval = get_aval(x), get_aval(indices)
    check_index_dtype("take_along_axis", i_aval)
    if axis is None:
        if i_aval.ndim != 1:
            raise ShapeError(f"take_along_axis with axis=None needs 1-D indices, got {i_aval.str_short()}")
        return gather(reshape(x, (x_aval.size,)), indices, axis=0)
    ndim = x_aval.ndim
    if i_aval.ndim != ndim:
        raise ShapeError(
            f"take_along_axis needs indices of the same rank as x, but x is "
            f"{x_aval.str_short()} and indices {i_aval.str_short()}. Add size-1 axes "
            "(e.g. numpy.expand_dims) so they line up.")
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise AxisError(f"take_along_axis got axis={axis!r} for x {x_aval.str_short()} of rank {ndim}")
    axis = int(axis) % ndim
    out_shape = []
    for k, (xs, ids) in enumerate(zip(x_aval.shape, i_aval.shape)):
        if k == axis:
            out_shape.append(ids)
        elif xs == ids or 1 in (xs, ids):
            out_shape.append(max(xs, ids) if 0 not in (xs, ids) else 0)
        else:
            raise ShapeError(
                f"take_along_axis cannot broadcast x {x_aval.str_short()} against indices "
                f"{i_aval.str_short()} in axis {k} (sizes {xs} and {ids})")
    out_shape = tuple(out_shape)
    x_shape = out_shape[:axis] + (x_aval.shape[axis],) + out_shape[axis + 1:]
    x = structural.broadcast_to(x, x_shape)
    indices = structural.broadcast_to(indices, out_shape)
    strides = [math.prod(x_shape[k + 1:]) for k in range(ndim)]
    indices = widen_indices(indices, max(math.prod(x_shape) - 1, 0))
    dtype = get_aval(indices).dtype
    flat = indices  # flat position = index * stride[axis] + sum of position * stride elsewhere
    if strides[axis] != 1:
        flat = elementwise.mul(flat, np.asarray(strides[axis], dtype))
    for k in range(ndim):
        if k != axis and out_shape[k] > 1:
            flat = elementwise.add(flat, ramp(dtype, ndim, k, out_shape[k], strides[k]))
    return gather(reshape(x, (math.prod(x_shape),)), flat, axis=0)
