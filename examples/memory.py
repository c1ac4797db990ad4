"""What reverse mode keeps, and what checkpointing buys: a small transformer.

A stack of pre-norm transformer blocks,

    h = x + Attention(LayerNorm(x))        (multi-head, causal)
    y = h + MLP(LayerNorm(h))              (GELU, tanh approximation)

written with ``funcdiff.numpy``. For the loss ``sum(stack(x)**2)`` the example
prints what the backward pass keeps (``fd.saved_residuals``: every kept array
with its shape, the primitive that produced it and the source line) and what
it costs (``fd.cost_analysis``: flops of the forward and backward programs,
bytes kept, peak live memory of the backward pass), first plainly, then with
each block checkpointed under several policies:

- ``nothing_saveable``: keep only each block's input, recompute the rest;
- ``dots_saveable``: keep the matrix products, recompute the elementwise work;
- ``save_only_these_names("attn_out")``: keep the values tagged with
  ``fd.checkpoint_name``.

The gradients agree in every case; memory goes down, recomputation flops up.

Run: ``python examples/memory.py``.
"""

from __future__ import annotations

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp


def layer_norm(x, gain, bias, eps=1e-5):
    mean = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / fnp.sqrt(var + eps) * gain + bias


def gelu(x):
    return 0.5 * x * (1.0 + fnp.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def attention(x, p, heads):
    t, d = x.shape
    hd = d // heads

    def split(m):  # (t, d) -> (heads, t, hd)
        return fnp.transpose(fnp.reshape(m, (t, heads, hd)), (1, 0, 2))
    q, k, v = split(x @ p["wq"]), split(x @ p["wk"]), split(x @ p["wv"])
    scores = fnp.matmul(q, fnp.transpose(k, (0, 2, 1))) / np.sqrt(hd)
    scores = fnp.where(np.tril(np.ones((t, t), bool)), scores, -1e9)
    scores = scores - fnp.max(scores, axis=-1, keepdims=True)
    weights = fnp.exp(scores)
    weights = weights / fnp.sum(weights, axis=-1, keepdims=True)
    mixed = fnp.reshape(fnp.transpose(fnp.matmul(weights, v), (1, 0, 2)), (t, d))
    return fd.checkpoint_name(mixed @ p["wo"], "attn_out")


def block(p, x, heads=2):
    h = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]), p, heads)
    up = gelu(layer_norm(h, p["ln2_g"], p["ln2_b"]) @ p["w_up"] + p["b_up"])
    return h + up @ p["w_down"]


def init(rng, d, n_blocks):
    def dense(n_in, n_out):
        return rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)
    return [{"ln1_g": np.ones(d), "ln1_b": np.zeros(d), "wq": dense(d, d), "wk": dense(d, d),
             "wv": dense(d, d), "wo": dense(d, d), "ln2_g": np.ones(d), "ln2_b": np.zeros(d),
             "w_up": dense(d, 4 * d), "b_up": np.zeros(4 * d), "w_down": dense(4 * d, d)}
            for _ in range(n_blocks)]


def make_loss(policy):
    """The loss with every block checkpointed under ``policy`` (None: no checkpoint)."""
    step = block if policy is None else fd.checkpoint(block, policy=policy)

    def loss(params, x):
        for p in params:
            x = step(p, x)
        return fnp.sum(x ** 2)
    return loss


POLICIES = [
    ("no checkpoint", None),
    ("checkpoint, nothing_saveable", "nothing_saveable"),
    ("checkpoint, dots_saveable", "dots_saveable"),
    ("checkpoint, save_only_these_names('attn_out')",
     fd.checkpoint_policies.save_only_these_names("attn_out")),
]


def main(tokens=64, d=32, n_blocks=2, verbose=True, tables=True):
    rng = np.random.default_rng(0)
    params, x = init(rng, d, n_blocks), rng.standard_normal((tokens, d))
    results = {}
    reference = None
    for label, policy in POLICIES:
        loss = make_loss(policy)
        grads = fd.grad(loss)(params, x)
        flat = np.concatenate([g.ravel() for p in grads for g in p.values()])
        reference = flat if reference is None else reference
        residuals = fd.saved_residuals(loss, params, x)
        costs = fd.cost_analysis(loss, params, x)
        results[label] = dict(kept_bytes=residuals.total_bytes,
                              intermediate_bytes=residuals.bytes_of("intermediate"),
                              num_kept=len(residuals), producers={r.primitive for r in residuals},
                              forward_flops=costs.forward.flops,
                              backward_flops=costs.backward.flops,
                              peak_backward_bytes=costs.peak_backward_bytes,
                              grad_max_diff=float(np.max(np.abs(flat - reference))))
        if verbose:
            print(f"=== {label} ===")
            if tables and policy in (None, "nothing_saveable"):
                print(residuals)
            else:
                print(f"saved residuals: {len(residuals)} values, {residuals.total_bytes:,} bytes "
                      f"(intermediates {residuals.bytes_of('intermediate'):,})")
            print(costs if tables and policy is None else
                  f"backward / forward flops: {costs.backward.flops / costs.forward.flops:.2f}; "
                  f"peak live memory of the backward pass: {costs.peak_backward_bytes:,} bytes")
            print(f"gradient max difference from the plain one: "
                  f"{results[label]['grad_max_diff']:.1e}\n")
    if verbose:
        print(f"{'':48} {'kept bytes':>12} {'backward flops':>15} {'peak bytes':>12}")
        for label, r in results.items():
            print(f"{label:48} {r['kept_bytes']:>12,} {r['backward_flops']:>15,} "
                  f"{r['peak_backward_bytes']:>12,}")
    return results


if __name__ == "__main__":
    main()
