"""funcdiff.scipy.special's Bessel functions: values from scipy.special, derivatives in x.

Each function binds a card of ``primitives.scipy_bessel``; the order of jv, jn,
yn, yv, iv, ive, kv and kve is that card's static param, so it must be a
concrete number or array (an array of orders binds one card per distinct
order). A traced order is refused by name: by jit as not concrete, by grad as
having no derivative. ``static_param`` is shared with the module of the gamma
relatives (multigammaln's dimension). ``funcdiff.scipy.special`` re-exports them.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer, concrete_value
from funcdiff.errors import ConcretizationError, DifferentiationError, InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.primitives import scipy_bessel as B
from funcdiff.scipy._special_util import floats


def static_param(function: str, name: str, value, *, integer: bool = False) -> np.ndarray:
    """``value``, a static argument of ``function`` (an order or a dimension), as a
    concrete numpy array (int64 when ``integer``), refusing traced values by name."""
    where = f"funcdiff.scipy.special.{function}'s {name}"
    if isinstance(value, Tracer):
        try:
            concrete_value(value, where)
        except ConcretizationError:
            raise ConcretizationError(
                f"funcdiff.scipy.special.{function} needs a concrete {name} (it is the "
                f"static param of the primitive), but {name} is traced. Pass {name} as a "
                "Python number or numpy array, or mark it static with "
                "jit(..., static_argnums=...).") from None
        raise DifferentiationError(
            f"funcdiff.scipy.special.{function} has no derivative with respect to its {name} "
            f"(a static param): differentiate with respect to x only, or pass {name} as a "
            "plain number.")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise InvalidArgumentError(f"{where} must be a real number, got {value!r}.")
    if integer:
        if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
            raise InvalidArgumentError(f"{where} must be an integer, got {value!r}.")
        arr = arr.astype(np.int64)
    return arr


def _of_orders(function: str, op: Callable, v, x, *, integer: bool = False, name: str = "v"):
    """``op(x, order=...)`` at each order of ``v``, broadcast against ``x``."""
    orders = static_param(function, name, v, integer=integer)
    (x,) = floats(function, x)
    kind = int if integer else float
    if orders.ndim == 0:
        return op(x, order=kind(orders))
    shape = np.broadcast_shapes(orders.shape, _util.shape_of(x))
    x = fnp.broadcast_to(x, shape)
    orders = np.broadcast_to(orders, shape)
    out = fnp.zeros(shape, x.dtype)
    for order in np.unique(orders):
        out = fnp.where(orders == order, op(x, order=kind(order)), out)
    return out


def _fixed(function: str, op: Callable):
    def apply(x):
        (x,) = floats(function, x)
        return op(x)
    return apply


def j0(x):
    """The Bessel function of the first kind of order 0, J0(x); J0' = -J1.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.j0(1.0)), 12)
    0.765197686558
    >>> float(fd.grad(special.j0)(1.0)) == -float(special.j1(1.0))
    True
    """
    return _fixed("j0", B.bessel_j0)(x)


def j1(x):
    """The Bessel function of the first kind of order 1, J1(x); J1' = (J0 - J2) / 2 (1/2 at 0).

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.j1(1.0)), 12)
    0.440050585745
    >>> float(fd.grad(special.j1)(0.0))
    0.5
    """
    return _fixed("j1", B.bessel_j1)(x)


def jv(v, x):
    """The Bessel function of the first kind of real order v, J_v(x).

    Args:
      v: the order: a concrete number or array (not traced, not differentiated).
      x: array_like of reals (NaN for x < 0 at non-integer v, as in scipy).

    Returns:
      ``scipy.special.jv(v, x)``, differentiable in x: J_v' = (J_{v-1} - J_{v+1}) / 2.

    Raises:
      ConcretizationError: for an order traced by jit or vmap.
      DifferentiationError: for an order being differentiated.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.jv(2.5, 3.0)), 12)
    0.41271003221
    >>> round(float(fd.grad(lambda x: special.jv(2.5, x))(3.0)), 12)
    0.133793188246
    """
    return _of_orders("jv", B.bessel_jv, v, x)


def jn(n, x):
    """The Bessel function of the first kind of integer order n (scipy's jn, which is jv).

    >>> from funcdiff.scipy import special
    >>> float(special.jn(2, 3.0)) == float(special.jv(2.0, 3.0))
    True
    """
    return _of_orders("jn", B.bessel_jv, n, x, name="n")


def y0(x):
    """The Bessel function of the second kind of order 0, Y0(x) (x > 0); Y0' = -Y1.

    >>> from funcdiff.scipy import special
    >>> round(float(special.y0(1.0)), 12)
    0.088256964216
    """
    return _fixed("y0", B.bessel_y0)(x)


def y1(x):
    """The Bessel function of the second kind of order 1, Y1(x) (x > 0); Y1' = (Y0 - Y2) / 2.

    >>> from funcdiff.scipy import special
    >>> round(float(special.y1(1.0)), 12)
    -0.7812128213
    """
    return _fixed("y1", B.bessel_y1)(x)


def yn(n, x):
    """The Bessel function of the second kind of integer order n, Y_n(x) (x > 0).

    Args:
      n: integer order, concrete (a float with an integral value is accepted).
      x: array_like of reals.

    Returns:
      ``scipy.special.yn(n, x)``, differentiable in x: Y_n' = (Y_{n-1} - Y_{n+1}) / 2.

    Raises:
      InvalidArgumentError: for a non-integer order.
      ConcretizationError, DifferentiationError: for a traced order.

    >>> from funcdiff.scipy import special
    >>> round(float(special.yn(2, 1.0)), 12)
    -1.650682606816
    """
    return _of_orders("yn", B.bessel_yn, n, x, integer=True, name="n")


def yv(v, x):
    """The Bessel function of the second kind of real order v, Y_v(x) (x > 0).

    >>> from funcdiff.scipy import special
    >>> round(float(special.yv(0.5, 1.0)), 12)
    -0.431098868018
    """
    return _of_orders("yv", B.bessel_yv, v, x)


def iv(v, x):
    """The modified Bessel function of the first kind of real order v, I_v(x).

    Its derivative in x is (I_{v-1} + I_{v+1}) / 2.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.iv(1, 1.0)), 12)
    0.565159103992
    >>> round(float(fd.grad(lambda x: special.iv(0, x))(1.0)), 12)  # I0' = I1
    0.565159103992
    """
    return _of_orders("iv", B.bessel_iv, v, x)


def ive(v, x):
    """The exponentially scaled modified Bessel function ``iv(v, x) * exp(-|x|)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.ive(1, 1.0)), 12)
    0.20791041535
    """
    return _of_orders("ive", B.bessel_ive, v, x)


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``i0(x) * exp(-|x|)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.i0e(1.0)), 12)
    0.465759607594
    """
    return _fixed("i0e", B.bessel_i0e)(x)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``i1(x) * exp(-|x|)``.

    >>> from funcdiff.scipy import special
    >>> round(float(special.i1e(1.0)), 12)
    0.20791041535
    """
    return _fixed("i1e", B.bessel_i1e)(x)


def kv(v, x):
    """The modified Bessel function of the second kind of real order v, K_v(x) (x > 0).

    Its derivative in x is -(K_{v-1} + K_{v+1}) / 2.

    >>> import funcdiff as fd
    >>> from funcdiff.scipy import special
    >>> round(float(special.kv(0, 1.0)), 12)
    0.421024438241
    >>> float(fd.grad(lambda x: special.kv(0, x))(1.0)) == -float(special.kv(1, 1.0))
    True
    """
    return _of_orders("kv", B.bessel_kv, v, x)


def kve(v, x):
    """The exponentially scaled modified Bessel function ``kv(v, x) * exp(x)`` (x > 0).

    >>> from funcdiff.scipy import special
    >>> round(float(special.kve(0, 1.0)), 12)
    1.144463079807
    """
    return _of_orders("kve", B.bessel_kve, v, x)
