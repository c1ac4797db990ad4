"""autograd's optimizers: ``sgd`` (with momentum), ``rmsprop`` and ``adam``.

Each takes ``grad(x, i)`` (the gradient at iteration ``i``), a starting pytree
``x`` and an optional ``callback(x, i, g)``, and returns the final ``x`` (of
``x``'s structure). The updates are the standard ones; they run on numpy
arrays outside any transform.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff.compat.autograd.misc.flatten import flatten


def _flat(optimize: Callable) -> Callable:
    def over_pytrees(grad: Callable, x0: Any, callback: Callable | None = None,
                     *args: Any, **kwargs: Any) -> Any:
        x, unflatten = flatten(x0)

        def flat_grad(v, i):
            return np.asarray(flatten(grad(unflatten(v), i))[0])
        flat_callback = None if callback is None else (
            lambda v, i, g: callback(unflatten(v), i, unflatten(g)))
        return unflatten(optimize(flat_grad, np.asarray(x, float), flat_callback,
                                  *args, **kwargs))
    over_pytrees.__name__ = optimize.__name__
    over_pytrees.__doc__ = optimize.__doc__
    return over_pytrees


@_flat
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Gradient descent with momentum ``mass``."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@_flat
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=1e-8):
    """Steps scaled by a running root mean square of the gradients."""
    mean_square = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        mean_square = mean_square * gamma + g ** 2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(mean_square) + eps)
    return x


@_flat
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba): bias-corrected running moments of the gradient.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> x = adam(lambda p, i: fd.grad(lambda q: fnp.sum((q["w"] - 3.0) ** 2))(p),
    ...          {"w": np.zeros(2)}, step_size=0.1, num_iters=300)
    >>> np.round(x["w"], 3).tolist()
    [3.0, 3.0]
    """
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g ** 2 + b2 * v
        m_hat = m / (1 - b1 ** (i + 1))
        v_hat = v / (1 - b2 ** (i + 1))
        x = x - step_size * m_hat / (np.sqrt(v_hat) + eps)
    return x


__all__ = ["sgd", "rmsprop", "adam"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
