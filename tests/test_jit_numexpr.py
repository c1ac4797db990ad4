"""jit's fusion of elementwise arithmetic into numexpr expressions (compiler.elementwise_fusion).

Every fused form is checked against the same program compiled without fusion
and against eager evaluation: bit for bit, since the fused chain performs the
same IEEE operations in the same order. numexpr is in the dev extra; without it
these tests skip (the compiler then never fuses).
"""

from __future__ import annotations

import sys
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.compiler import elementwise_fusion

pytest.importorskip("numexpr", reason="numexpr (funcdiff[fast]) is not installed")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_random_programs import build, programs  # noqa: E402

BIG = (256, 256)  # 65536 elements: above MIN_ELEMENTS


def _both(f, *args):
    """(fused result, unfused result, fused chains) of jit(f)(*args)."""
    fused = fd.jit(f)
    low = fused.lower(*args)
    fd.config.update("jit_numexpr", False)
    try:
        plain = fd.jit(f)
        unfused = plain(*args)
        assert plain.lower(*args).fused_chains == []
    finally:
        fd.config.update("jit_numexpr", True)
    return fused(*args), unfused, low.fused_chains


def _equal(a, b):
    for x, y in zip(fd.tree_util.tree_leaves(a), fd.tree_util.tree_leaves(b)):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_array_equal(x, y)


rng = np.random.default_rng(0)
X, Y, Z = (rng.standard_normal(BIG) for _ in range(3))
B = rng.standard_normal(BIG[1])

CASES = [  # (name, function, arguments, number of fused chains)
    ("chain", lambda x, y: (x * y + 2.0) / (1.0 - y), (X, Y), 1),
    ("tanh_backward", lambda c, y: c * (1.0 - y * y), (X, Y), 1),
    ("broadcast_leaf", lambda x, b: -(x + b) * x, (X, B), 1),
    ("shared_intermediate", lambda x, y: ((x * y) + 1.0) * ((x * y) - 1.0), (X, Y), 1),
    ("two_outputs", lambda x, y: ((x + y) * 2.0, (x - y) * 3.0), (X, Y), 2),
    ("transcendental_splits", lambda x, y: fnp.tanh(x * y + 1.0) * 2.0 - y, (X, Y), 2),
]


@pytest.mark.parametrize("name, f, args, chains", CASES, ids=[c[0] for c in CASES])
def test_fused_programs_equal_unfused_and_eager(name, f, args, chains):
    fused, unfused, found = _both(f, *args)
    assert len(found) == chains, found
    _equal(fused, unfused)
    _equal(fused, f(*args))


def test_the_backward_pass_of_tanh_fuses_with_its_producer():
    def loss(w, x):
        return fnp.sum(fnp.tanh(x @ w) ** 2)
    w = rng.standard_normal((256, 256)) / 16
    g = fd.jit(fd.grad(loss))
    chains = g.lower(w, X).fused_chains
    assert chains and all("f64[256,256]" in c for c in chains)
    assert "fused (numexpr)" in g.lower(w, X).as_text()
    _equal(g(w, X), _both(fd.grad(loss), w, X)[1])
    np.testing.assert_allclose(g(w, X), fd.grad(loss)(w, X), rtol=1e-12)


def test_float32_stays_float32_and_matches():
    x, y = X.astype(np.float32), Y.astype(np.float32)
    fused, unfused, found = _both(lambda x, y: (x * y + 2.0) * (x - 0.5), x, y)
    assert found and fused.dtype == np.float32
    _equal(fused, unfused)


def test_nan_and_inf_propagate_as_in_numpy():
    x = X.copy()
    x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    y = Y.copy()
    y[0, 3] = 0.0
    with np.errstate(all="ignore"):
        fused, unfused, found = _both(lambda x, y: (x * y - x) / y, x, y)
    assert found
    _equal(fused, unfused)
    assert np.isnan(fused[0, 0]) and np.isnan(fused[0, 3])


def test_small_arrays_and_single_operations_are_not_fused():
    small = np.ones((10, 10))
    assert fd.jit(lambda x: (x * 2.0 + 1.0) * x).lower(small).fused_chains == []
    assert fd.jit(lambda x: x * 2.0).lower(X).fused_chains == []
    ints = np.ones(BIG, np.int64)
    assert fd.jit(lambda x: (x * 2 + 1) * x).lower(ints).fused_chains == []


def test_repeated_calls_reuse_buffers_without_changing_results():
    f = fd.jit(lambda x, y: (x * y + 1.0) * (y - 2.0))
    first = f(X, Y)
    for _ in range(3):
        again = f(X, Y)
        assert again is not first
        _equal(again, first)
    np.testing.assert_array_equal(first, (X * Y + 1.0) * (Y - 2.0))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs())
def test_random_programs_fused_at_every_size(monkeypatch_min_elements, program_spec):
    shapes, steps, seed = program_spec
    inputs = tuple(np.random.default_rng(seed).uniform(-1.5, 1.5, size=s) for s in shapes)
    f = build(steps)
    loss = lambda *xs: fnp.sum(f(*xs) ** 2)  # noqa: E731
    argnums = tuple(range(len(inputs)))
    with np.errstate(all="ignore"):
        fused, unfused, _ = _both(fd.value_and_grad(loss, argnums=argnums), *inputs)
    _equal(fused, unfused)


@pytest.fixture(scope="module")
def monkeypatch_min_elements():
    """Fuse every chain, however small, so the small random programs exercise fusion."""
    previous = elementwise_fusion.MIN_ELEMENTS
    elementwise_fusion.MIN_ELEMENTS = 0
    yield
    elementwise_fusion.MIN_ELEMENTS = previous
