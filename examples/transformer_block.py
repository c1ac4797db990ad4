"""One pre-norm transformer block, differentiated, checked and trained with clipping.

The model: token and position embeddings, one pre-norm block

    h = x + Attention(LayerNorm(x))        (multi-head, causal mask)
    y = h + MLP(LayerNorm(h))              (GELU, 4x wider hidden layer)

then a final LayerNorm and the unembedding, scored by softmax cross-entropy
against the next token. Everything is written in ``funcdiff.numpy`` inline.
The example checks the gradient against central finite differences along a
random direction (and with ``fd.test_util.check_grads``), prints the gradient
norm of every parameter, and trains a few steps of SGD with global-norm
gradient clipping on a toy next-token task.

Run: ``python examples/transformer_block.py [steps]``.
"""

from __future__ import annotations

import sys

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.test_util import check_grads

tree_map = fd.tree_util.tree_map


def init_params(rng: np.random.Generator, vocab: int, seq_len: int, d_model: int) -> dict:
    def dense(n_in, n_out):
        return rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)
    d = d_model
    return {
        "embed": rng.standard_normal((vocab, d)) * 0.5,
        "pos": rng.standard_normal((seq_len, d)) * 0.1,
        "ln1_g": np.ones(d), "ln1_b": np.zeros(d),
        "wq": dense(d, d), "wk": dense(d, d), "wv": dense(d, d), "wo": dense(d, d),
        "ln2_g": np.ones(d), "ln2_b": np.zeros(d),
        "w_up": dense(d, 4 * d), "b_up": np.zeros(4 * d),
        "w_down": dense(4 * d, d), "b_down": np.zeros(d),
        "lnf_g": np.ones(d), "lnf_b": np.zeros(d), "unembed": dense(d, vocab),
    }


def layer_norm(x, gain, bias, eps=1e-5):
    mean = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / fnp.sqrt(var + eps) * gain + bias


def gelu(x):
    """GELU, tanh approximation (Hendrycks & Gimpel, 2016)."""
    return 0.5 * x * (1.0 + fnp.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def softmax(z, axis=-1):
    z = z - fnp.max(z, axis=axis, keepdims=True)
    e = fnp.exp(z)
    return e / fnp.sum(e, axis=axis, keepdims=True)


def attention(p, x, heads):
    batch, seq, d = x.shape
    dh = d // heads

    def split(t):                                     # (B, T, d) -> (B, heads, T, dh)
        return fnp.swapaxes(fnp.reshape(t, (batch, seq, heads, dh)), 1, 2)
    q, k, v = split(x @ p["wq"]), split(x @ p["wk"]), split(x @ p["wv"])
    scores = q @ fnp.swapaxes(k, -1, -2) / np.sqrt(dh)
    causal = np.tril(np.ones((seq, seq), dtype=bool))
    scores = fnp.where(causal, scores, -1e9)          # a large finite number keeps exp() exact
    out = softmax(scores) @ v                         # (B, heads, T, dh)
    return fnp.reshape(fnp.swapaxes(out, 1, 2), (batch, seq, d)) @ p["wo"]


def block(p, x, heads):
    h = x + attention(p, layer_norm(x, p["ln1_g"], p["ln1_b"]), heads)
    u = gelu(layer_norm(h, p["ln2_g"], p["ln2_b"]) @ p["w_up"] + p["b_up"])
    return h + u @ p["w_down"] + p["b_down"]


def loss(p, tokens, heads=2):
    """Mean next-token softmax cross-entropy over a batch of token sequences."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    x = p["embed"][inputs] + p["pos"][: inputs.shape[1]]
    y = layer_norm(block(p, x, heads), p["lnf_g"], p["lnf_b"])
    logits = y @ p["unembed"]
    z = logits - fnp.max(logits, axis=-1, keepdims=True)
    log_probs = z - fnp.log(fnp.sum(fnp.exp(z), axis=-1, keepdims=True))
    return -fnp.mean(fnp.take_along_axis(log_probs, targets[..., None], axis=-1))


def global_norm(tree) -> float:
    return float(np.sqrt(sum(np.sum(g * g) for g in fd.tree_util.tree_leaves(tree))))


def clip_by_global_norm(grads, max_norm: float):
    """Scale all gradients together so that their joint norm is at most ``max_norm``."""
    norm = global_norm(grads)
    scale = min(1.0, max_norm / (norm + 1e-12))
    return tree_map(lambda g: g * scale, grads), norm


def toy_batch(rng, batch: int, seq_len: int, vocab: int) -> np.ndarray:
    """Sequences that count upward modulo ``vocab`` from a random start."""
    starts = rng.integers(0, vocab, (batch, 1))
    return (starts + np.arange(seq_len + 1)) % vocab


def main(steps: int = 60, d_model: int = 32, seq_len: int = 12, batch: int = 8, vocab: int = 11,
         max_norm: float = 1.0, lr: float = 0.3, seed: int = 0, verbose: bool = True) -> dict:
    """Check the gradient, print per-parameter norms, train with clipping; return a summary."""
    say = print if verbose else (lambda *_: None)
    rng = np.random.default_rng(seed)
    params = init_params(rng, vocab, seq_len, d_model)
    tokens = toy_batch(rng, batch, seq_len, vocab)

    # 1. gradient against central finite differences along a random direction
    value, grads = fd.value_and_grad(loss)(params, tokens)
    direction = tree_map(lambda a: rng.standard_normal(a.shape), params)
    eps = 1e-5
    shifted = [loss(tree_map(lambda a, v: a + s * eps * v, params, direction), tokens)
               for s in (1.0, -1.0)]
    fd_slope = (shifted[0] - shifted[1]) / (2 * eps)
    ad_slope = sum(np.sum(g * v) for g, v in zip(fd.tree_util.tree_leaves(grads),
                                                 fd.tree_util.tree_leaves(direction)))
    rel_err = abs(fd_slope - ad_slope) / abs(fd_slope)
    say(f"loss {value:.4f}; directional derivative: funcdiff {ad_slope:.8f}, "
        f"finite differences {fd_slope:.8f} (relative error {rel_err:.1e})")
    check_grads(lambda p: loss(p, tokens), (params,), order=1, modes=("rev",))
    say("check_grads(order=1, reverse mode): passed")

    # 2. gradient norm of every parameter
    say("\ngradient norms per parameter:")
    names = list(params)            # model order (the gradient dict comes back sorted)
    for i in range(0, len(names), 4):
        say("  " + "   ".join(f"{n:>7s} {np.linalg.norm(grads[n]):.2e}" for n in names[i:i + 4]))

    # 3. SGD with global-norm clipping
    say(f"\ntraining with SGD (lr {lr}) and gradient clipping at global norm {max_norm}:")
    step = fd.jit(fd.value_and_grad(loss))
    losses, norms = [], []
    every = max(1, steps // 5)
    for i in range(steps + 1):
        value, grads = step(params, tokens)
        clipped, norm = clip_by_global_norm(grads, max_norm)
        losses.append(float(value))
        norms.append(norm)
        if i % every == 0:
            say(f"  step {i:4d}  loss {value:.4f}  gradient norm {norm:7.3f} -> "
                f"{global_norm(clipped):.3f}")
        if i < steps:
            params = tree_map(lambda p, g: p - lr * g, params, clipped)
    return {"grad_rel_err": float(rel_err), "losses": losses, "grad_norms": norms,
            "clipped_norm": global_norm(clipped)}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
