"""Set routines of two arrays: union1d, intersect1d, setdiff1d and setxor1d.

Each flattens its inputs and returns sorted values that are a selection of
the input elements, so the values are a gather of the inputs and carry their
derivative (to the first occurrence of each value); indices are int64 and
carry none. NaN follows numpy 2: the NaNs of one input are one value that
equals no other value, so NaN is in no intersection, survives setdiff1d and
may appear twice in setxor1d. A Python scalar input is weak, as in numpy 2
generally: it takes the other input's dtype (numpy 2.4 itself makes it strong
in intersect1d and setxor1d).

How many values there are depends on the data. On concrete inputs (plain
arrays, or tracers with a value, as under grad) numpy decides which elements
are selected and funcdiff gathers them. Abstract inputs (jit, make_jaxpr,
vmap) need JAX's ``size=``: exactly ``size`` results, the first ones, padded
with ``fill_value`` (default: the first, i.e. smallest, value of the result,
or 0 when the result is empty) or cut short. That form is built from
primitives: one stable argsort of the concatenated inputs groups equal
values, counts per group say which inputs a value occurs in, and the first
``size`` selected positions are gathered, so it traces, compiles and
batches. The helpers here (argument checks, padding, the gather) also serve
``_unique_api``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.primitives import indexing

_INDEX = np.dtype(np.int64)


# ---------------------------------------------------------------------------
# Arguments, and results gathered from positions into the flattened input


def check_size(name: str, size: Any, fill_value: Any) -> int | None:
    """``size`` as a Python int (None when absent); ``fill_value`` needs it."""
    if size is None and fill_value is not None:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name}: fill_value= pads a result of fixed size, so it needs "
            "size= as well; pass size= or drop fill_value=.")
    return None if size is None else _util.static_count(size, name, "size",
                                                         "the number of results")


def concrete_inputs(name: str, size: int | None, *arrays: Any) -> list[np.ndarray] | None:
    """The values of ``arrays``; None when one is abstract and ``size`` makes the
    values unneeded, else a ConcretizationError that suggests ``size=``."""
    values = [_util.concrete_or_none(a, name) for a in arrays]
    if all(v is not None for v in values):
        return values
    if size is None:
        aval = next(a for a, v in zip(arrays, values) if v is None).aval.str_short()
        raise ConcretizationError(
            f"funcdiff.numpy.{name} returns as many values as its data holds, so it needs "
            f"concrete inputs, but got the abstract {aval} (under jit, make_jaxpr or vmap). "
            "Pass size= (and fill_value=) to fix the number of results.")
    return None


def _fill(name: str, fill_value: Any, dtype: np.dtype) -> Any:
    """``fill_value`` as a 0-d value of ``dtype``."""
    if not isinstance(fill_value, Tracer):
        fill_value = np.asarray(fill_value)
    if fill_value.shape != () or fill_value.dtype.kind not in "biuf":
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name}: fill_value= must be a real scalar, which is cast to the "
            f"result's dtype {dtype}, but got {fill_value!r:.60}.")
    return _util.cast(fill_value, dtype)


def pad_indices(array: np.ndarray, size: int | None, fill: int) -> np.ndarray:
    """The concrete int ``array`` as int64, cut or padded with ``fill`` to ``size``."""
    if size is None:
        return array.astype(_INDEX)
    out = np.full(size, fill, _INDEX)
    out[:min(size, array.size)] = array[:size]
    return out


def padded_positions(positions: np.ndarray, size: int | None
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """Concrete ``positions`` cut or padded to ``size`` (with 0, a safe index), and
    which of them are real (None without ``size``)."""
    valid = None if size is None else np.arange(size) < positions.size
    return pad_indices(positions, size, 0), valid


def no_positions(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and validity of ``size`` slots with no result (empty inputs)."""
    return np.zeros(size, _INDEX), np.zeros(size, bool)


def gather_values(name: str, source: Any, positions: Any, valid: Any, fill_value: Any) -> Any:
    """``source[positions]``; with ``valid`` (from ``size=``) the entries that are
    not real become ``fill_value`` (default: the first value, or 0 if there is none)."""
    dtype = source.dtype
    if source.shape[0] == 0:
        values = np.zeros(positions.shape, dtype)
    else:
        values = indexing.gather(source, positions, axis=0)
    if valid is None:
        return values
    fill = None if fill_value is None else _fill(name, fill_value, dtype)
    if valid.shape[0] == 0:
        return values
    if fill is None:
        fill = fnp.where(valid[0], values[0], np.zeros((), dtype))
    return fnp.where(valid, values, fill)


def _promoted(name: str, ar1: Any, ar2: Any) -> tuple[Any, Any, Any]:
    """Both inputs flattened, and their concatenation in the promoted dtype."""
    a1, a2 = _flat(ar1, name), _flat(ar2, name)
    # a Python scalar input is weak, as in numpy 2: it takes the other's dtype
    dtype = dtypes.result_type(*[x if type(x) in (bool, int, float) else a
                                 for x, a in ((ar1, a1), (ar2, a2))])
    return a1, a2, fnp.concatenate([_util.cast(a1, dtype), _util.cast(a2, dtype)])


def _flat(x: Any, name: str) -> Any:
    return fnp.ravel(_util.asarray(x, name))


# ---------------------------------------------------------------------------
# The traced forms: sort once, then mark the positions that make the result


def sort_stably(source: Any) -> tuple[Any, Any]:
    """The stable sort order of the 1-d ``source`` and its sorted values."""
    order = fnp.argsort(source, kind="stable")
    return order, fnp.take(source, order)


def run_starts(ordered: Any, equal_nan: bool) -> Any:
    """Where each run of equal values of the sorted ``ordered`` begins; NaNs are one
    run with ``equal_nan``, else each NaN is its own."""
    later, earlier = ordered[1:], ordered[:-1]
    differ = fnp.not_equal(later, earlier)
    if equal_nan and ordered.dtype.kind == "f":
        differ = fnp.logical_and(differ, fnp.logical_not(
            fnp.logical_and(fnp.isnan(later), fnp.isnan(earlier))))
    return fnp.concatenate([np.ones(1, bool), differ])


def _select(keep: Any, size: int) -> tuple[Any, Any]:
    """The first ``size`` positions where ``keep`` holds (0 past the end) and which
    of them are real."""
    count = fnp.sum(keep.astype(_INDEX))
    return fnp.flatnonzero(keep, size=size), fnp.less(np.arange(size, dtype=_INDEX), count)


class _Groups(NamedTuple):
    """The concatenation of two inputs sorted stably and cut into groups of equal
    values (NaNs one group); within a group ar1's elements come first."""
    order: Any  # the sort order
    ordered: Any  # the sorted values
    second: Any  # whether each sorted element comes from ar2
    starts: Any  # where each group begins
    group: Any  # each sorted element's group number
    in_first: Any  # how many elements of ar1 its group holds
    in_second: Any  # whether its group holds an element of ar2
    nan: Any  # whether it is NaN


def _groups(source: Any, n1: int) -> _Groups:
    n = source.shape[0]
    order, ordered = sort_stably(source)
    second = fnp.greater_equal(order, n1)
    starts = run_starts(ordered, equal_nan=True)
    group = fnp.cumsum(starts.astype(_INDEX)) - 1
    in_first = fnp.take(fnp.bincount(group, fnp.logical_not(second), length=n), group)
    in_second = fnp.greater(fnp.take(fnp.bincount(group, second, length=n), group), 0)
    nan = fnp.isnan(ordered) if ordered.dtype.kind == "f" else np.zeros(n, bool)
    return _Groups(order, ordered, second, starts, group, in_first.astype(_INDEX), in_second,
                   nan)


# ---------------------------------------------------------------------------
# union1d, intersect1d, setdiff1d, setxor1d


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values found in ``ar1`` or ``ar2`` (numpy.union1d).

    Args:
      ar1, ar2: arrays of any shape (flattened); the result has their
        promoted dtype and is differentiable in both (each value in its first
        occurrence, in ``ar1`` before ``ar2``). NaNs are one value.
      size, fill_value: JAX's fixed-size form (see the module docstring).

    Raises:
      ConcretizationError: without ``size`` when an input is abstract.
      InvalidArgumentError: for a negative ``size``, a ``fill_value`` that is
        not a real scalar, or ``fill_value`` without ``size``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.union1d(np.array([3, 1]), np.array([[2, 3]]))
    array([1, 2, 3])
    """
    size = check_size("union1d", size, fill_value)
    a1, a2, source = _promoted("union1d", ar1, ar2)
    values = concrete_inputs("union1d", size, a1, a2)
    if values is not None:
        every = np.concatenate(values).astype(source.dtype)
        positions, valid = padded_positions(np.unique(every, return_index=True)[1], size)
    elif source.shape[0] == 0:
        positions, valid = no_positions(size)
    else:
        order, ordered = sort_stably(source)
        first, valid = _select(run_starts(ordered, equal_nan=True), size)
        positions = fnp.take(order, first)
    return gather_values("union1d", source, positions, valid, fill_value)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values found in both ``ar1`` and ``ar2`` (numpy.intersect1d).

    Args:
      ar1, ar2: arrays of any shape (flattened); the result has their
        promoted dtype and carries the derivative of ``ar1`` (its first
        occurrence of each value). NaN is in no intersection.
      assume_unique: numpy's promise that neither input repeats a value;
        the traced form gives the same result either way.
      return_indices: also return the flat index of each value's first
        occurrence in ``ar1`` and in ``ar2`` (int64).
      size, fill_value: JAX's fixed-size form (see the module docstring);
        padded indices are ``ar1.size`` and ``ar2.size`` (out of bounds).

    Returns:
      The values, or ``(values, ar1_indices, ar2_indices)``.

    Raises:
      ConcretizationError: without ``size`` when an input is abstract.
      InvalidArgumentError: for a negative ``size``, a ``fill_value`` that is
        not a real scalar, or ``fill_value`` without ``size``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.intersect1d(np.array([1., 3., 4., 3.]), np.array([3., 1., 2.]), return_indices=True)
    (array([1., 3.]), array([0, 1]), array([1, 0]))
    """
    size = check_size("intersect1d", size, fill_value)
    a1, a2, source = _promoted("intersect1d", ar1, ar2)
    n1, n2 = a1.shape[0], a2.shape[0]
    values = concrete_inputs("intersect1d", size, a1, a2)
    if values is not None:
        _, index1, index2 = np.intersect1d(*values, assume_unique=assume_unique,
                                           return_indices=True)
        positions, valid = padded_positions(index1, size)
        index1, index2 = pad_indices(index1, size, n1), pad_indices(index2, size, n2)
    elif n1 == 0 or n2 == 0:
        positions, valid = no_positions(size)
        index1, index2 = np.full(size, n1, _INDEX), np.full(size, n2, _INDEX)
    else:
        g = _groups(source, n1)
        # a group holding both inputs starts with ar1's first occurrence, and ar2's
        # first occurrence follows the group's elements of ar1
        both = fnp.logical_and(g.in_second, fnp.greater(g.in_first, 0))
        first, valid = _select(fnp.logical_and(fnp.logical_and(g.starts, both),
                                               fnp.logical_not(g.nan)), size)
        positions = fnp.take(g.order, first)
        later = fnp.minimum(first + fnp.take(g.in_first, first), n1 + n2 - 1)
        index1 = fnp.where(valid, positions, n1)
        index2 = fnp.where(valid, fnp.take(g.order, later) - n1, n2)
    result = gather_values("intersect1d", source, positions, valid, fill_value)
    return (result, index1, index2) if return_indices else result


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The unique values of ``ar1`` that are not in ``ar2`` (numpy.setdiff1d).

    Args:
      ar1, ar2: arrays of any shape (flattened); the result has ``ar1``'s
        dtype and carries its derivative. A NaN of ``ar1`` is kept (it equals
        nothing in ``ar2``).
      assume_unique: numpy's promise that neither input repeats a value; the
        result then keeps ``ar1``'s order instead of sorting.
      size, fill_value: JAX's fixed-size form (see the module docstring).

    Raises:
      ConcretizationError: without ``size`` when an input is abstract.
      InvalidArgumentError: for a negative ``size``, a ``fill_value`` that is
        not a real scalar, or ``fill_value`` without ``size``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.setdiff1d(np.array([5, 1, 2, 1]), np.array([2, 7]))
    array([1, 5])
    """
    size = check_size("setdiff1d", size, fill_value)
    a1, a2, source = _promoted("setdiff1d", ar1, ar2)
    n1 = a1.shape[0]
    values = concrete_inputs("setdiff1d", size, a1, a2)
    if values is not None:
        if assume_unique:
            positions = np.flatnonzero(np.isin(*values, invert=True))
        else:
            unique, index = np.unique(values[0], return_index=True)
            positions = index[np.isin(unique, values[1], invert=True)]
        positions, valid = padded_positions(positions, size)
    elif n1 == 0:
        positions, valid = no_positions(size)
    else:
        g = _groups(source, n1)
        absent = fnp.logical_or(fnp.logical_not(g.in_second), g.nan)  # NaN equals nothing
        kept = fnp.logical_and(fnp.logical_not(g.second), absent)
        if assume_unique:  # each kept element of ar1, in ar1's order
            positions, valid = _select(fnp.take(kept, fnp.argsort(g.order))[:n1], size)
        else:
            first, valid = _select(fnp.logical_and(g.starts, kept), size)
            positions = fnp.where(valid, fnp.take(g.order, first), 0)  # padding reads ar1[0]
    return gather_values("setdiff1d", a1, positions, valid, fill_value)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted unique values found in exactly one of ``ar1`` and ``ar2`` (numpy.setxor1d).

    Args:
      ar1, ar2: arrays of any shape (flattened); the result has their
        promoted dtype and is differentiable in both. A NaN of each input is
        kept (NaN equals nothing), so the result holds up to two NaNs.
      assume_unique: numpy's promise that neither input repeats a value (a
        value repeated within one input then counts as in both, as in numpy).
      size, fill_value: JAX's fixed-size form (see the module docstring).

    Raises:
      ConcretizationError: without ``size`` when an input is abstract.
      InvalidArgumentError: for a negative ``size``, a ``fill_value`` that is
        not a real scalar, or ``fill_value`` without ``size``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.setxor1d(np.array([1., 2., 3.]), np.array([3., 4.]))
    array([1., 2., 4.])
    """
    size = check_size("setxor1d", size, fill_value)
    a1, a2, source = _promoted("setxor1d", ar1, ar2)
    n1, n = a1.shape[0], source.shape[0]
    values = concrete_inputs("setxor1d", size, a1, a2)
    if values is not None:
        if assume_unique:
            candidates = np.arange(n)
        else:  # the first occurrence of each value in each input
            candidates = np.concatenate([np.unique(values[0], return_index=True)[1],
                                         n1 + np.unique(values[1], return_index=True)[1]])
        every = np.concatenate(values).astype(source.dtype)
        candidates = candidates[np.argsort(every[candidates], kind="stable")]
        ordered = every[candidates]
        lone = np.concatenate([[True], ordered[1:] != ordered[:-1], [True]])  # numpy's rule
        positions, valid = padded_positions(candidates[lone[1:] & lone[:-1]] if n else candidates,
                                            size)
    elif n == 0:
        positions, valid = no_positions(size)
    elif assume_unique:  # numpy's rule: keep a value equal to neither neighbour
        order, ordered = sort_stably(source)
        lone = fnp.concatenate([np.ones(1, bool), fnp.not_equal(ordered[1:], ordered[:-1]),
                                np.ones(1, bool)])
        first, valid = _select(fnp.logical_and(lone[1:], lone[:-1]), size)
        positions = fnp.take(order, first)
    else:
        g = _groups(source, n1)
        one_input = fnp.logical_not(fnp.logical_and(g.in_second, fnp.greater(g.in_first, 0)))
        keep = fnp.logical_and(fnp.logical_and(g.starts, one_input), fnp.logical_not(g.nan))
        # NaN equals nothing, so the first NaN of each input is kept
        switch = fnp.concatenate([np.ones(1, bool), fnp.not_equal(g.second[1:], g.second[:-1])])
        nan_first = fnp.logical_and(g.nan, fnp.logical_or(g.starts, switch))
        first, valid = _select(fnp.logical_or(keep, nan_first), size)
        positions = fnp.take(g.order, first)
    return gather_values("setxor1d", source, positions, valid, fill_value)


__all__ = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]
