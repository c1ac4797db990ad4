"""Convolutions: jit(value_and_grad) of a conv layer and of examples/cnn.py's network
against the same forward and backward written by hand with im2col in numpy.

Workloads:

- a conv layer, batch 32, 16 -> 32 channels, 28x28, 3x3, padding 1, loss
  ``0.5 * sum(conv(x, w) ** 2)``, gradients for the input and the kernel
  (target: within 1.3x of the hand-written im2col numpy);
- the example's network (two conv + relu + 2x2 max-pool layers, a dense head,
  softmax cross-entropy) on a batch of 64 glyphs, gradients for every parameter.

The hand-written reference keeps the forward pass's patch matrix for the
kernel's gradient and scatters the input's gradient back with one strided add
per kernel offset (col2im). Peak memory above the inputs is measured with
tracemalloc for each side. When torch or jax are installed, the conv layer is
also timed with torch's conv2d backward and with jax.jit(value_and_grad) in the
same process (optional: never required).

BLAS runs on one thread (set before numpy is imported when run directly).
Run: ``python benchmarks/bench_conv.py [--quick]``; writes
``benchmarks/results/conv.txt`` and ``conv.json``.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # before numpy loads BLAS; imported, this module changes nothing
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import RESULTS_DIR, best_time, peak_bytes, write_results  # noqa: E402

import funcdiff as fd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- the hand-written reference ----------------------------------------------------


def im2col(x, k: int, pad: int):
    """Patches of x (N, C, H, W) as rows (N * H' * W', C * k * k), stride 1."""
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + w] = x
    windows = sliding_window_view(xp, (k, k), axis=(2, 3))  # (N, C, H', W', k, k)
    ho, wo = windows.shape[2:4]
    return windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, c * k * k), (ho, wo)


def col2im(dcols, x_shape, k: int, pad: int, out_hw):
    """The adjoint of im2col: each offset's block of patch gradients added back."""
    n, c, h, w = x_shape
    ho, wo = out_hw
    dcols = dcols.reshape(n, ho, wo, c, k, k)
    dxp = np.zeros((n, c, h + 2 * pad, w + 2 * pad))
    for i in range(k):
        for j in range(k):
            dxp[:, :, i:i + ho, j:j + wo] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, pad:pad + h, pad:pad + w]


def conv_forward(x, w, b=None, pad: int = 1):
    o, c, k, _ = w.shape
    cols, (ho, wo) = im2col(x, k, pad)
    out = cols @ w.reshape(o, -1).T  # (N * H' * W', O)
    if b is not None:
        out += b
    return out.reshape(x.shape[0], ho, wo, o).transpose(0, 3, 1, 2), (cols, (ho, wo))


def conv_backward(dout, x_shape, w, saved, pad: int = 1):
    cols, out_hw = saved
    o, c, k, _ = w.shape
    d = dout.transpose(0, 2, 3, 1).reshape(-1, o)
    dw = (d.T @ cols).reshape(w.shape)
    dx = col2im(d @ w.reshape(o, -1), x_shape, k, pad, out_hw)
    return dx, dw, d.sum(0)


def layer_numpy(x, w):
    y, saved = conv_forward(x, w)
    dx, dw, _ = conv_backward(y, x.shape, w, saved)
    return 0.5 * np.sum(y * y), (dx, dw)


def layer_funcdiff(x, w):
    return 0.5 * (fd.lax.conv(x, w, (1, 1), "SAME") ** 2).sum()


def pool_forward(h):
    n, c, hh, ww = h.shape
    blocks = h.reshape(n, c, hh // 2, 2, ww // 2, 2)
    out = blocks.max(axis=(3, 5))
    hit = blocks == out[:, :, :, None, :, None]
    return out, hit / hit.sum(axis=(3, 5), keepdims=True)


def pool_backward(dout, share):
    n, c, h2, _, w2, _ = share.shape
    return (share * dout[:, :, :, None, :, None]).reshape(n, c, 2 * h2, 2 * w2)


def network_numpy(params, images, labels):
    """examples/cnn.py's loss and gradients, written out."""
    z1, s1 = conv_forward(images, params["w1"], params["b1"])
    a1 = np.maximum(z1, 0)
    p1, share1 = pool_forward(a1)
    z2, s2 = conv_forward(p1, params["w2"], params["b2"])
    a2 = np.maximum(z2, 0)
    p2, share2 = pool_forward(a2)
    flat = p2.reshape(len(images), -1)
    logits = flat @ params["w3"] + params["b3"]
    shifted = logits - logits.max(1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(1, keepdims=True)
    n = len(labels)
    loss = np.mean(np.log(total[:, 0]) - shifted[np.arange(n), labels])
    dlogits = e / total
    dlogits[np.arange(n), labels] -= 1
    dlogits /= n
    g = {"w3": flat.T @ dlogits, "b3": dlogits.sum(0)}
    dp2 = (dlogits @ params["w3"].T).reshape(p2.shape)
    dz2 = pool_backward(dp2, share2) * (z2 > 0)
    dp1, g["w2"], g["b2"] = conv_backward(dz2, p1.shape, params["w2"], s2)
    dz1 = pool_backward(dp1, share1) * (z1 > 0)
    _, g["w1"], g["b1"] = conv_backward(dz1, images.shape, params["w1"], s1)
    return loss, g


def load_example():
    spec = importlib.util.spec_from_file_location("examples_cnn",
                                                  os.path.join(ROOT, "examples", "cnn.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- measurement -------------------------------------------------------------------


def compare_pair(name, funcdiff_fn, numpy_fn, rounds: int) -> dict:
    """Best times of both, measured round-robin so they see the same machine."""
    t_fd, t_np = float("inf"), float("inf")
    for _ in range(rounds):
        t_fd = min(t_fd, best_time(funcdiff_fn, repeat=3))
        t_np = min(t_np, best_time(numpy_fn, repeat=3))
    return {"workload": name, "funcdiff_s": t_fd, "numpy_s": t_np, "ratio": t_fd / t_np,
            "funcdiff_peak_mb": peak_bytes(funcdiff_fn) / 2 ** 20,
            "numpy_peak_mb": peak_bytes(numpy_fn) / 2 ** 20}


def other_libraries(x, w, result_rows: list) -> list:
    rows = []
    try:
        import torch
        torch.set_num_threads(1)
        xt = torch.tensor(x, requires_grad=True)
        wt = torch.tensor(w, requires_grad=True)

        def torch_step():
            xt.grad = wt.grad = None
            loss = 0.5 * (torch.nn.functional.conv2d(xt, wt, padding=1) ** 2).sum()
            loss.backward()
        rows.append({"library": "torch eager (conv2d backward)", "seconds": best_time(torch_step)})
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        f = jax.jit(jax.value_and_grad(lambda x, w: 0.5 * (jax.lax.conv(
            x, w, (1, 1), "SAME") ** 2).sum(), argnums=(0, 1)))
        xj, wj = jnp.asarray(x), jnp.asarray(w)
        rows.append({"library": "jax.jit", "seconds": best_time(
            lambda: jax.block_until_ready(f(xj, wj)))})
    except ImportError:
        pass
    return rows


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    batch, c_in, c_out, size = (4, 4, 8, 10) if args.quick else (32, 16, 32, 28)
    x = rng.standard_normal((batch, c_in, size, size))
    w = rng.standard_normal((c_out, c_in, 3, 3)) / 12
    layer = fd.jit(fd.value_and_grad(layer_funcdiff, argnums=(0, 1)))
    value, (dx, dw) = layer(x, w)
    ref_value, (ref_dx, ref_dw) = layer_numpy(x, w)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-9, atol=1e-10)
    rounds = 1 if args.quick else 3
    rows = [compare_pair(f"conv layer {batch}x{c_in}->{c_out}x{size}x{size}, 3x3",
                         lambda: layer(x, w), lambda: layer_numpy(x, w), rounds)]

    cnn = load_example()
    images, labels = cnn.make_glyphs(16 if args.quick else 64)
    params = cnn.init_params()
    net = fd.jit(fd.value_and_grad(cnn.loss))
    value, grads = net(params, images, labels)
    ref_value, ref_grads = network_numpy(params, images, labels)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    for k in params:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=1e-8, atol=1e-10, err_msg=k)
    rows.append(compare_pair(f"examples/cnn.py network, batch {len(images)}",
                             lambda: net(params, images, labels),
                             lambda: network_numpy(params, images, labels), rounds))
    result = {"rows": rows, "other_libraries": other_libraries(x, w, rows),
              "target": "conv layer within 1.3x of hand-written im2col numpy"}
    lines = [f"{'workload':48s} {'funcdiff ms':>11s} {'numpy ms':>9s} {'ratio':>6s} "
             f"{'peak MB fd':>10s} {'peak MB np':>10s}"]
    for r in rows:
        lines.append(f"{r['workload']:48s} {1e3 * r['funcdiff_s']:11.2f} {1e3 * r['numpy_s']:9.2f} "
                     f"{r['ratio']:6.2f} {r['funcdiff_peak_mb']:10.1f} {r['numpy_peak_mb']:10.1f}")
    for r in result["other_libraries"]:
        lines.append(f"  {r['library']}: {1e3 * r['seconds']:.2f} ms (conv layer)")
    if not result["other_libraries"]:
        lines.append("  (torch and jax are not installed: funcdiff against numpy only)")
    text = "\n".join(lines)
    print(text)
    if __name__ == "__main__" and not args.quick:
        os.makedirs(RESULTS_DIR, exist_ok=True)
        with open(os.path.join(RESULTS_DIR, "conv.txt"), "w") as fh:
            fh.write("jit(value_and_grad) against hand-written im2col numpy (float64, one BLAS "
                     "thread; best of 3 rounds).\nTarget: the conv layer within 1.3x.\n\n"
                     + text + "\n")
        write_results("conv", result)
    return result


def summary(result: dict) -> list:
    return [(r["workload"], f"{r['ratio']:.2f}x numpy ({1e3 * r['funcdiff_s']:.1f} ms)",
             "<= 1.3x" if i == 0 else "") for i, r in enumerate(result["rows"])]


if __name__ == "__main__":
    main()
