"""Every benchmark runs at a tiny size (``--quick``); no timing is asserted.

Benchmarks are run by hand (``python benchmarks/run.py``); this only checks
that each still runs, checks its own results against numpy, and reports.
"""

from __future__ import annotations

import importlib
import math
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

run = importlib.import_module("run")
TIMING_DEFAULTS = dict(run.common.best_time.__kwdefaults__)   # before any quick run


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """benchmarks/run.py --quick, once, writing its JSON into a temporary folder."""
    out_dir = tmp_path_factory.mktemp("results")
    return run.main(["--quick", "--no-compare", "--results-dir", str(out_dir)]), out_dir


def test_run_discovers_every_benchmark_module():
    names = {name for name, _ in run.discover()}
    files = {f[len("bench_"):-3] for f in os.listdir(BENCH)
             if f.startswith("bench_") and f.endswith(".py")}
    assert {"fwd_rev", "reverse"} <= names == files


def test_every_benchmark_runs_quick_and_writes_json(quick_run, capsys):
    outcomes, out_dir = quick_run
    failed = {name: o["error"] for name, o in outcomes.items() if "error" in o}
    assert not failed
    for name, o in outcomes.items():
        assert isinstance(o["result"], dict)
        assert os.path.exists(os.path.join(out_dir, f"{name}.json"))


def test_quick_mode_restores_the_timing_defaults(quick_run):
    assert run.common.best_time.__kwdefaults__ == TIMING_DEFAULTS


def test_fwd_rev_quick_result(quick_run):
    result = quick_run[0]["fwd_rev"]["result"]
    assert [(r["n"], r["m"]) for r in result["shapes"]] == [(4, 40), (20, 20), (40, 4)]
    for r in result["shapes"]:
        assert r["auto_mode"] == ("fwd" if r["n"] <= r["m"] else "rev")
        assert r["jacfwd_s"] > 0 and r["jacrev_s"] > 0
    rows = importlib.import_module("bench_fwd_rev").summary(result)
    assert len(rows) == 5 and all(len(row) == 3 for row in rows)


def test_fwd_rev_hand_written_jacobians_agree():
    b = importlib.import_module("bench_fwd_rev")
    x, weights = b.make_problem(7, 5, 6)
    import numpy as np
    np.testing.assert_allclose(b.numpy_jacobian_forward_order(x, weights),
                               b.numpy_jacobian_reverse_order(x, weights), rtol=1e-12)
    assert b.numpy_jacobian_forward_order(x, weights).shape == (5, 7)


def test_crossover_interpolates_between_the_shapes_that_change_order():
    b = importlib.import_module("bench_fwd_rev")
    rows = [{"n": 10, "m": 1000, "fwd_rev_ratio": 0.1}, {"n": 100, "m": 100, "fwd_rev_ratio": 0.5},
            {"n": 1000, "m": 10, "fwd_rev_ratio": 2.0}]
    assert b.crossover(rows) == pytest.approx(math.exp(0.5 * math.log(100)))   # n/m = 10
    assert b.crossover(rows[:2]) is None


def test_summary_without_a_summary_function():
    rows = run.generic_summary({"mlp": [{"batch": 8, "width": 16, "eager_ratio": 2.5, "x_s": 1.0}],
                                "chain": {"ops": 200, "jit_ratio": 0.5}})
    assert rows == [("batch=8, width=16 eager_ratio", "2.5", ""), ("ops=200 jit_ratio", "0.5", "")]


def test_comparison_table_and_summary():
    rows = [{"workload": "jacfwd 4x40", "library": "jax", "seconds": 1e-3, "funcdiff_seconds": 2e-3,
             "funcdiff_variant": "jit", "ratio": 0.5},
            {"workload": "jacfwd 4x40", "library": "torch", "seconds": 8e-3,
             "funcdiff_seconds": 4e-3, "funcdiff_variant": "eager", "ratio": 2.0}]
    text = run.comparison_table(rows)
    assert "funcdiff eager ms" in text and "funcdiff jit ms" in text and "2.00x vs eager" in text
    summary = run.comparison_summary(rows)
    assert summary[0][0].startswith("jax / funcdiff jit") and "0.50x" in summary[0][1]


def test_says_when_no_other_library_is_installed(quick_run, capsys, monkeypatch):
    monkeypatch.setattr(run, "installed_libraries", lambda: {})
    run.main(["--quick", "--only", "no_such_benchmark"])
    assert "funcdiff runs alone" in capsys.readouterr().out


def test_quick_mode_says_it_is_a_smoke_test_and_grades_nothing(quick_run, capsys, monkeypatch):
    monkeypatch.setattr(run, "installed_libraries", lambda: {})
    run.main(["--quick", "--only", "fwd_rev", "--no-compare"])
    out = capsys.readouterr().out
    summary = out[out.index("Summary"):]
    assert "smoke test" in summary and "not graded" in summary
