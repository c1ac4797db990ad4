"""bench_reverse's MLP loss written with each comparison library (jax, torch, autograd).

The same 4-layer tanh MLP with softmax cross-entropy as ``bench_reverse.mlp_loss``,
for the benchmarks that time it with other libraries (``run.py``'s value_and_grad
comparison, ``bench_hvp.compare``). Each library is imported only when its loss is
asked for: none of them is needed to run funcdiff's own benchmarks.
"""

from __future__ import annotations

import numpy as np


def jax_mlp_loss():
    """The loss ``(params, x, labels) -> scalar`` in jax.numpy (float64 enabled)."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss(ps, x, labels):
        h = x
        for w, b in ps[:-1]:
            h = jnp.tanh(h @ w + b)
        logp = jax.nn.log_softmax(h @ ps[-1][0] + ps[-1][1], axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))
    return loss


def torch_mlp_loss(ps, x, labels):
    """The loss of the torch tensors ``ps`` (pairs of weights and biases) at the
    tensors ``x`` and ``labels``."""
    import torch
    h = x
    for w, b in ps[:-1]:
        h = torch.tanh(h @ w + b)
    return torch.nn.functional.cross_entropy(h @ ps[-1][0] + ps[-1][1], labels)


def autograd_mlp_loss(x, labels):
    """The loss ``params -> scalar`` in autograd.numpy at the arrays ``x`` and ``labels``."""
    import autograd.numpy as anp

    def loss(ps):
        h = x
        for w, b in ps[:-1]:
            h = anp.tanh(anp.dot(h, w) + b)
        logits = anp.dot(h, ps[-1][0]) + ps[-1][1]
        z = logits - anp.max(logits, axis=1, keepdims=True)
        logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
        return -anp.mean(logp[np.arange(len(labels)), labels])
    return loss
