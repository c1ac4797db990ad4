"""funcdiff on dask arrays: every transform builds a lazy dask graph equal to numpy's result.

A table of programs (logistic regression, an MLP, softmax cross-entropy,
reductions, indexing and joins) runs under grad, value_and_grad, jvp, vmap,
hvp, jacfwd/jacrev and jit on dask arrays of several chunkings (ragged ones
included) and is compared with the same transform on the numpy arrays. While
a transform runs, converting a dask array to numpy raises, so a hidden
``np.asarray`` (which would compute the graph) fails the test; the results
must still be lazy dask arrays. Then: a LocalCluster with two worker
processes, the memory bound on a gradient over 1.28 GB, and bad input.
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.backends import BackendError
from funcdiff.errors import ConcretizationError, LazyComputeWarning

da = pytest.importorskip("dask.array")

from backend_programs import D, PROGRAMS, TRANSFORMS, W_NP, X_NP, Y_NP, logistic

CHUNKINGS = [(23, D), (8, D), ((10, 6, 7), (3, 1))]  # one chunk, even rows, ragged both ways


def to_dask(x, chunks):
    if x.ndim == 1:
        chunks = chunks[:1]
    return da.from_array(x, chunks=chunks)


@pytest.fixture
def no_hidden_compute(monkeypatch):
    """Converting a dask array to numpy raises while the test runs (results are
    computed with ``.compute()``, which does not go through ``__array__``)."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a dask array was converted to numpy inside funcdiff")
    monkeypatch.setattr(da.Array, "__array__", refuse)


def computed(tree):
    return fd.tree_util.tree_map(lambda x: x.compute() if isinstance(x, da.Array) else x, tree)


def lazy_leaves(tree):
    return [isinstance(x, da.Array) for x in fd.tree_util.tree_leaves(tree)]


CLOSED_OVER = {  # dask arrays may also be closed over (numpy dispatches to them)
    "jacfwd_closed_over": lambda f, p, X, y: fd.jacfwd(lambda w: fnp.tanh(X @ w))(W_NP),
    "jit_closed_over": lambda f, p, X, y: fd.jit(lambda w: fd.grad(logistic)(w, X, y))(W_NP),
    "jvp_closed_over": lambda f, p, X, y: fd.jvp(lambda X: f(p, X, y), (X,), (X * 0.5,)),
}


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=["one_chunk", "even", "ragged"])
@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("transform", [*TRANSFORMS, *CLOSED_OVER])
def test_dask_equals_numpy(transform, program, chunks, no_hidden_compute):
    f, params = PROGRAMS[program]
    run = {**TRANSFORMS, **CLOSED_OVER}[transform]
    expected = run(f, params, X_NP, Y_NP)
    out = run(f, params, to_dask(X_NP, chunks), to_dask(Y_NP, chunks))
    leaves = lazy_leaves(out)
    assert any(leaves), f"{transform} of a dask program returned no dask array"
    got = computed(out)
    fd.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13),
                          got, expected)


def test_python_branch_computes_once_with_a_warning_and_jit_refuses():
    X = da.from_array(X_NP, chunks=(8, D))

    def f(w):
        s = fnp.sum(X @ w)
        return s * 2.0 if s > 0 else -s

    w = np.abs(W_NP) * np.sign(X_NP.sum(0))  # any w: the branch is taken either way
    expected = fd.grad(lambda w: (lambda s: s * 2.0 if s > 0 else -s)(fnp.sum(X_NP @ w)))(w)
    with pytest.warns(LazyComputeWarning, match="bool\\(\\) on a value computed from dask"):
        first = fd.grad(f)(w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per library
        fd.grad(f)(w)
    np.testing.assert_allclose(computed(first), expected)
    with pytest.raises(ConcretizationError, match="bool\\(\\)"):
        fd.jit(fd.grad(f))(w)


def test_unknown_chunk_sizes_name_compute_chunk_sizes():
    X = da.from_array(X_NP, chunks=(8, D))
    rows = X[X[:, 0] > 0]
    with pytest.raises(BackendError, match="compute_chunk_sizes"):
        fd.grad(lambda w: fnp.sum(rows @ w))(W_NP)
    rows.compute_chunk_sizes()
    np.testing.assert_allclose(fd.grad(lambda w: fnp.sum(rows @ w))(W_NP).compute(),
                               X_NP[X_NP[:, 0] > 0].sum(0))


@pytest.mark.parametrize("transform", ["grad", "jit"])
def test_two_foreign_libraries_are_refused_by_name(transform):
    strict = pytest.importorskip("array_api_strict")
    X = da.from_array(X_NP, chunks=(8, D))
    f = fd.grad(logistic) if transform == "grad" else fd.jit(logistic)
    with pytest.raises(BackendError, match="logistic.* two array libraries, array_api_strict and dask"):
        f(strict.asarray(W_NP), X, Y_NP)


def test_a_numpy_parameter_with_dask_data_gives_dask():
    out = fd.grad(logistic)(W_NP, da.from_array(X_NP, chunks=(8, D)), Y_NP)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), fd.grad(logistic)(W_NP, X_NP, Y_NP), rtol=1e-12)


def test_jit_grad_on_a_local_cluster_equals_numpy():
    distributed = pytest.importorskip("distributed")
    expected = fd.grad(logistic)(W_NP, X_NP, Y_NP)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        X = da.from_array(X_NP, chunks=(8, D))
        y = da.from_array(Y_NP, chunks=8)
        g = fd.jit(fd.grad(logistic))(W_NP, X, y)
        assert isinstance(g, da.Array)
        future = client.compute(g)
        np.testing.assert_allclose(future.result(timeout=60), expected, rtol=1e-12)
        ran_on = client.run(lambda: True)  # both workers answered: the tasks had places to run
        assert len(ran_on) == 2


MEMORY_PROGRAM = textwrap.dedent("""
    import resource, numpy as np, dask.array as da, funcdiff as fd, funcdiff.numpy as fnp
    n, d = 16_000_000, 10  # 1.28 GB of float64, generated chunk by chunk
    X = da.random.default_rng(0).standard_normal((n, d), chunks=(500_000, d))
    y = (X @ np.linspace(-1.0, 1.0, d) > 0).astype(np.float64)
    def loss(w, X, y):
        z = X @ w
        return fnp.mean(fnp.logaddexp(0.0, z) - y * z)
    g = fd.grad(loss)(np.zeros(d), X, y).compute(scheduler="threads", num_workers=2)
    assert g.shape == (d,) and np.all(np.isfinite(g)) and g[0] > 0 > g[-1], g
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
""")


def test_gradient_over_1_28_gb_streams_in_under_700_mb():
    out = subprocess.run([sys.executable, "-c", MEMORY_PROGRAM], capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    peak_mb = int(out.stdout.split()[-1])
    assert peak_mb < 700, f"peak resident memory {peak_mb} MB"


def test_the_dask_logistic_regression_example_learns():
    pytest.importorskip("distributed")
    spec = importlib.util.spec_from_file_location(
        "examples_dask_logistic_regression",
        pathlib.Path(__file__).parent.parent / "examples" / "dask_logistic_regression.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main(rows=20_000, chunk_rows=6_000, steps=3, verbose=False)
    losses = result["losses"]
    assert losses[0] == pytest.approx(np.log(2.0)) and losses[2] < losses[1] < losses[0]
    cosine = result["w"] @ result["w_true"] / np.linalg.norm(result["w"]) / np.linalg.norm(
        result["w_true"])
    assert cosine > 0.99
