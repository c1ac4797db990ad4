"""Forward versus reverse mode on tall and wide Jacobians, against hand-written numpy.

The study users run when choosing a mode. f: R^n -> R^m is three dense tanh
layers, widths n -> hidden -> hidden -> m, so that the two ways of multiplying
out its Jacobian J = D3 W3 D2 W2 D1 W1 (D = diagonal of tanh') really differ:
forward (right to left) costs about hidden^2 n + m hidden n flops, reverse
(left to right) about m hidden^2 + m hidden n. For each (n, m) from tall
(10, 1000) to wide (1000, 10) it times

- ``fd.jacfwd`` (one batched jvp over the n input basis vectors),
- ``fd.jacrev`` (one batched vjp over the m output basis vectors),
- ``fd.jacobian`` (mode="auto": forward when n <= m) and which mode it picked,
- the same two modes under ``fd.jit``,
- the chain product written by hand in numpy in both association orders: the
  physical limit for a numpy library,

and reports the fwd/rev ratio per shape, where it crosses 1, and the faster
funcdiff mode against the faster hand-written order (target: within 1.2x).
It also times ``fd.hessian`` of f(x) = sum(tanh(A x)) + sum(cos x) at n = 50
against its closed form A^T diag(-2 t (1 - t^2)) A - diag(cos x), t = tanh(A x)
(target: under 1 ms eager).

Results go to ``benchmarks/results/fwd_rev.json`` and, when matplotlib is
installed, ``benchmarks/results/fwd_rev.png``. When jax, torch or autograd are
installed, ``compare()`` (called by ``benchmarks/run.py``) times the same
workloads with them.

Run: ``python benchmarks/bench_fwd_rev.py [--quick] [--no-plot]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import funcdiff as fd  # noqa: E402
import funcdiff.numpy as fnp  # noqa: E402
from common import RESULTS_DIR, best_time, table, write_results  # noqa: E402

SHAPES = [(10, 1000), (100, 1000), (300, 300), (1000, 100), (1000, 10)]
HIDDEN = 300
TIE = 0.02  # jacfwd and jacrev within 2%: equal within the timing noise
QUICK_SHAPES = [(4, 40), (20, 20), (40, 4)]
QUICK_HIDDEN = 16

# ---------------------------------------------------------------------------
# The function and its Jacobian by hand


def make_problem(n: int, m: int, hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = [n, hidden, hidden, m]
    weights = [rng.standard_normal((b, a)) / np.sqrt(a) for a, b in zip(sizes[:-1], sizes[1:])]
    return rng.standard_normal(n), weights


def mlp(x, weights):
    """f(x) = tanh(W3 tanh(W2 tanh(W1 x)))."""
    for w in weights:
        x = fnp.tanh(w @ x)
    return x


def _tanh_derivatives(x, weights):
    ds = []
    for w in weights:
        x = np.tanh(w @ x)
        ds.append(1.0 - x * x)
    return ds


def numpy_jacobian_forward_order(x, weights):
    """J = D3 W3 (D2 W2 (D1 W1)): right to left, carrying an (hidden, n) block."""
    ds = _tanh_derivatives(x, weights)
    jac = ds[0][:, None] * weights[0]
    for w, d in zip(weights[1:], ds[1:]):
        jac = d[:, None] * (w @ jac)
    return jac


def numpy_jacobian_reverse_order(x, weights):
    """J = ((D3 W3) D2 W2) D1 W1: left to right, carrying an (m, hidden) block."""
    ds = _tanh_derivatives(x, weights)
    jac = ds[-1][:, None] * weights[-1]
    for w, d in zip(weights[-2::-1], ds[-2::-1]):
        jac = (jac * d[None, :]) @ w
    return jac


# ---------------------------------------------------------------------------
# The study


def bench_shape(n: int, m: int, hidden: int, min_time: float) -> dict:
    x, weights = make_problem(n, m, hidden)
    jac_fwd, jac_rev = fd.jacfwd(mlp), fd.jacrev(mlp)
    jac_auto = fd.jacobian(mlp)
    jit_fwd, jit_rev = fd.jit(jac_fwd), fd.jit(jac_rev)
    reference = numpy_jacobian_forward_order(x, weights)
    for name, fn in [("numpy reverse order", numpy_jacobian_reverse_order), ("jacfwd", jac_fwd),
                     ("jacrev", jac_rev), ("jacobian", jac_auto), ("jit(jacfwd)", jit_fwd),
                     ("jit(jacrev)", jit_rev)]:
        got = fn(x, weights)
        if not np.allclose(got, reference, rtol=1e-9, atol=1e-12):
            raise AssertionError(f"{name} disagrees with the hand-written Jacobian at {(n, m)}")

    t = interleaved_best_times({
        "numpy_fwd_order_s": numpy_jacobian_forward_order,
        "numpy_rev_order_s": numpy_jacobian_reverse_order,
        "jacfwd_s": jac_fwd, "jacrev_s": jac_rev, "auto_s": jac_auto,
        "jit_jacfwd_s": jit_fwd, "jit_jacrev_s": jit_rev}, (x, weights), min_time)
    r = {"n": n, "m": m, "hidden": hidden, **t, "auto_mode": jac_auto.last_mode}
    numpy_best = min(r["numpy_fwd_order_s"], r["numpy_rev_order_s"])
    r["fwd_rev_ratio"] = r["jacfwd_s"] / r["jacrev_s"]
    r["faster_mode"] = "fwd" if r["jacfwd_s"] < r["jacrev_s"] else "rev"
    # Within TIE of each other the two modes cost the same (n = m: the same
    # products in either order) and either pick is right; the table says "tie".
    r["modes_tie"] = abs(r["fwd_rev_ratio"] - 1.0) <= TIE
    r["auto_picked_faster"] = r["auto_mode"] == r["faster_mode"] or r["modes_tie"]
    r["best_vs_numpy"] = min(r["jacfwd_s"], r["jacrev_s"]) / numpy_best
    r["jit_best_vs_numpy"] = min(r["jit_jacfwd_s"], r["jit_jacrev_s"]) / numpy_best
    return r


def interleaved_best_times(fns: dict, args: tuple, min_time: float, rounds: int = 5) -> dict:
    """The fastest single call of each function, timed round-robin.

    Every round runs each function for about ``min_time``, timing each call on
    its own, so a burst of load from elsewhere on the machine slows some calls
    of one method rather than all calls of it, and the minimum is the time a
    call takes when it runs undisturbed.
    """
    numbers, best = {}, {}
    for name, fn in fns.items():
        fn(*args)  # warm up (jit traces, BLAS threads)
        t0 = time.perf_counter()
        fn(*args)
        once = time.perf_counter() - t0
        numbers[name] = max(1, min(1 << 14, int(min_time / max(once, 1e-7))))
        best[name] = once
    for _ in range(rounds):
        for name, fn in fns.items():
            b = best[name]
            for _ in range(numbers[name]):
                t0 = time.perf_counter()
                fn(*args)
                b = min(b, time.perf_counter() - t0)
            best[name] = b
    return best


def crossover(rows: list[dict]) -> float | None:
    """The n/m at which jacfwd and jacrev take equal time, interpolating log(ratio)
    linearly in log(n/m) between the two shapes where it changes sign."""
    pts = sorted((r["n"] / r["m"], math.log(r["fwd_rev_ratio"])) for r in rows)
    for (a, la), (b, lb) in zip(pts, pts[1:]):
        if la <= 0 < lb or la >= 0 > lb:
            t = la / (la - lb)
            return float(math.exp(math.log(a) + t * (math.log(b) - math.log(a))))
    return None


def hessian_f(x, A):
    return fnp.sum(fnp.tanh(A @ x)) + fnp.sum(fnp.cos(x))


def hessian_closed_form(x, A):
    t = np.tanh(A @ x)
    return (A.T * (-2.0 * t * (1.0 - t * t))) @ A - np.diag(np.cos(x))


def bench_hessian(n: int, min_time: float) -> dict:
    rng = np.random.default_rng(1)
    A, x = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)
    eager, compiled = fd.hessian(hessian_f), fd.jit(fd.hessian(hessian_f))
    np.testing.assert_allclose(eager(x, A), hessian_closed_form(x, A), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(compiled(x, A), hessian_closed_form(x, A), rtol=1e-10, atol=1e-12)
    r = {"n": n, **interleaved_best_times({"closed_form_s": hessian_closed_form,
                                           "eager_s": eager, "jit_s": compiled}, (x, A), min_time)}
    r["eager_vs_closed_form"] = r["eager_s"] / r["closed_form_s"]
    r["jit_vs_closed_form"] = r["jit_s"] / r["closed_form_s"]
    return r


# ---------------------------------------------------------------------------
# Other libraries (used by benchmarks/run.py when they are installed)


def _other_jacobians(lib: str):
    """(make_inputs, {mode: jacobian function}, hessian function) for ``lib``,
    each taking the numpy problem and returning a callable to time."""
    if lib == "jax":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)

        def f(x, ws):
            for w in ws:
                x = jnp.tanh(w @ x)
            return x
        jacs = {"fwd": jax.jit(jax.jacfwd(f)), "rev": jax.jit(jax.jacrev(f))}
        hess = jax.jit(jax.hessian(lambda x, A: jnp.sum(jnp.tanh(A @ x)) + jnp.sum(jnp.cos(x))))

        def convert(*arrays):
            return [jax.device_put(a) if isinstance(a, np.ndarray)
                    else [jax.device_put(b) for b in a] for a in arrays]

        def run(fn, *args):
            return fn(*args).block_until_ready()
        return convert, jacs, hess, run
    if lib == "torch":
        import torch
        import torch.func as tf
        torch.set_default_dtype(torch.float64)

        def f(x, ws):
            for w in ws:
                x = torch.tanh(w @ x)
            return x
        jacs = {"fwd": tf.jacfwd(f), "rev": tf.jacrev(f)}
        hess = tf.hessian(lambda x, A: torch.tanh(A @ x).sum() + torch.cos(x).sum())

        def convert(*arrays):
            return [torch.from_numpy(a) if isinstance(a, np.ndarray)
                    else [torch.from_numpy(b) for b in a] for a in arrays]
        return convert, jacs, hess, lambda fn, *args: fn(*args)
    if lib == "autograd":
        import autograd
        import autograd.numpy as anp

        def f(x, ws):
            for w in ws:
                x = anp.tanh(anp.dot(w, x))
            return x
        # autograd's jacobian is reverse mode only
        jacs = {"rev": autograd.jacobian(f)}
        hess = autograd.hessian(lambda x, A: anp.sum(anp.tanh(anp.dot(A, x))) + anp.sum(anp.cos(x)))
        return (lambda *arrays: list(arrays)), jacs, hess, lambda fn, *args: fn(*args)
    raise ValueError(f"unknown library {lib!r}")


def compare(result: dict, libs: list[str], quick: bool = False) -> list[dict]:
    """Time the same Jacobians and Hessian with each library in ``libs``.

    Returns rows ``{"workload", "library", "seconds", "funcdiff_seconds",
    "funcdiff_variant", "ratio"}`` where ratio = library time / funcdiff time
    (above 1: funcdiff is faster). jax runs under jax.jit and is compared with
    funcdiff under fd.jit; torch.func and autograd run eagerly and are compared
    with eager funcdiff.
    """
    min_time = 0.005 if quick else 0.05
    rows = []
    for lib in libs:
        convert, jacs, hess, run = _other_jacobians(lib)
        variant = "jit" if lib == "jax" else "eager"
        prefix = "jit_" if variant == "jit" else ""
        for r in result["shapes"]:
            x, weights = make_problem(r["n"], r["m"], r["hidden"])
            args = convert(x, weights)
            for mode, fn in jacs.items():
                got = np.asarray(run(fn, *args))
                np.testing.assert_allclose(got, numpy_jacobian_forward_order(x, weights),
                                           rtol=1e-8, atol=1e-10)
                t = best_time(lambda: run(fn, *args), min_time=min_time)
                ours = r[f"{prefix}jac{mode}_s"]
                rows.append({"workload": f"jac{mode} {r['n']}x{r['m']}", "library": lib,
                             "seconds": t, "funcdiff_seconds": ours,
                             "funcdiff_variant": variant, "ratio": t / ours})
        h = result["hessian"]
        rng = np.random.default_rng(1)
        A, x = rng.standard_normal((h["n"], h["n"])) / np.sqrt(h["n"]), rng.standard_normal(h["n"])
        args = convert(x, A)
        np.testing.assert_allclose(np.asarray(run(hess, *args)), hessian_closed_form(x, A),
                                   rtol=1e-8, atol=1e-10)
        t = best_time(lambda: run(hess, *args), min_time=min_time)
        ours = h[f"{variant}_s"]
        rows.append({"workload": f"hessian n={h['n']}", "library": lib, "seconds": t,
                     "funcdiff_seconds": ours, "funcdiff_variant": variant, "ratio": t / ours})
    return rows


# ---------------------------------------------------------------------------
# Report


def summary(result: dict) -> list[tuple[str, str, str]]:
    """The headline numbers as (metric, value, target) rows for benchmarks/run.py."""
    rows = result["shapes"]
    worst = max(rows, key=lambda r: r["best_vs_numpy"])
    cross = result["crossover_n_over_m"]
    return [
        ("faster of jacfwd/jacrev vs faster numpy order (worst shape)",
         f"{worst['best_vs_numpy']:.2f}x at {worst['n']}x{worst['m']}", "<= 1.2x"),
        ("jacobian(auto) picks the faster mode",
         f"{sum(r['auto_picked_faster'] for r in rows)}/{len(rows)} shapes", "all"),
        ("fwd/rev crossover at n/m", "none" if cross is None else f"{cross:.2g}", "about 1"),
        (f"hessian n={result['hessian']['n']} eager",
         f"{result['hessian']['eager_s'] * 1e3:.2f} ms "
         f"({result['hessian']['eager_vs_closed_form']:.0f}x closed form)", "< 1 ms"),
        (f"hessian n={result['hessian']['n']} jit",
         f"{result['hessian']['jit_s'] * 1e6:.0f} us", "< 70 us"),
    ]


def report(result: dict) -> str:
    ms = 1e3
    lines = [table([[f"{r['n']} x {r['m']}", r["numpy_fwd_order_s"] * ms,
                     r["numpy_rev_order_s"] * ms,
                     r["jacfwd_s"] * ms, r["jacrev_s"] * ms, r["fwd_rev_ratio"],
                     r["auto_mode"] + (" (tie)" if r.get("modes_tie") else
                                       "" if r["auto_picked_faster"] else " (slower)"),
                     r["best_vs_numpy"], r["jit_best_vs_numpy"]] for r in result["shapes"]],
                   ["n x m", "numpy fwd-order ms", "numpy rev-order ms", "jacfwd ms", "jacrev ms",
                    "fwd/rev", "auto picks", "best/numpy", "jit best/numpy"])]
    cross = result["crossover_n_over_m"]
    lines.append("crossover: " + ("jacfwd and jacrev never swap order on this grid" if cross is None
                                  else f"jacfwd and jacrev take equal time at n/m = {cross:.2g}"))
    h = result["hessian"]
    lines.append(f"hessian of sum(tanh(A x)) + sum(cos x), n = {h['n']}: eager "
                 f"{h['eager_s'] * 1e3:.3f} ms, jit {h['jit_s'] * 1e3:.3f} ms, "
                 f"closed form in numpy {h['closed_form_s'] * 1e3:.3f} ms")
    return "\n".join(lines)


def plot(result: dict, path: str) -> str | None:
    """Time against n/m for each method, log-log; None when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = sorted(result["shapes"], key=lambda r: r["n"] / r["m"])
    ratio = [r["n"] / r["m"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for key, label, style in [("jacfwd_s", "fd.jacfwd", "o-"), ("jacrev_s", "fd.jacrev", "s-"),
                              ("numpy_fwd_order_s", "numpy, forward order", "o:"),
                              ("numpy_rev_order_s", "numpy, reverse order", "s:")]:
        ax.loglog(ratio, [r[key] * 1e3 for r in rows], style, label=label)
    if result["crossover_n_over_m"]:
        ax.axvline(result["crossover_n_over_m"], color="gray", lw=0.8)
    ax.set_xlabel("n / m  (tall: n << m, wide: n >> m)")
    ax.set_ylabel("time per Jacobian (ms)")
    ax.set_title(f"Jacobian of R^n -> R^m, three tanh layers (hidden {rows[0]['hidden']})")
    ax.set_xticks(ratio, [f"{r['n']}x{r['m']}" for r in rows], fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes (smoke test); writes nothing")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG plot")
    args = parser.parse_args(argv)
    shapes, hidden = (QUICK_SHAPES, QUICK_HIDDEN) if args.quick else (SHAPES, HIDDEN)
    min_time = 0.002 if args.quick else 0.05
    rows = [bench_shape(n, m, hidden, min_time) for n, m in shapes]
    result = {"shapes": rows, "crossover_n_over_m": crossover(rows),
              "hessian": bench_hessian(10 if args.quick else 50, min_time),
              "conditions": {"load_average": os.getloadavg(),
                             "threads": {k: os.environ.get(k) for k in
                                         ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}}}
    print(report(result))
    if not args.quick:
        print("wrote", write_results("fwd_rev", result))
        if not args.no_plot:
            path = plot(result, os.path.join(RESULTS_DIR, "fwd_rev.png"))
            print("wrote", path) if path else print("matplotlib is not installed: no plot")
    return result


if __name__ == "__main__":
    main()
