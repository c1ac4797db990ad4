"""funcdiff.numpy.fft: numpy's discrete Fourier transforms, differentiable.

``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft`` and their 2-d and
n-d forms take numpy's arguments (``n``/``s`` crop or zero-pad, ``axis``/
``axes``, ``norm`` in None/"backward", "ortho", "forward") and compute what
``numpy.fft`` computes (float32 in, complex64 out, as in numpy 2), with one
``fft`` primitive per call (``funcdiff.primitives.fft``). ``fftshift``,
``ifftshift``, ``fftfreq`` and ``rfftfreq`` complete the namespace.

Complex numbers, and the convention for their derivatives (JAX's):

- Complex values exist only *inside* a transformed function: the inputs of
  grad, jvp, vjp, jacfwd/jacrev and jit must be real (split a complex input
  into its real and imaginary parts). The functions here, the parts
  ``funcdiff.numpy.real``/``imag``, ``conj``, ``abs`` and ``angle``, and the
  primitives of ``funcdiff.primitives.complex_ops`` act on them.
- The gradient of a real-valued function of complex intermediates is the
  ordinary gradient with respect to the real inputs: for
  ``sum(abs(fft(x)) ** 2)`` it is ``2 * n * x`` (Parseval).
- Forward mode carries complex tangents: ``jvp`` of a complex-valued function
  gives the complex derivative ``J v``.
- Reverse mode transposes linearly, without conjugation: the cotangent ``c``
  of a complex value ``z`` represents the functional ``z -> Re(sum(c * z))``.
  So a holomorphic step ``z -> a * z`` pulls ``c`` back to ``c * a`` (not
  ``c * conj(a)``), and ``fft``'s transpose is ``fft`` itself.

>>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
>>> x = np.array([1.0, 2.0, -1.0, 0.5])
>>> fd.grad(lambda x: fnp.sum(fnp.abs(fnp.fft.fft(x)) ** 2))(x)
array([ 8., 16., -8.,  4.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import (AxisError, DTypeError, FunctionalDiffError, InvalidArgumentError,
                             ShapeError, UnsupportedNumpyError)
from funcdiff.primitives import complex_ops, structural
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import fft as fft_prim

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


class FFTNormError(FunctionalDiffError, ValueError):
    """``norm`` is not None, "backward", "ortho" or "forward" (numpy raises ValueError)."""


# ---------------------------------------------------------------------------
# Arguments


def _fname(name: str) -> str:
    return f"funcdiff.numpy.fft.{name}"


def _array(name: str, a: Any, min_rank: int = 1) -> Any:
    """``a`` as a tracer or numpy array of a dtype funcdiff supports (complex included)."""
    if not isinstance(a, (Tracer, np.ndarray)):
        if isinstance(a, (list, tuple)):
            from funcdiff.numpy import _util
            a = _util.asarray(a, _fname(name)) if _has_tracer(a) else np.asarray(a)
        else:
            a = np.asarray(a)
    if not isinstance(a, Tracer):
        dtypes.check_dtype(a.dtype, f"the input of {_fname(name)}", allow_complex=True)
    if get_aval(a).ndim < min_rank:
        raise ShapeError(f"{_fname(name)} needs an array of rank >= 1, got a 0-d value.")
    return a


def _has_tracer(seq) -> bool:
    return any(isinstance(e, Tracer) or (isinstance(e, (list, tuple)) and _has_tracer(e))
               for e in seq)


def _norm(name: str, norm: Any) -> str:
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise FFTNormError(f"{_fname(name)} got norm={norm!r}; it must be None, 'backward', "
                           "'ortho' or 'forward'.") from None


def _reject_out(name: str, out: Any) -> None:
    if out is not None:
        raise UnsupportedNumpyError(
            f"{_fname(name)} does not support out= (funcdiff arrays are immutable); call "
            "it without out= and use the returned value.")


def _real_float(name: str, x: Any) -> Any:
    """``x`` as the float numpy 2 transforms it in: float32 stays, float16 -> float32,
    integers and booleans -> float64."""
    dtype = get_aval(x).dtype
    if dtypes.is_complex(dtype):
        raise DTypeError(f"{_fname(name)} needs real input, but got {dtype}; take "
                         "funcdiff.numpy.real of it, or use fft for complex input.")
    target = dtype if dtype in (_F32, _F64) else (_F32 if dtype == np.float16 else _F64)
    return x if dtype == target else ew.convert_element_type(x, target)


def _complex(name: str, x: Any) -> Any:
    """``x`` as complex64/complex128: real input gets a zero imaginary part."""
    if dtypes.is_complex(get_aval(x).dtype):
        return x
    x = _real_float(name, x)
    return complex_ops.complex(x, np.zeros((), get_aval(x).dtype))


def _axes_and_sizes(name: str, a: Any, s: Any, axes: Any, inverse_real: bool):
    """numpy's rules for ``s`` and ``axes``: the transformed axes (non-negative) and
    the transform size of each (of the real signal for inverse real transforms)."""
    shape = get_aval(a).shape
    ndim = len(shape)
    if axes is not None:
        axes = _as_list(axes)
    if s is None:
        axes = list(range(ndim)) if axes is None else axes
        sizes = [None] * len(axes)
    else:
        sizes = _as_list(s)
        if axes is None:
            axes = list(range(-len(sizes), 0))
        if len(sizes) != len(axes):
            raise ShapeError(f"{_fname(name)} got s={s!r} and axes={axes!r} of different "
                             "lengths; give one size per axis.")
    norm_axes = []
    for ax in axes:
        try:
            ax = operator.index(ax)
        except TypeError:
            raise AxisError(f"{_fname(name)}: axes must be integers, got {ax!r}") from None
        if not -ndim <= ax < ndim:
            raise AxisError(f"{_fname(name)}: axis {ax} is out of range for an array of rank "
                            f"{ndim}.")
        norm_axes.append(ax % ndim)
    if not norm_axes:
        raise AxisError(f"{_fname(name)} needs at least one axis to transform.")
    out_sizes = []
    for i, (ax, n) in enumerate(zip(norm_axes, sizes)):
        if n is None:  # the default of the one-axis transform
            n = shape[ax]
            if inverse_real and i == len(norm_axes) - 1:
                n = 2 * (shape[ax] - 1)
        elif isinstance(n, (int, np.integer)) and n == -1:  # numpy 2: the input's size
            n = shape[ax]
        try:
            n = operator.index(n)
        except TypeError:
            raise ShapeError(f"{_fname(name)} needs integer transform sizes, got {n!r}") from None
        if n < 1:
            raise ShapeError(f"{_fname(name)}: invalid number of FFT data points ({n}) along "
                             f"axis {ax}; it must be at least 1.")
        out_sizes.append(n)
    return norm_axes, out_sizes


def _as_list(v: Any) -> list:
    """An int (or numpy integer) as a one-element list, a sequence as a list."""
    try:
        return [operator.index(v)]
    except TypeError:
        return list(v)


def _fit(x: Any, axis: int, size: int) -> Any:
    """``x`` cropped or zero-padded at the end of ``axis`` to ``size`` (numpy's n=)."""
    shape = get_aval(x).shape
    if shape[axis] == size:
        return x
    if shape[axis] > size:
        limits = shape[:axis] + (size,) + shape[axis + 1:]
        return structural.slice(x, start_indices=(0,) * len(shape), limit_indices=limits)
    config = tuple((0, size - shape[axis] if d == axis else 0, 0) for d in range(len(shape)))
    return structural.pad(x, np.zeros((), get_aval(x).dtype), padding_config=config)


# ---------------------------------------------------------------------------
# The transforms


def _transform(name: str, a: Any, s: Any, axes: Any, norm: Any, fft_type: str) -> Any:
    a = _array(name, a)
    norm = _norm(name, norm)
    axes, sizes = _axes_and_sizes(name, a, s, axes, inverse_real=fft_type == "IRFFT")
    if len(set(axes)) != len(axes):  # numpy transforms a repeated axis repeatedly
        return _transform_axis_by_axis(name, a, axes, sizes, norm, fft_type)
    a = _real_float(name, a) if fft_type == "RFFT" else _complex(name, a)
    for i, (ax, n) in enumerate(zip(axes, sizes)):
        last = i == len(axes) - 1
        a = _fit(a, ax, n // 2 + 1 if fft_type == "IRFFT" and last else n)
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
            a = _transform(name, a, (n,), (ax,), norm, "IFFT")
        return _transform(name, a, (sizes[-1],), (axes[-1],), norm, "IRFFT")
    if fft_type == "RFFT":
        a = _transform(name, a, (sizes[-1],), (axes[-1],), norm, "RFFT")
        pairs, fft_type = pairs[:-1], "FFT"
    for ax, n in reversed(pairs):
        a = _transform(name, a, (n,), (ax,), norm, fft_type)
    return a


def _one_axis(n, axis):
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
    _reject_out("fft", out)
    return _transform("fft", a, *_one_axis(n, axis), norm, "FFT")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """One-dimensional inverse discrete Fourier transform (``numpy.fft.ifft``).

    Args and Raises as ``fft``; "backward" scales by 1/n here.

    Returns:
      The complex inverse transform.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.ifft(np.array([0.0, 2.0, 0.0, 2.0])).real
    array([ 1.,  0., -1.,  0.])
    """
    _reject_out("ifft", out)
    return _transform("ifft", a, *_one_axis(n, axis), norm, "IFFT")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """Discrete Fourier transform of real input: the ``n // 2 + 1`` non-negative
    frequencies (``numpy.fft.rfft``).

    Args:
      a: real array_like (complex input raises DTypeError).
      n, axis, norm, out: as for ``fft``.

    Returns:
      The complex half spectrum.

    Raises:
      DTypeError: for complex input; otherwise as ``fft``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.rfft(np.array([1.0, 2.0, 0.0, -1.0]))
    array([2.+0.j, 1.-3.j, 0.+0.j])
    """
    _reject_out("rfft", out)
    return _transform("rfft", a, *_one_axis(n, axis), norm, "RFFT")


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of ``rfft``: real output of length ``n`` (``numpy.fft.irfft``).

    Args:
      a: the half spectrum (real input is taken as complex with zero imaginary part).
      n: length of the real output (default ``2 * (m - 1)`` for ``m`` input
        frequencies); the input is cropped or zero-padded to ``n // 2 + 1``.
      axis, norm, out: as for ``fft``.

    Returns:
      A real array (float32 for complex64 input).

    Raises:
      As ``fft``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.irfft(np.array([2.0, 1.0 - 3.0j, 0.0]))
    array([ 1.,  2.,  0., -1.])
    """
    _reject_out("irfft", out)
    return _transform("irfft", a, *_one_axis(n, axis), norm, "IRFFT")


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """Transform of a Hermitian-symmetric signal given by its first half: real
    output of length ``n`` (``numpy.fft.hfft``; ``irfft(conj(a))`` with the
    opposite normalisation).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.hfft(np.array([1.0, 2.0, 3.0]))
    array([ 8., -2.,  0., -2.])
    """
    _reject_out("hfft", out)
    a = _array("hfft", a)
    if dtypes.is_complex(get_aval(a).dtype):
        a = complex_ops.conj(a)
    return _transform("hfft", a, *_one_axis(n, axis), _SWAPPED[_norm("hfft", norm)], "IRFFT")


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of ``hfft`` for real input: ``conj(rfft(a))`` with the opposite
    normalisation (``numpy.fft.ihfft``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.ihfft(np.array([8.0, -2.0, 0.0, -2.0]))
    array([1.-0.j, 2.-0.j, 3.-0.j])
    """
    _reject_out("ihfft", out)
    spectrum = _transform("ihfft", a, *_one_axis(n, axis), _SWAPPED[_norm("ihfft", norm)],
                          "RFFT")
    return complex_ops.conj(spectrum)


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
    _reject_out("fftn", out)
    return _transform("fftn", a, s, axes, norm, "FFT")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional inverse discrete Fourier transform (``numpy.fft.ifftn``);
    arguments as for ``fftn``."""
    _reject_out("ifftn", out)
    return _transform("ifftn", a, s, axes, norm, "IFFT")


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional transform of real input (``numpy.fft.rfftn``): ``rfft`` over
    the last of ``axes``, then ``fft`` over the others; arguments as for ``fftn``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.rfftn(np.ones((2, 4))).shape
    (2, 3)
    """
    _reject_out("rfftn", out)
    return _transform("rfftn", a, s, axes, norm, "RFFT")


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """Inverse of ``rfftn`` (``numpy.fft.irfftn``): ``s`` gives the real output's
    sizes (default: the input's, with ``2 * (m - 1)`` on the last axis).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)
    >>> np.allclose(fnp.fft.irfftn(fnp.fft.rfftn(x), s=x.shape), x)
    True
    """
    _reject_out("irfftn", out)
    return _transform("irfftn", a, s, axes, norm, "IRFFT")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional discrete Fourier transform: ``fftn`` over ``axes``."""
    _reject_out("fft2", out)
    return _transform("fft2", a, s, axes, norm, "FFT")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional inverse discrete Fourier transform: ``ifftn`` over ``axes``."""
    _reject_out("ifft2", out)
    return _transform("ifft2", a, s, axes, norm, "IFFT")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional transform of real input: ``rfftn`` over ``axes``."""
    _reject_out("rfft2", out)
    return _transform("rfft2", a, s, axes, norm, "RFFT")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Inverse of ``rfft2``: ``irfftn`` over ``axes``."""
    _reject_out("irfft2", out)
    return _transform("irfft2", a, s, axes, norm, "IRFFT")


# ---------------------------------------------------------------------------
# Shifts and frequencies


def _roll(x: Any, shift: int, axis: int) -> Any:
    """``numpy.roll`` along one axis, from slices (complex values included)."""
    shape = get_aval(x).shape
    size = shape[axis]
    shift = shift % size if size else 0
    if shift == 0:
        return x
    zeros = (0,) * len(shape)

    def part(start, stop):
        starts = zeros[:axis] + (start,) + zeros[axis + 1:]
        limits = shape[:axis] + (stop,) + shape[axis + 1:]
        return structural.slice(x, start_indices=starts, limit_indices=limits)
    return structural.concatenate(part(size - shift, size), part(0, size - shift),
                                  dimension=axis)


def _shift(name: str, x: Any, axes: Any, sign: int) -> Any:
    x = _array(name, x, min_rank=0)
    shape = get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    for ax in _as_list(axes):
        try:
            ax = operator.index(ax)
        except TypeError:
            raise AxisError(f"{_fname(name)}: axes must be integers, got {ax!r}") from None
        if not -len(shape) <= ax < len(shape):
            raise AxisError(f"{_fname(name)}: axis {ax} is out of range for an array of "
                            f"rank {len(shape)}.")
        ax %= len(shape)
        x = _roll(x, sign * (shape[ax] // 2), ax)
    return x


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (``numpy.fft.fftshift``).

    Args:
      x: array_like, real or complex.
      axes: axes to shift (default: all).

    Returns:
      ``x`` rolled by half its size along each axis.

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.fftshift(fnp.fft.fftfreq(5))
    array([-0.4, -0.2,  0. ,  0.2,  0.4])
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of ``fftshift`` (``numpy.fft.ifftshift``; they differ for odd sizes).

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.ifftshift(fnp.fft.fftshift(fnp.fft.fftfreq(5)))
    array([ 0. ,  0.2,  0.4, -0.4, -0.2])
    """
    return _shift("ifftshift", x, axes, -1)


def _frequencies(name: str, n: Any, d: Any, device: Any, counts: np.ndarray) -> Any:
    if device not in (None, "cpu"):
        raise InvalidArgumentError(f"{_fname(name)} runs on the CPU only; got device={device!r}")
    if isinstance(d, Tracer):
        from funcdiff import numpy as fnp
        return fnp.multiply(counts.astype(np.float64), fnp.divide(1.0, fnp.multiply(n, d)))
    return counts * (1.0 / (n * d))


def _check_n(name: str, n: Any) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidArgumentError(f"{_fname(name)} needs a positive integer n, got {n!r}")
    return int(n)


def fftfreq(n, d=1.0, device=None):
    """The sample frequencies of ``fft`` for ``n`` points spaced ``d`` apart
    (``numpy.fft.fftfreq``); ``d`` may be traced.

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.fftfreq(4, d=0.5)
    array([ 0. ,  0.5, -1. , -0.5])
    """
    n = _check_n("fftfreq", n)
    counts = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", n, d, device, counts)


def rfftfreq(n, d=1.0, device=None):
    """The sample frequencies of ``rfft`` (``numpy.fft.rfftfreq``); ``d`` may be traced.

    >>> import funcdiff.numpy as fnp
    >>> fnp.fft.rfftfreq(5)
    array([0. , 0.2, 0.4])
    """
    n = _check_n("rfftfreq", n)
    return _frequencies("rfftfreq", n, d, device, np.arange(0, n // 2 + 1))


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq",
           "FFTNormError"]
