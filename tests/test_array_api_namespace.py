"""The array API namespace of tracers (funcdiff.numpy.array_api), and libraries
written against the standard: scipy with SCIPY_ARRAY_API=1, run in a fresh
process (scipy reads the variable when it is first imported)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import InvalidArgumentError, TracerArrayConversionError

xp = fnp.array_api
X = np.array([1.0, 3.0, 2.0, 3.0])


def test_tracers_return_the_namespace():
    seen = []
    fd.grad(lambda x: seen.append(x.__array_namespace__()) or x.sum())(X)
    fd.jit(lambda x: seen.append(x.__array_namespace__(api_version="2023.12")) or x)(X)
    assert seen == [xp, xp]
    assert xp.__array_api_version__ == "2024.12"
    with pytest.raises(InvalidArgumentError, match="2024.12"):
        fd.jit(lambda x: x.__array_namespace__(api_version="2019.01"))(X)


def test_array_attributes_of_the_standard():
    def f(x):
        assert x.device == "cpu" and x.to_device("cpu") is x
        with pytest.raises(InvalidArgumentError, match="cpu"):
            x.to_device("gpu")
        assert x.mT.shape == (4, 1) and xp.isdtype(x.dtype, "real floating")
        return x
    fd.jit(f)(X[None])


@pytest.mark.parametrize("wrap", [lambda f: f, fd.jit], ids=["eager", "jit"])
def test_descending_sorts_are_stable_and_differentiable(wrap):
    np.testing.assert_array_equal(wrap(lambda x: xp.argsort(x, descending=True))(X),
                                  [1, 3, 2, 0])  # the two 3.0s keep their order
    np.testing.assert_array_equal(wrap(lambda x: xp.sort(x, descending=True))(X),
                                  [3.0, 3.0, 2.0, 1.0])
    weights = np.array([4.0, 3.0, 2.0, 1.0])
    g = wrap(fd.grad(lambda x: xp.sum(xp.sort(x, descending=True) * weights)))(X)
    np.testing.assert_array_equal(g, [1.0, 4.0, 2.0, 3.0])
    m = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    np.testing.assert_array_equal(wrap(lambda a: xp.argsort(a, axis=0, descending=True))(m),
                                  np.argsort(-m, axis=0, kind="stable"))


def test_dtype_queries_take_arrays_and_tracers():
    def f(x):
        assert xp.can_cast(x, xp.float64) and not xp.can_cast(x, xp.int32)
        assert xp.finfo(x).eps == np.finfo(np.float32).eps
        return x
    fd.jit(f)(X.astype(np.float32))
    assert xp.iinfo(xp.int8).max == 127 and xp.iinfo(np.zeros(2, np.int16)).bits == 16
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64
    assert info.devices() == ["cpu"] and info.capabilities()["data-dependent shapes"] is False
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8",
                                                 "uint16", "uint32", "uint64"}


def test_creation_inside_a_transform_gives_arrays_that_take_writes():
    assert isinstance(xp.zeros(3), np.ndarray)  # outside: numpy's

    def f(x):
        out = xp.zeros(4)
        out[0] = x[1] ** 2
        out[1:] = x[:-1] * 2.0
        lifted = xp.asarray([1.0, 2.0, 3.0, 4.0])  # a constant of the namespace
        return xp.sum(out * lifted)
    want = np.array([4.0, 2 * 3.0 + 6.0, 8.0, 0.0])  # x1 ** 2 + 4 x0 + 6 x1 + 8 x2
    for transform in (fd.grad, lambda f: fd.jit(fd.grad(f)), fd.jacfwd):
        np.testing.assert_allclose(transform(f)(X), want)


def test_fft_frequencies_take_the_standards_dtype():
    assert xp.fft.fftfreq(4, d=0.5, dtype=xp.float32).dtype == np.float32
    np.testing.assert_array_equal(xp.fft.rfftfreq(5), np.fft.rfftfreq(5))


def test_a_scipy_conversion_names_the_scipy_line_and_the_array_api_route():
    pytest.importorskip("scipy")
    code = textwrap.dedent("""
        import numpy as np, funcdiff as fd, scipy.stats
        try:
            fd.grad(lambda x: scipy.stats.skew(x))(np.array([1.0, 2.0, 4.0]))
        except fd.errors.TracerArrayConversionError as e:
            print(e)
    """)
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    message = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, timeout=120).stdout
    assert "scipy" in message and ".py:" in message and "SCIPY_ARRAY_API=1" in message
    assert "reached from <string>:4" in message
    assert issubclass(TracerArrayConversionError, fd.FunctionalDiffError)


SCIPY_CHECKS = """
import numpy as np, funcdiff as fd, funcdiff.numpy.array_api as xp
import scipy.optimize as so, scipy.special as sp, scipy.stats as st
from funcdiff.errors import ConcretizationError

x = np.array([1.3, 0.7, 0.8, 1.9, 1.2])

def central(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])

def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)

# the Rosenbrock function and its hand-written derivatives, traced unmodified
close(fd.grad(so.rosen)(x), so.rosen_der(x))
close(fd.jit(fd.grad(so.rosen))(x), so.rosen_der(x))
close(fd.hessian(so.rosen)(x), so.rosen_hess(x))
close(fd.jacrev(so.rosen_der)(x), so.rosen_hess(x))    # rosen_der fills an array in place
close(fd.jit(fd.jacfwd(so.rosen_der))(x), so.rosen_hess(x))
p = np.linspace(-1.0, 1.0, 5)
close(fd.jvp(so.rosen_der, (x,), (p,))[1], so.rosen_hess_prod(x, p))
close(fd.jacrev(lambda v: so.rosen_hess(v) @ p)(x), fd.jacrev(fd.jacrev(so.rosen_der))(x) @ p)

# logsumexp and softmax: their derivatives in closed form
s = sp.softmax(x)
close(fd.grad(sp.logsumexp)(x), s)
close(fd.jit(fd.grad(sp.logsumexp))(x), s)
close(fd.hessian(sp.logsumexp)(x), np.diag(s) - np.outer(s, s))
close(fd.jacfwd(sp.softmax)(x), np.diag(s) - np.outer(s, s))
close(fd.jit(fd.jacrev(sp.log_softmax))(x), np.eye(5) - s)
b = np.arange(1.0, 6.0)
weighted = lambda v: sp.logsumexp(v, b=xp.asarray(b))  # constants through the namespace
close(fd.grad(weighted)(x), b * np.exp(x) / np.sum(b * np.exp(x)))
m = np.stack([x, x[::-1]])
close(fd.grad(lambda v: sp.logsumexp(v, axis=1).sum())(m), sp.softmax(m, axis=1))

# scipy.stats' pure-Python statistics, eagerly and under jit, against central differences
for name, f in [("skew", st.skew), ("kurtosis", st.kurtosis), ("gmean", st.gmean),
                ("variation", st.variation), ("sem", st.sem), ("tvar", st.tvar),
                ("zscore", lambda v: (st.zscore(v) ** 3).sum()),
                ("trim_mean", lambda v: st.trim_mean(v, 0.1)),
                ("differential_entropy", st.differential_entropy),
                ("moment", lambda v: st.moment(v, 3)), ("hmean", st.hmean)]:
    close(fd.grad(f)(x), central(f, x), 1e-6)
    try:
        close(fd.jit(fd.grad(f))(x), fd.grad(f)(x))
    except ConcretizationError:
        assert name in ("moment", "hmean"), name  # they branch on values in Python
print("ok")
"""


def run_with_the_array_api(code: str) -> None:
    """Run ``code`` in a fresh process with SCIPY_ARRAY_API=1; it must print ok."""
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_scipy_array_api_functions_trace_unmodified():
    pytest.importorskip("scipy")
    run_with_the_array_api(SCIPY_CHECKS)


SKLEARN_CHECKS = """
import numpy as np, funcdiff as fd, sklearn
from sklearn.metrics import pairwise
from funcdiff.errors import ConcretizationError, TracerConversionError
sklearn.set_config(array_api_dispatch=True)
xp = fd.numpy.array_api
rng = np.random.default_rng(0)
X, Y = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))

def central(f, x, eps=1e-6):
    out = np.zeros(x.size)
    for k in range(x.size):
        e = np.zeros(x.size); e[k] = eps
        out[k] = (f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / (2 * eps)
    return out.reshape(x.shape)

for kernel in (pairwise.rbf_kernel, pairwise.linear_kernel, pairwise.polynomial_kernel,
               pairwise.euclidean_distances, pairwise.cosine_similarity,
               pairwise.sigmoid_kernel, pairwise.laplacian_kernel):
    f = lambda x: kernel(x, xp.asarray(Y)).sum()
    g = fd.grad(f)(X)
    np.testing.assert_allclose(g, central(lambda x: float(kernel(x, Y).sum()), X), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(fd.jacfwd(lambda x: kernel(x, xp.asarray(Y)))(X).sum((0, 1)), g,
                               rtol=1e-10, atol=1e-12)
    try:  # sklearn checks its inputs' values in Python: under jit that is refused, by name
        fd.jit(f)(X)
        raise AssertionError("jit traced a value check")
    except ConcretizationError as e:
        assert "sklearn" in str(e)
try:  # sklearn's metrics return Python floats: the conversion is refused, naming sklearn's line
    fd.grad(lambda p: sklearn.metrics.mean_squared_error(xp.asarray(Y[:4, 0]), p))(X[:, 0].copy())
    raise AssertionError("a derivative was dropped")
except TracerConversionError as e:
    assert "sklearn" in str(e)
print("ok")
"""


def test_scikit_learn_with_array_api_dispatch():
    pytest.importorskip("sklearn")
    run_with_the_array_api(SKLEARN_CHECKS)
