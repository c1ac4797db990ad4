"""Joining and splitting in funcdiff.numpy: concatenate, stack, hstack, vstack, split, ...

Joining checks the shapes like numpy, promotes the inputs to one dtype
(numpy's rules, or ``dtype=``) and binds one ``concatenate``; ``stack`` along an
existing axis joins there and reshapes the result once (at the end it gives
each input a size-1 axis first), and ``vstack`` of 1-d inputs likewise. All
of that is planned once per shapes, dtypes and settings (``_plan``), so a call
mostly binds primitives. A sequence of arrays may also be one array or
tracer, whose first axis is then the sequence. Splitting
computes its split points with numpy from the sizes (they must be concrete)
and cuts static slices, so the derivative of each piece is a pad; the slices
too are planned once per shape and settings (``_split_plan``). ``block``
assembles nested lists of arrays by concatenating the innermost lists along
the last axis, the next ones along the axis before it, and so on outwards.
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
from typing import Any, NamedTuple, Sequence

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer, concrete_value
from funcdiff.errors import InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._broadcasting import atleast_3d
from funcdiff.numpy._shape import _arr, normalize_axis, _int, shape_of, ravel
from funcdiff.primitives import slicing, structural
from funcdiff.numpy._views import returns_copies, returns_views


# ---------------------------------------------------------------------------
# Joining
#
# Every joining function reduces to one plan: reshape some operands, cast them
# to one dtype, bind one concatenate, reshape the result. The plan depends only
# on the operands' shapes and dtypes and the settings, so it is computed once
# per signature (``_plan``) and each call only binds primitives.


class _JoinPlan(NamedTuple):
    expand: int | None                    # stack's new axis, inserted before joining
    pre: tuple | None                     # per operand: the shape to reshape it to, or None
    axis: int                             # the concatenation axis
    dtype: np.dtype                       # every operand is cast to this dtype
    casts: tuple                          # per operand: whether it needs the cast
    post: tuple | None                    # the shape of the result, or None: as joined


def _operands_key(arrays: Sequence[Any]) -> tuple | None:
    """The (shape, dtype) of each operand when all are numpy arrays or tracers, else None."""
    key = []
    for a in arrays:
        if type(a) is np.ndarray or isinstance(a, Tracer):
            key.append((a.shape, a.dtype))
        else:
            return None
    return tuple(key)


@functools.lru_cache(maxsize=512)
def _plan(name: str, operands: tuple, axis: Any, dtype: Any) -> _JoinPlan:
    """How ``name`` joins operands of these (shape, dtype)s; raises numpy's errors.

    ``axis`` and ``dtype`` are the user's; ``_join`` calls the uncached
    function when they could not key the cache faithfully.
    """
    for _, dt in operands:
        if dt.kind not in "biuf":
            dtypes.check_dtype(dt, f"the input of {name}", allow_complex=True)
    shapes = [s for s, _ in operands]
    expand = pre = post = None
    if name == "stack":
        if len(set(shapes)) != 1:
            raise ShapeError(f"funcdiff.numpy.stack: all input arrays must have the same "
                             f"shape, got {', '.join(str(s) for s in shapes)}")
        ndim = len(shapes[0])
        axis = normalize_axis(axis, ndim + 1, "stack")
        joined = [s[:axis] + (1,) + s[axis:] for s in shapes]
        if axis < ndim:  # join along the existing axis, then split it: two primitives
            post = shapes[0][:axis] + (len(shapes),) + shapes[0][axis:]
        else:
            expand = axis
    elif name == "hstack":
        joined = [s or (1,) for s in shapes]
        axis = 0 if len(joined[0]) == 1 else 1
        if any(not s for s in shapes):
            pre = tuple(None if s else (1,) for s in shapes)
    elif name == "vstack":
        joined = [s if len(s) >= 2 else (1,) * (2 - len(s)) + s for s in shapes]
        axis = 0
        if all(len(s) == 1 for s in shapes):  # one reshape of the result, not one per operand
            post = (len(shapes), shapes[0][0])
        elif any(len(s) < 2 for s in shapes):
            pre = tuple(None if len(s) >= 2 else j for s, j in zip(shapes, joined))
    else:
        joined = shapes
    ndim = len(joined[0])
    if ndim == 0:
        raise ShapeError(f"funcdiff.numpy.{name}: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, ndim, name)
    for s in joined:
        if len(s) != ndim or any(n != m for i, (n, m) in enumerate(zip(s, joined[0])) if i != axis):
            raise ShapeError(
                f"funcdiff.numpy.{name}: all the input array dimensions except for the "
                f"concatenation axis ({axis}) must match exactly, but got shapes "
                f"{', '.join(str(t) for t in joined)}")
    if dtype is not None:
        target = dtypes.check_dtype(dtype, f"the dtype= of funcdiff.numpy.{name}")
    else:
        target = dtypes.result_type(*[dt for _, dt in operands])
    if post is not None and target.kind != "c" and any(dt.kind == "c" for _, dt in operands):
        # that cast fails; reshape the operands first, so its error names their joined shape
        post = None
        if name == "stack":
            expand = axis
        else:
            pre = tuple(joined)
    return _JoinPlan(expand, pre, axis, target, tuple(dt != target for _, dt in operands), post)


def _join(name: str, arrays: Sequence[Any], operands: tuple, axis: Any, dtype: Any) -> Any:
    """Join ``arrays`` (numpy arrays or tracers with these (shape, dtype)s) as ``name`` does."""
    cacheable = type(axis) is int and (dtype is None or isinstance(dtype, (str, type, np.dtype)))
    plan = (_plan if cacheable else _plan.__wrapped__)(name, operands, axis, dtype)
    if plan.expand is not None:
        arrays = [structural.expand_dims(a, dimensions=(plan.expand,)) for a in arrays]
    elif plan.pre is not None:
        arrays = [a if p is None else structural.reshape(a, new_sizes=p)
                  for a, p in zip(arrays, plan.pre)]
    if any(plan.casts):
        arrays = [_util.cast(a, plan.dtype) if c else a for a, c in zip(arrays, plan.casts)]
    # the operation structural.concatenate with its axis already normalised
    out = arrays[0] if len(arrays) == 1 else structural.concatenate_p.bind(
        *arrays, dimension=plan.axis)
    if plan.post is not None:
        out = structural.reshape(out, new_sizes=plan.post)
    return out


def _reject_casting(name: str, casting: str) -> None:
    if casting != "same_kind":
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.{name} does not support casting={casting!r}; funcdiff always "
            "promotes with numpy's rules. Cast the inputs with .astype first.")


def _sequence(name: str, arrays: Any) -> list[Any]:
    if isinstance(arrays, (np.ndarray, Tracer)):
        return [arrays[i] for i in range(shape_of(arrays)[0])] if shape_of(arrays) else [arrays]
    try:
        arrays = list(arrays)
    except TypeError:
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs a sequence of arrays, got "
                                   f"{type(arrays).__name__}") from None
    if not arrays:
        raise ShapeError(f"funcdiff.numpy.{name}: need at least one array to concatenate")
    return [_arr(a, name) for a in arrays]


def _joined(name: str, tup: Any, axis: Any, dtype: Any) -> Any:
    """``name`` applied to the sequence ``tup``: a list or tuple of numpy arrays and
    tracers goes straight to its plan; anything else is converted first."""
    operands = _operands_key(tup) if type(tup) in (list, tuple) else None
    if not operands:
        tup = _sequence(name, tup)
        operands = tuple((shape_of(a), a.dtype) for a in tup)
    return _join(name, tup, operands, axis, dtype)


def _concat(name: str, arrays: list, axis: int, dtype: Any) -> Any:
    return _join(name, arrays, tuple((shape_of(a), a.dtype) for a in arrays), axis, dtype)


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """Join a sequence of arrays along an existing axis (``axis=None`` flattens first).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.concatenate([np.array([1, 2]), np.array([3.5])])
    array([1. , 2. , 3.5])
    """
    if out is not None:
        _util.reject("concatenate", out=out)
    _reject_casting("concatenate", casting)
    if axis is None:
        arrays = [ravel(a) for a in _sequence("concatenate", arrays)]
        axis = 0
    return _joined("concatenate", arrays, axis, dtype)


concat = concatenate  # numpy 2's array-API name; numpy's concat is concatenate itself


def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """Join arrays of one shape along a new axis.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.stack([np.ones(3), np.zeros(3)], axis=1).shape
    (3, 2)
    """
    if out is not None:
        _util.reject("stack", out=out)
    _reject_casting("stack", casting)
    return _joined("stack", arrays, axis, dtype)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays horizontally (along axis 1, or axis 0 for 1-d inputs)."""
    _reject_casting("hstack", casting)
    return _joined("hstack", tup, 0, dtype)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays vertically (along axis 0 after atleast_2d)."""
    _reject_casting("vstack", casting)
    return _joined("vstack", tup, 0, dtype)


def dstack(tup: Any) -> Any:
    """Stack arrays depth-wise (along axis 2 after atleast_3d)."""
    return _concat("dstack", [atleast_3d(a) for a in _sequence("dstack", tup)], 2, None)


def column_stack(tup: Any) -> Any:
    """Stack 1-d arrays as columns of a 2-d array (2-d inputs are stacked as they are)."""
    arrs = []
    for a in _sequence("column_stack", tup):
        shape = shape_of(a)
        if len(shape) < 2:
            a = structural.reshape(a, new_sizes=(math.prod(shape), 1))
        arrs.append(a)
    return _concat("column_stack", arrs, 1, None)


@returns_copies
def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (like ``numpy.block``).

    The innermost lists are joined along the last axis, the lists holding
    them along the axis before it, and so on. Every block is first given
    leading axes of length one, up to the larger of the nesting depth and the
    largest block's rank. Blocks are promoted to one dtype as ``concatenate``
    does; the derivative with respect to each block is a slice.

    Args:
      arrays: an array (returned as a new array), or nested lists of arrays,
        tracers or scalars, every block at the same depth.

    Returns:
      The assembled array.

    Raises:
      InvalidArgumentError: a level is a tuple (numpy accepts only lists).
      ShapeError: a list is empty, the nesting depths differ, or blocks do not fit.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 3))]])
    array([[1., 0., 0.],
           [0., 1., 0.],
           [1., 1., 1.]])
    """
    leaves: list = []
    _block_leaves(arrays, "arrays", 0, leaves)
    first_path, depth = leaves[0][:2]
    for path, d, _ in leaves:
        if d != depth:
            raise ShapeError(
                f"funcdiff.numpy.block: list depths are mismatched: {first_path} is nested "
                f"{depth} deep but {path} is nested {d} deep. Every block must sit at the same "
                "depth; wrap a block in a list, or stack it first.")
    if depth == 0:
        return fnp.copy(arrays)
    ndim = builtins.max([depth] + [len(shape_of(leaf)) for _, _, leaf in leaves])
    blocks = iter(leaf for _, _, leaf in leaves)
    return _block_level(arrays, 0, depth, ndim, blocks)


def _block_leaves(obj: Any, path: str, depth: int, out: list) -> None:
    """Append (path, depth, block as an array) for each block of ``obj``, checking lists."""
    if type(obj) is tuple:
        raise InvalidArgumentError(
            f"funcdiff.numpy.block: {path} is a tuple, but only lists arrange blocks (numpy "
            "does not turn tuples into arrays here either). Use a list, or fnp.array(...) "
            "to make the tuple one block.")
    if type(obj) is not list:
        out.append((path, depth, _arr(obj, "block")))
        return
    if not obj:
        raise ShapeError(f"funcdiff.numpy.block: the list {path} is empty; every list of "
                         "blocks needs at least one block.")
    for i, element in enumerate(obj):
        _block_leaves(element, f"{path}[{i}]", depth + 1, out)


def _block_level(obj: list, level: int, depth: int, ndim: int, blocks: Any) -> Any:
    """The list ``obj`` at nesting ``level`` joined along axis ``ndim - depth + level``."""
    parts = []
    for element in obj:
        if level + 1 == depth:
            leaf = next(blocks)
            shape = shape_of(leaf)
            if len(shape) < ndim:
                leaf = structural.reshape(leaf, new_sizes=(1,) * (ndim - len(shape)) + shape)
            parts.append(leaf)
        else:
            parts.append(_block_level(element, level + 1, depth, ndim, blocks))
    return _concat("block", parts, ndim - depth + level, None)


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


@returns_views
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split an array into sub-arrays (sections may differ in size by one).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> [p.tolist() for p in fnp.array_split(np.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


@returns_views
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split an array into equal sections or at the given indices.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> [p.tolist() for p in fnp.split(np.arange(6), [2, 3])]
    [[0, 1], [2], [3, 4, 5]]
    """
    return _split("split", ary, indices_or_sections, axis, equal=True)


def operand(x: Any, name: str) -> Any:
    """``_arr(x, name)``, returning numpy arrays of real dtypes and tracers untouched."""
    if (type(x) is np.ndarray and x.dtype.kind in "biuf") or isinstance(x, Tracer):
        return x
    return _arr(x, name)


@functools.lru_cache(maxsize=512)
def _split_plan(name: str, shape: tuple, ios: Any, axis: Any, equal: bool) -> tuple:
    """The (start_indices, limit_indices) of each piece, None for a piece that is all of it."""
    axis = normalize_axis(axis, len(shape), name)
    n = shape[axis]
    pieces = []
    for st, end in itertools.pairwise(_split_points(name, n, ios, equal)):
        start, stop, _ = builtins.slice(int(st), int(end)).indices(n)
        stop = max(start, stop)
        if start == 0 and stop == n:
            pieces.append(None)
        else:
            pieces.append((tuple(start if i == axis else 0 for i in range(len(shape))),
                           tuple(stop if i == axis else m for i, m in enumerate(shape))))
    return tuple(pieces)


def _split(name: str, ary: Any, ios: Any, axis: Any, equal: bool) -> list:
    ary = operand(ary, name)
    if type(ios) is list:
        ios = tuple(ios)
    cacheable = type(axis) is int and (type(ios) is int or (
        type(ios) is tuple and all(type(i) is int for i in ios)))
    plan = (_split_plan if cacheable else _split_plan.__wrapped__)(
        name, shape_of(ary), ios, axis, equal)
    # the operation slicing.slice with its settings already normalised
    return [ary if p is None else slicing.slice_p.bind(
        ary, start_indices=p[0], limit_indices=p[1], strides=None) for p in plan]


@returns_views
def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split horizontally (axis 1, or axis 0 for 1-d arrays)."""
    ary = _arr(ary, "hsplit")
    ndim = len(shape_of(ary))
    if ndim == 0:
        raise ShapeError("funcdiff.numpy.hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", ary, indices_or_sections, 1 if ndim > 1 else 0, equal=True)


@returns_views
def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split vertically (along axis 0); needs at least 2 dimensions."""
    ary = _arr(ary, "vsplit")
    if len(shape_of(ary)) < 2:
        raise ShapeError("funcdiff.numpy.vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0, equal=True)


@returns_views
def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split depth-wise (along axis 2); needs at least 3 dimensions."""
    ary = _arr(ary, "dsplit")
    if len(shape_of(ary)) < 3:
        raise ShapeError("funcdiff.numpy.dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2, equal=True)


__all__ = ["concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack", "split",
           "array_split", "hsplit", "vsplit", "dsplit", "block"]
