"""Index checks and index arithmetic shared by the indexing primitives.

``gather`` (``indexing_gather``) and the scatters (``indexing_scatter``) check
their arguments alike: the indexed axis, integer indices, and indices outside
the axis, reported as ``IndexOutOfBoundsError`` (numpy wraps negative indices
silently, so they are checked up front). They share the gathered shape
``operand.shape[:axis] + indices.shape + operand.shape[axis+1:]`` and the
index arithmetic of their batch rules: a batch axis moved (or an unbatched
value broadcast) into place, index dtypes widened, and each batch member's
indices offset into its own block of the indexed axis by an iota ramp. Small
value helpers (``aval_of``, ``zeros_like``, ``reshape``) serve the rules of
both. ``indexing`` re-exports all of it.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import ShapedArray, get_aval
from funcdiff.errors import AxisError, DTypeError, IndexOutOfBoundsError
from funcdiff.primitives import elementwise, structural


# ---------------------------------------------------------------------------
# Shared checks


def aval_of(x):
    """The aval of a value or of an ``UndefinedPrimal`` (both carry ``.aval``)."""
    aval = getattr(x, "aval", None)
    return aval if isinstance(aval, ShapedArray) else get_aval(x)


def zeros_like(x):
    aval = aval_of(x)
    return structural.full(aval.shape, 0, aval.dtype)


def reshape(x, shape):
    return x if get_aval(x).shape == tuple(shape) else structural.reshape(x, new_sizes=tuple(shape))


def check_axis(name: str, operand: ShapedArray, axis) -> None:
    if type(axis) is not int or not 0 <= axis < operand.ndim:
        if operand.ndim == 0:
            raise AxisError(f"{name} cannot index a 0-d operand ({operand.str_short()}); "
                            "it needs at least one axis. Reshape the operand to (1,) first.")
        raise AxisError(
            f"{name} got axis={axis!r} for an operand {operand.str_short()} of rank "
            f"{operand.ndim}; axis must be a Python int in [0, {operand.ndim}). "
            "funcdiff.numpy normalises negative axes; at the primitive level pass axis % ndim.")


def check_index_dtype(name: str, indices: ShapedArray) -> None:
    if indices.dtype.kind not in "iu":
        raise DTypeError(
            f"{name} needs integer indices, but got {indices.str_short()}. Convert them "
            "with astype(int); boolean masks must first become positions (numpy.nonzero).")


def has_negative(indices: np.ndarray) -> bool:
    """numpy wraps negative indices silently, so they are checked up front; numpy
    itself raises IndexError for too large ones (one pass over the indices)."""
    if indices.dtype.kind != "i" or indices.size == 0:
        return False
    if indices.size <= 32:  # a few indices (labels of a batch): Python's min is cheaper
        return min(indices.ravel().tolist()) < 0
    return bool(indices.min() < 0)


def out_of_bounds(name: str, indices: np.ndarray, size: int, axis: int) -> IndexOutOfBoundsError:
    bad = indices[(indices < 0) | (indices >= size)]
    bad = bad.flat[0] if bad.size else "(unknown)"
    return IndexOutOfBoundsError(
        f"{name} got index {bad} for axis {axis} of size {size}; indices must lie in "
        f"[0, {size}). funcdiff.numpy wraps negative indices before binding; at the "
        "primitive level normalise them (i + size for i < 0) first.")


def gathered_shape(operand_shape, indices_shape, axis):
    return tuple(operand_shape[:axis]) + tuple(indices_shape) + tuple(operand_shape[axis + 1:])


def widen_indices(indices, largest: int):
    """``indices`` in a dtype that can hold ``largest`` (int64 if its own cannot)."""
    dtype = get_aval(indices).dtype
    if np.iinfo(dtype).max >= largest:
        return indices
    return elementwise.convert_element_type(indices, new_dtype=np.dtype(np.int64))


def with_batch_at(x, bdim, dst: int, size: int):
    """``x`` with its batch axis at ``dst``; an unbatched ``x`` is broadcast."""
    if bdim is not None:
        return structural.moveaxis(x, bdim, dst)
    shape = list(get_aval(x).shape)
    shape.insert(dst, size)
    dims = tuple(i for i in range(len(shape)) if i != dst)
    return structural.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=dims)


def offset_batched_indices(indices, bdim, size: int, block: int):
    """Batch-major indices shifted so that member ``b`` indexes block ``b`` of a
    ``size * block`` axis. The offsets depend on shapes only (an iota ramp).

    An index outside ``[0, block)`` would land in a neighbouring member's block
    and read or write its values silently: it is sent outside the folded axis
    instead (a negative index stays as it is, a too large one moves past the
    end), so the primitive's impl reports it as it does without vmap."""
    indices = with_batch_at(indices, bdim, 0, size)
    indices = widen_indices(indices, 2 * size * block)
    aval = get_aval(indices)
    offset = elementwise.add(indices, ramp(aval.dtype, aval.ndim, 0, size, block))
    too_large = elementwise.add(indices, np.asarray(size * block, aval.dtype))
    return elementwise.select(
        elementwise.lt(indices, np.asarray(0, aval.dtype)), indices,
        elementwise.select(elementwise.lt(indices, np.asarray(block, aval.dtype)), offset,
                           too_large))


def ramp(dtype, ndim: int, dim: int, size: int, step: int):
    """``0, step, 2*step, ...`` along ``dim`` of a rank-``ndim`` array of size-1 axes."""
    shape = (1,) * dim + (size,) + (1,) * (ndim - dim - 1)
    ramp = elementwise.iota(dtype, shape, dim)
    return ramp if step == 1 else elementwise.mul(ramp, np.asarray(step, dtype))
