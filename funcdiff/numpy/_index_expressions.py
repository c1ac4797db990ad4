"""``r_`` and ``c_``: numpy's index expressions that concatenate, on funcdiff arrays.

``fnp.r_[a, b, 1:4]`` joins its items along the first axis and ``fnp.c_[a, b]``
along the last, as numpy's objects do: a slice ``start:stop:step`` is an
``arange`` (a ``linspace`` when the step is imaginary, ``0:1:5j``), a scalar is a
one-element array, and a leading string ``"axis,ndmin,trans1d"`` sets the axis,
the minimum rank and where 1-d items go. Items are joined with
``fnp.concatenate``, so traced items stay differentiable. numpy's own
``np.r_``/``np.c_`` convert their items with ``numpy.array`` and refuse tracers
(see docs/sharp-bits.md); the matrix directives ``"r"`` and ``"c"`` are not
supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.errors import InvalidArgumentError, UnsupportedNumpyError
import funcdiff.numpy as fnp  # used at call time (this module is part of it)


def _directive(name: str, item: str, settings: tuple) -> tuple:
    """(axis, ndmin, trans1d) from a leading string such as ``"0,2"`` or ``"-1"``."""
    if item in ("r", "c"):
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.{name}[{item!r}, ...] asks for a numpy.matrix, which funcdiff "
            "does not have. Drop the directive and reshape the joined array instead.")
    parts = item.split(",")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name} got the unknown directive {item!r}; the first item may be "
            "a string 'axis', 'axis,ndmin' or 'axis,ndmin,trans1d' of integers.") from None
    if len(numbers) > 3:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name} got the directive {item!r} with {len(numbers)} numbers; "
            "give at most three: 'axis,ndmin,trans1d'.")
    return tuple(numbers) + settings[len(numbers):]


def _place_axes(x: Any, item_ndim: int, ndmin: int, trans1d: int) -> Any:
    """Transpose an item raised to ``ndmin`` dimensions so its own axes start at
    ``trans1d`` (numpy's rule for where a low-rank item's axes go)."""
    if trans1d == -1 or item_ndim >= ndmin:
        return x
    k2, k1 = ndmin - item_ndim, trans1d
    if k1 < 0:
        k1 += k2 + 1
    axes = list(range(ndmin))
    return fnp.transpose(x, axes[:k1] + axes[k2:] + axes[k1:k2])


def _slice_item(item: slice, ndmin: int, trans1d: int) -> Any:
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if isinstance(step, (complex, np.complexfloating)):
        out = np.linspace(start, item.stop, num=int(abs(step)))
    else:
        out = np.arange(start, item.stop, step)
    if ndmin > 1:
        out = np.array(out, ndmin=ndmin)
        if trans1d != -1:
            out = out.swapaxes(-1, trans1d)
    return fnp.asarray(out)


class AxisConcatenator:
    """An object whose ``[...]`` concatenates its items (``fnp.r_`` and ``fnp.c_``)."""

    __slots__ = ("name", "settings")

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self.name, self.settings = name, (axis, ndmin, trans1d)

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.settings
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = _directive(self.name, items[0], self.settings)
            items = items[1:]
        arrays, dtype_sources = [], []
        for item in items:
            if isinstance(item, str):
                raise InvalidArgumentError(
                    f"funcdiff.numpy.{self.name} got the string {item!r} after the first "
                    "item; a directive must come first.")
            if isinstance(item, slice):
                x = _slice_item(item, ndmin, trans1d)
                dtype_sources.append(fnp.asarray(x).dtype)
            elif type(item) in np.ScalarType:
                x = fnp.array(item, ndmin=ndmin)
                dtype_sources.append(item)  # a Python scalar is weak, as in numpy
            else:
                item_ndim = fnp.ndim(item)
                x = _place_axes(fnp.array(item, ndmin=ndmin), item_ndim, ndmin, trans1d)
                dtype_sources.append(x.dtype)
            arrays.append(x)
        if not arrays:
            return np.array([])
        dtype = dtypes.result_type(*dtype_sources)
        arrays = [fnp.asarray(x).astype(dtype) if fnp.asarray(x).dtype != dtype else x
                  for x in arrays]
        return fnp.concatenate(arrays, axis=axis)

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"funcdiff.numpy.{self.name}"


class RowConcatenator(AxisConcatenator):
    """Concatenate along the first axis with index syntax (numpy.r_).

    Slices become ``arange`` (``linspace`` for an imaginary step), scalars
    one-element arrays; a first item ``"axis,ndmin,trans1d"`` chooses the axis, the
    minimum rank and where 1-d items' axis goes. Traced items stay differentiable.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fnp.r_[np.array([1, 2]), 0, 4:6]
    array([1, 2, 0, 4, 5])
    >>> fnp.r_['0,2', np.array([1., 2.]), np.array([3., 4.])]
    array([[1., 2.],
           [3., 4.]])
    >>> fd.grad(lambda x: (fnp.r_[x, 3 * x] ** 2).sum())(np.array([1., 2.]))
    array([20., 40.])
    """

    __slots__ = ()


class ColumnConcatenator(AxisConcatenator):
    """Concatenate along the last axis, 1-d items as columns (numpy.c_).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fnp.c_[np.array([1., 2.]), np.array([3., 4.])]
    array([[1., 3.],
           [2., 4.]])
    >>> fd.grad(lambda x: fnp.c_[x, x ** 2].sum())(np.array([1., 2.]))
    array([3., 5.])
    """

    __slots__ = ()


r_ = RowConcatenator("r_", 0, 1, -1)
c_ = ColumnConcatenator("c_", -1, 2, 0)

__all__ = ["r_", "c_"]
