"""numpy indexing on tracers (``x[idx]``) and functional updates (``x.at[idx].set(v)``).

``getitem`` follows numpy's rules in two phases. Basic indexing (integers,
slices with any step, ``None``, ``...``) becomes one ``slice``, one ``rev``, one
``squeeze`` and one ``expand_dims`` at most. Advanced indexing (integer arrays,
concrete boolean masks) then moves the indexed axes together, merges them into
one axis and ``gather``s at flat positions computed like
``numpy.ravel_multi_index``; the broadcast index axes land where numpy puts
them (in place when the advanced indices are adjacent, first otherwise).
Because ``gather`` transposes to ``scatter_add``, repeated indices accumulate
in reverse mode.

Index values are never differentiated, so an index that is a tracer with a
known value (any eager transform: grad, jvp, vjp) is used as that numpy
value: it is bounds-checked like numpy and costs no traced arithmetic. Only
under jit/make_jaxpr (or per-member indices under vmap) are indices abstract;
then negatives are wrapped and out-of-range values clamped into the axis, as
JAX does, since they cannot be checked while tracing. A boolean mask decides
the result's shape, so it must be concrete.

``.at[idx]`` computes the flat position of every selected element once (with
numpy when the index is concrete) and updates the flattened array with
``scatter`` (set) or ``scatter_add`` (add). ``multiply``/``min``/``max`` apply
every update, repeated positions included (like ``numpy.multiply.at``).
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import ConcretizationError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.primitives import indexing, structural
from funcdiff.primitives.indexing import IndexOutOfBoundsError

_INDEX_DTYPE = np.dtype(np.int64)
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None (`numpy.newaxis`) and "
          "integer or boolean arrays are valid indices")


class NonConcreteBooleanIndexError(ConcretizationError, IndexError):
    """A boolean mask index was abstract, so the shape of the result is unknown."""


# ---------------------------------------------------------------------------
# Parsing an index into typed entries


def _concrete_or_none(t: Tracer) -> Any:
    """The value of ``t`` when it is known (eager transforms), else None."""
    try:
        return np.asarray(t.to_concrete("indexing"))
    except ConcretizationError:
        return None


def _mask_value(m: Any) -> np.ndarray:
    if isinstance(m, Tracer):
        value = _concrete_or_none(m)
        if value is None:
            raise NonConcreteBooleanIndexError(
                f"boolean mask indexing x[mask] needs a concrete mask, because the shape of "
                f"the result depends on how many entries are True; here the mask is the "
                f"abstract {m.aval.str_short()} (under jit, make_jaxpr or per-member under "
                "vmap). Keep the shape static instead: fnp.where(mask, x, 0) selects with a "
                "fill value, and fnp.sum(fnp.where(mask, x, 0)) reduces over the selection.")
        return value
    return np.asarray(m)


def _entry(e: Any) -> tuple:
    """Classify one index entry as none/ellipsis/slice/int/adv (int array)/bool."""
    if e is None:
        return ("none",)
    if e is Ellipsis:
        return ("ellipsis",)
    if isinstance(e, builtins.slice):
        return ("slice", e)
    if isinstance(e, (bool, np.bool_)):
        return ("bool", np.asarray(e))
    if isinstance(e, (int, np.integer)):
        return ("int", int(e))
    if isinstance(e, Tracer):
        kind = e.dtype.kind
        if kind == "b":
            return ("bool", _mask_value(e))
        if kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                             f"got a tracer {e.aval.str_short()}")
        value = _concrete_or_none(e)
        return ("adv", e) if value is None else _entry(value)
    if isinstance(e, (list, tuple)):
        from funcdiff.numpy._shape import stack_nested
        if any(isinstance(v, Tracer) for v in _util._flat(e)):
            return _entry(stack_nested(e))
        arr = np.asarray(e)
        if arr.size == 0 and arr.dtype.kind == "f":  # numpy treats [] as an empty index
            arr = arr.astype(_INDEX_DTYPE)
        return _entry(arr)
    if isinstance(e, (np.ndarray, np.generic)):
        kind = e.dtype.kind
        if kind == "b":
            return ("bool", np.asarray(e))
        if kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                             f"got {e.dtype}")
        if np.ndim(e) == 0:
            return ("int", int(e))
        return ("adv", e)
    if hasattr(e, "__index__") and not isinstance(e, float):
        return ("int", operator.index(e))
    raise IndexError(f"{_VALID}; got {type(e).__name__}: {e!r:.60}")


def _parse(shape: tuple[int, ...], idx: Any) -> list[tuple]:
    """``idx`` as one entry per consumed axis or new axis: ellipsis expanded,
    boolean masks turned into integer arrays, each entry tagged with its input axis."""
    raw = idx if isinstance(idx, tuple) else (idx,)
    entries = [_entry(e) for e in raw]
    ndim = len(shape)
    consumed = sum(1 if k[0] in ("slice", "int", "adv") else
                   np.ndim(k[1]) if k[0] == "bool" else 0 for k in entries)
    n_ellipsis = sum(k[0] == "ellipsis" for k in entries)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    fill = [("slice", builtins.slice(None))] * (ndim - consumed)
    if n_ellipsis:  # the ellipsis separates advanced indices even when it expands to nothing
        at = next(i for i, k in enumerate(entries) if k[0] == "ellipsis")
        entries = entries[:at] + [("sep",)] + fill + entries[at + 1:]
    else:
        entries = entries + fill
    out, axis = [], 0
    for k in entries:
        if k[0] == "bool":
            mask = k[1]
            if mask.ndim == 0:  # a scalar bool adds an axis of length 1 (True) or 0 (False)
                out.append(("newadv", np.arange(int(bool(mask)), dtype=_INDEX_DTYPE), None))
                continue
            for j, n in enumerate(mask.shape):
                if shape[axis + j] != n and n != 0:  # numpy lets an empty mask axis pass
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + j}; "
                        f"size of axis is {shape[axis + j]} but size of corresponding boolean "
                        f"axis is {n}")
            for j, positions in enumerate(np.nonzero(mask)):
                out.append(("adv", positions.astype(_INDEX_DTYPE), axis + j))
            axis += mask.ndim
        elif k[0] in ("none", "sep"):
            out.append((k[0], None, None))
        else:
            if k[0] == "int" and not -shape[axis] <= k[1] < shape[axis]:
                raise IndexOutOfBoundsError(
                    f"index {k[1]} is out of bounds for axis {axis} with size {shape[axis]}")
            out.append((k[0], k[1], axis))
            axis += 1
    if any(k[0] in ("adv", "newadv") for k in out):  # with arrays, integers act as arrays
        out = [("adv", np.asarray(k[1], _INDEX_DTYPE), k[2]) if k[0] == "int" else k for k in out]
    return out


# ---------------------------------------------------------------------------
# getitem


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
    entries = _parse(shape, idx)
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
        elif kind == "int":  # in range: checked by _parse
            start, stop, step = value % n, value % n + 1, 1
            int_axes.append(axis)
        else:  # adv: keep the whole axis for now
            start, stop, step = 0, n, 1
            out_kinds.append("adv")
        starts.append(start)
        limits.append(stop)
        strides.append(step)
    y = x
    if tuple(starts) != (0,) * len(shape) or tuple(limits) != shape or any(s != 1 for s in strides):
        y = structural.slice(y, start_indices=tuple(starts), limit_indices=tuple(limits),
                             strides=tuple(strides))
    if reversed_axes:
        y = structural.rev(y, dimensions=tuple(reversed_axes))
    if int_axes:
        y = structural.squeeze(y, dimensions=tuple(int_axes))
    new_axes = tuple(i for i, k in enumerate(out_kinds) if k in ("none", "newadv"))
    if new_axes:
        y = structural.expand_dims(y, dimensions=new_axes)
    positions = [i for i, k in enumerate(out_kinds) if k in ("adv", "newadv")]
    adv = [(p, value, axis) for p, (kind, value, axis) in
           zip(positions, [e for e in entries if e[0] in ("adv", "newadv")])]
    return y, adv


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
        flat = np.zeros(out_shape, _INDEX_DTYPE)
        for (i, n, axis), stride in zip(indices, strides):
            i = np.asarray(i, _INDEX_DTYPE)
            bad = (i < -n) | (i >= n)
            if bad.any() and flat.size:  # numpy checks only indices it actually reads
                where = f"axis {axis}" if axis is not None else "a new axis"
                raise IndexOutOfBoundsError(
                    f"index {i[bad].flat[0]} is out of bounds for {where} with size {n}")
            flat = flat + np.where(i < 0, i + n, i) * stride
        return flat
    from funcdiff.primitives import elementwise as el
    flat = None
    for (i, n, _), stride in zip(indices, strides):
        i = _util.cast(i, _INDEX_DTYPE) if isinstance(i, Tracer) else np.asarray(i, _INDEX_DTYPE)
        if isinstance(i, Tracer):  # abstract: wrap negatives, clamp into the axis
            i = el.select(el.lt(i, np.asarray(0, _INDEX_DTYPE)),
                          el.add(i, np.asarray(n, _INDEX_DTYPE)), i)
            i = el.max(el.min(i, np.asarray(max(n - 1, 0), _INDEX_DTYPE)),
                       np.asarray(0, _INDEX_DTYPE))
        else:
            bad = (i < -n) | (i >= n)
            if bad.any() and math.prod(out_shape):
                raise IndexOutOfBoundsError(f"index {i[bad].flat[0]} is out of bounds for "
                                            f"an axis with size {n}")
            i = np.where(i < 0, i + n, i)
        if stride != 1:
            i = el.mul(i, np.asarray(stride, _INDEX_DTYPE))
        flat = i if flat is None else el.add(flat, i)
    return structural.broadcast_to(flat, out_shape)


# ---------------------------------------------------------------------------
# Functional updates: x.at[idx].set(v) and friends


_ABSTRACT = object()


def _concrete_index(idx: Any) -> Any:
    """``idx`` with every tracer replaced by its known value, or _ABSTRACT if one is abstract."""
    if isinstance(idx, Tracer):
        if idx.dtype.kind == "b":
            return _mask_value(idx)  # raises the explanatory error when abstract
        value = _concrete_or_none(idx)
        return _ABSTRACT if value is None else value
    if isinstance(idx, builtins.slice):
        parts = [_concrete_index(p) for p in (idx.start, idx.stop, idx.step)]
        if any(p is _ABSTRACT for p in parts):
            return _ABSTRACT
        return builtins.slice(*[int(p) if isinstance(p, np.ndarray) else p for p in parts])
    if isinstance(idx, (tuple, list)):
        parts = [_concrete_index(p) for p in idx]
        if any(p is _ABSTRACT for p in parts):
            return _ABSTRACT
        return tuple(parts) if isinstance(idx, tuple) else list(parts)
    return idx


def _flat_positions(x: Any, idx: Any) -> Any:
    """The flat position in ``x`` of every element ``x[idx]`` selects, shaped like ``x[idx]``."""
    shape = get_aval(x).shape
    size = math.prod(shape)
    iota = np.arange(size, dtype=_INDEX_DTYPE).reshape(shape)
    concrete = _concrete_index(idx)
    if concrete is _ABSTRACT:
        return getitem(iota, idx)
    try:
        return np.asarray(iota[concrete])
    except IndexError as e:
        if isinstance(e, IndexOutOfBoundsError):
            raise
        raise IndexOutOfBoundsError(f".at[{idx!r:.60}] on an array of shape {shape}: {e}") from None


class _IndexUpdateRef:
    """``x.at[idx]``: the functional update methods for one index."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None) -> Any:
        """``x[idx]``."""
        if mode is not None or fill_value is not None:
            raise UnsupportedNumpyError(".at[].get supports neither mode= nor fill_value=; "
                                        "out-of-range concrete indices raise.")
        return getitem(self.array, self.index)

    def set(self, values: Any, **_: Any) -> Any:
        """A copy of ``x`` with ``x[idx] = values`` (for repeated indices the last write wins)."""
        return self._scatter("set", values, indexing.scatter)

    def add(self, values: Any, **_: Any) -> Any:
        """A copy of ``x`` with ``values`` added at ``idx``; repeated indices accumulate."""
        return self._scatter("add", values, indexing.scatter_add)

    def multiply(self, values: Any, **_: Any) -> Any:
        """A copy of ``x`` multiplied by ``values`` at ``idx``; repeated indices multiply
        repeatedly (like ``numpy.multiply.at``)."""
        return self._combine("multiply", values)

    def min(self, values: Any, **_: Any) -> Any:
        """A copy of ``x`` with ``minimum(x[idx], values)`` at ``idx`` (all updates applied)."""
        return self._combine("min", values)

    def max(self, values: Any, **_: Any) -> Any:
        """A copy of ``x`` with ``maximum(x[idx], values)`` at ``idx`` (all updates applied)."""
        return self._combine("max", values)

    # --- implementation ---------------------------------------------------------

    def _prepare(self, method: str, values: Any):
        x = self.array
        aval = get_aval(x)
        positions = _flat_positions(x, self.index)
        pshape = get_aval(positions).shape if isinstance(positions, Tracer) else positions.shape
        values = _util.cast(_util.asarray(values, f".at[].{method}"), aval.dtype)
        vshape = get_aval(values).shape
        while len(vshape) > len(pshape) and vshape[0] == 1:  # numpy drops leading 1s
            values = structural.squeeze(values, dimensions=(0,))
            vshape = vshape[1:]
        try:
            ok = np.broadcast_shapes(vshape, pshape) == tuple(pshape)
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(
                f"x.at[idx].{method}(values): values of shape {vshape} cannot be broadcast to "
                f"the shape {tuple(pshape)} of x[idx] (x is {aval.str_short()})")
        values = structural.broadcast_to(values, pshape)
        flat_x = structural.reshape(x, new_sizes=(aval.size,)) if aval.shape != (aval.size,) else x
        return aval, flat_x, positions, values

    def _scatter(self, method: str, values: Any, scatter_op) -> Any:
        aval, flat_x, positions, values = self._prepare(method, values)
        out = scatter_op(flat_x, positions, values, axis=0)
        return structural.reshape(out, new_sizes=aval.shape) if aval.shape != (aval.size,) else out

    def _combine(self, method: str, values: Any) -> Any:
        from funcdiff.primitives import elementwise as el
        op = {"multiply": el.mul, "min": el.min, "max": el.max}[method]
        aval, out, positions, values = self._prepare(method, values)
        count = math.prod(get_aval(positions).shape)
        values = structural.reshape(values, new_sizes=(count,))
        if isinstance(positions, Tracer):
            out = _combine_traced(method, op, out, positions, values, count, aval)
        else:
            # Occurrence rounds: round r applies the r-th update of every position;
            # within a round positions are distinct, so gather-op-scatter is exact.
            flat = positions.reshape(-1)
            order = np.argsort(flat, kind="stable")
            sorted_flat = flat[order]
            is_first = np.r_[True, sorted_flat[1:] != sorted_flat[:-1]][:count]
            first = np.maximum.accumulate(np.where(is_first, np.arange(count), 0))
            occurrence = np.empty(count, np.int64)
            occurrence[order] = np.arange(count) - first
            for r in range(int(occurrence.max()) + 1 if count else 0):
                sel = np.flatnonzero(occurrence == r)
                vals = values if sel.size == count else indexing.gather(values, sel, axis=0)
                where = flat[sel]
                out = indexing.scatter(out, where, op(indexing.gather(out, where, axis=0), vals),
                                       axis=0)
        return structural.reshape(out, new_sizes=aval.shape) if aval.shape != (aval.size,) else out


def _combine_traced(method, op, flat_x, positions, values, count, aval):
    """multiply/min/max at abstract positions: a one-hot (updates x positions) table
    reduced over the updates (exact for repeated indices; memory count * size)."""
    from funcdiff.primitives import elementwise as el, reductions
    pos = structural.reshape(positions, new_sizes=(count, 1))
    hit = el.eq(pos, np.arange(aval.size, dtype=_INDEX_DTYPE).reshape(1, aval.size))
    if method == "multiply":
        neutral = np.ones((), aval.dtype)
    elif aval.dtype.kind == "f":
        neutral = np.asarray(np.inf if method == "min" else -np.inf, aval.dtype)
    else:
        info = np.iinfo(aval.dtype) if aval.dtype.kind in "iu" else None
        neutral = np.asarray((info.max if method == "min" else info.min) if info else
                             (method == "min"), aval.dtype)
    table = el.select(hit, structural.broadcast_to(structural.reshape(values, new_sizes=(count, 1)),
                                                   (count, aval.size)),
                      structural.full((count, aval.size), neutral, aval.dtype))
    reduce = {"multiply": reductions.reduce_prod, "min": reductions.reduce_min,
              "max": reductions.reduce_max}[method]
    return op(flat_x, reduce(table, axes=(0,)))


class _IndexUpdateHelper:
    """``x.at``: index it (``x.at[idx]``) to get the update methods."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at(x: Any) -> _IndexUpdateHelper:
    """Functional index updates for any array: ``fnp.at(x)[idx].set(v)`` returns a new array.

    Tracers have the same helper as the attribute ``x.at``; plain numpy arrays
    cannot carry it, so call ``fnp.at(x)`` (``x`` is never modified).

    >>> import numpy as np
    >>> at(np.zeros(4))[np.array([0, 2, 0])].add(1.0)
    array([2., 0., 1., 0.])
    """
    return _IndexUpdateHelper(_util.asarray(x, "at"))


__all__ = ["getitem", "at", "NonConcreteBooleanIndexError"]
