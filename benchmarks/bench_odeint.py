"""funcdiff.scipy.integrate.odeint: the adjoint gradient against differentiating the solver's steps.

Workload: a small neural ODE, ``dy/dt = tanh(w @ y + b) - y / 2`` with ``y`` of
``n`` components, solved over ``[0, T]`` with 9 output times; the loss is the
sum of squares of the outputs and the gradient is taken in ``y0``, ``w`` and
``b``. Compared, for growing ``T`` (so a growing number of steps):

- ``adjoint``: ``fd.grad`` of ``odeint`` (its custom_vjp integrates the adjoint
  system backwards; memory should not grow with the steps);
- ``through_steps``: ``fd.grad`` of the same Dormand–Prince 5(4) solver without
  the rule (its while loops are recorded step by step and differentiated as
  scans: the same steps, every residual kept);
- ``rk4_scan``: ``fd.grad`` of a fixed-step RK4 ``lax.scan`` with enough steps
  to be as accurate as odeint at its tolerance.

Reported: seconds per gradient, peak memory of one gradient (tracemalloc),
the number of steps, and each gradient's largest relative difference from the
adjoint's.

Run: ``python benchmarks/bench_odeint.py [--quick]``; writes
``benchmarks/results/odeint.json``.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_time, peak_bytes, quick_main, table  # noqa: E402

import funcdiff as fd  # noqa: E402
import funcdiff.numpy as fnp  # noqa: E402
from funcdiff.scipy import _dopri  # noqa: E402  (the same integrator, without the adjoint rule)
from funcdiff.scipy.integrate import odeint  # noqa: E402

TOL = 1e-8


def field(y, t, w, b):
    return fnp.tanh(w @ y + b) - 0.5 * y


def adjoint_loss(y0, w, b, t):
    return fnp.sum(odeint(field, y0, t, w, b, rtol=TOL, atol=TOL) ** 2)


def through_steps_loss(y0, w, b, t):
    settings = _dopri.Settings(TOL, TOL, np.inf, np.inf)
    ys, _, _ = _dopri.solve(lambda y, s: field(y, s, w, b), y0, t, settings)
    return fnp.sum(ys ** 2)


def rk4_loss(y0, w, b, t, per_interval):
    def step(y, h):
        k1 = field(y, 0.0, w, b)
        k2 = field(y + 0.5 * h * k1, 0.0, w, b)
        k3 = field(y + 0.5 * h * k2, 0.0, w, b)
        k4 = field(y + h * k3, 0.0, w, b)
        return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), None

    def interval(y, span):
        y, _ = fd.lax.scan(step, y, fnp.full(per_interval, span / per_interval))
        return y, y
    _, ys = fd.lax.scan(interval, y0, fnp.diff(t))
    return fnp.sum(y0 ** 2) + fnp.sum(ys ** 2)


def steps_taken(y0, w, b, t) -> int:
    settings = _dopri.Settings(TOL, TOL, np.inf, np.inf)
    _, _, steps = _dopri.solve(lambda y, s: field(y, s, w, b), y0, t, settings)
    return int(np.sum(steps))


def rk4_steps_for(y0, w, b, t, reference) -> int:
    """The fewest RK4 steps per interval (doubling) whose loss is as close to the
    tight solution's as odeint's."""
    target = abs(float(adjoint_loss(y0, w, b, t)) - reference)
    per_interval = 1
    while abs(float(rk4_loss(y0, w, b, t, per_interval)) - reference) > max(target, 1e-12) \
            and per_interval < 4096:
        per_interval *= 2
    return per_interval


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    n = 4 if quick else 16
    w = rng.standard_normal((n, n)) / np.sqrt(n)
    b = 0.1 * rng.standard_normal(n)
    y0 = rng.standard_normal(n)
    rows = []
    for horizon in ((1.0,) if quick else (2.0, 8.0, 32.0)):
        t = np.linspace(0.0, horizon, 9)
        reference = float(fnp.sum(odeint(field, y0, t, w, b, rtol=1e-12, atol=1e-12) ** 2))
        per_interval = rk4_steps_for(y0, w, b, t, reference)
        grads = {
            "adjoint": fd.grad(adjoint_loss, argnums=(0, 1, 2)),
            "through_steps": fd.grad(through_steps_loss, argnums=(0, 1, 2)),
            "rk4_scan": fd.grad(lambda *a: rk4_loss(*a, per_interval), argnums=(0, 1, 2)),
        }
        want = grads["adjoint"](y0, w, b, t)
        row = {"n": n, "T": horizon, "dopri_steps": steps_taken(y0, w, b, t),
               "rk4_steps": per_interval * (len(t) - 1)}
        for name, grad in grads.items():
            got = grad(y0, w, b, t)
            row[f"{name}_rel_diff"] = max(float(np.max(np.abs(g - e)) / np.max(np.abs(e)))
                                          for g, e in zip(got, want))
            row[f"{name}_s"] = best_time(lambda: grad(y0, w, b, t), repeat=3, min_time=0.01)
            row[f"{name}_peak_mb"] = peak_bytes(lambda: grad(y0, w, b, t), warm=False) / 1e6
        assert row["through_steps_rel_diff"] < 1e-4 and row["rk4_scan_rel_diff"] < 1e-3, row
        rows.append(row)
    header = ["T", "dopri_steps", "rk4_steps"] + [f"{m}_{k}" for m in grads
                                                  for k in ("s", "peak_mb")]
    print(table([[r[h] for h in header] for r in rows], header))
    return {"neural_ode_grad": rows}


def summary(result: dict) -> list[tuple[str, str, str]]:
    rows = []
    for r in result["neural_ode_grad"]:
        rows.append((f"T={r['T']:g} ({r['dopri_steps']} steps) adjoint s, peak MB",
                     f"{r['adjoint_s']:.3g}, {r['adjoint_peak_mb']:.3g}", "-"))
        rows.append((f"T={r['T']:g} through the steps s, peak MB",
                     f"{r['through_steps_s']:.3g}, {r['through_steps_peak_mb']:.3g}", "-"))
    return rows


def main(argv=None) -> dict:
    return quick_main("odeint", run, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
