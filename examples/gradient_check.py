"""Checking derivatives: check_grads, and why finite differences need the right step.

1. ``fd.test_util.check_grads`` checks a user-defined function to second order
   in both modes against central finite differences (and the two modes against
   each other through <u, J v> = <J^T u, v>).
2. The same check applied to a gradient derived by hand, with a typical slip,
   catches it.
3. The step-size sweep: the error of a finite-difference derivative against
   funcdiff's exact one, as the step h shrinks. Truncation error falls like h
   (forward difference) or h^2 (central) until round-off, about eps/h with
   eps = 2.2e-16, takes over; the best steps are near sqrt(eps) = 1.5e-8 and
   eps^(1/3) = 6e-6. Automatic differentiation has neither error.

Run: ``python examples/gradient_check.py``.
"""

from __future__ import annotations

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.test_util import GradientCheckError, check_grads


def energy(x, w):
    """A small user-defined function of a vector ``x`` and a matrix ``w``."""
    z = fnp.tanh(w @ x)
    return fnp.sum(fnp.exp(-z ** 2) * fnp.sin(x)) + 0.5 * fnp.sum(x ** 2) * fnp.log1p(w[0, 0] ** 2)


def energy_grad_by_hand(x, w, slip=True):
    """dE/dx worked out on paper; ``slip=True`` forgets the chain rule through tanh."""
    z = np.tanh(w @ x)
    dz = -2 * z * np.exp(-z ** 2) * np.sin(x)
    if not slip:
        dz = dz * (1 - z ** 2)
    return np.exp(-z ** 2) * np.cos(x) + w.T @ dz + x * np.log1p(w[0, 0] ** 2)


def step_size_sweep(f, x: float, steps: np.ndarray) -> dict:
    """Errors of forward and central differences of scalar ``f`` at ``x`` for each step."""
    exact = float(fd.grad(f)(x))
    fwd = np.array([abs((f(x + h) - f(x)) / h - exact) for h in steps])
    central = np.array([abs((f(x + h) - f(x - h)) / (2 * h) - exact) for h in steps])
    return {"exact": exact, "steps": steps, "forward": fwd, "central": central}


def _bar(err: float) -> str:
    """A bar whose length grows with log10 of the error (one mark per decade above 1e-16)."""
    return "#" * max(0, int(round(16 + np.log10(max(err, 1e-16)))))


def main(points: int = 25, verbose: bool = True) -> dict:
    """Run the three parts; return the sweep and the outcome of each check."""
    say = print if verbose else (lambda *_: None)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(4), rng.standard_normal((4, 4))

    say("1. check_grads(energy, (x, w), order=2, modes=('fwd', 'rev'))")
    check_grads(energy, (x, w), order=2, modes=("fwd", "rev"))
    say("   passed: first and second derivatives in both modes agree with finite differences")

    say("2. a gradient derived by hand, compared with funcdiff's")
    exact = fd.grad(energy)(x, w)
    hand_ok = bool(np.allclose(energy_grad_by_hand(x, w, slip=False), exact, rtol=1e-12, atol=0))
    hand_slip = float(np.max(np.abs(energy_grad_by_hand(x, w, slip=True) - exact)))
    say(f"   correct derivation matches: {hand_ok}; with the slip the gradient is off by "
        f"up to {hand_slip:.2f}")
    try:  # check_grads catches a wrong derivative too: here f = stop_gradient(x) * x
        check_grads(lambda z: fd.stop_gradient(z) * z, (x,), order=1, modes=("rev",))
        caught = False
    except GradientCheckError as e:
        caught = True
        head, _, detail = str(e).partition(": ")
        say(f"   check_grads on stop_gradient(x) * x (derivative deliberately cut) raises\n"
            f"     GradientCheckError: {head}:\n     {detail}")

    say("3. finite-difference error against the exact derivative of "
        "f(t) = exp(sin t) / (1 + t^2) at t = 0.7")
    sweep = step_size_sweep(lambda t: fnp.exp(fnp.sin(t)) / (1.0 + t ** 2), 0.7,
                            np.logspace(-1, -13, points))
    say(f"   exact derivative (funcdiff) = {sweep['exact']:.15f}")
    say(f"   {'h':>8s}  {'forward error':>13s}  {'central error':>13s}   central, log scale")
    for h, ef, ec in zip(sweep["steps"], sweep["forward"], sweep["central"]):
        say(f"   {h:8.1e}  {ef:13.2e}  {ec:13.2e}   {_bar(ec)}")
    best_fwd = float(sweep["steps"][np.argmin(sweep["forward"])])
    best_central = float(sweep["steps"][np.argmin(sweep["central"])])
    say(f"   best step: forward {best_fwd:.0e} (theory ~1.5e-8), "
        f"central {best_central:.0e} (theory ~6e-6)")
    return {"sweep": sweep, "best_forward_step": best_fwd, "best_central_step": best_central,
            "hand_ok": hand_ok, "hand_slip": hand_slip, "caught": caught}


if __name__ == "__main__":
    main()
