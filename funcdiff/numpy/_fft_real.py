"""The real-signal transforms of funcdiff.numpy.fft: rfft, irfft, hfft, ihfft and kin.

``rfft`` keeps the ``n // 2 + 1`` non-negative frequencies of a real signal
and ``irfft`` maps such a half spectrum back to a real signal (``rfft2``,
``rfftn``, ``irfft2``, ``irfftn`` over several axes); ``hfft`` and ``ihfft``
are the same maps for a Hermitian-symmetric spectrum, with a conjugation and
the opposite normalisation. All lower through ``transform`` of
``_fft_complex``. ``funcdiff.numpy.fft`` re-exports them.
"""

from __future__ import annotations

from funcdiff import dtypes
from funcdiff.core import get_aval
from funcdiff.numpy._fft_arguments import SWAPPED, array, _norm, reject_out
from funcdiff.numpy._fft_complex import one_axis, transform
from funcdiff.primitives import complex_ops


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
    reject_out("rfft", out)
    return transform("rfft", a, *one_axis(n, axis), norm, "RFFT")


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
    reject_out("irfft", out)
    return transform("irfft", a, *one_axis(n, axis), norm, "IRFFT")


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """Transform of a Hermitian-symmetric signal given by its first half: real
    output of length ``n`` (``numpy.fft.hfft``; ``irfft(conj(a))`` with the
    opposite normalisation).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.hfft(np.array([1.0, 2.0, 3.0]))
    array([ 8., -2.,  0., -2.])
    """
    reject_out("hfft", out)
    a = array("hfft", a)
    if dtypes.is_complex(get_aval(a).dtype):
        a = complex_ops.conj(a)
    return transform("hfft", a, *one_axis(n, axis), SWAPPED[_norm("hfft", norm)], "IRFFT")


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of ``hfft`` for real input: ``conj(rfft(a))`` with the opposite
    normalisation (``numpy.fft.ihfft``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.ihfft(np.array([8.0, -2.0, 0.0, -2.0]))
    array([1.-0.j, 2.-0.j, 3.-0.j])
    """
    reject_out("ihfft", out)
    spectrum = transform("ihfft", a, *one_axis(n, axis), SWAPPED[_norm("ihfft", norm)],
                          "RFFT")
    return complex_ops.conj(spectrum)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional transform of real input (``numpy.fft.rfftn``): ``rfft`` over
    the last of ``axes``, then ``fft`` over the others; arguments as for ``fftn``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.fft.rfftn(np.ones((2, 4))).shape
    (2, 3)
    """
    reject_out("rfftn", out)
    return transform("rfftn", a, s, axes, norm, "RFFT")


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """Inverse of ``rfftn`` (``numpy.fft.irfftn``): ``s`` gives the real output's
    sizes (default: the input's, with ``2 * (m - 1)`` on the last axis).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)
    >>> np.allclose(fnp.fft.irfftn(fnp.fft.rfftn(x), s=x.shape), x)
    True
    """
    reject_out("irfftn", out)
    return transform("irfftn", a, s, axes, norm, "IRFFT")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional transform of real input: ``rfftn`` over ``axes``."""
    reject_out("rfft2", out)
    return transform("rfft2", a, s, axes, norm, "RFFT")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Inverse of ``rfft2``: ``irfftn`` over ``axes``."""
    reject_out("irfft2", out)
    return transform("irfft2", a, s, axes, norm, "IRFFT")
