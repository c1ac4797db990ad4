"""The six bases of numpy.polynomial as data: their recurrences and their linear maps.

- A ``Basis`` names its numpy module and function prefix and states its
  three-term recurrence ``P[k+1] = (a(k) x + b(k)) P[k] - g(k) P[k-1]``
  (with ``P[0] = 1`` and ``P[1] = a(0) x + b(0)``), from which evaluation
  (Clenshaw's rule) and the pseudo-Vandermonde matrix follow.
- The maps that are linear in the coefficients (derivative, antiderivative,
  multiplication by ``x``, the change to and from the power basis) and the
  bilinear product are static matrices, built once per size by applying
  numpy's own function to the unit coefficient vectors, and cached; funcdiff
  applies them with ``tensordot``, so they trace, batch and differentiate.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import numpy.polynomial as npp


class Basis:
    """One family of orthogonal (or power) polynomials, as numpy.polynomial defines it."""

    __slots__ = ("module", "prefix", "a", "b", "g")

    def __init__(self, module: str, prefix: str, a: Callable[[int], float],
                 b: Callable[[int], float], g: Callable[[int], float]):
        self.module, self.prefix = module, prefix
        self.a, self.b, self.g = a, b, g

    def numpy_function(self, name: str) -> Callable:
        """numpy's function ``<prefix><name>`` of this basis (``chebder``, ...)."""
        return getattr(getattr(npp, self.module), self.prefix + name)

    def public_name(self, name: str) -> str:
        return f"funcdiff.numpy.polynomial.{self.module}.{self.prefix}{name}"

    def __repr__(self) -> str:
        return f"Basis({self.module})"


# The recurrences (Abramowitz and Stegun 22.7): P[k+1] = (a(k) x + b(k)) P[k] - g(k) P[k-1].
POWER = Basis("polynomial", "poly", lambda k: 1.0, lambda k: 0.0, lambda k: 0.0)
CHEBYSHEV = Basis("chebyshev", "cheb", lambda k: 1.0 if k == 0 else 2.0, lambda k: 0.0,
                  lambda k: 1.0)
LEGENDRE = Basis("legendre", "leg", lambda k: (2 * k + 1) / (k + 1), lambda k: 0.0,
                 lambda k: k / (k + 1))
HERMITE = Basis("hermite", "herm", lambda k: 2.0, lambda k: 0.0, lambda k: 2.0 * k)
HERMITE_E = Basis("hermite_e", "herme", lambda k: 1.0, lambda k: 0.0, lambda k: float(k))
LAGUERRE = Basis("laguerre", "lag", lambda k: -1.0 / (k + 1), lambda k: (2 * k + 1) / (k + 1),
                 lambda k: k / (k + 1))
BASES = (POWER, CHEBYSHEV, LEGENDRE, HERMITE, HERMITE_E, LAGUERRE)


def _padded(values: np.ndarray, length: int) -> np.ndarray:
    """numpy trims trailing zero coefficients; the matrices need every column the same length."""
    out = np.zeros(length)
    out[:min(length, len(values))] = values[:length]
    return out


def _columns(fn: Callable[[np.ndarray], np.ndarray], n: int, length: int) -> np.ndarray:
    """The ``(length, n)`` matrix whose column ``j`` is ``fn`` of the ``j``-th unit vector."""
    return np.stack([_padded(np.asarray(fn(np.eye(n)[j]), float), length) for j in range(n)],
                    axis=1)


@functools.lru_cache(maxsize=None)
def derivative_matrix(basis: Basis, n: int, m: int) -> np.ndarray:
    """``(max(n - m, 1), n)``: the coefficients of the ``m``-th derivative."""
    der = basis.numpy_function("der")
    return _columns(lambda e: der(e, m), n, max(n - m, 1))


@functools.lru_cache(maxsize=None)
def integral_matrix(basis: Basis, n: int) -> np.ndarray:
    """``(n + 1, n)``: the antiderivative that vanishes at 0."""
    return _columns(basis.numpy_function("int"), n, n + 1)


@functools.lru_cache(maxsize=None)
def mulx_matrix(basis: Basis, n: int) -> np.ndarray:
    """``(n + 1, n)``: the coefficients of ``x`` times the series."""
    return _columns(basis.numpy_function("mulx"), n, n + 1)


@functools.lru_cache(maxsize=None)
def product_tensor(basis: Basis, n1: int, n2: int) -> np.ndarray:
    """``(n1 + n2 - 1, n1, n2)``: entry ``[k, i, j]`` is coefficient ``k`` of ``P[i] P[j]``."""
    mul = basis.numpy_function("mul")
    eye1, eye2 = np.eye(n1), np.eye(n2)
    return np.stack([np.stack([_padded(mul(eye1[i], eye2[j]), n1 + n2 - 1) for j in range(n2)],
                              axis=1) for i in range(n1)], axis=1)


@functools.lru_cache(maxsize=None)
def to_power_matrix(basis: Basis, n: int) -> np.ndarray:
    """``(n, n)``: power-series coefficients of a series in ``basis``."""
    return _columns(getattr(getattr(npp, basis.module), f"{basis.prefix}2poly"), n, n)


@functools.lru_cache(maxsize=None)
def from_power_matrix(basis: Basis, n: int) -> np.ndarray:
    """``(n, n)``: coefficients in ``basis`` of a power series."""
    return _columns(getattr(getattr(npp, basis.module), f"poly2{basis.prefix}"), n, n)


@functools.lru_cache(maxsize=None)
def line_vectors(basis: Basis) -> tuple[np.ndarray, np.ndarray]:
    """The coefficients of the series ``1`` and ``x`` (numpy's ``line(1, 0)``, ``line(0, 1)``)."""
    line = basis.numpy_function("line")
    return _padded(line(1.0, 0.0), 2), _padded(line(0.0, 1.0), 2)
