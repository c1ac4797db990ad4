"""The fft primitive: discrete Fourier transforms over the trailing axes.

``fft_p`` is ``lax.fft`` with numpy's normalisations built in: params
``fft_type`` ("FFT", "IFFT", "RFFT" or "IRFFT"), ``fft_lengths`` (the transform
sizes of the trailing axes, a tuple of ints) and ``norm`` ("backward",
"ortho" or "forward", as in ``numpy.fft``). FFT and IFFT map complex to
complex; RFFT maps real to the half spectrum (last axis ``n // 2 + 1``);
IRFFT maps a half spectrum back to real values. The primitive is linear.

Transposes follow JAX's convention for complex values (see
``complex_ops``): a cotangent ``c`` stands for ``x -> Re(sum(c * A x))``.
The DFT matrix is symmetric, so FFT and IFFT are their own transposes (same
norm). The half-spectrum maps are not; with ``w`` the weights that count
each retained frequency once (1 for the zero and Nyquist frequencies, 1/2
for the others, whose conjugate twins were dropped) and ``norm*`` the dual
normalisation (backward <-> forward, ortho <-> ortho):

- RFFT^T(c)  = IRFFT[norm*](conj(c) * w)
- IRFFT^T(g) = conj(RFFT[norm*](g)) / w

Both are checked by the adjoint identity in ``tests/test_fft.py``.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError
from funcdiff.primitives import complex_ops
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import structural
from funcdiff.primitives.cards import deflinear, nbytes

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
NORMS = ("backward", "ortho", "forward")
_DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_NUMPY_FN = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
             "IRFFT": np.fft.irfftn}

fft_p = Primitive("fft")


def _out_aval(x: ShapedArray, fft_type: str, fft_lengths: tuple) -> ShapedArray:
    lead = x.shape[:x.ndim - len(fft_lengths)]
    if fft_type == "RFFT":
        return ShapedArray(lead + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,),
                           dtypes.complex_dtype(x.dtype))
    if fft_type == "IRFFT":
        return ShapedArray(lead + fft_lengths, dtypes.real_dtype(x.dtype))
    return x


def _fft_impl(x, *, fft_type, fft_lengths, norm):
    # numpy would silently crop, pad or cast what the shape rule rejects, so the rule
    # runs first: a few comparisons next to an FFT.
    expected = _fft_abstract_eval(get_aval(x), fft_type=fft_type, fft_lengths=fft_lengths,
                                  norm=norm).dtype
    axes = tuple(range(-len(fft_lengths), 0))
    out = _NUMPY_FN[fft_type](x, s=fft_lengths, axes=axes, norm=norm)
    return out if out.dtype == expected else out.astype(expected)  # numpy < 2 computes in 64 bits


def _fft_abstract_eval(x, *, fft_type, fft_lengths, norm):
    if fft_type not in FFT_TYPES:
        raise InvalidArgumentError(
            f"the primitive fft got fft_type={fft_type!r}; it must be one of {FFT_TYPES}.")
    if norm not in NORMS:
        raise InvalidArgumentError(f"the primitive fft got norm={norm!r}; it must be one of "
                                   f"{NORMS} (funcdiff.numpy.fft maps None to 'backward').")
    if not (isinstance(fft_lengths, tuple) and fft_lengths
            and all(type(n) is int and n >= 1 for n in fft_lengths)):
        raise InvalidArgumentError(
            f"the primitive fft needs fft_lengths as a non-empty tuple of positive ints, "
            f"got {fft_lengths!r}.")
    k = len(fft_lengths)
    if x.ndim < k:
        raise ShapeError(f"the primitive fft transforms {k} trailing axes, but its operand "
                         f"{x.str_short()} has only {x.ndim}.")
    if fft_type == "RFFT":
        if not dtypes.is_float(x.dtype):
            raise DTypeError(f"the primitive fft with fft_type=RFFT needs a floating operand, "
                             f"got {x.str_short()}.")
        expected = fft_lengths
    else:
        if not dtypes.is_complex(x.dtype):
            raise DTypeError(f"the primitive fft with fft_type={fft_type} needs a complex "
                             f"operand, got {x.str_short()}. Make one with complex(x, 0).")
        expected = fft_lengths if fft_type != "IRFFT" else (
            fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,))
    if x.shape[x.ndim - k:] != expected:
        raise ShapeError(
            f"the primitive fft with fft_type={fft_type} and fft_lengths={fft_lengths} "
            f"needs trailing axes of sizes {expected}, but got {x.str_short()}. "
            "funcdiff.numpy.fft crops or zero-pads to n= / s= before transforming.")
    return _out_aval(x, fft_type, fft_lengths)


def _half_spectrum_weights(n: int, dtype: np.dtype, inverse: bool) -> np.ndarray:
    """1 at the zero and Nyquist frequencies, 1/2 (2 if ``inverse``) at the others,
    over the ``n // 2 + 1`` retained frequencies."""
    w = np.full(n // 2 + 1, 2.0 if inverse else 0.5)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w.astype(dtype)


def _fft_transpose(ct, x, *, fft_type, fft_lengths, norm):
    if fft_type in ("FFT", "IFFT"):
        return [fft(ct, fft_type=fft_type, fft_lengths=fft_lengths, norm=norm)]
    dual = _DUAL_NORM[norm]
    if fft_type == "RFFT":
        w = _half_spectrum_weights(fft_lengths[-1], get_aval(ct).dtype, inverse=False)
        spectrum = ew.mul(complex_ops.conj(ct), w)
        return [fft(spectrum, fft_type="IRFFT", fft_lengths=fft_lengths, norm=dual)]
    spectrum = fft(ct, fft_type="RFFT", fft_lengths=fft_lengths, norm=dual)
    w = _half_spectrum_weights(fft_lengths[-1], get_aval(spectrum).dtype, inverse=True)
    return [ew.mul(complex_ops.conj(spectrum), w)]


def _fft_batch(vals, dims, *, fft_type, fft_lengths, norm):
    (x,), (d,) = vals, dims
    if d >= get_aval(x).ndim - len(fft_lengths):  # the batch axis is among the transformed
        x, d = structural.moveaxis(x, d, 0), 0
    return fft(x, fft_type=fft_type, fft_lengths=fft_lengths, norm=norm), d


def _fft_cost(x, *, fft_type, fft_lengths, norm):
    # the usual estimate: 5 N log2 N flops per complex transform of N points, half for real
    points = math.prod(fft_lengths)
    batch = x.size // max(math.prod(x.shape[x.ndim - len(fft_lengths):]), 1)
    per_transform = 5 * points * max(math.log2(points), 1)
    if fft_type in ("RFFT", "IRFFT"):
        per_transform /= 2
    out = _out_aval(x, fft_type, fft_lengths)
    return {"flops": int(batch * per_transform), "bytes": nbytes(x) + nbytes(out)}


fft_p.impl = _fft_impl
fft_p.abstract_eval = _fft_abstract_eval
deflinear(fft_p, _fft_transpose)
fft_p.batch = _fft_batch
fft_p.cost = _fft_cost


def fft(x, *, fft_type: str, fft_lengths: tuple, norm: str = "backward"):
    """Discrete Fourier transform of the trailing ``len(fft_lengths)`` axes of ``x``.

    Args:
      x: complex for FFT, IFFT and IRFFT (for IRFFT the last axis holds
        ``fft_lengths[-1] // 2 + 1`` frequencies); floating for RFFT.
      fft_type: "FFT", "IFFT", "RFFT" or "IRFFT".
      fft_lengths: sizes of the transformed trailing axes (of the real signal
        for RFFT and IRFFT).
      norm: "backward" (numpy's default: the inverse divides by N), "ortho"
        or "forward".

    Returns:
      The transform, as ``numpy.fft.fftn`` / ``ifftn`` / ``rfftn`` / ``irfftn``
      over those axes would compute it.

    Raises:
      ShapeError, DTypeError, InvalidArgumentError: on mismatched shapes,
      dtypes or params.

    >>> x = np.array([1.0, 2.0, 0.0, -1.0])
    >>> fft(x, fft_type="RFFT", fft_lengths=(4,))
    array([2.+0.j, 1.-3.j, 0.+0.j])
    """
    return bind(fft_p, x, fft_type=fft_type, fft_lengths=tuple(fft_lengths), norm=norm)


__all__ = ["fft", "fft_p", "FFT_TYPES", "NORMS"]
