"""Every example runs at a small size and reproduces its known result."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load(name: str):
    """Import ``examples/<name>.py`` as a module (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}",
                                                  os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_has_a_test():
    """Each examples/<name>.py is named by some test module (this one or another)."""
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    texts = []
    for f in os.listdir(tests_dir):
        if f.endswith(".py"):
            with open(os.path.join(tests_dir, f)) as fh:
                texts.append(fh.read())
    examples = [f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py")]
    untested = [e for e in examples
                if not any(f'"{e}"' in t or f"{e}.py" in t for t in texts)]
    assert not untested, f"examples that no test runs: {untested}"


def test_tour_runs(capsys, tmp_path):
    load("tour").main(n_tall=4, m_tall=40, page=str(tmp_path / "tour.html"))
    assert ">= 0.7864</text>" in (tmp_path / "tour.html").read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert "jacobian(auto) picks 'fwd'" in out and "jacobian(auto) picks 'rev'" in out
    assert "mean equals the full-batch gradient / 5: True" in out


def test_scalar_engine_matches_the_hand_calculation(capsys, tmp_path):
    ours = load("scalar_engine").main(page=str(tmp_path / "engine.html"))
    assert "dL/da" in capsys.readouterr().out
    page = (tmp_path / "engine.html").read_text(encoding="utf-8")
    assert page.count('class="node eqn bwd"') == 4 and "gradient a</text>" in page
    assert ">= 0.7864</text>" in page and ">= 1.573</text>" in page
    assert ours["dL/da"] == pytest.approx(0.7864, abs=5e-5)
    assert ours["dL/db"] == pytest.approx(1.5729, abs=5e-5)
    assert ours["dL/dc"] == pytest.approx(0.4621, abs=5e-5)
    assert ours["dL/de"] == pytest.approx(1.5729, abs=5e-5)   # the node e = a*b + a
    assert ours["dL/df"] == pytest.approx(2.0, abs=1e-12)      # the node f = tanh(e)
    assert ours["L"] == pytest.approx(2 * np.tanh(0.5), abs=1e-12)


def test_xor_is_learned():
    result = load("xor").main(steps=300, verbose=False)
    assert result["accuracy"] == 1.0
    assert result["loss"] < 1e-3
    np.testing.assert_allclose(result["probs"], [0, 1, 1, 0], atol=0.05)


def test_spirals_reach_full_training_accuracy():
    # the full example is 100 points per class for 500 steps; here a smaller, faster setting
    result = load("spirals").main(steps=150, points_per_class=40, verbose=False)
    assert result["accuracy"] >= 0.99
    assert result["loss"] < 0.05


def test_spiral_data_has_no_point_shared_between_classes():
    x, labels = load("spirals").make_spirals(50)
    assert x.shape == (150, 2) and np.bincount(labels).tolist() == [50, 50, 50]
    distances = np.linalg.norm(x[:, None] - x[None], axis=-1) + np.eye(len(x))
    assert distances.min() > 1e-3


def test_transformer_block_gradient_clipping_and_training():
    result = load("transformer_block").main(steps=8, d_model=16, seq_len=6, batch=4,
                                            verbose=False)
    assert result["grad_rel_err"] < 1e-6
    assert result["grad_norms"][0] > 1.0                     # the first step is clipped ...
    assert result["clipped_norm"] <= 1.0 + 1e-9              # ... and no clipped norm exceeds 1
    assert result["losses"][-1] < 0.5 * result["losses"][0]


def test_transformer_block_parts():
    tb = load("transformer_block")
    import funcdiff as fd
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8))
    y = tb.layer_norm(x, np.ones(8), np.zeros(8))
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, rtol=1e-4)
    # the gradient through layer_norm is orthogonal to the all-ones direction
    g = fd.grad(lambda x: np.sum(tb.layer_norm(x, np.ones(8), np.zeros(8)) * np.arange(8.0)))(x)
    np.testing.assert_allclose(g.sum(-1), 0, atol=1e-10)
    np.testing.assert_allclose(tb.gelu(np.array([-10.0, 0.0, 10.0])), [0, 0, 10], atol=1e-12)
    clipped, norm = tb.clip_by_global_norm({"a": np.full(4, 3.0)}, 1.0)
    assert norm == pytest.approx(6.0) and tb.global_norm(clipped) == pytest.approx(1.0)


@pytest.mark.parametrize("use_scipy", [True, False])
def test_curvature(use_scipy):
    if use_scipy:
        pytest.importorskip("scipy")
    result = load("curvature").main(n=6, use_scipy=use_scipy, verbose=False)
    assert result["hvp_vs_hessian"] < 1e-10
    assert result["fd_errors"][1e-4] < 1e-6
    assert result["lambda_power"] == pytest.approx(result["lambda_exact"], rel=1e-8)
    np.testing.assert_allclose(result["x_min"], np.ones(6), atol=1e-6)


def test_maml_meta_gradient_is_a_gradient_of_a_gradient():
    result = load("maml").main(meta_steps=40, tasks=4, verbose=False)
    assert result["err_fd"] < 1e-5
    assert result["err_closed"] < 1e-10
    assert result["cosine_first_order"] < 0.99       # the Hessian term matters
    after = [h[1] for h in result["history"]]
    assert after[-1] < after[0]                      # meta-training improves adaptation


def test_gradient_check_sweep_shows_truncation_and_round_off():
    result = load("gradient_check").main(points=13, verbose=False)
    assert result["hand_ok"] and result["hand_slip"] > 0.1 and result["caught"]
    sweep = result["sweep"]
    assert 1e-10 <= result["best_forward_step"] <= 1e-6
    assert 1e-8 <= result["best_central_step"] <= 1e-4
    for errors in (sweep["forward"], sweep["central"]):   # the V: both ends far above the best
        assert errors[0] > 100 * errors.min() and errors[-1] > 100 * errors.min()
    # in the truncation regime the central difference is second order
    assert sweep["central"][0] / sweep["central"][1] == pytest.approx(100, rel=0.05)


def test_examples_run_as_scripts():
    import subprocess
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "scalar_engine.py"), "--page",
                          os.path.join(tempfile.mkdtemp(), "engine.html")],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "0.7864" in out and "1.5729" in out and "0.4621" in out
