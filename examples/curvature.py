"""Curvature without forming the Hessian: Hessian-vector products and Newton-CG.

On the n-dimensional Rosenbrock function this example
1. computes Hessian-vector products (``fd.hvp``: eager, the gradient of the
   directional derivative on the tape) and compares them with the finite-difference estimate
   ``(grad(x + h v) - grad(x - h v)) / 2h`` and with the full ``fd.hessian``;
2. finds the largest Hessian eigenvalue by power iteration on products alone;
3. minimises the function by Newton-CG: ``scipy.optimize.minimize`` with
   ``jac`` and ``hessp`` from funcdiff (when scipy is installed; otherwise a
   small truncated-Newton loop written here with the same two ingredients).

Run: ``python examples/curvature.py [n]``.
"""

from __future__ import annotations

import sys

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp


def rosenbrock(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


grad_f = fd.jit(fd.grad(rosenbrock))
hvp_f = fd.jit(lambda x, v: fd.hvp(rosenbrock, (x,), (v,)))


def top_eigenvalue(x: np.ndarray, iters: int = 200, seed: int = 0) -> float:
    """Largest Hessian eigenvalue at ``x`` by power iteration on Hessian-vector products."""
    u = np.random.default_rng(seed).standard_normal(x.shape)
    for _ in range(iters):
        w = hvp_f(x, u)
        u = w / np.linalg.norm(w)
    return float(u @ hvp_f(x, u))


def truncated_newton(x: np.ndarray, iters: int = 100, tol: float = 1e-8) -> tuple[np.ndarray, int]:
    """Newton's method with the step solved by conjugate gradients on Hessian-vector
    products (stopping at negative curvature) and a backtracking line search."""
    for it in range(iters):
        g = grad_f(x)
        if np.linalg.norm(g) < tol:
            return x, it
        p, r = np.zeros_like(x), -g
        d = r.copy()
        for _ in range(2 * len(x)):
            hd = hvp_f(x, d)
            curv = d @ hd
            if curv <= 0:
                p = p if p.any() else -g
                break
            alpha = (r @ r) / curv
            p, r_new = p + alpha * d, r - alpha * hd
            if np.linalg.norm(r_new) < 0.1 * min(1.0, np.linalg.norm(g)) * np.linalg.norm(g):
                break
            d, r = r_new + (r_new @ r_new) / (r @ r) * d, r_new
        t, f0 = 1.0, rosenbrock(x)
        while rosenbrock(x + t * p) > f0 + 1e-4 * t * (g @ p) and t > 1e-10:
            t *= 0.5
        x = x + t * p
    return x, iters


def main(n: int = 10, use_scipy: bool = True, verbose: bool = True) -> dict:
    """Run the three parts; return the hvp errors, eigenvalues and the minimiser found.

    ``use_scipy=False`` runs the truncated-Newton loop written here even when
    scipy is installed."""
    say = print if verbose else (lambda *_: None)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.5, 1.5, n)
    v = rng.standard_normal(n)

    say(f"1. Hessian-vector products of the {n}-dimensional Rosenbrock function")
    hv = hvp_f(x, v)
    H = fd.hessian(rosenbrock)(x)
    err_hessian = float(np.max(np.abs(hv - H @ v)))
    say(f"   |hvp - hessian @ v|_max = {err_hessian:.1e}   (exact: both are funcdiff derivatives)")
    fd_errors = {}
    for h in (1e-2, 1e-4, 1e-6):
        estimate = (grad_f(x + h * v) - grad_f(x - h * v)) / (2 * h)
        fd_errors[h] = float(np.max(np.abs(estimate - hv)) / np.max(np.abs(hv)))
        say(f"   finite-difference estimate, h = {h:.0e}: relative error {fd_errors[h]:.1e}")

    say("2. Top Hessian eigenvalue")
    lam_power = top_eigenvalue(x)
    lam_exact = float(np.linalg.eigvalsh(H)[-1])
    say(f"   power iteration on hvp: {lam_power:.6f}   numpy.linalg.eigvalsh: {lam_exact:.6f}")

    say("3. Newton-CG from x0 = 0 (the minimum is at x = 1)")
    x0 = np.zeros(n)
    minimize = None
    if use_scipy:
        try:
            from scipy.optimize import minimize
        except ImportError:
            pass
    if minimize is not None:
        res = minimize(lambda z: float(rosenbrock(z)), x0, jac=grad_f, hessp=hvp_f,
                       method="Newton-CG", options={"xtol": 1e-10})
        x_min, iters, how = res.x, res.nit, "scipy.optimize.minimize(method='Newton-CG')"
    else:
        x_min, iters = truncated_newton(x0)
        how = "truncated Newton written here" + ("" if not use_scipy else " (no scipy)")
    err_min = float(np.max(np.abs(x_min - 1.0)))
    say(f"   {how}: {iters} iterations, f = {rosenbrock(x_min):.2e}, "
        f"max |x - 1| = {err_min:.1e}")
    return {"hvp_vs_hessian": err_hessian, "fd_errors": fd_errors, "lambda_power": lam_power,
            "lambda_exact": lam_exact, "x_min": x_min, "iterations": iters}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
