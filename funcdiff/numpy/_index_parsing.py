"""Parsing a numpy index expression into typed entries, one per consumed or new axis.

``parse`` classifies every entry of an index (integers, slices, ``None``,
``...``, integer arrays, boolean masks), expands the ellipsis, turns boolean
masks into integer arrays and tags each entry with the input axis it consumes;
``getitem`` (``_getitem``) and ``x.at[idx]`` (``_indexing``) both start from
this form.

Index values are never differentiated, so an index that is a tracer with a
known value (any eager transform: grad, jvp, vjp) is used as that numpy
value: it is bounds-checked like numpy and costs no traced arithmetic. A
boolean mask decides the result's shape, so it must be concrete.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError
from funcdiff.numpy import _util
from funcdiff.primitives.indexing import IndexOutOfBoundsError

INDEX_DTYPE = np.dtype(np.int64)
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None (`numpy.newaxis`) and "
          "integer or boolean arrays are valid indices")


class NonConcreteBooleanIndexError(ConcretizationError, IndexError):
    """A boolean mask index was abstract, so the shape of the result is unknown."""


# ---------------------------------------------------------------------------
# Parsing an index into typed entries


def concrete_or_none(t: Tracer) -> Any:
    """The value of ``t`` when it is known (eager transforms), else None."""
    try:
        return np.asarray(t.to_concrete("indexing"))
    except ConcretizationError:
        return None


def mask_value(m: Any) -> np.ndarray:
    if isinstance(m, Tracer):
        value = concrete_or_none(m)
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
            return ("bool", mask_value(e))
        if kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                             f"got a tracer {e.aval.str_short()}")
        value = concrete_or_none(e)
        return ("adv", e) if value is None else _entry(value)
    if isinstance(e, (list, tuple)):
        if any(isinstance(v, Tracer) for v in _util.flat(e)):
            return _entry(_util.stack_nested(e))
        arr = np.asarray(e)
        if arr.size == 0 and arr.dtype.kind == "f":  # numpy treats [] as an empty index
            arr = arr.astype(INDEX_DTYPE)
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


def parse(shape: tuple[int, ...], idx: Any) -> list[tuple]:
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
                out.append(("newadv", np.arange(int(bool(mask)), dtype=INDEX_DTYPE), None))
                continue
            for j, n in enumerate(mask.shape):
                if shape[axis + j] != n and n != 0:  # numpy lets an empty mask axis pass
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + j}; "
                        f"size of axis is {shape[axis + j]} but size of corresponding boolean "
                        f"axis is {n}")
            for j, positions in enumerate(np.nonzero(mask)):
                out.append(("adv", positions.astype(INDEX_DTYPE), axis + j))
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
        out = [("adv", np.asarray(k[1], INDEX_DTYPE), k[2]) if k[0] == "int" else k for k in out]
    return out
