"""Complex values through every funcdiff.numpy function numpy defines on them.

One row per function: complex arguments (away from branch cuts and poles),
numpy's function as the reference and the row's kind. Every row checks the
value eagerly and under jit against numpy. Holomorphic rows check the jvp
along a complex direction against complex central differences
(f(z + h t) - f(z - h t)) / 2h with h real and with h imaginary (the two agree
only for holomorphic functions), elementwise ones also f'(z) against its
closed form, and the same under jit. Every differentiable row checks the
gradient of a real loss against df/dx - i df/dy by central differences in the
real and imaginary directions of each argument (eagerly and under jit), vmap
against a loop and check_grads to order 2 in both modes. Non-holomorphic rows
(abs, angle, real, imag, conj, sign = z/|z|, ...) skip the holomorphic checks.
Rows of functions numpy refuses for complex values check that funcdiff
refuses them too, by a funcdiff error naming the function, eagerly and under
jit: never a silently dropped imaginary part.
"""

from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
import funcdiff.scipy.special as fsp
from funcdiff.errors import FunctionalDiffError
from funcdiff.test_util import check_grads

HOLO, NONHOLO, VALUE, REFUSE = "holomorphic", "non-holomorphic", "value only", "refused"

# Away from every branch cut of numpy's functions (the real axis beyond +-1 and
# below 0, the imaginary axis beyond +-i), from poles and from zeros.
Z = np.array([0.3 + 0.4j, -0.5 + 0.2j, 0.7 - 0.6j, -0.2 - 0.3j])
W = np.array([0.6 - 0.2j, 0.4 + 0.5j, -0.3 + 0.7j, 0.8 + 0.1j])
M = np.array([[0.3 + 0.4j, -0.5 + 0.2j, 0.1 - 0.2j],
              [0.7 - 0.6j, -0.2 - 0.3j, 0.5 + 0.5j]])
N = np.array([[0.2 - 0.1j, 0.4 + 0.3j], [-0.6 + 0.2j, 0.1 + 0.9j], [0.5 - 0.5j, -0.3 + 0.1j]])
SQ = np.array([[1.2 + 0.3j, -0.5 + 0.2j], [0.7 - 0.6j, 0.9 - 0.3j]])
UNSORTED = np.array([1.0 + 2.0j, 0.4 - 1.0j, -0.5 + 3.0j, 0.2 + 0.1j])  # distinct real parts


class Row(NamedTuple):
    name: str
    f: Callable
    ref: Callable
    args: tuple
    kind: str = HOLO
    fprime: Callable | None = None  # f'(z) of a unary elementwise holomorphic row


def row(name, f, ref, args=(Z,), kind=HOLO, fprime=None):
    return Row(name, f, ref, tuple(args), kind, fprime)


def unary(name, fprime=None, kind=HOLO, args=(Z,), ref=None):
    return row(name, getattr(fnp, name), ref or getattr(np, name), args, kind, fprime)


def binary(name, args=(Z, W), kind=HOLO):
    return row(name, getattr(fnp, name), getattr(np, name), args, kind)


def fft(name, args=(M,), kind=HOLO):
    return row(f"fft.{name}", getattr(fnp.fft, name), getattr(np.fft, name), args, kind)


ELEMENTWISE = [
    unary("negative", lambda z: -np.ones_like(z)),
    unary("positive", lambda z: np.ones_like(z)),
    unary("square", lambda z: 2 * z),
    unary("reciprocal", lambda z: -1 / z ** 2),
    unary("sqrt", lambda z: 0.5 / np.sqrt(z)),
    unary("exp", np.exp),
    unary("exp2", lambda z: np.log(2) * np.exp2(z)),
    unary("expm1", np.exp),
    unary("log", lambda z: 1 / z),
    unary("log2", lambda z: 1 / (z * np.log(2))),
    unary("log10", lambda z: 1 / (z * np.log(10))),
    unary("log1p", lambda z: 1 / (1 + z)),
    unary("sin", np.cos),
    unary("cos", lambda z: -np.sin(z)),
    unary("tan", lambda z: 1 / np.cos(z) ** 2),
    unary("arcsin", lambda z: 1 / np.sqrt(1 - z ** 2)),
    unary("arccos", lambda z: -1 / np.sqrt(1 - z ** 2)),
    unary("arctan", lambda z: 1 / (1 + z ** 2)),
    unary("sinh", np.cosh),
    unary("cosh", np.sinh),
    unary("tanh", lambda z: 1 / np.cosh(z) ** 2),
    unary("arcsinh", lambda z: 1 / np.sqrt(1 + z ** 2)),
    unary("arccosh", lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1))),
    unary("arctanh", lambda z: 1 / (1 - z ** 2)),
    unary("sinc", lambda z: (np.cos(np.pi * z) - np.sinc(z)) / z),
    row("sign", fnp.sign, np.sign, kind=NONHOLO),
    row("abs", fnp.abs, np.abs, kind=NONHOLO),
    row("absolute", fnp.absolute, np.absolute, kind=NONHOLO),
    row("angle", fnp.angle, np.angle, kind=NONHOLO),
    row("real", fnp.real, np.real, kind=NONHOLO),
    row("imag", fnp.imag, np.imag, kind=NONHOLO),
    row("conj", fnp.conj, np.conj, kind=NONHOLO),
    row("conjugate", fnp.conjugate, np.conjugate, kind=NONHOLO),
    row("rint", fnp.rint, np.rint, args=(3 * Z,), kind=VALUE),
    row("round", lambda z: fnp.round(z, 1), lambda z: np.round(z, 1), args=(3 * Z,),
        kind=VALUE),
    row("isnan", fnp.isnan, np.isnan, kind=VALUE),
    row("isinf", fnp.isinf, np.isinf, kind=VALUE),
    row("isfinite", fnp.isfinite, np.isfinite, kind=VALUE),
    row("nan_to_num", fnp.nan_to_num, np.nan_to_num),
    binary("add"), binary("subtract"), binary("multiply"), binary("divide"),
    binary("true_divide"),
    binary("power"),
    row("power-float-exponent", lambda z: fnp.power(z, 2.5), lambda z: np.power(z, 2.5)),
    row("power-int-exponent", lambda z: fnp.power(z, 3), lambda z: np.power(z, 3)),
    row("power-real-base", lambda z: fnp.power(2.5, z), lambda z: np.power(2.5, z)),
    row("float_power", lambda z: fnp.float_power(z, 1.5), lambda z: np.float_power(z, 1.5)),
    row("operator-pow", lambda z, w: z ** w, lambda z, w: z ** w, args=(Z, W)),
    binary("equal", kind=VALUE), binary("not_equal", kind=VALUE),
    row("less", fnp.less, np.less, args=(Z, Z.real + 0.3j), kind=VALUE),
    row("greater_equal", fnp.greater_equal, np.greater_equal, args=(Z, Z.real + 0.3j),
        kind=VALUE),
    row("maximum", fnp.maximum, np.maximum, args=(Z, W)),
    row("minimum", fnp.minimum, np.minimum, args=(Z, W)),
    row("fmax", fnp.fmax, np.fmax, args=(Z, W)),
    row("fmin", fnp.fmin, np.fmin, args=(Z, W)),
    row("clip", lambda z: fnp.clip(z, -0.3, 0.5), lambda z: np.clip(z, -0.3, 0.5)),
    row("where", lambda z, w: fnp.where(fnp.real(z) > 0, z, w),
        lambda z, w: np.where(z.real > 0, z, w), args=(Z, W)),
]

REDUCTIONS = [
    row("sum", lambda m: fnp.sum(m, axis=1), lambda m: np.sum(m, axis=1), args=(M,)),
    row("prod", lambda m: fnp.prod(m, axis=0), lambda m: np.prod(m, axis=0), args=(M,)),
    row("mean", fnp.mean, np.mean, args=(M,)),
    row("var", lambda m: fnp.var(m, axis=1), lambda m: np.var(m, axis=1), args=(M,),
        kind=NONHOLO),
    row("std", fnp.std, np.std, args=(M,), kind=NONHOLO),
    row("cumsum", lambda m: fnp.cumsum(m, axis=1), lambda m: np.cumsum(m, axis=1), args=(M,)),
    row("cumprod", lambda m: fnp.cumprod(m, axis=1), lambda m: np.cumprod(m, axis=1),
        args=(M,)),
    row("max", fnp.max, np.max, args=(UNSORTED,)),
    row("min", lambda m: fnp.min(m, axis=0), lambda m: np.min(m, axis=0), args=(M,)),
    row("argmax", fnp.argmax, np.argmax, args=(UNSORTED,), kind=VALUE),
    row("argmin", fnp.argmin, np.argmin, args=(UNSORTED,), kind=VALUE),
    row("average", lambda m: fnp.average(m, axis=1, weights=[0.2, 0.3, 0.5]),
        lambda m: np.average(m, axis=1, weights=[0.2, 0.3, 0.5]), args=(M,)),
]

PRODUCTS = [
    row("dot", fnp.dot, np.dot, args=(M, N)),
    row("matmul", fnp.matmul, np.matmul, args=(M, N)),
    row("operator-matmul", lambda a, b: a @ b, lambda a, b: a @ b, args=(SQ, SQ.T)),
    row("einsum", lambda a, b: fnp.einsum("ij,jk->ik", a, b),
        lambda a, b: np.einsum("ij,jk->ik", a, b), args=(M, N)),
    row("vdot", fnp.vdot, np.vdot, args=(Z, W), kind=NONHOLO),  # conjugates its first argument
    row("inner", fnp.inner, np.inner, args=(Z, W)),
    row("outer", fnp.outer, np.outer, args=(Z, W)),
    row("tensordot", lambda a, b: fnp.tensordot(a, b, axes=1),
        lambda a, b: np.tensordot(a, b, axes=1), args=(M, N)),
    row("kron", fnp.kron, np.kron, args=(SQ, SQ)),
    row("trace", fnp.trace, np.trace, args=(SQ,)),
]

INDEXING = [
    row("basic-index", lambda m: m[1, 1:], lambda m: m[1, 1:], args=(M,)),
    row("gather", lambda m: m[np.array([1, 0, 1]), np.array([2, 0, 0])],
        lambda m: m[np.array([1, 0, 1]), np.array([2, 0, 0])], args=(M,)),
    row("take", lambda z: fnp.take(z, np.array([3, 0, 0])),
        lambda z: np.take(z, np.array([3, 0, 0]))),
    row("at-set", lambda z, w: fnp.at(z)[1:3].set(w[:2]),
        lambda z, w: np.concatenate([z[:1], w[:2], z[3:]]), args=(Z, W)),
    row("at-add", lambda z, w: fnp.at(z)[np.array([0, 0, 2])].add(w[:3]),
        lambda z, w: z + np.array([w[0] + w[1], 0, w[2], 0]), args=(Z, W)),
    row("at-multiply", lambda z, w: fnp.at(z)[np.array([1, 3])].multiply(w[:2]),
        lambda z, w: z * np.array([1, w[0], 1, w[1]]), args=(Z, W)),
    row("boolean-mask-where", lambda z: fnp.where(np.array([True, False, True, False]), z, 0),
        lambda z: np.where(np.array([True, False, True, False]), z, 0)),
]

STRUCTURAL = [
    row("reshape", lambda m: fnp.reshape(m, (3, 2)), lambda m: np.reshape(m, (3, 2)),
        args=(M,)),
    row("transpose", fnp.transpose, np.transpose, args=(M,)),
    row("concatenate", lambda z, w: fnp.concatenate([z, w]),
        lambda z, w: np.concatenate([z, w]), args=(Z, W)),
    row("stack", lambda z, w: fnp.stack([z, w], axis=1), lambda z, w: np.stack([z, w], axis=1),
        args=(Z, W)),
    row("pad", lambda z: fnp.pad(z, (1, 2)), lambda z: np.pad(z, (1, 2))),
    row("pad-reflect", lambda z: fnp.pad(z, 2, mode="reflect"),
        lambda z: np.pad(z, 2, mode="reflect")),
    row("flip", fnp.flip, np.flip, args=(M,)),
    row("roll", lambda z: fnp.roll(z, 1), lambda z: np.roll(z, 1)),
    row("broadcast_to", lambda z: fnp.broadcast_to(z, (2, 4)),
        lambda z: np.broadcast_to(z, (2, 4))),
    row("tile", lambda z: fnp.tile(z, 2), lambda z: np.tile(z, 2)),
    row("repeat", lambda z: fnp.repeat(z, 2), lambda z: np.repeat(z, 2)),
    row("diagonal", fnp.diagonal, np.diagonal, args=(SQ,)),
    row("squeeze-expand", lambda z: fnp.squeeze(fnp.expand_dims(z, 0)),
        lambda z: np.squeeze(np.expand_dims(z, 0))),
    row("moveaxis", lambda m: fnp.moveaxis(m, 0, 1), lambda m: np.moveaxis(m, 0, 1),
        args=(M,)),
    row("ravel", fnp.ravel, np.ravel, args=(M,)),
    row("split", lambda z: fnp.split(z, 2)[1], lambda z: np.split(z, 2)[1]),
    row("triu", fnp.triu, np.triu, args=(SQ,)),
    row("diff", fnp.diff, np.diff),
    row("convolve", fnp.convolve, np.convolve, args=(Z, W[:3])),
    row("astype-complex64", lambda z: z.astype(np.complex64), lambda z: z.astype(np.complex64),
        kind=VALUE),
    row("astype-real-to-complex", lambda z: fnp.real(z).astype(np.complex128) * z,
        lambda z: z.real.astype(np.complex128) * z, kind=NONHOLO),
]

SORTING = [
    row("sort", fnp.sort, np.sort, args=(UNSORTED,)),
    row("argsort", fnp.argsort, np.argsort, args=(UNSORTED,), kind=VALUE),
]

FFTS = [
    fft("fft"), fft("ifft"), fft("fft2"), fft("ifft2"), fft("fftn"), fft("ifftn"),
    # irfft and hfft read a complex spectrum as Hermitian: real-linear, not holomorphic
    fft("irfft", kind=NONHOLO), fft("irfft2", kind=NONHOLO), fft("irfftn", kind=NONHOLO),
    fft("hfft", kind=NONHOLO),
    row("fft.fft-n", lambda z: fnp.fft.fft(z, n=6), lambda z: np.fft.fft(z, n=6)),
    row("fft.fftshift", fnp.fft.fftshift, np.fft.fftshift),
]

REFUSED = [
    unary(name, kind=REFUSE) for name in
    ("floor", "ceil", "trunc", "fix", "cbrt", "fabs", "deg2rad", "rad2deg", "degrees",
     "radians", "signbit", "spacing", "i0", "modf", "frexp")
] + [
    binary(name, kind=REFUSE) for name in
    ("floor_divide", "remainder", "mod", "fmod", "divmod", "logaddexp", "logaddexp2",
     "hypot", "arctan2", "copysign", "nextafter", "heaviside")
] + [
    row("ldexp", fnp.ldexp, np.ldexp, args=(Z, np.array([1, 2, 3, 4])), kind=REFUSE),
    fft("rfft", kind=REFUSE), fft("rfft2", kind=REFUSE), fft("rfftn", kind=REFUSE),
    fft("ihfft", kind=REFUSE),
]

ROWS = ELEMENTWISE + REDUCTIONS + PRODUCTS + INDEXING + STRUCTURAL + SORTING + FFTS
DIFFERENTIABLE = [r for r in ROWS if r.kind in (HOLO, NONHOLO)]
IDS = lambda rows: [r.name for r in rows]  # noqa: E731


def assert_close(actual, desired, rtol=1e-9, atol=1e-12):
    actual = np.asarray(actual)
    desired = np.asarray(desired)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol)


def complex_positions(args):
    return [i for i, a in enumerate(args) if np.iscomplexobj(a)]


def direction(args, i, seed=0):
    rng = np.random.default_rng(seed + i)
    a = args[i]
    return rng.normal(size=a.shape) + 1j * rng.normal(size=a.shape)


def shifted(args, i, step):
    return tuple(a + step if k == i else a for k, a in enumerate(args))


def central(f, args, i, step, h):
    return (np.asarray(f(*shifted(args, i, h * step))) -
            np.asarray(f(*shifted(args, i, -h * step)))) / (2 * h)


def loss_of(r):
    """A real loss of the row's output: Re(sum(w * out)) + sum(|out|^2) / 2."""
    out = np.asarray(r.ref(*r.args))
    rng = np.random.default_rng(3)
    w = rng.normal(size=out.shape)
    if np.iscomplexobj(out):
        w = w + 1j * rng.normal(size=out.shape)

    def loss(*args):
        y = r.f(*args)
        return fnp.sum(fnp.real(y * w)) + 0.5 * fnp.sum(fnp.abs(y) ** 2)
    return loss


def conj_gradient(f, args, i, eps=1e-6):
    """df/dx - i df/dy of a real function in argument i, by central differences."""
    a = args[i]
    out = np.zeros(a.shape, complex)
    for k in np.ndindex(a.shape):
        e = np.zeros(a.shape, complex)
        e[k] = 1.0
        dx = central(lambda *v: float(f(*v)), args, i, e, eps)
        dy = central(lambda *v: float(f(*v)), args, i, 1j * e, eps)
        out[k] = dx - 1j * dy
    return out


@pytest.mark.parametrize("r", ROWS, ids=IDS(ROWS))
def test_values_eagerly_and_under_jit(r):
    want = r.ref(*r.args)
    got = r.f(*r.args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert_close(got, want)
    assert_close(fd.jit(r.f)(*r.args), want)


HOLOMORPHIC = [r for r in ROWS if r.kind == HOLO]


@pytest.mark.parametrize("r", HOLOMORPHIC, ids=IDS(HOLOMORPHIC))
def test_holomorphic_jvp_is_the_complex_derivative(r):
    for i in complex_positions(r.args):
        t = direction(r.args, i)
        tangents = tuple(t if k == i else np.zeros_like(a) for k, a in enumerate(r.args))
        real_step = central(r.f, r.args, i, t, 1e-6)
        imag_step = central(r.f, r.args, i, t, 1e-6j)
        assert_close(imag_step, real_step, rtol=1e-6, atol=1e-8)  # holomorphic at these points
        _, jvp_out = fd.jvp(r.f, r.args, tangents)
        assert_close(jvp_out, real_step, rtol=1e-6, atol=1e-8)
        _, jit_out = fd.jit(lambda *a: fd.jvp(r.f, a, tangents))(*r.args)
        assert_close(jit_out, jvp_out, rtol=1e-12, atol=1e-14)
    if r.fprime is not None:
        z = r.args[0]
        assert_close(fd.jvp(r.f, (z,), (np.ones_like(z),))[1], r.fprime(z), rtol=1e-10)
        grad = fd.vmap(fd.grad(r.f, holomorphic=True))
        assert_close(grad(z), r.fprime(z), rtol=1e-10)
        assert_close(fd.jit(grad)(z), r.fprime(z), rtol=1e-10)


@pytest.mark.parametrize("r", DIFFERENTIABLE, ids=IDS(DIFFERENTIABLE))
def test_grad_of_a_real_loss_is_df_dx_minus_i_df_dy(r):
    loss = loss_of(r)
    argnums = tuple(complex_positions(r.args))
    grads = fd.grad(loss, argnums=argnums)(*r.args)
    jit_grads = fd.jit(fd.grad(loss, argnums=argnums))(*r.args)
    for i, g, jg in zip(argnums, grads, jit_grads):
        want = conj_gradient(loss, r.args, i)
        assert_close(g, want, rtol=1e-6, atol=1e-7)
        assert_close(jg, g, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("r", DIFFERENTIABLE, ids=IDS(DIFFERENTIABLE))
def test_vmap_is_a_loop(r):
    batch = [r.args, tuple(0.8 * a + 0.05j for a in r.args)]
    stacked = tuple(np.stack(parts) for parts in zip(*batch))
    want = np.stack([np.asarray(r.f(*a)) for a in batch])
    assert_close(fd.vmap(r.f)(*stacked), want, rtol=1e-12, atol=1e-14)
    assert_close(fd.jit(fd.vmap(r.f))(*stacked), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("r", DIFFERENTIABLE, ids=IDS(DIFFERENTIABLE))
def test_check_grads_to_order_two(r):
    check_grads(r.f, r.args, order=2)


ALIASES = {"mod": "remainder", "degrees": "rad2deg", "radians": "deg2rad"}  # named as numpy


@pytest.mark.parametrize("r", REFUSED, ids=IDS(REFUSED))
def test_functions_numpy_refuses_for_complex_values_are_refused_by_name(r):
    with pytest.raises(TypeError):
        r.ref(*r.args)
    short = r.name.split(".")[-1]
    short = ALIASES.get(short, short)
    for f in (r.f, fd.jit(r.f)):
        with pytest.raises(FunctionalDiffError, match=short):
            f(*r.args)


def test_a_complex_to_real_cast_is_refused():
    with pytest.raises(FunctionalDiffError, match="imaginary part"):
        fnp.astype(fnp.asarray(Z), float)
    with pytest.raises(FunctionalDiffError, match="imaginary part"):
        fnp.asarray(Z, dtype=float)
    with pytest.raises(FunctionalDiffError, match="imaginary part"):
        fd.jit(lambda z: z.astype(np.float64))(Z)


def test_sign_of_complex_values_is_the_unit_phase():
    z = np.array([3.0 + 4.0j, 0.0j, -2.0j])
    assert_close(fnp.sign(z), np.sign(z))
    assert_close(fd.jit(fnp.sign)(z), np.sign(z))
    # d(z/|z|) = (dz - Re(conj(u) dz) u) / |z| with u = z/|z|: tangent to the circle
    u, t = np.sign(z[0]), 0.3 - 0.7j
    want = (t - np.real(np.conj(u) * t) * u) / abs(z[0])
    assert_close(fd.jvp(fnp.sign, (z[:1],), (np.array([t]),))[1], [want])


def test_sort_is_lexicographic_and_its_gradient_follows_the_permutation():
    order = np.argsort(UNSORTED)
    g = fd.grad(lambda z: fnp.real(fnp.sum(fnp.sort(z) * W)))(UNSORTED)
    want = np.zeros(4, complex)
    want[order] = W  # d Re(w s)/dx - i d Re(w s)/dy = w at each source (JAX's convention)
    assert_close(g, want)
    ties = np.array([1.0 + 1.0j, 1.0 - 1.0j, 1.0 + 1.0j])
    assert_close(fnp.sort(ties), np.sort(ties))
    assert_close(fd.jit(fnp.sort)(ties), np.sort(ties))
