"""Which results numpy would make views, so that ``x[idx] = v`` on tracers stays numpy's.

A tracer accepts ``x[idx] = v`` (array-API libraries fill arrays in place) by
becoming ``x.at[idx].set(v)``. In numpy a view shares memory with its base, so
a write to either shows in the other; funcdiff's views are new values. So that
no write leaves a stale copy behind, while a view taken by the user's code (or
a library's) and its base both live, neither accepts writes: the write raises,
naming the view. (``y[1:] += 1`` works: its view dies before the write.)

- ``returns_views`` marks the functions whose numpy counterparts return views
  (reshape, transpose, squeeze, broadcast_to, split, basic slicing, ...).
- ``returns_copies`` marks the functions whose numpy counterparts always
  copy, where funcdiff's may find the result equal to an argument (``floor``
  of integers, ``clip`` without bounds): they return a new tracer, so a write
  to the result leaves the argument alone.
- ``returns_tracers_like`` marks ``zeros_like`` and its kin: given a tracer,
  the user gets a constant tracer of its transform, which accepts writes of
  traced values (``g = np.zeros_like(x); g[0] = x[1]``), where a numpy array
  could only refuse them.
- Calls made inside funcdiff's own implementations do not count: their
  intermediate views never reach the user. The method forwarders
  (``x.reshape``, ``x.T``, numpy's dispatch) count as the user's calls.
"""

from __future__ import annotations

import functools
import os
import sys
import weakref
from typing import Any, Callable

import numpy as np

from funcdiff.core import Tracer, ViewLink, constant_of

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Frames that only forward the user's call: methods, properties, numpy's dispatch.
FORWARDERS = frozenset(_HERE + name for name in
                       ("_operators.py", "_interop.py", "_numpy_dispatch.py", "_views.py"))


def called_by_user(depth: int) -> bool:
    """Whether the frame ``depth`` levels up, past forwarders, lies outside funcdiff."""
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename in FORWARDERS:
        frame = frame.f_back
    return frame is None or not frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def _tracers(value: Any) -> list:
    if isinstance(value, Tracer):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, Tracer)]
    return []


def note_views(bases: Any, views: Any, what: str) -> None:
    """Link ``bases`` and ``views``, which numpy would let share memory: while both
    live, neither accepts writes."""
    outputs = _tracers(views)
    inputs = [b for b in _tracers(bases) if not _among(b, outputs)]
    if not inputs:
        return
    for base in inputs:
        _link(base, f"a view of it ({what}) is still in use", outputs)
    for view in outputs:
        if not _among(view, inputs):
            _link(view, f"it is a view ({what}) of an array still in use", inputs)


def _among(x: Tracer, others: list) -> bool:
    """Whether ``x`` itself is in ``others`` (by identity: tracers compare elementwise)."""
    for o in others:
        if o is x:
            return True
    return False


def _link(x: Tracer, reason: str, others: list) -> None:
    lock = getattr(x, "write_lock", None)
    if isinstance(lock, str):
        return  # a lasting lock (a transform's argument) stays
    if not isinstance(lock, ViewLink) or not lock.active():
        lock = x.write_lock = ViewLink(reason)
    lock.others += [weakref.ref(o) for o in others]


def returns_views(fn: Callable) -> Callable:
    """``fn`` (a funcdiff.numpy function whose numpy counterpart returns views of its
    array arguments), locking those arguments and its results against writes when
    the user's code calls it on tracers."""
    name = fn.__name__

    @functools.wraps(fn)
    def viewing(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        bases = [t for a in args for t in _tracers(a)]
        if bases and called_by_user(1):
            note_views(bases, out, f"{name}()")
        return out
    return viewing


def returns_slice_views(getitem: Callable) -> Callable:
    """``getitem(x, idx)``, locking ``x`` and the result when numpy would return a
    view (basic indexing; integer-array and boolean indexing copy)."""
    @functools.wraps(getitem)
    def viewing_getitem(x: Any, idx: Any) -> Any:
        out = getitem(x, idx)
        if isinstance(x, Tracer) and basic_index(idx, x.ndim) and called_by_user(1):
            note_views(x, out, "x[...]")
        return out
    return viewing_getitem


def basic_index(idx: Any, ndim: int) -> bool:
    """Whether ``x[idx]`` is a numpy view: basic indexing that leaves an axis."""
    if type(idx) is int:  # the common case, first
        return ndim > 1
    items = idx if isinstance(idx, tuple) else (idx,)
    integers = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, slice):
            continue
        if isinstance(item, bool) or not hasattr(item, "__index__") or isinstance(item, Tracer):
            return False  # a boolean, an array or a traced index: advanced indexing copies
        if getattr(item, "ndim", 0):
            return False
        integers += 1
    return not (integers == ndim and len(items) == integers)  # all-integer: a scalar copy


def distinct(x: Any) -> Any:
    """``x`` as a new array: for a result that numpy computes as a copy but funcdiff
    found equal to an argument (``floor`` of integers, ``+x``, ``copy``)."""
    if isinstance(x, Tracer):
        return x.fresh_copy()
    return x.copy() if isinstance(x, np.ndarray) else x


def returns_copies(fn: Callable) -> Callable:
    """``fn``, whose numpy counterpart returns new arrays, never returning one of its
    arguments itself (a write to the result must leave the argument unchanged)."""
    @functools.wraps(fn)
    def copying(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        if any(out is a for a in args):
            return distinct(out)
        if isinstance(out, (tuple, list)) and any(o is a for o in out for a in args):
            return type(out)(distinct(o) if any(o is a for a in args) else o for o in out)
        return out
    return copying


def returns_tracers_like(fn: Callable) -> Callable:
    """``fn`` (``zeros_like`` and its kin), returning a constant tracer of its first
    argument's transform when the user's code passes a tracer."""
    @functools.wraps(fn)
    def like(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        if args and isinstance(args[0], Tracer) and not isinstance(out, Tracer) \
                and called_by_user(1):
            return constant_of(args[0], out)
        return out
    return like
