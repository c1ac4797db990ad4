"""Membership, counting and binning: isin, bincount, digitize and histogram.

These functions ask, for every element, which of a set of values or bins it
falls into. ``isin`` compares each element with every test element (on
concrete values it is numpy's own sort-based ``isin``, as the boolean result
carries no derivative). ``digitize`` is ``searchsorted`` on the bin edges.
``bincount`` and ``histogram`` turn bin indices into counts with one
``scatter_add`` into ``length + 1`` slots, the last slot collecting the
elements that fall outside every bin, so the counts are linear (hence
differentiable) in the weights. How many bins ``bincount`` returns depends on
``max(x)``: as in JAX, ``length=`` fixes it and makes the function traceable
under jit and vmap; without it ``x`` needs a concrete value. ``histogram``'s
edges are ``linspace(min, max)`` of the data (or of ``range``), so they trace
and carry the derivative of the data's extremes; only the number of bins
must be static. ``_histograms`` bins in several dimensions with the same
helpers (``bin_count``, ``even_edges``, ``bin_index``, ``counts_into``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.errors import (ConcretizationError, DTypeError, InvalidArgumentError,
                             ShapeError, UnsupportedNumpyError)
from funcdiff.numpy import _util
from funcdiff.primitives import indexing

INDEX = np.dtype(np.int64)


def counts_into(indices: Any, weights: Any, length: int, dtype: np.dtype) -> Any:
    """``length`` sums of ``weights`` by bin index; an index equal to ``length`` marks
    an element in no bin (it lands in an extra slot that is cut off)."""
    slots = np.zeros(length + 1, dtype)
    return indexing.scatter_add(slots, indices, weights, axis=0)[:length]


# ---------------------------------------------------------------------------
# isin


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: str | None = None) -> Any:
    """Whether each element of ``element`` is in ``test_elements`` (numpy.isin).

    Args:
      element: an array of any shape; the result has its shape.
      test_elements: the values to look for (any shape; it is flattened).
      assume_unique: accepted for numpy compatibility; it changes nothing.
      invert: return ``not in`` instead of ``in``.
      kind: numpy's algorithm choice (None, "sort" or "table"); the result
        does not depend on it.

    Returns:
      A boolean array shaped like ``element``. NaN is in nothing (it equals
      no value). Traced inputs are compared with every test element
      (``O(element.size * test_elements.size)`` work and memory).

    Raises:
      InvalidArgumentError: for an unknown ``kind``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.isin(np.array([[1, 2], [3, 4]]), [2, 4])
    array([[False,  True],
           [False,  True]])
    """
    if kind not in (None, "sort", "table"):
        raise InvalidArgumentError(f"funcdiff.numpy.isin: kind must be None, 'sort' or "
                                   f"'table', got {kind!r}.")
    element = _util.asarray(element, "isin")
    test_elements = _util.asarray(test_elements, "isin")
    values = (_util.concrete_or_none(element, "isin"), _util.concrete_or_none(test_elements, "isin"))
    if values[0] is not None and values[1] is not None:
        return np.asarray(np.isin(values[0], values[1], invert=bool(invert)))
    element, tests = _util.promote("isin", element, fnp.ravel(test_elements))
    found = fnp.any(fnp.equal(fnp.expand_dims(element, -1), tests), axis=-1)
    return fnp.logical_not(found) if invert else found


# ---------------------------------------------------------------------------
# bincount


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None
             ) -> Any:
    """Count (or sum ``weights`` of) each non-negative integer value in ``x`` (numpy.bincount).

    Args:
      x: a 1-D array of non-negative integers (or booleans).
      weights: optional, shaped like ``x``: bin ``i`` holds the sum of the
        weights where ``x == i``. The counts are differentiable in them.
      minlength: the least number of bins.
      length: JAX's extension: exactly this many bins (values of ``x`` at or
        above it are dropped; ``minlength`` is then ignored). It makes the
        result's shape static, so bincount traces under jit and vmap.

    Returns:
      ``max(max(x) + 1, minlength)`` bins (or ``length``): int64 counts
      without weights; with them, sums in the weights' dtype when it is a
      float type (float32 stays float32, as in JAX) and float64 otherwise
      (as numpy does for integer weights).

    Raises:
      ConcretizationError: without ``length``, when ``x`` has no concrete
        value (under jit, make_jaxpr or vmap).
      DTypeError: for a non-integer ``x``.
      ShapeError: when ``x`` is not 1-D or ``weights`` is not shaped like it.
      InvalidArgumentError: for a negative value in a concrete ``x`` (under
        jit with ``length=`` negative values count in bin 0, as in JAX) or a
        negative ``minlength``/``length``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.bincount(np.array([0, 1, 1, 3]))
    array([1, 2, 0, 1])
    >>> fnp.bincount(np.array([0, 1, 1]), weights=np.array([0.5, 1., 2.]), length=4)
    array([0.5, 3. , 0. , 0. ])
    """
    x = _util.asarray(x, "bincount")
    if x.dtype.kind not in "biu":
        raise DTypeError(f"funcdiff.numpy.bincount counts integer values, but x is "
                         f"{x.dtype}. Convert it with x.astype(int) (or use histogram for "
                         "real values).")
    if x.ndim != 1:
        raise ShapeError(f"funcdiff.numpy.bincount needs a 1-D x, got shape {x.shape}; "
                         "flatten it with ravel() first.")
    minlength = _util.static_count(minlength, "bincount", "minlength",
                                   "the smallest number of bins")
    if length is not None:
        length = _util.static_count(length, "bincount", "length", "the number of bins")
    if weights is None:
        weights, dtype = np.ones(x.shape, INDEX), INDEX
    else:
        weights = _util.asarray(weights, "bincount")
        if weights.shape != x.shape:
            raise ShapeError(f"funcdiff.numpy.bincount needs weights shaped like x {x.shape}, "
                             f"got {weights.shape}.")
        dtype = weights.dtype if dtypes.is_float(weights.dtype) else dtypes.default_float
        weights = _util.cast(weights, dtype)
    value = _util.concrete_or_none(x, "bincount")
    if value is not None:
        if value.size and value.dtype.kind == "i" and value.min() < 0:
            raise InvalidArgumentError(
                f"funcdiff.numpy.bincount counts non-negative integers, but x holds "
                f"{value.min()}. Shift or mask the values first (e.g. x - x.min()).")
        if length is None:
            length = max(minlength, int(value.max()) + 1 if value.size else 0)
    elif length is None:
        raise ConcretizationError(
            f"bincount returns max(x) + 1 bins, so it needs a concrete x, but got the "
            f"abstract {x.aval.str_short()} (under jit, make_jaxpr or vmap). Pass length= "
            "to fix the number of bins (larger values are then dropped).")
    indices = fnp.clip(_util.cast(x, INDEX), 0, None)  # negatives count in bin 0 (JAX)
    indices = fnp.where(fnp.less(indices, length), indices, length)
    return counts_into(indices, weights, length, dtype)


# ---------------------------------------------------------------------------
# digitize


def _monotonic(name: str, edges: np.ndarray, what: str) -> int:
    """+1 for non-decreasing concrete edges, -1 for decreasing ones, else an error."""
    # comparisons, not differences: np.diff of booleans is their xor, and of
    # unsigned integers wraps around
    if np.all(edges[1:] >= edges[:-1]):
        return 1
    if np.all(edges[1:] <= edges[:-1]):
        return -1
    raise InvalidArgumentError(f"funcdiff.numpy.{name} needs {what} that increase or decrease "
                               f"monotonically, got {edges!r:.80}. Sort them first.")


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """The index of the bin each element of ``x`` falls into (numpy.digitize).

    For increasing ``bins`` the result ``i`` satisfies
    ``bins[i-1] <= x < bins[i]`` (``bins[i-1] < x <= bins[i]`` with
    ``right=True``); 0 and ``len(bins)`` mean below and above all bins.
    Decreasing ``bins`` are handled as numpy does. The result is int64 and
    carries no derivative; it traces (through ``searchsorted``), and with
    abstract ``bins`` their direction is read from their end points, as in
    JAX.

    Raises:
      ShapeError: when ``bins`` is not 1-D.
      InvalidArgumentError: for concrete ``bins`` that are not monotonic.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.digitize(np.array([0.2, 1.0, 6.4]), np.array([0.0, 1.0, 2.5, 4.0]))
    array([1, 2, 4])
    """
    x = _util.asarray(x, "digitize")
    bins = _util.asarray(bins, "digitize")
    if bins.ndim != 1:
        raise ShapeError(f"funcdiff.numpy.digitize needs 1-D bins, got shape {bins.shape}.")
    side = "left" if right else "right"
    n = bins.shape[0]
    edges = _util.concrete_or_none(bins, "digitize")
    if edges is not None and _monotonic("digitize", edges, "bins") > 0:
        return fnp.searchsorted(bins, x, side=side)
    down = fnp.subtract(n, fnp.searchsorted(fnp.flip(bins), x, side=side))
    if edges is not None or n == 0:
        return down
    up = fnp.searchsorted(bins, x, side=side)
    return fnp.where(fnp.greater_equal(bins[-1], bins[0]), up, down)


# ---------------------------------------------------------------------------
# histogram


def _range_edges(name: str, a: Any, range_: Any) -> tuple[Any, Any]:
    """The first and last edge: ``range`` or the data's extremes, widened by 0.5
    each way when they coincide (as numpy does)."""
    if range_ is None:
        if a.shape[0] == 0:
            return np.asarray(0.0), np.asarray(1.0)
        first, last, what = fnp.min(a), fnp.max(a), "autodetected"
    else:
        try:
            first, last = range_
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"funcdiff.numpy.{name} needs range=(min, max), got "
                                       f"{range_!r}.") from None
        what = "supplied"
    values = (_util.concrete_or_none(first, name), _util.concrete_or_none(last, name))
    if values[0] is not None and values[1] is not None:
        if range_ is not None and values[0] > values[1]:
            raise InvalidArgumentError(f"funcdiff.numpy.{name} needs range=(min, max) with "
                                       f"min <= max, got {range_!r}.")
        if not (np.isfinite(values[0]) and np.isfinite(values[1])):
            raise InvalidArgumentError(
                f"funcdiff.numpy.{name}: the {what} range [{values[0]}, {values[1]}] is not "
                "finite. Remove NaN/inf from the data or pass a finite range=.")
    same = fnp.equal(first, last)
    return fnp.where(same, fnp.subtract(first, 0.5), first), \
        fnp.where(same, fnp.add(last, 0.5), last)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> Any:
    """The bin edges ``histogram`` uses (numpy.histogram_bin_edges).

    An int ``bins`` (static) gives ``bins + 1`` evenly spaced edges over
    ``range`` or over the data's extremes; they are differentiable in both.
    An array ``bins`` is returned as the edges. ``weights`` is unused, as in
    numpy. Named rules such as ``"auto"`` are not supported.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.histogram_bin_edges(np.array([1., 2., 5.]), bins=4)
    array([1., 2., 3., 4., 5.])
    """
    name = "histogram_bin_edges"
    a = fnp.ravel(_util.asarray(a, name))
    if isinstance(bins, str):
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.{name} does not support bins={bins!r}; pass a number of bins or "
            "the edges (numpy.histogram_bin_edges computes them from concrete data).")
    bins = _util.asarray(bins, name)
    if bins.ndim == 1:
        check_increasing(name, bins, "bins edges")
        return bins
    count = bin_count(name, bins, "bins")
    dtype = dtypes.result_type(a, 0.0, 0.0)  # range values are weak, as in numpy
    dtype = dtype if dtypes.is_float(dtype) else dtypes.default_float
    return even_edges(name, a, count, range, dtype)


def check_increasing(name: str, edges: Any, what: str) -> None:
    """An error for concrete ``edges`` that decrease somewhere."""
    values = _util.concrete_or_none(edges, name)
    if values is not None and np.any(values[:-1] > values[1:]):
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs {what} that increase "
                                   f"monotonically, got {values!r:.80}.")


def bin_count(name: str, bins: Any, what: str) -> int:
    """A 0-d integer ``bins`` as a positive Python int (it fixes the result's shape)."""
    if bins.ndim != 0 or bins.dtype.kind not in "iu":
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs {what} to be an int or 1-D "
                                   f"edges, got {bins!r:.80}.")
    count = _util.concrete_or_none(bins, name)
    if count is None:
        raise ConcretizationError(
            f"funcdiff.numpy.{name}: the number of bins fixes the result's shape, so it must be "
            f"concrete, but got the abstract {bins.aval.str_short()} (under jit, make_jaxpr or "
            "vmap). Pass it as a Python int (static_argnums= under jit), or pass the edges as "
            "an array, which may be traced.")
    count = int(count)
    if count < 1:
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs a positive number of bins, "
                                   f"got {count}.")
    return count


def even_edges(name: str, a: Any, count: int, range_: Any, dtype: np.dtype) -> Any:
    """``count + 1`` evenly spaced edges over ``range_`` or the extremes of ``a``."""
    first, last = _range_edges(name, a, range_)
    f64 = dtypes.default_float  # numpy spaces the edges in float64, then casts
    edges = fnp.linspace(_util.cast(first, f64), _util.cast(last, f64), count + 1)
    return _util.cast(edges, dtype)


def bin_index(name: str, data: Any, edges: Any) -> tuple[Any, Any]:
    """The bin of each element of ``data`` between increasing ``edges``, and whether
    it is in one: bin ``i`` holds ``edges[i] <= x < edges[i+1]``, the last bin
    also its right edge. Needs at least two edges."""
    n_bins = edges.shape[0] - 1
    data, bounds = _util.promote(name, data, edges)
    index = fnp.subtract(fnp.searchsorted(bounds, data, side="right"), 1)
    index = fnp.where(fnp.equal(data, bounds[-1]), n_bins - 1, index)  # last bin is closed
    inside = fnp.logical_and(fnp.greater_equal(data, bounds[0]),
                             fnp.less_equal(data, bounds[-1]))
    return index, inside


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
              density: bool = False) -> tuple[Any, Any]:
    """The histogram of the flattened ``a`` (numpy.histogram).

    Bin ``i`` counts ``edges[i] <= a < edges[i+1]``; the last bin also
    includes its right edge, and values outside the edges are dropped.

    Args:
      a: the data (flattened).
      bins: a static int (evenly spaced bins over ``range``, default the
        data's min and max) or 1-D increasing edges (which may be traced).
      range: (min, max) of the evenly spaced bins.
      weights: optional, shaped like ``a``: sum them instead of counting.
        The histogram is differentiable in them.
      density: divide by the bin widths and the total so the histogram
        integrates to 1.

    Returns:
      ``(hist, edges)``. ``hist`` is int64 counts, or the weights' dtype
      (booleans summed as int64), or with ``density`` a float in the edges'
      (and float weights') dtype: float32 data gives float32, where numpy
      always returns float64.

    Raises:
      ConcretizationError: when an int ``bins`` is abstract.
      InvalidArgumentError: for bad ``bins``, ``range`` or non-finite
        concrete extremes; ShapeError for ``weights`` not shaped like ``a``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.histogram(np.array([1., 2., 2., 5.]), bins=4)
    (array([1, 2, 0, 1]), array([1., 2., 3., 4., 5.]))
    """
    a = _util.asarray(a, "histogram")
    if weights is not None:
        weights = _util.asarray(weights, "histogram")
        if weights.shape != a.shape:
            raise ShapeError(f"funcdiff.numpy.histogram needs weights shaped like a {a.shape}, "
                             f"got {weights.shape}.")
        weights = fnp.ravel(weights)
    a = fnp.ravel(a)
    edges = histogram_bin_edges(a, bins, range)
    n_bins = max(edges.shape[0] - 1, 0)
    if weights is None:
        weights, dtype = np.ones(a.shape, INDEX), INDEX
    else:
        dtype = INDEX if weights.dtype.kind == "b" else weights.dtype
        weights = _util.cast(weights, dtype)
    if n_bins == 0:
        hist = np.zeros(0, dtype)
    else:
        index, inside = bin_index("histogram", a, edges)
        hist = counts_into(fnp.where(inside, index, n_bins), weights, n_bins, dtype)
    if not density:
        return hist, edges
    float_dtype = dtypes.result_type(edges, weights) if dtypes.is_float(dtype) else edges.dtype
    float_dtype = float_dtype if dtypes.is_float(float_dtype) else dtypes.default_float
    hist = _util.cast(hist, float_dtype)
    widths = _util.cast(fnp.diff(edges), float_dtype)
    return fnp.divide(fnp.divide(hist, widths), fnp.sum(hist)), edges


__all__ = ["isin", "bincount", "digitize", "histogram", "histogram_bin_edges"]
