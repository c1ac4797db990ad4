"""Selecting and ordering by index: choose, compress, extract, partition, argpartition, lexsort.

``choose`` picks each element from one of several arrays; it gathers from the
broadcast stack of the choices, so it is differentiable in them (the integer
selector never is). ``compress`` and ``extract`` keep the slices (elements)
where a condition holds; how many there are decides the result's shape, so,
like ``nonzero``, they need a concrete condition (outside transforms, or under
grad/jvp/vjp, whose values are concrete) unless JAX's ``size=`` fixes the
number of results, padding with ``fill_value``; then they trace under jit and
vmap. The kept values are a gather of the input and carry its derivative.
``partition`` and ``argpartition`` return the fully sorted order, which is a
valid partition for every ``kth`` (numpy only promises the ``kth`` element in
its sorted place with no larger one before it and no smaller one after it);
``kth`` is static and checked as numpy checks it. ``lexsort`` is one stable
multi-key sort primitive; its integer result carries no derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, InvalidArgumentError,
                             ShapeError)
from funcdiff.numpy import _util
from funcdiff.numpy._nonzero import first_positions
from funcdiff.primitives import elementwise, gradient_control, sorting
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.primitives.indexing import IndexOutOfBoundsError

_INDEX = np.dtype(np.int64)
_MODES = ("raise", "wrap", "clip")


# ---------------------------------------------------------------------------
# choose


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """Build an array by picking each element from ``choices[a]`` (numpy.choose).

    ``a`` and every choice are broadcast to one shape; element ``i`` of the
    result is element ``i`` of ``choices[a[i]]``. The result has the choices'
    promoted dtype (Python scalars are weak) and is differentiable in them.

    Args:
      a: integer (or boolean) selector array, entries in ``[0, len(choices))``.
      choices: a non-empty sequence of arrays, or one array whose first axis
        enumerates the choices.
      mode: ``'raise'`` rejects entries out of range, ``'wrap'`` takes them
        modulo ``len(choices)``, ``'clip'`` clips them into range.

    Raises:
      IndexOutOfBoundsError: in ``'raise'`` mode, for an entry of ``a`` out of range.
      ConcretizationError: in ``'raise'`` mode when ``a`` is abstract (under jit
        or vmap), as in JAX: the check needs its value; use ``'wrap'`` or ``'clip'``.
      DTypeError: for a non-integer ``a``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.choose(np.array([2, 0, 1]), [np.zeros(3), np.ones(3), np.array([7., 8., 9.])])
    array([7., 0., 1.])
    """
    _util.reject("choose", out=out)
    if mode not in _MODES:
        raise InvalidArgumentError(f"funcdiff.numpy.choose: mode must be 'raise', 'wrap' or "
                                   f"'clip', got {mode!r}")
    a = _util.asarray(a, "choose")
    kind = get_aval(a).dtype.kind
    if kind not in "biu":
        raise DTypeError(f"funcdiff.numpy.choose needs an integer selector a, but got "
                         f"{get_aval(a).str_short()}; convert it with astype(int).")
    stacked = _stacked_choices(choices, get_aval(a).shape)
    n = get_aval(stacked).shape[0]
    index = _choice_index(a, n, mode)
    shape = get_aval(stacked).shape[1:]
    index = fnp.reshape(fnp.broadcast_to(index, shape), (1,) + shape)
    return fnp.reshape(fnp.take_along_axis(stacked, index, axis=0), shape)


def _stacked_choices(choices: Any, a_shape: tuple) -> Any:
    """The choices promoted to one dtype, broadcast with ``a`` and stacked on axis 0."""
    if isinstance(choices, (list, tuple)):
        if not choices:
            raise InvalidArgumentError("funcdiff.numpy.choose needs at least one choice, but "
                                       "choices is empty; pass a non-empty sequence of arrays.")
        items = _util.promote("choose", *[c if type(c) in (bool, int, float)
                                          else _util.asarray(c, "choose") for c in choices])
        shape = broadcast_shapes("choose", a_shape, *[get_aval(c).shape for c in items])
        return fnp.stack([fnp.broadcast_to(c, shape) for c in items])
    stacked = _util.asarray(choices, "choose")
    cshape = get_aval(stacked).shape
    if not cshape or cshape[0] == 0:
        raise InvalidArgumentError(f"funcdiff.numpy.choose needs at least one choice, but "
                                   f"choices has shape {cshape}; pass a sequence of arrays or "
                                   "an array whose first axis enumerates them.")
    shape = broadcast_shapes("choose", a_shape, cshape[1:])
    # each choice broadcasts against a on its own: a choice of lower rank gains
    # its new axes after the choices' axis, not before it
    stacked = fnp.reshape(stacked, (cshape[0],) + (1,) * (len(shape) - len(cshape) + 1)
                          + cshape[1:])
    return fnp.broadcast_to(stacked, (cshape[0],) + shape)


def _choice_index(a: Any, n: int, mode: str) -> Any:
    """``a`` as int64 mapped into ``[0, n)`` by ``mode``; 'raise' checks the concrete value
    (a numpy array then, so a static selector stays static under jit)."""
    if mode != "raise":
        a = _util.cast(a, _INDEX)
    if mode == "wrap":
        return fnp.mod(a, np.asarray(n, _INDEX))
    if mode == "clip":
        return fnp.clip(a, np.asarray(0, _INDEX), np.asarray(n - 1, _INDEX))
    value = _util.concrete_or_none(a, "choose")
    if value is None:
        raise ConcretizationError(
            f"choose in mode='raise' checks that every entry of a lies in [0, {n}), which "
            f"needs a's value, but got the abstract {get_aval(a).str_short()} (under jit, "
            "make_jaxpr or vmap). Pass mode='wrap' or mode='clip' to map entries into range "
            "instead, or make a a static argument.")
    value = value.astype(_INDEX)
    bad = (value < 0) | (value >= n)
    if bad.any():
        raise IndexOutOfBoundsError(
            f"funcdiff.numpy.choose: a has the entry {value[bad].flat[0]}, but there are {n} "
            f"choices, so entries must lie in [0, {n}). Pass mode='wrap' or mode='clip' to "
            "map entries into range.")
    return value


# ---------------------------------------------------------------------------
# compress and extract


def compress(condition: Any, a: Any, axis: Any = None, out: Any = None, *,
             size: int | None = None, fill_value: Any = 0) -> Any:
    """The slices of ``a`` along ``axis`` where ``condition`` is true (numpy.compress).

    ``axis=None`` works on the flattened ``a``. A condition shorter than the axis
    leaves the remaining slices out; a longer one may only have false entries
    beyond it. Differentiable in ``a`` (and in ``fill_value``).

    Args:
      condition: 1-D array; its nonzero entries select slices.
      a: the array to select from.
      axis: the axis along which to select (None: the flattened array).
      size: JAX's extension: keep exactly ``size`` slices (the first selected
        ones), so the shape is static and the function traces under jit and vmap.
      fill_value: with ``size``, the value of the missing slices (default 0).

    Raises:
      ConcretizationError: without ``size``, when ``condition`` has no concrete
        value (under jit, make_jaxpr or vmap).
      ShapeError: for a condition that is not 1-D.
      IndexOutOfBoundsError: for a true entry of the condition beyond the axis.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.compress(np.array([True, False, True]), np.array([[1., 2., 3.], [4., 5., 6.]]), axis=1)
    array([[1., 3.],
           [4., 6.]])
    >>> fnp.compress(np.array([0, 1, 1]), np.array([5., 6., 7.]), size=3, fill_value=-1.)
    array([ 6.,  7., -1.])
    """
    _util.reject("compress", out=out)
    return _compress("compress", condition, a, axis, size, fill_value)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of ``arr`` where ``condition`` is nonzero, both flattened (numpy.extract).

    ``size``/``fill_value`` as for ``compress``; differentiable in ``arr``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.extract(np.array([[1, 0], [0, 1]]), np.array([[1., 2.], [3., 4.]]))
    array([1., 4.])
    """
    condition = _util.asarray(condition, "extract")
    # a concrete condition is static data: ravelled by numpy, it stays concrete under jit
    condition = fnp.ravel(condition) if isinstance(condition, Tracer) else np.ravel(condition)
    return _compress("extract", condition, fnp.ravel(_util.asarray(arr, "extract")), 0, size,
                     fill_value)


def _compress(name: str, condition: Any, a: Any, axis: Any, size: Any, fill_value: Any) -> Any:
    a = _util.asarray(a, name)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    shape = get_aval(a).shape
    if not shape:
        raise AxisError(f"funcdiff.numpy.{name}: axis {axis} is out of range for a 0-d array; "
                        "pass axis=None to select from the flattened array.")
    axis = _util.normalize_axis(axis, len(shape), name)
    condition = _util.asarray(condition, name)
    if len(get_aval(condition).shape) != 1:
        raise ShapeError(f"funcdiff.numpy.{name} needs a 1-D condition, but got "
                         f"{get_aval(condition).str_short()}; ravel it or use fnp.where.")
    if size is not None:
        size = _util.static_count(size, name, "size", "the number of results")
    n = shape[axis]
    value = _util.concrete_or_none(condition, name)
    if value is not None:
        mask = value != 0
        if mask[n:].any():
            raise IndexOutOfBoundsError(
                f"funcdiff.numpy.{name}: the condition has a true entry at index "
                f"{n + int(np.flatnonzero(mask[n:])[0])}, beyond the axis of length {n}; "
                "shorten the condition to the axis.")
        found = np.flatnonzero(mask[:n]).astype(_INDEX)
        if size is None:
            return fnp.take(a, found, axis=axis)
        positions = np.zeros(size, _INDEX)
        positions[:min(size, found.size)] = found[:size]
        valid = np.arange(size) < found.size
    elif size is None:
        raise ConcretizationError(
            f"{name} returns as many slices as the condition has true entries, so it needs a "
            f"concrete condition, but got the abstract {get_aval(condition).str_short()} "
            "(under jit, make_jaxpr or vmap). Pass size= (and fill_value=) to fix the number "
            "of results, or keep shapes static with fnp.where(mask, x, fill).")
    else:  # abstract: a condition longer than the axis is cut (its tail cannot be checked)
        mask = fnp.not_equal(condition, 0)
        m = get_aval(mask).shape[0]
        mask = mask[:n] if m >= n else fnp.concatenate([mask, np.zeros(n - m, bool)])
        positions, valid = first_positions(mask, size) if n else (
            np.zeros(size, _INDEX), np.zeros(size, bool))
    fill = _util.cast(_util.asarray(fill_value, name), get_aval(a).dtype)
    out_shape = shape[:axis] + (size,) + shape[axis + 1:]
    if n == 0:
        return fnp.broadcast_to(fill, out_shape)
    values = fnp.take(a, positions, axis=axis)
    if isinstance(valid, np.ndarray) and valid.all():
        return values
    valid = fnp.reshape(valid, (1,) * axis + (size,) + (1,) * (len(shape) - axis - 1))
    return fnp.where(valid, values, fill)


# ---------------------------------------------------------------------------
# partition, argpartition, lexsort


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """``a`` partitioned around its ``kth`` element(s) along ``axis`` (numpy.partition).

    funcdiff returns the fully sorted array (ascending, stable, NaN last): a
    valid partition for every ``kth``, and the same on every platform. The
    derivative permutes the tangent like the values.

    Args:
      a: the array; ``axis=None`` partitions the flattened array.
      kth: a static int or sequence of ints in ``[-n, n)`` for an axis of length ``n``.

    Raises:
      IndexOutOfBoundsError: for a ``kth`` out of range.
      InvalidArgumentError: for a non-integer ``kth`` or a ``kind`` other than
        ``'introselect'``.
      ConcretizationError: for a traced ``kth`` (make it static).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.partition(np.array([3., 1., 2., 0.]), 2)
    array([0., 1., 2., 3.])
    """
    a = _partition_input("partition", a, kind, order)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    shape = get_aval(a).shape
    if not shape:
        raise AxisError("funcdiff.numpy.partition cannot partition a 0-d array along an axis; "
                        "pass axis=None or reshape it to 1-D.")
    axis = _util.normalize_axis(axis, len(shape), "partition")
    _check_kth("partition", kth, shape[axis])
    return fnp.sort(a, axis=axis)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> Any:
    """Indices that partition ``a`` around its ``kth`` element(s) (numpy.argpartition), int64.

    funcdiff returns the stable sorting order (``argsort``), a valid partition
    for every ``kth``; a 0-d ``a`` gives ``[0]`` as in numpy. Integer result, no
    derivative. Arguments and errors as for ``partition``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.argpartition(np.array([3., 1., 2., 0.]), 1)
    array([3, 1, 2, 0])
    """
    a = _partition_input("argpartition", a, kind, order)
    if axis is None or not get_aval(a).shape:
        if axis is not None:
            _util.normalize_axis(axis, 1, "argpartition")
        a, axis = fnp.ravel(a), 0
    shape = get_aval(a).shape
    axis = _util.normalize_axis(axis, len(shape), "argpartition")
    _check_kth("argpartition", kth, shape[axis])
    return fnp.argsort(a, axis=axis)


def _partition_input(name: str, a: Any, kind: str, order: Any) -> Any:
    _util.reject(name, order=order)
    if kind != "introselect":
        raise InvalidArgumentError(f"funcdiff.numpy.{name}: kind must be 'introselect' (numpy's "
                                   f"only selection algorithm), got {kind!r}")
    return _util.asarray(a, name)


def _check_kth(name: str, kth: Any, n: int) -> None:
    """Check ``kth`` as numpy does: static integers in ``[-n, n)``."""
    value = _util.concrete_or_none(kth, name)
    if value is None:
        raise ConcretizationError(
            f"{name} needs a static kth (an int or a sequence of ints), but got the abstract "
            f"{get_aval(kth).str_short()} (under jit, make_jaxpr or vmap). Pass kth as a "
            "Python int, or mark it static with jit's static_argnums.")
    if value.dtype == np.bool_ or value.dtype.kind not in "iu" or value.ndim > 1:
        raise InvalidArgumentError(f"funcdiff.numpy.{name}: kth must be an int or a 1-D "
                                   f"sequence of ints (not booleans), got {kth!r}")
    bad = (value < -n) | (value >= n)
    if bad.any():
        raise IndexOutOfBoundsError(f"funcdiff.numpy.{name}: kth={int(value[bad].flat[0])} is "
                                    f"out of bounds for an axis of length {n}; it must lie in "
                                    f"[{-n}, {n}).")


def lexsort(keys: Any, axis: Any = -1) -> Any:
    """Indices that sort by several keys, the LAST key most significant (numpy.lexsort).

    Stable: entries equal in every key keep their order; NaN sorts last. The
    result is int64 and carries no derivative.

    Args:
      keys: a non-empty sequence of arrays of one shape, or an array whose
        first axis enumerates the keys.
      axis: the axis to sort along (an int; numpy accepts no None).

    Raises:
      InvalidArgumentError: for no keys or ``axis=None``.
      ShapeError: for keys of different shapes.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> first, last = np.array([1, 2, 1, 2]), np.array([0, 0, 1, 1])
    >>> fnp.lexsort((first, last))
    array([0, 1, 2, 3])
    """
    if isinstance(keys, (list, tuple)):
        items = [_util.asarray(k, "lexsort") for k in keys]
    else:
        stacked = _util.asarray(keys, "lexsort")
        if not get_aval(stacked).shape:
            raise InvalidArgumentError("funcdiff.numpy.lexsort needs a sequence of keys, but got "
                                       "a 0-d array; pass a sequence of arrays.")
        items = [stacked[k] for k in range(get_aval(stacked).shape[0])]
    if not items:
        raise InvalidArgumentError("funcdiff.numpy.lexsort needs at least one key, but got an "
                                   "empty sequence.")
    shapes = [get_aval(k).shape for k in items]
    if any(s != shapes[0] for s in shapes):
        raise ShapeError(f"funcdiff.numpy.lexsort needs keys of one shape, but got shapes "
                         f"{shapes}; broadcast them first (fnp.broadcast_arrays).")
    if axis is None:
        raise InvalidArgumentError("funcdiff.numpy.lexsort sorts along one axis and accepts no "
                                   "axis=None (neither does numpy); ravel the keys first.")
    shape = shapes[0]
    if not shape:  # one 0-d entry: it is its own order
        return np.zeros((), _INDEX)
    axis = _util.normalize_axis(axis, len(shape), "lexsort")
    iota = elementwise.iota(_INDEX, shape, axis)
    keys_first = [gradient_control.stop_gradient(k) for k in reversed(items)]
    return sorting.sort_together(*keys_first, iota, dimension=axis,
                                 num_keys=len(items))[-1]


__all__ = ["choose", "compress", "extract", "partition", "argpartition", "lexsort"]
