"""fd.random: JAX's functional, key-based random numbers on numpy's Philox generator.

There is no global state: every sampler takes a *key* and the same key always
gives the same numbers, in every process and under every transform (eager,
jit, vmap, grad). Use a key once; make new keys with ``split`` or ``fold_in``.

- A key is a ``numpy.uint32`` array of shape ``(2,)``: ``key(seed)`` and the
  legacy ``PRNGKey(seed)`` both give ``[seed >> 32, seed & 0xFFFFFFFF]`` (JAX's
  legacy key layout). ``split(key, n)`` gives ``uint32[n, 2]``; map over such
  an array with ``fd.vmap`` or index it.
- The bits of a key are those of ``numpy.random.Philox`` keyed by the key's 64
  bits (one ``random_bits`` primitive, ``funcdiff/primitives/random_bits.py``).
  Sampling, splitting and folding in read disjoint parts of Philox's counter.
  Values differ from JAX's (which uses Threefry); the distributions do not.
- Every sampler is written in funcdiff operations on those bits, so under jit
  it is staged (each call of the compiled function draws from the key it is
  given) and under vmap a batch of keys gives independent draws.
- Samples are reparameterised where JAX's are: ``uniform`` in ``minval`` and
  ``maxval``, ``truncated_normal`` in its bounds, ``multivariate_normal`` in
  ``mean`` and ``cov``, ``gamma``/``beta``/``dirichlet``/``t`` in their shape
  parameters (implicit reparameterisation, see ``gamma``); scale and location
  enter as ordinary arithmetic (``mu + sigma * normal(key)``).

>>> import funcdiff as fd
>>> k1, k2 = fd.random.split(fd.random.key(0))
>>> x = fd.random.normal(k1, (3,))
>>> bool((x == fd.random.normal(k1, (3,))).all()), bool((x != fd.random.normal(k2, (3,))).all())
(True, True)
"""

from __future__ import annotations

import math
import operator

import numpy as np

from funcdiff import lax
from funcdiff import numpy as fnp
from funcdiff.core import Tracer, get_aval
from funcdiff.custom_derivatives import custom_jvp
from funcdiff.errors import DTypeError, FunctionalDiffError, InvalidArgumentError, ShapeError
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.primitives.random_bits import KEY_DTYPE, random_bits as _draw_bits
from funcdiff.scipy import special

__all__ = [
    "key", "PRNGKey", "split", "fold_in", "bits", "random_bits", "uniform", "normal", "bernoulli",
    "categorical", "randint", "permutation", "choice", "truncated_normal", "exponential",
    "laplace", "logistic", "gumbel", "cauchy", "gamma", "beta", "dirichlet", "t",
    "multivariate_normal",
]

_SAMPLE, _SPLIT, _FOLD = 0, 1, 2      # the domains of one key's Philox counter


# ---------------------------------------------------------------------------
# Argument checking


def _check_key(k, name: str):
    aval = get_aval(k)
    if aval.dtype != KEY_DTYPE:
        raise DTypeError(
            f"funcdiff.random.{name}: the key must be a uint32[2] key, but got "
            f"{aval.str_short()}. Make one with fd.random.key(seed) (or PRNGKey(seed)), and "
            "new ones with fd.random.split(key) or fd.random.fold_in(key, data).")
    if aval.shape != (2,):
        hint = (" For a batch of keys (split(key, n) gives uint32[n, 2]) use fd.vmap over "
                "them, or index one key." if aval.ndim == 2 and aval.shape[-1] == 2 else "")
        raise ShapeError(
            f"funcdiff.random.{name}: the key must have shape (2,), but got "
            f"{aval.str_short()}.{hint}")
    return k


def _shape(shape, name: str, arg: str = "shape") -> tuple[int, ...]:
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise InvalidArgumentError(
            f"funcdiff.random.{name}: {arg} must be a tuple of non-negative ints, got "
            f"{shape!r}.") from None
    if any(s < 0 for s in shape):
        raise InvalidArgumentError(
            f"funcdiff.random.{name}: {arg} must have non-negative sizes, got {shape}.")
    return shape


def _float_dtype(dtype, name: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise DTypeError(f"funcdiff.random.{name} samples float32 or float64, not {dtype}; "
                         "cast the result if you need another dtype.")
    return dtype


def _concrete(x):
    """The value of ``x`` as a numpy array when it is known now (eager use, grad),
    None when it is abstract (jit, vmap): checks of values run when they can."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return np.asarray(x.to_concrete("a funcdiff.random argument check"))
    except FunctionalDiffError:
        return None


def _broadcast_shape(name: str, shape, *arrays) -> tuple[int, ...]:
    """``shape`` if given (checked to be a broadcast target of the parameters),
    else the broadcast shape of the parameters."""
    shapes = [get_aval(a).shape for a in arrays]
    try:
        joint = np.broadcast_shapes(*shapes)
        if shape is not None and np.broadcast_shapes(shape, joint) != shape:
            raise ValueError
    except ValueError:
        raise ShapeError(
            f"funcdiff.random.{name}: the parameters' shapes {shapes} do not broadcast"
            + (f" to shape={shape}" if shape is not None else "") + "; give parameters "
            "whose shapes broadcast to the result's shape.") from None
    return joint if shape is None else shape


def _toward(x, y):
    """The float next to ``x`` toward ``y``: a bound for clipping, with no derivative."""
    return fnp.nextafter(stop_gradient(x), stop_gradient(y))


def _param(x, dtype):
    """A parameter as an array of the sample dtype (traced values keep their tangents)."""
    return fnp.asarray(x, dtype=dtype)


# ---------------------------------------------------------------------------
# Keys


def key(seed) -> np.ndarray:
    """A key for the seed: ``uint32[2]``, ``[seed >> 32, seed & 0xFFFFFFFF]``.

    Args:
      seed: an integer (negative seeds wrap modulo 2**64); it may be traced.

    Returns:
      ``numpy.uint32[2]`` (a tracer of that type when ``seed`` is traced).

    Raises:
      DTypeError: when ``seed`` is not an integer.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.key(42)
    array([ 0, 42], dtype=uint32)
    """
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = int(seed) % 2**64
        return np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32)
    aval = get_aval(seed)
    if aval.shape != () or aval.dtype.kind not in "iu":
        raise DTypeError(f"funcdiff.random.key needs an integer seed, got {aval.str_short()}; "
                         "pass an int such as key(0).")
    s = fnp.astype(fnp.astype(seed, np.int64), np.uint64)
    return fnp.stack([fnp.astype(fnp.right_shift(s, np.uint64(32)), np.uint32),
                      fnp.astype(fnp.bitwise_and(s, np.uint64(0xFFFFFFFF)), np.uint32)])


def PRNGKey(seed) -> np.ndarray:
    """The legacy name of ``key``: the same ``uint32[2]`` key.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> bool((fd.random.PRNGKey(7) == fd.random.key(7)).all())
    True
    """
    return key(seed)


def split(key, num=2):
    """``num`` new keys derived from ``key``, as ``uint32[num, 2]`` (num may be a shape).

    The new keys are drawn from a part of the key's Philox stream that sampling
    never reads, so ``key`` and its children give unrelated numbers.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> k1, k2 = fd.random.split(fd.random.key(0))
    >>> fd.random.split(k1, 3).shape
    (3, 2)
    """
    _check_key(key, "split")
    shape = _shape(num, "split", "num")
    return _draw_bits(key, np.uint32(0), shape=shape + (2,), dtype=np.dtype(np.uint32),
                       domain=_SPLIT)


def fold_in(key, data):
    """A new key from ``key`` and an integer ``data`` (taken modulo 2**32; may be traced).

    Different ``data`` give unrelated keys: ``fold_in(key, step)`` inside a
    loop gives each step its own key.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> k = fd.random.key(0)
    >>> bool((fd.random.fold_in(k, 1) != fd.random.fold_in(k, 2)).any())
    True
    """
    _check_key(key, "fold_in")
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        data = np.uint32(int(data) % 2**32)
    else:
        aval = get_aval(data)
        if aval.shape != () or aval.dtype.kind not in "iu":
            raise DTypeError(f"funcdiff.random.fold_in needs an integer scalar as data, got "
                             f"{aval.str_short()}.")
        data = fnp.astype(fnp.astype(data, np.int64), np.uint32)
    return _draw_bits(key, data, shape=(2,), dtype=np.dtype(np.uint32), domain=_FOLD)


def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random unsigned integers of ``shape`` (uint8, uint16, uint32 or uint64).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.bits(fd.random.key(0), (2,), np.uint64).dtype
    dtype('uint64')
    """
    _check_key(key, "bits")
    shape, dtype = _shape(shape, "bits"), np.dtype(dtype)
    if dtype not in (np.uint8, np.uint16, np.uint32, np.uint64):
        raise DTypeError(f"funcdiff.random.bits gives unsigned integers, not {dtype}.")
    wide = np.dtype(np.uint64 if dtype == np.uint64 else np.uint32)
    out = _draw_bits(key, np.uint32(0), shape=shape, dtype=wide, domain=_SAMPLE)
    return out if dtype == wide else fnp.astype(out, dtype)


random_bits = bits  # JAX's other name


def _unit(key, shape, dtype, open_interval=False):
    """Uniform floats in [0, 1) (or (0, 1)) from the top mantissa-many bits."""
    if dtype == np.float64:
        raw, mant, word = np.uint64, 52, 64
    else:
        raw, mant, word = np.uint32, 23, 32
    b = _draw_bits(key, np.uint32(0), shape=shape, dtype=np.dtype(raw), domain=_SAMPLE)
    if open_interval:   # k + 1/2 over 2**mant: never 0, never 1
        k = fnp.astype(fnp.right_shift(b, raw(word - mant)), dtype)
        return (k + dtype.type(0.5)) * dtype.type(2.0 ** -mant)
    k = fnp.astype(fnp.right_shift(b, raw(word - mant - 1)), dtype)
    return k * dtype.type(2.0 ** -(mant + 1))


# ---------------------------------------------------------------------------
# Continuous distributions from uniforms


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform samples in ``[minval, maxval)``; differentiable in minval and maxval.

    Raises:
      InvalidArgumentError: when concrete bounds have ``minval >= maxval``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> u = fd.random.uniform(fd.random.key(0), (1000,), minval=2.0, maxval=3.0)
    >>> bool((u >= 2).all() and (u < 3).all())
    True
    """
    _check_key(key, "uniform")
    shape, dtype = _shape(shape, "uniform"), _float_dtype(dtype, "uniform")
    lo, hi = _concrete(minval), _concrete(maxval)
    if lo is not None and hi is not None and np.any(lo >= hi):
        raise InvalidArgumentError(
            f"funcdiff.random.uniform needs minval < maxval, got minval={minval!r} and "
            f"maxval={maxval!r}.")
    minval, maxval = _param(minval, dtype), _param(maxval, dtype)
    shape = _broadcast_shape("uniform", shape, minval, maxval)
    u = _unit(key, shape, dtype)
    # rounding may reach maxval: keep below it (the bound itself has no derivative)
    below = _toward(maxval, minval)
    return fnp.minimum(minval + (maxval - minval) * u, below)


def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples, by the inverse CDF: ``sqrt(2) erfinv(2u - 1)``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> x = fd.random.normal(fd.random.key(0), (10000,))
    >>> bool(abs(x.mean()) < 0.05 and abs(x.std() - 1) < 0.05)
    True
    """
    _check_key(key, "normal")
    shape, dtype = _shape(shape, "normal"), _float_dtype(dtype, "normal")
    return _normal(key, shape, dtype)


def _normal(key, shape, dtype):
    u = _unit(key, shape, dtype, open_interval=True)
    return special.ndtri(u)


def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    """Standard normal samples conditioned on ``lower < x < upper``, by the inverse CDF.

    Differentiable in ``lower`` and ``upper`` (the sample is
    ``ndtri(ndtr(lower) + u (ndtr(upper) - ndtr(lower)))``). Bounds beyond about
    8 standard deviations on the same side lose precision.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> x = fd.random.truncated_normal(fd.random.key(0), -1.0, 2.0, (1000,))
    >>> bool((x > -1).all() and (x < 2).all())
    True
    """
    _check_key(key, "truncated_normal")
    dtype = _float_dtype(dtype, "truncated_normal")
    lo, hi = _concrete(lower), _concrete(upper)
    if lo is not None and hi is not None and np.any(lo >= hi):
        raise InvalidArgumentError(
            f"funcdiff.random.truncated_normal needs lower < upper, got lower={lower!r} and "
            f"upper={upper!r}.")
    lower, upper = _param(lower, dtype), _param(upper, dtype)
    shape = _broadcast_shape("truncated_normal", _shape(shape, "truncated_normal"), lower, upper)
    # the CDF's upper tail is taken by symmetry where it is more accurate
    flip = fnp.broadcast_to((lower + upper) > 0, shape)
    lo_, hi_ = fnp.where(flip, -upper, lower), fnp.where(flip, -lower, upper)
    a, b = special.ndtr(lo_), special.ndtr(hi_)
    u = _unit(key, shape, dtype, open_interval=True)
    x = special.ndtri(a + u * (b - a))
    x = fnp.where(flip, -x, x)
    return fnp.clip(x, _toward(lower, upper), _toward(upper, lower))


def exponential(key, shape=(), dtype=np.float64):
    """Exponential samples of rate 1, ``-log(1 - u)``; divide by a rate to rescale.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> bool((fd.random.exponential(fd.random.key(0), (100,)) >= 0).all())
    True
    """
    _check_key(key, "exponential")
    shape, dtype = _shape(shape, "exponential"), _float_dtype(dtype, "exponential")
    return -fnp.log1p(-_unit(key, shape, dtype))


def laplace(key, shape=(), dtype=np.float64):
    """Laplace samples of scale 1 (density ``exp(-|x|) / 2``), by the inverse CDF.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.laplace(fd.random.key(0), (2, 3)).shape
    (2, 3)
    """
    _check_key(key, "laplace")
    shape, dtype = _shape(shape, "laplace"), _float_dtype(dtype, "laplace")
    v = 2 * _unit(key, shape, dtype, open_interval=True) - 1    # in (-1, 1)
    return -fnp.sign(v) * fnp.log1p(-fnp.abs(v))


def logistic(key, shape=(), dtype=np.float64):
    """Standard logistic samples, ``log(u / (1 - u))``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.logistic(fd.random.key(0), (4,)).dtype
    dtype('float64')
    """
    _check_key(key, "logistic")
    shape, dtype = _shape(shape, "logistic"), _float_dtype(dtype, "logistic")
    u = _unit(key, shape, dtype, open_interval=True)
    return fnp.log(u) - fnp.log1p(-u)


def gumbel(key, shape=(), dtype=np.float64):
    """Standard Gumbel samples, ``-log(-log(u))``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.gumbel(fd.random.key(0), (3,)).shape
    (3,)
    """
    _check_key(key, "gumbel")
    shape, dtype = _shape(shape, "gumbel"), _float_dtype(dtype, "gumbel")
    return _gumbel(key, shape, dtype)


def _gumbel(key, shape, dtype):
    return -fnp.log(-fnp.log(_unit(key, shape, dtype, open_interval=True)))


def cauchy(key, shape=(), dtype=np.float64):
    """Standard Cauchy samples, ``tan(pi (u - 1/2))``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.cauchy(fd.random.key(0), (3,)).shape
    (3,)
    """
    _check_key(key, "cauchy")
    shape, dtype = _shape(shape, "cauchy"), _float_dtype(dtype, "cauchy")
    u = _unit(key, shape, dtype, open_interval=True)
    return fnp.tan(dtype.type(np.pi) * (u - dtype.type(0.5)))


# ---------------------------------------------------------------------------
# Discrete samplers


def bernoulli(key, p=0.5, shape=None):
    """Boolean samples, True with probability ``p``.

    Raises:
      InvalidArgumentError: when a concrete ``p`` lies outside [0, 1].

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> b = fd.random.bernoulli(fd.random.key(0), 0.3, (10000,))
    >>> bool(abs(b.mean() - 0.3) < 0.02)
    True
    """
    _check_key(key, "bernoulli")
    p_value = _concrete(p)
    if p_value is not None and not np.all((p_value >= 0) & (p_value <= 1)):
        raise InvalidArgumentError(
            f"funcdiff.random.bernoulli needs a probability p in [0, 1], got p={p!r}.")
    p = _param(p, fnp.result_type(p, np.float32) if get_aval(p).dtype.kind == "f"
               else np.float64)
    dtype = get_aval(p).dtype
    shape = _broadcast_shape("bernoulli", _shape(shape, "bernoulli"), p)
    return _unit(key, shape, dtype) < p


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers uniform in ``[minval, maxval)`` (each a bound per element, broadcast).

    The remainder of a 64-bit word by the span: the bias is below span / 2**64.

    Raises:
      InvalidArgumentError: when concrete bounds have ``minval >= maxval``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> r = fd.random.randint(fd.random.key(0), (1000,), 3, 7)
    >>> sorted(set(r.tolist()))
    [3, 4, 5, 6]
    """
    _check_key(key, "randint")
    shape, dtype = _shape(shape, "randint"), np.dtype(dtype)
    if dtype.kind not in "iu":
        raise DTypeError(f"funcdiff.random.randint gives integers, not {dtype}.")
    lo, hi = _concrete(minval), _concrete(maxval)
    if lo is not None and hi is not None and np.any(lo >= hi):
        raise InvalidArgumentError(
            f"funcdiff.random.randint needs minval < maxval, got minval={minval!r} and "
            f"maxval={maxval!r}.")
    minval, maxval = fnp.asarray(minval, dtype=np.int64), fnp.asarray(maxval, dtype=np.int64)
    shape = _broadcast_shape("randint", shape, minval, maxval)
    span = fnp.astype(fnp.maximum(maxval - minval, 1), np.uint64)
    b = _draw_bits(key, np.uint32(0), shape=shape, dtype=np.dtype(np.uint64), domain=_SAMPLE)
    return fnp.astype(minval + fnp.astype(b % span, np.int64), dtype)


def categorical(key, logits, axis=-1, shape=None):
    """Indices sampled with probabilities ``softmax(logits, axis)``, by the Gumbel-max trick.

    ``shape`` (default: ``logits``' shape without ``axis``) must end with that shape.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.categorical(fd.random.key(0), fnp.log(np.array([0.2, 0.8])), shape=(5,)).shape
    (5,)
    """
    _check_key(key, "categorical")
    logits = fnp.asarray(logits)
    if get_aval(logits).dtype.kind != "f":
        logits = fnp.astype(logits, np.float64)
    lshape, dtype = get_aval(logits).shape, get_aval(logits).dtype
    if not lshape:
        raise ShapeError("funcdiff.random.categorical needs logits with at least one axis.")
    axis = axis % len(lshape)
    batch = lshape[:axis] + lshape[axis + 1:]
    shape = _shape(shape, "categorical")
    if shape is None:
        shape = batch
    elif np.broadcast_shapes(shape, batch) != shape:
        raise ShapeError(f"funcdiff.random.categorical: shape={shape} must be a broadcast "
                         f"target of the logits' batch shape {batch}.")
    lead = shape[:len(shape) - len(batch)]
    rest = shape[len(shape) - len(batch):]
    full = lead + rest[:axis] + (lshape[axis],) + rest[axis:]
    noisy = logits + _gumbel(key, full, dtype)
    return fnp.argmax(noisy, axis=len(lead) + axis)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``.

    With ``independent=True`` each slice along ``axis`` is permuted on its own.
    The order is that of sorting random 64-bit words.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> sorted(fd.random.permutation(fd.random.key(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    _check_key(key, "permutation")
    if isinstance(x, (int, np.integer)):
        n = operator.index(x)
        b = _draw_bits(key, np.uint32(0), shape=(n,), dtype=np.dtype(np.uint64), domain=_SAMPLE)
        return fnp.argsort(b)
    xshape = get_aval(x).shape
    if not xshape:
        raise ShapeError("funcdiff.random.permutation needs an int or an array with an axis.")
    axis = axis % len(xshape)
    if independent:
        b = _draw_bits(key, np.uint32(0), shape=xshape, dtype=np.dtype(np.uint64),
                        domain=_SAMPLE)
        return fnp.take_along_axis(x, fnp.argsort(b, axis=axis), axis=axis)
    order = permutation(key, xshape[axis])
    return fnp.take(x, order, axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Samples of ``a``'s entries along ``axis`` (or of ``arange(a)`` for an int).

    With ``p`` the entries have those probabilities (Gumbel-max, and without
    replacement Gumbel-top-k, which is sequential sampling without replacement).

    Raises:
      InvalidArgumentError: when ``replace=False`` asks for more samples than entries,
        or ``p`` is concretely negative or of the wrong length.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> sorted(fd.random.choice(fd.random.key(0), 5, (5,), replace=False).tolist())
    [0, 1, 2, 3, 4]
    """
    _check_key(key, "choice")
    shape = _shape(shape, "choice")
    if isinstance(a, (int, np.integer)):
        n, arr = operator.index(a), None
    else:
        arr = fnp.asarray(a)
        ashape = get_aval(arr).shape
        if not ashape:
            raise ShapeError("funcdiff.random.choice needs an int or an array with an axis.")
        axis = axis % len(ashape)
        n = ashape[axis]
    k = math.prod(shape)
    if not replace and k > n:
        raise InvalidArgumentError(
            f"funcdiff.random.choice cannot take {k} samples from {n} entries without "
            "replacement; use replace=True or a smaller shape.")
    if p is not None:
        p_value = _concrete(p)
        if get_aval(p).shape != (n,):
            raise InvalidArgumentError(f"funcdiff.random.choice needs p of shape ({n},), got "
                                       f"{get_aval(p).shape}.")
        if p_value is not None and np.any(p_value < 0):
            raise InvalidArgumentError("funcdiff.random.choice needs non-negative p.")
        p = fnp.asarray(p, dtype=np.float64)
        logp = fnp.where(p > 0, fnp.log(fnp.where(p > 0, p, 1.0)), -np.inf)
    if replace and p is None:
        index = randint(key, shape, 0, n)
    elif replace:
        index = categorical(key, logp, shape=shape)
    elif p is None:
        index = fnp.reshape(permutation(key, n)[:k], shape)
    else:
        noisy = logp + _gumbel(key, (n,), np.dtype(np.float64))
        index = fnp.reshape(fnp.argsort(-noisy)[:k], shape)
    return index if arr is None else fnp.take(arr, index, axis=axis)


# ---------------------------------------------------------------------------
# Gamma and the distributions built on it


def gamma(key, a, shape=None, dtype=np.float64):
    """Gamma samples of shape ``a`` and scale 1 (divide by a rate to rescale).

    Sampling: Marsaglia and Tsang's squeeze method (a cubed normal accepted by
    a log-uniform test, at least 95% of draws per round) in a ``while_loop``
    whose every round draws for all elements from ``fold_in(key, round)`` and
    keeps the first accepted value of each; for ``a < 1`` a sample of
    ``a + 1`` times ``u ** (1 / a)``, in logarithms.

    Derivative in ``a``: implicit reparameterisation, ``dx/da = -(dP/da) /
    (dP/dx)`` with ``P(a, x)`` the regularised lower incomplete gamma function,
    whose ``a``-derivative is summed from the series ``P = sum_n x**(a+n)
    exp(-x) / Gamma(a + n + 1)`` over 256 terms around its peak term:
    ``dx/da = sum_n x**(n+1) Gamma(a) / Gamma(a+n+1) (digamma(a+n+1) - log x)``.
    The window holds the series for samples up to about x = 200 (a up to about
    150); beyond, the derivative is nan rather than a wrong number.

    Raises:
      InvalidArgumentError: when a concrete ``a`` is not positive.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> g = fd.random.gamma(fd.random.key(0), 3.0, (20000,))
    >>> bool(abs(g.mean() - 3.0) < 0.05)
    True
    >>> dx = fd.grad(lambda a: fd.random.gamma(fd.random.key(0), a))(3.0)   # reparameterised
    """
    _check_key(key, "gamma")
    dtype = _float_dtype(dtype, "gamma")
    a_value = _concrete(a)
    if a_value is not None and not np.all(a_value > 0):
        raise InvalidArgumentError(f"funcdiff.random.gamma needs a > 0, got a={a!r}.")
    a = _param(a, dtype)
    shape = _broadcast_shape("gamma", _shape(shape, "gamma"), a)
    return _gamma(key, fnp.broadcast_to(a, shape))


@custom_jvp
def _gamma(key, a):
    return _marsaglia_tsang(key, a)


@_gamma.defjvp
def _gamma_jvp(primals, tangents):
    key, a = primals
    x = _gamma(key, a)
    return x, _gamma_dx_da(x, a) * tangents[1]


def _marsaglia_tsang(key, a):
    dtype, shape = get_aval(a).dtype, get_aval(a).shape
    boost = a < 1
    d = fnp.where(boost, a + 1, a) - dtype.type(1 / 3)
    c = 1 / fnp.sqrt(9 * d)
    key_rounds, key_boost = split(key)

    def round_(state):
        i, x, done = state
        kz, ku = split(fold_in(key_rounds, i))
        z, u = _normal(kz, shape, dtype), _unit(ku, shape, dtype, open_interval=True)
        v = (1 + c * z) ** 3
        v_safe = fnp.where(v > 0, v, 1)
        ok = (v > 0) & (fnp.log(u) < z * z / 2 + d - d * v_safe + d * fnp.log(v_safe))
        return i + 1, fnp.where(done | ~ok, x, d * v_safe), done | ok

    start = (np.int64(0), fnp.zeros(shape, dtype), fnp.zeros(shape, bool))
    _, x, _ = lax.while_loop(lambda s: ~fnp.all(s[2]), round_, start)
    log_u = fnp.log(_unit(key_boost, shape, dtype, open_interval=True))
    return fnp.where(boost, fnp.exp(fnp.log(x) + log_u / fnp.where(boost, a, 1)), x)


_DERIVATIVE_TERMS = 256


def _gamma_dx_da(x, a):
    """dx/da of a gamma sample by implicit reparameterisation (see ``gamma``)."""
    dtype = get_aval(x).dtype
    positive = x > 0
    xs = fnp.where(positive, x, 1)[..., None]
    a_ = a[..., None]
    log_x = fnp.log(xs)
    # the terms peak near n = x - a; sum a window of _DERIVATIVE_TERMS around it
    start = fnp.floor(fnp.maximum(xs - a_ - _DERIVATIVE_TERMS / 2, 0))
    n = start + fnp.arange(_DERIVATIVE_TERMS, dtype=dtype)
    log_term = (n + 1) * log_x + special.gammaln(a_) - special.gammaln(a_ + n + 1)
    terms = fnp.exp(log_term) * (special.digamma(a_ + n + 1) - log_x)
    total = fnp.sum(terms, axis=-1)
    # the window's edges must be negligible, else the series was cut short
    edge = fnp.maximum(fnp.where(start[..., 0] > 0, log_term[..., 0], -np.inf), log_term[..., -1])
    converged = edge < fnp.max(log_term, axis=-1) - 40
    return fnp.where(positive, fnp.where(converged, total, np.nan), 0)


def beta(key, a, b, shape=None, dtype=np.float64):
    """Beta samples, ``X / (X + Y)`` for gammas X of ``a`` and Y of ``b``; differentiable in a, b.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> x = fd.random.beta(fd.random.key(0), 2.0, 3.0, (20000,))
    >>> bool(abs(x.mean() - 0.4) < 0.01)
    True
    """
    _check_key(key, "beta")
    dtype = _float_dtype(dtype, "beta")
    for name, v in (("a", a), ("b", b)):
        value = _concrete(v)
        if value is not None and not np.all(value > 0):
            raise InvalidArgumentError(f"funcdiff.random.beta needs {name} > 0, got {name}={v!r}.")
    a, b = _param(a, dtype), _param(b, dtype)
    shape = _broadcast_shape("beta", _shape(shape, "beta"), a, b)
    ka, kb = split(key)
    x, y = _gamma(ka, fnp.broadcast_to(a, shape)), _gamma(kb, fnp.broadcast_to(b, shape))
    return x / (x + y)


def dirichlet(key, alpha, shape=None, dtype=np.float64):
    """Dirichlet samples over ``alpha``'s last axis (normalised gammas); differentiable in alpha.

    ``shape`` is the batch shape (default ``alpha.shape[:-1]``); the result has
    shape ``shape + alpha.shape[-1:]``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.dirichlet(fd.random.key(0), np.ones(3), (4,)).sum(axis=-1).round(12).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    _check_key(key, "dirichlet")
    dtype = _float_dtype(dtype, "dirichlet")
    value = _concrete(alpha)
    if value is not None and not np.all(value > 0):
        raise InvalidArgumentError(f"funcdiff.random.dirichlet needs alpha > 0, got {alpha!r}.")
    alpha = _param(alpha, dtype)
    ashape = get_aval(alpha).shape
    if not ashape:
        raise ShapeError("funcdiff.random.dirichlet needs alpha with at least one axis.")
    batch = _shape(shape, "dirichlet")
    batch = _broadcast_shape("dirichlet", batch, fnp.zeros(ashape[:-1]))
    g = _gamma(key, fnp.broadcast_to(alpha, batch + ashape[-1:]))
    return g / fnp.sum(g, axis=-1, keepdims=True)


def t(key, df, shape=(), dtype=np.float64):
    """Student's t samples with ``df`` degrees of freedom, ``z sqrt(df / chi2_df)``.

    Differentiable in ``df`` (through the gamma sample).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.t(fd.random.key(0), 5.0, (3,)).shape
    (3,)
    """
    _check_key(key, "t")
    dtype = _float_dtype(dtype, "t")
    value = _concrete(df)
    if value is not None and not np.all(value > 0):
        raise InvalidArgumentError(f"funcdiff.random.t needs df > 0, got df={df!r}.")
    df = _param(df, dtype)
    shape = _broadcast_shape("t", _shape(shape, "t"), df)
    kz, kg = split(key)
    half = fnp.broadcast_to(df / 2, shape)
    return _normal(kz, shape, dtype) * fnp.sqrt(half / _gamma(kg, half))


def multivariate_normal(key, mean, cov, shape=None, dtype=np.float64, method="cholesky"):
    """Samples ``mean + A z`` with ``A A^T = cov``; differentiable in mean and cov.

    Args:
      mean: ``(..., n)``; cov: ``(..., n, n)`` symmetric positive definite (semi-definite
        for ``method="eigh"`` or ``"svd"``).
      shape: the batch shape of the result (default: the broadcast batch shapes of
        mean and cov); the result has shape ``shape + (n,)``.
      method: ``"cholesky"`` (A the Cholesky factor), ``"eigh"`` or ``"svd"``
        (A = U sqrt(S)).

    Raises:
      InvalidArgumentError: for an unknown method, or a concrete cov that is not
        positive definite (cholesky) or has negative eigenvalues (eigh, svd).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> x = fd.random.multivariate_normal(fd.random.key(0), np.zeros(2), cov, (20000,))
    >>> bool(np.allclose(np.cov(x.T), cov, atol=0.06))
    True
    """
    _check_key(key, "multivariate_normal")
    dtype = _float_dtype(dtype, "multivariate_normal")
    if method not in ("cholesky", "eigh", "svd"):
        raise InvalidArgumentError(f"funcdiff.random.multivariate_normal: method must be "
                                   f"'cholesky', 'eigh' or 'svd', got {method!r}.")
    mean, cov = _param(mean, dtype), _param(cov, dtype)
    mshape, cshape = get_aval(mean).shape, get_aval(cov).shape
    if not mshape or len(cshape) < 2 or cshape[-2:] != (mshape[-1],) * 2:
        raise ShapeError(f"funcdiff.random.multivariate_normal needs mean (..., n) and cov "
                         f"(..., n, n), got {mshape} and {cshape}.")
    _check_covariance(cov, method)
    batch = _broadcast_shape("multivariate_normal", _shape(shape, "multivariate_normal"),
                             fnp.zeros(mshape[:-1]), fnp.zeros(cshape[:-2]))
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(fnp.maximum(w, 0))[..., None, :]
    else:
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s)[..., None, :]
    z = _normal(key, batch + mshape[-1:], dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


def _check_covariance(cov, method):
    value = _concrete(cov)
    if value is None:
        return
    w = np.linalg.eigvalsh((value + np.swapaxes(value, -1, -2)) / 2)
    scale = np.max(np.abs(w)) if w.size else 0.0
    bad = np.any(w <= 0) if method == "cholesky" else np.any(w < -1e-10 * scale)
    if bad:
        raise InvalidArgumentError(
            f"funcdiff.random.multivariate_normal: cov is not positive "
            f"{'definite' if method == 'cholesky' else 'semi-definite'} (smallest eigenvalue "
            f"{w.min():.3g}). Pass a symmetric positive definite covariance"
            + (", or method='eigh' for a semi-definite one." if method == "cholesky" else "."))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
