"""Keys and raw bits: ``key``, ``split``, ``fold_in``, ``bits``, and the argument checks
every sampler shares.

- A key is ``uint32[2]``; its bits come from the ``random_bits`` primitive
  (``funcdiff/primitives/random_bits.py``), whose Philox counter has one domain
  for sampling, one for ``split`` and one for ``fold_in``.
- ``unit_floats`` turns bits into uniform floats with the dtype's full mantissa.
- Checks of parameter values run when the values are concrete (eager use, grad)
  and are skipped when they are abstract (jit, vmap).
"""

from __future__ import annotations

import operator

import numpy as np

from funcdiff import numpy as fnp
from funcdiff.core import Tracer, get_aval
from funcdiff.errors import DTypeError, FunctionalDiffError, InvalidArgumentError, ShapeError
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.primitives.random_bits import KEY_DTYPE, random_bits as draw_bits

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "random_bits", "check_key",
           "sample_shape", "float_dtype", "concrete", "result_shape", "toward", "param",
           "unit_floats", "draw_bits", "SAMPLE"]

SAMPLE, _SPLIT, _FOLD = 0, 1, 2      # the domains of one key's Philox counter


# ---------------------------------------------------------------------------
# Argument checking


def check_key(k, name: str):
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


def sample_shape(shape, name: str, arg: str = "shape") -> tuple[int, ...]:
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


def float_dtype(dtype, name: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise DTypeError(f"funcdiff.random.{name} samples float32 or float64, not {dtype}; "
                         "cast the result if you need another dtype.")
    return dtype


def concrete(x):
    """The value of ``x`` as a numpy array when it is known now (eager use, grad),
    None when it is abstract (jit, vmap): checks of values run when they can."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return np.asarray(x.to_concrete("a funcdiff.random argument check"))
    except FunctionalDiffError:
        return None


def result_shape(name: str, shape, *arrays) -> tuple[int, ...]:
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


def toward(x, y):
    """The float next to ``x`` toward ``y``: a bound for clipping, with no derivative."""
    return fnp.nextafter(stop_gradient(x), stop_gradient(y))


def param(x, dtype):
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
    check_key(key, "split")
    shape = sample_shape(num, "split", "num")
    return draw_bits(key, np.uint32(0), shape=shape + (2,), dtype=np.dtype(np.uint32),
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
    check_key(key, "fold_in")
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        data = np.uint32(int(data) % 2**32)
    else:
        aval = get_aval(data)
        if aval.shape != () or aval.dtype.kind not in "iu":
            raise DTypeError(f"funcdiff.random.fold_in needs an integer scalar as data, got "
                             f"{aval.str_short()}.")
        data = fnp.astype(fnp.astype(data, np.int64), np.uint32)
    return draw_bits(key, data, shape=(2,), dtype=np.dtype(np.uint32), domain=_FOLD)


def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random unsigned integers of ``shape`` (uint8, uint16, uint32 or uint64).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.random.bits(fd.random.key(0), (2,), np.uint64).dtype
    dtype('uint64')
    """
    check_key(key, "bits")
    shape, dtype = sample_shape(shape, "bits"), np.dtype(dtype)
    if dtype not in (np.uint8, np.uint16, np.uint32, np.uint64):
        raise DTypeError(f"funcdiff.random.bits gives unsigned integers, not {dtype}.")
    wide = np.dtype(np.uint64 if dtype == np.uint64 else np.uint32)
    out = draw_bits(key, np.uint32(0), shape=shape, dtype=wide, domain=SAMPLE)
    return out if dtype == wide else fnp.astype(out, dtype)


random_bits = bits  # JAX's other name


def unit_floats(key, shape, dtype, open_interval=False):
    """Uniform floats in [0, 1) (or (0, 1)) from the top mantissa-many bits."""
    if dtype == np.float64:
        raw, mant, word = np.uint64, 52, 64
    else:
        raw, mant, word = np.uint32, 23, 32
    b = draw_bits(key, np.uint32(0), shape=shape, dtype=np.dtype(raw), domain=SAMPLE)
    if open_interval:   # k + 1/2 over 2**mant: never 0, never 1
        k = fnp.astype(fnp.right_shift(b, raw(word - mant)), dtype)
        return (k + dtype.type(0.5)) * dtype.type(2.0 ** -mant)
    k = fnp.astype(fnp.right_shift(b, raw(word - mant - 1)), dtype)
    return k * dtype.type(2.0 ** -(mant + 1))
