"""The floating-point checks: what debug_nans costs when on, and that it costs nothing off.

Workloads (the forms the checks treat differently): the 200-operation scalar
chain's eager gradient, the small MLP's eager value_and_grad, the 256 x 512
MLP's jit(value_and_grad), and the eager and jitted gradient of a 200-step
lax.scan. Each is timed with ``fd.config.debug_nans`` off and on, reported as
microseconds per call and the on/off ratio.

"Nothing slows down when off" is a comparison with code that has no checks at
all: ``--baseline REV`` times the off column on the commit ``REV`` (in a
temporary git worktree; default: the commit before debug_nans landed,
``d4add57~1``) and on this checkout, each in a fresh process, alternating for
``--rounds`` rounds and keeping each side's best, so a busy moment of the
machine does not land on one side only; it reports off / baseline per row.
(The baseline is older than other work too, so the ratio bounds what the
checks cost when off.) Workloads the baseline cannot run are left out.

Run: ``python benchmarks/bench_debug.py [--quick] [--baseline REV]``; writes
``benchmarks/results/debug.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import funcdiff as fd  # noqa: E402
import funcdiff.numpy as fnp  # noqa: E402
from common import best_time, table, write_results  # noqa: E402

import bench_reverse as br  # noqa: E402

BASELINE = "d4add57~1"  # the parent of the commit that added fd.config.debug_nans


def _scan_loss(x):
    def body(c, xi):
        return c * 0.99 + fnp.sin(xi * c + 0.5), c
    return fd.lax.scan(body, 0.1, x)[0]


def workloads(quick: bool) -> dict:
    """name -> zero-argument callable, each computing one derivative."""
    rng = np.random.default_rng(0)
    x = np.float64(0.3)
    small = br.init_mlp(rng, 16, 16, 10)
    xs, ys = rng.standard_normal((8, 16)), rng.integers(0, 10, 8)
    batch, width = (16, 32) if quick else (256, 512)
    big = br.init_mlp(rng, width, width, 10)
    xb, yb = rng.standard_normal((batch, width)), rng.integers(0, 10, batch)
    seq = rng.standard_normal(20 if quick else 200)
    chain_grad = fd.grad(br.chain)
    small_vg = fd.value_and_grad(br.mlp_loss)
    big_vg = fd.jit(fd.value_and_grad(br.mlp_loss))
    scan_grad, scan_jit = fd.grad(_scan_loss), fd.jit(fd.grad(_scan_loss))
    return {
        "scalar chain eager grad": lambda: chain_grad(x),
        "MLP 8x16 eager value_and_grad": lambda: small_vg(small, xs, ys),
        f"MLP {batch}x{width} jit value_and_grad": lambda: big_vg(big, xb, yb),
        "scan eager grad": lambda: scan_grad(seq),
        "scan jit grad": lambda: scan_jit(seq),
    }


def time_all(quick: bool, checks: bool) -> dict:
    out = {}
    for name, fn in workloads(quick).items():
        if checks:
            with fd.debug_nans():
                out[name] = best_time(fn)
        else:
            out[name] = best_time(fn)
    return out


def off_times_in_a_process(root: str, quick: bool) -> dict:
    """The off column of the funcdiff at ``root``, timed in a fresh process."""
    code = ("import sys, json; sys.path.insert(0, %r); sys.path.insert(0, %r); "
            "import funcdiff; import bench_debug as b; print(json.dumps(b.time_each(%r)))"
            % (root, HERE, quick))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root), cwd=tempfile.gettempdir())
    if run.returncode != 0:
        print(f"timing {root}: failed ({run.stderr.strip().splitlines()[-1:]})")
        return {}
    return json.loads(run.stdout.strip().splitlines()[-1])


def baseline_times(rev: str, quick: bool, rounds: int) -> tuple[dict, dict]:
    """(this checkout's off column, commit ``rev``'s), best of ``rounds`` alternating
    fresh processes; ({}, {}) when the commit cannot be checked out."""
    root = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "baseline")
        made = subprocess.run(["git", "-C", root, "worktree", "add", "--detach", tree, rev],
                              capture_output=True, text=True)
        if made.returncode != 0:
            print(f"baseline {rev}: cannot check out ({made.stderr.strip()})")
            return {}, {}
        try:
            here, there = {}, {}
            for _ in range(rounds):
                for best, where in ((here, root), (there, tree)):
                    for name, s in off_times_in_a_process(where, quick).items():
                        best[name] = min(s, best.get(name, s))
            return here, there
        finally:
            subprocess.run(["git", "-C", root, "worktree", "remove", "--force", tree],
                           capture_output=True)


def time_each(quick: bool) -> dict:
    """The off column, workload by workload, leaving out what this funcdiff cannot run
    (a baseline commit older than one of the APIs)."""
    out = {}
    try:
        loads = workloads(quick)
    except Exception:  # noqa: BLE001  an old commit without lax.scan, say
        return out
    for name, fn in loads.items():
        try:
            out[name] = best_time(fn)
        except Exception:  # noqa: BLE001
            pass
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--baseline", default=None if "--quick" in (argv or []) else BASELINE,
                        help="a commit without the checks to compare the off column with")
    parser.add_argument("--no-baseline", action="store_true", help="skip the baseline run")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating baseline/checkout processes (best of)")
    args = parser.parse_args(argv)
    off = time_all(args.quick, checks=False)
    on = time_all(args.quick, checks=True)
    here, base = (({}, {}) if args.no_baseline or not args.baseline
                  else baseline_times(args.baseline, args.quick, args.rounds))
    rows = []
    for name in off:
        row = {"workload": name, "off_us": off[name] * 1e6, "on_us": on[name] * 1e6,
               "on_over_off": on[name] / off[name]}
        if name in base and name in here:
            row["off_fresh_process_us"] = here[name] * 1e6
            row["baseline_us"] = base[name] * 1e6
            row["off_over_baseline"] = here[name] / base[name]
        rows.append(row)
    print(table([[r["workload"], r["off_us"], r["on_us"], r["on_over_off"],
                  r.get("off_fresh_process_us", "-"), r.get("baseline_us", "-"),
                  r.get("off_over_baseline", "-")] for r in rows],
                ["workload", "off us", "on us", "on/off", "off us (own process)",
                 "baseline us", "off/baseline"]))
    result = {"rows": rows, "baseline": args.baseline if base else None}
    if not args.quick:
        print("wrote", write_results("debug", result))
    return result


def summary(result: dict) -> list[tuple[str, str, str]]:
    """The headline rows: the checks off against the baseline without them."""
    rows = []
    for r in result["rows"]:
        if "off_over_baseline" in r:
            rows.append((f"{r['workload']}: debug_nans off / no checks",
                         f"{r['off_over_baseline']:.2f}", "~1"))
        rows.append((f"{r['workload']}: debug_nans on / off", f"{r['on_over_off']:.2f}", "-"))
    return rows


if __name__ == "__main__":
    main()
