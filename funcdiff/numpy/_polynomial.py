"""numpy's legacy polynomial functions on coefficient arrays, and the Vandermonde matrix.

A polynomial is a 1-D array of coefficients, highest power first (``[1, 2, 3]``
is ``x**2 + 2*x + 3``), as in ``numpy.polyval`` and friends. Every function
here composes funcdiff.numpy operations (Horner's rule for ``polyval``, a
padded add for ``polyadd``/``polysub``, ``convolve`` for ``polymul``, long
division by shifted subtractions for ``polydiv``, one multiplication or
division by static factors for ``polyder``/``polyint``, a cumulative product
for ``vander``), so all of them trace, batch, compile and differentiate in the
coefficients, in ``x`` and in ``polyint``'s constants. The derivative order
``m``, ``vander``'s ``N`` and the lengths of ``polydiv``'s operands decide the
result's length, so they must be static, as in JAX. Fitting (``polyfit``) and
roots (``poly``, ``roots``) live in ``_polynomial_fit`` and
``_polynomial_roots``.

Dtypes follow numpy, except that float32 (and float16) inputs stay in their
precision where numpy widens them to float64 by mixing in int64 factors
(``polyder``, ``polyint``, ``vander``): funcdiff keeps float32 as float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.errors import ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.numpy._views import returns_copies

_INT = np.dtype(np.int64)


def _coefficients(x: Any, name: str, arg: str, *, ndim_one: bool = True) -> Any:
    """``x`` as an array of rank >= 1 (scalars become length 1, as numpy's
    ``atleast_1d``); with ``ndim_one``, exactly 1-D."""
    if isinstance(x, np.poly1d):
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.{name} works on coefficient arrays, not numpy.poly1d objects; "
            f"pass {arg}.coeffs (a 1-D array, highest power first) instead.")
    x = _util.asarray(x, name)  # Python scalars become strong arrays, as numpy's asarray
    shape = _util.shape_of(x)
    if not shape:
        return fnp.reshape(x, (1,))
    if ndim_one and len(shape) != 1:
        raise ShapeError(f"funcdiff.numpy.{name} needs {arg} as a 1-D array of coefficients "
                         f"(highest power first), but got shape {shape}; pass one polynomial "
                         f"at a time, or use vmap for a batch of them.")
    return x


def _check_nonempty(name: str, **arrays) -> None:
    """numpy rejects empty coefficient arrays in polymul and polydiv; so does funcdiff."""
    for arg, a in arrays.items():
        if _util.shape_of(a)[0] == 0:
            raise ShapeError(f"funcdiff.numpy.{name} needs non-empty coefficient arrays "
                             f"(numpy rejects empty ones too), but {arg} is empty; write the "
                             f"zero polynomial as [0.].")


def polyval(p: Any, x: Any) -> Any:
    """The polynomial with coefficients ``p`` evaluated at ``x`` (numpy.polyval).

    Horner's rule: ``p[0] * x**(n-1) + ... + p[n-1]``, evaluated elementwise
    over ``x``. Differentiable in ``p`` and ``x``. Unlike numpy, which starts
    from ``0 * x``, the first step is ``p[0]`` itself, so an infinite ``x``
    gives the mathematically right infinity rather than nan.

    Args:
      p: coefficients, highest power first: 1-D, or of rank > 1 to evaluate
        several polynomials at once (numpy iterates over its first axis; the
        other axes broadcast with ``x``).
      x: where to evaluate, any shape.

    Returns:
      An array of the broadcast shape of ``p.shape[1:]`` and ``x``, in the
      promoted dtype of ``p`` and ``x`` (integers stay integers); for an empty
      ``p``, zeros like ``x``.

    Raises:
      ShapeError: for a 0-d ``p`` (numpy rejects it too).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polyval(np.array([1., 2., 3.]), np.array([0., 1., 2.]))
    array([ 3.,  6., 11.])
    """
    if isinstance(p, np.poly1d):
        p = p.coeffs  # its coefficient array, exactly what numpy evaluates
    if isinstance(x, np.poly1d):
        raise UnsupportedNumpyError(
            "funcdiff.numpy.polyval evaluates at numbers, not at numpy.poly1d objects "
            "(numpy composes the polynomials then); pass an array of points as x.")
    p, x = _util.asarray(p, "polyval"), _util.asarray(x, "polyval")
    p_shape = _util.shape_of(p)
    if not p_shape:
        raise ShapeError(f"funcdiff.numpy.polyval needs p as an array of coefficients of rank "
                         f">= 1 (highest power first), but got a 0-d {_util.dtype_of(p)}; "
                         f"pass [c] for a constant polynomial.")
    if p_shape[0] == 0:
        return fnp.zeros_like(x)
    p, x = _util.promote("polyval", p, x)
    y = fnp.broadcast_to(p[0], broadcast_shapes("polyval", p_shape[1:], _util.shape_of(x)))
    for i in range(1, p_shape[0]):
        y = fnp.add(fnp.multiply(y, x), p[i])
    return y


def _padded_pair(name: str, a1: Any, a2: Any) -> tuple[Any, Any]:
    """``a1`` and ``a2`` in one dtype and one length: the shorter gains leading zeros
    (the coefficients of its missing high powers)."""
    a1, a2 = _util.promote(name, _coefficients(a1, name, "a1"), _coefficients(a2, name, "a2"))
    n1, n2 = _util.shape_of(a1)[0], _util.shape_of(a2)[0]
    dtype = _util.dtype_of(a1)
    if n1 < n2:
        a1 = fnp.concatenate([np.zeros(n2 - n1, dtype), a1])
    elif n2 < n1:
        a2 = fnp.concatenate([np.zeros(n1 - n2, dtype), a2])
    return a1, a2


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (numpy.polyadd).

    Args:
      a1, a2: 1-D coefficient arrays (or scalars), highest power first; the
        shorter one is aligned at the constant term.

    Returns:
      The coefficients of ``a1 + a2``, as long as the longer input (leading
      zeros are kept, as in numpy), in the promoted dtype.

    Raises:
      ShapeError: for inputs of rank above 1.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polyadd(np.array([1., 2.]), np.array([1., 0., 3.]))
    array([1., 1., 5.])
    """
    a1, a2 = _padded_pair("polyadd", a1, a2)
    return fnp.add(a1, a2)


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials, ``a1 - a2`` (numpy.polysub).

    Args and Returns as for ``polyadd``; boolean coefficients are rejected,
    as numpy's boolean subtraction is.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polysub(np.array([1., 2.]), np.array([1., 0., 3.]))
    array([-1.,  1., -1.])
    """
    a1, a2 = _padded_pair("polysub", a1, a2)
    return fnp.subtract(a1, a2)


def polymul(a1: Any, a2: Any) -> Any:
    """The product of two polynomials (numpy.polymul): the convolution of their
    coefficients.

    Args:
      a1, a2: non-empty 1-D coefficient arrays (or scalars), highest power first.

    Returns:
      The ``len(a1) + len(a2) - 1`` coefficients of ``a1 * a2``, in the
      promoted dtype. numpy first strips leading zeros from the inputs (a
      length that depends on the values); funcdiff keeps them, as JAX does by
      default, so the result can start with zeros: the same polynomial.

    Raises:
      ShapeError: for an empty input (numpy rejects it too) or one of rank above 1.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polymul(np.array([1., 2.]), np.array([1., -2.]))
    array([ 1.,  0., -4.])
    """
    a1, a2 = _coefficients(a1, "polymul", "a1"), _coefficients(a2, "polymul", "a2")
    _check_nonempty("polymul", a1=a1, a2=a2)
    return fnp.convolve(a1, a2)


@returns_copies
def polydiv(u: Any, v: Any) -> tuple[Any, Any]:
    """The quotient and remainder of polynomial division, ``u = q * v + r`` (numpy.polydiv).

    Long division: for each power of the quotient, its coefficient is the
    leading remaining coefficient over ``v[0]``, and ``v`` times it is
    subtracted. Differentiable in ``u`` and ``v`` (wherever ``v[0] != 0``).

    The remainder has a static length: the ``len(v) - 1`` coefficients of
    degree below ``v``'s (one, for a constant ``v``), or all of ``u`` when it
    is shorter than ``v``. numpy instead strips the remainder's leading
    coefficients while they are within 1e-8 of zero; the two agree whenever
    the remainder's leading coefficient is not (numerically) zero, and
    otherwise funcdiff keeps the leading zeros (``[0., 5.]`` where numpy
    gives ``[5.]``), so the shape does not depend on values and the function
    traces under jit and vmap.

    Args:
      u: the dividend, non-empty 1-D coefficients (or a scalar), highest power first.
      v: the divisor, likewise; ``v[0]`` should be non-zero (as in numpy, a
        zero leading coefficient gives inf and nan).

    Returns:
      ``(q, r)``: ``max(len(u) - len(v) + 1, 1)`` quotient coefficients (``[0.]``
      when ``u`` is shorter than ``v``) and the remainder, floating point:
      float64 for integer inputs, float32 when both are float32.

    Raises:
      ShapeError: for an empty input or one of rank above 1.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polydiv(np.array([1., 3., 5.]), np.array([1., 1.]))   # x^2+3x+5 = (x+2)(x+1) + 3
    (array([1., 2.]), array([3.]))
    """
    u, v = _coefficients(u, "polydiv", "u"), _coefficients(v, "polydiv", "v")
    _check_nonempty("polydiv", u=u, v=v)
    u, v = _util.promote_to_float("polydiv", u, v)
    m, n = _util.shape_of(u)[0] - 1, _util.shape_of(v)[0] - 1
    if m < n:  # the degree of u is below v's: all of u remains
        return np.zeros(1, _util.dtype_of(u)), u
    scale = fnp.divide(1.0, v[0])
    quotient, r = [], u
    for k in range(m - n + 1):
        d = fnp.multiply(scale, r[k])
        quotient.append(d)
        r = fnp.subtract(r, fnp.pad(fnp.multiply(d, v), (k, m - n - k)))
    # r[:m-n+1] is now zero up to rounding; the remainder is what follows
    return fnp.stack(quotient), r[m - n + 1:] if n else r[m:]


def _float_or_int64(dtype: np.dtype) -> np.dtype:
    """The dtype of static integer factors applied to coefficients of ``dtype``: its
    own for floats (float32 stays float32), numpy's promotion with int64 otherwise."""
    return dtype if dtypes.is_float(dtype) else np.promote_types(dtype, _INT)


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial (numpy.polyder).

    Args:
      p: 1-D coefficients, highest power first (a scalar counts as one).
      m: the order of the derivative, a concrete int >= 0 (it fixes the length
        of the result, as in JAX).

    Returns:
      ``max(len(p) - m, 0)`` coefficients (``p`` itself for ``m=0``); integers
      follow numpy's promotion with int64, floats keep their dtype.

    Raises:
      InvalidArgumentError: for a negative or non-integer ``m``.
      ConcretizationError: for an ``m`` without concrete value (under jit or vmap).
      ShapeError: for a ``p`` of rank above 1.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polyder(np.array([1., 2., 3., 4.]))
    array([3., 4., 3.])
    >>> fnp.polyder(np.array([1., 2., 3., 4.]), m=2)
    array([6., 4.])
    """
    m = _util.static_count(m, "polyder", "m", "the order of the derivative")
    p = _coefficients(p, "polyder", "p")
    if m == 0:
        return p
    n = _util.shape_of(p)[0]
    kept = max(n - m, 0)
    # d^m/dx^m x**k = k (k-1) ... (k-m+1) x**(k-m): the falling factorial of each power
    factors = []
    for power in range(n - 1, n - 1 - kept, -1):
        factor = 1
        for j in range(m):
            factor *= power - j
        factors.append(factor)
    dtype = _float_or_int64(_util.dtype_of(p))
    if dtype.kind in "iu":  # numpy's repeated int64 products wrap; so do these
        factors = [(f + 2 ** 63) % 2 ** 64 - 2 ** 63 for f in factors]
    return fnp.multiply(p[:kept], np.array(factors, dtype=dtype))


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial (numpy.polyint).

    Each integration divides the coefficient of ``x**j`` by ``j + 1`` and
    appends an integration constant: ``k[0]`` for the first, ``k[1]`` for the
    second, and so on (so ``k[m-1]`` ends as the constant term).

    Args:
      p: 1-D coefficients, highest power first (a scalar counts as one).
      m: the order of the antiderivative, a concrete int >= 0 (it fixes the
        length of the result, as in JAX).
      k: the integration constants: a scalar (used for every integration) or a
        1-D array of at least ``m`` values; default zeros. Differentiable.

    Returns:
      ``len(p) + m`` coefficients (``p`` itself for ``m=0``), floating point:
      float64 for integer inputs, float32 when ``p`` and ``k`` are float32.

    Raises:
      InvalidArgumentError: for a negative or non-integer ``m``.
      ConcretizationError: for an ``m`` without concrete value (under jit or vmap).
      ShapeError: for a ``p`` or ``k`` of rank above 1, or a ``k`` too short.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.polyint(np.array([3., 2., 1.]))
    array([1., 1., 1., 0.])
    >>> fnp.polyint(np.array([6.]), m=2, k=[1., 5.])
    array([3., 1., 5.])
    """
    m = _util.static_count(m, "polyint", "m", "the order of the antiderivative")
    p = _coefficients(p, "polyint", "p")
    if k is None:
        k = np.zeros(m, dtypes.default_float)
        weak = True
    else:
        weak = type(k) in (bool, int, float)  # a Python scalar keeps p's precision
        k = _coefficients(k, "polyint", "k")
        count = _util.shape_of(k)[0]
        if count == 1 and m > 1:
            k = fnp.broadcast_to(k, (m,))
        elif count < m:
            raise ShapeError(f"funcdiff.numpy.polyint needs one integration constant per "
                             f"integration: k must be a scalar or have at least m={m} values, "
                             f"but it has {count}.")
    if m == 0:
        return p
    n = _util.shape_of(p)[0]
    # Integration j divides every coefficient by the power it then multiplies; the
    # constants appended so far are divided too. One division by the products.
    divisors = [1] * n
    for _ in range(m):
        length = len(divisors)
        divisors = [d * (length - i) for i, d in enumerate(divisors)] + [1]
    dtype = dtypes.result_type(p, *([] if weak else [k]))
    if not dtypes.is_float(dtype):
        dtype = dtypes.default_float
    coefficients = fnp.concatenate([_util.cast(p, dtype), _util.cast(k[:m], dtype)])
    return fnp.divide(coefficients, np.array(divisors, dtype=dtype))


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of ``x`` (numpy.vander): column ``j`` holds
    ``x**(N-1-j)`` (or ``x**j`` with ``increasing=True``).

    The powers are a cumulative product, as in numpy, so ``x**0`` is exactly 1
    (also for 0, inf and nan) and the derivative is exact at ``x = 0``.

    Args:
      x: a 1-D array.
      N: the number of columns, a concrete int >= 0 (default ``len(x)``; it
        fixes the shape of the result, as in JAX).
      increasing: powers increase from left to right.

    Returns:
      A ``(len(x), N)`` array; integers and booleans become numpy's
      ``promote_types(x.dtype, int)``, floats keep their dtype.

    Raises:
      ShapeError: for an ``x`` of rank other than 1.
      InvalidArgumentError: for a negative or non-integer ``N``.
      ConcretizationError: for an ``N`` without concrete value (under jit or vmap).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.vander(np.array([1., 2., 3.]))
    array([[1., 1., 1.],
           [4., 2., 1.],
           [9., 3., 1.]])
    """
    x = _util.asarray(x, "vander")
    shape = _util.shape_of(x)
    if len(shape) != 1:
        raise ShapeError(f"funcdiff.numpy.vander needs x as a 1-D array, but got shape "
                         f"{shape}; ravel it first, or use vmap for a batch of vectors.")
    length = shape[0]
    N = length if N is None else _util.static_count(N, "vander", "N", "the number of columns")
    dtype = _float_or_int64(_util.dtype_of(x))
    if N == 0:
        return np.zeros((length, 0), dtype)
    x = _util.cast(x, dtype)
    columns = [np.ones((length, 1), dtype)]
    if N > 1:
        columns.append(fnp.cumprod(fnp.broadcast_to(x[:, None], (length, N - 1)), axis=1))
    out = fnp.concatenate(columns, axis=1)
    return out if increasing else fnp.flip(out, axis=1)


__all__ = ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "vander"]
