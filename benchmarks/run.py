"""Run every benchmark, compare with other libraries when installed, print a summary.

Every ``benchmarks/bench_*.py`` module with a ``main(argv)`` function is a
benchmark; this script runs each in turn with a progress display, writes its
result to ``benchmarks/results/<name>.json`` (``bench_fwd_rev.py`` ->
``fwd_rev.json``) and prints one summary table. A benchmark module may also
define

- ``summary(result) -> [(metric, value, target), ...]``: its headline rows
  (otherwise the summary shows the result's ``*ratio*`` numbers);
- ``compare(result, libs, quick) -> [row, ...]``: the same workloads timed with
  the other libraries in ``libs`` (any of "jax", "torch", "autograd"), each
  row ``{"workload", "library", "seconds", "funcdiff_seconds", "ratio"}`` with
  ratio = library time / funcdiff time (above 1 means funcdiff is faster).

When none of jax, torch and autograd is installed funcdiff runs alone, and the
script says so. Every number is measured in this process, on this machine.

Run: ``python benchmarks/run.py [--quick] [--only NAME ...] [--no-compare]``.
``--quick`` runs tiny sizes with short timing loops and writes no result files
(unless ``--results-dir`` is given): it is the smoke test.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib
import importlib.util
import json
import os
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import common  # noqa: E402
import other_libraries  # noqa: E402

OTHER_LIBRARIES = ("jax", "torch", "autograd")


def discover(only: list[str] | None = None) -> list[tuple[str, Any]]:
    """The benchmark modules, as (name, module), name being the file stem less ``bench_``."""
    found = []
    for path in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        stem = os.path.basename(path)[:-3]
        name = stem[len("bench_"):]
        if only and name not in only and stem not in only:
            continue
        module = importlib.import_module(stem)
        if callable(getattr(module, "main", None)):
            found.append((name, module))
    return found


def installed_libraries() -> dict[str, str]:
    """The comparison libraries importable here, with their versions."""
    libs = {}
    for lib in OTHER_LIBRARIES:
        if importlib.util.find_spec(lib) is None:
            continue
        try:
            libs[lib] = getattr(importlib.import_module(lib), "__version__", "?")
        except Exception as e:  # a broken install is reported, not fatal
            print(f"  {lib} is installed but failed to import "
                  f"({type(e).__name__}: {e}); skipping it")
    return libs


def pin_to_one_core() -> int | None:
    """When the environment limits numpy's BLAS to one thread (the setting of the
    README's numbers), run this process on one CPU: XLA and PyTorch size their
    own thread pools by the machine and ignore those variables, so on one core
    every library computes with one core's worth of work. Returns the CPU, or
    None when nothing was limited (or the platform cannot pin). Benchmarks that
    measure threads start their workers on every CPU again."""
    if "1" not in (os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("OMP_NUM_THREADS")):
        return None
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


@contextlib.contextmanager
def quick_timing(enabled: bool):
    """Under --quick, shorten every timing loop of common.best_time (tiny sizes need
    no statistics; the smoke test must take seconds)."""
    saved = dict(common.best_time.__kwdefaults__)
    if enabled:
        common.best_time.__kwdefaults__.update(repeat=2, min_time=0.002)
    try:
        yield
    finally:
        common.best_time.__kwdefaults__.update(saved)


# ---------------------------------------------------------------------------
# Comparisons for benchmarks that do not define compare() themselves


def _compare_reverse(result: dict, libs: list[str], quick: bool) -> list[dict]:
    """bench_reverse's MLP value_and_grad and scalar chain, timed with the other libraries."""
    import bench_reverse as br
    rows = []
    for r in result["mlp"]:
        rng = np.random.default_rng(0)
        params = br.init_mlp(rng, r["width"], r["width"], 10)
        x = rng.standard_normal((r["batch"], r["width"]))
        labels = rng.integers(0, 10, r["batch"])
        ref_loss, _ = br.numpy_value_and_grad(params, x, labels)
        for lib in libs:
            fn, variant = _mlp_value_and_grad(lib, params, x, labels)
            loss = fn()
            np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-8)
            t = common.best_time(fn, **common.short_samples(r["batch"] * r["width"]))
            ours = r["jit_s"] if variant == "jit" else r["eager_s"]
            rows.append({"workload": f"MLP value_and_grad {r['batch']}x{r['width']}",
                         "library": lib, "seconds": t, "funcdiff_seconds": ours,
                         "funcdiff_variant": variant, "ratio": t / ours})
    chain = result["chain"]
    x0, ref = 0.3, br.numpy_chain_grad(np.float64(0.3), chain["ops"])[1]
    for lib in libs:
        fn, variant = _chain_grad(lib, x0, chain["ops"])
        np.testing.assert_allclose(float(fn()), ref, rtol=1e-10)
        t = common.best_time(fn, repeat=25, min_time=0.01)
        ours = chain[f"{variant}_us_per_op"] * chain["ops"] * 1e-6
        rows.append({"workload": f"grad of the {chain['ops']}-op scalar chain", "library": lib,
                     "seconds": t, "funcdiff_seconds": ours, "funcdiff_variant": variant,
                     "ratio": t / ours})
    return rows


def _chain_grad(lib: str, x0: float, n: int):
    """A zero-argument callable computing the gradient of bench_reverse's scalar
    chain with ``lib``, and which funcdiff variant it compares with."""
    import bench_reverse as br

    def chain(x, m):  # m: the library's module of sin, tanh, cos, square, exp
        for i in range(n):
            op = br.OPS[i % len(br.OPS)]
            if op in ("sin", "tanh", "cos", "square"):
                x = getattr(m, op)(x)
            elif op == "mul":
                x = x * 0.9
            elif op == "add":
                x = x + 0.1
            else:
                x = m.exp(x) * 0.5
        return x
    if lib == "jax":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        g = jax.jit(jax.grad(lambda x: chain(x, jnp)))
        x = jnp.float64(x0)
        return (lambda: g(x).block_until_ready()), "jit"
    if lib == "torch":
        import torch

        def run():
            x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
            return torch.autograd.grad(chain(x, torch), x)[0]
        return run, "eager"
    if lib == "autograd":
        import autograd
        import autograd.numpy as anp
        g = autograd.grad(lambda x: chain(x, anp))
        return (lambda: g(x0)), "eager"
    raise ValueError(f"unknown library {lib!r}")


def _mlp_value_and_grad(lib: str, params, x, labels):
    """A zero-argument callable computing the MLP loss and its gradient with ``lib``
    (returning the loss), and which funcdiff variant it compares with."""
    if lib == "jax":
        import jax
        vg = jax.jit(jax.value_and_grad(other_libraries.jax_mlp_loss()))
        args = jax.device_put((params, x, labels))

        def run():
            value, grads = vg(*args)
            jax.block_until_ready(grads)
            return value
        return run, "jit"
    if lib == "torch":
        import torch
        ps = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              for w, b in params]
        tx, tl = torch.from_numpy(x), torch.from_numpy(labels)

        def run():
            loss = other_libraries.torch_mlp_loss(ps, tx, tl)
            torch.autograd.grad(loss, [t for p in ps for t in p])   # the gradients, discarded
            return loss.detach()
        return run, "eager"
    if lib == "autograd":
        import autograd
        vg = autograd.value_and_grad(other_libraries.autograd_mlp_loss(x, labels))
        return (lambda: vg(params)[0]), "eager"
    raise ValueError(f"unknown library {lib!r}")


BUILTIN_COMPARE = {"reverse": _compare_reverse}


# ---------------------------------------------------------------------------
# Summaries


def generic_summary(result: Any, limit: int = 8) -> list[tuple[str, str, str]]:
    """Rows for a benchmark without summary(): every number whose key mentions
    'ratio', labelled by its path in the result."""
    rows: list[tuple[str, str, str]] = []

    def walk(node, path):
        if isinstance(node, dict):
            label = ", ".join(f"{k}={v}" for k, v in node.items()
                              if isinstance(v, (int, str)) and not isinstance(v, bool)
                              and k in ("n", "m", "batch", "width", "ops", "size", "name"))
            for k, v in node.items():
                here = path + ([label] if label and label not in path else [])
                if isinstance(v, (float, np.floating)) and "ratio" in k:
                    rows.append((" ".join(here + [k]), f"{float(v):.3g}", ""))
                else:
                    walk(v, here)
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item, path)
    walk(result, [])
    return rows[:limit]


def comparison_table(rows: list[dict]) -> str:
    """One line per workload: funcdiff's times (eager and/or jit), then each
    library's time and its ratio to the funcdiff variant it is compared with."""
    libs = sorted({r["library"] for r in rows})
    variants = sorted({r.get("funcdiff_variant", "eager") for r in rows})
    workloads: dict[str, dict] = {}
    for r in rows:
        w = workloads.setdefault(r["workload"], {})
        w[r.get("funcdiff_variant", "eager")] = r["funcdiff_seconds"]
        w[r["library"]] = r
    body = []
    for name, w in workloads.items():
        line = [name] + [w[v] * 1e3 if v in w else "-" for v in variants]
        for lib in libs:
            r = w.get(lib)
            line.append("-" if r is None else
                        f"{r['seconds'] * 1e3:.3g} ms ({r['ratio']:.2f}x vs "
                        f"{r.get('funcdiff_variant', 'eager')})")
        body.append(line)
    return common.table(body, ["workload"] + [f"funcdiff {v} ms" for v in variants]
                        + [f"{lib} ms (lib/funcdiff)" for lib in libs])


def comparison_summary(rows: list[dict]) -> list[tuple[str, str, str]]:
    """Per library: the geometric mean and range of library time / funcdiff time."""
    out = []
    for lib in sorted({r["library"] for r in rows}):
        ratios = np.array([r["ratio"] for r in rows if r["library"] == lib])
        variants = "/".join(sorted({r.get("funcdiff_variant", "eager") for r in rows
                                    if r["library"] == lib}))
        out.append((f"{lib} / funcdiff {variants}, {len(ratios)} workloads",
                    f"geo-mean {np.exp(np.mean(np.log(ratios))):.2f}x "
                    f"({ratios.min():.2f}-{ratios.max():.2f}x)", "> 1: funcdiff faster"))
    return out


def write_json(results_dir: str, name: str, payload: dict) -> str:
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{name}.json")
    with open(path, "w") as fh:
        json.dump({"machine": common.machine(), "load_average": os.getloadavg(), **payload},
                  fh, indent=2, default=_jsonable)
    return path


def _jsonable(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and short timing loops (the smoke test)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--no-compare", action="store_true",
                        help="do not run jax/torch/autograd even when installed")
    parser.add_argument("--results-dir", default=None,
                        help=f"where to write <name>.json (default {common.RESULTS_DIR}; "
                             "--quick writes nothing unless this is given)")
    args = parser.parse_args(argv)
    results_dir = args.results_dir or (None if args.quick else common.RESULTS_DIR)

    pinned = pin_to_one_core()
    benches = discover(args.only)
    libs = {} if args.no_compare else installed_libraries()
    print(f"funcdiff benchmarks: {len(benches)} found ({', '.join(n for n, _ in benches)})"
          f"{', quick mode' if args.quick else ''}")
    if pinned:
        print(f"one thread: numpy's BLAS is limited to one, and this process runs on CPU "
              f"{pinned} only, so jax's and torch's thread pools share that core")
    if args.no_compare:
        print("comparison with other libraries: off (--no-compare)")
    elif libs:
        missing = [lib for lib in OTHER_LIBRARIES if lib not in libs]
        print("comparing with " + ", ".join(f"{k} {v}" for k, v in libs.items())
              + (f" ({', '.join(missing)} not installed)" if missing else ""))
    else:
        print("jax, torch and autograd are not installed: funcdiff runs alone "
              "(pip install any of them to see ratios side by side)")

    outcomes: dict[str, dict] = {}
    t_start = time.perf_counter()
    for i, (name, module) in enumerate(benches, 1):
        elapsed = time.perf_counter() - t_start
        print(f"\n[{i}/{len(benches)}] {name}: running ({elapsed:.0f} s elapsed)", flush=True)
        t0 = time.perf_counter()
        outcome: dict = {}
        try:
            with quick_timing(args.quick):
                result = module.main(["--quick"] if args.quick else [])
                outcome["result"] = result
                compare = getattr(module, "compare", None) or BUILTIN_COMPARE.get(name)
                if libs and compare is not None and isinstance(result, dict):
                    print(f"[{i}/{len(benches)}] {name}: timing the same workloads with "
                          f"{', '.join(libs)}", flush=True)
                    outcome["comparisons"] = compare(result, list(libs), args.quick)
                    print(comparison_table(outcome["comparisons"]))
                elif libs:
                    print(f"  ({name} defines no comparable workloads for other libraries)")
        except Exception as e:  # one failing benchmark does not stop the others
            outcome["error"] = f"{type(e).__name__}: {e}"
            print(f"[{i}/{len(benches)}] {name}: FAILED: {outcome['error']}")
        outcome["seconds"] = time.perf_counter() - t0
        if results_dir and "result" in outcome and isinstance(outcome["result"], dict):
            payload = dict(outcome["result"])
            if "comparisons" in outcome:
                payload["comparisons"] = outcome["comparisons"]
            outcome["path"] = write_json(results_dir, name, payload)
        print(f"[{i}/{len(benches)}] {name}: done in {outcome['seconds']:.1f} s"
              + (f", wrote {os.path.relpath(outcome['path'])}" if "path" in outcome else ""))
        outcomes[name] = outcome

    rows = []
    for name, module in benches:
        o = outcomes[name]
        if "error" in o:
            rows.append([name, "FAILED", o["error"][:60], ""])
            continue
        summarize = getattr(module, "summary", None)
        lines = summarize(o["result"]) if summarize else generic_summary(o["result"])
        for metric, value, target in lines:
            rows.append([name, metric, value, target])
        for metric, value, target in comparison_summary(o.get("comparisons", [])):
            rows.append([name, metric, value, target])
    print(f"\nSummary ({time.perf_counter() - t_start:.0f} s; numbers from this machine, "
          f"load average {os.getloadavg()[0]:.1f})")
    if args.quick:  # tiny sizes say whether the benchmarks run, not how fast funcdiff is
        print("--quick: a smoke test at tiny sizes; the numbers are not graded against the "
              "targets (run without --quick for that)")
        rows = [row[:3] + ["(not graded)" if row[3] else ""] for row in rows]
    print(common.table(rows, ["benchmark", "metric", "value", "target"]))
    return outcomes


if __name__ == "__main__":
    outcomes = main()
    sys.exit(1 if any("error" in o for o in outcomes.values()) else 0)
