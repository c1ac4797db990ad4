"""Joining and splitting in funcdiff.numpy: concatenate, stack, hstack, vstack, split, ...

Joining checks the shapes like numpy, promotes the inputs to one dtype
(numpy's rules, or ``dtype=``) and binds one ``concatenate``; ``stack`` first
gives each input a size-1 axis at the new position. A sequence of arrays may
also be one array or tracer, whose first axis is then the sequence. Splitting
computes its split points with numpy from the sizes (they must be concrete)
and cuts static slices, so the derivative of each piece is a pad.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, concrete_value
from funcdiff.errors import InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.primitives import structural


# ---------------------------------------------------------------------------
# Joining


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
            a = structural.reshape(a, new_sizes=(math.prod(shape), 1))
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


__all__ = ["concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "split",
           "array_split", "hsplit", "vsplit", "dsplit"]


# _shape's helpers and functions, imported last: _shape re-exports this module's
# functions at its end, so either module may be imported first.
from funcdiff.numpy._shape import (  # noqa: E402
    _arr, _axis, _int, _shape, _slice_axis, atleast_1d, atleast_2d, atleast_3d, ravel)
