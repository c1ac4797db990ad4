"""packbits and unpackbits: booleans and integers to and from the bits of uint8 bytes.

Both are built from funcdiff operations (comparison, shifts, bitwise and, a
weighted sum over groups of eight), so they trace, batch and compile; their
inputs and outputs are integers or booleans, so they have no derivative.
Values, dtypes and shapes are numpy's, ``bitorder`` and unpackbits' ``count``
included.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcdiff.errors import AxisError, DTypeError, InvalidArgumentError, ShapeError
from funcdiff.numpy._ufunc_support import fname
import funcdiff.numpy as fnp  # used at call time (this module is part of it)


def _operand(name: str, a: Any, kinds: str, expected: str) -> Any:
    a = fnp.asarray(a)
    if a.dtype.kind not in kinds:
        raise DTypeError(
            f"{fname(name)} takes {expected}, but got {a.dtype} (numpy refuses it too). "
            "Convert with astype first, e.g. x > 0 for booleans.")
    return a


def _axis(name: str, a: Any, axis: Any) -> tuple[Any, int]:
    if axis is None:
        return fnp.reshape(a, (-1,)), 0
    ndim = fnp.ndim(a)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{fname(name)} got axis={axis} for an array of rank {ndim}.")
    return a, axis % ndim


def _bitorder(name: str, bitorder: str) -> np.ndarray:
    """The bits' place values within a byte, in the order they are laid out."""
    if bitorder not in ("big", "little"):
        raise InvalidArgumentError(
            f"{fname(name)} got bitorder={bitorder!r}; it is 'big' or 'little'.")
    weights = 2 ** np.arange(8, dtype=np.int64)
    return weights[::-1].copy() if bitorder == "big" else weights


def packbits(a: Any, axis: Any = None, bitorder: str = "big") -> Any:
    """Pack the truth of each element into the bits of uint8 bytes (numpy.packbits).

    Args:
      a: an integer or boolean array (nonzero counts as 1).
      axis: the axis to pack along; None packs the flattened array.
      bitorder: 'big' (the first element is the highest bit) or 'little'.

    Returns:
      A uint8 array, the packed axis of length ``ceil(n / 8)`` (zero-padded).

    Raises:
      DTypeError: for a float or complex ``a``.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
    array([176, 128], dtype=uint8)
    """
    a = _operand("packbits", a, "biu", "integers or booleans")
    a, axis = _axis("packbits", a, axis)
    weights = _bitorder("packbits", bitorder)
    bits = fnp.moveaxis(fnp.not_equal(a, 0).astype(np.int64), axis, -1)
    n = fnp.shape(bits)[-1]
    padding = -n % 8
    if padding:
        bits = fnp.pad(bits, [(0, 0)] * (fnp.ndim(bits) - 1) + [(0, padding)])
    groups = fnp.reshape(bits, fnp.shape(bits)[:-1] + ((n + padding) // 8, 8))
    packed = fnp.sum(groups * weights, axis=-1).astype(np.uint8)
    return fnp.moveaxis(packed, -1, axis)


def unpackbits(a: Any, axis: Any = None, count: Any = None, bitorder: str = "big") -> Any:
    """Unpack uint8 bytes into their bits (numpy.unpackbits).

    Args:
      a: a uint8 array.
      axis: the axis to unpack along; None unpacks the flattened array.
      count: how many bits to keep along the axis: the first ``count``, or all but the
        last ``-count`` when negative; more than there are pads with zeros.
      bitorder: 'big' (the highest bit first) or 'little'.

    Returns:
      A uint8 array of 0s and 1s, the unpacked axis 8 times longer (before ``count``).

    Raises:
      DTypeError: for any dtype but uint8. ShapeError: for a ``-count`` above the
        number of bits.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.unpackbits(np.array([176, 128], np.uint8), count=9)
    array([1, 0, 1, 1, 0, 0, 0, 0, 1], dtype=uint8)
    """
    a = _operand("unpackbits", a, "u", "uint8 bytes")
    if a.dtype != np.uint8:
        raise DTypeError(f"{fname('unpackbits')} takes uint8 bytes, but got {a.dtype}. "
                         "Convert with astype(np.uint8) first.")
    a, axis = _axis("unpackbits", a, axis)
    weights = _bitorder("unpackbits", bitorder)
    bytes_ = fnp.moveaxis(a, axis, -1)[..., None].astype(np.int64)
    bits = fnp.not_equal(fnp.bitwise_and(bytes_, weights), 0).astype(np.uint8)
    shape = fnp.shape(bits)
    bits = fnp.reshape(bits, shape[:-2] + (shape[-2] * 8,))
    if count is not None:
        if not isinstance(count, (int, np.integer)):
            raise InvalidArgumentError(f"{fname('unpackbits')} takes an integer count, "
                                       f"got {count!r}.")
        n = shape[-2] * 8
        if n + count < 0:
            raise ShapeError(f"{fname('unpackbits')} got count={count}, but there are only "
                             f"{n} bits to drop from along axis {axis}.")
        keep = count if count >= 0 else n + count
        if keep > n:
            bits = fnp.pad(bits, [(0, 0)] * (len(shape) - 2) + [(0, keep - n)])
        else:
            bits = bits[..., :keep]
    return fnp.moveaxis(bits, -1, axis)


__all__ = ["packbits", "unpackbits"]
