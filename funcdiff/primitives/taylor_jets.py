"""Truncated Taylor series of a few variables, in numpy, for the impls of shape derivatives.

- A ``Jet`` holds the Taylor coefficients ``c[alpha]`` of a function of k
  variables around a point, for the multi-indices ``alpha <= top``
  (componentwise): exactly the coefficients that the partial derivative of
  multi-order ``top`` needs, and a set closed under products. Each
  coefficient is a numpy array over the elements.
- Arithmetic (``+``, ``-``, ``*``, ``/``, ``exp``, ``log``) on Jets is the
  arithmetic of the series, so running a series or a continued fraction on
  Jets differentiates it in forward mode, to any order (Boik and Robison-Cox,
  "Derivatives of the incomplete beta function", J. Stat. Software 3, 1998, do
  this for the continued fraction of the incomplete beta function).
- ``derivative()`` is the coefficient at ``top`` times ``top!``.

Only impls use this module (it is numpy, not funcdiff operations).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Callable

import numpy as np


class Box:
    """The multi-indices alpha <= top in lexicographic order (every alpha - beta,
    beta <= alpha, comes before alpha) and, for each, the pairs (beta, alpha - beta)."""

    __slots__ = ("top", "indices", "pairs")

    def __init__(self, top: tuple[int, ...]):
        self.top = top
        self.indices = list(itertools.product(*(range(n + 1) for n in top)))
        position = {alpha: i for i, alpha in enumerate(self.indices)}
        self.pairs = [[(position[beta], position[tuple(a - b for a, b in zip(alpha, beta))])
                       for beta in itertools.product(*(range(a + 1) for a in alpha))]
                      for alpha in self.indices]


@functools.lru_cache(maxsize=None)
def box(top: tuple[int, ...]) -> Box:
    return Box(top)


def _first_nonzero(alpha):
    return next(v for v, a in enumerate(alpha) if a)


class Jet:
    """A truncated Taylor series: ``coeffs[i]`` multiplies eps**box.indices[i] (no factorials)."""

    __slots__ = ("box", "coeffs")

    def __init__(self, box: Box, coeffs: list):
        self.box, self.coeffs = box, coeffs

    # --- construction ---------------------------------------------------------------

    @classmethod
    def constant(cls, b: Box, value) -> "Jet":
        value = np.asarray(value, np.float64)
        zero = np.zeros_like(value)
        return cls(b, [value] + [zero] * (len(b.indices) - 1))

    @classmethod
    def variable(cls, b: Box, value, v: int) -> "Jet":
        """``value + eps_v`` (a constant when top[v] is 0)."""
        return cls.of_sum(b, lambda n: value if n == 0 else np.ones_like(value) if n == 1
                          else np.zeros_like(value), (v,))

    @classmethod
    def of_sum(cls, b: Box, derivative: Callable[[int], np.ndarray],
               variables: tuple[int, ...]) -> "Jet":
        """``f(c + sum of eps_v over variables)`` from ``derivative(n)``, the n-th
        derivative of f at c: the coefficient at alpha is f^(|alpha|)(c) / alpha!."""
        cache: dict[int, np.ndarray] = {}
        value = np.asarray(derivative(0), np.float64)
        zero = np.zeros_like(value)
        coeffs = []
        for alpha in b.indices:
            if any(a and v not in variables for v, a in enumerate(alpha)):
                coeffs.append(zero)
                continue
            n = sum(alpha)
            if n not in cache:
                cache[n] = value if n == 0 else np.asarray(derivative(n), np.float64)
            coeffs.append(cache[n] / math.prod(math.factorial(a) for a in alpha))
        return cls(b, coeffs)

    # --- reading ---------------------------------------------------------------------

    @property
    def value(self) -> np.ndarray:
        return self.coeffs[0]

    def derivative(self) -> np.ndarray:
        """The partial derivative of multi-order ``top``."""
        return self.coeffs[-1] * math.prod(math.factorial(n) for n in self.box.top)

    def take(self, index) -> "Jet":
        return Jet(self.box, [c[index] for c in self.coeffs])

    # --- arithmetic --------------------------------------------------------------------

    def _lift(self, other) -> "Jet":
        return other if isinstance(other, Jet) else Jet.constant(self.box, other)

    def __add__(self, other):
        if not isinstance(other, Jet):
            return Jet(self.box, [self.coeffs[0] + other] + self.coeffs[1:])
        return Jet(self.box, [x + y for x, y in zip(self.coeffs, other.coeffs)])

    __radd__ = __add__

    def __neg__(self):
        return Jet(self.box, [-x for x in self.coeffs])

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return (-self) + other

    def scale(self, factor) -> "Jet":
        """Every coefficient times the plain array ``factor``."""
        return Jet(self.box, [x * factor for x in self.coeffs])

    def __mul__(self, other):
        if not isinstance(other, Jet):
            return self.scale(other)
        a, b = self.coeffs, other.coeffs
        return Jet(self.box, [sum(a[j] * b[k] for j, k in pairs) for pairs in self.box.pairs])

    __rmul__ = __mul__

    def reciprocal(self) -> "Jet":
        b = self.coeffs
        inv = 1.0 / b[0]
        r = [inv]
        for pairs in self.box.pairs[1:]:
            r.append(-inv * sum(b[j] * r[k] for j, k in pairs[1:]))
        return Jet(self.box, r)

    def __truediv__(self, other):
        if not isinstance(other, Jet):
            return self.scale(1.0 / np.asarray(other))
        return self * other.reciprocal()

    def __rtruediv__(self, other):
        return self.reciprocal() * other

    def exp(self) -> "Jet":
        # d_v exp(h) = exp(h) d_v h: alpha_v E[alpha] = sum beta_v H[beta] E[alpha - beta]
        h, indices = self.coeffs, self.box.indices
        e = [np.exp(h[0])]
        for i, pairs in enumerate(self.box.pairs[1:], 1):
            v = _first_nonzero(indices[i])
            total = sum(indices[j][v] * h[j] * e[k] for j, k in pairs if indices[j][v])
            e.append(total / indices[i][v])
        return Jet(self.box, e)

    def log(self) -> "Jet":
        # d_v b = b d_v log(b), solved for the newest coefficient of log(b)
        b, indices = self.coeffs, self.box.indices
        out = [np.log(b[0])]
        for i, pairs in enumerate(self.box.pairs[1:], 1):
            alpha = indices[i]
            v = _first_nonzero(alpha)
            rest = sum((alpha[v] - indices[j][v]) * out[k] * b[j] for j, k in pairs[1:-1])
            out.append((alpha[v] * b[i] - rest) / (alpha[v] * b[0]))
        return Jet(self.box, out)

    def max_abs_ratio(self, other: "Jet") -> np.ndarray:
        """max over coefficients of |self| / |other| (0 / 0 counts as 0): a convergence test."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = [np.where(x == 0, 0.0, np.abs(x) / np.abs(y))
                      for x, y in zip(self.coeffs, other.coeffs)]
        return functools.reduce(np.maximum, ratios)
