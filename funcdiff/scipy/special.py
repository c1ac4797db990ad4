"""funcdiff.scipy.special: scipy's special functions, differentiable in every mode.

Each function is a composition of funcdiff primitives (``erf``, ``lgamma``,
``digamma``, ``polygamma``, ``logistic`` ...) and ``funcdiff.numpy``, so it is
differentiated to any order, batched and compiled without rules of its own.
Arguments are promoted like scipy's ufuncs: integers become float64, float32
stays float32.

Two kinds of care keep values and derivatives finite where the naive formula
is not:

- *Conventions at singular points* (``xlogy(0, 0) = 0``, ``entr(0) = 0``) are
  taken with a safe input: the singular argument is replaced by a harmless value
  *before* the log, and the result is selected afterwards. A select sends an
  exact zero cotangent to the unselected branch, and singular derivatives are
  formed with ``safe_mul``, so no ``0 * inf`` turns into NaN.
- *Reductions of exponentials* (``logsumexp``, ``softmax``, ``log_softmax``)
  shift by the maximum first. The shift goes through ``stop_gradient``: the
  result does not depend on it mathematically, so its derivative is exactly the
  softmax weights, and it stays finite for inputs of any magnitude.

Derivative conventions: at ``x = 0`` the derivatives of ``xlogy(x, y)`` are
``(log y, 0)`` for ``y > 0`` and ``(0, 0)`` for ``y <= 0``; ``entr'(0)`` is 0
(the one-sided limit is +inf); ``logsumexp`` with ``return_sign=True`` gives the
sign a zero derivative.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer, concrete_value
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.primitives.gradient_control import stop_gradient
import funcdiff.numpy as fnp

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_NDTR_LOWER = -20.0  # below this log_ndtr uses the asymptotic series (as JAX does;
                         # -10 in float32)
_LOG_NDTR_TERMS = 10
_PY_SCALARS = (bool, int, float)


# _floats, _c, _max_shift, _softmax, _log_softmax and _softplus are shared with
# funcdiff.scipy.stats and funcdiff.nn.


def _floats(name: str, *args: Any, broadcast: bool = True) -> list[Any]:
    """``args`` promoted to one floating dtype (integers -> float64, float32 stays).

    ``name`` is the function's name in this module or a fully qualified one
    (``funcdiff.nn.relu``), used in error messages. With ``broadcast`` the
    arguments' shapes must broadcast together (else a ShapeError naming it)."""
    if not name.startswith("funcdiff."):
        name = f"funcdiff.scipy.special.{name}"
    prepared = []
    for a in args:
        if not isinstance(a, (Tracer, np.ndarray, np.generic)) and type(a) not in _PY_SCALARS:
            a = _util.asarray(a, name)
        if hasattr(a, "dtype") and a.dtype.kind not in "biuf":
            dtypes.check_dtype(a.dtype, f"the input of {name}")  # raises, naming `name`
        prepared.append(a)
    if broadcast and len(prepared) > 1:  # a ShapeError naming the function, not numpy's
        broadcast_shapes(name, *[_util.shape_of(a) for a in prepared])
    return _util.promote_to_float(name, *prepared)


def _c(x: Any, value: float) -> np.ndarray:
    """``value`` as a 0-d constant of ``x``'s dtype."""
    return np.asarray(value, x.dtype)


# ---------------------------------------------------------------------------
# Error function and its relatives


def erf(x):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.

    Args:
      x: array_like of reals.

    Returns:
      ``erf(x)`` elementwise, float64 for integer input.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.erf(0.5)), 10)
    0.5204998778
    >>> round(float(fd.grad(special.erf)(0.0)), 10)  # 2 / sqrt(pi)
    1.1283791671
    """
    (x,) = _floats("erf", x)
    return ew.erf(x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate in the right tail.

    >>> from funcdiff.scipy import special
    >>> float(special.erfc(10.0)) > 0
    True
    """
    (x,) = _floats("erfc", x)
    return ew.erfc(x)


def erfinv(y):
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1 and NaN outside.

    >>> from funcdiff.scipy import special
    >>> round(float(special.erfinv(special.erf(0.3))), 12)
    0.3
    """
    (y,) = _floats("erfinv", y)
    return ew.erf_inv(y)


def ndtr(x):
    """The standard normal cumulative distribution function ``Phi(x)``.

    Computed as ``erfc(-x / sqrt(2)) / 2``, so it keeps its relative accuracy in
    the left tail.

    >>> from funcdiff.scipy import special
    >>> float(special.ndtr(0.0))
    0.5
    """
    (x,) = _floats("ndtr", x)
    return ew.mul(_c(x, 0.5), ew.erfc(ew.mul(x, _c(x, -1 / _SQRT2))))


def ndtri(p):
    """The inverse of ``ndtr``: the standard normal quantile function.

    >>> from funcdiff.scipy import special
    >>> round(float(special.ndtri(0.975)), 6)
    1.959964
    """
    (p,) = _floats("ndtri", p)
    return ew.mul(_c(p, _SQRT2), ew.erf_inv(ew.sub(ew.mul(_c(p, 2), p), _c(p, 1))))


def _log_ndtr_asymptotic(z):
    """log Phi(z) for z <= -20 (-10 in float32): log(phi(z) / -z) + log of the series
    1 - 1/z^2 + 3/z^4 - 15/z^6 + ..."""
    inv_z2 = ew.div(_c(z, 1), ew.mul(z, z))
    series, term = _c(z, 1), _c(z, 1)
    for k in range(1, _LOG_NDTR_TERMS + 1):
        term = ew.mul(term, ew.mul(inv_z2, _c(z, -(2 * k - 1))))
        series = ew.add(series, term)
    log_pdf = ew.sub(ew.mul(_c(z, -0.5), ew.mul(z, z)), _c(z, _HALF_LOG_2PI))
    return ew.add(ew.sub(log_pdf, ew.log(ew.neg(z))), ew.log(series))


def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails and finite down to x = -1e150.

    Three branches, each evaluated at an input clamped into its own range and
    then selected, so every branch and its derivatives stay finite:
    ``log1p(-ndtr(-x))`` for x > 0, ``log(erfc(-x/sqrt 2)/2)`` for
    -20 <= x <= 0, and the asymptotic series of the Mills ratio below -20
    (-10 in float32, where ndtr underflows sooner).

    >>> from funcdiff.scipy import special
    >>> round(float(special.log_ndtr(-40.0)), 6)
    -804.608442
    """
    (x,) = _floats("log_ndtr", x)
    # ndtr underflows near -37 in float64 but near -13 in float32
    zero, lower = _c(x, 0), _c(x, _LOG_NDTR_LOWER if x.dtype.itemsize >= 8 else -10.0)
    positive = ew.gt(x, zero)
    far_left = ew.lt(x, lower)
    x_pos = ew.select(positive, x, zero)
    x_mid = ew.select(positive, zero, ew.select(far_left, lower, x))
    x_left = ew.select(far_left, x, lower)
    right = ew.log1p(ew.neg(ndtr(ew.neg(x_pos))))
    middle = ew.log(ndtr(x_mid))
    left = _log_ndtr_asymptotic(x_left)
    return ew.select(positive, right, ew.select(far_left, left, middle))


# ---------------------------------------------------------------------------
# Logistic function


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``, stable for all x.

    >>> from funcdiff.scipy import special
    >>> float(special.expit(0.0))
    0.5
    """
    (x,) = _floats("expit", x)
    return ew.logistic(x)


def logit(p):
    """The inverse of ``expit``: ``log(p / (1 - p))``.

    >>> from funcdiff.scipy import special
    >>> float(special.logit(0.5))
    0.0
    """
    (p,) = _floats("logit", p)
    return ew.sub(ew.log(p), ew.log1p(ew.neg(p)))


def _softplus(x):
    """log(1 + exp(x)) as two analytic branches (each exact at every order):
    x + log1p(exp(-x)) for x > 0 and log1p(exp(x)) otherwise, each fed an input
    clamped to its own side so nothing overflows."""
    zero = _c(x, 0)
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
    (x,) = _floats("log_expit", x)
    return ew.neg(_softplus(ew.neg(x)))


# ---------------------------------------------------------------------------
# Gamma function and its relatives


def gammaln(x):
    """``log |Gamma(x)|``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.gammaln(5.0)), 12) == round(math.log(24.0), 12)
    True
    """
    (x,) = _floats("gammaln", x)
    return ew.lgamma(x)


def digamma(x):
    """The digamma function ``psi(x) = d/dx gammaln(x)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.digamma(1.0)), 12)  # -Euler's gamma
    -0.577215664902
    """
    (x,) = _floats("digamma", x)
    return ew.digamma(x)


psi = digamma


def _static_order(n: Any) -> Any:
    """polygamma's order: a Python int, or a concrete integer array."""
    try:
        n = concrete_value(n, "funcdiff.scipy.special.polygamma's order n")
    except ConcretizationError:
        raise ConcretizationError(
            "funcdiff.scipy.special.polygamma needs a concrete order n (it selects the "
            "primitive's static order), but n is traced. Pass n as a Python int, or mark it "
            "static with jit(..., static_argnums=...).") from None
    arr = np.asarray(n)
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or np.any(arr < 0):
        raise InvalidArgumentError(
            f"funcdiff.scipy.special.polygamma needs a non-negative integer order n, got "
            f"{n!r}.")
    return arr


def _polygamma_of_order(order: int, x):
    return ew.digamma(x) if order == 0 else ew.polygamma(x, order=order)


def polygamma(n, x):
    """The n-th derivative of the digamma function, ``psi^(n)(x)``.

    Args:
      n: non-negative integer order: a Python int or a concrete integer array
        (not traced; it selects the primitive's static order).
      x: array_like of reals.

    Returns:
      ``psi^(n)(x)`` with the shape of ``n`` and ``x`` broadcast together.

    Raises:
      InvalidArgumentError: for a negative or non-integer order.
      ConcretizationError: for a traced order.

    >>> from funcdiff.scipy import special
    >>> round(float(special.polygamma(1, 1.0)), 12)  # pi**2 / 6
    1.644934066848
    """
    orders = _static_order(n)
    (x,) = _floats("polygamma", x)
    if orders.ndim == 0:
        return _polygamma_of_order(int(orders), x)
    shape = np.broadcast_shapes(orders.shape, _util.shape_of(x))
    x = fnp.broadcast_to(x, shape)
    orders = np.broadcast_to(orders, shape)
    out = fnp.zeros(shape, x.dtype)
    for order in np.unique(orders):
        out = fnp.where(orders == order, _polygamma_of_order(int(order), x), out)
    return out


def _gamma_sign(x):
    """The sign of Gamma(x): -1 where x < 0 and floor(x) is odd, else +1 (no derivative)."""
    odd = ew.ne(ew.rem(ew.floor(x), _c(x, 2)), _c(x, 0))
    negative = ew.and_(ew.lt(x, _c(x, 0)), odd)
    return ew.select(negative, _c(x, -1), _c(x, 1))


def gamma(x):
    """The gamma function, as ``sign * exp(gammaln(x))``; NaN at the negative integers.

    >>> from funcdiff.scipy import special
    >>> round(float(special.gamma(5.0)), 9)
    24.0
    >>> round(float(special.gamma(-0.5)), 9)  # -2 sqrt(pi)
    -3.544907702
    """
    (x,) = _floats("gamma", x)
    out = ew.mul(_gamma_sign(x), ew.exp(ew.lgamma(x)))
    # the negative integers are poles with no sign (scipy: NaN); 0 gives +inf
    pole = ew.and_(ew.lt(x, _c(x, 0)), ew.eq(x, ew.floor(x)))
    return ew.select(pole, _c(x, np.nan), out)


def betaln(a, b):
    """``log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.betaln(2.0, 3.0)), 12) == round(math.log(1 / 12), 12)
    True
    """
    a, b = _floats("betaln", a, b)
    return ew.sub(ew.add(ew.lgamma(a), ew.lgamma(b)), ew.lgamma(ew.add(a, b)))


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.beta(2.0, 3.0)), 12)
    0.083333333333
    """
    a, b = _floats("beta", a, b)
    s = ew.add(a, b)
    sign = ew.mul(ew.mul(_gamma_sign(a), _gamma_sign(b)), _gamma_sign(s))
    log_abs = ew.sub(ew.add(ew.lgamma(a), ew.lgamma(b)), ew.lgamma(s))
    return ew.mul(sign, ew.exp(log_abs))


# ---------------------------------------------------------------------------
# x log y and entropy


def xlogy(x, y):
    """``x * log(y)``, with ``0 * log(y) = 0`` for every y (even 0 and negatives).

    Derivatives stay finite at ``x = 0``: ``(log y, 0)`` for y > 0 and
    ``(0, 0)`` for y <= 0, where ``log`` is evaluated at 1 instead.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> float(special.xlogy(0.0, 0.0))
    0.0
    >>> [float(g) for g in fd.grad(special.xlogy, argnums=(0, 1))(0.0, 0.0)]
    [0.0, 0.0]
    """
    x, y = _floats("xlogy", x, y)
    zero = _c(x, 0)
    singular = ew.and_(ew.eq(x, zero), ew.le(y, zero))
    safe_y = ew.select(singular, _c(y, 1), y)
    # safe_mul: 0 * log(inf) is 0 too, and its derivative never forms 0 * inf
    return ew.safe_mul(x, ew.log(safe_y))


def xlog1py(x, y):
    """``x * log1p(y)``, with ``0 * log1p(y) = 0`` for every y (even -1).

    Derivatives stay finite at ``x = 0`` as for ``xlogy``.

    >>> from funcdiff.scipy import special
    >>> float(special.xlog1py(0.0, -1.0))
    0.0
    """
    x, y = _floats("xlog1py", x, y)
    zero = _c(x, 0)
    singular = ew.and_(ew.eq(x, zero), ew.le(y, _c(y, -1)))
    safe_y = ew.select(singular, _c(y, 0), y)
    return ew.safe_mul(x, ew.log1p(safe_y))


def entr(x):
    """The elementwise entropy ``-x log x`` for x > 0, 0 at 0 and -inf for x < 0.

    The derivative at 0 is taken as 0 (finite), not the one-sided +inf.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> float(special.entr(0.0)), float(fd.grad(special.entr)(0.0))
    (0.0, 0.0)
    """
    (x,) = _floats("entr", x)
    negative = ew.lt(x, _c(x, 0))
    safe_x = ew.select(negative, _c(x, 1), x)
    # 0 - xlogy rather than a negation, so entr(0) is +0.0 as in scipy
    return ew.select(negative, _c(x, -np.inf), ew.sub(_c(x, 0), xlogy(safe_x, safe_x)))


# ---------------------------------------------------------------------------
# logsumexp, softmax, log_softmax


def _axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    return _util.normalize_axes(axis, ndim, f"funcdiff.scipy.special.{name}")


def _max_shift(a, axes: tuple[int, ...]):
    """max(a) over ``axes`` (kept) with a zero derivative; 0 where the max is +-inf or NaN,
    so that a - shift is never inf - inf."""
    # stop_gradient before the max, so the max's derivative (which splits ties) is
    # never formed
    m = stop_gradient(a)
    if axes:
        m = fnp.max(m, axis=axes, keepdims=True)
    return fnp.where(fnp.isfinite(m), m, _c(m, 0))


def _squeeze(x, axes: tuple[int, ...], keepdims: bool):
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
        (a,) = _floats("logsumexp", a)
        masked = a
    else:
        a, b = _floats("logsumexp", a, b)
        a, b = _util.broadcast_arrays_of("funcdiff.scipy.special.logsumexp", a, b)
        masked = fnp.where(ew.ne(b, _c(b, 0)), a, _c(a, -np.inf))
    axes = _axes("logsumexp", axis, len(_util.shape_of(a)))
    shift = _max_shift(masked, axes)
    e = ew.exp(ew.sub(masked, shift))
    if b is not None:
        e = ew.mul(b, e)
    s = fnp.sum(e, axis=axes, keepdims=True)
    if return_sign:
        sign = stop_gradient(ew.sign(s))
        s = ew.abs(s)
    out = _squeeze(ew.add(ew.log(s), shift), axes, keepdims)
    if return_sign:
        return out, _squeeze(sign, axes, keepdims)
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
    (x,) = _floats("softmax", x)
    return _softmax(x, _axes("softmax", axis, len(_util.shape_of(x))))


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (all axes by default, as in scipy).

    >>> import numpy as np
    >>> from funcdiff.scipy import special
    >>> special.log_softmax(np.array([0.0, -1000.0]))
    array([    0., -1000.])
    """
    (x,) = _floats("log_softmax", x)
    return _log_softmax(x, _axes("log_softmax", axis, len(_util.shape_of(x))))


__all__ = [
    "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "log_expit",
    "gammaln", "digamma", "psi", "polygamma", "gamma", "beta", "betaln", "xlogy", "xlog1py",
    "entr", "logsumexp", "softmax", "log_softmax",
]
