"""Dask: one gradient of the logistic loss over chunked data, on 1 and 2 workers.

Workload: ``jit(grad(loss))(w, X, y)`` with ``X`` a dask array of ``rows x 10``
float64 generated chunk by chunk (``dask.array.random``), computed on a
``distributed.LocalCluster`` of 1 or 2 single-threaded worker processes with
1, 2 or 4 chunks per worker. References in the same process: the gradient
written by hand in numpy on the data held in memory, and the same gradient
written by hand in dask.array (``X.T @ (sigmoid(X @ w) - y) / n``). Reported:
seconds per gradient (best of a few, the graph built and computed each time),
the ratio to the hand-written dask gradient, and the peak resident memory of
the workers (for numpy: of this process, which holds the data).

Run: ``python benchmarks/bench_dask.py [--quick]``; writes
``benchmarks/results/dask.json`` (through ``benchmarks/run.py``, or directly).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

try:  # optional: the benchmark reports a skip without them
    import dask.array as da
    import distributed
except ImportError:
    da = distributed = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import write_results  # noqa: E402

import funcdiff as fd  # noqa: E402
import funcdiff.numpy as fnp  # noqa: E402

FEATURES = 10


def loss(w, X, y):
    z = X @ w
    return fnp.mean(fnp.logaddexp(0.0, z) - y * z)


def hand_gradient(w, X, y):
    """The logistic loss's gradient written by hand (numpy or dask.array alike)."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0]


def best_seconds(fn, repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return min(samples)


def peak_mb(dask_worker=None) -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_on_cluster(rows: int, workers: int, chunks_per_worker: int, repeat: int) -> dict:
    chunk_rows = -(-rows // (workers * chunks_per_worker))
    X = da.random.default_rng(0).standard_normal((rows, FEATURES), chunks=(chunk_rows, FEATURES))
    y = (X @ np.linspace(-1.0, 1.0, FEATURES) > 0).astype(np.float64)
    w = np.full(FEATURES, 0.1)
    gradient = fd.jit(fd.grad(loss))
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        ours = gradient(w, X, y).compute()
        np.testing.assert_allclose(ours, hand_gradient(w, X, y).compute(), rtol=1e-10)
        funcdiff_s = best_seconds(lambda: gradient(w, X, y).compute(), repeat)
        hand_s = best_seconds(lambda: hand_gradient(w, X, y).compute(), repeat)
        worker_mb = max(client.run(peak_mb).values())
    return {"workers": workers, "chunks_per_worker": chunks_per_worker, "rows": rows,
            "chunk_rows": chunk_rows, "funcdiff_seconds": funcdiff_s,
            "hand_dask_seconds": hand_s, "ratio_to_hand_dask": funcdiff_s / hand_s,
            "worker_peak_mb": worker_mb}


def run_in_memory(rows: int, repeat: int) -> dict:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, FEATURES))
    y = (X @ np.linspace(-1.0, 1.0, FEATURES) > 0).astype(np.float64)
    w = np.full(FEATURES, 0.1)
    gradient = fd.jit(fd.grad(loss))
    np.testing.assert_allclose(gradient(w, X, y), hand_gradient(w, X, y), rtol=1e-10)
    return {"rows": rows, "hand_numpy_seconds": best_seconds(lambda: hand_gradient(w, X, y), repeat),
            "funcdiff_numpy_seconds": best_seconds(lambda: gradient(w, X, y), repeat),
            "process_peak_mb": peak_mb()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = parser.parse_args(argv)
    if da is None or distributed is None:
        return {"skipped": "dask and distributed are not installed (pip install funcdiff[dask])"}
    rows, repeat = (20_000, 1) if args.quick else (4_000_000, 3)
    configs = [(1, 1), (2, 1)] if args.quick else [(w, c) for w in (1, 2) for c in (1, 2, 4)]
    cluster_rows = [run_on_cluster(rows, w, c, repeat) for w, c in configs]
    result = {"features": FEATURES, "in_memory": run_in_memory(rows, repeat),
              "cluster": cluster_rows}
    if not args.quick:
        print(f"{'workers':>7} {'chunks/worker':>13} {'funcdiff s':>10} {'hand dask s':>11} "
              f"{'ratio':>6} {'worker MB':>9}")
        for r in cluster_rows:
            print(f"{r['workers']:>7} {r['chunks_per_worker']:>13} {r['funcdiff_seconds']:>10.3f} "
                  f"{r['hand_dask_seconds']:>11.3f} {r['ratio_to_hand_dask']:>6.2f} "
                  f"{r['worker_peak_mb']:>9.0f}")
        mem = result["in_memory"]
        print(f"in memory: hand numpy {mem['hand_numpy_seconds']:.3f} s, funcdiff jit "
              f"{mem['funcdiff_numpy_seconds']:.3f} s, process peak {mem['process_peak_mb']:.0f} MB")
        write_results("dask", result)
    return result


def summary(result: dict) -> list[tuple[str, float, str]]:
    if "cluster" not in result:
        return []
    best = min(result["cluster"], key=lambda r: r["funcdiff_seconds"])
    return [(f"dask gradient / hand dask.array ({best['workers']} workers)",
             best["ratio_to_hand_dask"], "<= 1.1")]


if __name__ == "__main__":
    main()
