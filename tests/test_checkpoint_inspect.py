"""checkpoint and its policies, saved_residuals, cost_analysis, and examples/memory.py."""

import doctest
import importlib.util
import os
import sys

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import ConcretizationError, InvalidArgumentError
from funcdiff.ir import check_jaxpr

rng = np.random.default_rng(1)
WIDTH, BATCH = 8, 64
ACT = WIDTH * BATCH * 8  # bytes of one float64 activation


def layer(W, h):
    return fnp.tanh(h @ W)   # LAYER_LINE


LAYER_LINE = next(i for i, line in enumerate(open(__file__), 1) if "# LAYER_LINE" in line)


def mlp(depth, every=None, policy=None):
    """A tanh MLP; with ``every``, each group of ``every`` layers is one checkpoint."""
    def block(Ws, h):
        for W in Ws:
            h = layer(W, h)
        return h
    step = block if every is None else fd.checkpoint(block, policy=policy)
    group = every or depth

    def loss(Ws, x):
        for i in range(0, depth, group):
            x = step(Ws[i:i + group], x)
        return fnp.sum(x)
    return loss


def weights(depth):
    return [rng.standard_normal((WIDTH, WIDTH)) * 0.4 for _ in range(depth)]


X = rng.standard_normal((BATCH, WIDTH))


# ---------------------------------------------------------------------------
# Checkpointing a 16-layer MLP


@pytest.mark.parametrize("policy", [None, "everything_saveable", "dots_saveable",
                                    fd.checkpoint_policies.dots_with_no_batch_dims_saveable])
def test_checkpointed_mlp_gradients_equal_plain(policy):
    Ws = weights(16)
    plain = fd.grad(mlp(16), argnums=(0, 1))(Ws, X)
    ckpt = fd.grad(mlp(16, 4, policy), argnums=(0, 1))(Ws, X)
    for a, b in zip(plain[0] + [plain[1]], ckpt[0] + [ckpt[1]]):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_saved_bytes_drop_from_order_layers_to_order_sqrt_layers():
    for depth, every in ((16, 4), (36, 6)):
        Ws = weights(depth)
        plain = fd.saved_residuals(mlp(depth), Ws, X)
        ckpt = fd.saved_residuals(mlp(depth, every), Ws, X)
        # activations only: the weights are arguments kept either way
        plain_acts = plain.bytes_of("intermediate") + ACT
        ckpt_acts = ckpt.bytes_of("intermediate") + ACT
        assert plain_acts >= 2 * (depth - 1) * ACT          # O(layers): y and 1 - y² per layer
        assert ckpt_acts == (depth // every) * ACT          # O(sqrt(layers)): block inputs
        assert plain.bytes_of("argument") == ckpt.bytes_of("argument") == (depth * WIDTH ** 2 * 8
                                                                           + ACT)
        assert {r.primitive for r in ckpt if r.kind == "intermediate"} == {"tanh"}


def test_policies_change_what_is_kept():
    Ws = weights(8)
    everything = fd.saved_residuals(mlp(8, 4, "everything_saveable"), Ws, X)
    plain = fd.saved_residuals(mlp(8), Ws, X)
    assert everything.total_bytes == plain.total_bytes
    dots = fd.saved_residuals(mlp(8, 4, "dots_saveable"), Ws, X)
    kept = {r.primitive for r in dots if r.kind == "intermediate"}
    assert kept == {"dot_general", "tanh"}   # products inside blocks, tanh at block inputs
    # every product in the two blocks, plus the input of the second block
    assert dots.bytes_of("intermediate") == (2 * 4 + 1) * ACT

    def tagged_loss(Ws, x):
        def block(Ws, h):
            for W in Ws:
                h = fd.checkpoint_name(layer(W, h), "hidden")
            return h
        step = fd.checkpoint(block, policy=fd.checkpoint_policies.save_only_these_names("hidden"))
        return fnp.sum(step(Ws[4:], step(Ws[:4], x)))
    named = fd.saved_residuals(tagged_loss, Ws, X)
    assert {r.primitive for r in named if r.kind == "intermediate"} == {"name"}
    np.testing.assert_allclose(fd.grad(tagged_loss)(Ws, X)[3], fd.grad(mlp(8))(Ws, X)[3],
                               rtol=1e-13)


def test_saved_residuals_names_source_lines_and_prints_a_table():
    report = fd.saved_residuals(mlp(3), weights(3), X)
    sources = {r.source for r in report if r.kind == "intermediate"}
    assert sources == {f"{__file__}:{LAYER_LINE}"}
    ckpt = fd.saved_residuals(mlp(4, 2), weights(4), X)
    assert {r.source for r in ckpt if r.kind == "intermediate"} == {f"{__file__}:{LAYER_LINE}"}
    text = str(report)
    assert "saved residuals of loss" in text and "tanh" in text and "# LAYER_LINE" in text
    assert f"total {report.total_bytes:,} bytes" in text
    with pytest.raises(InvalidArgumentError, match="outside"):
        fd.grad(lambda x: fd.saved_residuals(fnp.sin, x).total_bytes * x)(1.0)


def test_saved_residuals_of_a_custom_vjp_are_its_residuals():
    @fd.custom_vjp
    def f(x):
        return fnp.sin(x) * 2.0
    f.defvjp(lambda x: (fnp.sin(x) * 2.0, fnp.cos(x)), lambda c, g: (2.0 * g * c,))
    report = fd.saved_residuals(lambda x: fnp.sum(f(x)), np.ones(5))
    assert [(r.shape, r.primitive) for r in report] == [((5,), "cos")]

    @fd.custom_vjp
    def branchy(x):   # Python control flow on values: runs as Python, still inspectable
        return fnp.exp(x) if float(x[0]) > 0 else x
    branchy.defvjp(lambda x: (branchy(x), branchy(x)), lambda y, g: (g * y,))
    report = fd.saved_residuals(lambda x: fnp.sum(branchy(x)), np.ones(3))
    assert [(r.shape, r.primitive) for r in report] == [((3,), "exp")]


def test_checkpoint_composes_with_every_transform():
    Ws = weights(4)
    loss_c, loss_p = mlp(4, 2), mlp(4)
    g = fd.grad(loss_p)(Ws, X)
    for got in (fd.jit(fd.grad(loss_c))(Ws, X), fd.grad(fd.jit(loss_c))(Ws, X)):
        for a, b in zip(got, g):
            np.testing.assert_allclose(a, b, rtol=1e-13)
    xs = np.stack([X[:4], 2 * X[:4]])
    np.testing.assert_allclose(fd.vmap(fd.grad(loss_c, argnums=1), in_axes=(None, 0))(Ws, xs),
                               fd.vmap(fd.grad(loss_p, argnums=1), in_axes=(None, 0))(Ws, xs),
                               rtol=1e-13)
    np.testing.assert_allclose(fd.grad(lambda x: fd.vmap(lambda r: loss_c(Ws, r))(x).sum())(xs),
                               fd.grad(lambda x: fd.vmap(lambda r: loss_p(Ws, r))(x).sum())(xs),
                               rtol=1e-13)
    v = rng.standard_normal(X.shape)
    np.testing.assert_allclose(fd.jvp(lambda x: loss_c(Ws, x), (X,), (v,))[1],
                               fd.jvp(lambda x: loss_p(Ws, x), (X,), (v,))[1], rtol=1e-13)
    x0 = X[:2]
    np.testing.assert_allclose(fd.hessian(lambda x: loss_c(Ws, x))(x0),
                               fd.hessian(lambda x: loss_p(Ws, x))(x0), atol=1e-13)
    np.testing.assert_allclose(fd.grad(lambda x: fd.grad(lambda y: loss_c(Ws, y))(x).sum())(x0),
                               fd.grad(lambda x: fd.grad(lambda y: loss_p(Ws, y))(x).sum())(x0),
                               atol=1e-13)


def test_recomputation_stays_apart_from_the_forward_pass_under_jit():
    Ws = weights(4)
    lowered = fd.jit(fd.grad(mlp(4, 2))).lower(Ws, X)
    text = str(lowered.optimized_jaxpr)
    assert "checkpoint[" in text and "name='block_lin_T'" in text
    program = fd.make_jaxpr(fd.grad(mlp(4, 2)))(Ws, X)
    check_jaxpr(program.jaxpr)
    inner = [e.params["jaxpr"] for e in program.eqns if e.primitive.name == "checkpoint"]
    assert inner and all("tanh" in str(j) for j in inner)   # the backward recomputes tanh


def test_checkpoint_arguments_and_bad_input():
    @fd.checkpoint(policy="dots_saveable", static_argnums=(1,))
    def power(x, n):
        for _ in range(n):
            x = fnp.sin(x)
        return x
    assert fd.grad(power)(0.5, 2) == pytest.approx(np.cos(np.sin(0.5)) * np.cos(0.5))
    assert fd.remat is fd.checkpoint
    with pytest.raises(InvalidArgumentError, match=r"unknown policy 'save_dots'.*everything_"
                                                   r"saveable, nothing_saveable, dots_saveable"):
        fd.checkpoint(fnp.sin, policy="save_dots")
    with pytest.raises(InvalidArgumentError, match="static_argnums"):
        fd.grad(lambda x: fd.checkpoint(lambda a, s: a)(x, "s"))(1.0)
    with pytest.raises(ConcretizationError, match="checkpoint stages"):
        fd.grad(fd.checkpoint(lambda x: x if float(x) > 0 else -x))(1.0)
    with pytest.raises(InvalidArgumentError, match="string name"):
        fd.checkpoint_name(np.ones(2), 3)


# ---------------------------------------------------------------------------
# cost_analysis


def test_dense_layer_costs_2bnm_forward_and_4bnm_backward():
    B, n, m = 16, 7, 5
    report = fd.cost_analysis(lambda x, W: x @ W, np.ones((B, n)), np.ones((n, m)))
    assert report.forward.flops == 2 * B * n * m
    assert report.backward.flops == 4 * B * n * m
    assert report.vjp.flops == 6 * B * n * m
    assert report.backward.by_primitive["dot_general"]["count"] == 2
    only_x = fd.cost_analysis(lambda x, W: x @ W, np.ones((B, n)), np.ones((n, m)), argnums=0)
    assert only_x.backward.flops == 2 * B * n * m
    assert report.jvp.flops == 3 * 2 * B * n * m + B * m   # x@W, dx@W, x@dW and their sum


def test_mlp_backward_costs_about_twice_the_forward():
    widths = [64, 128, 128, 10]
    Ws = [rng.standard_normal((a, b)) for a, b in zip(widths, widths[1:])]

    def net(Ws, x):
        for W in Ws[:-1]:
            x = fnp.tanh(x @ W)
        return fnp.sum((x @ Ws[-1]) ** 2)
    report = fd.cost_analysis(net, Ws, np.ones((32, 64)))
    ratio = report.backward.flops / report.forward.flops
    assert 1.8 < ratio < 2.2, ratio
    assert "backward / forward flops" in str(report)


def test_checkpointing_trades_flops_for_peak_memory():
    Ws = weights(16)
    plain = fd.cost_analysis(mlp(16), Ws, X)
    ckpt = fd.cost_analysis(mlp(16, 4), Ws, X)
    assert ckpt.forward.flops == plain.forward.flops
    assert ckpt.backward.flops > plain.backward.flops            # recomputation
    assert ckpt.peak_backward_bytes < 0.5 * plain.peak_backward_bytes
    assert ckpt.residual_bytes < 0.3 * plain.residual_bytes
    assert plain.peak_backward_bytes >= plain.residual_bytes


def test_memory_example_runs(capsys):
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "memory.py")
    spec = importlib.util.spec_from_file_location("memory_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(tokens=16, d=16, n_blocks=2)
    out = capsys.readouterr().out
    assert "saved residuals of loss" in out and "cost analysis of loss" in out
    plain = results["no checkpoint"]
    for label, r in results.items():
        assert r["grad_max_diff"] < 1e-12, label
        if label != "no checkpoint":
            assert r["intermediate_bytes"] < plain["intermediate_bytes"], label
            assert r["backward_flops"] > plain["backward_flops"], label
    assert "dot_general" in results["checkpoint, dots_saveable"]["producers"]
    assert "name" in results["checkpoint, save_only_these_names('attn_out')"]["producers"]


def test_module_doctests():
    # funcdiff.remat.checkpoint is the function; the modules are found by name
    for module in (sys.modules["funcdiff.remat.checkpoint"], sys.modules["funcdiff.remat.policies"],
                   sys.modules["funcdiff.inspect"]):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted >= 1 and result.failed == 0, module.__name__
