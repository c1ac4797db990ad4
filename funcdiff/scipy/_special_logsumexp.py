"""funcdiff.scipy.special's log-sum-exp family: the logistic function, logsumexp and softmax.

``expit``, ``logit`` and ``log_expit`` (with ``_softplus``, the two-term
log-sum-exp) are stable for all inputs; ``logsumexp``, ``softmax`` and
``log_softmax`` reduce exponentials after shifting by the maximum through
``stop_gradient``. ``funcdiff.scipy.special`` re-exports them; ``funcdiff.nn``
uses ``_softplus``, ``_max_shift``, ``_softmax`` and ``_log_softmax``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.scipy._special_util import c, floats
import funcdiff.numpy as fnp


# ---------------------------------------------------------------------------
# Logistic function


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``, stable for all x.

    >>> from funcdiff.scipy import special
    >>> float(special.expit(0.0))
    0.5
    """
    (x,) = floats("expit", x)
    return ew.logistic(x)


def logit(p):
    """The inverse of ``expit``: ``log(p / (1 - p))``.

    >>> from funcdiff.scipy import special
    >>> float(special.logit(0.5))
    0.0
    """
    (p,) = floats("logit", p)
    return ew.sub(ew.log(p), ew.log1p(ew.neg(p)))


def _softplus(x):
    """log(1 + exp(x)) as two analytic branches (each exact at every order):
    x + log1p(exp(-x)) for x > 0 and log1p(exp(x)) otherwise, each fed an input
    clamped to its own side so nothing overflows."""
    zero = c(x, 0)
    positive = ew.gt(x, zero)
    x_pos = ew.select(positive, x, zero)
    x_neg = ew.select(positive, zero, x)
    right = ew.add(x_pos, ew.log1p(ew.exp(ew.neg(x_pos))))
    left = ew.log1p(ew.exp(x_neg))
    return ew.select(positive, right, left)


def log_expit(x):
    """``log(expit(x)) = -softplus(-x)``, stable for all x.

    >>> from funcdiff.scipy import special
    >>> float(special.log_expit(-1000.0))
    -1000.0
    """
    (x,) = floats("log_expit", x)
    return ew.neg(_softplus(ew.neg(x)))


# ---------------------------------------------------------------------------
# logsumexp, softmax, log_softmax


def normalize_axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    return _util.normalize_axes(axis, ndim, f"funcdiff.scipy.special.{name}")


def _max_shift(a, axes: tuple[int, ...]):
    """max(a) over ``axes`` (kept) with a zero derivative; 0 where the max is +-inf or NaN,
    so that a - shift is never inf - inf."""
    # stop_gradient before the max, so the max's derivative (which splits ties) is
    # never formed
    m = stop_gradient(a)
    if axes:
        m = fnp.max(m, axis=axes, keepdims=True)
    return fnp.where(fnp.isfinite(m), m, c(m, 0))


def squeeze(x, axes: tuple[int, ...], keepdims: bool):
    if not keepdims and axes:
        x = fnp.squeeze(x, axis=axes)
    if type(x) is np.ndarray and x.ndim == 0:
        return x[()]  # a numpy scalar from a full reduction, as scipy returns
    return x


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis``, computed without overflow.

    The maximum is subtracted first through ``stop_gradient``, so the value is
    accurate for inputs of any magnitude and the derivative is exactly the
    softmax weights ``b * exp(a - logsumexp(a))``, finite for inputs like 1e3.

    Args:
      a: array_like of reals.
      axis: None (all axes), an int or a tuple of ints.
      b: optional scaling factors, broadcast against ``a``; entries where b is 0
        are left out entirely (even where ``a`` is inf).
      keepdims: keep the reduced axes with size 1.
      return_sign: also return the sign of the sum; the result is then
        ``log|sum|``. Without it a negative sum gives NaN, as in scipy.

    Returns:
      The result, or ``(result, sign)`` when ``return_sign`` is true.

    Raises:
      AxisError: for an axis out of range.
      ShapeError: if ``a`` and ``b`` do not broadcast.

    >>> import numpy as np, funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> float(special.logsumexp(np.array([1000.0, 1000.0]))) == 1000.0 + float(np.log(2.0))
    True
    >>> fd.grad(special.logsumexp)(np.array([1000.0, -1000.0]))
    array([1., 0.])
    >>> special.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0]), return_sign=True)
    (np.float64(1.5413248546129181), np.float64(-1.0))
    """
    if b is None:
        (a,) = floats("logsumexp", a)
        masked = a
    else:
        a, b = floats("logsumexp", a, b)
        a, b = _util.broadcast_arrays_of("funcdiff.scipy.special.logsumexp", a, b)
        masked = fnp.where(ew.ne(b, c(b, 0)), a, c(a, -np.inf))
    axes = normalize_axes("logsumexp", axis, len(_util.shape_of(a)))
    shift = _max_shift(masked, axes)
    e = ew.exp(ew.sub(masked, shift))
    if b is not None:
        e = ew.mul(b, e)
    s = fnp.sum(e, axis=axes, keepdims=True)
    if return_sign:
        sign = stop_gradient(ew.sign(s))
        s = ew.abs(s)
    out = squeeze(ew.add(ew.log(s), shift), axes, keepdims)
    if return_sign:
        return out, squeeze(sign, axes, keepdims)
    return out


def _softmax(x, axes: tuple[int, ...]):
    e = ew.exp(ew.sub(x, _max_shift(x, axes)))
    return ew.div(e, fnp.sum(e, axis=axes, keepdims=True))


def _log_softmax(x, axes: tuple[int, ...]):
    shifted = ew.sub(x, _max_shift(x, axes))
    return ew.sub(shifted, ew.log(fnp.sum(ew.exp(shifted), axis=axes, keepdims=True)))


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default, as in scipy).

    Shifted by the maximum, so large inputs neither overflow nor give NaN
    derivatives.

    >>> import numpy as np
    >>> from funcdiff.scipy import special
    >>> special.softmax(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
    """
    (x,) = floats("softmax", x)
    return _softmax(x, normalize_axes("softmax", axis, len(_util.shape_of(x))))


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (all axes by default, as in scipy).

    >>> import numpy as np
    >>> from funcdiff.scipy import special
    >>> special.log_softmax(np.array([0.0, -1000.0]))
    array([    0., -1000.])
    """
    (x,) = floats("log_softmax", x)
    return _log_softmax(x, normalize_axes("log_softmax", axis, len(_util.shape_of(x))))
