"""numpy's window functions: hamming, hanning, bartlett, blackman, kaiser.

The shape of a window is fixed by its length ``M``, a Python int. The cosine
and triangular windows depend on ``M`` alone, so they are float64 constants
computed from it (numpy's formulas, as numpy arrays: constants need no
primitive). The Kaiser window also depends on its shape parameter ``beta``,
which may be traced: it is built from ``i0``'s primitive with numpy's
formula, so its values are numpy's bit for bit and it is differentiable in
``beta``. ``M < 1`` gives an empty window and ``M == 1`` the window ``[1.]``,
as in numpy.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.numpy._ufunc_support import F64, _array, cast
from funcdiff.primitives import elementwise as ew


def _length(M: Any, name: str) -> int:
    """``M`` as a Python int (a traced value with a concrete value is read)."""
    if isinstance(M, Tracer):
        return _util.static_count(M, name, "M", "the number of points of the window")
    try:
        if isinstance(M, (bool, np.bool_)):
            raise TypeError
        return operator.index(M)
    except TypeError:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name}: M is the number of points of the window and must be a "
            f"Python int, got {M!r}.") from None


def _window(name: str, M: Any, formula: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    M = _length(M, name)
    if M < 1:
        return np.zeros(0)
    if M == 1:
        return np.ones(1)
    return formula(np.arange(M, dtype=np.float64), M)


def _cosine_sum(*coefficients: float) -> Callable[[np.ndarray, int], np.ndarray]:
    """The window ``sum_k (-1)^k a_k cos(2 pi k n / (M - 1))``."""
    def formula(n: np.ndarray, M: int) -> np.ndarray:
        phase = 2.0 * np.pi * n / (M - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))
    return formula


def hamming(M):
    """The Hamming window of ``M`` points, ``0.54 - 0.46 cos(2 pi n / (M - 1))`` (numpy.hamming).

    >>> import funcdiff.numpy as fnp
    >>> fnp.hamming(3)
    array([0.08, 1.  , 0.08])
    """
    return _window("hamming", M, _cosine_sum(0.54, 0.46))


def hanning(M):
    """The Hann window of ``M`` points, ``0.5 - 0.5 cos(2 pi n / (M - 1))`` (numpy.hanning).

    >>> import funcdiff.numpy as fnp
    >>> fnp.hanning(3)
    array([0., 1., 0.])
    """
    return _window("hanning", M, _cosine_sum(0.5, 0.5))


def blackman(M):
    """The Blackman window of ``M`` points (numpy.blackman).

    ``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``.

    >>> import funcdiff.numpy as fnp
    >>> fnp.blackman(3).round(12)
    array([-0.,  1., -0.])
    """
    return _window("blackman", M, _cosine_sum(0.42, 0.5, 0.08))


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points, zero at both ends (numpy.bartlett).

    >>> import funcdiff.numpy as fnp
    >>> fnp.bartlett(5)
    array([0. , 0.5, 1. , 0.5, 0. ])
    """
    return _window("bartlett", M, lambda n, M: 1.0 - np.abs(2.0 * n / (M - 1) - 1.0))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (numpy.kaiser).

    ``i0(beta * sqrt(1 - (2 n / (M - 1) - 1)**2)) / i0(beta)`` for n = 0 ... M - 1,
    with numpy's operations in numpy's order, so the values are numpy's bit for
    bit. The window is float64, as numpy's, and differentiable in ``beta``,
    which may be traced (numpy.kaiser itself cannot take a traced ``beta``: it
    converts it with numpy.array; call funcdiff.numpy.kaiser).

    Args:
      M: the number of points, a Python int.
      beta: a real scalar (0-d); 0 gives the rectangular window, larger values
        narrow the window.

    Returns:
      A float64 array of shape ``(max(M, 0),)``.

    Raises:
      InvalidArgumentError: if ``M`` is not an int or ``beta`` is not a scalar.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> fnp.kaiser(4, 5.0)
    array([0.03671089, 0.7753221 , 0.7753221 , 0.03671089])
    >>> round(float(fd.grad(lambda b: fnp.kaiser(3, b)[0])(2.0)), 6)  # -I1(2) / I0(2)**2
    -0.306097
    """
    M = _length(M, "kaiser")
    beta = _array("kaiser", beta)
    if get_aval(beta).shape != () or beta.dtype.kind not in "biuf":
        raise InvalidArgumentError(
            f"funcdiff.numpy.kaiser: beta must be a real scalar, got {get_aval(beta).str_short()}"
            "; make one window per beta (e.g. with fd.vmap over beta).")
    if M < 1:
        return np.zeros(0)
    if M == 1:
        return np.ones(1)
    beta = cast(beta, F64)
    n = np.arange(M, dtype=np.float64)
    alpha = (M - 1) / 2.0
    radius = np.sqrt(1 - ((n - alpha) / alpha) ** 2.0)  # a constant of M alone
    return ew.div(ew.bessel_i0(ew.mul(beta, radius)), ew.bessel_i0(beta))


__all__ = ["hamming", "hanning", "bartlett", "blackman", "kaiser"]
