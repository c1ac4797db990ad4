"""numpy indexing on tracers: ``x[idx]`` as slices, reversals and one ``gather``.

``getitem`` follows numpy's rules in two phases. Basic indexing (integers,
slices with any step, ``None``, ``...``) becomes one ``slice``, one ``rev``, one
``squeeze`` and one ``expand_dims`` at most. Advanced indexing (integer arrays,
concrete boolean masks) then moves the indexed axes together, merges them into
one axis and ``gather``s at flat positions computed like
``numpy.ravel_multi_index``; the broadcast index axes land where numpy puts
them (in place when the advanced indices are adjacent, first otherwise).
Because ``gather`` transposes to ``scatter_add``, repeated indices accumulate
in reverse mode.

The index is parsed by ``_index_parsing``, where concrete index values are
bounds-checked like numpy. Only under jit/make_jaxpr (or per-member indices
under vmap) are indices abstract; then negatives are wrapped and out-of-range
values clamped into the axis, as JAX does, since they cannot be checked while
tracing.
"""

from __future__ import annotations

import builtins
import functools
import math
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.numpy import _util
from funcdiff.numpy._index_parsing import INDEX_DTYPE, parse
from funcdiff.primitives import elementwise as el
from funcdiff.primitives import indexing, slicing, structural
from funcdiff.primitives.indexing import IndexOutOfBoundsError
from funcdiff.numpy._views import returns_slice_views


# ---------------------------------------------------------------------------
# getitem


@returns_slice_views
def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` with numpy's semantics, for tracers and arrays alike.

    Args:
      x: array or tracer.
      idx: ints, slices, None, Ellipsis, integer arrays (numpy arrays, lists or
        traced), boolean masks with a concrete value, or a tuple of them.

    Returns:
      The selected array (always a new value: there are no views).

    Raises:
      IndexOutOfBoundsError: a concrete index is out of range.
      NonConcreteBooleanIndexError: a boolean mask is abstract (use fnp.where).
      IndexError: a malformed index.

    >>> import numpy as np
    >>> getitem(np.arange(12).reshape(3, 4), (slice(None, None, -2), [0, 0, 3]))
    array([[ 8,  8, 11],
           [ 0,  0,  3]])
    """
    x = _util.asarray(x, "indexing")
    shape = get_aval(x).shape
    key = _basic_key(idx)
    if key is not None:  # ints, slices, None and ...: the steps are planned once per shape
        for primitive, params in _basic_plan(shape, key):
            x = primitive.bind(x, **params)
        return x
    entries = parse(shape, idx)
    y, adv = _basic(x, shape, entries)
    if adv:
        # numpy keeps the index axes in place only when the advanced indices are
        # adjacent (no slice, None or ellipsis between them); otherwise they go first.
        where = [i for i, e in enumerate(entries) if e[0] in ("adv", "newadv")]
        y = _advanced(y, adv, in_place=where == list(range(where[0], where[0] + len(where))))
    return y


def _basic(x: Any, shape: tuple, entries: list) -> tuple[Any, list]:
    """Apply ints, slices and None; return the result and the advanced entries as
    ``(position in the result, index, input axis)``."""
    steps, adv = _basic_steps(shape, entries)
    for primitive, params in steps:
        x = primitive.bind(x, **params)
    return x, adv


# the types of a slice's start, stop and step that a planned index may hold
_PLANNED_BOUNDS = (int, type(None))


def _basic_key(idx: Any) -> tuple | None:
    """``idx`` as a hashable key when it holds only Python ints, slices of them,
    None and ``...`` (a slice as its (start, stop, step)); else None."""
    key = []
    for e in idx if type(idx) is tuple else (idx,):
        t = type(e)
        if t is int or e is None or e is Ellipsis:
            key.append(e)
        elif (t is builtins.slice and type(e.start) in _PLANNED_BOUNDS
              and type(e.stop) in _PLANNED_BOUNDS and type(e.step) in _PLANNED_BOUNDS):
            key.append((e.start, e.stop, e.step))
        else:
            return None
    return tuple(key)


@functools.lru_cache(maxsize=1024)  # bounded: shapes and indices come from users
def _basic_plan(shape: tuple, key: tuple) -> tuple:
    """The ``(primitive, params)`` steps of a basic index given as ``_basic_key``
    (parsed, and bounds-checked, when first met: a failing index is not cached)."""
    idx = tuple(builtins.slice(*e) if type(e) is tuple else e for e in key)
    steps, _ = _basic_steps(shape, parse(shape, idx))
    return tuple(steps)


def _basic_steps(shape: tuple, entries: list) -> tuple[list, list]:
    """The ``(primitive, params)`` steps of the ints, slices and None of ``entries``
    (one slice, rev, squeeze and expand_dims at most), and the advanced entries."""
    starts, limits, strides, reversed_axes, int_axes = [], [], [], [], []
    out_kinds = []  # kind of each result axis, in order
    for kind, value, axis in entries:
        if kind == "sep":
            continue
        if kind in ("none", "newadv"):
            out_kinds.append(kind)
            continue
        n = shape[axis]
        if kind == "slice":
            start, stop, step = value.indices(n)
            m = len(range(start, stop, step))
            if m == 0:
                start, stop, step = 0, 0, 1
            elif step > 0:
                stop = start + (m - 1) * step + 1
            else:
                start, stop, step = start + (m - 1) * step, start + 1, -step
                reversed_axes.append(axis)
            out_kinds.append("slice")
        elif kind == "int":  # in range: checked by parse
            start, stop, step = value % n, value % n + 1, 1
            int_axes.append(axis)
        else:  # adv: keep the whole axis for now
            start, stop, step = 0, n, 1
            out_kinds.append("adv")
        starts.append(start)
        limits.append(stop)
        strides.append(step)
    # the params as the operations of slicing and structural make them: Python int
    # tuples, axes sorted, strides None when all are one
    steps = []
    if tuple(starts) != (0,) * len(shape) or tuple(limits) != shape or any(s != 1 for s in strides):
        steps.append((slicing.slice_p, {
            "start_indices": tuple(starts), "limit_indices": tuple(limits),
            "strides": None if all(s == 1 for s in strides) else tuple(strides)}))
    if reversed_axes:
        steps.append((structural.rev_p, {"dimensions": tuple(reversed_axes)}))
    if int_axes:
        steps.append((structural.squeeze_p, {"dimensions": tuple(int_axes)}))
    new_axes = tuple(i for i, k in enumerate(out_kinds) if k in ("none", "newadv"))
    if new_axes:
        steps.append((structural.expand_dims_p, {"dimensions": new_axes}))
    positions = [i for i, k in enumerate(out_kinds) if k in ("adv", "newadv")]
    adv = [(p, value, axis) for p, (kind, value, axis) in
           zip(positions, [e for e in entries if e[0] in ("adv", "newadv")])]
    return steps, adv


def _advanced(y: Any, adv: list, in_place: bool) -> Any:
    """Gather ``y`` at integer index arrays placed on axes ``adv[i][0]``; the index
    axes replace the indexed ones (``in_place``, the axes are then adjacent) or lead."""
    shape = get_aval(y).shape
    positions = [p for p, _, _ in adv]
    sizes = [shape[p] for p in positions]
    try:
        out_shape = np.broadcast_shapes(*[get_aval(i).shape if isinstance(i, Tracer)
                                          else np.shape(i) for _, i, _ in adv])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + " ".join(str(np.shape(i) if not isinstance(i, Tracer)
                                                       else i.shape) for _, i, _ in adv)) from None
    flat = _flat_index([(i, n, axis) for (_, i, axis), n in zip(adv, sizes)], out_shape)
    k = len(adv)
    if in_place:
        p = positions[0]
        if k > 1:
            merged = math.prod(sizes)
            y = structural.reshape(y, new_sizes=shape[:p] + (merged,) + shape[p + k:])
        return indexing.gather(y, flat, axis=p)
    rest = [i for i in range(len(shape)) if i not in positions]
    y = structural.transpose(y, permutation=tuple(positions + rest))
    merged = math.prod(sizes)
    y = structural.reshape(y, new_sizes=(merged,) + tuple(shape[i] for i in rest))
    return indexing.gather(y, flat, axis=0)


def _flat_index(indices: list, out_shape: tuple) -> Any:
    """Row-major flat positions of the index arrays ``[(index, axis size, input axis)]``."""
    strides = [math.prod([n for _, n, _ in indices[j + 1:]])
               for j in range(len(indices))]
    if not any(isinstance(i, Tracer) for i, _, _ in indices):
        flat = np.zeros(out_shape, INDEX_DTYPE)
        for (i, n, axis), stride in zip(indices, strides):
            i = np.asarray(i, INDEX_DTYPE)
            bad = (i < -n) | (i >= n)
            if bad.any() and flat.size:  # numpy checks only indices it actually reads
                where = f"axis {axis}" if axis is not None else "a new axis"
                raise IndexOutOfBoundsError(
                    f"index {i[bad].flat[0]} is out of bounds for {where} with size {n}")
            flat = flat + np.where(i < 0, i + n, i) * stride
        return flat
    flat = None
    for (i, n, _), stride in zip(indices, strides):
        i = _util.cast(i, INDEX_DTYPE) if isinstance(i, Tracer) else np.asarray(i, INDEX_DTYPE)
        if isinstance(i, Tracer):  # abstract: wrap negatives, clamp into the axis
            i = el.select(el.lt(i, np.asarray(0, INDEX_DTYPE)),
                          el.add(i, np.asarray(n, INDEX_DTYPE)), i)
            i = el.max(el.min(i, np.asarray(max(n - 1, 0), INDEX_DTYPE)),
                       np.asarray(0, INDEX_DTYPE))
        else:
            bad = (i < -n) | (i >= n)
            if bad.any() and math.prod(out_shape):
                raise IndexOutOfBoundsError(f"index {i[bad].flat[0]} is out of bounds for "
                                            f"an axis with size {n}")
            i = np.where(i < 0, i + n, i)
        if stride != 1:
            i = el.mul(i, np.asarray(stride, INDEX_DTYPE))
        flat = i if flat is None else el.add(flat, i)
    return structural.broadcast_to(flat, out_shape)
