"""funcdiff.numpy.lib.stride_tricks: sliding_window_view, as numpy has it.

numpy returns a strided view; funcdiff has no views, so each windowed axis is
one gather (``fnp.take`` with the static index table ``start + offset``), which
traces, batches, compiles and differentiates (the transpose of a gather adds
each window's cotangent back into the positions it read). Values and shapes
are numpy's; the result is a new array, so writing into it is not possible
either (numpy's view is read-only by default).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
import funcdiff.numpy as fnp  # used at call time (this module is part of it)


def _windows(name: str, x: Any, window_shape: Any, axis: Any) -> list[tuple[int, int]]:
    """The (axis, window length) pairs, checked as numpy checks them."""
    ndim = fnp.ndim(x)
    shape = tuple(np.atleast_1d(window_shape)) if np.ndim(window_shape) else (window_shape,)
    if not all(isinstance(w, (int, np.integer)) for w in shape):
        raise InvalidArgumentError(f"{name} takes integer window lengths, got {window_shape!r}.")
    if axis is None:
        if len(shape) != ndim:
            raise ShapeError(
                f"{name} got window_shape={window_shape!r} with {len(shape)} entries for an "
                f"array of rank {ndim}; give one per axis, or say which axes with axis=.")
        axes = tuple(range(ndim))
    else:
        axes = tuple(np.atleast_1d(axis)) if np.ndim(axis) else (axis,)
        if len(axes) != len(shape):
            raise ShapeError(f"{name} got {len(shape)} window lengths for {len(axes)} axes; "
                             "give one length per axis.")
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise AxisError(f"{name} got axis {ax} for an array of rank {ndim}.")
    if any(w < 0 for w in shape):
        raise ShapeError(f"{name} got window_shape={window_shape!r}: lengths must be >= 0.")
    return [(int(ax) % ndim, int(w)) for ax, w in zip(axes, shape)]


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """All windows of ``window_shape`` sliding over ``x`` (numpy's sliding_window_view).

    Args:
      x: array_like or tracer.
      window_shape: an int, or one int per windowed axis.
      axis: the axes the windows slide along (repeats allowed); None means every axis,
        with one window length per axis.
      subok, writeable: accepted for numpy's signature; the result is always a new array
        (``writeable=True`` is refused, as a tracer cannot be written into).

    Returns:
      An array of shape ``x.shape`` with each windowed axis shortened to
      ``n - w + 1``, followed by the window's axes in the order given.

    Raises:
      ShapeError: for a window longer than its axis, or a mismatched count.
      AxisError: for an axis out of range.

    >>> import funcdiff as fd, numpy as np
    >>> from funcdiff.numpy.lib.stride_tricks import sliding_window_view
    >>> sliding_window_view(np.arange(5.), 3).sum(axis=-1)
    array([3., 6., 9.])
    >>> fd.grad(lambda x: sliding_window_view(x, 3).sum())(np.zeros(5))
    array([1., 2., 3., 2., 1.])
    """
    name = "funcdiff.numpy.lib.stride_tricks.sliding_window_view"
    if writeable:
        raise InvalidArgumentError(
            f"{name} got writeable=True; funcdiff's result is a new array, not a view into "
            "x, so writes could not reach x. Use x.at[...].set(...) to update x.")
    x = fnp.asarray(x)
    out = x
    for ax, w in _windows(name, x, window_shape, axis):
        n = fnp.shape(out)[ax]
        if w > n:
            raise ShapeError(f"{name}: the window of length {w} is longer than axis {ax} "
                             f"(of length {n}).")
        index = np.arange(n - w + 1)[:, None] + np.arange(w)[None, :]
        out = fnp.moveaxis(fnp.take(out, index, axis=ax), ax + 1, -1)
    return out


__all__ = ["sliding_window_view"]


def __dir__() -> list[str]:  # dir() shows the public names only
    return sorted(__all__)
