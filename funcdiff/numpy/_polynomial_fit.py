"""Least-squares polynomial fitting: numpy's ``polyfit``.

The fit solves ``vander(x, deg + 1) c ≈ y`` in the least-squares sense, as
numpy does: rows weighted by ``w``, each column scaled to unit norm (the
powers of ``x`` differ by orders of magnitude, and the scaling keeps the
singular values comparable), then ``funcdiff.numpy.linalg.lstsq`` (the
pseudo-inverse with numpy's cutoff ``rcond``) and the scaling undone. Every
step is a funcdiff.numpy operation, so the coefficients are differentiable in
``x``, ``y`` and ``w`` wherever the rank of the scaled Vandermonde matrix does
not change (everywhere, for distinct ``x`` and ``deg < len(x)``), and the fit
traces under jit and vmap. The degree fixes the result's length, so it must be
a concrete int.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError, InvalidArgumentError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._polynomial import vander

_RANK = np.dtype(np.int32)  # numpy.linalg.lstsq's rank, which polyfit passes on


def _degree(deg: Any) -> int:
    """``deg`` as a non-negative Python int; numpy also takes integral floats."""
    if isinstance(deg, Tracer):
        try:
            deg = deg.to_concrete("funcdiff.numpy.polyfit")
        except ConcretizationError:
            raise ConcretizationError(
                f"funcdiff.numpy.polyfit: deg= is the degree of the fitted polynomial, which "
                f"fixes the number of coefficients, so it must be a concrete int, but got the "
                f"abstract {deg.aval.str_short()} (under jit, make_jaxpr or vmap). Pass deg= "
                "as a Python int, e.g. mark it static with fd.jit(f, static_argnums=...).") \
                from None
    value = deg
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    try:
        value = None if isinstance(value, (bool, np.bool_)) else operator.index(value)
    except TypeError:
        value = None
    if value is None or value < 0:
        raise InvalidArgumentError(f"funcdiff.numpy.polyfit: deg= is the degree of the fitted "
                                   f"polynomial and must be a non-negative int, got {deg!r}.")
    return int(value)


def _checked(x: Any, y: Any, w: Any) -> tuple[Any, Any, Any]:
    """``x``, ``y`` and ``w`` as arrays with numpy's shape checks, in one float dtype."""
    name = "funcdiff.numpy.polyfit"
    x, y = _util.asarray(x, name), _util.asarray(y, name)
    x_shape, y_shape = _util.shape_of(x), _util.shape_of(y)
    if len(x_shape) != 1 or x_shape[0] == 0:
        raise ShapeError(f"{name} needs x as a non-empty 1-D array of sample points, but got "
                         f"shape {x_shape}; use vmap for a batch of fits.")
    if len(y_shape) not in (1, 2) or y_shape[0] != x_shape[0]:
        raise ShapeError(f"{name} needs y of shape ({x_shape[0]},) or ({x_shape[0]}, k) to match "
                         f"x of shape {x_shape} (one column per data set), but got shape "
                         f"{y_shape}.")
    arrays = [x, y]
    if w is not None:
        w = _util.asarray(w, name)
        if _util.shape_of(w) != x_shape:
            raise ShapeError(f"{name} needs the weights w as a 1-D array shaped like x "
                             f"{x_shape}, but got shape {_util.shape_of(w)}.")
        arrays.append(w)
    arrays = _util.promote_to_float(name, *arrays)
    return arrays[0], arrays[1], arrays[2] if w is not None else None


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool | str = False) -> Any:
    """The least-squares polynomial fit of degree ``deg`` to the points ``(x, y)`` (numpy.polyfit).

    Minimises ``sum((w * (polyval(p, x) - y))**2)`` over the coefficients
    ``p``, with numpy's column scaling of the Vandermonde matrix and its
    minimum-norm solution when the problem is rank deficient.
    Differentiable in ``x``, ``y`` and ``w`` where the rank is locally
    constant. As numpy, it warns with ``RankWarning`` when the scaled
    Vandermonde matrix is rank deficient (only when the rank has a concrete
    value: not under jit or vmap).

    Args:
      x: the sample points, a non-empty 1-D array.
      y: the values, shape ``(len(x),)``, or ``(len(x), k)`` to fit ``k``
        data sets with the same ``x`` at once.
      deg: the degree, a concrete int >= 0 (it fixes the result's length).
      rcond: singular values at or below ``rcond`` times the largest count as
        zero (a static float; default ``len(x) * eps`` of ``x``'s float type, as
        in numpy).
      full: also return the diagnostics of the least-squares solve.
      w: weights of the unsquared residuals, shaped like ``x``.
      cov: also return the covariance of the coefficients, scaled by
        ``residuals / (len(x) - deg - 1)``; ``"unscaled"`` leaves that factor out.

    Returns:
      The ``deg + 1`` coefficients, highest power first (shape ``(deg + 1,)``,
      or ``(deg + 1, k)`` for 2-D ``y``). With ``full``, the tuple
      ``(p, residuals, rank, singular_values, rcond)``: ``residuals`` are the
      weighted sums of squared residuals, one per data set (empty when
      ``len(x) <= deg + 1``; numpy also returns them empty when the matrix is
      rank deficient, funcdiff cannot, as the rank may be a traced value),
      ``rank`` an int32, the singular values those of the scaled matrix.
      With ``cov`` (and not ``full``), ``(p, V)``: ``V`` is
      ``(deg + 1, deg + 1)``, or ``(deg + 1, deg + 1, k)`` for 2-D ``y``.
      Floating point: float32 when the inputs are float32 (numpy widens to
      float64), float64 otherwise.

    Raises:
      ShapeError: for an empty or non-1-D ``x``, a ``y`` or ``w`` that does not
        match it, or ``cov=True`` with no more points than coefficients.
      InvalidArgumentError: for a negative or non-integer ``deg`` or a
        non-number ``rcond``; ConcretizationError for an abstract ``deg``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> x = np.array([0., 1., 2., 3.])
    >>> np.round(fnp.polyfit(x, 2 * x**2 - x + 1, 2), 12)
    array([ 2., -1.,  1.])
    """
    name = "funcdiff.numpy.polyfit"
    order = _degree(deg) + 1
    # numpy's default cutoff is in the precision of x alone, before x meets y and w
    x_precision = _util.promote_to_float(name, _util.asarray(x, name))[0].dtype
    x, y, w = _checked(x, y, w)
    count, dtype = _util.shape_of(x)[0], _util.dtype_of(x)
    if rcond is None:
        rcond = count * np.finfo(x_precision).eps
    elif isinstance(rcond, Tracer) or not isinstance(rcond, (int, float, np.number)):
        raise InvalidArgumentError(f"{name}: rcond= must be a static number (a relative "
                                   f"cutoff of the singular values), got {rcond!r}.")
    vector = len(_util.shape_of(y)) == 1
    lhs, rhs = vander(x, order), y
    if w is not None:
        lhs = fnp.multiply(lhs, fnp.expand_dims(w, 1))
        rhs = fnp.multiply(rhs, w if vector else fnp.expand_dims(w, 1))
    scale = fnp.sqrt(fnp.sum(fnp.multiply(lhs, lhs), axis=0))
    lhs = fnp.divide(lhs, scale)
    c, residuals, rank, s = fnp.linalg.lstsq(lhs, rhs, rcond=float(rcond))
    c = fnp.divide(c, scale if vector else fnp.expand_dims(scale, 1))
    rank = fnp.astype(rank, _RANK)
    known_rank = _util.concrete_or_none(rank, "polyfit")
    if not full and known_rank is not None and int(known_rank) != order:
        warnings.warn(f"Polyfit may be poorly conditioned: the scaled Vandermonde matrix has "
                      f"rank {int(known_rank)} for {order} coefficients.",
                      np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, residuals, rank, s, rcond
    if not cov:
        return c
    unscaled = fnp.divide(fnp.linalg.inv(fnp.matmul(fnp.matrix_transpose(lhs), lhs)),
                          fnp.outer(scale, scale))
    if cov == "unscaled":
        factor = np.ones(1, dtype)
    elif count <= order:
        raise ShapeError(f"{name}: cov=True scales the covariance by the residuals over "
                         f"len(x) - deg - 1, so it needs more points than coefficients, but got "
                         f"{count} points for {order} coefficients; pass cov='unscaled' or "
                         "lower deg.")
    else:
        factor = fnp.divide(residuals, count - order)
    if vector:
        return c, fnp.multiply(unscaled, factor)
    return c, fnp.multiply(fnp.expand_dims(unscaled, 2), factor)


__all__ = ["polyfit"]
