"""A small convnet reading noisy, shifted 8x8 digit glyphs, trained with Adam.

The data are made here: six 5x5 digit glyphs (0, 1, 2, 3, 4, 7) placed at a
random offset in an 8x8 image, with Gaussian noise of standard deviation 0.35.
The network is two convolution + max-pool layers and a dense head:

    conv 3x3, 1 -> 8, relu, max-pool 2   (8, 8, 8) -> (8, 4, 4)
    conv 3x3, 8 -> 16, relu, max-pool 2  (16, 4, 4) -> (16, 2, 2)
    dense 64 -> 6, softmax cross-entropy

trained on minibatches with Adam (a dozen lines of numpy below) on
``fd.jit(fd.value_and_grad(loss))``. With the defaults (1,500 training images,
800 steps of 64) it reaches 100% training and 95% held-out accuracy (500 images)
in about 6 seconds of training on two cores; the gradient is checked once
against central differences before training (relative error about 1e-9).

Run: ``python examples/cnn.py [steps]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp

GLYPHS = {  # 5x5 digit shapes
    0: [".###.", "#...#", "#...#", "#...#", ".###."],
    1: ["..#..", ".##..", "..#..", "..#..", ".###."],
    2: [".###.", "#...#", "..##.", ".#...", "#####"],
    3: ["####.", "....#", ".###.", "....#", "####."],
    4: ["#..#.", "#..#.", "#####", "...#.", "...#."],
    7: ["#####", "...#.", "..#..", ".#...", ".#..."],
}


def make_glyphs(n: int, noise: float = 0.35, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images (n, 1, 8, 8) of randomly placed noisy glyphs and their labels 0..5."""
    rng = np.random.default_rng(seed)
    shapes = np.array([[[c == "#" for c in row] for row in g] for g in GLYPHS.values()], float)
    labels = rng.integers(0, len(shapes), n)
    images = noise * rng.standard_normal((n, 1, 8, 8))
    offsets = rng.integers(0, 4, (n, 2))
    for k in range(n):
        r, c = offsets[k]
        images[k, 0, r:r + 5, c:c + 5] += shapes[labels[k]]
    return images, labels


def init_params(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    he = fd.nn.initializers.he_normal
    return {"w1": he(rng, (8, 1, 3, 3), in_axis=1, out_axis=0), "b1": np.zeros(8),
            "w2": he(rng, (16, 8, 3, 3), in_axis=1, out_axis=0), "b2": np.zeros(16),
            "w3": fd.nn.initializers.glorot_normal(rng, (64, 6)), "b3": np.zeros(6)}


def logits(params: dict, images):
    h = fd.nn.max_pool(fd.nn.relu(fd.nn.conv(images, params["w1"], params["b1"], padding=1)), (2, 2))
    h = fd.nn.max_pool(fd.nn.relu(fd.nn.conv(h, params["w2"], params["b2"], padding=1)), (2, 2))
    return fnp.reshape(h, (h.shape[0], -1)) @ params["w3"] + params["b3"]


def loss(params: dict, images, labels):
    return fd.nn.cross_entropy(logits(params, images), labels)


def accuracy(params: dict, images, labels) -> float:
    return float(np.mean(np.argmax(logits(params, images), axis=1) == labels))


def check_gradient(params: dict, images, labels, eps: float = 1e-6) -> float:
    """The largest relative error of the gradient against central differences,
    along one random direction per parameter."""
    grads = fd.grad(loss)(params, images, labels)
    rng = np.random.default_rng(1)
    worst = 0.0
    for name, p in params.items():
        v = rng.standard_normal(p.shape)
        plus = loss({**params, name: p + eps * v}, images, labels)
        minus = loss({**params, name: p - eps * v}, images, labels)
        numeric, exact = (plus - minus) / (2 * eps), float(np.sum(grads[name] * v))
        worst = max(worst, abs(numeric - exact) / max(abs(exact), 1e-8))
    return worst


def train(steps: int = 800, n_train: int = 1500, n_test: int = 500, batch: int = 64,
          lr: float = 1e-2, seed: int = 0, verbose: bool = True) -> dict:
    x_train, y_train = make_glyphs(n_train, seed=seed)
    x_test, y_test = make_glyphs(n_test, seed=seed + 1)
    params = init_params(seed)
    gradient_error = check_gradient(params, x_train[:8], y_train[:8])
    step = fd.jit(fd.value_and_grad(loss))
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for t in range(1, steps + 1):
        idx = rng.integers(0, n_train, batch)
        value, grads = step(params, x_train[idx], y_train[idx])
        for k in params:  # Adam
            m[k] = b1 * m[k] + (1 - b1) * grads[k]
            v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
            m_hat, v_hat = m[k] / (1 - b1 ** t), v[k] / (1 - b2 ** t)
            params[k] = params[k] - lr * m_hat / (np.sqrt(v_hat) + eps)
        if verbose and t % 100 == 0:
            print(f"step {t:4d}  loss {float(value):.4f}")
    seconds = time.perf_counter() - start
    result = {"train_accuracy": accuracy(params, x_train, y_train),
              "test_accuracy": accuracy(params, x_test, y_test),
              "gradient_error": gradient_error, "seconds": seconds}
    if verbose:
        print(f"gradient vs central differences: relative error {gradient_error:.1e}")
        print(f"train accuracy {result['train_accuracy']:.3f}, test accuracy "
              f"{result['test_accuracy']:.3f} after {steps} steps ({seconds:.1f} s)")
    return result


if __name__ == "__main__":
    train(int(sys.argv[1]) if len(sys.argv) > 1 else 800)
