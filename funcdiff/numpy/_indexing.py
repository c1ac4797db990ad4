"""Functional index updates on any array: ``x.at[idx].set(v)``, ``.add(v)`` and the rest.

``.at[idx]`` computes the flat position of every selected element once (with
numpy when the index is concrete) and updates the flattened array with
``scatter`` (set) or ``scatter_add`` (add). ``multiply``/``min``/``max`` apply
every update, repeated positions included (like ``numpy.multiply.at``).

This module is also where funcdiff.numpy's indexing is found: reading
``x[idx]`` is ``getitem`` in ``_getitem`` and the index parser with its
``NonConcreteBooleanIndexError`` is ``_index_parsing``; both names are
re-exported here.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._arithmetic import add
from funcdiff.numpy._getitem import getitem
from funcdiff.numpy._logic import where
from funcdiff.numpy._index_parsing import (INDEX_DTYPE, NonConcreteBooleanIndexError,
                                           concrete_or_none, mask_value)
from funcdiff.primitives import elementwise as el
from funcdiff.primitives import indexing, reductions, structural
from funcdiff.primitives.indexing import IndexOutOfBoundsError


# ---------------------------------------------------------------------------
# Functional updates: x.at[idx].set(v) and friends


_ABSTRACT = object()


def _concrete_index(idx: Any) -> Any:
    """``idx`` with every tracer replaced by its known value, or _ABSTRACT if one is abstract."""
    if isinstance(idx, Tracer):
        if idx.dtype.kind == "b":
            return mask_value(idx)  # raises the explanatory error when abstract
        value = concrete_or_none(idx)
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
    iota = np.arange(size, dtype=INDEX_DTYPE).reshape(shape)
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
        masked = self._masked(values, lambda old, new: new)
        return masked if masked is not None else self._scatter("set", values, indexing.scatter)

    def add(self, values: Any, **_: Any) -> Any:
        """A copy of ``x`` with ``values`` added at ``idx``; repeated indices accumulate."""
        masked = self._masked(values, add)
        return masked if masked is not None else self._scatter("add", values, indexing.scatter_add)

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

    def _masked(self, values: Any, combine: Any) -> Any:
        """The update as a select, where the index is a boolean mask of ``x``'s shape and
        ``values`` one number: the same result, and its shape needs no count of the
        mask's true entries (so it works on abstract masks, under jit)."""
        x, mask = self.array, self.index
        if not (isinstance(mask, (Tracer, np.ndarray)) and mask.dtype == np.bool_
                and get_aval(mask).shape == get_aval(x).shape):
            return None
        values = _util.asarray(values, ".at[]")
        if get_aval(values).shape != ():
            return None
        return where(mask, _util.cast(combine(x, values), get_aval(x).dtype), x)

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
    pos = structural.reshape(positions, new_sizes=(count, 1))
    hit = el.eq(pos, np.arange(aval.size, dtype=INDEX_DTYPE).reshape(1, aval.size))
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


class IndexUpdateHelper:
    """``x.at``: index it (``x.at[idx]``) to get the update methods."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at(x: Any) -> IndexUpdateHelper:
    """Functional index updates for any array: ``fnp.at(x)[idx].set(v)`` returns a new array.

    Tracers have the same helper as the attribute ``x.at``; plain numpy arrays
    cannot carry it, so call ``fnp.at(x)`` (``x`` is never modified).

    >>> import numpy as np
    >>> at(np.zeros(4))[np.array([0, 2, 0])].add(1.0)
    array([2., 0., 1., 0.])
    """
    return IndexUpdateHelper(_util.asarray(x, "at"))


__all__ = ["getitem", "at", "NonConcreteBooleanIndexError"]
