"""funcdiff.numpy.fft: numpy's discrete Fourier transforms, differentiable.

``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft`` and their 2-d and
n-d forms take numpy's arguments (``n``/``s`` crop or zero-pad, ``axis``/
``axes``, ``norm`` in None/"backward", "ortho", "forward") and compute what
``numpy.fft`` computes (float32 in, complex64 out, as in numpy 2), with one
``fft`` primitive per call (``funcdiff.primitives.fft``). ``fftshift``,
``ifftshift``, ``fftfreq`` and ``rfftfreq`` complete the namespace.

The implementation lives in one private module per concept: argument handling
(``n``/``s``, ``axes``, ``norm``, dtypes) in ``_fft_arguments``, the complex
transforms and the lowering every transform shares in ``_fft_complex``, the
real-signal transforms (``rfft``, ``irfft``, ``hfft``, ``ihfft`` and their
2-d and n-d forms) in ``_fft_real``, and the shifts and sample frequencies in
``_fft_frequencies``. This module re-exports their public names.

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

from funcdiff.numpy._fft_arguments import FFTNormError
from funcdiff.numpy._fft_complex import fft, fft2, fftn, ifft, ifft2, ifftn
from funcdiff.numpy._fft_frequencies import fftfreq, fftshift, ifftshift, rfftfreq
from funcdiff.numpy._fft_real import (hfft, ihfft, irfft, irfft2, irfftn, rfft, rfft2,
                                      rfftn)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq",
           "FFTNormError"]
