"""Discrete samplers: bernoulli, randint, categorical (Gumbel-max), permutation
(sorting random words) and choice (with or without replacement, with or without p).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from funcdiff import numpy as fnp
from funcdiff.core import get_aval
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError
from funcdiff.random._continuous import standard_gumbel
from funcdiff.random._keys import (SAMPLE, check_key, concrete, draw_bits, param,
                                   result_shape, sample_shape, unit_floats)

__all__ = ["bernoulli", "randint", "categorical", "permutation", "choice"]

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
    check_key(key, "bernoulli")
    p_value = concrete(p)
    if p_value is not None and not np.all((p_value >= 0) & (p_value <= 1)):
        raise InvalidArgumentError(
            f"funcdiff.random.bernoulli needs a probability p in [0, 1], got p={p!r}.")
    p = param(p, fnp.result_type(p, np.float32) if get_aval(p).dtype.kind == "f"
               else np.float64)
    dtype = get_aval(p).dtype
    shape = result_shape("bernoulli", sample_shape(shape, "bernoulli"), p)
    return unit_floats(key, shape, dtype) < p


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
    check_key(key, "randint")
    shape, dtype = sample_shape(shape, "randint"), np.dtype(dtype)
    if dtype.kind not in "iu":
        raise DTypeError(f"funcdiff.random.randint gives integers, not {dtype}.")
    lo, hi = concrete(minval), concrete(maxval)
    if lo is not None and hi is not None and np.any(lo >= hi):
        raise InvalidArgumentError(
            f"funcdiff.random.randint needs minval < maxval, got minval={minval!r} and "
            f"maxval={maxval!r}.")
    minval, maxval = fnp.asarray(minval, dtype=np.int64), fnp.asarray(maxval, dtype=np.int64)
    shape = result_shape("randint", shape, minval, maxval)
    span = fnp.astype(fnp.maximum(maxval - minval, 1), np.uint64)
    b = draw_bits(key, np.uint32(0), shape=shape, dtype=np.dtype(np.uint64), domain=SAMPLE)
    return fnp.astype(minval + fnp.astype(b % span, np.int64), dtype)


def categorical(key, logits, axis=-1, shape=None):
    """Indices sampled with probabilities ``softmax(logits, axis)``, by the Gumbel-max trick.

    ``shape`` (default: ``logits``' shape without ``axis``) must end with that shape.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.categorical(fd.random.key(0), fnp.log(np.array([0.2, 0.8])), shape=(5,)).shape
    (5,)
    """
    check_key(key, "categorical")
    logits = fnp.asarray(logits)
    if get_aval(logits).dtype.kind != "f":
        logits = fnp.astype(logits, np.float64)
    lshape, dtype = get_aval(logits).shape, get_aval(logits).dtype
    if not lshape:
        raise ShapeError("funcdiff.random.categorical needs logits with at least one axis.")
    axis = axis % len(lshape)
    batch = lshape[:axis] + lshape[axis + 1:]
    shape = sample_shape(shape, "categorical")
    if shape is None:
        shape = batch
    elif np.broadcast_shapes(shape, batch) != shape:
        raise ShapeError(f"funcdiff.random.categorical: shape={shape} must be a broadcast "
                         f"target of the logits' batch shape {batch}.")
    lead = shape[:len(shape) - len(batch)]
    rest = shape[len(shape) - len(batch):]
    full = lead + rest[:axis] + (lshape[axis],) + rest[axis:]
    noisy = logits + standard_gumbel(key, full, dtype)
    return fnp.argmax(noisy, axis=len(lead) + axis)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``.

    With ``independent=True`` each slice along ``axis`` is permuted on its own.
    The order is that of sorting random 64-bit words.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> sorted(fd.random.permutation(fd.random.key(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    check_key(key, "permutation")
    if isinstance(x, (int, np.integer)):
        n = operator.index(x)
        b = draw_bits(key, np.uint32(0), shape=(n,), dtype=np.dtype(np.uint64), domain=SAMPLE)
        return fnp.argsort(b)
    xshape = get_aval(x).shape
    if not xshape:
        raise ShapeError("funcdiff.random.permutation needs an int or an array with an axis.")
    axis = axis % len(xshape)
    if independent:
        b = draw_bits(key, np.uint32(0), shape=xshape, dtype=np.dtype(np.uint64),
                        domain=SAMPLE)
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
    check_key(key, "choice")
    shape = sample_shape(shape, "choice")
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
        p_value = concrete(p)
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
        noisy = logp + standard_gumbel(key, (n,), np.dtype(np.float64))
        index = fnp.reshape(fnp.argsort(-noisy)[:k], shape)
    return index if arr is None else fnp.take(arr, index, axis=axis)
