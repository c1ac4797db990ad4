"""Structural primitives: broadcast, reshape, transpose, slicing, padding and friends.

All are linear in their array operands, so each card states the primitive,
its shape rule, its transpose and its batch rule; ``deflinear`` derives the
jvp. Integer start indices of the dynamic slices are non-linear operands:
they get symbolic zero tangents and ``None`` cotangents. Convenience
operations built from the primitives (``full``, ``broadcast_to``,
``moveaxis``, ``unbroadcast``) live here too. Operations
normalise their settings (negative axes, numpy ints) into hashable tuples of
Python ints before binding; abstract_eval then checks them strictly.
"""

from __future__ import annotations

import builtins  # the operation `slice` below shadows the builtin
import operator

import numpy as np

from funcdiff.core import Primitive, ShapedArray, bind, get_aval, instantiate
from funcdiff.errors import AxisError, DTypeError, FunctionalDiffError, ShapeError
from funcdiff.primitives.cards import (checked_impl, deflinear, make_op, movement_cost, nbytes,
                                       same_dtype)

# --- shared checks ----------------------------------------------------------------


def _checked_impl(prim: Primitive, impl):
    return checked_impl(impl, prim)


def _int_tuple(values) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _canonical_axes(name: str, axes, ndim: int) -> tuple[int, ...]:
    """``axes`` (an int or a sequence, negatives allowed) as a sorted tuple in [0, ndim)."""
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"{name} got axis {a} for a result of rank {ndim}; valid axes "
                            f"are {-ndim}..{ndim - 1}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise AxisError(f"{name} got the repeated axes {axes} for a result of rank {ndim}")
    return tuple(sorted(out))


def _check_axes(name: str, axes: tuple, ndim: int) -> None:
    """Strict check of a primitive's ``dimensions`` param: unique, in [0, ndim)."""
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise AxisError(f"the primitive {name} got dimensions {axes}, but needs distinct "
                        f"axes in [0, {ndim}). The operation {name}() accepts negative "
                        "axes and normalises them.")


def _check_rank(name: str, what: str, values: tuple, x: ShapedArray) -> None:
    if len(values) != x.ndim:
        raise ShapeError(f"{name} needs one entry of {what} per axis of its operand "
                         f"{x.str_short()} ({x.ndim}), but got {what}={values}")


def _insert(values: tuple, position: int, value) -> tuple:
    return values[:position] + (value,) + values[position:]


def _drop(values: tuple, position: int) -> tuple:
    return values[:position] + values[position + 1:]


def _batch_size(vals, dims) -> int:
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def _with_batch_at_front(x, bdim, size):
    """``x`` with its batch axis at 0; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        shape = get_aval(x).shape
        return broadcast_in_dim(x, shape=(size,) + shape,
                                broadcast_dimensions=tuple(range(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0) if bdim != 0 else x


# --- broadcast_in_dim ----------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim or any(
            x.shape[i] not in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim cannot broadcast {x.shape} to {shape} "
                         f"along dimensions {broadcast_dimensions}")
    return ShapedArray(tuple(shape), x.dtype)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    from funcdiff.primitives import reductions
    in_shape = x.aval.shape
    summed = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    expanded = tuple(d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1)
    out = ct
    if summed or expanded:
        out = reductions.reduce_sum(ct, axes=tuple(sorted(summed + expanded)))
    if get_aval(out).shape != in_shape:
        out = reshape(out, new_sizes=in_shape)
    return [out]


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0) if d != 0 else x
    size = get_aval(x).shape[0]
    return broadcast_in_dim(x, shape=(size,) + tuple(shape),
                            broadcast_dimensions=(0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


broadcast_in_dim_p.impl = _checked_impl(broadcast_in_dim_p, _broadcast_in_dim_impl)
broadcast_in_dim_p.abstract_eval = _broadcast_in_dim_abstract_eval
broadcast_in_dim_p.batch = _broadcast_in_dim_batch
broadcast_in_dim_p.cost = movement_cost
deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
broadcast_in_dim = make_op(broadcast_in_dim_p, "Broadcast x to shape, mapping its axes to broadcast_dimensions.")

# --- reshape --------------------------------------------------------------------

reshape_p = Primitive("reshape")
reshape_p.impl = _checked_impl(reshape_p, lambda x, *, new_sizes: np.reshape(x, new_sizes))


def _reshape_abstract_eval(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise ShapeError(f"reshape cannot turn shape {x.shape} ({x.size} elements) into "
                         f"{tuple(new_sizes)}")
    return ShapedArray(tuple(new_sizes), x.dtype)


def _reshape_batch(vals, dims, *, new_sizes):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0) if d != 0 else x
    return reshape(x, new_sizes=(get_aval(x).shape[0],) + tuple(new_sizes)), 0


reshape_p.abstract_eval = _reshape_abstract_eval
reshape_p.batch = _reshape_batch
reshape_p.cost = movement_cost
deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, new_sizes=x.aval.shape)])
reshape = make_op(reshape_p, "Reshape x to new_sizes (row-major order).")

# --- transpose ------------------------------------------------------------------

transpose_p = Primitive("transpose")
transpose_p.impl = _checked_impl(transpose_p,
                                 lambda x, *, permutation: np.transpose(x, permutation))


def _transpose_abstract_eval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose needs a permutation of {tuple(range(x.ndim))}, got {permutation}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)


def _transpose_transpose(ct, x, *, permutation):
    inverse = tuple(int(i) for i in np.argsort(permutation))
    return [transpose(ct, permutation=inverse)]


def _transpose_batch(vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0) if d != 0 else x
    return transpose(x, permutation=(0,) + tuple(p + 1 for p in permutation)), 0


transpose_p.abstract_eval = _transpose_abstract_eval
transpose_p.batch = _transpose_batch
transpose_p.cost = movement_cost
deflinear(transpose_p, _transpose_transpose)
transpose = make_op(transpose_p, "Permute the axes of x.")

# --- operations built from the primitives ---------------------------------------


def full(shape, fill_value, dtype):
    """An array of ``shape`` filled with ``fill_value`` (a broadcast scalar)."""
    return broadcast_in_dim(np.asarray(fill_value, dtype=dtype), shape=tuple(shape),
                            broadcast_dimensions=())


def broadcast_to(x, shape):
    """numpy-style broadcast of ``x`` to ``shape`` (leading axes added)."""
    in_shape = get_aval(x).shape
    shape = tuple(shape)
    if in_shape == shape:
        return x
    lead = len(shape) - len(in_shape)
    if lead < 0:
        raise ShapeError(f"cannot broadcast shape {in_shape} to the smaller rank shape {shape}")
    return broadcast_in_dim(x, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


def unbroadcast(x, shape):
    """Sum ``x`` down to ``shape``: the transpose of numpy broadcasting."""
    from funcdiff.primitives import reductions
    in_shape = get_aval(x).shape
    shape = tuple(shape)
    if in_shape == shape:
        return x
    lead = len(in_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and in_shape[lead + i] != 1)
    out = reductions.reduce_sum(x, axes=axes) if axes else x
    if get_aval(out).shape != shape:
        out = reshape(out, new_sizes=shape)
    return out


def moveaxis(x, source, destination):
    ndim = get_aval(x).ndim
    source, destination = source % ndim, destination % ndim
    if source == destination:
        return x
    perm = [i for i in range(ndim) if i != source]
    perm.insert(destination, source)
    return transpose(x, permutation=tuple(perm))


# --- squeeze ----------------------------------------------------------------------

squeeze_p = Primitive("squeeze")
squeeze_p.impl = _checked_impl(squeeze_p, lambda x, *, dimensions: np.squeeze(x, axis=dimensions))


def _squeeze_abstract_eval(x, *, dimensions):
    _check_axes("squeeze", dimensions, x.ndim)
    if any(x.shape[d] != 1 for d in dimensions):
        raise ShapeError(f"squeeze can only remove axes of size 1, but dimensions "
                         f"{dimensions} of {x.str_short()} have sizes "
                         f"{tuple(x.shape[d] for d in dimensions)}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype)


def _squeeze_batch(vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return (squeeze(x, dimensions=tuple(a + (a >= d) for a in dimensions)),
            d - sum(a < d for a in dimensions))


squeeze_p.abstract_eval = _squeeze_abstract_eval
squeeze_p.batch = _squeeze_batch
squeeze_p.cost = lambda x, *, dimensions: {"flops": 0, "bytes": 0}  # a view
deflinear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, new_sizes=x.aval.shape)])


def squeeze(x, *, dimensions):
    """Remove axes of size 1.

    Args:
      x: an array.
      dimensions: the axes to remove (an int or a tuple; negatives count from the end).

    Returns:
      ``x`` without those axes.

    Raises:
      AxisError: an axis is out of range. ShapeError: an axis is not of size 1.

    >>> squeeze(np.ones((1, 3, 1)), dimensions=(0, -1)).shape
    (3,)
    """
    ndim = get_aval(x).ndim
    return bind(squeeze_p, x, dimensions=_canonical_axes("squeeze", dimensions, ndim))


# --- expand_dims ------------------------------------------------------------------

expand_dims_p = Primitive("expand_dims")
expand_dims_p.impl = _checked_impl(expand_dims_p,
                                   lambda x, *, dimensions: np.expand_dims(x, dimensions))


def _expand_dims_abstract_eval(x, *, dimensions):
    out_ndim = x.ndim + len(dimensions)
    _check_axes("expand_dims", dimensions, out_ndim)
    it = iter(x.shape)
    return ShapedArray(tuple(1 if i in dimensions else next(it) for i in range(out_ndim)),
                       x.dtype)


def _expand_dims_batch(vals, dims, *, dimensions):
    # The batch axis goes right before the output position of unbatched input
    # axis d (or last), so no transpose is needed.
    (x,), (d,) = vals, dims
    out_ndim = get_aval(x).ndim - 1 + len(dimensions)
    kept = [p for p in range(out_ndim) if p not in dimensions]
    b = kept[d] if d < len(kept) else out_ndim
    return expand_dims(x, dimensions=tuple(p + (p >= b) for p in dimensions)), b


expand_dims_p.abstract_eval = _expand_dims_abstract_eval
expand_dims_p.batch = _expand_dims_batch
expand_dims_p.cost = lambda x, *, dimensions: {"flops": 0, "bytes": 0}  # a view
deflinear(expand_dims_p, lambda ct, x, *, dimensions: [squeeze(ct, dimensions=dimensions)])


def expand_dims(x, *, dimensions):
    """Insert axes of size 1 at the given positions of the output.

    Args:
      x: an array.
      dimensions: output positions of the new axes (an int or a tuple; negatives
        count from the end of the output).

    Returns:
      ``x`` with ``len(dimensions)`` more axes.

    Raises:
      AxisError: a position is out of range for the output rank, or repeated.

    >>> expand_dims(np.ones((2, 3)), dimensions=(0, -1)).shape
    (1, 2, 3, 1)
    """
    dimensions = (dimensions,) if isinstance(dimensions, (int, np.integer)) else tuple(dimensions)
    out_ndim = get_aval(x).ndim + len(dimensions)
    return bind(expand_dims_p, x,
                dimensions=_canonical_axes("expand_dims", dimensions, out_ndim))


# --- rev --------------------------------------------------------------------------

rev_p = Primitive("rev")
rev_p.impl = _checked_impl(rev_p,
                           lambda x, *, dimensions: np.flip(x, dimensions) if dimensions else x)


def _rev_abstract_eval(x, *, dimensions):
    _check_axes("rev", dimensions, x.ndim)
    return x


def _rev_batch(vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return rev(x, dimensions=tuple(a + (a >= d) for a in dimensions)), d


rev_p.abstract_eval = _rev_abstract_eval
rev_p.batch = _rev_batch
rev_p.cost = movement_cost
deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions=dimensions)])


def rev(x, *, dimensions):
    """Reverse the order of elements along ``dimensions``.

    >>> rev(np.arange(3), dimensions=(0,))
    array([2, 1, 0])
    """
    ndim = get_aval(x).ndim
    return bind(rev_p, x, dimensions=_canonical_axes("rev", dimensions, ndim))


# --- concatenate ------------------------------------------------------------------

concatenate_p = Primitive("concatenate")
concatenate_p.impl = _checked_impl(concatenate_p,
                                   lambda *xs, dimension: np.concatenate(xs, axis=dimension))


def _concatenate_abstract_eval(*xs, dimension):
    if not xs:
        raise ShapeError("concatenate needs at least one operand")
    dtype = same_dtype("concatenate", *xs)
    x0 = xs[0]
    if not 0 <= dimension < x0.ndim:
        raise AxisError(f"concatenate got dimension={dimension} for operands of rank "
                        f"{x0.ndim}; 0-d arrays cannot be concatenated (expand_dims first)")
    for x in xs:
        if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape))
                                    if i != dimension):
            raise ShapeError(
                f"concatenate along dimension {dimension} needs operands whose other "
                f"dimensions agree, but got shapes {', '.join(str(y.shape) for y in xs)}")
    shape = _insert(tuple(s for i, s in enumerate(x0.shape) if i != dimension), dimension,
                    sum(x.shape[dimension] for x in xs))
    return ShapedArray(shape, dtype)


def _concatenate_transpose(ct, *xs, dimension):
    from funcdiff.interpreters.transpose import is_undefined
    shape = get_aval(ct).shape
    cts, start = [], 0
    for x in xs:
        size = (x.aval if is_undefined(x) else get_aval(x)).shape[dimension]
        if is_undefined(x):  # the operand's block of ct
            starts = tuple(start if i == dimension else 0 for i in range(len(shape)))
            limits = tuple(start + size if i == dimension else s for i, s in enumerate(shape))
            cts.append(slice(ct, start_indices=starts, limit_indices=limits))
        else:
            cts.append(None)
        start += size
    return cts


def _concatenate_batch(vals, dims, *, dimension):
    size = _batch_size(vals, dims)
    moved = [_with_batch_at_front(v, d, size) for v, d in zip(vals, dims)]
    return concatenate(*moved, dimension=dimension + 1), 0


concatenate_p.abstract_eval = _concatenate_abstract_eval
concatenate_p.batch = _concatenate_batch
concatenate_p.cost = movement_cost
deflinear(concatenate_p, _concatenate_transpose)


def concatenate(*xs, dimension: int):
    """Join arrays of one rank and dtype along an existing axis.

    Args:
      *xs: the arrays; all dimensions other than ``dimension`` must agree.
      dimension: the axis to join along (negatives count from the end).

    Returns:
      The concatenation, like ``numpy.concatenate(xs, axis=dimension)``.

    Raises:
      ShapeError: the other dimensions differ. DTypeError: dtypes differ.

    >>> concatenate(np.zeros((1, 2)), np.ones((2, 2)), dimension=0).shape
    (3, 2)
    """
    ndim = get_aval(xs[0]).ndim if xs else 0
    dimension = int(dimension)
    return bind(concatenate_p, *xs, dimension=dimension + ndim if dimension < 0 else dimension)


# --- slice ------------------------------------------------------------------------

slice_p = Primitive("slice")


def _slice_impl(x, *, start_indices, limit_indices, strides):
    x = np.asarray(x)
    steps = strides or (1,) * len(start_indices)
    if len(start_indices) != x.ndim or not all(
            0 <= s <= l <= n for s, l, n in zip(start_indices, limit_indices, x.shape)):
        raise ValueError("out of bounds")  # numpy would clip silently; see _checked_impl
    return x[tuple(map(builtins.slice, start_indices, limit_indices, steps))]


def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    _check_rank("slice", "start_indices", start_indices, x)
    _check_rank("slice", "limit_indices", limit_indices, x)
    steps = strides or (1,) * x.ndim
    _check_rank("slice", "strides", steps, x)
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
    config = []
    for s, st, n, m in zip(start_indices, steps, x.aval.shape, get_aval(ct).shape):
        end = s + (m - 1) * st + 1 if m else s
        config.append((s, n - end, st - 1))
    return [pad(ct, np.zeros((), x.aval.dtype), padding_config=tuple(config))]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    size = get_aval(x).shape[d]
    return slice(x, start_indices=_insert(start_indices, d, 0),
                 limit_indices=_insert(limit_indices, d, size),
                 strides=None if strides is None else _insert(strides, d, 1)), d


def _slice_cost(x, *, start_indices, limit_indices, strides):
    return {"flops": 0, "bytes": 2 * nbytes(_slice_abstract_eval(
        x, start_indices=start_indices, limit_indices=limit_indices, strides=strides))}


slice_p.impl = _checked_impl(slice_p, _slice_impl)
slice_p.abstract_eval = _slice_abstract_eval
slice_p.batch = _slice_batch
slice_p.cost = _slice_cost
deflinear(slice_p, _slice_transpose)


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
        strides = _int_tuple(strides)
        if all(s == 1 for s in strides):
            strides = None
    return bind(slice_p, x, start_indices=_int_tuple(start_indices),
                limit_indices=_int_tuple(limit_indices), strides=strides)


# --- pad --------------------------------------------------------------------------

pad_p = Primitive("pad")


def _pad_impl(x, padding_value, *, padding_config):
    # Pad with max(lo, 0) and max(hi, 0) first, then crop the negative sides.
    x = np.asarray(x)
    full_shape = [max(lo, 0) + n + max(n - 1, 0) * i + max(hi, 0)
                  for n, (lo, hi, i) in zip(x.shape, padding_config)]
    if np.ndim(padding_value) or len(padding_config) != x.ndim or any(
            i < 0 or size < max(-lo, 0) + max(-hi, 0)
            for size, (lo, hi, i) in zip(full_shape, padding_config)):
        raise ValueError("invalid padding")  # numpy would not notice; see _checked_impl
    out = np.full(full_shape, padding_value, dtype=x.dtype)
    out[tuple(builtins.slice(max(lo, 0), max(lo, 0) + (n - 1) * (i + 1) + 1 if n else 0, i + 1)
              for n, (lo, hi, i) in zip(x.shape, padding_config))] = x
    return out[tuple(builtins.slice(max(-lo, 0), size - max(-hi, 0))
                     for size, (lo, hi, _) in zip(full_shape, padding_config))]


def _pad_abstract_eval(x, padding_value, *, padding_config):
    same_dtype("pad", x, padding_value)
    if padding_value.ndim != 0:
        raise ShapeError(f"pad needs a 0-d padding_value, but got {padding_value.str_short()}")
    _check_rank("pad", "padding_config", padding_config, x)
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
    from funcdiff.interpreters.transpose import is_undefined
    from funcdiff.primitives.elementwise import sub
    from funcdiff.primitives.reductions import reduce_sum
    dtype = get_aval(ct).dtype
    unpadded = pad(ct, np.zeros((), dtype),
                   padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    shape = get_aval(unpadded).shape
    ct_x = slice(unpadded, start_indices=(0,) * len(shape), limit_indices=shape,
                 strides=tuple(i + 1 for _, _, i in padding_config))
    ct_pv = None
    if is_undefined(padding_value):  # every position that is not x's
        everything = tuple(range(len(shape)))
        ct_pv = sub(reduce_sum(ct, axes=everything), reduce_sum(ct_x, axes=everything))
    return [ct_x if is_undefined(x) else None, ct_pv]


def _pad_batch(vals, dims, *, padding_config):
    (x, padding_value), (dx, dp) = vals, dims
    if dp is None:
        return pad(x, padding_value, padding_config=_insert(padding_config, dx, (0, 0, 0))), dx
    # A per-member padding value: pad with zeros, then add value * (mask of padded positions).
    from funcdiff.primitives.elementwise import add, mul
    dtype = get_aval(padding_value).dtype
    zero, one = np.zeros((), dtype), np.ones((), dtype)
    if dx is None:
        padded, shape = pad(x, zero, padding_config=padding_config), get_aval(x).shape
    else:
        padded = pad(moveaxis(x, dx, 0), zero, padding_config=((0, 0, 0),) + padding_config)
        shape = get_aval(x).shape[:dx] + get_aval(x).shape[dx + 1:]
    mask = pad(full(shape, 0, dtype), one, padding_config=padding_config)
    values = reshape(padding_value, new_sizes=get_aval(padding_value).shape + (1,) * len(shape))
    return add(padded, mul(mask, values)), 0


def _pad_cost(x, padding_value, *, padding_config):
    out = _pad_abstract_eval(x, padding_value, padding_config=padding_config)
    return {"flops": 0, "bytes": nbytes(x) + nbytes(out)}


pad_p.impl = _checked_impl(pad_p, _pad_impl)
pad_p.abstract_eval = _pad_abstract_eval
pad_p.batch = _pad_batch
pad_p.cost = _pad_cost
deflinear(pad_p, _pad_transpose)


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
                padding_config=tuple(_int_tuple(c) for c in padding_config))


# --- dynamic_slice and dynamic_update_slice ---------------------------------------


def _clamped_starts(start_indices, shape, sizes):
    """Starts clamped like lax so that the window lies inside the array.

    ``operator.index`` rejects float and non-0-d indices; a ValueError lets
    ``_checked_impl`` report the problem through the shape rule.
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
    from funcdiff.primitives import elementwise as el
    int64 = np.dtype(np.int64)
    rank = len(shape)
    strides = [int(np.prod(shape[j + 1:], dtype=np.int64)) for j in range(rank)]
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
    x = np.asarray(x)
    starts = _clamped_starts(start_indices, x.shape, slice_sizes)
    return x[tuple(builtins.slice(s, s + k) for s, k in zip(starts, slice_sizes))]


def _dynamic_slice_abstract_eval(x, *start_indices, slice_sizes):
    _check_start_indices("dynamic_slice", x, start_indices)
    _check_rank("dynamic_slice", "slice_sizes", slice_sizes, x)
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
        return dynamic_slice(x, *_insert(tuple(starts), dx, 0),
                             slice_sizes=_insert(slice_sizes, dx, size)), dx
    # Starts differ per member: gather each member's window from the flattened operand.
    from funcdiff.primitives.indexing import gather
    size = _batch_size(vals, dims)
    shape = get_aval(x).shape if dx is None else _drop(get_aval(x).shape, dx)
    n = int(np.prod(shape, dtype=np.int64))
    flat = reshape(x if dx is None else moveaxis(x, dx, 0),
                   new_sizes=(n if dx is None else size * n,))
    positions = _window_positions(starts, dstarts, shape, slice_sizes, size,
                                  0 if dx is None else n)
    return gather(flat, positions, axis=0), 0


dynamic_slice_p.impl = _checked_impl(dynamic_slice_p, _dynamic_slice_impl)
dynamic_slice_p.abstract_eval = _dynamic_slice_abstract_eval
dynamic_slice_p.batch = _dynamic_slice_batch
dynamic_slice_p.cost = lambda x, *starts, slice_sizes: {
    "flops": 0, "bytes": 2 * x.dtype.itemsize * int(np.prod(slice_sizes, dtype=np.int64))}
deflinear(dynamic_slice_p, _dynamic_slice_transpose, num_linear=1)


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
    return bind(dynamic_slice_p, x, *start_indices, slice_sizes=_int_tuple(slice_sizes))


dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dynamic_update_slice_impl(x, update, *start_indices):
    update = np.asarray(update)
    out = np.array(x, copy=True)
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
    from funcdiff.interpreters.transpose import is_undefined
    u_aval = update.aval if is_undefined(update) else get_aval(update)
    ct_x = ct_u = None
    if is_undefined(x):  # x's cotangent is ct with the overwritten window zeroed
        ct_x = dynamic_update_slice(ct, full(u_aval.shape, 0, u_aval.dtype), *start_indices)
    if is_undefined(update):
        ct_u = dynamic_slice(ct, *start_indices, slice_sizes=u_aval.shape)
    return [ct_x, ct_u] + [None] * len(start_indices)


def _dynamic_update_slice_batch(vals, dims):
    (x, update, *starts), (dx, du, *dstarts) = vals, dims
    size = _batch_size(vals, dims)
    if all(d is None for d in dstarts):
        return dynamic_update_slice(_with_batch_at_front(x, dx, size),
                                    _with_batch_at_front(update, du, size), 0, *starts), 0
    # Starts differ per member: scatter each member's window into the flattened operand.
    from funcdiff.primitives.indexing import scatter
    shape = get_aval(x).shape if dx is None else _drop(get_aval(x).shape, dx)
    n = int(np.prod(shape, dtype=np.int64))
    flat = reshape(_with_batch_at_front(x, dx, size), new_sizes=(size * n,))
    update = _with_batch_at_front(update, du, size)
    positions = _window_positions(starts, dstarts, shape, get_aval(update).shape[1:], size, n)
    out = scatter(flat, positions, update, axis=0)
    return reshape(out, new_sizes=(size,) + shape), 0


dynamic_update_slice_p.impl = _checked_impl(dynamic_update_slice_p, _dynamic_update_slice_impl)
dynamic_update_slice_p.abstract_eval = _dynamic_update_slice_abstract_eval
dynamic_update_slice_p.batch = _dynamic_update_slice_batch
dynamic_update_slice_p.cost = lambda x, update, *starts: {
    "flops": 0, "bytes": 2 * nbytes(x) + nbytes(update)}
deflinear(dynamic_update_slice_p, _dynamic_update_slice_transpose, num_linear=2)


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
