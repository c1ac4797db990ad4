"""An ODE integrated with fd.lax.scan (classical RK4), differentiated end to end.

The Lotka-Volterra predator-prey system

    du/dt = alpha * u - beta * u * v
    dv/dt = delta * u * v - gamma * v

is integrated from (u0, v0) over [0, T] with ``n_steps`` RK4 steps, written as
one ``scan`` whose carry is the state. Because the loop is a primitive,
``grad`` of the final state with respect to the initial condition and to the
parameters is one reverse sweep (a scan running backwards over the saved
per-step residuals), ``jit`` compiles the whole integration, and ``vmap``
integrates a batch of initial conditions at once. Every derivative is checked
against central finite differences.

Run: ``python examples/ode_rk4.py`` (about a second).
"""

from __future__ import annotations

import textwrap
import time

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import lax


def vector_field(state, params):
    u, v = state[0], state[1]
    alpha, beta, delta, gamma = params[0], params[1], params[2], params[3]
    return fnp.stack([alpha * u - beta * u * v, delta * u * v - gamma * v])


def integrate(y0, params, t_final=5.0, n_steps=200):
    """The state at ``t_final`` after ``n_steps`` RK4 steps, and the trajectory."""
    h = t_final / n_steps

    def rk4_step(y, _):
        k1 = vector_field(y, params)
        k2 = vector_field(y + 0.5 * h * k1, params)
        k3 = vector_field(y + 0.5 * h * k2, params)
        k4 = vector_field(y + h * k3, params)
        y_next = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return y_next, y_next

    return lax.scan(rk4_step, y0, None, length=n_steps)


def loss(y0, params, n_steps):
    """A scalar of the final state: predators minus twice the prey."""
    final, _ = integrate(y0, params, n_steps=n_steps)
    return final[1] - 2.0 * final[0]


def finite_difference_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def main(n_steps: int = 200, batch: int = 8) -> dict:
    y0 = np.array([1.0, 0.5])
    params = np.array([1.1, 0.4, 0.1, 0.4])

    final, trajectory = integrate(y0, params, n_steps=n_steps)
    print(f"Lotka-Volterra, RK4 with {n_steps} steps as one lax.scan")
    print(f"  final state u, v = {np.round(final, 6)}; trajectory {trajectory.shape}")

    grad_fn = fd.jit(fd.grad(loss, argnums=(0, 1)), static_argnums=2)
    t0 = time.perf_counter()
    g_y0, g_params = grad_fn(y0, params, n_steps)
    elapsed = time.perf_counter() - t0
    fd_y0 = finite_difference_grad(lambda y: float(loss(y, params, n_steps)), y0)
    fd_params = finite_difference_grad(lambda p: float(loss(y0, p, n_steps)), params)
    err_y0 = float(np.max(np.abs(g_y0 - fd_y0)))
    err_params = float(np.max(np.abs(g_params - fd_params)))
    print(f"  d loss / d y0     = {np.round(g_y0, 6)}   finite differences {np.round(fd_y0, 6)}")
    print(f"  d loss / d params = {np.round(g_params, 6)}")
    print(f"                      finite differences {np.round(fd_params, 6)}")
    print(f"  max abs error: y0 {err_y0:.1e}, params {err_params:.1e} "
          f"(jit(grad) incl. compile: {elapsed * 1e3:.0f} ms)")

    # the sensitivity matrix d final / d y0, by forward and by reverse mode
    final_of_y0 = lambda y: integrate(y, params, n_steps=n_steps)[0]  # noqa: E731
    j_fwd, j_rev = fd.jacfwd(final_of_y0)(y0), fd.jacrev(final_of_y0)(y0)
    err_jac = float(np.max(np.abs(j_fwd - j_rev)))
    print(f"  d final / d y0 (jacfwd == jacrev to {err_jac:.1e}):")
    print(textwrap.indent(np.array2string(np.round(j_fwd, 6)), "    "))

    # a batch of initial conditions in one vectorised integration
    starts = y0 + 0.1 * np.arange(batch)[:, None]
    finals = fd.vmap(final_of_y0)(starts)
    loop = np.stack([final_of_y0(s) for s in starts])
    err_vmap = float(np.max(np.abs(finals - loop)))
    print(f"  vmap over {batch} initial conditions matches a loop to {err_vmap:.1e}")
    return {"err_y0": err_y0, "err_params": err_params, "err_jac": err_jac,
            "err_vmap": err_vmap}


if __name__ == "__main__":
    main()
