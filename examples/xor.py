"""A tanh network learning XOR with funcdiff gradients and plain SGD.

XOR is the smallest problem a linear model cannot solve: the two classes sit
on the diagonals of the unit square. One hidden tanh layer learns it. The
gradient comes from ``fd.value_and_grad``; the update is three lines of numpy
written here; ``fd.jit`` compiles the gradient once and replays it.

Run: ``python examples/xor.py [steps]``.
"""

from __future__ import annotations

import sys

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp

X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
Y = np.array([0.0, 1.0, 1.0, 0.0])


def init_params(rng: np.random.Generator, hidden: int) -> dict:
    return {"W1": rng.standard_normal((2, hidden)), "b1": np.zeros(hidden),
            "w2": rng.standard_normal(hidden) / np.sqrt(hidden), "b2": np.zeros(())}


def predict(params, x):
    """The probability of class 1 for each row of ``x``."""
    h = fnp.tanh(x @ params["W1"] + params["b1"])
    return 0.5 * (fnp.tanh(h @ params["w2"] + params["b2"]) + 1.0)   # = sigmoid(2 z)


def loss(params, x, y):
    """Mean squared error of the predicted probabilities."""
    return fnp.mean((predict(params, x) - y) ** 2)


def sgd(params: dict, grads: dict, lr: float) -> dict:
    return {k: params[k] - lr * grads[k] for k in params}


def main(steps: int = 2000, hidden: int = 4, lr: float = 2.0, seed: int = 0,
         verbose: bool = True) -> dict:
    """Train, print the loss every so often and the final predictions; return them."""
    params = init_params(np.random.default_rng(seed), hidden)
    step = fd.jit(fd.value_and_grad(loss))
    every = max(1, steps // 5)
    for i in range(steps + 1):
        value, grads = step(params, X, Y)
        if verbose and i % every == 0:
            print(f"step {i:5d}  loss {value:.6f}")
        if i < steps:
            params = sgd(params, grads, lr)
    probs = predict(params, X)
    if verbose:
        for x, y, p in zip(X, Y, probs):
            print(f"  xor{tuple(int(v) for v in x)} = {int(y)}   network says {p:.3f}")
    return {"loss": float(value), "probs": probs, "accuracy": float(np.mean((probs > 0.5) == Y))}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
