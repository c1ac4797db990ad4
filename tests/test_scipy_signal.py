"""funcdiff.scipy.signal against scipy.signal: values in every mode, boundary and
shape order (real and complex), by the convolution primitive and by FFT
(fftconvolve, method="fft"), derivatives in both arrays, jit and vmap."""

import itertools

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import InvalidArgumentError, ShapeError
from funcdiff.scipy import signal as fs
from funcdiff.test_util import check_grads

ss = pytest.importorskip("scipy.signal")
RNG = np.random.default_rng(0)
MODES = ("full", "valid", "same")


def complex_normal(shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


SHAPES = [((7,), (3,)), ((6,), (4,)), ((3,), (5,)), ((2,), (4,)), ((6, 5), (3, 2)),
          ((4, 4), (3, 3)), ((3, 3), (5, 4)), ((5, 4, 3), (2, 3, 2))]


@pytest.mark.parametrize("method", ["direct", "fft"])
@pytest.mark.parametrize("name", ["correlate", "convolve"])
@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
def test_values_equal_scipys(name, shapes, method):
    for make in (RNG.standard_normal, complex_normal):
        a, v = make(shapes[0]), make(shapes[1])
        for mode in MODES:
            try:
                want = getattr(ss, name)(a, v, mode, method=method)
            except ValueError:
                with pytest.raises(ShapeError):
                    getattr(fs, name)(a, v, mode, method=method)
                continue
            got = getattr(fs, name)(a, v, mode, method=method)
            assert got.shape == want.shape, (mode, got.shape, want.shape)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["correlate2d", "convolve2d"])
def test_2d_boundaries_equal_scipys(name):
    for (sa, sv), make in itertools.product([((6, 5), (3, 2)), ((4, 4), (3, 3)), ((2, 3), (4, 5))],
                                            (RNG.standard_normal, complex_normal)):
        a, v = make(sa), make(sv)
        for mode, boundary, fill in itertools.product(MODES, ("fill", "wrap", "symm"), (0, 1.5)):
            try:
                want = getattr(ss, name)(a, v, mode, boundary, fill)
            except ValueError:
                continue
            got = getattr(fs, name)(a, v, mode, boundary, fill)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,mode", list(itertools.product(["correlate", "convolve"], MODES)))
def test_derivatives_jit_and_vmap(name, mode):
    a, v = RNG.standard_normal((6, 5)), RNG.standard_normal((3, 2))
    f = lambda a, v: getattr(fs, name)(a, v, mode)  # noqa: E731
    check_grads(f, (a, v), order=2)
    np.testing.assert_allclose(fd.jit(f)(a, v), f(a, v), rtol=1e-12)
    batch = np.stack([a, 2 * a])
    np.testing.assert_allclose(fd.vmap(f, in_axes=(0, None))(batch, v)[1], f(2 * a, v),
                               rtol=1e-12)
    check_grads(lambda a, v: fs.convolve2d(a, v, mode, "symm"), (a, v), order=1)


FFT_SHAPES = SHAPES + [((4, 5, 3, 2), (2, 2, 2, 2)), ((6,), (6,)), ((1, 9), (1, 4))]


@pytest.mark.parametrize("shapes", FFT_SHAPES, ids=[f"{a}x{b}" for a, b in FFT_SHAPES])
def test_fftconvolve_equals_scipys(shapes):
    for make in (RNG.standard_normal, complex_normal):
        a, v = make(shapes[0]), make(shapes[1])
        for mode in MODES:
            try:
                want = ss.fftconvolve(a, v, mode)
            except ValueError:
                with pytest.raises(ShapeError):
                    fs.fftconvolve(a, v, mode)
                continue
            got = fs.fftconvolve(a, v, mode)
            assert got.shape == want.shape and got.dtype == want.dtype, mode
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_fftconvolve_over_some_axes_broadcasts_the_others():
    a, v = complex_normal((3, 8)), RNG.standard_normal((3, 4))
    for mode, axes in itertools.product(MODES, (1, -1, [1])):
        np.testing.assert_allclose(fs.fftconvolve(a, v, mode, axes=axes),
                                   ss.fftconvolve(a, v, mode, axes=axes), atol=1e-11)
    np.testing.assert_allclose(fs.fftconvolve(a, v[:1], "full", axes=1),
                               ss.fftconvolve(a, v[:1], "full", axes=1), atol=1e-11)
    with pytest.raises(ShapeError, match="must agree or be 1"):
        fs.fftconvolve(np.ones((3, 8)), np.ones((2, 4)), axes=1)


def test_fftconvolve_keeps_float32_and_differentiates():
    x = RNG.standard_normal(9).astype(np.float32)
    assert fs.fftconvolve(x, x[:3]).dtype == np.float32
    a, v = RNG.standard_normal((5, 6)), RNG.standard_normal((2, 3))
    for mode in MODES:
        f = lambda a, v: fs.fftconvolve(a, v, mode)  # noqa: E731
        check_grads(f, (a, v), order=2)
        np.testing.assert_allclose(fd.jit(f)(a, v), f(a, v), rtol=1e-12, atol=1e-13)
        batch = np.stack([a, 2 * a])
        np.testing.assert_allclose(fd.vmap(f, in_axes=(0, None))(batch, v)[1], f(2 * a, v),
                                   rtol=1e-12, atol=1e-13)
    check_grads(lambda a, v: fs.fftconvolve(a, v), (complex_normal(5), complex_normal(3)),
                order=1)


def test_bad_input_is_refused_by_name():
    with pytest.raises(InvalidArgumentError, match="method must be"):
        fs.convolve(np.ones(3), np.ones(2), method="overlap-add")
    with pytest.raises(InvalidArgumentError, match="mode must be"):
        fs.convolve(np.ones(3), np.ones(2), mode="middle")
    with pytest.raises(ShapeError, match="same number of dimensions"):
        fs.correlate(np.ones((3, 3)), np.ones(2))
    with pytest.raises(ShapeError, match="at least as large"):
        fs.convolve(np.ones((3, 5)), np.ones((4, 2)), mode="valid")
    with pytest.raises(InvalidArgumentError, match="boundary"):
        fs.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect")
