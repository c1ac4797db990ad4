"""numpy.pad for funcdiff.numpy: constant, edge, reflect, symmetric and wrap padding.

Constant padding is the ``pad`` primitive (one per side and axis when the
values differ per side, as numpy fills the corners from later axes); a traced
constant value stays differentiable. The other modes copy elements of the
array itself: the source position of every padded position is computed with
numpy from the shape (a setting, not a value), and ``take_static`` turns each
axis's positions into a few slices, reversals and one concatenate, so the
derivative is a few pads rather than a scatter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._shape import _arr, normalize_axis, shape_of, take_static
from funcdiff.primitives import slicing


# ---------------------------------------------------------------------------
# Padding

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_pairs(x: Any, ndim: int, what: str, as_index: bool) -> list:
    """numpy's broadcast of a pad argument to one ``(before, after)`` pair per axis."""
    x = np.array(x)
    if as_index:
        if x.dtype.kind not in "iu":
            raise InvalidArgumentError("funcdiff.numpy.pad: `pad_width` must be of integral type")
        x = x.astype(np.int64)
        if x.size and x.min() < 0:
            raise ShapeError("funcdiff.numpy.pad: pad_width can't contain negative values")
    if x.size == 1:
        v = x.ravel()[0]
        return [(v, v)] * ndim
    if x.size == 2 and x.shape != (2, 1):
        v = x.ravel()
        return [(v[0], v[1])] * ndim
    try:
        return [tuple(p) for p in np.broadcast_to(x, (ndim, 2))]
    except ValueError:
        raise ShapeError(f"funcdiff.numpy.pad: {what} of shape {x.shape} cannot be broadcast "
                         f"to one (before, after) pair per axis ({ndim}, 2)") from None


def _pad_source_index(mode: str, n: int, lo: int, hi: int) -> np.ndarray:
    """For each output position along an axis, the input position it copies."""
    j = np.arange(-lo, n + hi)
    if mode == "edge" or n == 1:
        return np.clip(j, 0, n - 1)
    if mode == "wrap":
        return np.mod(j, n)
    if mode == "symmetric":
        m = np.mod(j, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m)
    m = np.mod(j, 2 * n - 2)  # reflect: mirror without repeating the edge
    return np.where(m < n, m, 2 * n - 2 - m)


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array (modes constant, edge, reflect, symmetric, wrap), differentiably.

    Args:
      array: array-like.
      pad_width: int, ``(before, after)``, one pair per axis, or a dict axis -> width.
      mode: one of ``'constant'``, ``'edge'``, ``'reflect'``, ``'symmetric'``, ``'wrap'``.
      constant_values: for ``'constant'``: a scalar or pairs like pad_width (may be traced).

    Returns:
      The padded array, of ``array``'s dtype.

    Raises:
      UnsupportedNumpyError: another mode, a callable mode or ``reflect_type='odd'``.
      ShapeError: negative widths or a non-constant pad of an empty axis.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.pad(np.array([1, 2, 3]), (2, 1), mode="reflect")
    array([3, 2, 1, 2, 3, 2])
    """
    array = _arr(array, "pad")
    shape = shape_of(array)
    ndim = len(shape)
    dtype = get_aval(array).dtype
    if callable(mode) or mode not in _PAD_MODES:
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.pad does not support mode={mode!r}; supported modes are "
            f"{', '.join(_PAD_MODES)}.")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}.get(mode, set())
    if set(kwargs) - allowed:
        raise InvalidArgumentError(f"funcdiff.numpy.pad: unsupported keyword arguments for mode "
                                   f"{mode!r}: {sorted(set(kwargs) - allowed)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise UnsupportedNumpyError("funcdiff.numpy.pad supports only reflect_type='even'")
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for ax, width in pad_width.items():
            seq[normalize_axis(ax, ndim, "pad")] = ((width, width) if np.ndim(width) == 0
                                                    else tuple(width))
        pad_width = seq
    widths = [(int(lo), int(hi)) for lo, hi in _pad_pairs(pad_width, ndim, "pad_width", True)]
    if mode == "constant":
        return _pad_constant(array, widths, kwargs.get("constant_values", 0), dtype)
    for ax, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        if shape[ax] == 0:
            raise ShapeError(f"funcdiff.numpy.pad: can't extend empty axis {ax} using modes "
                             "other than 'constant'")
        array = take_static(array, ax, _pad_source_index(mode, shape[ax], lo, hi))
    return array


def _pad_constant(array: Any, widths: list, values: Any, dtype: np.dtype) -> Any:
    if isinstance(values, Tracer):
        if values.ndim != 0:
            raise UnsupportedNumpyError("funcdiff.numpy.pad: a traced constant_values must be 0-d")
        value = _util.cast(values, dtype)
        return slicing.pad(array, value, padding_config=tuple((lo, hi, 0) for lo, hi in widths))
    pairs = _pad_pairs(values, len(widths), "constant_values", False)
    pairs = [(np.asarray(b).astype(dtype), np.asarray(c).astype(dtype)) for b, c in pairs]
    if all(b == pairs[0][0] and c == pairs[0][0] for b, c in pairs):
        if all(w == (0, 0) for w in widths):
            return array
        return slicing.pad(array, pairs[0][0],
                              padding_config=tuple((lo, hi, 0) for lo, hi in widths))
    # Different values per side: pad one side at a time, axis by axis, as numpy
    # does (later axes' values fill the corners).
    ndim = len(widths)
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, pairs)):
        for config, value in (((lo, 0), vlo), ((0, hi), vhi)):
            if config != (0, 0):
                full = tuple(config + (0,) if i == ax else (0, 0, 0) for i in range(ndim))
                array = slicing.pad(array, value, padding_config=full)
    return array


__all__ = ["pad"]
