"""Structural primitives: broadcast, reshape, transpose, squeeze, expand_dims, rev, concatenate.

All are linear in their array operands, so each card states the primitive,
its shape rule, its transpose and its batch rule; ``deflinear`` derives the
jvp. Convenience operations built from the primitives (``full``,
``broadcast_to``, ``moveaxis``, ``unbroadcast``) live here too. Operations
normalise their settings (negative axes, numpy ints) into hashable tuples of
Python ints before binding; abstract_eval then checks them strictly. The
slicing primitives (``slice``, ``pad``, ``dynamic_slice``,
``dynamic_update_slice``) live in ``slicing``, above this module.

Two transposes here are primitives declared above: broadcasting transposes to
a sum over axes (``reduce_sum``, in ``reductions``) and concatenation to
slices (``slice``); the rules reach them through the roles ``roles.REDUCE_SUM`` and
``roles.SLICE``, which those cards fill.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from funcdiff.backends import as_array
from funcdiff import roles
from funcdiff.compiler.lowerings import (CONSTANT_VIEW, lower_concatenate, lower_reshape,
                                         lower_transpose)
from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import AxisError, ShapeError
from funcdiff.interpreters import batching
from funcdiff.interpreters.tape_nodes import broadcast_axes, summed_down
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.passes import traits as passes
from funcdiff.passes.rules import ANY, defined_by, identity, on_zeros, rewrite, zeros
from funcdiff.passes.zero_propagation import ZERO
from funcdiff.primitives.cards import checked_impl, deflinear, make_op, movement_cost, same_dtype

# --- shared checks ----------------------------------------------------------------


def _checked_impl(prim: Primitive, impl):
    return checked_impl(impl, prim)


def int_tuple(values) -> tuple[int, ...]:
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


def check_rank(name: str, what: str, values: tuple, x: ShapedArray) -> None:
    if len(values) != x.ndim:
        raise ShapeError(f"{name} needs one entry of {what} per axis of its operand "
                         f"{x.str_short()} ({x.ndim}), but got {what}={values}")


def insert(values: tuple, position: int, value) -> tuple:
    return values[:position] + (value,) + values[position:]


def drop(values: tuple, position: int) -> tuple:
    return values[:position] + values[position + 1:]


def batch_size(vals, dims) -> int:
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def with_batch_at_front(x, bdim, size):
    """``x`` with its batch axis at 0; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        shape = get_aval(x).shape
        return broadcast_in_dim(x, shape=(size,) + shape,
                                broadcast_dimensions=tuple(range(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0) if bdim != 0 else x


# --- broadcast_in_dim ----------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = as_array(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    x = x.reshape(expanded)
    if x.shape == shape:
        return x
    if type(x) is np.ndarray and math.prod(shape) <= _SMALL_BROADCAST:
        # np.broadcast_to (a read-only view) costs microseconds; filling a small new
        # array costs less than one
        out = np.empty(shape, x.dtype)
        out[...] = x
        return out
    return np.broadcast_to(x, shape)


_SMALL_BROADCAST = 4096  # elements: below this, broadcast_in_dim copies rather than views


def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim or any(
            x.shape[i] not in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim cannot broadcast {x.shape} to {shape} "
                         f"along dimensions {broadcast_dimensions}")
    return ShapedArray(tuple(shape), x.dtype)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    summed = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    expanded = tuple(d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1)
    out = ct
    if summed or expanded:
        out = roles.REDUCE_SUM.primitive.bind(ct, axes=tuple(sorted(summed + expanded)))
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
broadcast_in_dim_p.traits |= {CONSTANT_VIEW}
deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
broadcast_in_dim = make_op(broadcast_in_dim_p, "Broadcast x to shape, mapping its axes to broadcast_dimensions.")
roles.BROADCAST.fill(broadcast_in_dim_p)
broadcast_in_dim_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING,
                              passes.NEG_COMMUTING, passes.KEEPDIMS_MOVE}


def _broadcast_of_broadcast(rw, eqn, inner):
    dims1 = tuple(inner.params["broadcast_dimensions"])
    dims2 = tuple(eqn.params["broadcast_dimensions"])
    if list(dims1) != sorted(set(dims1)) or list(dims2) != sorted(set(dims2)):
        return None
    return rw.add(broadcast_in_dim_p, inner.invars[0], shape=eqn.outvars[0].aval.shape,
                  broadcast_dimensions=tuple(dims2[d] for d in dims1))


broadcast_in_dim_p.rewrites = (
    identity("a broadcast that adds no axis", lambda eqn, x: (
        tuple(eqn.params["broadcast_dimensions"]) == tuple(range(x.aval.ndim)))),
    rewrite("broadcast(broadcast x) -> one broadcast", (defined_by(broadcast_in_dim_p),),
            _broadcast_of_broadcast),
)

# --- reshape --------------------------------------------------------------------

reshape_p = Primitive("reshape")
reshape_p.impl = _checked_impl(reshape_p, lambda x, *, new_sizes: (
    x.reshape(new_sizes) if type(x) is np.ndarray else np.reshape(x, new_sizes)))


def _reshape_abstract_eval(x, *, new_sizes):
    if math.prod(new_sizes) != x.size:
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
reshape_p.lowering = lower_reshape
deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, new_sizes=x.aval.shape)])
reshape = make_op(reshape_p, "Reshape x to new_sizes (row-major order).")
roles.RESHAPE.fill(reshape_p)
reshape_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING, passes.NEG_COMMUTING,
                     passes.RESHAPING, passes.KEEPDIMS_MOVE}


def _as_one_reshape(rw, eqn, x):
    """``x`` reshaped to ``eqn``'s result: one canonical reshape, so equal ones meet in CSE."""
    shape = eqn.outvars[0].aval.shape
    return x if x.aval.shape == shape else rw.add(reshape_p, x, new_sizes=shape)


_SAME_SHAPE = identity("a reshape, squeeze or expand_dims to the operand's own shape")
_RESHAPE_OF_RESHAPE = rewrite(  # on the cards of every RESHAPING primitive
    "reshape(squeeze x) and the like -> one reshape", (defined_by(passes.RESHAPING),),
    lambda rw, eqn, inner: _as_one_reshape(rw, eqn, inner.invars[0]))
_AS_RESHAPE = rewrite("squeeze x, expand_dims x -> reshape x", (ANY,), _as_one_reshape)
reshape_p.rewrites = (_SAME_SHAPE, _RESHAPE_OF_RESHAPE)

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
transpose_p.lowering = lower_transpose
deflinear(transpose_p, _transpose_transpose)
transpose = make_op(transpose_p, "Permute the axes of x.")
roles.TRANSPOSE.fill(transpose_p)
transpose_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING, passes.NEG_COMMUTING}


def _transpose_of_transpose(rw, eqn, inner):
    first, second = inner.params["permutation"], eqn.params["permutation"]
    combined = tuple(first[i] for i in second)
    if combined == tuple(range(len(combined))):
        return inner.invars[0]
    return rw.add(transpose_p, inner.invars[0], permutation=combined)


transpose_p.rewrites = (
    identity("a transpose by the identity permutation", lambda eqn, x: (
        tuple(eqn.params["permutation"]) == tuple(range(len(eqn.params["permutation"]))))),
    rewrite("transpose(transpose x) -> one transpose, or x", (defined_by(transpose_p),),
            _transpose_of_transpose),
)

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
    """Sum ``x`` down to ``shape``: the transpose of numpy broadcasting (the tape's
    ``summed_down``, whose axes are planned once per pair of shapes)."""
    return summed_down(x, broadcast_axes(tuple(shape), get_aval(x).shape))


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
squeeze_p.lowering = lower_reshape
deflinear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, new_sizes=x.aval.shape)])
squeeze_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING, passes.NEG_COMMUTING,
                     passes.RESHAPING}
squeeze_p.rewrites = (_SAME_SHAPE, _RESHAPE_OF_RESHAPE, _AS_RESHAPE)


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


def _expand_dims_impl(x, *, dimensions):
    # a reshape, without numpy.expand_dims's general axis handling
    x = as_array(x)
    return x.reshape(_expanded_shape(x.shape, dimensions))


@functools.lru_cache(maxsize=1024)  # bounded: shapes come from users
def _expanded_shape(shape: tuple, dimensions: tuple) -> tuple:
    """``shape`` with axes of size 1 at the output positions ``dimensions``; positions
    out of range or repeated raise, and the shape rule then names the problem."""
    out = list(shape)
    out_ndim = len(shape) + len(dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError("repeated dimensions")
    for d in sorted(dimensions):
        if not 0 <= d < out_ndim:
            raise ValueError("dimension out of range")
        out.insert(d, 1)
    return tuple(out)


expand_dims_p.impl = _checked_impl(expand_dims_p, _expand_dims_impl)


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
expand_dims_p.lowering = lower_reshape
deflinear(expand_dims_p,  # its dimensions are a squeeze's: bound without re-checking
          lambda ct, x, *, dimensions: [bind(squeeze_p, ct, dimensions=dimensions)])
expand_dims_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING, passes.NEG_COMMUTING,
                         passes.RESHAPING, passes.KEEPDIMS_MOVE}
expand_dims_p.rewrites = (_SAME_SHAPE, _RESHAPE_OF_RESHAPE, _AS_RESHAPE)


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
@functools.lru_cache(maxsize=256)
def _rev_index(ndim: int, dimensions: tuple) -> tuple:
    """The basic index reversing ``dimensions`` (cheaper than np.flip, which
    normalises its axes on every call); ValueError for dimensions rev rejects."""
    if any(not 0 <= a < ndim for a in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(dimensions)  # checked_impl reports abstract_eval's error
    return tuple(builtins.slice(None, None, -1) if i in dimensions else builtins.slice(None)
                 for i in range(ndim))


rev_p.impl = _checked_impl(rev_p, lambda x, *, dimensions: (
    as_array(x)[_rev_index(np.ndim(x), dimensions)] if dimensions else x))


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
rev_p.traits |= {passes.ZERO_PRESERVING, passes.FINITE_PRESERVING, passes.NEG_COMMUTING}
rev_p.rewrites = (
    identity("a reverse of axes of size 0 or 1", lambda eqn, x: (
        all(x.aval.shape[d] <= 1 for d in eqn.params["dimensions"]))),
)


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
    shape = insert(tuple(s for i, s in enumerate(x0.shape) if i != dimension), dimension,
                    sum(x.shape[dimension] for x in xs))
    return ShapedArray(shape, dtype)


def _concatenate_transpose(ct, *xs, dimension):
    shape = get_aval(ct).shape
    cts, start = [], 0
    for x in xs:
        size = (x.aval if is_undefined(x) else get_aval(x)).shape[dimension]
        if is_undefined(x):  # the operand's block of ct
            starts = tuple(start if i == dimension else 0 for i in range(len(shape)))
            limits = tuple(start + size if i == dimension else s for i, s in enumerate(shape))
            cts.append(roles.SLICE.primitive.bind(ct, start_indices=starts, limit_indices=limits,
                                            strides=None))
        else:
            cts.append(None)
        start += size
    return cts


def _concatenate_batch(vals, dims, *, dimension):
    size = batch_size(vals, dims)
    moved = [with_batch_at_front(v, d, size) for v, d in zip(vals, dims)]
    return concatenate(*moved, dimension=dimension + 1), 0


concatenate_p.abstract_eval = _concatenate_abstract_eval
concatenate_p.batch = _concatenate_batch
concatenate_p.cost = movement_cost
concatenate_p.lowering = lower_concatenate
deflinear(concatenate_p, _concatenate_transpose)
concatenate_p.rewrites = (
    on_zeros("a concatenation of zeros -> zeros", (), zeros, each=ZERO),
)


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
