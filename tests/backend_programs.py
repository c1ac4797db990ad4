"""The programs and transforms that tests/test_backends_*.py run on each array library.

Each program is ``f(params, X, y)``, a loss of parameters and data; each
transform a way to differentiate, batch or compile it. Foreign arrays are
passed as arguments (a torch tensor or array_api_strict array refuses to meet a
tracer inside an operator of its own, so it cannot be closed over).
"""

from __future__ import annotations

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp

RNG = np.random.default_rng(7)
N, D, H = 23, 4, 5
X_NP = RNG.normal(size=(N, D))
Y_NP = (RNG.random(N) > 0.5).astype(np.float64)
W_NP = RNG.normal(size=D)
PARAMS_NP = {"w1": RNG.normal(size=(D, H)) / 2, "b1": RNG.normal(size=H), "w2": RNG.normal(size=H)}


def logistic(w, X, y):
    z = X @ w
    return fnp.mean(fnp.logaddexp(0.0, z) - y * z)


def mlp(params, X, y):
    h = fnp.tanh(X @ params["w1"] + params["b1"])
    return fnp.sum((h @ params["w2"] - y) ** 2) / X.shape[0]


def softmax_xent(w, X, y):
    logits = fnp.stack([X @ w, -(X @ w), fnp.sin(X[:, 0])], axis=1)
    logp = logits - fnp.max(logits, axis=1, keepdims=True)
    logp = logp - fnp.log(fnp.sum(fnp.exp(logp), axis=1, keepdims=True))
    return -fnp.mean(logp[:, 0] * y + logp[:, 1] * (1 - y))


def structural(w, X, y):
    Z = fnp.concatenate([X * w, X[::-1, :2] ** 2], axis=1)
    Z = fnp.where(Z > 0.1, Z, 0.1 * Z)
    return fnp.sum(fnp.cumsum(Z, axis=0)[-3:]) + fnp.prod(fnp.cos(Z[:3, :2]))\
        + fnp.sum(fnp.transpose(Z)[1]) + fnp.min(Z) * fnp.mean(y)


PROGRAMS = {"logistic": (logistic, W_NP), "mlp": (mlp, PARAMS_NP),
            "softmax_xent": (softmax_xent, W_NP), "structural": (structural, W_NP)}




TRANSFORMS = {
    "grad": lambda f, p, X, y: fd.grad(f)(p, X, y),
    "value_and_grad": lambda f, p, X, y: fd.value_and_grad(f)(p, X, y),
    "grad_in_data": lambda f, p, X, y: fd.grad(f, argnums=1)(p, X, y),
    "jit_grad": lambda f, p, X, y: fd.jit(fd.grad(f))(p, X, y),
    "jit_value_and_grad": lambda f, p, X, y: fd.jit(fd.value_and_grad(f, argnums=(0, 1)))(p, X, y),
    "jvp": lambda f, p, X, y: fd.jvp(lambda X, y: f(p, X, y), (X, y), (X * 0.5, y * 0.0)),
    "hvp": lambda f, p, X, y: fd.hvp(f, (p, X, y), (fd.tree_util.tree_map(np.ones_like, p),
                                                    X * 0.0, y * 0.0)),
    "vmap_rows": lambda f, p, X, y: fd.vmap(lambda x: fnp.tanh(x @ np.ones(D)).sum())(X),
    "jacrev_rows": lambda f, p, X, y: fd.jacrev(lambda X: fnp.tanh(X).sum(axis=1))(X[:6, :]),
    "jacfwd_data": lambda f, p, X, y: fd.jacfwd(lambda w, X: fnp.tanh(X @ w))(W_NP, X),
    "jit_of_grad_inside": lambda f, p, X, y: fd.jit(
        lambda w, X, y: fd.grad(logistic)(w, X, y))(W_NP, X, y),
}
