"""Logistic regression by gradient descent on a data set larger than the process holds, with dask.

The design matrix is generated chunk by chunk by ``dask.array.random`` and
never exists in one piece: ``fd.jit(fd.value_and_grad(loss))`` turns the
loss and its gradient into one lazy dask graph (a tree reduction over the
chunks), and each step's ``compute`` runs it on a ``LocalCluster`` of two worker
processes, with dask's progress bar. The script prints the loss per step and
the peak resident memory of this process and of the workers.

    python examples/dask_logistic_regression.py            # 2e7 rows x 10: 1.6 GB of data
    python examples/dask_logistic_regression.py --rows 200000 --steps 3

Needs the ``dask`` extra: ``pip install "funcdiff[dask]"``.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp

try:
    import dask.array as da
    import distributed
except ImportError as missing:  # the extra is not installed: say how to get it
    raise SystemExit(f"this example needs dask and distributed ({missing}): "
                     'pip install "funcdiff[dask]"') from None


def loss(w, X, y):
    """Mean logistic loss of the weights ``w`` on the rows of ``X`` with labels ``y``."""
    z = X @ w
    return fnp.mean(fnp.logaddexp(0.0, z) - y * z)


def data(rows: int, features: int, chunk_rows: int, seed: int = 0):
    """A chunked design matrix and labels from a known weight vector (lazy: nothing is held)."""
    X = da.random.default_rng(seed).standard_normal((rows, features), chunks=(chunk_rows, features))
    w_true = np.linspace(-2.0, 2.0, features)
    y = (X @ w_true > 0).astype(np.float64)
    return X, y, w_true


def worker_peak_mb(dask_worker=None) -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(rows: int = 20_000_000, features: int = 10, chunk_rows: int = 1_000_000,
         steps: int = 10, learning_rate: float = 2.0, workers: int = 2, verbose: bool = True):
    """Fit, and return the losses, the final weights and the peak memory in MB."""
    X, y, w_true = data(rows, features, chunk_rows)
    step = fd.jit(fd.value_and_grad(loss))
    w = np.zeros(features)
    losses = []
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        if verbose:
            print(f"{rows} x {features} rows of float64 ({X.nbytes / 1e9:.2f} GB) in "
                  f"{X.numblocks[0]} chunks on {workers} workers")
        for i in range(steps):
            t0 = time.perf_counter()
            value, g = step(w, X, y)  # lazy: a dask graph, nothing computed yet
            futures = client.compute([value, g])
            if verbose:
                distributed.progress(futures, notebook=False)
                print()
            value, g = client.gather(futures)
            w = w - learning_rate * g
            losses.append(float(value))
            if verbose:
                print(f"step {i:2d}  loss {value:.6f}  ({time.perf_counter() - t0:.1f} s)")
        workers_mb = client.run(worker_peak_mb)
    own_mb = worker_peak_mb()
    if verbose:
        cosine = w @ w_true / np.linalg.norm(w) / np.linalg.norm(w_true)
        print(f"cosine(w, w_true) = {cosine:.4f}")
        print(f"peak resident memory: this process {own_mb:.0f} MB, workers "
              + ", ".join(f"{mb:.0f} MB" for mb in workers_mb.values()))
    return {"losses": losses, "w": w, "w_true": w_true, "peak_mb": own_mb,
            "worker_peak_mb": list(workers_mb.values())}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    main(args.rows, args.features, args.chunk_rows, args.steps)
