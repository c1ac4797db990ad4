"""The control-flow examples run at a small size and reproduce their known results."""

from __future__ import annotations

import importlib.util
import os

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load(name: str):
    """Import ``examples/<name>.py`` as a module (the examples are scripts, not a package)."""
    path = os.path.join(EXAMPLES, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"examples_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ode_rk4_gradients_match_finite_differences(capsys):
    result = load("ode_rk4").main(n_steps=40, batch=3)
    assert result["err_y0"] < 1e-6 and result["err_params"] < 1e-5
    assert result["err_jac"] < 1e-10 and result["err_vmap"] < 1e-12
    assert "RK4 with 40 steps" in capsys.readouterr().out


def test_root_finder_gradient_matches_implicit_function(capsys):
    result = load("root_finder").main(n=5)
    assert result["err_implicit"] < 1e-12 and result["err_fd"] < 1e-7
    assert result["err_jit"] < 1e-12 and result["err_vmap"] < 1e-12
    counts = np.asarray(result["counts"])
    assert counts.min() < counts.max()  # members needed different numbers of steps
    assert "Newton steps" in capsys.readouterr().out
