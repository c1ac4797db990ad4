"""Hessian-vector products: ``fd.hvp`` against the R-operator written by hand.

The workload is bench_reverse's 4-layer tanh MLP with softmax cross-entropy:
the product of the Hessian of the loss (with respect to every weight and bias)
with a direction ``v`` of the same structure, at batch 8 / width 16 and batch
256 / width 512. The reference is Pearlmutter's R-operator in numpy, by hand:
the forward pass, its directional derivative along ``v``, the backward pass and
the directional derivative of every quantity of the backward pass. That is
the work a forward-over-reverse product has to do, and its physical limit in
numpy. funcdiff is timed eager (``fd.hvp``) and under ``fd.jit``.

Targets (the speed work): eager within 10x the hand-written R-operator at the
small size (HIPS autograd takes about 16x), jit within 1.3x of ``jax.jit`` at
the large one (``benchmarks/run.py`` with jax installed measures it).

Run: ``python benchmarks/bench_hvp.py [--quick]``; writes ``benchmarks/results/hvp.json``.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # before numpy loads BLAS; imported, this module changes nothing
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import funcdiff as fd  # noqa: E402
from bench_reverse import init_mlp, mlp_loss  # noqa: E402
import other_libraries  # noqa: E402
from common import best_time, quick_main, round_robin_times, short_samples, table  # noqa: E402


def numpy_hvp(params, v, x, labels):
    """The R-operator of the MLP loss's gradient, by hand: H v for the direction v."""
    n = x.shape[0]
    hs, rhs = [x], [np.zeros_like(x)]
    h, rh = x, rhs[0]
    for (w, b), (vw, vb) in zip(params[:-1], v[:-1]):
        ra = rh @ w + h @ vw + vb
        h = np.tanh(h @ w + b)
        rh = (1.0 - h * h) * ra
        hs.append(h)
        rhs.append(rh)
    (w, b), (vw, vb) = params[-1], v[-1]
    logits = h @ w + b
    rlogits = rh @ w + h @ vw + vb
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    rp = p * (rlogits - (p * rlogits).sum(axis=1, keepdims=True))
    d = p.copy()
    d[np.arange(n), labels] -= 1.0
    d /= n
    rd = rp / n
    out = [None] * len(params)
    out[-1] = (rhs[-1].T @ d + hs[-1].T @ rd, rd.sum(axis=0))
    g, rg = d @ w.T, rd @ w.T + d @ vw.T
    for i in range(len(params) - 2, -1, -1):
        y, ry = hs[i + 1], rhs[i + 1]
        s = 1.0 - y * y
        ga = g * s
        rga = rg * s - 2.0 * g * y * ry
        out[i] = (rhs[i].T @ ga + hs[i].T @ rga, rga.sum(axis=0))
        if i:
            wi, vwi = params[i][0], v[i][0]
            g, rg = ga @ wi.T, rga @ wi.T + ga @ vwi.T
    return out


def problem(batch: int, width: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    params = init_mlp(rng, width, width, 10)
    v = [(rng.standard_normal(w.shape), rng.standard_normal(b.shape)) for w, b in params]
    x = rng.standard_normal((batch, width))
    labels = rng.integers(0, 10, batch)
    return params, v, x, labels


def bench_size(batch: int, width: int) -> dict:
    params, v, x, labels = problem(batch, width)

    def eager():
        return fd.hvp(lambda p: mlp_loss(p, x, labels), (params,), (v,))

    jitted = fd.jit(lambda p, t, x, labels: fd.hvp(lambda q: mlp_loss(q, x, labels), (p,), (t,)))
    ref = numpy_hvp(params, v, x, labels)
    for got in (eager(), jitted(params, v, x, labels)):
        for (gw, gb), (rw, rb) in zip(got, ref):
            np.testing.assert_allclose(gw, rw, rtol=1e-8, atol=1e-12)
            np.testing.assert_allclose(gb, rb, rtol=1e-8, atol=1e-12)
    t_np, t_eager, t_jit = round_robin_times(
        [lambda: numpy_hvp(params, v, x, labels), eager, lambda: jitted(params, v, x, labels)],
        **short_samples(batch * width))
    return {"batch": batch, "width": width, "numpy_s": t_np, "eager_s": t_eager, "jit_s": t_jit,
            "eager_ratio": t_eager / t_np, "jit_ratio": t_jit / t_np}


def run(quick: bool) -> dict:
    sizes = [(8, 16)] if quick else [(8, 16), (256, 512)]
    rows = [bench_size(b, w) for b, w in sizes]
    print(table([[f"{r['batch']}x{r['width']}", r["numpy_s"] * 1e3, r["eager_s"] * 1e3,
                  r["eager_ratio"], r["jit_s"] * 1e3, r["jit_ratio"]] for r in rows],
                ["hvp of the MLP loss, batch x width", "R-op by hand ms", "eager ms",
                 "eager/hand", "jit ms", "jit/hand"]))
    return {"mlp": rows}


def main(argv=None):
    return quick_main("hvp", run, __doc__.splitlines()[0], argv)


def compare(result: dict, libs: list[str], quick: bool) -> list[dict]:
    """The same products with the other libraries (``benchmarks/run.py``): jax's
    forward-over-reverse under ``jax.jit`` against ``fd.jit``; autograd's
    ``hessian_vector_product`` and PyTorch's double backward against eager
    ``fd.hvp``."""
    rows = []
    for r in result["mlp"]:
        params, v, x, labels = problem(r["batch"], r["width"])
        ref = numpy_hvp(params, v, x, labels)
        for lib in libs:
            fn, variant = _library_hvp(lib, params, v, x, labels)
            got = fn()
            for (gw, gb), (rw, rb) in zip(got, ref):
                np.testing.assert_allclose(np.asarray(gw), rw, rtol=1e-7, atol=1e-11)
                np.testing.assert_allclose(np.asarray(gb), rb, rtol=1e-7, atol=1e-11)
            t = best_time(fn, **short_samples(r["batch"] * r["width"]))
            ours = r["jit_s"] if variant == "jit" else r["eager_s"]
            rows.append({"workload": f"MLP hvp {r['batch']}x{r['width']}", "library": lib,
                         "seconds": t, "funcdiff_seconds": ours, "funcdiff_variant": variant,
                         "ratio": t / ours})
    return rows


def _library_hvp(lib: str, params, v, x, labels):
    """A zero-argument callable giving the product with ``lib`` as a list of (w, b)
    pairs, and the funcdiff variant it is compared with."""
    if lib == "jax":
        import jax
        loss = other_libraries.jax_mlp_loss()

        @jax.jit
        def hvp(ps, vs, x, labels):
            return jax.jvp(lambda q: jax.grad(loss)(q, x, labels), (ps,), (vs,))[1]
        args = jax.device_put(([tuple(p) for p in params], [tuple(t) for t in v], x, labels))

        def run():
            return jax.block_until_ready(hvp(*args))
        return run, "jit"
    if lib == "torch":
        import torch
        ps = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              for w, b in params]
        flat = [t for p in ps for t in p]
        vs = [torch.from_numpy(t) for p in v for t in p]
        tx, tl = torch.from_numpy(x), torch.from_numpy(labels)

        def run():
            loss = other_libraries.torch_mlp_loss(ps, tx, tl)
            grads = torch.autograd.grad(loss, flat, create_graph=True)
            hv = torch.autograd.grad(grads, flat, grad_outputs=vs)
            return [(hv[i].numpy(), hv[i + 1].numpy()) for i in range(0, len(hv), 2)]
        return run, "eager"
    if lib == "autograd":
        import autograd
        from autograd.misc import flatten
        loss = other_libraries.autograd_mlp_loss(x, labels)
        # its hessian_vector_product takes one array: the parameters flattened
        w0, unflatten = flatten([tuple(p) for p in params])
        v0, _ = flatten([tuple(t) for t in v])
        product = autograd.hessian_vector_product(lambda w: loss(unflatten(w)))
        return (lambda: unflatten(product(w0, v0))), "eager"
    raise ValueError(f"unknown library {lib!r}")


def summary(result: dict) -> list[tuple[str, str, str]]:
    rows = []
    for r in result["mlp"]:
        size = f"{r['batch']}x{r['width']}"
        rows.append((f"MLP {size} eager hvp / hand R-op", f"{r['eager_ratio']:.2f}",
                     "<= 10" if r["width"] <= 16 else "-"))
        rows.append((f"MLP {size} jit hvp / hand R-op", f"{r['jit_ratio']:.2f}",
                     "<= 1.3x jax.jit" if r["width"] > 16 else "-"))
    return rows


if __name__ == "__main__":
    main()
