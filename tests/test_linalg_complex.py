"""funcdiff.numpy.linalg on complex matrices, and eig / eigvals / roots.

One row per function: an output map ``G`` of a complex matrix ``Z`` (for
decompositions a quantity invariant to the eigenvector or singular-vector
phases, such as ``U diag(s) Vh`` or ``|V|²``) and the shapes. Every row checks

- values against numpy,
- ``grad`` of the real loss ``L(Z) = Σ Re(C ∘ G) + ½|G|²``, taken at a complex
  ``Z`` directly and through two real arguments ``Z = X + iY``, against central
  differences in the real and the imaginary direction of every entry (JAX's
  convention: ``grad = ∂L/∂X − i ∂L/∂Y``),
- ``jvp`` of ``G`` along a complex direction against central differences,
- jacfwd against jacrev, jit against eager, vmap against a loop.

A wrong conjugation in a rule (a transpose for a conjugate transpose, a
missing ``conj``) changes the imaginary-direction derivatives and fails here.
"""

import numpy as np
import pytest

import scipy.linalg as sl

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import UnsupportedNumpyError
from funcdiff.scipy import linalg as fsl

LA = fnp.linalg
RNG = np.random.default_rng(0)


def _c(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


B = _c(3, 2)
C_CACHE = {}


def _hpd(z):  # Hermitian positive definite from any square z
    return fnp.matmul(z, fnp.conj(fnp.swapaxes(z, -1, -2))) + 3 * np.eye(z.shape[-1])


def _herm(z):
    return z + fnp.conj(fnp.swapaxes(z, -1, -2))


def _usv(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    return fnp.matmul(u * fnp.sin(s)[..., None, :], vh)


def _abs2(v):
    return fnp.real(v * fnp.conj(v))


def _tri(z):
    return fnp.triu(z) + 3 * np.eye(z.shape[-1])


def _cho(lower):
    return lambda z: fsl.cho_solve(fsl.cho_factor(_hpd(z), lower=lower), B)


def _np_herm(z):
    return z + z.conj().T


def _np_hpd(z):
    return z @ z.conj().T + 3 * np.eye(z.shape[-1])


# name -> (G in funcdiff.numpy, the same in numpy, shape of Z)
ROWS = {
    "solve": (lambda z: LA.solve(z, B), lambda z: np.linalg.solve(z, B), (3, 3)),
    "solve_vector": (lambda z: LA.solve(z, B[:, 0]), lambda z: np.linalg.solve(z, B[:, 0]),
                     (3, 3)),
    "inv": (LA.inv, np.linalg.inv, (3, 3)),
    "det": (LA.det, np.linalg.det, (3, 3)),
    "slogdet_sign": (lambda z: LA.slogdet(z)[0], lambda z: np.linalg.slogdet(z)[0], (3, 3)),
    "slogdet_log": (lambda z: LA.slogdet(z)[1], lambda z: np.linalg.slogdet(z)[1], (3, 3)),
    "cholesky": (lambda z: LA.cholesky(_hpd(z)), lambda z: np.linalg.cholesky(_np_hpd(z)),
                 (3, 3)),
    "cholesky_upper": (lambda z: LA.cholesky(_hpd(z), upper=True),
                       lambda z: np.linalg.cholesky(_np_hpd(z), upper=True), (3, 3)),
    # a non-Hermitian input: the factor and derivative of its Hermitian part
    "cholesky_direct": (lambda z: LA.cholesky(_hpd(z) + 0.5 * (z - _herm(z) + z)), None,
                        (3, 3)),
    "eigvalsh": (lambda z: LA.eigvalsh(_herm(z)), lambda z: np.linalg.eigvalsh(_np_herm(z)),
                 (3, 3)),
    "eigh_values": (lambda z: LA.eigh(_herm(z))[0], lambda z: np.linalg.eigh(_np_herm(z))[0],
                    (3, 3)),
    "eigh_projector": (lambda z: (lambda w, v: fnp.matmul(v * fnp.sin(w)[..., None, :],
                                                         fnp.conj(fnp.swapaxes(v, -1, -2))))(
        *LA.eigh(_herm(z))), None, (3, 3)),
    "eigh_abs2": (lambda z: _abs2(LA.eigh(_herm(z))[1]),
                  lambda z: np.abs(np.linalg.eigh(_np_herm(z))[1]) ** 2, (3, 3)),
    "svdvals": (LA.svdvals, lambda z: np.linalg.svd(z, compute_uv=False), (3, 3)),
    "svdvals_tall": (LA.svdvals, lambda z: np.linalg.svd(z, compute_uv=False), (4, 2)),
    "svd_usv": (_usv, lambda z: (lambda u, s, vh: (u * np.sin(s)) @ vh)(*np.linalg.svd(z)),
                (3, 3)),
    "svd_usv_tall": (_usv, None, (4, 2)),
    "svd_usv_wide": (_usv, None, (2, 4)),
    "svd_abs2_u": (lambda z: _abs2(LA.svd(z)[0]), None, (3, 3)),
    "svd_abs2_vh_wide": (lambda z: _abs2(LA.svd(z, full_matrices=False)[2]), None, (2, 3)),
    "qr_q": (lambda z: LA.qr(z)[0], lambda z: np.linalg.qr(z)[0], (3, 3)),
    "qr_r": (lambda z: LA.qr(z)[1], lambda z: np.linalg.qr(z)[1], (4, 2)),
    "qr_q_tall": (lambda z: LA.qr(z)[0], lambda z: np.linalg.qr(z)[0], (4, 2)),
    "qr_r_wide": (lambda z: LA.qr(z)[1], lambda z: np.linalg.qr(z)[1], (2, 4)),
    "pinv": (LA.pinv, np.linalg.pinv, (3, 3)),
    "pinv_tall": (LA.pinv, np.linalg.pinv, (4, 2)),
    "pinv_wide": (LA.pinv, np.linalg.pinv, (2, 3)),
    "lstsq_x": (lambda z: LA.lstsq(z, B[:, 0][:2].repeat(2))[0],
                lambda z: np.linalg.lstsq(z, B[:, 0][:2].repeat(2))[0], (4, 2)),
    "lstsq_residuals": (lambda z: LA.lstsq(z, _B4)[1], lambda z: np.linalg.lstsq(z, _B4)[1],
                        (4, 2)),
    "norm_vector": (lambda z: LA.norm(z[0]), lambda z: np.linalg.norm(z[0]), (3, 3)),
    "norm_fro": (LA.norm, np.linalg.norm, (3, 3)),
    "norm_nuc": (lambda z: LA.norm(z, "nuc"), lambda z: np.linalg.norm(z, "nuc"), (3, 3)),
    "norm_2": (lambda z: LA.norm(z, 2), lambda z: np.linalg.norm(z, 2), (3, 3)),
    "norm_1": (lambda z: LA.norm(z, 1), lambda z: np.linalg.norm(z, 1), (3, 3)),
    "cond": (LA.cond, np.linalg.cond, (3, 3)),
    "matrix_power_3": (lambda z: LA.matrix_power(z, 3), lambda z: np.linalg.matrix_power(z, 3),
                       (3, 3)),
    "matrix_power_-2": (lambda z: LA.matrix_power(z, -2),
                        lambda z: np.linalg.matrix_power(z, -2), (3, 3)),
    "eigvals": (LA.eigvals, np.linalg.eigvals, (3, 3)),
    "eig_values": (lambda z: LA.eig(z)[0], lambda z: np.linalg.eig(z)[0], (3, 3)),
    "eig_vectors": (lambda z: LA.eig(z)[1], lambda z: np.linalg.eig(z)[1], (3, 3)),  # values
    "eig_abs2": (lambda z: _abs2(LA.eig(z)[1]), lambda z: np.abs(np.linalg.eig(z)[1]) ** 2,
                 (3, 3)),
    "eig_function": (lambda z: (lambda w, v: fnp.matmul(v * (w * w)[..., None, :],
                                                       LA.inv(v)))(*LA.eig(z)), None, (3, 3)),
    "expm": (fsl.expm, sl.expm, (3, 3)),
    "expm_frechet": (lambda z: fsl.expm_frechet(0.5 * z, _E, compute_expm=False),
                     lambda z: sl.expm_frechet(0.5 * z, _E, compute_expm=False), (3, 3)),
    "solve_triangular_N": (lambda z: fsl.solve_triangular(_tri(z), B),
                           lambda z: sl.solve_triangular(np.triu(z) + 3 * np.eye(3), B),
                           (3, 3)),
    "solve_triangular_T": (lambda z: fsl.solve_triangular(_tri(z), B, trans="T"),
                           lambda z: sl.solve_triangular(np.triu(z) + 3 * np.eye(3), B,
                                                         trans="T"), (3, 3)),
    "solve_triangular_C": (lambda z: fsl.solve_triangular(_tri(z), B, trans=2),
                           lambda z: sl.solve_triangular(np.triu(z) + 3 * np.eye(3), B,
                                                         trans=2), (3, 3)),
    "lu_solve_N": (lambda z: fsl.lu_solve(fsl.lu_factor(z), B),
                   lambda z: sl.lu_solve(sl.lu_factor(z), B), (3, 3)),
    "lu_solve_T": (lambda z: fsl.lu_solve(fsl.lu_factor(z), B, trans=1),
                   lambda z: sl.lu_solve(sl.lu_factor(z), B, trans=1), (3, 3)),
    "lu_solve_C": (lambda z: fsl.lu_solve(fsl.lu_factor(z), B, trans="C"),
                   lambda z: sl.lu_solve(sl.lu_factor(z), B, trans=2), (3, 3)),
    "lu_factors": (lambda z: fnp.stack(fsl.lu(z)[1:]), lambda z: np.stack(sl.lu(z)[1:]),
                   (3, 3)),
    "cho_solve_upper": (_cho(False), lambda z: sl.cho_solve(sl.cho_factor(_np_hpd(z)), B),
                        (3, 3)),
    "cho_solve_lower": (_cho(True), lambda z: sl.cho_solve(sl.cho_factor(_np_hpd(z), True), B),
                        (3, 3)),
    "cho_factor_upper": (lambda z: fnp.triu(fsl.cho_factor(_hpd(z))[0]),
                         lambda z: np.triu(sl.cho_factor(_np_hpd(z))[0]), (3, 3)),
    "scipy_cholesky": (lambda z: fsl.cholesky(_hpd(z)), lambda z: sl.cholesky(_np_hpd(z)),
                       (3, 3)),
}
_B4 = _c(4, 2)
_E = _c(3, 3)
NOT_DIFFERENTIATED = {"eig_vectors"}  # numpy's phase convention: values only
Z = {shape: _c(*shape) for shape in {(3, 3), (4, 2), (2, 4), (2, 3)}}


def _weights(g):
    key = np.shape(g)
    if key not in C_CACHE:
        C_CACHE[key] = np.random.default_rng(len(C_CACHE) + 1).normal(size=key + (2,)) @ [1, 1j]
    return C_CACHE[key]


def _loss(fn):
    def loss(z):
        g = fn(z)
        c = _weights(g)
        return fnp.sum(fnp.real(c * g)) + 0.5 * fnp.sum(_abs2(g) if fnp.iscomplexobj(g)
                                                         else g * g)
    return loss


def _numeric_grad(loss, z, h=1e-6):
    out = np.zeros(z.shape, complex)
    for idx in np.ndindex(z.shape):
        for direction, weight in ((1, 1), (1j, -1j)):
            e = np.zeros(z.shape, complex)
            e[idx] = direction * h
            out[idx] += weight * (loss(z + e) - loss(z - e)) / (2 * h)
    return out


@pytest.mark.parametrize("name", sorted(ROWS))
def test_values_match_numpy(name):
    ours, theirs, shape = ROWS[name]
    z = Z[shape]
    got = np.asarray(ours(z))
    if theirs is not None:
        want = np.asarray(theirs(z))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        if name in ("eigvals", "eig_values", "eig_vectors"):  # always complex, see eig
            assert got.dtype == np.complex128
        else:
            assert got.dtype == want.dtype, (got.dtype, want.dtype)


@pytest.mark.parametrize("name", sorted(set(ROWS) - NOT_DIFFERENTIATED))
def test_grad_against_central_differences(name):
    fn, _, shape = ROWS[name]
    z = Z[shape]
    loss = _loss(fn)
    want = _numeric_grad(loss, z)
    scale = max(1.0, np.abs(want).max())
    direct = fd.grad(loss)(z)
    np.testing.assert_allclose(direct, want, atol=2e-6 * scale, err_msg="complex input")
    gx, gy = fd.grad(lambda x, y: loss(x + 1j * y), argnums=(0, 1))(z.real, z.imag)
    np.testing.assert_allclose(gx - 1j * gy, want, atol=2e-6 * scale, err_msg="real parts")
    np.testing.assert_allclose(fd.jit(fd.grad(loss))(z), direct, atol=1e-10 * scale)


@pytest.mark.parametrize("name", sorted(set(ROWS) - NOT_DIFFERENTIATED))
def test_jvp_along_complex_directions(name):
    fn, _, shape = ROWS[name]
    z, h = Z[shape], 1e-6
    dz = _c(*shape)
    out, tangent = fd.jvp(fn, (z,), (dz,))
    want = (np.asarray(fn(z + h * dz)) - np.asarray(fn(z - h * dz))) / (2 * h)
    np.testing.assert_allclose(tangent, want, atol=2e-6 * max(1.0, np.abs(want).max()))
    np.testing.assert_allclose(out, fn(z), atol=1e-12)


@pytest.mark.parametrize("name", sorted(set(ROWS) - NOT_DIFFERENTIATED))
def test_jacfwd_equals_jacrev_and_vmap_equals_loop(name):
    fn, _, shape = ROWS[name]
    z = Z[shape]

    def real_out(x, y):  # R^2N -> R^k, the real and imaginary parts of G
        g = fn(x + 1j * y)
        return fnp.stack([fnp.real(g), fnp.imag(g)]) if fnp.iscomplexobj(g) else g

    fwd = fd.jacfwd(real_out, argnums=(0, 1))(z.real, z.imag)
    rev = fd.jacrev(real_out, argnums=(0, 1))(z.real, z.imag)
    for a, b in zip(fwd, rev):
        np.testing.assert_allclose(a, b, atol=1e-9 * max(1.0, np.abs(a).max()))
    stack = np.stack([z, 1.1 * z[::-1]])
    batched = fd.vmap(fn)(stack)
    np.testing.assert_allclose(batched, np.stack([fn(m) for m in stack]), atol=1e-10)
    grads = fd.vmap(fd.grad(_loss(fn)))(stack)
    np.testing.assert_allclose(grads, np.stack([fd.grad(_loss(fn))(m) for m in stack]),
                               atol=1e-9 * max(1.0, np.abs(grads).max()))


# --- eig beyond the table: real input, dtypes, stacks, second order ------------------


def test_eig_of_real_matrices_is_complex_and_differentiable_in_real_directions():
    a = np.array([[0., -2., 0.3, 0.1], [1.5, 0.2, 0., 0.4], [0.1, 0.3, 1., 0.5],
                  [0.2, -0.1, 0.6, 2.]])  # a real matrix with a complex-conjugate pair
    w, v = LA.eig(a)
    want_w, want_v = np.linalg.eig(a)
    assert w.dtype == v.dtype == np.complex128 and np.iscomplexobj(want_w)
    np.testing.assert_allclose(w, want_w, rtol=1e-12)
    np.testing.assert_allclose(v, want_v, rtol=1e-12)
    sym = a + a.T  # real eigenvalues: numpy answers float64, funcdiff still complex
    assert LA.eigvals(sym).dtype == np.complex128 and np.linalg.eigvals(sym).dtype == np.float64
    np.testing.assert_allclose(LA.eigvals(sym), np.linalg.eigvals(sym), rtol=1e-12)

    def loss(a):
        w, v = LA.eig(a)
        return fnp.sum(fnp.real(w * w) * fnp.sum(_abs2(v) ** 2, axis=0)) + fnp.sum(fnp.imag(w) ** 2)

    h = 1e-6
    want = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = h
        want[idx] = (loss(a + e) - loss(a - e)) / (2 * h)
    got = fd.grad(loss)(a)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, atol=1e-6 * np.abs(want).max())
    np.testing.assert_allclose(fd.jit(fd.grad(loss))(a), got, atol=1e-12)
    hess = fd.hessian(lambda a: fnp.sum(fnp.real(LA.eigvals(a)) ** 3))(a)
    g = fd.grad(lambda a: fnp.sum(fnp.real(LA.eigvals(a)) ** 3))
    e = np.zeros_like(a)
    e[1, 2] = h
    np.testing.assert_allclose(hess[1, 2], (g(a + e) - g(a - e)) / (2 * h), atol=1e-5)


def test_eig_dtypes_and_stacks_follow_numpy():
    a32 = RNG.normal(size=(3, 3)).astype(np.float32)
    assert LA.eigvals(a32).dtype == np.complex64
    assert [x.dtype for x in LA.eig(a32.astype(np.complex64))] == [np.complex64] * 2
    stack = _c(2, 3, 4, 4)
    w, v = LA.eig(stack)
    want_w, want_v = np.linalg.eig(stack)
    np.testing.assert_allclose(w, want_w, rtol=1e-12)
    np.testing.assert_allclose(v, want_v, rtol=1e-12)
    np.testing.assert_allclose(fd.vmap(LA.eigvals)(stack[0]), want_w[0], rtol=1e-12)
    jaxpr = str(fd.make_jaxpr(LA.eig)(stack))
    assert "eig" in jaxpr and "c128[2,3,4,4]" in jaxpr


def test_eigenvector_derivative_keeps_the_unit_norm():
    z = Z[(3, 3)]
    dz = _c(3, 3)
    (w, v), (w_dot, v_dot) = fd.jvp(LA.eig, (z,), (dz,))
    # d/dt ‖v_i‖² = 2 Re(v_iᴴ v̇_i) = 0, and a V̇ = v̇ diag(λ) + V diag(λ̇) − ȧ V holds
    np.testing.assert_allclose(np.real(np.sum(v.conj() * v_dot, axis=0)), 0, atol=1e-12)
    np.testing.assert_allclose(z @ v_dot, v_dot * w + v * w_dot - dz @ v, atol=1e-10)


def test_complex_settings_numpy_or_scipy_refuse_raise_funcdiff_errors():
    with pytest.raises(UnsupportedNumpyError, match="transposed=True with a complex"):
        fsl.solve(Z[(3, 3)], B, transposed=True)
    with pytest.raises(NotImplementedError):
        sl.solve(Z[(3, 3)], B, transposed=True)
    np.testing.assert_allclose(fsl.solve(Z[(3, 3)].real, B.real, transposed=True),
                               sl.solve(Z[(3, 3)].real, B.real, transposed=True))
