"""A Newton root finder written with fd.lax.while_loop, differentiated end to end.

Kepler's equation ``E - e sin(E) = M`` gives the eccentric anomaly E of an
orbit with eccentricity e at mean anomaly M. It has no closed form, so E is
found by Newton's method, iterating until the step is below a tolerance: the
number of iterations depends on the data.

funcdiff differentiates straight through the loop. Eagerly the loop runs,
its iterations are recorded and reverse mode runs back over them; under jit
the backward pass reruns the loop. Both agree with the implicit-function
theorem, dE/dM = 1 / (1 - e cos E) and dE/de = sin E / (1 - e cos E), and
with finite differences. vmap solves many equations at once: members that
converge early are frozen while the others iterate.

Run: ``python examples/root_finder.py`` (about a second).
"""

from __future__ import annotations

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import lax


def solve_kepler(mean_anomaly, eccentricity, tol=1e-13, max_iter=50):
    """E with E - e sin(E) = M by Newton's method; also the iteration count."""
    def residual(E):
        return E - eccentricity * fnp.sin(E) - mean_anomaly

    def newton_step(state):
        E, _, k = state
        step = residual(E) / (1.0 - eccentricity * fnp.cos(E))
        return E - step, fnp.abs(step), k + 1

    def not_converged(state):
        _, last_step, k = state
        return (last_step > tol) & (k < max_iter)

    E0 = mean_anomaly + 0.0 * eccentricity  # a float carry even for integer-like input
    E, _, iterations = lax.while_loop(not_converged, newton_step, (E0, 1.0, 0))
    return E, iterations


def eccentric_anomaly(mean_anomaly, eccentricity):
    return solve_kepler(mean_anomaly, eccentricity)[0]


def main(n: int = 16) -> dict:
    M, e = 1.2, 0.6
    E, iterations = solve_kepler(M, e)
    print(f"Kepler's equation E - e sin E = M for M = {M}, e = {e}")
    print(f"  E = {float(E):.12f} after {int(iterations)} Newton steps "
          f"(residual {float(E - e * np.sin(E) - M):.1e})")

    dE_dM, dE_de = fd.grad(eccentric_anomaly, argnums=(0, 1))(M, e)
    denom = 1.0 - e * np.cos(E)
    implicit = (1.0 / denom, np.sin(E) / denom)
    eps = 1e-6
    fd_M = (eccentric_anomaly(M + eps, e) - eccentric_anomaly(M - eps, e)) / (2 * eps)
    fd_e = (eccentric_anomaly(M, e + eps) - eccentric_anomaly(M, e - eps)) / (2 * eps)
    err_implicit = max(abs(float(dE_dM) - implicit[0]), abs(float(dE_de) - implicit[1]))
    err_fd = max(abs(float(dE_dM) - fd_M), abs(float(dE_de) - fd_e))
    print(f"  grad through the loop: dE/dM = {float(dE_dM):.10f}, dE/de = {float(dE_de):.10f}")
    print(f"  implicit function:     dE/dM = {implicit[0]:.10f}, dE/de = {implicit[1]:.10f}")
    print(f"  max error vs implicit {err_implicit:.1e}, vs finite differences {err_fd:.1e}")

    jit_grad = fd.jit(fd.grad(eccentric_anomaly, argnums=(0, 1)))
    err_jit = max(abs(float(a) - float(b)) for a, b in zip(jit_grad(M, e), (dE_dM, dE_de)))
    print(f"  jit(grad) (the backward pass reruns the loop) agrees to {err_jit:.1e}")

    # many equations at once: each member stops iterating when it converges
    Ms = np.linspace(0.1, 3.0, n)
    Es, counts = fd.vmap(solve_kepler, in_axes=(0, None))(Ms, 0.9)
    grads = fd.vmap(fd.grad(eccentric_anomaly), in_axes=(0, None))(Ms, 0.9)
    exact = 1.0 / (1.0 - 0.9 * np.cos(Es))
    err_vmap = float(np.max(np.abs(grads - exact)))
    print(f"  vmap over {n} values of M (e = 0.9): Newton steps per member range "
          f"{int(counts.min())}..{int(counts.max())}; dE/dM max error {err_vmap:.1e}")
    return {"err_implicit": err_implicit, "err_fd": err_fd, "err_jit": err_jit,
            "err_vmap": err_vmap, "counts": counts}


if __name__ == "__main__":
    main()
