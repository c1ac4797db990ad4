"""funcdiff.scipy.signal against scipy.signal: values in every mode, boundary and
shape order (real and complex), derivatives in both arrays, jit and vmap."""

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


@pytest.mark.parametrize("name", ["correlate", "convolve"])
@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
def test_values_equal_scipys(name, shapes):
    for make in (RNG.standard_normal, complex_normal):
        a, v = make(shapes[0]), make(shapes[1])
        for mode in MODES:
            try:
                want = getattr(ss, name)(a, v, mode)
            except ValueError:
                with pytest.raises(ShapeError):
                    getattr(fs, name)(a, v, mode)
                continue
            got = getattr(fs, name)(a, v, mode)
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


def test_bad_input_is_refused_by_name():
    with pytest.raises(InvalidArgumentError, match="mode must be"):
        fs.convolve(np.ones(3), np.ones(2), mode="middle")
    with pytest.raises(ShapeError, match="same number of dimensions"):
        fs.correlate(np.ones((3, 3)), np.ones(2))
    with pytest.raises(ShapeError, match="at least as large"):
        fs.convolve(np.ones((3, 5)), np.ones((4, 2)), mode="valid")
    with pytest.raises(InvalidArgumentError, match="boundary"):
        fs.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect")
