"""Complex values in funcdiff.numpy: the functions that measure them (norms,
variances), round, vdot and correlate give numpy's values and dtypes, and
gradients flow through complex intermediates (an FFT) into them. (Every
function is also run on complex arrays against numpy by
tests/test_numpy_against_numpy.py.)"""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.test_util import check_grads

Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j, 0j])
W = np.array([0.5 - 1j, 2 + 2j, 1 + 0j, -1 + 0.5j])
M = np.array([[1 + 2j, 3 - 1j], [-0.5 + 0.25j, 2 + 0j]])


def _same(want, got) -> bool:
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    return len(want) == len(got) and all(
        np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)
        for a, b in zip(want, got))


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5])
def test_vector_norms_measure_complex_entries_by_their_magnitude(ord):
    assert _same(np.linalg.norm(Z, ord), fnp.linalg.norm(Z, ord))
    assert _same(np.linalg.vector_norm(M, ord=2 if ord is None else ord),
                 fnp.linalg.vector_norm(M, ord=2 if ord is None else ord))


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf])
def test_matrix_norms_of_complex_matrices(ord):
    assert _same(np.linalg.norm(M, ord), fnp.linalg.norm(M, ord))
    assert _same(np.linalg.norm(np.stack([M, 2 * M]), ord, axis=(1, 2)),
                 fnp.linalg.norm(np.stack([M, 2 * M]), ord, axis=(1, 2)))


def test_singular_value_norms_of_complex_matrices_are_numpys():
    # derivatives: tests/test_linalg_complex.py
    for ord in (2, -2, "nuc"):
        np.testing.assert_allclose(fnp.linalg.norm(M, ord), np.linalg.norm(M, ord), rtol=1e-12)


@pytest.mark.parametrize("name", ["mean", "var", "std", "nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_moments_of_complex_arrays(name, dtype):
    m = M.astype(dtype)
    for kwargs in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"ddof": 1}):
        if name.endswith("mean") and "ddof" in kwargs:
            continue
        assert _same(getattr(np, name)(m, **kwargs), getattr(fnp, name)(m, **kwargs)), kwargs


@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_round_rounds_both_parts(decimals):
    z = Z * 12.345
    assert _same(np.round(z, decimals), fnp.round(z, decimals))
    assert _same(np.around(z.astype(np.complex64), decimals),
                 fnp.around(z.astype(np.complex64), decimals))


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_correlate_conjugates_its_second_argument(mode):
    long = np.concatenate([W, [2j]])
    assert _same(np.correlate(Z, long, mode), fnp.correlate(Z, long, mode))
    assert _same(np.correlate(long, Z, mode), fnp.correlate(long, Z, mode))
    assert _same(np.vdot(M, M[::-1]), fnp.vdot(M, M[::-1]))


def test_gradients_through_complex_intermediates():
    x = np.array([0.3, -1.0, 2.0, 0.5])
    # Parseval: ||fft(x)|| = sqrt(n) ||x||
    g = fd.grad(lambda x: fnp.linalg.norm(fnp.fft.fft(x)))(x)
    np.testing.assert_allclose(g, 2.0 * x / np.linalg.norm(x), rtol=1e-12)
    for f in [lambda x: fnp.linalg.norm(fnp.fft.fft(x), ord=1),
              lambda x: fnp.std(fnp.fft.fft(x)),
              lambda x: fnp.var(fnp.fft.rfft(x)) + fnp.abs(fnp.vdot(fnp.fft.fft(x), x)),
              lambda x: fnp.sum(fnp.real(fnp.correlate(fnp.fft.fft(x), x * 1j, "full")))]:
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))
