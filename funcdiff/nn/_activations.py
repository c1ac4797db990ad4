"""The activation functions of funcdiff.nn: elementwise nonlinearities for neural networks.

``relu``, ``relu6``, ``leaky_relu``, ``elu``, ``selu``, ``gelu``, ``sigmoid``,
``silu`` (``swish``), ``softplus`` and ``log_sigmoid``, each a composition of
elementwise primitives on a floating input. Piecewise activations take JAX's
derivatives at their kinks, and the branches of ``elu``, ``softplus`` and
``log_sigmoid`` are evaluated at inputs clamped to their own side, so nothing
overflows.
"""

from __future__ import annotations

import math

from funcdiff.nn._support import _float
from funcdiff.primitives import elementwise as ew
from funcdiff.scipy import special as _special
from funcdiff.scipy._special_util import c

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def relu(x):
    """The rectified linear unit ``max(x, 0)``; its derivative at 0 is 0 (as in JAX).

    >>> import numpy as np, funcdiff as fd, funcdiff.nn as nn
    >>> nn.relu(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 2.])
    >>> float(fd.grad(nn.relu)(0.0))
    0.0
    """
    x = _float("relu", x)
    return ew.select(ew.le(x, c(x, 0)), c(x, 0), x)  # NaN is not <= 0: it propagates


def relu6(x):
    """``min(max(x, 0), 6)``; its derivative is 0 at both kinks.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.relu6(np.array([-1.0, 3.0, 7.0]))
    array([0., 3., 6.])
    """
    x = _float("relu6", x)
    capped = ew.select(ew.ge(x, c(x, 6)), c(x, 6), x)
    return ew.select(ew.le(x, c(x, 0)), c(x, 0), capped)


def leaky_relu(x, negative_slope=0.01):
    """``x`` for ``x >= 0`` and ``negative_slope * x`` below.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.leaky_relu(np.array([-2.0, 3.0]), negative_slope=0.5)
    array([-1.,  3.])
    """
    x = _float("leaky_relu", x)
    return ew.select(ew.ge(x, c(x, 0)), x, ew.mul(c(x, negative_slope), x))


def _elu(x, alpha: float):
    positive = ew.gt(x, c(x, 0))
    x_neg = ew.select(positive, c(x, 0), x)  # expm1 of large x would overflow
    return ew.select(positive, x, ew.mul(c(x, alpha), ew.expm1(x_neg)))


def elu(x, alpha=1.0):
    """The exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` below.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.elu(np.array([0.0, 2.0]))
    array([0., 2.])
    """
    return _elu(_float("elu", x), alpha)


def selu(x):
    """The scaled ELU ``scale * elu(x, alpha)`` with the self-normalising constants.

    >>> import numpy as np, funcdiff.nn as nn
    >>> float(nn.selu(1.0))
    1.0507009873554805
    """
    x = _float("selu", x)
    return ew.mul(c(x, SELU_SCALE), _elu(x, SELU_ALPHA))


def gelu(x, approximate=True):
    """The Gaussian error linear unit ``x * Phi(x)``.

    Args:
      x: array_like.
      approximate: True (JAX's default) for the tanh approximation
        ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``; False for the exact
        ``x/2 erfc(-x/sqrt 2)`` (erfc keeps it accurate for negative x).

    >>> import funcdiff.nn as nn
    >>> round(float(nn.gelu(1.0, approximate=False)), 10)
    0.8413447461
    >>> round(float(nn.gelu(1.0)), 10)
    0.8411919906
    """
    x = _float("gelu", x)
    if approximate:
        inner = ew.mul(c(x, SQRT_2_OVER_PI),
                       ew.add(x, ew.mul(c(x, 0.044715), ew.integer_pow(x, y=3))))
        return ew.mul(ew.mul(c(x, 0.5), x), ew.add(c(x, 1), ew.tanh(inner)))
    return ew.mul(ew.mul(c(x, 0.5), x), ew.erfc(ew.mul(x, c(x, -1 / math.sqrt(2.0)))))


def sigmoid(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``, stable for all x.

    >>> import funcdiff.nn as nn
    >>> float(nn.sigmoid(0.0))
    0.5
    """
    return ew.logistic(_float("sigmoid", x))


def silu(x):
    """The sigmoid linear unit ``x * sigmoid(x)`` (also called swish).

    >>> import funcdiff.nn as nn
    >>> float(nn.silu(0.0))
    0.0
    """
    x = _float("silu", x)
    return ew.mul(x, ew.logistic(x))


swish = silu


def softplus(x):
    """``log(1 + exp(x))`` without overflow, with exact derivatives everywhere.

    >>> import numpy as np, funcdiff.nn as nn
    >>> nn.softplus(np.array([-1000.0, 1000.0]))
    array([   0., 1000.])
    """
    return _special._softplus(_float("softplus", x))


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for all x.

    >>> import funcdiff.nn as nn
    >>> float(nn.log_sigmoid(-1000.0))
    -1000.0
    """
    x = _float("log_sigmoid", x)
    return ew.neg(_special._softplus(ew.neg(x)))
