"""funcdiff on arrays of libraries numpy does not dispatch to: array_api_strict, and torch where installed.

array_api_strict stands in for "a foreign array type": it has only the array
API standard, and funcdiff computes on it through ``bridge.NamespaceArray``.
The table of tests/backend_programs.py runs under every transform and must
equal numpy's result while the results stay the library's own array type; any
hidden conversion to numpy raises inside the computation (the test forbids
it), so a numpy-only assumption fails here. torch CPU tensors run the same
table when torch is installed (it is not a test dependency); CuPy needs a GPU.
Then: a numpy function with no array API form names itself and the library.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.backends import BackendError

from backend_programs import PROGRAMS, TRANSFORMS, X_NP, Y_NP

strict = pytest.importorskip("array_api_strict")
StrictArray = type(strict.asarray(0.0))


def strict_array(x):
    return strict.asarray(x)


def torch_array(x):
    torch = pytest.importorskip("torch")
    return torch.asarray(x)


LIBRARIES = {"array_api_strict": (strict_array, lambda a: type(a) is StrictArray)}
if importlib.util.find_spec("torch") is not None:
    LIBRARIES["torch"] = (torch_array, lambda a: type(a).__module__.startswith("torch"))


def to_numpy(tree):
    def convert(x):
        if isinstance(x, np.ndarray) or np.isscalar(x):
            return x
        if type(x) is StrictArray:
            return np.from_dlpack(x)
        return x.detach().cpu().numpy()
    return fd.tree_util.tree_map(convert, tree)


@pytest.fixture
def no_hidden_conversion(monkeypatch):
    """Converting an array_api_strict array to numpy raises while the test runs."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("an array_api_strict array was converted to numpy inside funcdiff")
    monkeypatch.setattr(StrictArray, "__array__", refuse)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_foreign_arrays_equal_numpy_and_keep_their_type(transform, program, library,
                                                        no_hidden_conversion):
    convert, is_theirs = LIBRARIES[library]
    f, params = PROGRAMS[program]
    run = TRANSFORMS[transform]
    expected = run(f, params, X_NP, Y_NP)
    out = run(f, params, convert(X_NP), convert(Y_NP))
    leaves = fd.tree_util.tree_leaves(out)
    assert any(is_theirs(x) for x in leaves), [type(x) for x in leaves]
    assert all(is_theirs(x) or isinstance(x, (np.ndarray, float)) for x in leaves)
    fd.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13),
                          to_numpy(out), expected)


def test_a_numpy_only_function_names_itself_and_the_library():
    X = strict.asarray(X_NP)
    with pytest.raises(BackendError, match=r"numpy\.asarray in funcdiff\.primitives\."
                                            r"indexing_scatter\.\S+ .*array_api_strict"):
        fd.grad(lambda w, X: fnp.sum(fnp.at(X * w)[np.array([0, 0])].multiply(2.0)))(1.0, X)


def test_results_of_a_returned_pullback_are_the_librarys_arrays():
    X = strict.asarray(X_NP)
    out, pullback = fd.vjp(lambda X: fnp.tanh(X).sum(axis=0), X)
    assert type(out) is StrictArray
    (ct,) = pullback(strict.ones(out.shape, dtype=strict.float64))
    assert type(ct) is StrictArray
    np.testing.assert_allclose(to_numpy(ct), 1 - np.tanh(X_NP) ** 2)


def test_flattening_cumulative_sum_and_prod_match_numpy():
    X = strict.asarray(X_NP[:3])
    for op in (fnp.cumsum, fnp.cumprod):
        expected = fd.grad(lambda X: fnp.sum(op(X) ** 2))(X_NP[:3])
        got = fd.grad(lambda X: fnp.sum(op(X) ** 2))(X)
        assert type(got) is StrictArray
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-12)


def _gpu_example():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", "gpu.py")
    spec = importlib.util.spec_from_file_location("examples_gpu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gpu_example_trains_the_same_on_a_foreign_array_type():
    example = _gpu_example()
    cpu = example.main("cpu", steps=30, verbose=False)
    foreign = example.main("array_api_strict", steps=30, verbose=False)
    assert foreign["parameter_type"] is StrictArray and cpu["parameter_type"] is np.ndarray
    np.testing.assert_allclose(foreign["losses"], cpu["losses"], rtol=1e-10)
    assert cpu["losses"][-1] < 0.6 * cpu["losses"][0]


@pytest.mark.parametrize("device", ["cupy", "torch"])
def test_the_gpu_example_on_a_gpu(device):
    example = _gpu_example()
    if not example.available(device):
        pytest.skip(f"no {device} GPU on this machine")
    on_gpu = example.main(device, steps=30, verbose=False)
    cpu = example.main("cpu", steps=30, verbose=False)
    np.testing.assert_allclose(on_gpu["losses"], cpu["losses"], rtol=1e-8)


def test_jit_with_debug_nans_keeps_foreign_arrays_and_finds_the_nan():
    X = strict.asarray(X_NP)
    f = fd.jit(lambda X: fnp.sum(fnp.tanh(X)))
    with fd.debug_nans():
        out = f(X)
        assert type(out) is StrictArray
        with pytest.raises(fd.FloatingPointCheckError, match="log produced NaN"):
            with np.errstate(invalid="ignore"):
                fd.jit(lambda X: fnp.log(X - 100.0))(X)
    np.testing.assert_allclose(to_numpy(out), np.tanh(X_NP).sum())


CLOSED_X = np.arange(6.0).reshape(2, 3) / 6.0
W = np.array([0.5, -1.0, 2.0])


def _closed_over_losses(data):
    """Losses of w that close over ``data`` (not an argument): through funcdiff.numpy's
    functions, the traced value on an operator's left, and fnp.asarray(data) on the right."""
    return {
        "matmul": lambda w: fnp.sum(fnp.tanh(fnp.matmul(data, w))),
        "subtract": lambda w: fnp.sum(fnp.exp(-fnp.square(fnp.subtract(data, w)))),
        "traced on the left": lambda w: fnp.sum(fnp.tanh(w @ fnp.transpose(data))),
        "asarray": lambda w: fnp.sum(fnp.asarray(data) @ w) + fnp.sum(fnp.asarray(data) * w),
        "where, dot, take": lambda w: (
            fnp.sum(fnp.where(data > 0.2, w * data, 0.0)) + fnp.mean(fnp.dot(data, w))
            + fnp.sum(fnp.take(data, 0, axis=0) * w)
            + fnp.sum(fnp.take(data, np.array([[0, 1], [1, 0]]), axis=1) * w[0])),
    }


CLOSED_TRANSFORMS = {  # name -> (transform, its argument from the parameter w)
    "grad": (lambda f, w: fd.grad(f)(w), lambda w: w),
    "jit(grad)": (lambda f, w: fd.jit(fd.grad(f))(w), lambda w: w),
    "jvp": (lambda f, w: fd.jvp(f, (w,), (w,))[1], lambda w: w),
    "vmap": (lambda f, ws: fd.vmap(f)(ws), lambda w: np.stack([w, 2 * w])),
}


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("transform", list(CLOSED_TRANSFORMS))
@pytest.mark.parametrize("loss", list(_closed_over_losses(CLOSED_X)))
@pytest.mark.parametrize("parameter", ["foreign", "numpy"])
def test_closed_over_foreign_arrays_compute_in_their_library(transform, loss, parameter, library,
                                                             no_hidden_conversion):
    convert, is_theirs = LIBRARIES[library]
    run, argument = CLOSED_TRANSFORMS[transform]
    expected = run(_closed_over_losses(CLOSED_X)[loss], argument(W))
    f = _closed_over_losses(convert(CLOSED_X))[loss]
    w = convert(argument(W)) if parameter == "foreign" else argument(W)
    out = run(f, w)
    assert is_theirs(out)  # a numpy parameter meets the data's library: its type
    np.testing.assert_allclose(to_numpy(out), expected, rtol=1e-12, atol=1e-13)


def test_take_with_any_index_shape_on_foreign_arrays(no_hidden_conversion):
    x = strict_array(CLOSED_X)
    for indices, axis in ((1, 1), (np.array([[0, 2], [1, 1]]), 1), (np.array([4, 0]), None)):
        got = fd.jit(lambda a: fnp.take(a, indices, axis=axis))(x)
        np.testing.assert_array_equal(to_numpy(got), np.take(CLOSED_X, indices, axis=axis))


def test_reductions_take_numpys_dtype_argument(no_hidden_conversion):
    data = np.arange(4, dtype=np.float32)
    for name in ("mean", "sum", "prod"):
        out = fd.jit(lambda a, f=getattr(fnp, name): f(a, dtype=np.float64))(strict_array(data))
        want = getattr(np, name)(data, dtype=np.float64)
        assert to_numpy(out).dtype == np.float64 and float(to_numpy(out)) == float(want), name


def test_results_computed_from_constants_only_take_the_arguments_library(no_hidden_conversion):
    w = strict_array(W)
    # these gradients do not depend on w's values: the program computes them from constants
    for f in (lambda w: fnp.sum(w[np.array([0, 0, 2])]), lambda w: w[1], fnp.sum):
        for transform in (fd.grad, lambda f: fd.jit(fd.grad(f))):
            g = transform(f)(w)
            assert type(g) is StrictArray
            np.testing.assert_array_equal(to_numpy(g), fd.grad(f)(W))
    assert type(fd.grad(fnp.sum)(W)) is np.ndarray  # numpy arguments: numpy results


MATRIX = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.5]])
EXTENSIONS = {  # functions of a matrix through the standard's linalg and fft extensions
    "inv": lambda m: fnp.sum(fnp.linalg.inv(m)),
    "solve": lambda m: fnp.sum(fnp.linalg.solve(m, fnp.sum(m, axis=0))),
    "det": fnp.linalg.det,
    "slogdet": lambda m: fnp.linalg.slogdet(m)[1],
    "cholesky": lambda m: fnp.sum(fnp.linalg.cholesky(m)),
    "eigh": lambda m: fnp.sum(fnp.linalg.eigh(m)[1] ** 2 * fnp.linalg.eigh(m)[0]),
    "svd": lambda m: fnp.sum(fnp.linalg.svd(m)[1]),
    "qr": lambda m: fnp.sum(fnp.linalg.qr(m)[1]),
    "fft": lambda m: fnp.sum(fnp.abs(fnp.fft.fft(m))),
    "rfft2": lambda m: fnp.sum(fnp.real(fnp.fft.rfft2(m)) ** 2),
    "irfft": lambda m: fnp.sum(fnp.fft.irfft(fnp.fft.rfft(m) * 2.0)),
    "complex": lambda m: fnp.sum(fnp.abs(m + 1j * m) ** 2),
    # the standard has no scatter: scatter-add by a one-hot product, in the library
    "scatter_add": lambda m: fnp.sum(fnp.at(m)[np.array([0, 0, 2])].add(m[1]) ** 2),
    "repeated gather": lambda m: fnp.sum(m[np.array([0, 0, 2])] ** 3),
    "take_along_axis": lambda m: fnp.sum(fnp.take(m, np.array([[1, 1], [2, 0]]), axis=1) ** 2),
    "sort": lambda m: fnp.sum(fnp.sort(m, axis=1) * np.arange(3.0)),
    "sort flat": lambda m: fnp.sum(fnp.sort(m, axis=None) * np.arange(9.0)),
    "median": fnp.median,
    "quantile": lambda m: fnp.quantile(m, 0.3),
}


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("name", list(EXTENSIONS))
def test_linalg_fft_scatter_and_sort_run_in_the_library(name, library, no_hidden_conversion):
    convert, is_theirs = LIBRARIES[library]
    f = EXTENSIONS[name]
    want = fd.grad(f)(MATRIX)
    for transform in (fd.grad, lambda f: fd.jit(fd.grad(f))):
        g = transform(f)(convert(MATRIX))
        assert is_theirs(g)
        np.testing.assert_allclose(to_numpy(g), want, rtol=1e-10, atol=1e-12)


SPECIAL = {  # scipy.special through torch.special where torch has the function
    "erf": lambda w: fnp.sum(fd.scipy.special.erf(w)),
    "gammaln": lambda w: fnp.sum(fd.scipy.special.gammaln(w)),
    "digamma": lambda w: fnp.sum(fd.scipy.special.digamma(w) * w),
    "polygamma": lambda w: fnp.sum(fd.scipy.special.polygamma(2, w)),
    "i0e": lambda w: fnp.sum(fd.scipy.special.i0e(w)),
    "norm.logcdf": lambda w: fnp.sum(fd.scipy.stats.norm.logcdf(w)),
    "gamma.logpdf": lambda w: fnp.sum(fd.scipy.stats.gamma.logpdf(w, 2.5)),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_functions_run_on_torch_through_torch_special(name):
    torch = pytest.importorskip("torch")
    pytest.importorskip("scipy")
    w = np.array([0.3, 1.2, 2.5])
    f = SPECIAL[name]
    for transform in (fd.grad, lambda f: fd.jit(fd.grad(f))):
        g = transform(f)(torch.asarray(w))
        assert isinstance(g, torch.Tensor)  # torch's values: its polygammas agree to ~1e-9
        np.testing.assert_allclose(g.numpy(), fd.grad(f)(w), rtol=1e-7)


def test_a_special_function_the_library_lacks_is_refused_by_name():
    pytest.importorskip("scipy")
    with pytest.raises(BackendError, match=r"the ufunc erf \(scipy.special's\).*array_api_strict"):
        fd.grad(lambda w: fnp.sum(fd.scipy.special.erf(w)))(strict_array(W))


def test_jit_compiles_for_other_libraries_instead_of_interpreting(monkeypatch):
    """The compiled program for foreign arrays calls each equation's impl, which reaches
    the arrays' own namespace; the interpreter (the fallback) is not used."""
    from funcdiff.compiler import compile as compile_module

    def interpreted(*args, **kwargs):
        raise AssertionError("the program was interpreted")
    monkeypatch.setattr(compile_module, "eval_jaxpr", interpreted)
    libraries = dict(LIBRARIES)
    if importlib.util.find_spec("dask") is not None:
        import dask.array as da
        libraries["dask"] = (lambda x: da.from_array(x, chunks=3),
                             lambda a: type(a).__module__.startswith("dask"))
    for library, (convert, is_theirs) in libraries.items():
        for program, (f, params) in PROGRAMS.items():
            for transform in ("jit_grad", "jit_value_and_grad"):
                want = TRANSFORMS[transform](f, params, X_NP, Y_NP)
                out = TRANSFORMS[transform](f, params, convert(X_NP), convert(Y_NP))
                assert any(is_theirs(x) for x in fd.tree_util.tree_leaves(out)), library
                fd.tree_util.tree_map(
                    lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13),
                    to_numpy(fd.tree_util.tree_map(
                        lambda a: a.compute() if hasattr(a, "compute") else a, out)), want)
