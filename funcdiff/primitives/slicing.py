"""Slicing primitives: slice, pad, dynamic_slice and dynamic_update_slice.

A static slice and a pad are each other's transposes: a slice's cotangent is
padded back with zeros (interior padding undoes a stride), and a pad's
cotangent is cropped and strided back. ``dynamic_slice`` and
``dynamic_update_slice`` take traced start indices, clamped like lax so the
window stays inside the operand; the starts are non-linear operands (symbolic
zero tangents, ``None`` cotangents). Under vmap with per-member starts, all
members' windows move in one gather or scatter over the flattened operand.
All four are linear in their array operands: each card states the shape rule,
transpose and batch rule, and ``deflinear`` derives the jvp. A pad's
transpose sums the cotangent of its padding value through structural's
``roles.REDUCE_SUM`` role (``reductions`` sits above this module).
"""

from __future__ import annotations

import builtins  # the operation `slice` below shadows the builtin
import math
import operator

import numpy as np

from funcdiff.backends import as_array
from funcdiff import core, roles
from funcdiff.compiler.lowerings import lower_pad, lower_slice, pad_index
from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import DTypeError, ShapeError
from funcdiff.interpreters import batching
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.passes import traits as passes
from funcdiff.passes.rules import identity, on_zeros, zeros
from funcdiff.passes.zero_propagation import ZERO
from funcdiff.primitives import elementwise as el
from funcdiff.primitives.cards import checked_impl, deflinear, nbytes, same_dtype
from funcdiff.primitives.indexing import gather, scatter
from funcdiff.primitives.structural import (batch_size, check_rank, drop, insert, int_tuple,
                                            with_batch_at_front, full, moveaxis, reshape)


# --- slice ------------------------------------------------------------------------

slice_p = Primitive("slice")


def _slice_impl(x, *, start_indices, limit_indices, strides):
    if type(x) is not np.ndarray:
        x = as_array(x)
    shape = x.shape
    if len(start_indices) != len(shape):
        raise ValueError("rank")  # see checked_impl
    for s, l, n in zip(start_indices, limit_indices, shape):
        if not 0 <= s <= l <= n:
            raise ValueError("out of bounds")  # numpy would clip silently; see checked_impl
    if strides is None:
        return x[tuple(map(builtins.slice, start_indices, limit_indices))]
    return x[tuple(map(builtins.slice, start_indices, limit_indices, strides))]


def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    check_rank("slice", "start_indices", start_indices, x)
    check_rank("slice", "limit_indices", limit_indices, x)
    steps = strides or (1,) * x.ndim
    check_rank("slice", "strides", steps, x)
    for s, l, st, n in zip(start_indices, limit_indices, steps, x.shape):
        if not 0 <= s <= l <= n or st < 1:
            raise ShapeError(
                f"slice of {x.str_short()} needs 0 <= start <= limit <= size and stride >= 1 "
                f"on every axis, but got start_indices={start_indices}, "
                f"limit_indices={limit_indices}, strides={strides}")
    return ShapedArray(tuple(-(-(l - s) // st) for s, l, st in
                             zip(start_indices, limit_indices, steps)), x.dtype)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    # Zero-pad the cotangent back to x's shape: interior padding re-spaces a strided slice.
    steps = strides or (1,) * len(start_indices)
    aval = x.aval
    if type(ct) is np.ndarray and ct.dtype == aval.dtype and core.impls_run_directly():
        # the eager tape's backward pass: the pad's numpy, written into zeros directly
        out = np.zeros(aval.shape, aval.dtype)
        out[tuple(map(builtins.slice, start_indices, limit_indices, steps))] = ct
        return [out]
    config = []
    for s, st, n, m in zip(start_indices, steps, aval.shape, get_aval(ct).shape):
        end = s + (m - 1) * st + 1 if m else s
        config.append((s, n - end, st - 1))
    return [pad(ct, np.zeros((), aval.dtype), padding_config=tuple(config))]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    size = get_aval(x).shape[d]
    return slice(x, start_indices=insert(start_indices, d, 0),
                 limit_indices=insert(limit_indices, d, size),
                 strides=None if strides is None else insert(strides, d, 1)), d


def _slice_cost(x, *, start_indices, limit_indices, strides):
    return {"flops": 0, "bytes": 2 * nbytes(_slice_abstract_eval(
        x, start_indices=start_indices, limit_indices=limit_indices, strides=strides))}


slice_p.impl = checked_impl(_slice_impl, slice_p)
slice_p.abstract_eval = _slice_abstract_eval
slice_p.batch = _slice_batch
slice_p.cost = _slice_cost
slice_p.lowering = lower_slice
deflinear(slice_p, _slice_transpose)
roles.SLICE.fill(slice_p)
slice_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING, passes.NEG_COMMUTING}
slice_p.rewrites = (
    identity("a slice from the origin with unit strides, of the whole operand", lambda eqn, x: (
        all(s == 0 for s in eqn.params["start_indices"])
        and all(s in (None, 1) for s in (eqn.params["strides"] or ())))),
)


def slice(x, *, start_indices, limit_indices, strides=None):
    """The static slice ``x[start:limit:stride, ...]`` (one entry per axis).

    Args:
      x: an array.
      start_indices, limit_indices: per axis, ``0 <= start <= limit <= size``.
      strides: per axis, a step >= 1; ``None`` means all ones.

    Returns:
      The slice; axis ``i`` has ``ceil((limit[i] - start[i]) / stride[i])`` elements.

    Raises:
      ShapeError: wrong number of entries or out-of-bounds indices.

    >>> slice(np.arange(10), start_indices=(1,), limit_indices=(8,), strides=(3,))
    array([1, 4, 7])
    """
    if strides is not None:
        strides = int_tuple(strides)
        if all(s == 1 for s in strides):
            strides = None
    return bind(slice_p, x, start_indices=int_tuple(start_indices),
                limit_indices=int_tuple(limit_indices), strides=strides)


# --- pad --------------------------------------------------------------------------

pad_p = Primitive("pad")


def _pad_impl(x, padding_value, *, padding_config):
    # Pad with max(lo, 0) and max(hi, 0) first, then crop the negative sides.
    x = as_array(x)
    full_shape = [max(lo, 0) + n + max(n - 1, 0) * i + max(hi, 0)
                  for n, (lo, hi, i) in zip(x.shape, padding_config)]
    if np.ndim(padding_value) or len(padding_config) != x.ndim or any(
            i < 0 or size < max(-lo, 0) + max(-hi, 0)
            for size, (lo, hi, i) in zip(full_shape, padding_config)):
        raise ValueError("invalid padding")  # numpy would not notice; see checked_impl
    if type(x) is np.ndarray:
        out = np.full(full_shape, padding_value, dtype=x.dtype)
    else:  # a dask (cupy ...) array: the padded array is one of that library's too
        out = np.full_like(x, padding_value, shape=full_shape)
    out[pad_index(x.shape, padding_config)] = x
    return out[tuple(builtins.slice(max(-lo, 0), size - max(-hi, 0))
                     for size, (lo, hi, _) in zip(full_shape, padding_config))]


def _pad_abstract_eval(x, padding_value, *, padding_config):
    same_dtype("pad", x, padding_value)
    if padding_value.ndim != 0:
        raise ShapeError(f"pad needs a 0-d padding_value, but got {padding_value.str_short()}")
    check_rank("pad", "padding_config", padding_config, x)
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        size = lo + hi + n + max(n - 1, 0) * interior
        if interior < 0 or size < 0:
            raise ShapeError(f"pad of {x.str_short()} with padding_config={padding_config} "
                             "needs interior >= 0 and a non-negative result on every axis "
                             f"(lo + hi + size + (size - 1) * interior), got {size}")
        shape.append(size)
    return ShapedArray(tuple(shape), x.dtype)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    # The cotangent of x is ct at x's positions: undo lo/hi with the opposite
    # padding, then step over the interior padding with a strided slice.
    dtype = get_aval(ct).dtype
    unpadded = pad(ct, np.zeros((), dtype),
                   padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    shape = get_aval(unpadded).shape
    ct_x = slice(unpadded, start_indices=(0,) * len(shape), limit_indices=shape,
                 strides=tuple(i + 1 for _, _, i in padding_config))
    ct_pv = None
    if is_undefined(padding_value):  # every position that is not x's
        everything = tuple(range(len(shape)))
        ct_pv = el.sub(roles.REDUCE_SUM.primitive.bind(ct, axes=everything),
                       roles.REDUCE_SUM.primitive.bind(ct_x, axes=everything))
    return [ct_x if is_undefined(x) else None, ct_pv]


def _pad_batch(vals, dims, *, padding_config):
    (x, padding_value), (dx, dp) = vals, dims
    if dp is None:
        return pad(x, padding_value, padding_config=insert(padding_config, dx, (0, 0, 0))), dx
    # A per-member padding value: pad with zeros, then add value * (mask of padded positions).
    dtype = get_aval(padding_value).dtype
    zero, one = np.zeros((), dtype), np.ones((), dtype)
    if dx is None:
        padded, shape = pad(x, zero, padding_config=padding_config), get_aval(x).shape
    else:
        padded = pad(moveaxis(x, dx, 0), zero, padding_config=((0, 0, 0),) + padding_config)
        shape = get_aval(x).shape[:dx] + get_aval(x).shape[dx + 1:]
    mask = pad(full(shape, 0, dtype), one, padding_config=padding_config)
    values = reshape(padding_value, new_sizes=get_aval(padding_value).shape + (1,) * len(shape))
    return el.add(padded, el.mul(mask, values)), 0


def _pad_cost(x, padding_value, *, padding_config):
    out = _pad_abstract_eval(x, padding_value, padding_config=padding_config)
    return {"flops": 0, "bytes": nbytes(x) + nbytes(out)}


pad_p.impl = checked_impl(_pad_impl, pad_p)
roles.PAD.fill(pad_p)
pad_p.abstract_eval = _pad_abstract_eval
pad_p.batch = _pad_batch
pad_p.cost = _pad_cost
pad_p.lowering = lower_pad
deflinear(pad_p, _pad_transpose)
pad_p.rewrites = (on_zeros("zeros padded with zeros -> zeros", (), zeros, each=ZERO),)


def pad(x, padding_value, *, padding_config):
    """Pad ``x`` with ``padding_value``, like ``lax.pad``.

    Args:
      x: an array.
      padding_value: a 0-d value of x's dtype (a Python scalar is converted).
      padding_config: per axis ``(lo, hi, interior)``: ``lo``/``hi`` elements
        before/after (negative values crop), ``interior`` between neighbours.

    Returns:
      An array with axis sizes ``lo + hi + n + (n - 1) * interior``.

    Raises:
      ShapeError: wrong number of axes, negative interior or a negative result size.

    >>> pad(np.array([1, 2]), 0, padding_config=((1, -1, 2),))
    array([0, 1, 0, 0])
    """
    if type(padding_value) in (int, float, bool):
        padding_value = np.asarray(padding_value, dtype=get_aval(x).dtype)
    return bind(pad_p, x, padding_value,
                padding_config=tuple(int_tuple(c) for c in padding_config))


# --- dynamic_slice and dynamic_update_slice ---------------------------------------


def _clamped_starts(start_indices, shape, sizes):
    """Starts clamped like lax so that the window lies inside the array.

    ``operator.index`` rejects float and non-0-d indices; a ValueError lets
    ``checked_impl`` report the problem through the shape rule.
    """
    if len(start_indices) != len(shape) or len(sizes) != len(shape) or any(
            not 0 <= k <= n for n, k in zip(shape, sizes)):
        raise ValueError("window does not fit")
    return [min(max(operator.index(s), 0), n - k) for s, n, k in zip(start_indices, shape, sizes)]


def _check_start_indices(name: str, x: ShapedArray, indices) -> None:
    if len(indices) != x.ndim:
        raise ShapeError(f"{name} needs one start index per axis of {x.str_short()}, "
                         f"but got {len(indices)}")
    for i in indices:
        if i.ndim != 0 or i.dtype.kind not in "iu":
            raise DTypeError(f"{name} needs 0-d integer start indices, but got "
                             f"{i.str_short()}; convert with astype(int)")


def _window_positions(starts, start_dims, shape, sizes, size, member_stride):
    """Flat positions of every element of each batch member's window, for batched starts.

    Member ``b`` reads the window of ``sizes`` at its own clamped starts from
    block ``b`` (``member_stride`` elements long; 0 for a shared operand) of
    the operand flattened to one axis. The result has shape
    ``(size,) + sizes``: one gather or scatter along axis 0 then moves all
    windows at once. The offsets within a window are a constant built from
    shapes; only the starts are traced (clamped with min/max like the impl).
    """
    int64 = np.dtype(np.int64)
    rank = len(shape)
    strides = [math.prod(shape[j + 1:]) for j in range(rank)]
    positions = (np.arange(size, dtype=np.int64) * member_stride).reshape((size,) + (1,) * rank)
    for j, (k, stride) in enumerate(zip(sizes, strides)):
        positions = positions + (np.arange(k, dtype=np.int64) * stride).reshape(
            (1,) * (j + 1) + (k,) + (1,) * (rank - j - 1))
    for start, d, n, k, stride in zip(starts, start_dims, shape, sizes, strides):
        start = el.min(el.max(el.convert_element_type(start, int64), np.int64(0)),
                       np.int64(n - k))
        if d is not None:  # a batched 0-d start is a vector of one start per member
            start = reshape(start, new_sizes=(size,) + (1,) * rank)
        positions = el.add(positions, el.mul(start, np.int64(stride)))
    return positions


dynamic_slice_p = Primitive("dynamic_slice")


def _dynamic_slice_impl(x, *start_indices, slice_sizes):
    x = as_array(x)
    starts = _clamped_starts(start_indices, x.shape, slice_sizes)
    return x[tuple(builtins.slice(s, s + k) for s, k in zip(starts, slice_sizes))]


def _dynamic_slice_abstract_eval(x, *start_indices, slice_sizes):
    _check_start_indices("dynamic_slice", x, start_indices)
    check_rank("dynamic_slice", "slice_sizes", slice_sizes, x)
    if any(not 0 <= k <= n for k, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"dynamic_slice of {x.str_short()} needs 0 <= slice_sizes <= "
                         f"the operand's shape {x.shape}, but got {slice_sizes}")
    return ShapedArray(tuple(slice_sizes), x.dtype)


def _dynamic_slice_transpose(ct, x, *start_indices, slice_sizes):
    zeros = full(x.aval.shape, 0, x.aval.dtype)
    return [dynamic_update_slice(zeros, ct, *start_indices)] + [None] * len(start_indices)


def _dynamic_slice_batch(vals, dims, *, slice_sizes):
    (x, *starts), (dx, *dstarts) = vals, dims
    if dx is not None and all(d is None for d in dstarts):
        size = get_aval(x).shape[dx]
        return dynamic_slice(x, *insert(tuple(starts), dx, 0),
                             slice_sizes=insert(slice_sizes, dx, size)), dx
    # Starts differ per member: gather each member's window from the flattened operand.
    size = batch_size(vals, dims)
    shape = get_aval(x).shape if dx is None else drop(get_aval(x).shape, dx)
    n = math.prod(shape)
    flat = reshape(x if dx is None else moveaxis(x, dx, 0),
                   new_sizes=(n if dx is None else size * n,))
    positions = _window_positions(starts, dstarts, shape, slice_sizes, size,
                                  0 if dx is None else n)
    return gather(flat, positions, axis=0), 0


dynamic_slice_p.impl = checked_impl(_dynamic_slice_impl, dynamic_slice_p)
dynamic_slice_p.abstract_eval = _dynamic_slice_abstract_eval
dynamic_slice_p.batch = _dynamic_slice_batch
dynamic_slice_p.cost = lambda x, *starts, slice_sizes: {
    "flops": 0, "bytes": 2 * x.dtype.itemsize * math.prod(slice_sizes)}
deflinear(dynamic_slice_p, _dynamic_slice_transpose, num_linear=1)
dynamic_slice_p.rewrites = (on_zeros("a window of zeros -> zeros", (ZERO,), zeros),)


def dynamic_slice(x, *start_indices, slice_sizes):
    """The window of ``slice_sizes`` at traced ``start_indices`` (one 0-d int per axis).

    Starts are clamped like ``lax.dynamic_slice`` so the window stays inside
    ``x``: a start below 0 acts as 0, one past ``size - slice_size`` as the last
    valid start.

    Args:
      x: an array.
      *start_indices: 0-d integer arrays, tracers or Python ints, one per axis.
      slice_sizes: the window's shape (static).

    Returns:
      An array of shape ``slice_sizes``.

    Raises:
      ShapeError: wrong number of indices or sizes larger than ``x``.
      DTypeError: a start index is not a 0-d integer.

    >>> dynamic_slice(np.arange(5), np.int64(4), slice_sizes=(2,))
    array([3, 4])
    """
    return bind(dynamic_slice_p, x, *start_indices, slice_sizes=int_tuple(slice_sizes))


dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dynamic_update_slice_impl(x, update, *start_indices):
    update = as_array(update)
    out = as_array(x).copy()
    starts = _clamped_starts(start_indices, out.shape, update.shape)
    out[tuple(builtins.slice(s, s + k) for s, k in zip(starts, update.shape))] = update
    return out


def _dynamic_update_slice_abstract_eval(x, update, *start_indices):
    same_dtype("dynamic_update_slice", x, update)
    _check_start_indices("dynamic_update_slice", x, start_indices)
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice needs an update of the operand's rank and "
                         f"no larger on any axis, but the operand is {x.str_short()} and "
                         f"the update {update.str_short()}")
    return x


def _dynamic_update_slice_transpose(ct, x, update, *start_indices):
    u_aval = update.aval if is_undefined(update) else get_aval(update)
    ct_x = ct_u = None
    if is_undefined(x):  # x's cotangent is ct with the overwritten window zeroed
        ct_x = dynamic_update_slice(ct, full(u_aval.shape, 0, u_aval.dtype), *start_indices)
    if is_undefined(update):
        ct_u = dynamic_slice(ct, *start_indices, slice_sizes=u_aval.shape)
    return [ct_x, ct_u] + [None] * len(start_indices)


def _dynamic_update_slice_batch(vals, dims):
    (x, update, *starts), (dx, du, *dstarts) = vals, dims
    size = batch_size(vals, dims)
    if all(d is None for d in dstarts):
        return dynamic_update_slice(with_batch_at_front(x, dx, size),
                                    with_batch_at_front(update, du, size), 0, *starts), 0
    # Starts differ per member: scatter each member's window into the flattened operand.
    shape = get_aval(x).shape if dx is None else drop(get_aval(x).shape, dx)
    n = math.prod(shape)
    flat = reshape(with_batch_at_front(x, dx, size), new_sizes=(size * n,))
    update = with_batch_at_front(update, du, size)
    positions = _window_positions(starts, dstarts, shape, get_aval(update).shape[1:], size, n)
    out = scatter(flat, positions, update, axis=0)
    return reshape(out, new_sizes=(size,) + shape), 0


dynamic_update_slice_p.impl = checked_impl(_dynamic_update_slice_impl, dynamic_update_slice_p)
dynamic_update_slice_p.abstract_eval = _dynamic_update_slice_abstract_eval
dynamic_update_slice_p.batch = _dynamic_update_slice_batch
dynamic_update_slice_p.cost = lambda x, update, *starts: {
    "flops": 0, "bytes": 2 * nbytes(x) + nbytes(update)}
deflinear(dynamic_update_slice_p, _dynamic_update_slice_transpose, num_linear=2)
dynamic_update_slice_p.rewrites = (
    on_zeros("zeros updated with zeros -> zeros", (ZERO, ZERO), zeros),
)


def dynamic_update_slice(x, update, *start_indices):
    """``x`` with the window at traced ``start_indices`` replaced by ``update``.

    Starts are clamped like ``lax.dynamic_update_slice`` so that the whole
    update lands inside ``x``. The result is a new array; ``x`` is unchanged.

    Args:
      x: an array.
      update: an array of x's rank and dtype, no larger than ``x`` on any axis.
      *start_indices: 0-d integer arrays, tracers or Python ints, one per axis.

    Returns:
      An array like ``x``.

    Raises:
      ShapeError: rank mismatch, an update larger than ``x`` or a wrong number of indices.
      DTypeError: x and update differ in dtype, or an index is not a 0-d integer.

    >>> dynamic_update_slice(np.zeros(4), np.ones(2), np.int64(1))
    array([0., 1., 1., 0.])
    """
    return bind(dynamic_update_slice_p, x, update, *start_indices)
