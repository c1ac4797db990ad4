"""numpy 2's array-API unique functions: unique_values, unique_counts,
unique_inverse and unique_all.

They return numpy's named tuples (fields ``values``, ``indices``,
``inverse_indices``, ``counts``) of the flattened input. As in numpy 2 (its
``equal_nan=False``) every NaN is a value of its own; unlike numpy 2.3+,
whose ``unique_values`` may return any order, the values are always sorted.
The values are a gather of the input and carry its derivative; indices,
inverse indices and counts are int64. As for the set routines of ``_sets``
(whose helpers these share), concrete inputs are read by numpy, and
abstract ones (jit, make_jaxpr, vmap) need ``size=``: one stable argsort
then marks where each run of equal values starts, its first position is the
index of the first occurrence, the runs' lengths are the counts, and the
run number of each element, put back in input order, is its inverse index.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.numpy import _util
from funcdiff.numpy._sets import (check_size, concrete_inputs, gather_values, no_positions,
                                  pad_indices, padded_positions, run_starts, sort_stably)

_INDEX = np.dtype(np.int64)


class UniqueAllResult(NamedTuple):
    """What unique_all returns (numpy's fields)."""
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """What unique_counts returns (numpy's fields)."""
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """What unique_inverse returns (numpy's fields)."""
    values: Any
    inverse_indices: Any


def _unique(name: str, x: Any, size: Any, fill_value: Any) -> UniqueAllResult:
    """Every output of unique_all; each public function returns some of them."""
    x = _util.asarray(x, name)
    size = check_size(name, size, fill_value)
    flat = fnp.ravel(x)
    n = flat.shape[0]
    value = concrete_inputs(name, size, x)
    if value is not None:
        _, index, inverse, counts = np.unique(value[0], return_index=True, return_inverse=True,
                                              return_counts=True, equal_nan=False)
        positions, valid = padded_positions(index, size)
        indices = pad_indices(index, size, index[0] if n else 0)
        counts, inverse = pad_indices(counts, size, 0), inverse.astype(_INDEX)
    elif n == 0:
        (positions, valid), inverse = no_positions(size), np.zeros(x.shape, _INDEX)
        indices = counts = positions
    else:
        order, ordered = sort_stably(flat)
        starts = run_starts(ordered, equal_nan=False)
        ends = fnp.flatnonzero(starts, size=size + 1, fill_value=n)  # the runs' bounds
        valid = fnp.less(np.arange(size), fnp.sum(starts.astype(_INDEX)))
        indices = positions = fnp.take(order, fnp.where(valid, ends[:size], 0))
        counts = fnp.diff(ends)
        run = fnp.cumsum(starts.astype(_INDEX)) - 1
        inverse = fnp.reshape(fnp.take(run, fnp.argsort(order)), x.shape)
    values = gather_values(name, flat, positions, valid, fill_value)
    return UniqueAllResult(values, indices, inverse, counts)


def unique_values(x: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of ``x`` flattened (numpy.unique_values).

    Args:
      x: an array of any shape.
      size: JAX's extension: exactly ``size`` values (see the module
        docstring), so the function traces under jit and vmap.
      fill_value: with ``size``, the scalar that pads, cast to ``x``'s dtype
        (default: the smallest value, or 0 for an empty ``x``).

    Returns:
      A 1-d array of ``x``'s dtype, differentiable in ``x``. Every NaN is a
      value of its own, as in numpy 2; the values are always sorted (numpy
      2.3+ may return them in any order).

    Raises:
      ConcretizationError: without ``size`` when ``x`` is abstract.
      InvalidArgumentError: for a negative ``size``, a ``fill_value`` that is
        not a real scalar, or ``fill_value`` without ``size``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unique_values(np.array([[3., 1.], [3., 2.]]))
    array([1., 2., 3.])
    >>> fnp.unique_values(np.array([3., 1., 3.]), size=4, fill_value=-1.0)
    array([ 1.,  3., -1., -1.])
    """
    return _unique("unique_values", x, size, fill_value).values


def unique_counts(x: Any, *, size: int | None = None, fill_value: Any = None
                  ) -> UniqueCountsResult:
    """The sorted unique values of ``x`` and how often each occurs (numpy.unique_counts).

    Args:
      x, size, fill_value: as for ``unique_values``.

    Returns:
      ``UniqueCountsResult(values, counts)``: the values as ``unique_values``
      returns them and int64 counts (0 where ``size`` pads).

    Raises:
      The errors of ``unique_values``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unique_counts(np.array([3, 1, 3]))
    UniqueCountsResult(values=array([1, 3]), counts=array([1, 2]))
    """
    result = _unique("unique_counts", x, size, fill_value)
    return UniqueCountsResult(result.values, result.counts)


def unique_inverse(x: Any, *, size: int | None = None, fill_value: Any = None
                   ) -> UniqueInverseResult:
    """The sorted unique values of ``x`` and each element's index among them (numpy.unique_inverse).

    ``values[inverse_indices]`` equals ``x``.

    Args:
      x, size, fill_value: as for ``unique_values``.

    Returns:
      ``UniqueInverseResult(values, inverse_indices)``: the values as
      ``unique_values`` returns them and int64 indices shaped like ``x``
      (``size`` leaves them as they are, so below the number of values
      some index past the end).

    Raises:
      The errors of ``unique_values``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unique_inverse(np.array([3, 1, 3]))
    UniqueInverseResult(values=array([1, 3]), inverse_indices=array([1, 0, 1]))
    """
    result = _unique("unique_inverse", x, size, fill_value)
    return UniqueInverseResult(result.values, result.inverse_indices)


def unique_all(x: Any, *, size: int | None = None, fill_value: Any = None) -> UniqueAllResult:
    """The sorted unique values of ``x`` with their indices, inverse and counts (numpy.unique_all).

    Args:
      x, size, fill_value: as for ``unique_values``.

    Returns:
      ``UniqueAllResult(values, indices, inverse_indices, counts)``: the
      values as ``unique_values`` returns them, the flat index of each one's
      first occurrence, ``inverse_indices`` as ``unique_inverse`` returns
      them and the counts (all int64). Where ``size`` pads, ``indices``
      repeat the first one (that of the smallest value) and counts are 0.

    Raises:
      The errors of ``unique_values``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.unique_all(np.array([3, 1, 3])).indices
    array([1, 0])
    """
    return _unique("unique_all", x, size, fill_value)


__all__ = ["unique_values", "unique_counts", "unique_inverse", "unique_all"]
