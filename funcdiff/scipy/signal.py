"""funcdiff.scipy.signal: scipy.signal's convolutions, on ``lax.conv_general_dilated``.

``convolve``/``correlate`` (1 to 3 dimensions) and ``convolve2d``/
``correlate2d`` give scipy.signal's values in its three modes, differentiable
in both arrays under every transform, computed by funcdiff's convolution
primitive (im2col and one matrix product) rather than a Python loop.

- ``correlate(a, v)[n] = sum_k a[n + k] * conj(v[k])``; ``convolve`` flips ``v``.
- ``mode="full"`` pads by ``len(v) - 1`` on both sides; ``"same"`` keeps
  the middle of ``"full"`` with ``a``'s shape (the odd element of padding goes
  at a correlation's end and at a convolution's start, as scipy's); ``"valid"``
  keeps the positions where ``v`` fits, swapping the arrays as scipy does when
  ``v`` is the larger in every dimension.
- ``fftconvolve`` (any number of dimensions, over all or some ``axes``)
  multiplies the arrays' discrete Fourier transforms, zero-padded to the full
  size, through ``funcdiff.numpy.fft``; ``method="fft"`` of ``convolve`` and
  ``correlate`` takes that route (any number of dimensions), ``"direct"`` and
  ``"auto"`` the convolution primitive.
- ``convolve2d``/``correlate2d`` take ``boundary`` ``"fill"`` (with
  ``fillvalue``), ``"wrap"`` or ``"symm"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.core import get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._padding import pad as _pad
from funcdiff.numpy._rounding import conj
from funcdiff.primitives import structural
from funcdiff.primitives.convolution import conv_general_dilated
import funcdiff.numpy as fnp

_MODES = ("full", "valid", "same")
_BOUNDARIES = {"fill": "constant", "wrap": "wrap", "symm": "symmetric"}


def _operands(name: str, in1: Any, in2: Any) -> tuple:
    a = _util.asarray(in1, f"funcdiff.scipy.signal.{name}")
    v = _util.asarray(in2, f"funcdiff.scipy.signal.{name}")
    sa, sv = get_aval(a), get_aval(v)
    if sa.ndim != sv.ndim:
        raise ShapeError(f"funcdiff.scipy.signal.{name}: in1 and in2 need the same number of "
                         f"dimensions, got shapes {sa.shape} and {sv.shape}.")
    if not 1 <= sa.ndim <= 3:
        raise ShapeError(f"funcdiff.scipy.signal.{name} takes arrays of 1 to 3 dimensions, got "
                         f"{sa.ndim}.")
    if 0 in sa.shape or 0 in sv.shape:
        raise ShapeError(f"funcdiff.scipy.signal.{name}: empty arrays ({sa.shape}, {sv.shape}) "
                         "have no convolution (scipy returns an empty array).")
    dtype = dtypes.result_type(a, v)
    if not dtypes.is_inexact(dtype):
        dtype = np.dtype(np.float64)
    return _util.cast(a, dtype), _util.cast(v, dtype)


def _check_mode(name: str, mode: str) -> None:
    if mode not in _MODES:
        raise InvalidArgumentError(f"funcdiff.scipy.signal.{name}: mode must be one of "
                                   f"{', '.join(_MODES)}, got {mode!r}.")


def _check_method(name: str, method: str) -> str:
    if method not in ("auto", "direct", "fft"):
        raise InvalidArgumentError(f"funcdiff.scipy.signal.{name}: method must be 'auto', "
                                   f"'direct' or 'fft', got {method!r}.")
    return method


def _flip(x: Any) -> Any:
    return structural.rev(x, dimensions=tuple(range(get_aval(x).ndim)))


def _pads(mode: str, kernel_shape: tuple, flipped: bool) -> list:
    if mode == "valid":
        return [(0, 0)] * len(kernel_shape)
    if mode == "full":
        return [(k - 1, k - 1) for k in kernel_shape]
    halves = [((k - 1) - (k - 1) // 2, (k - 1) // 2) if flipped else ((k - 1) // 2, k - 1 - (k - 1) // 2)
              for k in kernel_shape]
    return halves


def _correlate(a: Any, kernel: Any, pads: list) -> Any:
    """The correlation of ``a`` with ``kernel`` (no conjugation) over the padded ``a``."""
    nd = get_aval(a).ndim
    out = conv_general_dilated(structural.expand_dims(a, dimensions=(0, 1)),
                               structural.expand_dims(kernel, dimensions=(0, 1)),
                               (1,) * nd, pads)
    return structural.squeeze(out, dimensions=(0, 1))


def _needs_swap(mode: str, a_shape: tuple, v_shape: tuple) -> bool:
    if mode != "valid":
        return False
    if all(n >= k for n, k in zip(a_shape, v_shape)):
        return False
    if all(k >= n for n, k in zip(a_shape, v_shape)):
        return True
    raise ShapeError(f"mode='valid' needs one array at least as large as the other in every "
                     f"dimension, got shapes {a_shape} and {v_shape}.")


def correlate(in1, in2, mode="full", method="auto"):
    """The cross-correlation of ``in1`` and ``in2`` (scipy.signal.correlate).

    Args:
      in1, in2: arrays of the same number of dimensions (1 to 3; any with "fft").
      mode: "full", "valid" or "same".
      method: "auto" or "direct" (the convolution primitive) or "fft" (``fftconvolve``).

    Returns:
      ``sum_k in1[n + k] * conj(in2[k])`` over the positions of ``mode``.

    Raises:
      ShapeError: mismatched dimensions, or neither array larger for "valid".

    >>> import numpy as np
    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    _check_mode("correlate", mode)
    if _check_method("correlate", method) == "fft":
        v = _util.asarray(in2, "funcdiff.scipy.signal.correlate")
        v = conj(v) if dtypes.is_complex(get_aval(v).dtype) else v
        return fftconvolve(in1, _flip(v), mode)
    a, v = _operands("correlate", in1, in2)
    v = conj(v) if dtypes.is_complex(get_aval(v).dtype) else v
    sa, sv = get_aval(a).shape, get_aval(v).shape
    if _needs_swap(mode, sa, sv):  # then scipy reverses the correlation of v (conjugated) with a
        return _flip(_correlate(v, a, _pads(mode, sa, True)))
    # scipy computes it as the convolution with the reversed in2: its "same" offsets
    return _correlate(a, v, _pads(mode, sv, True))


def convolve(in1, in2, mode="full", method="auto"):
    """The convolution of ``in1`` and ``in2`` (scipy.signal.convolve).

    Args:
      in1, in2: arrays of the same number of dimensions (1 to 3; any with "fft").
      mode: "full", "valid" or "same".
      method: "auto" or "direct" (the convolution primitive) or "fft" (``fftconvolve``).

    Returns:
      ``sum_k in1[n - k] * in2[k]`` over the positions of ``mode``.

    >>> import numpy as np
    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    _check_mode("convolve", mode)
    if _check_method("convolve", method) == "fft":
        return fftconvolve(in1, in2, mode)
    a, v = _operands("convolve", in1, in2)
    if _needs_swap(mode, get_aval(a).shape, get_aval(v).shape):
        a, v = v, a  # convolution commutes
    return _correlate(a, _flip(v), _pads(mode, get_aval(v).shape, True))


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of ``in1`` and ``in2`` by FFT (scipy.signal.fftconvolve).

    Both arrays are zero-padded to the full size along ``axes``, transformed
    (``rfftn`` for real arrays, ``fftn`` for complex ones), multiplied and
    transformed back, then cut to ``mode``; along the other axes the arrays
    must agree or be 1 (they broadcast). Differentiable in both arrays, in every
    mode, through the FFT's own derivatives.

    Args:
      in1, in2: arrays of the same number of dimensions (any).
      mode: "full", "valid" or "same" (the centre of "full", shaped like in1).
      axes: the axes to convolve over (default: all).

    Returns:
      The convolution, as ``convolve`` (within rounding: the FFT's, not the sum's).

    Raises:
      ShapeError: mismatched dimensions or non-convolved axes, empty arrays, or
        neither array larger for "valid".

    >>> import numpy as np
    >>> np.round(fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])), 12) + 0.0
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    name = "funcdiff.scipy.signal.fftconvolve"
    _check_mode("fftconvolve", mode)
    a = _util.asarray(in1, name)
    v = _util.asarray(in2, name)
    sa, sv = get_aval(a).shape, get_aval(v).shape
    if len(sa) != len(sv) or 0 in sa or 0 in sv:
        raise ShapeError(f"{name}: in1 and in2 need the same number of dimensions and no "
                         f"empty axis, got shapes {sa} and {sv}.")
    axes = tuple(range(len(sa))) if axes is None else tuple(
        sorted({ax % len(sa) for ax in np.atleast_1d(axes).tolist()}))
    other = [i for i in range(len(sa)) if i not in axes]
    if any(sa[i] != sv[i] and 1 not in (sa[i], sv[i]) for i in other):
        raise ShapeError(f"{name}: along the axes not convolved, in1 {sa} and in2 {sv} must "
                         f"agree or be 1, but they differ on {[i for i in other if sa[i] != sv[i]]}.")
    dtype = dtypes.result_type(a, v)
    dtype = dtype if dtypes.is_inexact(dtype) else np.dtype(np.float64)
    a, v = _util.cast(a, dtype), _util.cast(v, dtype)
    if mode == "valid" and _needs_swap(mode, [sa[i] for i in axes], [sv[i] for i in axes]):
        a, v, sa, sv = v, a, sv, sa
    full = [sa[i] + sv[i] - 1 for i in axes]
    if dtypes.is_complex(dtype):
        out = fnp.fft.ifftn(fnp.fft.fftn(a, s=full, axes=axes) * fnp.fft.fftn(v, s=full, axes=axes),
                            s=full, axes=axes)
    else:
        out = fnp.fft.irfftn(fnp.fft.rfftn(a, s=full, axes=axes)
                             * fnp.fft.rfftn(v, s=full, axes=axes), s=full, axes=axes)
    cut = [slice(None)] * len(sa)
    for i, n in zip(axes, full):
        if mode == "same":
            start = (n - sa[i]) // 2
            cut[i] = slice(start, start + sa[i])
        elif mode == "valid":
            cut[i] = slice(sv[i] - 1, sa[i])
    return _util.cast(out[tuple(cut)], dtype)


def _two_d(name: str, in1: Any, in2: Any, mode: str, boundary: str, fillvalue: Any,
           flipped: bool) -> Any:
    _check_mode(name, mode)
    if boundary not in _BOUNDARIES:
        raise InvalidArgumentError(f"funcdiff.scipy.signal.{name}: boundary must be 'fill', "
                                   f"'wrap' or 'symm', got {boundary!r}.")
    a, v = _operands(name, in1, in2)
    if get_aval(a).ndim != 2:
        raise ShapeError(f"funcdiff.scipy.signal.{name} takes 2-d arrays, got shapes "
                         f"{get_aval(a).shape} and {get_aval(v).shape}.")
    if _needs_swap(mode, get_aval(a).shape, get_aval(v).shape):
        if not flipped:  # correlate2d(a, v) is correlate2d(v, a) reversed
            a_c = conj(a) if dtypes.is_complex(get_aval(a).dtype) else a
            return _flip(_correlate(v, a_c, [(0, 0), (0, 0)]))
        a, v = v, a
    kernel = _flip(v) if flipped else (conj(v) if dtypes.is_complex(get_aval(v).dtype) else v)
    pads = _pads(mode, get_aval(v).shape, flipped)
    if boundary == "fill" and not (type(fillvalue) in (int, float) and fillvalue == 0):
        a = _pad(a, pads, mode="constant", constant_values=fillvalue)
    elif boundary != "fill":
        a = _pad(a, pads, mode=_BOUNDARIES[boundary])
    else:
        return _correlate(a, kernel, pads)
    return _correlate(a, kernel, [(0, 0), (0, 0)])


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-d convolution with scipy's boundary handling (scipy.signal.convolve2d).

    >>> import numpy as np
    >>> convolve2d(np.eye(3), np.ones((2, 2)), mode="valid")
    array([[2., 1.],
           [1., 2.]])
    """
    return _two_d("convolve2d", in1, in2, mode, boundary, fillvalue, flipped=True)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-d cross-correlation with scipy's boundary handling (scipy.signal.correlate2d).

    >>> import numpy as np
    >>> correlate2d(np.eye(3), np.array([[1.0, 0.0], [0.0, 2.0]]), mode="valid")
    array([[3., 0.],
           [0., 3.]])
    """
    return _two_d("correlate2d", in1, in2, mode, boundary, fillvalue, flipped=False)


__all__ = ["convolve", "correlate", "fftconvolve", "convolve2d", "correlate2d"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
