"""The cost of funcdiff.numpy outside transforms: each function against numpy's own.

Code written against ``funcdiff.numpy`` also runs when no transform is active
(evaluating a loss, a model's forward pass, data preparation). There every
function checks its arguments and binds primitives that run their numpy impl,
so its cost is numpy's call plus funcdiff's Python. This benchmark times a
table of common functions on small arrays (an 8 x 8 matrix, an 8-vector),
where that Python is all that separates the two, and reports the overhead in
microseconds and the ratio. Both sides are checked to agree first.

Run: ``python benchmarks/bench_numpy_layer.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import funcdiff.numpy as fnp  # noqa: E402
from common import best_time, table, write_results  # noqa: E402

_rng = np.random.default_rng(0)
A = _rng.standard_normal((8, 8))
B = _rng.standard_normal((8, 8))
V = _rng.standard_normal(8)
IDX = np.array([0, 3, 5])

# name -> a call taking the module (numpy or funcdiff.numpy) as ``m``
CASES = {
    "add": lambda m: m.add(A, B),
    "exp": lambda m: m.exp(A),
    "maximum": lambda m: m.maximum(V, 0.0),
    "where": lambda m: m.where(V > 0, V, 0.0),
    "clip": lambda m: m.clip(V, -1.0, 1.0),
    "sum": lambda m: m.sum(A),
    "mean(axis=0)": lambda m: m.mean(A, axis=0),
    "max(axis=1)": lambda m: m.max(A, axis=1),
    "var": lambda m: m.var(A),
    "std(axis=1)": lambda m: m.std(A, axis=1),
    "cumsum": lambda m: m.cumsum(V),
    "argmax": lambda m: m.argmax(V),
    "reshape": lambda m: m.reshape(A, (64,)),
    "transpose": lambda m: m.transpose(A),
    "squeeze": lambda m: m.squeeze(A[None]),
    "expand_dims": lambda m: m.expand_dims(V, 0),
    "broadcast_to": lambda m: m.broadcast_to(V, (3, 8)),
    "flip": lambda m: m.flip(V),
    "roll": lambda m: m.roll(V, 1),
    "concatenate": lambda m: m.concatenate([V, V]),
    "stack": lambda m: m.stack([V, V, V]),
    "vstack": lambda m: m.vstack([V, V]),
    "hstack": lambda m: m.hstack([V, V]),
    "split": lambda m: m.split(V, 2),
    "tile": lambda m: m.tile(V, 3),
    "repeat": lambda m: m.repeat(V, 2),
    "take": lambda m: m.take(V, IDX),
    "sort": lambda m: m.sort(A, axis=-1),
    "argsort": lambda m: m.argsort(V),
    "diag(v)": lambda m: m.diag(V),
    "diag(A)": lambda m: m.diag(A),
    "trace": lambda m: m.trace(A),
    "outer": lambda m: m.outer(V, V),
    "dot": lambda m: m.dot(A, V),
    "matmul": lambda m: m.matmul(A, B),
    "einsum ij,jk->ik": lambda m: m.einsum("ij,jk->ik", A, B),
    "einsum ii": lambda m: m.einsum("ii", A),
    "einsum ij,jk,kl->il": lambda m: m.einsum("ij,jk,kl->il", A, B, A),
    "tensordot": lambda m: m.tensordot(A, B, axes=1),
    "linalg.norm": lambda m: m.linalg.norm(V),
    "linalg.solve": lambda m: m.linalg.solve(A, V),
    "linalg.inv": lambda m: m.linalg.inv(A),
    "linalg.det": lambda m: m.linalg.det(A),
}


def _agree(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))
    return np.allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def bench_case(name: str, call, min_time: float) -> dict:
    if not _agree(call(np), call(fnp)):
        raise AssertionError(f"funcdiff.numpy disagrees with numpy on {name}")
    t_np = best_time(lambda: call(np), min_time=min_time)
    t_fd = best_time(lambda: call(fnp), min_time=min_time)
    return {"function": name, "numpy_us": t_np * 1e6, "funcdiff_us": t_fd * 1e6,
            "overhead_us": (t_fd - t_np) * 1e6, "ratio": t_fd / t_np}


def summary(result: dict) -> list[tuple[str, str, str]]:
    s = result["summary"]
    return [("numpy layer: median overhead per call", f"{s['median_overhead_us']:.1f} us", "-"),
            ("numpy layer: largest overhead", f"{s['max_overhead_us']:.1f} us "
             f"({s['max_function']})", "-"),
            ("numpy layer: functions over 5 us", str(s["over_5us"]), "-")]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timing loops; writes nothing")
    args = parser.parse_args(argv)
    min_time = 0.002 if args.quick else 0.02
    rows = [bench_case(name, call, min_time) for name, call in CASES.items()]
    rows.sort(key=lambda r: -r["overhead_us"])
    worst = rows[0]
    result = {"functions": rows, "summary": {
        "median_overhead_us": statistics.median(r["overhead_us"] for r in rows),
        "max_overhead_us": worst["overhead_us"], "max_function": worst["function"],
        "over_5us": sum(r["overhead_us"] > 5 for r in rows)}}
    print(table([[r["function"], r["numpy_us"], r["funcdiff_us"], r["overhead_us"], r["ratio"]]
                 for r in rows], ["function", "numpy us", "funcdiff us", "overhead us", "ratio"]))
    if not args.quick:
        print("wrote", write_results("numpy_layer", result))
    return result


if __name__ == "__main__":
    main()
