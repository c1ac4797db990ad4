"""MAML: the meta-gradient through an inner SGD step is a gradient of a gradient.

Model-agnostic meta-learning (Finn et al., 2017) on sine-wave regression: each
task is y = A sin(x + phase); the model adapts to a task with one SGD step on
a few samples, and the meta-loss is its error on fresh samples after that step:

    meta_loss(theta) = L_test(theta - alpha * grad L_train(theta))

Its gradient, ``fd.grad(meta_loss)``, differentiates through ``fd.grad``. The
example checks it three ways: against finite differences, against the
closed form (I - alpha H_train) grad L_test(theta') built from a Hessian-vector
product, and against first-order MAML (which drops the Hessian term with
``fd.stop_gradient``). Then it meta-trains over batches of tasks, the batch
mapped with ``fd.vmap`` and the whole step compiled with ``fd.jit``.

Run: ``python examples/maml.py [meta_steps]``.
"""

from __future__ import annotations

import sys

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp

tree_map, tree_leaves = fd.tree_util.tree_map, fd.tree_util.tree_leaves
ALPHA = 0.1  # inner learning rate


def init_params(rng: np.random.Generator, hidden: int = 32) -> dict:
    return {"w1": rng.standard_normal((1, hidden)), "b1": rng.standard_normal(hidden) * 0.5,
            "w2": rng.standard_normal((hidden, hidden)) / np.sqrt(hidden), "b2": np.zeros(hidden),
            "w3": rng.standard_normal((hidden, 1)) / np.sqrt(hidden), "b3": np.zeros(1)}


def predict(p, x):
    h = fnp.tanh(x @ p["w1"] + p["b1"])
    h = fnp.tanh(h @ p["w2"] + p["b2"])
    return h @ p["w3"] + p["b3"]


def mse(p, x, y):
    return fnp.mean((predict(p, x) - y) ** 2)


def adapt(p, x, y, first_order=False):
    """One inner SGD step on a task's training samples."""
    g = fd.grad(mse)(p, x, y)
    if first_order:
        g = tree_map(fd.stop_gradient, g)
    return tree_map(lambda a, b: a - ALPHA * b, p, g)


def meta_loss(p, x_train, y_train, x_test, y_test, first_order=False):
    return mse(adapt(p, x_train, y_train, first_order), x_test, y_test)


def batch_meta_loss(p, x_train, y_train, x_test, y_test):
    per_task = fd.vmap(meta_loss, in_axes=(None, 0, 0, 0, 0))(p, x_train, y_train, x_test, y_test)
    return fnp.mean(per_task)


def sample_tasks(rng, tasks: int, shots: int):
    """``tasks`` sine waves, each with ``shots`` training and ``shots`` test samples."""
    amp = rng.uniform(0.1, 5.0, (tasks, 1, 1))
    phase = rng.uniform(0.0, np.pi, (tasks, 1, 1))
    x_train, x_test = (rng.uniform(-5.0, 5.0, (tasks, shots, 1)) for _ in range(2))
    return x_train, amp * np.sin(x_train + phase), x_test, amp * np.sin(x_test + phase)


def vdot(a, b) -> float:
    return float(sum(np.sum(x * y) for x, y in zip(tree_leaves(a), tree_leaves(b))))


def main(meta_steps: int = 300, tasks: int = 8, shots: int = 10, seed: int = 0,
         verbose: bool = True) -> dict:
    """Check one meta-gradient three ways, then meta-train; return the checks and losses."""
    say = print if verbose else (lambda *_: None)
    rng = np.random.default_rng(seed)
    params = init_params(rng)
    xtr, ytr, xte, yte = (a[0] for a in sample_tasks(rng, 1, shots))

    meta_grad = fd.grad(meta_loss)(params, xtr, ytr, xte, yte)
    # finite differences along a random direction
    v = tree_map(lambda a: rng.standard_normal(a.shape), params)
    eps = 1e-5
    shifted = [meta_loss(tree_map(lambda a, b: a + s * eps * b, params, v), xtr, ytr, xte, yte)
               for s in (1.0, -1.0)]
    fd_slope = (shifted[0] - shifted[1]) / (2 * eps)
    err_fd = abs(vdot(meta_grad, v) - fd_slope) / abs(fd_slope)
    # closed form: (I - alpha H_train(theta)) grad L_test(theta')
    g_test = fd.grad(mse)(adapt(params, xtr, ytr), xte, yte)
    h_g = fd.hvp(lambda p: mse(p, xtr, ytr), (params,), (g_test,))
    closed = tree_map(lambda g, hg: g - ALPHA * hg, g_test, h_g)
    err_closed = max(float(np.max(np.abs(a - b))) for a, b in zip(tree_leaves(meta_grad),
                                                                  tree_leaves(closed)))
    first_order = fd.grad(meta_loss)(params, xtr, ytr, xte, yte, True)
    cosine = vdot(meta_grad, first_order) / np.sqrt(vdot(meta_grad, meta_grad)
                                                    * vdot(first_order, first_order))
    say("one meta-gradient, grad(L_test(theta - alpha grad L_train(theta))):")
    say(f"  vs finite differences along a random direction: relative error {err_fd:.1e}")
    say(f"  vs (I - alpha H) grad L_test(theta') from an hvp: max difference {err_closed:.1e}")
    say(f"  cosine with first-order MAML (Hessian term dropped): {cosine:.4f}")

    say(f"\nmeta-training: {tasks} tasks per step, {shots} shots, Adam")
    step = fd.jit(fd.value_and_grad(batch_meta_loss))
    eval_tasks = sample_tasks(np.random.default_rng(seed + 1), 100, shots)
    m = tree_map(np.zeros_like, params)
    s = tree_map(np.zeros_like, params)

    def evaluate(p):
        before = np.mean([mse(p, xt, yt) for xt, yt in zip(eval_tasks[2], eval_tasks[3])])
        return float(before), float(batch_meta_loss(p, *eval_tasks))
    history = [evaluate(params)]
    every = max(1, meta_steps // 4)
    say(f"  step {0:4d}  held-out tasks: loss before adapting {history[0][0]:.3f}, "
        f"after one step {history[0][1]:.3f}")
    for i in range(1, meta_steps + 1):
        _, g = step(params, *sample_tasks(rng, tasks, shots))
        m = tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        s = tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, s, g)
        lr = 1e-2 * np.sqrt(1 - 0.999 ** i) / (1 - 0.9 ** i)
        params = tree_map(lambda p, a, b: p - lr * a / (np.sqrt(b) + 1e-8), params, m, s)
        if i % every == 0 or i == meta_steps:
            history.append(evaluate(params))
            say(f"  step {i:4d}  held-out tasks: loss before adapting {history[-1][0]:.3f}, "
                f"after one step {history[-1][1]:.3f}")
    return {"err_fd": err_fd, "err_closed": err_closed, "cosine_first_order": float(cosine),
            "history": history}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
