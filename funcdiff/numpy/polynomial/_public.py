"""The public functions of one basis module, made from ``_series`` with numpy's names.

``functions(basis)`` returns a namespace of functions named as numpy names
them (``chebval``, ``chebder``, ...), each with a docstring written for its
basis and a runnable example that compares it with numpy and differentiates
it. The six modules of the package bind these names explicitly.
"""

from __future__ import annotations

import types
from typing import Any

from funcdiff.numpy.polynomial import _basis, _series
from funcdiff.numpy.polynomial._basis import POWER, Basis

KIND = {"polynomial": "power", "chebyshev": "Chebyshev", "legendre": "Legendre",
        "hermite": "Hermite (physicists')", "hermite_e": "Hermite (probabilists', He)",
        "laguerre": "Laguerre"}

_SETUP = """    >>> import numpy as np, funcdiff as fd
    >>> from funcdiff.numpy.polynomial import {module} as S
    >>> N = np.polynomial.{module}
"""

DOCS = {
    "val": """Evaluate the {kind} series ``c`` at ``x`` ({np}val).

    Args:
      x: the points: a number, or an array or tracer of any shape (lists and
        tuples become arrays).
      c: the coefficients, lowest degree first along axis 0; further axes hold
        several series.
      tensor: for an array ``x`` and ``c`` of rank above 1, evaluate every
        series at every point (shape ``c.shape[1:] + x.shape``); with False,
        ``x`` broadcasts against ``c.shape[1:]``.

    Returns:
      The values, differentiable in ``x`` and in ``c``. Unlike numpy's, which
      takes the scalar path for anything that is not an ``ndarray``, this
      function treats a traced ``x`` as the array it stands for.

    Raises:
      ShapeError: for an empty ``c``.

{setup}    >>> c, x = np.array([[1., 2.], [3., 4.], [5., 6.]]), np.array([0.5, -1., 2.])
    >>> bool(np.allclose(S.{prefix}val(x, c), N.{prefix}val(x, c)))
    True
    >>> g = fd.grad(lambda x: S.{prefix}val(x, c).sum())(x)     # d/dx of both series
    >>> bool(np.allclose(g, N.{prefix}val(x, N.{prefix}der(c)).sum(0)))
    True
    """,
    "val2d": """Evaluate the 2-D {kind} series ``c`` at the points ``(x[i], y[i])`` ({np}val2d).

    Args:
      x, y: the coordinates, one shape (numbers, arrays or tracers).
      c: coefficients ``c[i, j]`` of ``P_i(x) P_j(y)``; further axes hold several series.

    Returns:
      ``c.shape[2:] + x.shape`` values, differentiable in ``x``, ``y`` and ``c``.

    Raises:
      ShapeError: when ``x`` and ``y`` differ in shape or ``c`` has fewer than 2 axes.

{setup}    >>> c, x, y = np.arange(6.).reshape(2, 3), np.array([0.5, 1.]), np.array([2., -1.])
    >>> bool(np.allclose(S.{prefix}val2d(x, y, c), N.{prefix}val2d(x, y, c)))
    True
    """,
    "val3d": """Evaluate the 3-D {kind} series ``c`` at the points ``(x[i], y[i], z[i])`` ({np}val3d).

    Args:
      x, y, z: the coordinates, one shape.
      c: coefficients ``c[i, j, k]`` of ``P_i(x) P_j(y) P_k(z)``.

    Returns:
      ``c.shape[3:] + x.shape`` values, differentiable in every argument.

    Raises:
      ShapeError: when the coordinates differ in shape or ``c`` has fewer than 3 axes.

{setup}    >>> c, x = np.arange(8.).reshape(2, 2, 2), np.array([0.5, 1.])
    >>> bool(np.allclose(S.{prefix}val3d(x, x, -x, c), N.{prefix}val3d(x, x, -x, c)))
    True
    """,
    "grid2d": """Evaluate the 2-D {kind} series ``c`` on the Cartesian product of ``x`` and ``y`` ({np}grid2d).

    Args:
      x, y: the coordinates along each axis (numbers, arrays or tracers, any shapes).
      c: coefficients ``c[i, j]`` of ``P_i(x) P_j(y)``.

    Returns:
      ``c.shape[2:] + x.shape + y.shape`` values, differentiable in ``x``, ``y``
      and ``c`` (numpy's takes the scalar path for a traced ``y`` and computes
      another function).

{setup}    >>> c, x, y = np.arange(6.).reshape(2, 3), np.array([0.5, 1.]), np.array([2., -1.])
    >>> bool(np.allclose(S.{prefix}grid2d(x, y, c), N.{prefix}grid2d(x, y, c)))
    True
    """,
    "grid3d": """Evaluate the 3-D {kind} series ``c`` on the Cartesian product of ``x``, ``y``, ``z`` ({np}grid3d).

    Args:
      x, y, z: the coordinates along each axis.
      c: coefficients ``c[i, j, k]``.

    Returns:
      ``c.shape[3:] + x.shape + y.shape + z.shape`` values, differentiable in every argument.

{setup}    >>> c, x = np.arange(8.).reshape(2, 2, 2), np.array([0.5, 1.])
    >>> bool(np.allclose(S.{prefix}grid3d(x, x, -x, c), N.{prefix}grid3d(x, x, -x, c)))
    True
    """,
    "vander": """The pseudo-Vandermonde matrix of the {kind} basis ({np}vander).

    Args:
      x: the points, any shape (a number counts as one point).
      deg: the highest degree, a concrete int >= 0 (it fixes the shape).

    Returns:
      ``x.shape + (deg + 1,)``: entry ``[..., i]`` is ``P_i(x)``, so
      ``vander(x, deg) @ c == val(x, c)``. Differentiable in ``x``.

    Raises:
      InvalidArgumentError, ConcretizationError: for a negative, non-integer or abstract ``deg``.

{setup}    >>> x = np.array([0.5, -1., 2.])
    >>> bool(np.allclose(S.{prefix}vander(x, 3), N.{prefix}vander(x, 3)))
    True
    """,
    "vander2d": """The 2-D pseudo-Vandermonde matrix of the {kind} basis ({np}vander2d).

    Args:
      x, y: the coordinates, one shape.
      deg: ``[x_deg, y_deg]``, concrete ints.

    Returns:
      ``x.shape + ((x_deg + 1) * (y_deg + 1),)``: column ``(y_deg + 1) i + j``
      holds ``P_i(x) P_j(y)``. Differentiable in ``x`` and ``y``.

{setup}    >>> x, y = np.array([0.5, -1.]), np.array([2., 0.25])
    >>> bool(np.allclose(S.{prefix}vander2d(x, y, [2, 1]), N.{prefix}vander2d(x, y, [2, 1])))
    True
    """,
    "vander3d": """The 3-D pseudo-Vandermonde matrix of the {kind} basis ({np}vander3d).

    Args:
      x, y, z: the coordinates, one shape.
      deg: ``[x_deg, y_deg, z_deg]``, concrete ints.

    Returns:
      ``x.shape + (prod(deg + 1),)``, differentiable in the coordinates.

{setup}    >>> x = np.array([0.5, -1.])
    >>> bool(np.allclose(S.{prefix}vander3d(x, x, x, [1, 2, 1]), N.{prefix}vander3d(x, x, x, [1, 2, 1])))
    True
    """,
    "der": """The ``m``-th derivative of a {kind} series ({np}der).

    Args:
      c: coefficients, lowest degree first along ``axis``.
      m: the order, a concrete int >= 0.
      scl: each differentiation multiplies by ``scl`` (for a change of
        variable); may be traced.
      axis: the axis of the coefficients.

    Returns:
      ``max(len - m, 1)`` coefficients along ``axis``, differentiable in ``c``
      and ``scl``.

    Raises:
      InvalidArgumentError, ConcretizationError: for a bad or abstract ``m``.

{setup}    >>> c = np.array([1., 2., 3., 4.])
    >>> bool(np.allclose(S.{prefix}der(c, 2, scl=0.5), N.{prefix}der(c, 2, scl=0.5)))
    True
    """,
    "int": """The ``m``-th antiderivative of a {kind} series ({np}int).

    Each integration multiplies by ``scl`` and adds the constant that makes
    the antiderivative equal ``k[i]`` at ``lbnd``, as numpy does.

    Args:
      c: coefficients, lowest degree first along ``axis``.
      m: the order, a concrete int >= 0.
      k: up to ``m`` integration constants (a scalar or a sequence; missing
        ones are zero).
      lbnd: the lower bound of the integrals, a scalar.
      scl: the factor of each integration.
      axis: the axis of the coefficients.

    Returns:
      ``len + m`` coefficients along ``axis``, differentiable in ``c``, ``k``,
      ``lbnd`` and ``scl``.

    Raises:
      ShapeError: for more than ``m`` constants or a non-scalar ``lbnd``/``scl``.

{setup}    >>> c = np.array([1., 2., 3.])
    >>> bool(np.allclose(S.{prefix}int(c, 2, k=[1., 2.], lbnd=0.5), N.{prefix}int(c, 2, k=[1., 2.], lbnd=0.5)))
    True
    """,
    "add": """The sum of two {kind} series ({np}add).

    Args:
      c1, c2: 1-D coefficients, lowest degree first.

    Returns:
      ``max(len(c1), len(c2))`` coefficients. numpy drops trailing zeros of
      the result (a length that depends on the values); funcdiff keeps them.

{setup}    >>> bool(np.allclose(S.{prefix}add([1., 2.], [3., 4., 5.]), N.{prefix}add([1., 2.], [3., 4., 5.])))
    True
    """,
    "sub": """The difference ``c1 - c2`` of two {kind} series ({np}sub).

    Args:
      c1, c2: 1-D coefficients, lowest degree first.

    Returns:
      ``max(len(c1), len(c2))`` coefficients (trailing zeros kept, see ``{prefix}add``).

{setup}    >>> bool(np.allclose(S.{prefix}sub([1., 2.], [3., 4., 5.]), N.{prefix}sub([1., 2.], [3., 4., 5.])))
    True
    """,
    "mul": """The product of two {kind} series ({np}mul).

    Args:
      c1, c2: 1-D coefficients, lowest degree first.

    Returns:
      ``len(c1) + len(c2) - 1`` coefficients, bilinear in ``c1`` and ``c2``
      (trailing zeros kept, see ``{prefix}add``).

{setup}    >>> bool(np.allclose(S.{prefix}mul([1., 2.], [3., 4., 5.]), N.{prefix}mul([1., 2.], [3., 4., 5.])))
    True
    """,
    "mulx": """The {kind} series ``c`` multiplied by ``x`` ({np}mulx).

    Args:
      c: 1-D coefficients, lowest degree first.

    Returns:
      ``len(c) + 1`` coefficients, linear in ``c``.

{setup}    >>> bool(np.allclose(S.{prefix}mulx([1., 2., 3.]), N.{prefix}mulx([1., 2., 3.])))
    True
    """,
    "div": """The quotient and remainder of two {kind} series ({np}div).

    Args:
      c1: the dividend, 1-D coefficients, lowest degree first.
      c2: the divisor; its last coefficient should be non-zero.

    Returns:
      ``(quo, rem)``: ``len(c1) - len(c2) + 1`` quotient coefficients and the
      ``len(c2) - 1`` of the remainder (numpy drops its trailing zeros;
      funcdiff keeps them). Differentiable in both.

{setup}    >>> q, r = S.{prefix}div([1., 2., 3., 4.], [1., 2.])
    >>> nq, nr = N.{prefix}div([1., 2., 3., 4.], [1., 2.])
    >>> bool(np.allclose(q, nq) and np.allclose(r, nr))
    True
    """,
    "pow": """The {kind} series ``c`` raised to the power ``pow`` ({np}pow).

    Args:
      c: 1-D coefficients, lowest degree first.
      pow: a concrete int >= 0.
      maxpower: the largest ``pow`` allowed (numpy's guard against huge results).

    Returns:
      ``pow * (len(c) - 1) + 1`` coefficients (``[1.]`` for ``pow=0``).

    Raises:
      InvalidArgumentError: for ``pow`` above ``maxpower``.

{setup}    >>> bool(np.allclose(S.{prefix}pow([1., 2.], 3), N.{prefix}pow([1., 2.], 3)))
    True
    """,
    "fromroots": """The {kind} series of the monic polynomial with the given roots ({np}fromroots).

    Args:
      roots: a 1-D array of real roots (a scalar counts as one).

    Returns:
      ``len(roots) + 1`` coefficients, differentiable in the roots (``[1.]``
      for no roots).

{setup}    >>> r = np.array([0.5, -1., 2.])
    >>> bool(np.allclose(S.{prefix}fromroots(r), N.{prefix}fromroots(r)))
    True
    """,
    "line": """The {kind} series of the line ``off + scl * x`` ({np}line).

    Args:
      off, scl: numbers or traced scalars.

    Returns:
      Two coefficients (numpy returns one when ``scl == 0``, a length that
      depends on the value; funcdiff always returns two).

{setup}    >>> bool(np.allclose(S.{prefix}line(3., 2.), N.{prefix}line(3., 2.)))
    True
    """,
    "fit": """The least-squares fit of a {kind} series to the points ``(x, y)`` ({np}fit).

    As numpy: the pseudo-Vandermonde matrix, rows weighted by ``w``, columns
    scaled to unit norm, then ``funcdiff.numpy.linalg.lstsq``.
    Differentiable in ``x``, ``y`` and ``w`` where the rank is locally constant.

    Args:
      x: the sample points, a non-empty 1-D array.
      y: the values, shape ``(len(x),)`` or ``(len(x), k)``.
      deg: the degree (a concrete int), or a list of the degrees to fit
        (the others get zero coefficients).
      rcond: the relative cutoff of small singular values (a static number;
        default ``len(x) * eps``).
      full: also return ``[residuals, rank, singular_values, rcond]``.
      w: weights of the unsquared residuals, shaped like ``x``.

    Returns:
      The ``deg + 1`` coefficients, lowest degree first (``(deg + 1, k)`` for
      2-D ``y``); with ``full``, the pair ``(coef, [residuals, rank, s, rcond])``.

    Raises:
      ShapeError: for an ``x``, ``y`` or ``w`` of the wrong shape.

{setup}    >>> x = np.linspace(-1., 1., 7); y = x ** 3 - x
    >>> bool(np.allclose(S.{prefix}fit(x, y, 3), N.{prefix}fit(x, y, 3)))
    True
    """,
    "roots": """The roots of a {kind} series with concrete coefficients ({np}roots).

    numpy computes them as the eigenvalues of the companion matrix, which is
    not symmetric; funcdiff has eigenvalues of symmetric matrices only, so
    this function has no traced form: on concrete values it is numpy's.

    Args:
      c: 1-D coefficients, lowest degree first.

    Returns:
      numpy's roots (complex when some are).

    Raises:
      UnsupportedNumpyError: for a traced ``c`` (inside grad, jvp, vmap, jit).

{setup}    >>> bool(np.allclose(S.{prefix}roots([1., 2., 3.]), N.{prefix}roots([1., 2., 3.])))
    True
    """,
    "trim": """Drop trailing coefficients at most ``tol`` in magnitude ({np}trim), on concrete values.

    The length of the result depends on the values, so there is no traced form.

    Args:
      c: 1-D coefficients.
      tol: the threshold.

    Returns:
      numpy's trimmed coefficients.

    Raises:
      UnsupportedNumpyError: for a traced ``c``.

{setup}    >>> S.{prefix}trim([1., 2., 0., 0.])
    array([1., 2.])
    """,
    "2poly": """The power-series coefficients of a {kind} series ({np}2poly).

    Args:
      c: 1-D coefficients in the {kind} basis, lowest degree first.

    Returns:
      ``len(c)`` power-series coefficients, lowest degree first; linear in ``c``.

{setup}    >>> bool(np.allclose(S.{prefix}2poly([1., 2., 3.]), N.{prefix}2poly([1., 2., 3.])))
    True
    """,
    "poly2": """The {kind} coefficients of a power series (numpy.polynomial.{module}.poly2{prefix}).

    Args:
      pol: 1-D power-series coefficients, lowest degree first.

    Returns:
      ``len(pol)`` coefficients in the {kind} basis; linear in ``pol``.

{setup}    >>> bool(np.allclose(S.poly2{prefix}([1., 2., 3.]), N.poly2{prefix}([1., 2., 3.])))
    True
    """,
    "valfromroots": """Evaluate the polynomial with roots ``r`` at ``x`` (numpy.polynomial.polynomial.polyvalfromroots).

    ``prod(x - r[i])``. numpy's takes its scalar path for anything that is
    not an ``ndarray``, so for a traced array ``x`` it subtracts ``r``
    elementwise and computes another function; this one treats a traced ``x``
    as the array it stands for.

    Args:
      x: the points: a number, or an array or tracer of any shape.
      r: the roots along axis 0; further axes hold several polynomials.
      tensor: for an array ``x``, evaluate every polynomial at every point
        (shape ``r.shape[1:] + x.shape``); with False, ``x`` broadcasts
        against ``r.shape[1:]`` and needs fewer axes than ``r``.

    Returns:
      The values, differentiable in ``x`` and ``r``.

    Raises:
      ShapeError: with ``tensor=False``, for an ``x`` with as many axes as ``r``.

{setup}    >>> x, r = np.array([0.1, 0.3]), np.array([0.5, 0.2])
    >>> bool(np.allclose(S.polyvalfromroots(x, r), N.polyvalfromroots(x, r)))
    True
    >>> fd.grad(lambda x: S.polyvalfromroots(x, r).sum())(x)    # 2x - 0.7
    array([-0.5, -0.1])
    """,
}


def _public(fn: Any, basis: Basis, key: str, name: str) -> Any:
    module = f"funcdiff.numpy.polynomial.{basis.module}"
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__doc__ = DOCS[key].format(kind=KIND[basis.module], prefix=basis.prefix,
                                  module=basis.module, np=f"numpy.polynomial.{basis.module}.",
                                  setup=_SETUP.format(module=basis.module))
    return fn


def functions(basis: Basis) -> types.SimpleNamespace:
    """The public functions of ``basis``'s module, under their numpy names."""
    S = _series

    def val(x, c, tensor=True):
        return S.val(basis, x, c, tensor)

    def val2d(x, y, c):
        return S.valnd(basis, "val2d", c, x, y)

    def val3d(x, y, z, c):
        return S.valnd(basis, "val3d", c, x, y, z)

    def grid2d(x, y, c):
        return S.gridnd(basis, "grid2d", c, x, y)

    def grid3d(x, y, z, c):
        return S.gridnd(basis, "grid3d", c, x, y, z)

    def vander(x, deg):
        return S.vander(basis, x, deg)

    def vander2d(x, y, deg):
        return S.vandernd(basis, "vander2d", (x, y), deg)

    def vander3d(x, y, z, deg):
        return S.vandernd(basis, "vander3d", (x, y, z), deg)

    def der(c, m=1, scl=1, axis=0):
        return S.der(basis, c, m, scl, axis)

    def integ(c, m=1, k=(), lbnd=0, scl=1, axis=0):
        return S.integ(basis, c, m, k, lbnd, scl, axis)

    def add(c1, c2):
        return S.add(basis, c1, c2)

    def sub(c1, c2):
        return S.sub(basis, c1, c2)

    def mul(c1, c2):
        return S.mul(basis, c1, c2)

    def mulx(c):
        return S.mulx(basis, c)

    def div(c1, c2):
        return S.div(basis, c1, c2)

    def power(c, pow, maxpower=16):  # noqa: A002  (numpy's argument name)
        return S.power(basis, c, pow, maxpower)

    def fromroots(roots):
        return S.fromroots(basis, roots)

    def line(off, scl):
        return S.line(basis, off, scl)

    def fit(x, y, deg, rcond=None, full=False, w=None):
        return S.fit(basis, x, y, deg, rcond, full, w)

    def roots(c):
        return S.roots(basis, c)

    def trim(c, tol=0):
        return S.trim(basis, c, tol)

    p = basis.prefix
    made = {"val": val, "val2d": val2d, "val3d": val3d, "grid2d": grid2d, "grid3d": grid3d,
            "vander": vander, "vander2d": vander2d, "vander3d": vander3d, "der": der,
            "int": integ, "add": add, "sub": sub, "mul": mul, "mulx": mulx, "div": div,
            "pow": power, "fromroots": fromroots, "line": line, "fit": fit, "roots": roots,
            "trim": trim}
    out = {key: _public(fn, basis, key, p + key) for key, fn in made.items()}
    if basis is not POWER:
        def to_power(c):
            return S.convert(_basis.to_power_matrix, basis, c, basis.public_name("2poly"))

        def from_power(pol):
            return S.convert(_basis.from_power_matrix, basis, pol,
                             f"funcdiff.numpy.polynomial.{basis.module}.poly2{p}")

        out["to_power"] = _public(to_power, basis, "2poly", f"{p}2poly")
        out["from_power"] = _public(from_power, basis, "poly2", f"poly2{p}")
    else:
        def valfromroots(x, r, tensor=True):
            return S.valfromroots(x, r, tensor)

        out["valfromroots"] = _public(valfromroots, basis, "valfromroots", "polyvalfromroots")
    return types.SimpleNamespace(**out)
