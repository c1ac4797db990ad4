"""Shared helpers of the benchmarks: timing, the machine description, result files.

Every benchmark measures funcdiff against numpy written by hand in the same
process and reports the ratio: that is the physical limit for a numpy library.
Benchmarks are run by hand (``python benchmarks/run.py``); no test times them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tracemalloc
from typing import Any, Callable

import numpy as np

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def best_time(fn: Callable[[], Any], *, repeat: int = 5, min_time: float = 0.05) -> float:
    """Best-of-``repeat`` seconds per call, each sample running at least ``min_time``."""
    fn()  # warm up caches (jit traces, BLAS threads)
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time:
            break
        number *= 2
    samples = [elapsed / number]
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return min(samples)


def round_robin_times(fns: list[Callable[[], Any]], *, repeat: int | None = None,
                      min_time: float | None = None) -> list[float]:
    """Best seconds per call of each of ``fns``, sampled round-robin: each of
    ``repeat`` rounds runs every function for about ``min_time``, so a burst of
    load on a shared machine slows one sample of each rather than every sample
    of one, and the ratios between them stay put. Defaults as ``best_time``'s."""
    defaults = best_time.__kwdefaults__
    repeat = defaults["repeat"] if repeat is None else repeat
    min_time = defaults["min_time"] if min_time is None else min_time
    numbers = []
    for fn in fns:
        fn()  # warm up (jit traces, BLAS threads, caches)
        number = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            if time.perf_counter() - t0 >= min_time:
                break
            number *= 2
        numbers.append(number)
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, (fn, number) in enumerate(zip(fns, numbers)):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


def short_samples(size: int) -> dict:
    """``best_time`` settings for a workload over arrays of ``size`` elements: for
    small ones (work under a millisecond), many short samples, which find the
    quiet moments of a shared machine; none for large ones, or under run.py
    --quick, whose shortened defaults then apply."""
    if size > 4096 or best_time.__kwdefaults__["repeat"] < 5:
        return {}
    return {"repeat": 25, "min_time": 0.01}


def peak_bytes(fn: Callable[[], Any], warm: bool = True) -> int:
    """Peak bytes Python allocates (tracemalloc) during one call of ``fn``, after a
    warm-up call (jit traces, caches) unless ``warm`` is False."""
    if warm:
        fn()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def quick_main(name: str, run: Callable[..., dict], description: str, argv=None) -> dict:
    """The ``main`` of a benchmark with one ``--quick`` switch: runs ``run(quick=...)``
    and, at full size, writes ``results/<name>.json``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="one small size (smoke test)")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    if not args.quick:
        print("wrote", write_results(name, result))
    return result


def machine() -> dict:
    """A short description of where the numbers were measured."""
    info = {"python": platform.python_version(), "numpy": np.__version__,
            "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        from threadpoolctl import threadpool_info
        info["blas"] = [(p.get("internal_api"), p.get("num_threads")) for p in threadpool_info()]
    except ImportError:
        pass
    return info


def write_results(name: str, payload: dict) -> str:
    os.makedirs(RESULTS_DIR, exist_ok=True)
    path = os.path.join(RESULTS_DIR, f"{name}.json")
    with open(path, "w") as fh:
        json.dump({"machine": machine(), **payload}, fh, indent=2, default=float)
    return path


def table(rows: list[list[Any]], header: list[str]) -> str:
    cells = [header] + [[f"{c:.3g}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)
