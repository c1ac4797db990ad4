"""The complex transforms of funcdiff.numpy.fft, and the lowering every transform uses.

``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn`` and ``ifftn`` map real or
complex input to complex output. ``transform`` is the one path from numpy's
arguments to the ``fft`` primitive for these and the real transforms of
``_fft_real``: it moves the transformed axes last (the primitive transforms
trailing axes), binds one primitive and moves them back; repeated axes go one
axis at a time, in numpy's order. ``funcdiff.numpy.fft`` re-exports the
public functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.core import get_aval
from funcdiff.numpy._fft_arguments import (array, axes_and_sizes, as_complex, fit, _norm,
                                           real_float, reject_out)
from funcdiff.primitives import fft as fft_prim
from funcdiff.primitives import structural


def transform(name: str, a: Any, s: Any, axes: Any, norm: Any, fft_type: str) -> Any:
    a = array(name, a)
    norm = _norm(name, norm)
    axes, sizes = axes_and_sizes(name, a, s, axes, inverse_real=fft_type == "IRFFT")
    if len(set(axes)) != len(axes):  # numpy transforms a repeated axis repeatedly
        return _transform_axis_by_axis(name, a, axes, sizes, norm, fft_type)
    a = real_float(name, a) if fft_type == "RFFT" else as_complex(name, a)
    for i, (ax, n) in enumerate(zip(axes, sizes)):
        last = i == len(axes) - 1
        a = fit(a, ax, n // 2 + 1 if fft_type == "IRFFT" and last else n)
    ndim = get_aval(a).ndim
    rest = [d for d in range(ndim) if d not in axes]
    perm = tuple(rest + axes)
    if perm != tuple(range(ndim)):
        a = structural.transpose(a, permutation=perm)
    out = fft_prim.fft(a, fft_type=fft_type, fft_lengths=tuple(sizes), norm=norm)
    if perm != tuple(range(ndim)):
        out = structural.transpose(out, permutation=tuple(np.argsort(perm).tolist()))
    return out


def _transform_axis_by_axis(name, a, axes, sizes, norm, fft_type):
    """numpy's order for repeated axes, one axis at a time: fftn and rfftn go from
    the last axis to the first (rfftn's real transform first, on the last axis);
    irfftn goes from the first to the last (its real transform last)."""
    pairs = list(zip(axes, sizes))
    if fft_type == "IRFFT":
        for ax, n in pairs[:-1]:
            a = transform(name, a, (n,), (ax,), norm, "IFFT")
        return transform(name, a, (sizes[-1],), (axes[-1],), norm, "IRFFT")
    if fft_type == "RFFT":
        a = transform(name, a, (sizes[-1],), (axes[-1],), norm, "RFFT")
        pairs, fft_type = pairs[:-1], "FFT"
    for ax, n in reversed(pairs):
        a = transform(name, a, (n,), (ax,), norm, fft_type)
    return a


def one_axis(n, axis):
    return None if n is None else (n,), (axis,)


def fft(a, n=None, axis=-1, norm=None, out=None):
    """One-dimensional discrete Fourier transform (``numpy.fft.fft``).

    Args:
      a: array_like, real or complex.
      n: length of the transform; ``a`` is cropped or zero-padded to it
        (default: the length of ``axis``).
      axis: the axis to transform.
      norm: None or "backward" (no scaling), "ortho" (1/sqrt(n)) or
        "forward" (1/n).
      out: not supported.

    Returns:
      The complex transform (complex64 for float32 input, else complex128).

    Raises:
      ShapeError: for n < 1 or 0-d input. AxisError: for a bad axis.
      FFTNormError: for an unknown norm.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.fft(np.array([1.0, 0.0, -1.0, 0.0]))
    array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
    """
    reject_out("fft", out)
    return transform("fft", a, *one_axis(n, axis), norm, "FFT")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """One-dimensional inverse discrete Fourier transform (``numpy.fft.ifft``).

    Args and Raises as ``fft``; "backward" scales by 1/n here.

    Returns:
      The complex inverse transform.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.ifft(np.array([0.0, 2.0, 0.0, 2.0])).real
    array([ 1.,  0., -1.,  0.])
    """
    reject_out("ifft", out)
    return transform("ifft", a, *one_axis(n, axis), norm, "IFFT")


def fftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional discrete Fourier transform (``numpy.fft.fftn``).

    Args:
      a: array_like, real or complex.
      s: transform sizes, one per axis (crop or zero-pad); default the
        input's sizes.
      axes: the axes to transform (default: the last ``len(s)``, or all).
      norm, out: as for ``fft``.

    Returns:
      The complex transform.

    Raises:
      ShapeError: if ``s`` and ``axes`` differ in length or a size is < 1.
      AxisError, FFTNormError: as for ``fft``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.fftn(np.ones((2, 2)))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    reject_out("fftn", out)
    return transform("fftn", a, s, axes, norm, "FFT")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional inverse discrete Fourier transform (``numpy.fft.ifftn``);
    arguments as for ``fftn``."""
    reject_out("ifftn", out)
    return transform("ifftn", a, s, axes, norm, "IFFT")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional discrete Fourier transform: ``fftn`` over ``axes``."""
    reject_out("fft2", out)
    return transform("fft2", a, s, axes, norm, "FFT")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional inverse discrete Fourier transform: ``ifftn`` over ``axes``."""
    reject_out("ifft2", out)
    return transform("ifft2", a, s, axes, norm, "IFFT")
