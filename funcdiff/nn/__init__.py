"""funcdiff.nn: activations, normalisation, attention and losses for neural networks.

Every function is a composition of funcdiff primitives, so it is
differentiated to any order, batched by ``vmap`` and compiled by ``jit``. The
names and signatures follow ``jax.nn`` (``gelu(x, approximate=True)``,
``softmax(x, axis=-1)``, ``one_hot(x, num_classes)``); integer inputs are
converted to float64 and float32 stays float32.

Numerical care:

- ``softmax``, ``log_softmax``, ``logsumexp`` and ``cross_entropy`` shift by the
  maximum through ``stop_gradient`` (see ``funcdiff.scipy.special``): values
  and derivatives stay finite for logits of magnitude 1e3 and beyond.
- ``cross_entropy`` is fused: a ``custom_vjp`` rule returns ``softmax - targets``
  straight from the forward pass's exponentials (no one-hot array, no
  zero-filled cotangent), written in funcdiff operations so Hessians, forward
  mode, vmap and jit still work.
- ``softplus`` and ``log_sigmoid`` use two analytic branches, each evaluated at
  an input clamped to its own side, so nothing overflows and every derivative
  is exact, even at 0.
- Piecewise activations take JAX's derivatives at their kinks: ``relu'(0) = 0``,
  ``relu6'`` is 0 at 0 and 6, ``leaky_relu'(0) = 1``.

The namespace is assembled here from one module per concept: ``_activations``
(``relu`` to ``log_sigmoid``), ``_softmax`` (``softmax``, ``log_softmax``,
``one_hot``; ``logsumexp`` is ``funcdiff.scipy.special``'s), ``_losses`` (the
fused ``cross_entropy`` and its ``custom_vjp`` rules), ``_normalisation``
(``layer_norm``, ``rms_norm``), ``_attention`` (``dot_product_attention``) and
``_convolution`` (``conv``, ``conv_transpose``, ``max_pool``, ``avg_pool``, PyTorch's
conventions on ``fd.lax.conv_general_dilated`` and ``fd.lax.reduce_window``),
with the argument handling they share in ``_support``.
``funcdiff.nn.initializers`` holds the weight initialisers.
"""

from __future__ import annotations

from funcdiff.nn import initializers
from funcdiff.nn._activations import (  # noqa: F401  private names re-exported
    _elu, elu, gelu, leaky_relu, log_sigmoid, relu, relu6, selu, sigmoid, silu, softplus, swish)
from funcdiff.nn._attention import dot_product_attention
from funcdiff.nn._convolution import avg_pool, conv, conv_transpose, max_pool
from funcdiff.nn._losses import cross_entropy
from funcdiff.nn._normalisation import layer_norm, rms_norm  # noqa: F401
from funcdiff.nn._softmax import log_softmax, one_hot, softmax
from funcdiff.nn._support import _float  # noqa: F401
from funcdiff.scipy.special import logsumexp

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "sigmoid", "silu", "swish",
    "softplus", "log_sigmoid", "softmax", "log_softmax", "logsumexp", "one_hot",
    "cross_entropy", "layer_norm", "rms_norm", "dot_product_attention", "conv",
    "conv_transpose", "max_pool", "avg_pool", "initializers",
]

# doctest.testmod finds only the functions defined in a module; list the moved ones.
__test__ = {name: globals()[name] for name in __all__ if name not in ("logsumexp", "initializers")}


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
