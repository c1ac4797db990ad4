"""The softmax family of funcdiff.nn: functions over a class axis.

``softmax`` and ``log_softmax`` normalise along ``axis`` after shifting by the
maximum through ``stop_gradient`` (the kernels are ``funcdiff.scipy.special``'s),
so values and derivatives stay finite for logits of any magnitude; ``one_hot``
encodes integer class indices along a new axis of ``num_classes``.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError
from funcdiff.nn._support import normalize_axes, _float
from funcdiff.numpy import _util
from funcdiff.scipy import special as _special
import funcdiff.numpy as fnp


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the maximum.

    Finite values and derivatives for logits of any magnitude; the derivative
    in every direction sums to zero along ``axis``.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.softmax(np.array([[1000.0, 1000.0], [0.0, -1000.0]]))
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    x = _float("softmax", x)
    return _special._softmax(x, normalize_axes("softmax", axis, x))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``, shifted by the maximum.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.log_softmax(np.array([0.0, -1000.0]))
    array([    0., -1000.])
    """
    x = _float("log_softmax", x)
    return _special._log_softmax(x, normalize_axes("log_softmax", axis, x))


def one_hot(x, num_classes, *, dtype=np.float64, axis=-1):
    """One-hot encoding of integer class indices (a new axis of size ``num_classes``).

    Indices outside ``[0, num_classes)`` give all-zero rows (as in JAX).

    Args:
      x: integer array of class indices.
      num_classes: a positive Python int.
      dtype: dtype of the result.
      axis: where the new axis goes in the result.

    Raises:
      InvalidArgumentError: for a num_classes that is not a positive int.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    if isinstance(num_classes, (bool, np.bool_)) or not isinstance(
            num_classes, (int, np.integer)) or num_classes < 1:
        raise InvalidArgumentError(
            f"funcdiff.nn.one_hot needs num_classes as a positive Python int, got "
            f"{num_classes!r}.")
    if not isinstance(x, (Tracer, np.ndarray, np.generic)):
        x = _util.asarray(x, "funcdiff.nn.one_hot")
    ndim = len(_util.shape_of(x)) + 1
    axis = _util.normalize_axis(axis, ndim, "funcdiff.nn.one_hot")
    classes = np.arange(int(num_classes)).reshape([-1 if i == axis else 1 for i in range(ndim)])
    hits = fnp.equal(fnp.expand_dims(x, axis), classes)
    return fnp.astype(hits, np.dtype(dtype))
