"""numpy's window functions: hamming, hanning, bartlett, blackman.

A window depends only on its length ``M``, a Python int that fixes the shape,
so it is a float64 constant computed from ``M`` alone (numpy's formulas, as
numpy arrays: constants need no primitive). ``M < 1`` gives an empty window
and ``M == 1`` the window ``[1.]``, as in numpy. ``kaiser`` is not provided:
it needs the modified Bessel function ``i0``, which funcdiff.numpy does not
have yet.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError
from funcdiff.numpy import _util


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


__all__ = ["hamming", "hanning", "bartlett", "blackman"]
