"""The same MLP trained on a GPU when there is one (CuPy or torch.cuda), else on the CPU.

funcdiff traces the program once and runs it on whatever arrays it is given:
CuPy arrays through numpy's dispatch protocols, torch tensors through their
array API namespace (``funcdiff.bridge``). Nothing here is specific to a
device except where the data is created: the loss, ``fd.jit(fd.value_and_grad)``
and the update are the same lines for every backend, and the parameters stay on
the device (no copy back to numpy) until the final loss is printed.

``--device`` picks one: ``auto`` (the default: cupy, then torch.cuda, then the
CPU, saying which), ``cpu`` (numpy), ``cupy``, ``torch`` (torch.cuda), or
``array_api_strict`` (the array API's reference library, a stand-in for "an
array type that is not numpy", runnable anywhere).

Run: ``python examples/gpu.py [--device auto] [--steps 200]``.
"""

from __future__ import annotations

import argparse
import importlib

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp

SIZES = [8, 64, 64, 3]


def available(device: str) -> bool:
    """Whether ``device`` can run here."""
    if device == "cpu":
        return True
    try:
        if device == "cupy":
            return importlib.import_module("cupy").cuda.runtime.getDeviceCount() > 0
        if device == "torch":
            return importlib.import_module("torch").cuda.is_available()
        if device == "array_api_strict":
            importlib.import_module("array_api_strict")
            return True
    except Exception:  # not installed, or installed without a usable device
        return False
    raise ValueError(f"unknown device {device!r}")


def choose(device: str) -> str:
    if device != "auto":
        if not available(device):
            raise SystemExit(f"--device {device}: not available on this machine")
        return device
    for candidate in ("cupy", "torch"):
        if available(candidate):
            return candidate
    print("no GPU found (neither CuPy with a device nor torch.cuda): running on the CPU")
    return "cpu"


def to_device(device: str):
    """A function moving a numpy array to ``device``."""
    if device == "cupy":
        return importlib.import_module("cupy").asarray
    if device == "torch":
        torch = importlib.import_module("torch")
        return lambda a: torch.asarray(a, device="cuda")
    if device == "array_api_strict":
        return importlib.import_module("array_api_strict").asarray
    return np.asarray


def make_data(rng, n: int = 512):
    """Three classes from a fixed random teacher network; labels one-hot."""
    x = rng.standard_normal((n, SIZES[0]))
    teacher = rng.standard_normal((SIZES[0], SIZES[-1]))
    labels = np.argmax(np.tanh(x @ teacher) + 0.1 * rng.standard_normal((n, SIZES[-1])), axis=1)
    return x, np.eye(SIZES[-1])[labels]


def init(rng):
    return [(rng.standard_normal((a, b)) / np.sqrt(a), np.zeros(b))
            for a, b in zip(SIZES[:-1], SIZES[1:])]


def loss(params, x, onehot):
    h = x
    for w, b in params[:-1]:
        h = fnp.tanh(h @ w + b)
    w, b = params[-1]
    z = h @ w + b
    z = z - fnp.max(z, axis=1, keepdims=True)
    log_probs = z - fnp.log(fnp.sum(fnp.exp(z), axis=1, keepdims=True))
    return -fnp.mean(fnp.sum(onehot * log_probs, axis=1))


def main(device: str = "auto", steps: int = 200, lr: float = 0.5, verbose: bool = True) -> dict:
    device = choose(device)
    move = to_device(device)
    rng = np.random.default_rng(0)
    x, onehot = make_data(rng)
    x, onehot = move(x), move(onehot)
    params = fd.tree_util.tree_map(move, init(rng))
    step = fd.jit(fd.value_and_grad(loss))
    losses = []
    for i in range(steps):
        value, grads = step(params, x, onehot)
        params = fd.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        losses.append(float(value))
        if verbose and (i % 50 == 0 or i == steps - 1):
            print(f"step {i:4d}  loss {losses[-1]:.4f}")
    kind = type(params[0][0])
    if verbose:
        print(f"device: {device}; parameters are {kind.__module__}.{kind.__name__}")
    return {"device": device, "losses": losses, "parameter_type": kind}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto",
                        choices=["auto", "cpu", "cupy", "torch", "array_api_strict"])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    main(args.device, args.steps)
