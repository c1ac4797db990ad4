"""Shape functions of funcdiff.numpy: reshaping, joining, splitting, tiling, padding, taking.

Every function here is an explicit composition of structural and indexing
primitives (reshape, transpose, broadcast_in_dim, slice, rev, concatenate, pad,
gather, scatter), so each one traces, differentiates, batches and jits with no
rule of its own. Only settings (axes, shapes, repeat counts, pad widths) are
computed with numpy, never values. Static index patterns (pad modes, roll) are
turned into a few slices, reversals and one concatenate rather than a gather,
so their derivatives are slices too. Semantics and result dtypes are numpy 2's.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, concrete_value, get_aval
from funcdiff.errors import (AxisError, DTypeError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.numpy import _util
from funcdiff.primitives import indexing, structural
from funcdiff.primitives.indexing import IndexOutOfBoundsError

_INDEX_DTYPE = np.dtype(np.int64)


# ---------------------------------------------------------------------------
# Shared helpers


def _arr(x: Any, name: str) -> Any:
    return _util.asarray(x, name)


def _shape(x: Any) -> tuple[int, ...]:
    return get_aval(x).shape


def _axis(axis: Any, ndim: int, name: str, what: str = "axis") -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise AxisError(f"funcdiff.numpy.{name}: {what} must be an integer, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise AxisError(f"funcdiff.numpy.{name}: {what} {a} is out of bounds for an array of "
                        f"dimension {ndim} (valid: {-ndim}..{ndim - 1})")
    return a % ndim


def _axes(axis: Any, ndim: int, name: str, what: str = "axis") -> tuple[int, ...]:
    """``axis`` (an int or a sequence) as a tuple of distinct non-negative axes, in order."""
    seq = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_axis(a, ndim, name, what) for a in seq)
    if len(set(out)) != len(out):
        raise AxisError(f"funcdiff.numpy.{name}: repeated {what} in {axis!r}")
    return out


def _int(value: Any, name: str, what: str) -> int:
    value = concrete_value(value, f"funcdiff.numpy.{name} ({what})")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name}: {what} must be an integer, got {value!r}") from None


def _slice_axis(x: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    """``x[..., start:stop:step, ...]`` on ``axis`` with ``0 <= start <= stop``, step >= 1."""
    shape = _shape(x)
    if start == 0 and stop == shape[axis] and step == 1:
        return x
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    limits = tuple(stop if i == axis else n for i, n in enumerate(shape))
    strides = tuple(step if i == axis else 1 for i in range(len(shape)))
    return structural.slice(x, start_indices=starts, limit_indices=limits, strides=strides)


def _broadcast_axis(x: Any, axis: int, size: int) -> Any:
    """Broadcast the size-1 ``axis`` of ``x`` to ``size``."""
    shape = list(_shape(x))
    if shape[axis] == size:
        return x
    shape[axis] = size
    return structural.broadcast_in_dim(x, shape=tuple(shape),
                                       broadcast_dimensions=tuple(range(len(shape))))


def _take_static(x: Any, axis: int, idx: Sequence[int]) -> Any:
    """``numpy.take(x, idx, axis)`` for a static 1-d ``idx``, as slices joined by concatenate.

    ``idx`` is cut into maximal runs that step by +1, -1 or 0; each becomes a
    slice (reversed, or broadcast from one element), so a pad or a roll costs a
    handful of slices whose transposes are pads, instead of a gather/scatter.
    """
    idx = [int(i) for i in idx]
    if not idx:
        return _slice_axis(x, axis, 0, 0)
    pieces, i = [], 0
    while i < len(idx):
        j = i + 1
        step = idx[j] - idx[i] if j < len(idx) else 1
        if step in (-1, 0, 1):
            while j < len(idx) and idx[j] - idx[j - 1] == step:
                j += 1
        else:
            step = 1
        first, last = idx[i], idx[j - 1]
        if step == 1:
            piece = _slice_axis(x, axis, first, last + 1)
        elif step == -1:
            piece = structural.rev(_slice_axis(x, axis, last, first + 1), dimensions=(axis,))
        else:
            piece = _broadcast_axis(_slice_axis(x, axis, first, first + 1), axis, j - i)
        pieces.append(piece)
        i = j
    if len(pieces) == 1:
        return pieces[0]
    return structural.concatenate(*pieces, dimension=axis)


def _cast_all(name: str, arrays: Sequence[Any], dtype: Any = None) -> list[Any]:
    """``arrays`` in one dtype: ``dtype`` if given, else numpy's promotion of them."""
    if dtype is not None:
        target = dtypes.check_dtype(dtype, f"the dtype= of funcdiff.numpy.{name}")
    else:
        target = dtypes.result_type(*arrays)
    return [_util.cast(a, target) for a in arrays]


def _reject_casting(name: str, casting: str) -> None:
    if casting != "same_kind":
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.{name} does not support casting={casting!r}; funcdiff always "
            "promotes with numpy's rules. Cast the inputs with .astype first.")


def _normalize_index_array(name: str, indices: Any, size: int, mode: str = "raise") -> Any:
    """Integer ``indices`` mapped into ``[0, size)``: negatives wrap once (mode 'raise'),
    or every index wraps ('wrap') or is clipped ('clip'). Concrete indices out of
    range raise IndexOutOfBoundsError like numpy."""
    aval = get_aval(indices)
    if aval.dtype.kind not in "iu":
        raise DTypeError(f"funcdiff.numpy.{name} needs integer indices, but got "
                         f"{aval.str_short()}; convert them with astype(int).")
    if not isinstance(indices, Tracer):
        idx = np.asarray(indices, dtype=_INDEX_DTYPE)
        if mode == "wrap":
            if size == 0 and idx.size:
                raise IndexOutOfBoundsError(f"funcdiff.numpy.{name}: cannot do a non-empty take "
                                            "from an empty axis")
            return np.mod(idx, max(size, 1))
        if mode == "clip":
            if size == 0 and idx.size:
                raise IndexOutOfBoundsError(f"funcdiff.numpy.{name}: cannot do a non-empty take "
                                            "from an empty axis")
            return np.clip(idx, 0, max(size - 1, 0))
        bad = (idx < -size) | (idx >= size)
        if bad.any():
            raise IndexOutOfBoundsError(
                f"funcdiff.numpy.{name}: index {idx[bad].flat[0]} is out of bounds for axis "
                f"with size {size}")
        return np.where(idx < 0, idx + size, idx)
    from funcdiff.primitives import elementwise as el
    idx = _util.cast(indices, _INDEX_DTYPE)
    n = np.asarray(size, _INDEX_DTYPE)
    if mode == "wrap":
        return el.rem(el.add(el.rem(idx, n), n), n)
    if mode == "clip":
        return el.max(el.min(idx, np.asarray(max(size - 1, 0), _INDEX_DTYPE)),
                      np.asarray(0, _INDEX_DTYPE))
    return el.select(el.lt(idx, np.asarray(0, _INDEX_DTYPE)), el.add(idx, n), idx)


# ---------------------------------------------------------------------------
# Reshaping and axes


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> Any:
    """Give an array a new shape without changing its data (row-major order only).

    Args:
      a: array-like.
      shape: int or tuple of ints; one entry may be -1 (inferred).
      order: only ``'C'`` is supported.

    Returns:
      The reshaped array.

    Raises:
      ShapeError: the sizes do not match. UnsupportedNumpyError: ``order != 'C'``.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.reshape(np.arange(6), (2, -1))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    if shape is None:
        shape = newshape
    if shape is None:
        raise InvalidArgumentError("funcdiff.numpy.reshape needs a shape")
    if order != "C":
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.reshape supports only order='C', got order={order!r}; transpose "
            "the array first to emulate Fortran order.")
    a = _arr(a, "reshape")
    in_shape = _shape(a)
    new = _resolve_shape(shape, int(np.prod(in_shape, dtype=np.int64)), in_shape)
    if new == in_shape:
        return a
    return structural.reshape(a, new_sizes=new)


def _resolve_shape(shape: Any, size: int, in_shape: tuple) -> tuple[int, ...]:
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    shape = tuple(_int(s, "reshape", "each entry of shape") for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise ShapeError(f"funcdiff.numpy.reshape: shape {shape} may contain at most one -1 "
                         "and no other negative entries")
    if unknown:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ShapeError(f"funcdiff.numpy.reshape cannot reshape an array of shape "
                             f"{in_shape} (size {size}) into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ShapeError(f"funcdiff.numpy.reshape cannot reshape an array of shape {in_shape} "
                         f"(size {size}) into shape {shape}")
    return shape


def ravel(a: Any, order: str = "C") -> Any:
    """The array flattened to 1-d in row-major order.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.ravel(np.array([[1, 2], [3, 4]]))
    array([1, 2, 3, 4])
    """
    if order not in ("C", "K", "A"):
        raise UnsupportedNumpyError(f"funcdiff.numpy.ravel supports only order='C', got {order!r}")
    return reshape(a, (-1,))


def transpose(a: Any, axes: Any = None) -> Any:
    """Permute the axes of an array (reverse them when ``axes`` is None).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.transpose(np.ones((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    a = _arr(a, "transpose")
    ndim = len(_shape(a))
    if axes is None:
        perm = tuple(range(ndim))[::-1]
    else:
        axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
        if len(axes) != ndim:
            raise AxisError(f"funcdiff.numpy.transpose: axes {axes} don't match an array of "
                            f"dimension {ndim}")
        perm = _axes(axes, ndim, "transpose")
    if perm == tuple(range(ndim)):
        return a
    return structural.transpose(a, permutation=perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes of an array to new positions; the others keep their order.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.moveaxis(np.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = _arr(a, "moveaxis")
    ndim = len(_shape(a))
    src = _axes(source, ndim, "moveaxis", "source")
    dst = _axes(destination, ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise AxisError("funcdiff.numpy.moveaxis: `source` and `destination` arguments must "
                        f"have the same number of elements, got {source!r} and {destination!r}")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a: Any, axis1: Any, axis2: Any) -> Any:
    """Interchange two axes of an array.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.swapaxes(np.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = _arr(a, "swapaxes")
    ndim = len(_shape(a))
    i, j = _axis(axis1, ndim, "swapaxes", "axis1"), _axis(axis2, ndim, "swapaxes", "axis2")
    perm = list(range(ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def rollaxis(a: Any, axis: Any, start: int = 0) -> Any:
    """Roll ``axis`` backwards until it lies before position ``start`` (prefer moveaxis).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.rollaxis(np.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = _arr(a, "rollaxis")
    n = len(_shape(a))
    axis = _axis(axis, n, "rollaxis")
    start = _int(start, "rollaxis", "start")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"funcdiff.numpy.rollaxis: 'start' arg requires {-n} <= start < {n + 1}, "
                        f"but {start} was passed in")
    if axis < start:
        start -= 1
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return transpose(a, perm)


def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove axes of length one (all of them when ``axis`` is None).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.squeeze(np.ones((1, 3, 1))).shape
    (3,)
    """
    a = _arr(a, "squeeze")
    shape = _shape(a)
    if axis is None:
        dims = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        dims = _axes(axis, len(shape), "squeeze")
        if any(shape[d] != 1 for d in dims):
            raise ShapeError(f"funcdiff.numpy.squeeze: cannot select an axis to squeeze out "
                             f"which has size not equal to one (axis={axis!r}, shape {shape})")
    if not dims:
        return a
    return structural.squeeze(a, dimensions=tuple(sorted(dims)))


def expand_dims(a: Any, axis: Any) -> Any:
    """Insert axes of length one at the given positions of the result.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.expand_dims(np.ones((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    a = _arr(a, "expand_dims")
    seq = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    dims = _axes(seq, len(_shape(a)) + len(seq), "expand_dims")
    return structural.expand_dims(a, dimensions=tuple(sorted(dims)))


def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    """Broadcast an array to a new shape (numpy broadcasting rules).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.broadcast_to(np.array([1, 2]), (2, 2))
    array([[1, 2],
           [1, 2]])
    """
    array = _arr(array, "broadcast_to")
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    shape = tuple(_int(s, "broadcast_to", "shape") for s in shape)
    in_shape = _shape(array)
    lead = len(shape) - len(in_shape)
    if (lead < 0 or min(shape, default=0) < 0
            or any(s not in (1, t) for s, t in zip(in_shape, shape[lead:]))):
        raise ShapeError(f"funcdiff.numpy.broadcast_to cannot broadcast an array of shape "
                         f"{in_shape} to the requested shape {shape}")
    return structural.broadcast_to(array, shape)


def broadcast_arrays(*args: Any, subok: bool = False) -> tuple:
    """Broadcast arrays against each other; returns a tuple (numpy 2).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> [y.shape for y in s.broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    [(2, 3), (2, 3)]
    """
    arrays = [_arr(a, "broadcast_arrays") for a in args]
    return tuple(_util.broadcast_arrays_of("funcdiff.numpy.broadcast_arrays", *arrays))


def _atleast(name: str, nd: int, arys: tuple) -> Any:
    out = []
    for a in arys:
        a = _arr(a, name)
        shape = _shape(a)
        if len(shape) < nd:
            if nd == 3 and len(shape) == 1:
                new = (1, shape[0], 1)
            elif nd == 3 and len(shape) == 2:
                new = shape + (1,)
            else:
                new = (1,) * (nd - len(shape)) + shape
            a = structural.reshape(a, new_sizes=new)
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: Any) -> Any:
    """View inputs as arrays with at least one dimension (a tuple for several inputs).

    >>> import funcdiff.numpy._shape as s
    >>> s.atleast_1d(3.0)
    array([3.])
    """
    return _atleast("atleast_1d", 1, arys)


def atleast_2d(*arys: Any) -> Any:
    """View inputs as arrays with at least two dimensions ((N,) becomes (1, N))."""
    return _atleast("atleast_2d", 2, arys)


def atleast_3d(*arys: Any) -> Any:
    """View inputs as arrays of at least 3 dimensions: (N,) is (1, N, 1), (M, N) is (M, N, 1)."""
    return _atleast("atleast_3d", 3, arys)


# ---------------------------------------------------------------------------
# Joining


def _sequence(name: str, arrays: Any) -> list[Any]:
    if isinstance(arrays, (np.ndarray, Tracer)):
        return [arrays[i] for i in range(_shape(arrays)[0])] if _shape(arrays) else [arrays]
    try:
        arrays = list(arrays)
    except TypeError:
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs a sequence of arrays, got "
                                   f"{type(arrays).__name__}") from None
    if not arrays:
        raise ShapeError(f"funcdiff.numpy.{name}: need at least one array to concatenate")
    return [_arr(a, name) for a in arrays]


def _concat(name: str, arrays: list, axis: int, dtype: Any) -> Any:
    shapes = [_shape(a) for a in arrays]
    ndim = len(shapes[0])
    if ndim == 0:
        raise ShapeError(f"funcdiff.numpy.{name}: zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, ndim, name)
    for s in shapes:
        if len(s) != ndim or any(n != m for i, (n, m) in enumerate(zip(s, shapes[0])) if i != axis):
            raise ShapeError(
                f"funcdiff.numpy.{name}: all the input array dimensions except for the "
                f"concatenation axis ({axis}) must match exactly, but got shapes "
                f"{', '.join(str(t) for t in shapes)}")
    arrays = _cast_all(name, arrays, dtype)
    if len(arrays) == 1:
        return arrays[0]
    return structural.concatenate(*arrays, dimension=axis)


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """Join a sequence of arrays along an existing axis (``axis=None`` flattens first).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.concatenate([np.array([1, 2]), np.array([3.5])])
    array([1. , 2. , 3.5])
    """
    _util.reject("concatenate", out=out)
    _reject_casting("concatenate", casting)
    arrays = _sequence("concatenate", arrays)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    return _concat("concatenate", arrays, axis, dtype)


def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """Join arrays of one shape along a new axis.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.stack([np.ones(3), np.zeros(3)], axis=1).shape
    (3, 2)
    """
    _util.reject("stack", out=out)
    _reject_casting("stack", casting)
    arrays = _sequence("stack", arrays)
    shapes = {_shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"funcdiff.numpy.stack: all input arrays must have the same shape, "
                         f"got {', '.join(str(_shape(a)) for a in arrays)}")
    ndim = len(_shape(arrays[0])) + 1
    axis = _axis(axis, ndim, "stack")
    arrays = [structural.expand_dims(a, dimensions=(axis,)) for a in arrays]
    return _concat("stack", arrays, axis, dtype)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays horizontally (along axis 1, or axis 0 for 1-d inputs)."""
    _reject_casting("hstack", casting)
    arrs = [atleast_1d(a) for a in _sequence("hstack", tup)]
    return _concat("hstack", arrs, 0 if len(_shape(arrs[0])) == 1 else 1, dtype)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays vertically (along axis 0 after atleast_2d)."""
    _reject_casting("vstack", casting)
    return _concat("vstack", [atleast_2d(a) for a in _sequence("vstack", tup)], 0, dtype)


def dstack(tup: Any) -> Any:
    """Stack arrays depth-wise (along axis 2 after atleast_3d)."""
    return _concat("dstack", [atleast_3d(a) for a in _sequence("dstack", tup)], 2, None)


def column_stack(tup: Any) -> Any:
    """Stack 1-d arrays as columns of a 2-d array (2-d inputs are stacked as they are)."""
    arrs = []
    for a in _sequence("column_stack", tup):
        shape = _shape(a)
        if len(shape) < 2:
            a = structural.reshape(a, new_sizes=(int(np.prod(shape, dtype=np.int64)), 1))
        arrs.append(a)
    return _concat("column_stack", arrs, 1, None)


# ---------------------------------------------------------------------------
# Splitting


def _split_points(name: str, n: int, indices_or_sections: Any, equal: bool) -> list[int]:
    ios = concrete_value(indices_or_sections, f"funcdiff.numpy.{name} (indices_or_sections)")
    if np.ndim(ios) == 0:
        sections = _int(ios, name, "the number of sections")
        if sections <= 0:
            raise ShapeError(f"funcdiff.numpy.{name}: number sections must be larger than 0")
        if equal and n % sections:
            raise ShapeError(f"funcdiff.numpy.{name}: array split does not result in an equal "
                             f"division (axis of size {n} into {sections} sections)")
        each, extras = divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        return list(np.cumsum(sizes))
    return [0] + [int(i) for i in np.asarray(ios).ravel()] + [n]


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split an array into sub-arrays (sections may differ in size by one).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> [p.tolist() for p in s.array_split(np.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split an array into equal sections or at the given indices.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> [p.tolist() for p in s.split(np.arange(6), [2, 3])]
    [[0, 1], [2], [3, 4, 5]]
    """
    return _split("split", ary, indices_or_sections, axis, equal=True)


def _split(name: str, ary: Any, ios: Any, axis: Any, equal: bool) -> list:
    ary = _arr(ary, name)
    shape = _shape(ary)
    axis = _axis(axis, len(shape), name)
    n = shape[axis]
    points = _split_points(name, n, ios, equal)
    out = []
    for st, end in zip(points[:-1], points[1:]):
        start, stop, _ = builtins.slice(int(st), int(end)).indices(n)
        out.append(_slice_axis(ary, axis, start, max(start, stop)))
    return out


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split horizontally (axis 1, or axis 0 for 1-d arrays)."""
    ary = _arr(ary, "hsplit")
    ndim = len(_shape(ary))
    if ndim == 0:
        raise ShapeError("funcdiff.numpy.hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", ary, indices_or_sections, 1 if ndim > 1 else 0, equal=True)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split vertically (along axis 0); needs at least 2 dimensions."""
    ary = _arr(ary, "vsplit")
    if len(_shape(ary)) < 2:
        raise ShapeError("funcdiff.numpy.vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0, equal=True)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split depth-wise (along axis 2); needs at least 3 dimensions."""
    ary = _arr(ary, "dsplit")
    if len(_shape(ary)) < 3:
        raise ShapeError("funcdiff.numpy.dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2, equal=True)


# ---------------------------------------------------------------------------
# Tiling, repeating, flipping, rolling


def tile(A: Any, reps: Any) -> Any:
    """Repeat a whole array ``reps`` times along each axis.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.tile(np.array([1, 2]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    A = _arr(A, "tile")
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(_int(r, "tile", "reps") for r in reps)
    if any(r < 0 for r in reps):
        raise ShapeError(f"funcdiff.numpy.tile: reps must be non-negative, got {reps}")
    shape = _shape(A)
    d = max(len(reps), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    if _shape(A) != shape:
        A = structural.reshape(A, new_sizes=shape)
    if all(r == 1 for r in reps):
        return A
    # (r0, s0, r1, s1, ...) then merge pairs: the transpose of a broadcast is a sum.
    interleaved = tuple(v for pair in zip(reps, shape) for v in pair)
    out = structural.broadcast_in_dim(A, shape=interleaved,
                                      broadcast_dimensions=tuple(range(1, 2 * d, 2)))
    return structural.reshape(out, new_sizes=tuple(r * s for r, s in zip(reps, shape)))


def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """Repeat each element of an array (``repeats`` a concrete int or one int per element).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.repeat(np.array([1, 2]), [1, 3])
    array([1, 2, 2, 2])
    """
    a = _arr(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    shape = _shape(a)
    axis = _axis(axis, len(shape), "repeat")
    reps = np.asarray(concrete_value(repeats, "funcdiff.numpy.repeat (repeats)"))
    if reps.dtype.kind not in "iub" or reps.ndim > 1:
        raise InvalidArgumentError(f"funcdiff.numpy.repeat: repeats must be an integer or a "
                                   f"1-d sequence of integers, got {repeats!r}")
    if (reps < 0).any():
        raise ShapeError("funcdiff.numpy.repeat: repeats may not contain negative values")
    n = shape[axis]
    if reps.size == 1:
        r = int(reps.ravel()[0])
        expanded = shape[:axis + 1] + (r,) + shape[axis + 1:]
        out = structural.broadcast_in_dim(
            a, shape=expanded,
            broadcast_dimensions=tuple(i for i in range(len(shape) + 1) if i != axis + 1))
        return structural.reshape(out, new_sizes=shape[:axis] + (n * r,) + shape[axis + 1:])
    if reps.size != n:
        raise ShapeError(f"funcdiff.numpy.repeat: operands could not be broadcast together: "
                         f"{reps.size} repeats for an axis of size {n}")
    return indexing.gather(a, np.repeat(np.arange(n, dtype=_INDEX_DTYPE), reps), axis=axis)


def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along the given axes (all when None).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.flip(np.array([[1, 2], [3, 4]]), 1)
    array([[2, 1],
           [4, 3]])
    """
    m = _arr(m, "flip")
    ndim = len(_shape(m))
    dims = tuple(range(ndim)) if axis is None else _axes(axis, ndim, "flip")
    if not dims:
        return m
    return structural.rev(m, dimensions=tuple(sorted(dims)))


def fliplr(m: Any) -> Any:
    """Reverse the order of columns (axis 1); needs at least 2 dimensions."""
    m = _arr(m, "fliplr")
    if len(_shape(m)) < 2:
        raise ShapeError("funcdiff.numpy.fliplr: input must be >= 2-d")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    """Reverse the order of rows (axis 0); needs at least 1 dimension."""
    m = _arr(m, "flipud")
    if len(_shape(m)) < 1:
        raise ShapeError("funcdiff.numpy.flipud: input must be >= 1-d")
    return flip(m, 0)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Roll elements along axes; elements shifted past the end come back at the start.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.roll(np.arange(5), 2)
    array([3, 4, 0, 1, 2])
    """
    a = _arr(a, "roll")
    shift = concrete_value(shift, "funcdiff.numpy.roll (shift)")
    if axis is None:
        shape = _shape(a)
        return reshape(roll(ravel(a), shift, 0), shape)
    ndim = len(_shape(a))
    pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    shifts = {}
    for s, ax in pairs:
        ax = _axis(ax, ndim, "roll")
        shifts[ax] = shifts.get(ax, 0) + int(s)
    for ax, s in sorted(shifts.items()):
        n = _shape(a)[ax]
        if n and s % n:
            a = _take_static(a, ax, (np.arange(n) - s) % n)
    return a


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """Rotate an array by 90 degrees ``k`` times in the plane of ``axes``.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.rot90(np.array([[1, 2], [3, 4]]))
    array([[2, 4],
           [1, 3]])
    """
    m = _arr(m, "rot90")
    ndim = len(_shape(m))
    axes = tuple(axes)
    if len(axes) != 2:
        raise AxisError("funcdiff.numpy.rot90: len(axes) must be 2")
    a0, a1 = _axis(axes[0], ndim, "rot90", "axes"), _axis(axes[1], ndim, "rot90", "axes")
    if a0 == a1:
        raise AxisError("funcdiff.numpy.rot90: axes must be different")
    k = _int(k, "rot90", "k") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


# ---------------------------------------------------------------------------
# Padding

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_pairs(x: Any, ndim: int, what: str, as_index: bool) -> list:
    """numpy's broadcast of a pad argument to one ``(before, after)`` pair per axis."""
    x = np.array(x)
    if as_index:
        if x.dtype.kind not in "iu":
            raise InvalidArgumentError("funcdiff.numpy.pad: `pad_width` must be of integral type")
        x = x.astype(np.int64)
        if x.size and x.min() < 0:
            raise ShapeError("funcdiff.numpy.pad: pad_width can't contain negative values")
    if x.size == 1:
        v = x.ravel()[0]
        return [(v, v)] * ndim
    if x.size == 2 and x.shape != (2, 1):
        v = x.ravel()
        return [(v[0], v[1])] * ndim
    try:
        return [tuple(p) for p in np.broadcast_to(x, (ndim, 2))]
    except ValueError:
        raise ShapeError(f"funcdiff.numpy.pad: {what} of shape {x.shape} cannot be broadcast "
                         f"to one (before, after) pair per axis ({ndim}, 2)") from None


def _pad_source_index(mode: str, n: int, lo: int, hi: int) -> np.ndarray:
    """For each output position along an axis, the input position it copies."""
    j = np.arange(-lo, n + hi)
    if mode == "edge" or n == 1:
        return np.clip(j, 0, n - 1)
    if mode == "wrap":
        return np.mod(j, n)
    if mode == "symmetric":
        m = np.mod(j, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m)
    m = np.mod(j, 2 * n - 2)  # reflect: mirror without repeating the edge
    return np.where(m < n, m, 2 * n - 2 - m)


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array (modes constant, edge, reflect, symmetric, wrap), differentiably.

    Args:
      array: array-like.
      pad_width: int, ``(before, after)``, one pair per axis, or a dict axis -> width.
      mode: one of ``'constant'``, ``'edge'``, ``'reflect'``, ``'symmetric'``, ``'wrap'``.
      constant_values: for ``'constant'``: a scalar or pairs like pad_width (may be traced).

    Returns:
      The padded array, of ``array``'s dtype.

    Raises:
      UnsupportedNumpyError: another mode, a callable mode or ``reflect_type='odd'``.
      ShapeError: negative widths or a non-constant pad of an empty axis.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.pad(np.array([1, 2, 3]), (2, 1), mode="reflect")
    array([3, 2, 1, 2, 3, 2])
    """
    array = _arr(array, "pad")
    shape = _shape(array)
    ndim = len(shape)
    dtype = get_aval(array).dtype
    if callable(mode) or mode not in _PAD_MODES:
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.pad does not support mode={mode!r}; supported modes are "
            f"{', '.join(_PAD_MODES)}.")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}.get(mode, set())
    if set(kwargs) - allowed:
        raise InvalidArgumentError(f"funcdiff.numpy.pad: unsupported keyword arguments for mode "
                                   f"{mode!r}: {sorted(set(kwargs) - allowed)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise UnsupportedNumpyError("funcdiff.numpy.pad supports only reflect_type='even'")
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for ax, width in pad_width.items():
            seq[_axis(ax, ndim, "pad")] = (width, width) if np.ndim(width) == 0 else tuple(width)
        pad_width = seq
    widths = [(int(lo), int(hi)) for lo, hi in _pad_pairs(pad_width, ndim, "pad_width", True)]
    if mode == "constant":
        return _pad_constant(array, widths, kwargs.get("constant_values", 0), dtype)
    for ax, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        if shape[ax] == 0:
            raise ShapeError(f"funcdiff.numpy.pad: can't extend empty axis {ax} using modes "
                             "other than 'constant'")
        array = _take_static(array, ax, _pad_source_index(mode, shape[ax], lo, hi))
    return array


def _pad_constant(array: Any, widths: list, values: Any, dtype: np.dtype) -> Any:
    if isinstance(values, Tracer):
        if values.ndim != 0:
            raise UnsupportedNumpyError("funcdiff.numpy.pad: a traced constant_values must be 0-d")
        value = _util.cast(values, dtype)
        return structural.pad(array, value, padding_config=tuple((lo, hi, 0) for lo, hi in widths))
    pairs = _pad_pairs(values, len(widths), "constant_values", False)
    pairs = [(np.asarray(b).astype(dtype), np.asarray(c).astype(dtype)) for b, c in pairs]
    if all(b == pairs[0][0] and c == pairs[0][0] for b, c in pairs):
        if all(w == (0, 0) for w in widths):
            return array
        return structural.pad(array, pairs[0][0],
                              padding_config=tuple((lo, hi, 0) for lo, hi in widths))
    # Different values per side: pad one side at a time, axis by axis, as numpy
    # does (later axes' values fill the corners).
    ndim = len(widths)
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, pairs)):
        for config, value in (((lo, 0), vlo), ((0, hi), vhi)):
            if config != (0, 0):
                full = tuple(config + (0,) if i == ax else (0, 0, 0) for i in range(ndim))
                array = structural.pad(array, value, padding_config=full)
    return array


# ---------------------------------------------------------------------------
# Taking and putting


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """Take elements of an array along an axis (the flattened array when axis is None).

    Negative indices count from the end. ``mode='wrap'`` wraps every index,
    ``'clip'`` clips to the valid range; the default raises for out-of-bounds
    concrete indices (traced indices are checked when the program runs).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.take(np.array([[1, 2], [3, 4]]), [-1, 0])
    array([4, 1])
    """
    _util.reject("take", out=out)
    if mode not in ("raise", "wrap", "clip"):
        raise InvalidArgumentError(f"funcdiff.numpy.take: mode must be 'raise', 'wrap' or "
                                   f"'clip', got {mode!r}")
    a = _arr(a, "take")
    if axis is None:
        a, axis = ravel(a), 0
    shape = _shape(a)
    if not shape:
        raise AxisError("funcdiff.numpy.take cannot take from a 0-d array along an axis")
    axis = _axis(axis, len(shape), "take")
    indices = _util.asarray(indices, "take")
    indices = _normalize_index_array("take", indices, shape[axis], mode)
    return indexing.gather(a, indices, axis=axis)


def _along_axis(name: str, arr: Any, indices: Any, axis: Any):
    """Flat positions into ``arr`` for numpy's along-axis indexing, and their shape."""
    arr = _arr(arr, name)
    indices = _util.asarray(indices, name)
    if axis is None:
        arr = ravel(arr)
        if len(_shape(indices)) != 1:
            raise ShapeError(f"funcdiff.numpy.{name} with axis=None needs 1-d indices, got "
                             f"shape {_shape(indices)}")
        axis = 0
    shape, ishape = _shape(arr), _shape(indices)
    if len(ishape) != len(shape):
        raise ShapeError(f"funcdiff.numpy.{name}: `indices` and `arr` must have the same number "
                         f"of dimensions, got shapes {ishape} and {shape}")
    axis = _axis(axis, len(shape), name)
    indices = _normalize_index_array(name, indices, shape[axis])
    out_shape = []
    for k, (n, m) in enumerate(zip(shape, ishape)):
        if k == axis:
            out_shape.append(m)
        elif n == m or 1 in (n, m):
            out_shape.append(m if n == 1 else n)
        else:
            raise ShapeError(f"funcdiff.numpy.{name}: shape mismatch: indices {ishape} cannot "
                             f"be broadcast against arr {shape} in axis {k}")
    out_shape = tuple(out_shape)
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    offsets = np.zeros(out_shape, _INDEX_DTYPE)
    for k in range(len(shape)):
        if k != axis and out_shape[k] > 1:
            offsets = offsets + (np.arange(out_shape[k]) * strides[k]).reshape(
                (1,) * k + (out_shape[k],) + (1,) * (len(shape) - k - 1))
    if isinstance(indices, Tracer):
        from funcdiff.primitives import elementwise as el
        flat = el.add(el.mul(indices, np.asarray(strides[axis], _INDEX_DTYPE)), offsets)
        flat = structural.broadcast_to(flat, out_shape)
    else:
        flat = indices * strides[axis] + offsets
    return arr, flat, out_shape


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    """Take values along an axis at positions given per element (as argsort returns).

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.take_along_axis(np.array([[10, 30, 20]]), np.array([[0, 2, 1]]), axis=1)
    array([[10, 20, 30]])
    """
    arr, flat, _ = _along_axis("take_along_axis", arr, indices, axis)
    return indexing.gather(ravel(arr), flat, axis=0)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> Any:
    """Functional ``numpy.put_along_axis``: a NEW array with ``values`` written at the
    positions ``take_along_axis`` would read (the input is unchanged; numpy returns None).

    Repeated positions keep the last write; ``values`` is broadcast and cast to arr's dtype.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.put_along_axis(np.zeros((1, 3)), np.array([[2]]), 5.0, axis=1)
    array([[0., 0., 5.]])
    """
    orig = _arr(arr, "put_along_axis")
    arr, flat, out_shape = _along_axis("put_along_axis", orig, indices, axis)
    dtype = get_aval(arr).dtype
    values = _util.cast(_util.asarray(values, "put_along_axis"), dtype)
    try:
        values = structural.broadcast_to(values, out_shape)
    except ShapeError:
        raise ShapeError(f"funcdiff.numpy.put_along_axis: values of shape {_shape(values)} "
                         f"cannot be broadcast to the indexed shape {out_shape}") from None
    out = indexing.scatter(ravel(arr), flat, values, axis=0)
    return reshape(out, _shape(orig))


# ---------------------------------------------------------------------------
# Triangle indices (static: they depend on shapes only)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Row and column indices of the lower triangle of an (n, m) array.

    >>> import funcdiff.numpy._shape as s
    >>> s.tril_indices(2)
    (array([0, 1, 1]), array([0, 0, 1]))
    """
    return tuple(np.nonzero(np.tri(n, m, k=k, dtype=bool)))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Row and column indices of the upper triangle of an (n, m) array."""
    return tuple(np.nonzero(~np.tri(n, m, k=k - 1, dtype=bool)))


def _square_shape(name: str, arr: Any) -> tuple[int, int]:
    shape = get_aval(arr).shape if isinstance(arr, Tracer) else np.shape(arr)
    if len(shape) != 2:
        raise ShapeError(f"funcdiff.numpy.{name}: input array must be 2-d, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple:
    """``tril_indices`` for the shape of a 2-d array."""
    n, m = _square_shape("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple:
    """``triu_indices`` for the shape of a 2-d array."""
    n, m = _square_shape("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


# ---------------------------------------------------------------------------
# Nested lists holding tracers (used by funcdiff.numpy.array / asarray)


def stack_nested(obj: Any, dtype: Any = None) -> Any:
    """An array from a nested list/tuple whose leaves may be tracers, arrays or scalars.

    Leaves are promoted as ``numpy.array`` would (Python scalars count as
    float64/int64/bool, not weakly). Every leaf is flattened in row-major order
    (runs of constant leaves become one numpy constant), joined by one
    concatenate and reshaped, so the result is differentiable in each traced leaf.

    Raises:
      ShapeError: the nesting is ragged.

    >>> import funcdiff.numpy._shape as s, numpy as np
    >>> s.stack_nested([[1, 2], [np.float32(3), 4]])
    array([[1., 2.],
           [3., 4.]])
    """
    leaves: list = []

    def shape_of(o) -> tuple:
        if isinstance(o, (list, tuple)):
            shapes = [shape_of(e) for e in o]
            if any(t != shapes[0] for t in shapes):
                raise ShapeError(
                    "funcdiff.numpy.array: the nested sequence is ragged (its elements have "
                    f"shapes {', '.join(str(t) for t in shapes)}); every element of a level "
                    "must have the same shape.")
            return (len(o),) + (shapes[0] if shapes else ())
        leaf = o if isinstance(o, Tracer) else _util.asarray(o, "array")
        leaves.append(leaf)
        return _shape(leaf)
    shape = shape_of(obj)
    if dtype is not None:
        target = dtypes.check_dtype(dtype, "the dtype= of funcdiff.numpy.array")
    elif leaves:
        target = dtypes.result_type(*leaves)
    else:
        target = dtypes.default_float
    pieces, constants = [], []

    def flush():
        if constants:
            pieces.append(np.concatenate(constants).astype(target))
            constants.clear()
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            flush()
            flat = _util.cast(leaf, target)
            if leaf.ndim != 1:
                flat = structural.reshape(flat, new_sizes=(leaf.size,))
            pieces.append(flat)
        else:
            constants.append(np.ravel(leaf))
    flush()
    if not pieces:
        return np.zeros(shape, target)
    out = pieces[0] if len(pieces) == 1 else structural.concatenate(*pieces, dimension=0)
    return out if len(shape) == 1 else structural.reshape(out, new_sizes=shape)


__all__ = [
    "reshape", "ravel", "transpose", "moveaxis", "swapaxes", "rollaxis", "squeeze",
    "expand_dims", "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d",
    "atleast_3d", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat", "flip", "fliplr",
    "flipud", "roll", "rot90", "pad", "take", "take_along_axis", "put_along_axis",
    "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "stack_nested",
]
