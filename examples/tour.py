"""A tour of funcdiff: tracing, derivatives in both modes, Jacobians, curvature, vmap, jit,
and a picture of reverse mode.

Run: ``python examples/tour.py`` (about ten seconds).
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def timed(fn, repeat: int = 3) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(n_tall: int = 20, m_tall: int = 400, page: str | None = None) -> None:
    rng = np.random.default_rng(0)

    section("1. make_jaxpr: the program funcdiff sees")

    def f(x):
        return fnp.sum(fnp.tanh(x) ** 2)
    x = np.array([0.5, -1.0, 2.0])
    print(fd.make_jaxpr(f)(x))

    section("2. grad, value_and_grad, jvp, vjp")
    print("f(x)            =", f(x))
    print("grad f(x)       =", fd.grad(f)(x))
    value, g = fd.value_and_grad(f)(x)
    print("value_and_grad  =", value, g)
    v = np.array([1.0, 0.0, 0.0])
    print("jvp along e0    =", fd.jvp(f, (x,), (v,))[1], "(= grad[0])")
    out, pullback = fd.vjp(lambda x: fnp.tanh(x) * 2.0, x)
    print("vjp of 2 tanh   =", pullback(np.ones(3))[0])

    section("3. Jacobians: forward mode for tall, reverse mode for wide")
    for name, (n, m) in {"tall": (n_tall, m_tall), "wide": (m_tall, n_tall)}.items():
        A = rng.standard_normal((m, n)) / np.sqrt(n)
        B = rng.standard_normal((m, m)) / np.sqrt(m)
        g_fn = lambda z: fnp.tanh(B @ fnp.tanh(A @ z))
        z = rng.standard_normal(n)
        t_fwd = timed(lambda: fd.jacfwd(g_fn)(z))
        t_rev = timed(lambda: fd.jacrev(g_fn)(z))
        auto = fd.jacobian(g_fn)
        auto(z)
        print(f"{name:5s} R^{n} -> R^{m}: jacfwd {t_fwd * 1e3:6.2f} ms, jacrev "
              f"{t_rev * 1e3:6.2f} ms; jacobian(auto) picks {auto.last_mode!r}")

    section("4. Curvature: Hessian-vector products and the top eigenvalue")
    M = rng.standard_normal((6, 6))
    A = M @ M.T

    def quad(z):
        return 0.5 * z @ A @ z + 0.1 * fnp.sum(z ** 4)
    z0 = rng.standard_normal(6) * 0.1
    hv = fd.hvp(quad, (z0,), (np.ones(6),))
    print("hvp(quad, z0, 1)          =", np.round(hv, 4))
    print("hessian(quad)(z0) @ 1     =", np.round(fd.hessian(quad)(z0) @ np.ones(6), 4))
    u = np.ones(6) / np.sqrt(6)
    for _ in range(100):  # power iteration with Hessian-vector products only
        w = fd.hvp(quad, (z0,), (u,))
        u = w / np.linalg.norm(w)
    lam = u @ fd.hvp(quad, (z0,), (u,))
    print(f"top eigenvalue by power iteration = {lam:.6f} "
          f"(numpy eigvalsh: {np.linalg.eigvalsh(fd.hessian(quad)(z0))[-1]:.6f})")

    section("5. vmap: per-example gradients")
    W = rng.standard_normal((4, 3))
    xs, ys = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))

    def loss(W, x, y):
        return fnp.sum((fnp.tanh(x @ W) - y) ** 2)
    per_example = fd.vmap(fd.grad(loss), in_axes=(None, 0, 0))(W, xs, ys)
    print("per-example gradient norms:", np.round(np.linalg.norm(per_example, axis=(1, 2)), 4))
    print("mean equals the full-batch gradient / 5:",
          np.allclose(per_example.mean(0), fd.grad(lambda W: sum(loss(W, a, b) for a, b in
                                                                  zip(xs, ys)) / 5)(W)))

    section("6. jit: trace once, replay compiled numpy")

    def chain(x):
        for _ in range(30):
            x = fnp.sin(x) * 0.9 + 0.1
        return fnp.sum(x)
    xs = rng.standard_normal(8)
    eager = fd.grad(chain)
    compiled = fd.jit(fd.grad(chain))
    t_eager, t_jit = timed(lambda: eager(xs)), timed(lambda: compiled(xs))
    print(f"grad of a 90-op chain: eager {t_eager * 1e6:7.1f} us, jit {t_jit * 1e6:7.1f} us "
          f"({t_eager / t_jit:.0f}x faster); traced {compiled.trace_count} time(s)")
    print("generated source (first lines):")
    print("\n".join(compiled.lower(xs).source.splitlines()[:5]))

    section("7. draw: reverse mode one node at a time")

    def engine(a, b, c):
        return fnp.tanh(a * b + a) * c
    page = page or os.path.join(tempfile.gettempdir(), "funcdiff_tour.html")
    fd.draw(engine, 1.0, -0.5, 2.0, mode="vjp", path=page, title="L = tanh(a*b + a) * c")
    print(f"wrote {page}: open it in a browser and step through the forward pass, then the")
    print("backward pass, watching each node receive its adjoint (dL/da = 0.7864)")


if __name__ == "__main__":
    main()
