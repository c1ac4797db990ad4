"""Multidimensional histograms: numpy's histogramdd and histogram2d.

A sample of ``N`` points in ``D`` dimensions is binned one dimension at a
time with the machinery of ``histogram`` (``_counting``): evenly spaced edges
over ``range`` or the data's extremes (static bin counts), or given edges;
each coordinate's bin from ``searchsorted``. The ``D`` bin indices combine
into one flat index and one ``scatter_add`` of the weights counts every bin,
so the histogram is linear, hence differentiable, in the weights, and the
edges carry the derivative of the data's extremes, as in ``histogram``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._counting import (INDEX, bin_count, bin_index, check_increasing,
                                      counts_into, even_edges)


def _edges(name: str, column: Any, bins: Any, range_: Any, i: int) -> Any:
    """The edges of dimension ``i``: ``bins`` itself when it is 1-D edges, else
    ``bins + 1`` evenly spaced ones in numpy's dtype for them."""
    if isinstance(bins, str):
        raise UnsupportedNumpyError(f"funcdiff.numpy.{name} does not support bins={bins!r} "
                                    "(numpy does not either); pass numbers of bins or edges.")
    bins = _util.asarray(bins, name)
    if bins.ndim == 1:
        check_increasing(name, bins, f"bins[{i}] edges")
        return bins
    if bins.ndim != 0:
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs bins[{i}] to be an int or "
                                   f"1-D edges, got shape {bins.shape}.")
    count = bin_count(name, bins, f"bins[{i}]")
    if range_ is None:  # numpy spaces the edges between the data's extremes, in their type
        # (an empty column has none: numpy then uses the float64 range (0, 1))
        dtype = _util.dtype_of(column) if _util.shape_of(column)[0] else dtypes.default_float
    else:
        try:
            first, last = range_
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"funcdiff.numpy.{name} needs range[{i}]=(min, max), "
                                       f"got {range_!r}.") from None
        dtype = dtypes.result_type(first, last, 0.0)
    dtype = dtype if dtypes.is_float(dtype) else dtypes.default_float
    return even_edges(name, column, count, range_, dtype)


def _columns(name: str, sample: Any) -> list[Any]:
    """The ``D`` coordinate arrays of ``sample``: the columns of an ``(N, D)`` array,
    else the entries of a sequence of ``D`` arrays (or a 1-D array, ``D = 1``)."""
    if isinstance(sample, (np.ndarray, Tracer)) and sample.ndim == 2:
        return [sample[:, i] for i in range(sample.shape[1])]
    sample = _util.asarray(sample, name)
    if sample.ndim < 2:
        return [fnp.reshape(sample, (-1,))]
    if sample.ndim != 2:
        raise ShapeError(f"funcdiff.numpy.{name} needs the sample as an (N, D) array or a "
                         f"sequence of D 1-D arrays of N coordinates, but got shape "
                         f"{sample.shape}.")
    return [sample[i] for i in range(sample.shape[0])]


def _length(bins: Any) -> int | None:
    """``len(bins)`` for a sequence or an array of rank >= 1, else None (a count)."""
    if isinstance(bins, (list, tuple)):
        return len(bins)
    if isinstance(bins, (np.ndarray, Tracer)) and bins.ndim >= 1:
        return bins.shape[0]
    return None


def _per_dimension(name: str, bins: Any, count: int) -> list[Any]:
    """``bins`` as one entry per dimension: a sequence (or an array) of ``count``
    entries as it is, a single count repeated."""
    length = _length(bins)
    if length is None:
        return [bins] * count
    if length != count:
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs one bins entry per "
                                   f"dimension: {count}, got {length}. Pass an int, or one "
                                   "int or array of edges per dimension.")
    return [bins[i] for i in range(count)]


def _histogramdd(name: str, columns: list[Any], bins: Any, range_: Any, density: Any,
                 weights: Any) -> tuple[Any, list[Any]]:
    count = len(columns)
    length = columns[0].shape[0] if count else 0
    bins = _per_dimension(name, bins, count)
    if range_ is None:
        range_ = [None] * count
    elif len(range_) != count:
        raise InvalidArgumentError(f"funcdiff.numpy.{name} needs one range entry per "
                                   f"dimension: {count}, got {len(range_)}.")
    edges = [_edges(name, c, b, r, i) for i, (c, b, r) in enumerate(zip(columns, bins, range_))]
    n_bins = [max(e.shape[0] - 1, 0) for e in edges]
    if weights is None:
        weights, dtype = np.ones(length, dtypes.default_float), dtypes.default_float
    else:
        weights = _util.asarray(weights, name)
        if weights.shape != (length,):
            raise ShapeError(f"funcdiff.numpy.{name} needs one weight per point, shape "
                             f"({length},), got {weights.shape}.")
        dtype = weights.dtype if dtypes.is_float(weights.dtype) else dtypes.default_float
        weights = _util.cast(weights, dtype)
    total = math.prod(n_bins)
    if total == 0:
        hist = np.zeros(n_bins, dtype)
    else:
        flat, inside = np.zeros(length, INDEX), np.ones(length, bool)
        for column, e, n in zip(columns, edges, n_bins):
            index, within = bin_index(name, column, e)
            flat = fnp.add(fnp.multiply(flat, n), index)  # row-major, the last axis fastest
            inside = fnp.logical_and(inside, within)
        hist = fnp.reshape(counts_into(fnp.where(inside, flat, total), weights, total, dtype),
                           tuple(n_bins))
    if density:
        total_weight = fnp.sum(hist)
        for i, e in enumerate(edges):
            widths = fnp.reshape(fnp.diff(e), (-1,) + (1,) * (count - 1 - i))
            hist = fnp.divide(hist, widths)
        hist = fnp.divide(hist, total_weight)
    return hist, edges


def histogramdd(sample: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                density: Any = None, weights: Any = None) -> tuple[Any, list[Any]]:
    """The ``D``-dimensional histogram of ``N`` points (numpy.histogramdd).

    Along dimension ``d``, bin ``i`` holds ``edges[d][i] <= x < edges[d][i+1]``
    (the last bin also its right edge); points outside any dimension's edges
    are dropped.

    Args:
      sample: an ``(N, D)`` array of points, or a sequence of ``D`` arrays of
        ``N`` coordinates each (a 1-D array is ``D = 1``).
      bins: for every dimension, or one per dimension: a static int (evenly
        spaced bins over ``range`` or the data's min and max) or 1-D
        increasing edges (which may be traced).
      range: one ``(min, max)`` (or None) per dimension, for int bins.
      density: divide by the bin volumes and the total so the histogram
        integrates to 1.
      weights: ``N`` weights to sum instead of counting; the histogram is
        differentiable in them.

    Returns:
      ``(hist, edges)``: ``hist`` of shape ``(n_0, ..., n_{D-1})``, float64 as
      in numpy, or the weights' float dtype (float32 weights stay float32,
      where numpy widens them); ``edges`` the list of ``D`` edge arrays.

    Raises:
      ConcretizationError: when an int bin count is abstract.
      InvalidArgumentError: for bins or range without one entry per
        dimension, a bad bin count or range, or edges that decrease.
      ShapeError: for a sample that is not ``(N, D)``, or weights not ``(N,)``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> points = np.array([[0., 0.], [1., 1.], [1., 0.5], [0.2, 1.]])
    >>> hist, edges = fnp.histogramdd(points, bins=2)
    >>> hist
    array([[1., 1.],
           [0., 2.]])
    """
    columns = _columns("histogramdd", sample)
    return _histogramdd("histogramdd", columns, bins, range, density, weights)


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                density: Any = None, weights: Any = None) -> tuple[Any, Any, Any]:
    """The two-dimensional histogram of the points ``(x[k], y[k])`` (numpy.histogram2d).

    ``hist[i, j]`` counts the points with ``x`` in bin ``i`` and ``y`` in bin
    ``j``; see ``histogramdd`` for the bins.

    Args:
      x, y: 1-D arrays of the same length.
      bins: an int (bins in both dimensions), ``[nx, ny]``, one array of
        edges for both, or ``[x_edges_or_count, y_edges_or_count]``.
      range: ``[[xmin, xmax], [ymin, ymax]]`` for int bins.
      density: normalise so the histogram integrates to 1.
      weights: one weight per point; differentiable.

    Returns:
      ``(hist, x_edges, y_edges)``, dtypes as for ``histogramdd``.

    Raises:
      ShapeError: for ``x`` and ``y`` that are not 1-D of one length; the
      errors of ``histogramdd`` otherwise.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> hist, xe, ye = fnp.histogram2d(np.array([0., 1., 1.]), np.array([0., 0., 1.]), bins=2)
    >>> hist
    array([[1., 0.],
           [1., 1.]])
    """
    x, y = _util.asarray(x, "histogram2d"), _util.asarray(y, "histogram2d")
    if x.ndim != 1 or x.shape != y.shape:
        raise ShapeError(f"funcdiff.numpy.histogram2d needs x and y as 1-D arrays of the "
                         f"same length, but got shapes {x.shape} and {y.shape}.")
    if _length(bins) not in (None, 1, 2):
        bins = [bins, bins]  # one array of edges for both dimensions
    hist, edges = _histogramdd("histogram2d", [x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


__all__ = ["histogram2d", "histogramdd"]
