"""Random bits from a key: the ``random_bits`` primitive under ``funcdiff.random``.

A key is a ``uint32[2]`` array; the bits it gives are those of numpy's
counter-based Philox generator (``numpy.random.Philox``, Philox-4x64-10)
whose 128-bit key is the key's 64 bits, so a key determines its bits in every
process, on every platform and under every transform.

- Operands: ``key`` (``uint32[*batch, 2]``) and ``data`` (``uint32[*batch]``);
  params ``shape``, ``dtype`` (uint32 or uint64) and ``domain`` (a small int).
  ``data`` and ``domain`` are the top words of Philox's 256-bit counter, so
  sampling (domain 0), splitting (1) and folding in data (2) read disjoint
  streams of the same key.
- The leading ``batch`` axes are vmap's: the impl draws for each member with its
  own key, so a batched key gives independent draws per member, each equal to
  the unbatched draw with that key.
- Nondifferentiable: keys are integers and the bits have no tangent.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import DTypeError, ShapeError
from funcdiff.primitives.cards import make_op
from funcdiff.primitives.structural import with_batch_at_front

random_bits_p = Primitive("random_bits")

KEY_DTYPE = np.dtype(np.uint32)
BITS_DTYPES = (np.dtype(np.uint32), np.dtype(np.uint64))


def philox_words(key, data: int, domain: int, n: int) -> np.ndarray:
    """``n`` uint64 words of the Philox stream of one ``uint32[2]`` key."""
    k0, k1 = int(key[0]), int(key[1])
    counter = (int(data) << 128) | (int(domain) << 192)
    return np.random.Philox(key=(k0 << 32) | k1, counter=counter).random_raw(n)


def _draw(key, data, domain, shape, dtype) -> np.ndarray:
    size = math.prod(shape)
    if dtype == np.uint64:
        return philox_words(key, data, domain, size).reshape(shape)
    words = philox_words(key, data, domain, (size + 1) // 2)
    # low half then high half of each word, by arithmetic (no dependence on endianness)
    halves = np.stack([words & 0xFFFFFFFF, words >> 32], axis=-1).reshape(-1)[:size]
    return halves.astype(np.uint32).reshape(shape)


def _random_bits_impl(key, data, *, shape, dtype, domain):
    key, data = np.asarray(key), np.asarray(data)
    batch = data.shape
    out = np.empty(batch + shape, dtype)
    for index in np.ndindex(*batch):
        out[index] = _draw(key[index], data[index], domain, shape, dtype)
    return out


def _random_bits_abstract_eval(key, data, *, shape, dtype, domain):
    if key.dtype != KEY_DTYPE or data.dtype != KEY_DTYPE:
        raise DTypeError(
            f"random_bits needs a uint32 key and uint32 data, got {key.str_short()} and "
            f"{data.str_short()}. Make keys with funcdiff.random.key(seed).")
    if key.ndim < 1 or key.shape[-1] != 2 or data.shape != key.shape[:-1]:
        raise ShapeError(
            f"random_bits needs a key of shape (*batch, 2) and data of shape (*batch), got "
            f"{key.str_short()} and {data.str_short()}. Make keys with "
            "funcdiff.random.key(seed).")
    if dtype not in BITS_DTYPES:
        raise DTypeError(f"random_bits gives uint32 or uint64 bits, not {dtype}.")
    return ShapedArray(data.shape + tuple(shape), dtype)


def _random_bits_batch(vals, dims, *, shape, dtype, domain):
    key, data = vals
    key_dim, data_dim = dims
    size = (get_aval(key).shape[key_dim] if key_dim is not None
            else get_aval(data).shape[data_dim])
    key = with_batch_at_front(key, key_dim, size)
    data = with_batch_at_front(data, data_dim, size)
    return bind(random_bits_p, key, data, shape=shape, dtype=dtype, domain=domain), 0


def _random_bits_cost(key, data, *, shape, dtype, domain):
    words = data.size * math.prod(shape)
    return {"flops": 20 * words, "bytes": key.size * 4 + data.size * 4 + words * dtype.itemsize}


random_bits_p.impl = _random_bits_impl
random_bits_p.abstract_eval = _random_bits_abstract_eval
random_bits_p.nondifferentiable = True
random_bits_p.batch = _random_bits_batch
random_bits_p.cost = _random_bits_cost
random_bits = make_op(random_bits_p, "Random uint32/uint64 bits of `shape` from a uint32[2] "
                      "key (Philox), in the stream `(data, domain)` of that key.")

__all__ = ["random_bits_p", "random_bits", "philox_words", "KEY_DTYPE", "BITS_DTYPES"]
