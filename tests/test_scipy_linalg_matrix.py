"""funcdiff.scipy.linalg's sqrtm, logm, schur and eigh_tridiagonal against scipy.linalg:
values (real and complex, batched), derivatives to order 2 in both modes against
finite differences, the Fréchet derivative against its defining equation, jit and
vmap against eager, and the refusals (a complex result of a real matrix, schur's
derivative, unsupported selections)."""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import DifferentiationError, InvalidArgumentError, ShapeError
from funcdiff.scipy import linalg as L
from funcdiff.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(0)
_B = RNG.standard_normal((4, 4))
SPD = _B @ _B.T + 4 * np.eye(4)
NONSYMMETRIC = RNG.standard_normal((4, 4)) + 5 * np.eye(4)  # eigenvalues in the right half plane
COMPLEX = NONSYMMETRIC + 0.3j * RNG.standard_normal((4, 4))
MATRICES = {"spd": SPD, "nonsymmetric": NONSYMMETRIC, "complex": COMPLEX,
            "float32": SPD.astype(np.float32), "1x1": np.array([[2.5]])}
FUNCTIONS = {"sqrtm": (L.sqrtm, sl.sqrtm), "logm": (L.logm, sl.logm)}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("which", MATRICES)
def test_values_are_scipys(name, which):
    ours, ref = FUNCTIONS[name]
    a = MATRICES[which]
    got = ours(a)
    assert got.dtype == a.dtype
    np.testing.assert_allclose(got, ref(a).astype(a.dtype),
                               rtol=1e-5 if a.dtype == np.float32 else 1e-13, atol=1e-13)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_derivatives_order_2_both_modes(name):
    f = FUNCTIONS[name][0]
    check_grads(f, (NONSYMMETRIC,), order=2)
    check_grads(f, (SPD,), order=2)
    check_grads(f, (COMPLEX,), order=1)


def test_the_frechet_derivatives_solve_their_equations():
    e = RNG.standard_normal((4, 4))
    s, ds = fd.jvp(L.sqrtm, (NONSYMMETRIC,), (e,))
    np.testing.assert_allclose(s @ ds + ds @ s, e, atol=1e-11)  # S dS + dS S = dA
    log, dlog = fd.jvp(L.logm, (NONSYMMETRIC,), (e,))
    _, dexp = fd.jvp(L.expm, (log,), (dlog,))
    np.testing.assert_allclose(dexp, e, atol=1e-10)  # d expm(logm(A)) = dA


@pytest.mark.parametrize("name", FUNCTIONS)
def test_jit_vmap_and_stacks(name):
    f = FUNCTIONS[name][0]
    stack = np.stack([SPD, NONSYMMETRIC])
    np.testing.assert_allclose(fd.jit(f)(NONSYMMETRIC), f(NONSYMMETRIC), rtol=1e-14)
    np.testing.assert_allclose(fd.vmap(f)(stack), np.stack([f(SPD), f(NONSYMMETRIC)]),
                               rtol=1e-13)
    np.testing.assert_allclose(f(stack), np.stack([f(SPD), f(NONSYMMETRIC)]), rtol=1e-13)
    g = fd.grad(lambda a: fd.numpy.sum(f(a) ** 2))
    np.testing.assert_allclose(fd.jit(g)(NONSYMMETRIC), g(NONSYMMETRIC), rtol=1e-12)
    np.testing.assert_allclose(fd.vmap(g)(stack), np.stack([g(SPD), g(NONSYMMETRIC)]),
                               rtol=1e-12)


def test_error_estimates_as_scipy():
    root, err = L.sqrtm(SPD, disp=False)
    assert float(err) < 1e-13 and np.allclose(root @ root, SPD)
    log, err = L.logm(NONSYMMETRIC, disp=False)
    assert float(err) < 1e-13


def test_a_real_matrix_with_a_complex_result_is_refused():
    negative = np.diag([-1.0, 4.0])
    for f in (L.sqrtm, L.logm):
        with pytest.raises(InvalidArgumentError, match="never drops an imaginary part"):
            f(negative)
    np.testing.assert_allclose(L.sqrtm(negative.astype(complex)), np.diag([1j, 2.0]), atol=1e-15)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_values_and_refused_derivative(output):
    t, z = L.schur(NONSYMMETRIC, output=output)
    t_ref, z_ref = sl.schur(NONSYMMETRIC, output=output)
    np.testing.assert_allclose(t, t_ref, atol=1e-13)
    np.testing.assert_allclose(z, z_ref, atol=1e-13)
    np.testing.assert_allclose(z @ t @ z.conj().T, NONSYMMETRIC, atol=1e-12)
    stacked = fd.vmap(lambda a: L.schur(a, output=output)[0])(np.stack([NONSYMMETRIC, SPD]))
    np.testing.assert_allclose(stacked[1], sl.schur(SPD, output=output)[0], atol=1e-12)
    with pytest.raises(DifferentiationError, match="sqrtm, logm and expm"):
        fd.grad(lambda a: fd.numpy.sum(fd.numpy.abs(L.schur(a, output=output)[0])))(
            NONSYMMETRIC)
    with pytest.raises(InvalidArgumentError, match="sort= is not supported"):
        L.schur(NONSYMMETRIC, sort="lhp")


D, E = RNG.standard_normal(6), RNG.standard_normal(5)


def test_eigh_tridiagonal_is_scipys():
    w, v = L.eigh_tridiagonal(D, E)
    w_ref, v_ref = sl.eigh_tridiagonal(D, E)
    np.testing.assert_allclose(w, w_ref, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(np.abs(v), np.abs(v_ref), atol=1e-12)  # up to each vector's sign
    for lo, hi in ((0, 0), (1, 3), (5, 5)):
        got = L.eigh_tridiagonal(D, E, eigvals_only=True, select="i", select_range=(lo, hi))
        want = sl.eigh_tridiagonal(D, E, eigvals_only=True, select="i", select_range=(lo, hi))
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_eigh_tridiagonal_derivatives_jit_and_vmap():
    f = lambda d, e: L.eigh_tridiagonal(d, e, eigvals_only=True)  # noqa: E731
    check_grads(f, (D, E), order=2)
    w, v = L.eigh_tridiagonal(D, E)
    dw = fd.jacfwd(f)(D, E)
    np.testing.assert_allclose(dw, v.T ** 2, atol=1e-12)  # dw_i/dd_j = v_ji^2
    np.testing.assert_allclose(fd.jit(f)(D, E), f(D, E), rtol=1e-14)
    np.testing.assert_allclose(fd.vmap(f)(np.stack([D, 2 * D]), np.stack([E, E]))[1],
                               f(2 * D, E), rtol=1e-13)


def test_eigh_tridiagonal_refusals():
    with pytest.raises(ShapeError, match=r"e of shape \(n - 1,\)"):
        L.eigh_tridiagonal(D, E[:3])
    with pytest.raises(InvalidArgumentError, match="select='v' is not supported"):
        L.eigh_tridiagonal(D, E, select="v", select_range=(0.0, 1.0))
    with pytest.raises(InvalidArgumentError, match="select_range"):
        L.eigh_tridiagonal(D, E, select="i", select_range=(3, 9))
