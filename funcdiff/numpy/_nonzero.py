"""Where an array is nonzero: nonzero, argwhere and flatnonzero, and unique's ``size=``.

How many elements are nonzero decides the result's shape, so numpy's form of
these functions needs the array's value: it works outside transforms and
under grad, jvp and vjp (whose values are concrete), and raises a
``ConcretizationError`` under jit, make_jaxpr and vmap. As in JAX, ``size=``
makes the shape static: exactly ``size`` results, the first ones in row-major
order, padded with ``fill_value`` (or cut short). Those forms are built from
primitives (a stable argsort that moves the nonzero positions to the front,
then a select of the first ``size``), so they trace, compile and batch. The
indices are integers and carry no derivative; ``unique(..., size=k)`` gathers
its values from the sorted input, so they do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError, InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew

_INDEX = np.dtype(np.int64)


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple:
    """Indices of the nonzero elements, one int64 array per axis (numpy.nonzero).

    Args:
      a: an array of rank >= 1.
      size: JAX's extension: return exactly ``size`` indices per axis (the
        first nonzeros in row-major order), so the shape is static and the
        function traces under jit and vmap.
      fill_value: with ``size``, the index that pads missing entries: an int,
        or one per axis (default 0).

    Returns:
      A tuple of ``a.ndim`` int64 arrays.

    Raises:
      ConcretizationError: without ``size``, when ``a`` has no concrete value
        (under jit, make_jaxpr or vmap).
      ShapeError: for a 0-d ``a`` (numpy rejects it too).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.nonzero(np.array([[0., 2.], [3., 0.]]))
    (array([0, 1]), array([1, 0]))
    >>> fnp.nonzero(np.array([0., 5., 7.]), size=3, fill_value=-1)
    (array([ 1,  2, -1]),)
    """
    a = _util.asarray(a, "nonzero")
    shape = a.shape
    if not shape:
        raise ShapeError("funcdiff.numpy.nonzero needs an array of at least one dimension "
                         "(numpy rejects 0-d input too); use atleast_1d first.")
    fills = _fills(fill_value, len(shape))
    size = None if size is None else _util.static_count(size, "nonzero", "size",
                                                         "the number of results")
    value = _concrete(a, "nonzero", size)
    if value is not None:  # the indices from the value itself
        found = np.nonzero(value)
        if size is None:
            return tuple(i.astype(_INDEX) for i in found)
        return tuple(_pad(i.astype(_INDEX), size, f) for i, f in zip(found, fills))
    flat, valid = first_positions(fnp.ravel(fnp.not_equal(a, 0)), size)
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    return tuple(ew.select(valid, (flat // stride) % n, np.asarray(f, _INDEX))
                 for stride, n, f in zip(strides, shape, fills))


def flatnonzero(a: Any, *, size: int | None = None, fill_value: int = 0) -> Any:
    """Indices of the nonzero elements of ``a`` flattened (numpy.flatnonzero);
    ``size``/``fill_value`` as for ``nonzero``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.flatnonzero(np.array([[0., 2.], [3., 0.]]))
    array([1, 2])
    """
    return nonzero(fnp.ravel(_util.asarray(a, "flatnonzero")), size=size,
                   fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero elements as rows, shape ``(count, a.ndim)``
    (numpy.argwhere); ``size``/``fill_value`` as for ``nonzero``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.argwhere(np.array([[0., 2.], [3., 0.]]))
    array([[0, 1],
           [1, 0]])
    """
    a = _util.asarray(a, "argwhere")
    if not a.shape:  # numpy: one row per true 0-d value, with no columns
        a = fnp.reshape(a, (1,))
        return fnp.reshape(nonzero(a, size=size, fill_value=fill_value)[0], (-1, 0))
    return fnp.stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


def unique_sized(ar: Any, size: int, fill_value: Any, equal_nan: bool) -> Any:
    """``unique(ar, size=size)``: the first ``size`` sorted unique values of ``ar``
    (flattened), padded with ``fill_value`` (default: the smallest value). Traceable;
    the values are gathered from the sorted input and carry its derivative."""
    ordered = fnp.sort(fnp.ravel(ar))
    n = ordered.shape[0]
    if n == 0:
        raise ShapeError("funcdiff.numpy.unique with size= needs a non-empty array")
    # an element starts a new value where it differs from the one before it
    later, earlier = ordered[1:], ordered[:-1]
    new = fnp.not_equal(later, earlier)
    if equal_nan and ordered.dtype.kind == "f":
        new = fnp.logical_and(new, fnp.logical_not(
            fnp.logical_and(fnp.isnan(later), fnp.isnan(earlier))))
    first = fnp.concatenate([np.ones(1, bool), new])
    positions, valid = first_positions(first, size)
    values = fnp.take(ordered, fnp.clip(positions, 0, n - 1))
    fill = ordered[0] if fill_value is None else fnp.asarray(fill_value).astype(ordered.dtype)
    return fnp.where(valid, values, fill)


def first_positions(mask: Any, size: int) -> tuple[Any, Any]:
    """The positions of the first ``size`` true entries of the 1-d ``mask`` (in
    order), and which of the ``size`` slots hold one: a stable argsort of
    ``not mask`` brings the true positions to the front."""
    n = mask.shape[0]
    order = fnp.argsort(fnp.logical_not(mask).astype(np.int8), kind="stable")
    if size > n:
        order = fnp.concatenate([order, np.zeros(size - n, _INDEX)])
    count = fnp.sum(mask.astype(_INDEX))
    valid = fnp.less(np.arange(size, dtype=_INDEX), count)
    return order[:size].astype(_INDEX), valid


def _concrete(a: Any, name: str, size: int | None) -> np.ndarray | None:
    """The value of ``a``, or None where it has none and ``size`` makes it unneeded."""
    if not isinstance(a, Tracer):
        return np.asarray(a)
    try:
        return np.asarray(a.to_concrete(name))
    except ConcretizationError:
        if size is not None:
            return None
        raise ConcretizationError(
            f"{name} returns as many indices as there are nonzero elements, so it needs "
            f"a concrete value, but got the abstract {a.aval.str_short()} (under jit, "
            f"make_jaxpr or vmap). Pass size= (and fill_value=) to fix the number of "
            "results, or keep shapes static with fnp.where(mask, x, fill).") from None


def _fills(fill_value: Any, ndim: int) -> tuple[int, ...]:
    if fill_value is None:
        return (0,) * ndim
    fills = tuple(fill_value) if isinstance(fill_value, (tuple, list)) else (fill_value,) * ndim
    if len(fills) != ndim:
        raise InvalidArgumentError(f"fill_value needs one index per axis ({ndim}), got "
                                   f"{fill_value!r}")
    return tuple(int(f) for f in fills)


def _pad(indices: np.ndarray, size: int, fill: int) -> np.ndarray:
    out = np.full(size, fill, _INDEX)
    kept = indices[:size]
    out[:kept.size] = kept
    return out


__all__ = ["nonzero", "flatnonzero", "argwhere"]
