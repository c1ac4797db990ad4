"""Complex inputs of every transform, with JAX's convention.

grad of a real f of z = x + iy is df/dx - i df/dy; with holomorphic=True the
derivatives are f'(z); vjp multiplies by the Jacobian without conjugating.
Checked against central differences in the real and the imaginary direction,
closed forms, and the transforms against each other.
"""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import DifferentiationError
from funcdiff.test_util import check_grads

Z = np.array([1.0 + 2.0j, 0.5 - 1.0j, -0.3 + 0.2j])


def conj_gradient(f, z, eps=1e-6):
    """df/dx - i df/dy of a real function, by central differences in both directions."""
    out = np.zeros(z.shape, complex)
    for k in np.ndindex(z.shape):
        e = np.zeros(z.shape, complex)
        e[k] = 1.0
        dx = (f(z + eps * e) - f(z - eps * e)) / (2 * eps)
        dy = (f(z + 1j * eps * e) - f(z - 1j * eps * e)) / (2 * eps)
        out[k] = dx - 1j * dy
    return out


REAL_LOSSES = {
    "abs2": lambda z: fnp.sum(fnp.abs(z) ** 2),
    "real-square": lambda z: fnp.sum(fnp.real(z ** 2)),
    "exp-conj": lambda z: fnp.sum(fnp.real(fnp.exp(z) * fnp.conj(z))),
    "angle": lambda z: fnp.sum(fnp.angle(z) * fnp.imag(z)),
    "log-abs": lambda z: fnp.sum(fnp.log(fnp.abs(z * z + 1.0))),
    "dot": lambda z: fnp.real(fnp.dot(z, fnp.conj(z[::-1])) * (1 + 1j)),
}


def test_the_documented_values():
    assert complex(fd.grad(lambda z: fnp.abs(z) ** 2)(1 + 2j)) == 2 - 4j
    assert complex(fd.grad(lambda z: fnp.real(z ** 2))(1 + 2j)) == 2 + 4j
    _, pullback = fd.vjp(fnp.sin, np.complex128(1 + 2j))
    assert np.isclose(pullback(np.complex128(3.0))[0], 3.0 * np.cos(1 + 2j))


@pytest.mark.parametrize("name", sorted(REAL_LOSSES))
def test_grad_of_a_real_loss_is_df_dx_minus_i_df_dy(name):
    f = REAL_LOSSES[name]
    want = conj_gradient(lambda z: float(f(z)), Z)
    np.testing.assert_allclose(fd.grad(f)(Z), want, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(fd.jit(fd.grad(f))(Z), want, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(fd.jacrev(f)(Z), want, rtol=1e-7, atol=1e-7)
    batch = np.stack([Z, 2 * Z])
    np.testing.assert_allclose(fd.vmap(fd.grad(f))(batch)[1], fd.grad(f)(2 * Z), rtol=1e-12)
    check_grads(f, (Z,), order=2)


def test_a_descent_step_uses_the_conjugate_gradient():
    target = np.array([0.5 + 0.5j, -1.0j])
    loss = lambda z: fnp.sum(fnp.abs(z - target) ** 2)  # noqa: E731
    z = np.zeros(2, complex)
    for _ in range(50):
        z = z - 0.2 * np.conj(fd.grad(loss)(z))
    np.testing.assert_allclose(z, target, atol=1e-8)


HOLOMORPHIC = {
    "exp-square": (lambda z: fnp.exp(z * z), lambda z: 2 * z * np.exp(z * z)),
    "exp": (fnp.exp, np.exp),
    "cube": (lambda z: z ** 3, lambda z: 3 * z ** 2),
    "reciprocal": (lambda z: 1.0 / (z + 2.0), lambda z: -1.0 / (z + 2.0) ** 2),
    "log": (fnp.log, lambda z: 1.0 / z),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_derivatives_are_f_prime(name):
    f, df = HOLOMORPHIC[name]
    z = Z[0]
    np.testing.assert_allclose(fd.grad(f, holomorphic=True)(z), df(z), rtol=1e-12)
    v, g = fd.value_and_grad(f, holomorphic=True)(z)
    np.testing.assert_allclose((v, g), (f(z), df(z)), rtol=1e-12)
    diag = np.diag(df(Z))
    for jac in (fd.jacfwd, fd.jacrev):
        np.testing.assert_allclose(jac(f, holomorphic=True)(Z), diag, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(fd.jit(jac(f, holomorphic=True))(Z), diag, rtol=1e-12,
                                   atol=1e-14)
    np.testing.assert_allclose(fd.jacobian(f, holomorphic=True)(Z), diag, rtol=1e-12,
                               atol=1e-14)
    # a jvp along any complex direction is f'(z) times it
    t = np.array([0.3 - 1.0j, 2.0j, -1.0 + 0.5j])
    np.testing.assert_allclose(fd.jvp(f, (Z,), (t,))[1], df(Z) * t, rtol=1e-12)
    check_grads(f, (Z,), order=2)


def test_holomorphic_hessian_is_the_second_derivative():
    h = fd.hessian(lambda z: fnp.sum(z ** 3 + fnp.sin(z)), holomorphic=True)(Z)
    np.testing.assert_allclose(h, np.diag(6 * Z - np.sin(Z)), rtol=1e-12, atol=1e-14)


def test_mixed_real_and_complex_arguments():
    f = lambda x, z: fnp.sum(fnp.abs(x * z) ** 2)  # noqa: E731
    x = np.array([0.5, 2.0, -1.0])
    gx, gz = fd.grad(f, argnums=(0, 1))(x, Z)
    assert gx.dtype == np.float64 and gz.dtype == np.complex128  # real inputs, real cotangents
    np.testing.assert_allclose(gx, 2 * x * np.abs(Z) ** 2, rtol=1e-12)
    np.testing.assert_allclose(gz, conj_gradient(lambda z: float(f(x, z)), Z), rtol=1e-7)
    # jacfwd of a real input through a complex output is fine
    j = fd.jacfwd(lambda x: fnp.exp(1j * x))(x)
    np.testing.assert_allclose(j, np.diag(1j * np.exp(1j * x)), rtol=1e-12)


def test_linearize_linear_transpose_checkpoint_and_custom_rules():
    out, f_jvp = fd.linearize(fnp.exp, Z)
    t = np.array([1j, 1.0, -2.0 + 1j])
    np.testing.assert_allclose(f_jvp(t), np.exp(Z) * t, rtol=1e-12)
    c = 2.0 - 3.0j
    (ct,) = fd.linear_transpose(lambda z: c * z, Z)(np.ones(3, complex))
    np.testing.assert_allclose(ct, np.full(3, c))  # the transpose does not conjugate
    f = REAL_LOSSES["exp-conj"]
    np.testing.assert_allclose(fd.grad(fd.checkpoint(f))(Z), fd.grad(f)(Z), rtol=1e-12)

    @fd.custom_jvp
    def square(z):
        return z * z
    square.defjvp(lambda p, t: (p[0] * p[0], 2.0 * p[0] * t[0]))
    np.testing.assert_allclose(fd.grad(square, holomorphic=True)(Z[1]), 2 * Z[1])

    @fd.custom_vjp
    def double(z):
        return 2.0 * z
    double.defvjp(lambda z: (2.0 * z, None), lambda _, ct: (2.0 * ct,))
    np.testing.assert_allclose(fd.grad(lambda z: fnp.sum(fnp.abs(double(z)) ** 2))(Z),
                               8 * np.conj(Z), rtol=1e-12)


def test_control_flow_carries_complex_values():
    power = lambda z: fd.lax.fori_loop(0, 3, lambda i, c: c * z, z)  # z ** 4  # noqa: E731
    np.testing.assert_allclose(fd.grad(power, holomorphic=True)(Z[0]), 4 * Z[0] ** 3)
    scanned = lambda z: fd.lax.scan(lambda c, x: (c * x, c), 1.0 + 0j, z)[0]  # noqa: E731
    np.testing.assert_allclose(fd.grad(scanned, holomorphic=True)(Z[0] * np.ones(1)), [1.0])
    branch = lambda z: fd.lax.cond(fnp.real(z) > 0, fnp.exp, lambda w: w ** 3, z)  # noqa: E731
    np.testing.assert_allclose(fd.jit(fd.grad(branch, holomorphic=True))(Z[0]), np.exp(Z[0]))
    np.testing.assert_allclose(fd.grad(branch, holomorphic=True)(Z[2]), 3 * Z[2] ** 2)


ERRORS = [
    ("grad of a complex output", lambda: fd.grad(fnp.exp)(Z[0]), "holomorphic=True"),
    ("holomorphic with a real input", lambda: fd.grad(fnp.exp, holomorphic=True)(1.0),
     "needs complex inputs"),
    ("holomorphic with a real output",
     lambda: fd.grad(lambda z: fnp.abs(z), holomorphic=True)(Z[0]), "complex scalar output"),
    ("jacrev of a complex output", lambda: fd.jacrev(fnp.exp)(Z), "needs real outputs"),
    ("jacfwd of a complex input", lambda: fd.jacfwd(fnp.abs)(Z), "needs real inputs"),
    ("hessian of a complex input", lambda: fd.hessian(REAL_LOSSES["abs2"])(Z),
     "hessian needs real inputs"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[e[0] for e in ERRORS])
def test_complex_misuse_is_refused_with_the_fix(case):
    _, thunk, match = case
    with pytest.raises(DifferentiationError, match=match):
        thunk()


def test_check_grads_catches_a_wrong_complex_rule():
    @fd.custom_jvp
    def square(z):
        return z * z
    square.defjvp(lambda p, t: (p[0] * p[0], 2.0 * fnp.conj(p[0]) * t[0]))  # wrong: conj
    with pytest.raises(AssertionError, match="fwd"):
        check_grads(square, (Z,), order=1)


def test_erf_and_erfc_of_complex_values_are_scipys_with_holomorphic_derivatives():
    special = pytest.importorskip("scipy.special")
    from funcdiff.scipy import special as fs
    z = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 1.0j])
    for ours, theirs, sign in ((fs.erf, special.erf, 1), (fs.erfc, special.erfc, -1)):
        np.testing.assert_allclose(ours(z), theirs(z), rtol=1e-14)
        np.testing.assert_allclose(fd.jit(ours)(z), theirs(z), rtol=1e-14)
        derivative = sign * 2 / np.sqrt(np.pi) * np.exp(-z ** 2)
        np.testing.assert_allclose(fd.jacfwd(ours, holomorphic=True)(z), np.diag(derivative),
                                   rtol=1e-12, atol=1e-15)
        loss = lambda z: fnp.sum(fnp.abs(ours(z)) ** 2)  # noqa: E731
        np.testing.assert_allclose(fd.grad(loss)(z),
                                   conj_gradient(lambda v: float(np.sum(np.abs(theirs(v)) ** 2)), z),
                                   rtol=1e-6)
