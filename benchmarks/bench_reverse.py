"""Reverse mode cost: value_and_grad against hand-written numpy backprop.

Three workloads, each timed eagerly and under jit:
- a 4-layer tanh MLP with softmax cross-entropy (batch 256 / width 512, and
  batch 8 / width 16), against a hand-written numpy forward + backward pass;
- a chain of 200 scalar elementwise operations, against a hand-written numpy
  forward + reverse sweep, reported in microseconds per operation;
- the Rosenbrock function of 10 and 10,000 variables, written with slices
  (``x[1:] - x[:-1] ** 2``), against its gradient written by hand;

the peak memory of repeated value_and_grad calls of a 4096 x 256 MLP (each
kind in a fresh process), against the hand-written pass; and the large MLP
under jit with one thread and with the libraries' default threads (numpy's
BLAS and numexpr on every core), each in a fresh process, against hand-written
numpy with the same threads.

Run: ``python benchmarks/bench_reverse.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import funcdiff as fd  # noqa: E402
import funcdiff.numpy as fnp  # noqa: E402
from common import (round_robin_times, short_samples, table,  # noqa: E402
                    write_results)

# ---------------------------------------------------------------------------
# MLP


def init_mlp(rng, d_in, width, d_out, layers=4):
    sizes = [d_in] + [width] * (layers - 1) + [d_out]
    return [(rng.standard_normal((a, b)) / np.sqrt(a), np.zeros(b)) for a, b in zip(sizes[:-1], sizes[1:])]


def mlp_loss(params, x, labels):
    h = x
    for w, b in params[:-1]:
        h = fnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    z = logits - fnp.max(logits, axis=1, keepdims=True)
    logp = z - fnp.log(fnp.sum(fnp.exp(z), axis=1, keepdims=True))
    return -fnp.mean(fnp.take_along_axis(logp, labels[:, None], axis=1))


def numpy_value_and_grad(params, x, labels):
    """Forward and backward pass written by hand: the physical limit."""
    hs = [x]
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
        hs.append(h)
    w, b = params[-1]
    logits = h @ w + b
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.mean(z[np.arange(n), labels] - np.log(s[:, 0]))
    d = e / s
    d[np.arange(n), labels] -= 1.0
    d /= n
    grads = [None] * len(params)
    grads[-1] = (hs[-1].T @ d, d.sum(axis=0))
    g = d @ w.T
    for i in range(len(params) - 2, -1, -1):
        g = g * (1.0 - hs[i + 1] ** 2)
        grads[i] = (hs[i].T @ g, g.sum(axis=0))
        if i:
            g = g @ params[i][0].T
    return loss, grads


def bench_mlp(batch, width, rng):
    params = init_mlp(rng, width, width, 10)
    x = rng.standard_normal((batch, width))
    labels = rng.integers(0, 10, batch)
    vg = fd.value_and_grad(mlp_loss)
    jvg = fd.jit(vg)
    loss, grads = vg(params, x, labels)
    ref_loss, ref_grads = numpy_value_and_grad(params, x, labels)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-10)
    for (gw, gb), (rw, rb) in zip(grads, ref_grads):
        np.testing.assert_allclose(gw, rw, rtol=1e-8, atol=1e-12)
    fd.config.update("jit_numexpr", False)  # the same program with numpy for every operation
    try:
        plain = fd.jit(vg)
        plain(params, x, labels)  # traced and compiled without numexpr
    finally:
        fd.config.update("jit_numexpr", True)
    t_np, t_eager, t_jit, t_plain = round_robin_times(
        [lambda: numpy_value_and_grad(params, x, labels), lambda: vg(params, x, labels),
         lambda: jvg(params, x, labels), lambda: plain(params, x, labels)],
        **short_samples(batch * width))
    chains = len(jvg.lower(params, x, labels).fused_chains)
    return {"batch": batch, "width": width, "numpy_s": t_np, "eager_s": t_eager, "jit_s": t_jit,
            "jit_without_numexpr_s": t_plain, "fused_chains": chains,
            "eager_ratio": t_eager / t_np, "jit_ratio": t_jit / t_np,
            "jit_without_numexpr_ratio": t_plain / t_np}


# ---------------------------------------------------------------------------
# Scalar chain

OPS = ["sin", "mul", "add", "tanh", "cos", "square", "exp"]


def chain(x, n=200):
    for i in range(n):
        op = OPS[i % len(OPS)]
        if op == "sin":
            x = fnp.sin(x)
        elif op == "mul":
            x = x * 0.9
        elif op == "add":
            x = x + 0.1
        elif op == "tanh":
            x = fnp.tanh(x)
        elif op == "cos":
            x = fnp.cos(x)
        elif op == "square":
            x = fnp.square(x)
        else:
            x = fnp.exp(x) * 0.5
    return x


def numpy_chain_grad(x, n=200):
    """Forward sweep keeping what reverse needs, then the reverse sweep, in numpy."""
    derivs = []
    for i in range(n):
        op = OPS[i % len(OPS)]
        if op == "sin":
            derivs.append(np.cos(x)); x = np.sin(x)
        elif op == "mul":
            derivs.append(0.9); x = x * 0.9
        elif op == "add":
            derivs.append(1.0); x = x + 0.1
        elif op == "tanh":
            x = np.tanh(x); derivs.append(1.0 - x * x)
        elif op == "cos":
            derivs.append(-np.sin(x)); x = np.cos(x)
        elif op == "square":
            derivs.append(2.0 * x); x = np.square(x)
        else:
            e = np.exp(x) * 0.5
            derivs.append(e); x = e
    g = np.float64(1.0)
    for d in reversed(derivs):
        g = g * d
    return x, g


def bench_chain():
    x = np.float64(0.3)
    n = 200
    vg = fd.value_and_grad(chain)
    jvg = fd.jit(vg)
    np.testing.assert_allclose(vg(x)[1], numpy_chain_grad(x)[1], rtol=1e-10)
    # a millisecond per call: many short samples, round-robin, find the quiet moments
    # of a shared machine for each of the three alike
    samples = short_samples(n)
    if samples:
        samples["repeat"] = 60
    t_np, t_eager, t_jit = round_robin_times(
        [lambda: numpy_chain_grad(x), lambda: vg(x), lambda: jvg(x)], **samples)
    return {"ops": n, "numpy_us_per_op": t_np / n * 1e6, "eager_us_per_op": t_eager / n * 1e6,
            "jit_us_per_op": t_jit / n * 1e6}


# ---------------------------------------------------------------------------
# Indexing: the Rosenbrock function, written with slices of one vector


def rosenbrock(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def numpy_rosenbrock_grad(x):
    head, tail = x[:-1], x[1:]
    r = tail - head ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * head * r - 2.0 * (1.0 - head)
    g[1:] += 200.0 * r
    return np.sum(100.0 * r ** 2 + (1.0 - head) ** 2), g


def bench_indexing(n):
    x = np.linspace(-1.2, 1.2, n)
    vg = fd.value_and_grad(rosenbrock)
    jvg = fd.jit(vg)
    np.testing.assert_allclose(vg(x)[1], numpy_rosenbrock_grad(x)[1], rtol=1e-10)
    t_np, t_eager, t_jit = round_robin_times(
        [lambda: numpy_rosenbrock_grad(x), lambda: vg(x), lambda: jvg(x)], **short_samples(n))
    return {"n": n, "numpy_s": t_np, "eager_s": t_eager, "jit_s": t_jit,
            "eager_ratio": t_eager / t_np, "jit_ratio": t_jit / t_np}


# ---------------------------------------------------------------------------
# Peak memory

PEAK_SIZES = {False: (4096, 256, 10), True: (64, 16, 3)}  # batch, width, calls


def peak_memory_worker(kind: str, quick: bool) -> float:
    """MiB by which this process's peak resident memory grows over repeated
    value_and_grad calls of an MLP (run in a fresh process: the peak never falls)."""
    import resource
    batch, width, calls = PEAK_SIZES[quick]
    rng = np.random.default_rng(0)
    params = init_mlp(rng, width, width, 10)
    x = rng.standard_normal((batch, width))
    labels = rng.integers(0, 10, batch)
    vg = fd.value_and_grad(mlp_loss)
    run = {"numpy": numpy_value_and_grad, "eager": vg, "jit": fd.jit(vg)}[kind]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(calls):
        run(params, x, labels)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024  # KiB on Linux


def bench_peak_memory(quick: bool) -> dict:
    """Peak memory growth of hand-written numpy, eager and jitted value_and_grad,
    each in a fresh process (the activations of the MLP are what is kept for the
    backward pass: a batch x width float64 array per layer)."""
    import subprocess
    batch, width, calls = PEAK_SIZES[quick]
    result = {"batch": batch, "width": width, "calls": calls,
              "activation_mib": batch * width * 8 / 2 ** 20}
    for kind in ("numpy", "eager", "jit"):
        cmd = [sys.executable, os.path.abspath(__file__), "--peak-memory-worker", kind]
        out = subprocess.run(cmd + (["--quick"] if quick else []), check=True,
                             capture_output=True, text=True).stdout
        result[f"{kind}_mib"] = float(out.split()[-1])
    return result


# ---------------------------------------------------------------------------
# Threads

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMEXPR_NUM_THREADS")


def threads_worker(quick: bool) -> dict:
    """bench_mlp at the large size in this process, with the thread counts its
    environment gives numpy's BLAS and numexpr (run in a fresh process)."""
    batch, width = (64, 64) if quick else (256, 512)
    result = bench_mlp(batch, width, np.random.default_rng(0))
    try:
        import numexpr
        result["numexpr_threads"] = numexpr.get_num_threads()
    except ImportError:
        result["numexpr_threads"] = 0
    return result


def _every_cpu() -> None:
    """In a worker before it starts: every CPU of the machine (run.py pins itself
    to one when it measures one thread)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, range(os.cpu_count()))


def bench_threads(quick: bool) -> dict:
    """The large MLP under jit with one thread and with the libraries' default
    threads (every core: numpy's BLAS on the products, numexpr on the fused
    elementwise chains), each in a fresh process, against hand-written numpy
    with the same threads."""
    import json
    import subprocess
    out = {"cpus": os.cpu_count()}
    for name, limit in (("one", "1"), ("default", None)):
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
        if limit:
            env.update({k: limit for k in THREAD_VARIABLES})
        cmd = [sys.executable, os.path.abspath(__file__), "--threads-worker"]
        text = subprocess.run(cmd + (["--quick"] if quick else []), check=True, env=env,
                              capture_output=True, text=True, preexec_fn=_every_cpu).stdout
        out[name] = json.loads(text.strip().splitlines()[-1])
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--peak-memory-worker", choices=["numpy", "eager", "jit"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--threads-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peak_memory_worker:
        print(peak_memory_worker(args.peak_memory_worker, args.quick))
        return None
    if args.threads_worker:
        import json
        print(json.dumps(threads_worker(args.quick)))
        return None
    rng = np.random.default_rng(0)
    sizes = [(8, 16)] if args.quick else [(256, 512), (8, 16)]
    mlp = [bench_mlp(b, w, rng) for b, w in sizes]
    ch = bench_chain()
    indexing = [bench_indexing(n) for n in ([10] if args.quick else [10, 10000])]
    peak = bench_peak_memory(args.quick)
    threads = bench_threads(args.quick)
    print(table([[f"{r['batch']}x{r['width']}", r["numpy_s"] * 1e3, r["eager_s"] * 1e3,
                  r["eager_ratio"], r["jit_s"] * 1e3, r["jit_ratio"],
                  r["jit_without_numexpr_ratio"], r["fused_chains"]] for r in mlp],
                ["MLP batch x width", "numpy ms", "eager ms", "eager/numpy", "jit ms", "jit/numpy",
                 "jit/numpy without numexpr", "fused chains"]))
    print()
    print(table([[ch["ops"], ch["numpy_us_per_op"], ch["eager_us_per_op"], ch["jit_us_per_op"]]],
                ["chain ops", "numpy us/op", "eager grad us/op", "jit grad us/op"]))
    print()
    print(table([[r["n"], r["numpy_s"] * 1e6, r["eager_s"] * 1e6, r["eager_ratio"],
                  r["jit_s"] * 1e6, r["jit_ratio"]] for r in indexing],
                ["Rosenbrock n", "numpy us", "eager us", "eager/numpy", "jit us", "jit/numpy"]))
    print()
    print(table([[f"{peak['batch']}x{peak['width']}", peak["calls"], peak["activation_mib"],
                  peak["numpy_mib"], peak["eager_mib"], peak["jit_mib"]]],
                ["peak memory: MLP batch x width", "calls", "one activation MiB",
                 "numpy MiB", "eager MiB", "jit MiB"]))
    print()
    print(table([[f"{r['batch']}x{r['width']}", name, r["numexpr_threads"], r["numpy_s"] * 1e3,
                  r["jit_s"] * 1e3, r["jit_ratio"], r["jit_without_numexpr_ratio"]]
                 for name, r in (("one", threads["one"]), ("default", threads["default"]))],
                ["jit MLP batch x width", "threads", "numexpr threads", "numpy ms", "jit ms",
                 "jit/numpy", "jit/numpy without numexpr"]))
    results = {"mlp": mlp, "chain": ch, "indexing": indexing, "peak_memory": peak,
               "threads": threads}
    if not args.quick:
        print("wrote", write_results("reverse", results))
    return results


def summary(result: dict) -> list[tuple[str, str, str]]:
    """The headline rows, against the targets of the speed work."""
    rows = []
    for r in result["mlp"]:
        size = f"{r['batch']}x{r['width']}"
        rows.append((f"MLP {size} eager value_and_grad / numpy", f"{r['eager_ratio']:.2f}",
                     "<= 6" if r["width"] <= 16 else "-"))
        rows.append((f"MLP {size} jit value_and_grad / numpy", f"{r['jit_ratio']:.2f}",
                     "<= 1; at most jax.jit's time on one core" if r["width"] > 16
                     else "-"))
        rows.append((f"MLP {size} jit without numexpr / numpy",
                     f"{r['jit_without_numexpr_ratio']:.2f}", "-"))
    chain = result["chain"]
    rows.append(("scalar chain eager grad us/op", f"{chain['eager_us_per_op']:.2f} "
                 f"({chain['eager_us_per_op'] / chain['numpy_us_per_op']:.1f}x numpy's)",
                 "<= 2.2"))
    for r in result.get("indexing", ()):
        rows.append((f"Rosenbrock n={r['n']} (slices) eager value_and_grad / numpy",
                     f"{r['eager_ratio']:.2f} (jit {r['jit_ratio']:.2f})", "-"))
    threads = result.get("threads")
    if threads:
        for name in ("one", "default"):
            r = threads[name]
            rows.append((f"MLP {r['batch']}x{r['width']} jit / numpy, {name} thread(s) "
                         f"(numexpr {r['numexpr_threads']})",
                         f"{r['jit_ratio']:.2f} (without numexpr "
                         f"{r['jit_without_numexpr_ratio']:.2f})",
                         "jit uses every core" if name == "default" else "-"))
    return rows


if __name__ == "__main__":
    main()
