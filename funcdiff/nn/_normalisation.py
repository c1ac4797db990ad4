"""The normalisation layers of funcdiff.nn: ``layer_norm`` and ``rms_norm``.

Each rescales its input over the given axes (to zero mean and unit variance, or
to unit root mean square) with ``eps`` added under the square root, then applies
an optional ``scale`` (and, for ``layer_norm``, ``offset``) broadcast against the
input.
"""

from __future__ import annotations

from funcdiff.errors import ShapeError
from funcdiff.nn._support import normalize_axes, _float
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.scipy._special_util import c
import funcdiff.numpy as fnp


def affine(name: str, y, scale, offset):
    try:
        if scale is not None:
            y = fnp.multiply(y, scale)
        if offset is not None:
            y = fnp.add(y, offset)
    except ShapeError:
        raise ShapeError(
            f"funcdiff.nn.{name}: scale of shape {None if scale is None else _util.shape_of(scale)}"
            f" and offset of shape {None if offset is None else _util.shape_of(offset)} do not "
            f"broadcast against the input of shape {_util.shape_of(y)}.") from None
    return y


def layer_norm(x, axis=-1, eps=1e-5, scale=None, offset=None):
    """Normalise ``x`` to zero mean and unit variance over ``axis``, then scale and shift.

    ``y = (x - mean) / sqrt(var + eps) * scale + offset`` with the biased
    variance. Without scale and offset the result is invariant to adding a
    constant along ``axis``, so gradients through it are orthogonal to that
    direction (and, with eps = 0, to the normalised input).

    Args:
      x: array_like.
      axis: int or tuple of ints to normalise over.
      eps: added to the variance.
      scale, offset: optional arrays broadcast against ``x`` (shape ``x.shape[axis]``
        for the last axis).

    Raises:
      AxisError: for an axis out of range.
      ShapeError: if scale or offset do not broadcast against x.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.layer_norm(np.array([1.0, 2.0, 3.0]), eps=0.0)
    array([-1.22474487,  0.        ,  1.22474487])
    """
    x = _float("layer_norm", x)
    axes = normalize_axes("layer_norm", axis, x)
    centred = ew.sub(x, fnp.mean(x, axis=axes, keepdims=True))
    var = fnp.mean(ew.mul(centred, centred), axis=axes, keepdims=True)
    y = ew.mul(centred, ew.rsqrt(ew.add(var, c(var, eps))))
    return affine("layer_norm", y, scale, offset)


def rms_norm(x, axis=-1, eps=1e-6, scale=None):
    """Divide ``x`` by its root mean square over ``axis``: ``x / sqrt(mean(x**2) + eps) * scale``.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.rms_norm(np.array([3.0, -3.0, 3.0, 3.0]), eps=0.0)
    array([ 1., -1.,  1.,  1.])
    """
    x = _float("rms_norm", x)
    axes = normalize_axes("rms_norm", axis, x)
    mean_square = fnp.mean(ew.mul(x, x), axis=axes, keepdims=True)
    y = ew.mul(x, ew.rsqrt(ew.add(mean_square, c(mean_square, eps))))
    return affine("rms_norm", y, scale, None)
