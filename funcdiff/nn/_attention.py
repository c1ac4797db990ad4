"""Attention in funcdiff.nn: scaled dot-product attention.

``dot_product_attention`` takes queries, keys and values of layout
``(..., T, D)``, with an optional boolean mask and causal masking; the softmax
over keys is shifted by its maximum and masked scores are a large negative
finite number, so fully masked rows stay finite.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import DTypeError, ShapeError
from funcdiff.numpy import _util
from funcdiff.scipy import special as _special
from funcdiff.scipy._special_util import c, floats
import funcdiff.numpy as fnp


def dot_product_attention(q, k, v, mask=None, causal=False, scale=None):
    """Scaled dot-product attention ``softmax(q k^T * scale + masking) v``.

    Layout ``(..., T, D)``: leading axes (batch, heads) broadcast like
    ``matmul``. The softmax over keys is shifted by its maximum; masked scores
    are replaced by a large negative finite number (as in JAX), so a row with
    every key masked attends uniformly instead of giving NaN, and masked
    positions get exact zero gradients.

    Args:
      q: queries of shape (..., Tq, D).
      k: keys of shape (..., Tk, D).
      v: values of shape (..., Tk, Dv).
      mask: optional boolean array broadcastable to (..., Tq, Tk); True keeps a key.
      causal: if true, query i attends only to keys j <= i (top-left aligned, as
        in JAX and PyTorch).
      scale: multiplier of the scores; default ``1 / sqrt(D)``.

    Returns:
      The attended values, of shape (..., Tq, Dv).

    Raises:
      ShapeError: for inconsistent shapes.
      DTypeError: for a non-boolean mask.

    >>> import numpy as np, funcdiff.nn as nn
    >>> q = k = np.eye(2)
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> np.round(nn.dot_product_attention(q, k, v, causal=True), 3)
    array([[1.  , 0.  ],
           [0.33, 0.67]])
    """
    name = "funcdiff.nn.dot_product_attention"
    q, k, v = floats(name, q, k, v, broadcast=False)
    qs, ks, vs = (_util.shape_of(a) for a in (q, k, v))
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise ShapeError(f"{name} needs q, k and v of rank >= 2 (..., T, D), got shapes "
                         f"{qs}, {ks} and {vs}.")
    if qs[-1] != ks[-1] or ks[-2] != vs[-2]:
        raise ShapeError(
            f"{name}: q {qs} and k {ks} must share the feature size D (last axis), and k and "
            f"v {vs} the number of keys Tk (second-to-last axis).")
    scale = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    try:
        scores = fnp.multiply(fnp.matmul(q, fnp.swapaxes(k, -1, -2)), c(q, scale))
    except ShapeError as e:
        raise ShapeError(f"{name}: the leading axes of q {qs} and k {ks} do not broadcast "
                         f"({e})") from None
    keep = None
    if mask is not None:
        if not isinstance(mask, (Tracer, np.ndarray, np.generic)):
            mask = _util.asarray(mask, name)
        if mask.dtype != np.bool_:
            raise DTypeError(f"{name} needs a boolean mask (True keeps a key), got dtype "
                             f"{mask.dtype}; compare first, e.g. mask != 0.")
        keep = mask
    if causal:
        tq, tk = qs[-2], ks[-2]
        lower = np.tril(np.ones((tq, tk), dtype=bool))
        keep = lower if keep is None else fnp.logical_and(keep, lower)
    if keep is not None:
        big_negative = c(scores, -0.7 * np.finfo(scores.dtype).max)
        try:
            scores = fnp.where(keep, scores, big_negative)
        except ShapeError:
            raise ShapeError(f"{name}: the mask of shape {_util.shape_of(keep)} does not "
                             f"broadcast to the scores of shape "
                             f"{_util.shape_of(scores)}.") from None
    weights = _special._softmax(scores, (len(_util.shape_of(scores)) - 1,))
    return fnp.matmul(weights, v)
