"""Tests of funcdiff.numpy.fft, the fft primitive and the complex primitives.

The fft primitive is checked against numpy for every fft_type, transform rank,
norm and precision; each transpose rule against the adjoint identity
``Re(sum(c * A x)) == Re(sum(A^T c * x))`` (JAX's convention for complex
cotangents); its batch rule against a loop with the batch axis at every
position. The complex primitives get the same treatment. funcdiff.numpy.fft is
checked against numpy.fft over a table of argument combinations, then
differentiated: losses of |fft(x)|^2 against finite differences and against
Parseval's closed form, in both modes and to second order; round trips;
norms; vmap against loops; jit against eager; bad input.
"""
import doctest

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.core import get_aval
from funcdiff.errors import (AxisError, DTypeError, FunctionalDiffError, InvalidArgumentError,
                             ShapeError, UnsupportedNumpyError)
from funcdiff.interpreters.transpose import UndefinedPrimal
from funcdiff.numpy import fft as nfft
from funcdiff.primitives import complex_ops as C
from funcdiff.primitives import elementwise as E
from funcdiff.primitives import fft as P
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def real_normal(shape, dtype=F64):
    return RNG.standard_normal(shape).astype(dtype)


def complex_normal(shape, dtype=C128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def bilinear(c, z):
    """JAX's pairing of a cotangent with a value: Re(sum(c * z)), no conjugation."""
    return float(np.real(np.sum(np.asarray(c, C128) * np.asarray(z, C128))))


# ---------------------------------------------------------------------------
# The fft primitive

LENGTHS = [(1,), (2,), (5,), (8,), (3, 4), (4, 5), (2, 3, 4)]
NUMPY_N = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}


def operand(fft_type, lengths, lead=(2,), single=False):
    """A valid operand of the fft primitive."""
    if fft_type == "RFFT":
        return real_normal(lead + lengths, F32 if single else F64)
    shape = lengths if fft_type != "IRFFT" else lengths[:-1] + (lengths[-1] // 2 + 1,)
    return complex_normal(lead + shape, C64 if single else C128)


def out_like(fft_type, lengths, lead=(2,)):
    """A random cotangent of the primitive's output."""
    if fft_type == "IRFFT":
        return real_normal(lead + lengths)
    shape = lengths if fft_type != "RFFT" else lengths[:-1] + (lengths[-1] // 2 + 1,)
    return complex_normal(lead + shape)


@pytest.mark.parametrize("fft_type", P.FFT_TYPES)
@pytest.mark.parametrize("lengths", LENGTHS, ids=str)
@pytest.mark.parametrize("norm", P.NORMS)
def test_primitive_impl_shape_rule_and_transpose(fft_type, lengths, norm):
    x = operand(fft_type, lengths)
    params = dict(fft_type=fft_type, fft_lengths=lengths, norm=norm)
    y = P.fft(x, **params)
    axes = tuple(range(-len(lengths), 0))
    np.testing.assert_allclose(y, NUMPY_N[fft_type](x, s=lengths, axes=axes, norm=norm),
                               rtol=1e-12, atol=1e-12)
    aval = P.fft_p.abstract_eval(get_aval(x), **params)
    assert (aval.shape, aval.dtype) == (y.shape, y.dtype)
    # the adjoint identity under JAX's bilinear pairing (real x: plain dot product)
    ct = out_like(fft_type, lengths)
    (x_ct,) = P.fft_p.transpose(ct, UndefinedPrimal(get_aval(x)), **params)
    assert get_aval(x_ct) == get_aval(x)
    assert np.isclose(bilinear(ct, y), bilinear(x_ct, x), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fft_type", P.FFT_TYPES)
def test_primitive_single_precision_and_staging(fft_type):
    lengths = (4, 6)
    x = operand(fft_type, lengths, single=True)
    params = dict(fft_type=fft_type, fft_lengths=lengths, norm="ortho")
    y = P.fft(x, **params)
    assert y.dtype == (F32 if fft_type == "IRFFT" else C64)
    if fft_type == "RFFT":  # transform inputs are real: stage from real values
        staged = fd.make_jaxpr(lambda x: P.fft(x, **params))(x)
        jitted = fd.jit(lambda x: P.fft(x, **params))(x)
    else:
        staged = fd.make_jaxpr(lambda re, im: P.fft(C.complex(re, im), **params))(x.real, x.imag)
        jitted = fd.jit(lambda re, im: P.fft(C.complex(re, im), **params))(x.real, x.imag)
    assert f"fft[fft_lengths=(4, 6) fft_type='{fft_type}' norm='ortho']" in str(staged)
    assert jitted.dtype == y.dtype
    np.testing.assert_allclose(jitted, y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fft_type", P.FFT_TYPES)
@pytest.mark.parametrize("bdim", [0, 1, 2, 3])
def test_primitive_batch_rule_equals_loop(fft_type, bdim):
    lengths = (3, 4)
    x = operand(fft_type, lengths, lead=(2,))  # rank 3
    x = np.stack([x, 2 * x + 1], axis=bdim)   # batch of 2 at every position
    params = dict(fft_type=fft_type, fft_lengths=lengths, norm="backward")
    per_example = lambda v: P.fft(v, **params)
    expected = np.stack([per_example(np.take(x, i, axis=bdim)) for i in range(2)])
    if fft_type == "RFFT":
        batched = fd.vmap(per_example, in_axes=bdim)(x)
    else:  # transform inputs are real: batch the parts
        batched = fd.vmap(lambda re, im: per_example(C.complex(re, im)), in_axes=bdim)(
            x.real, x.imag)
    np.testing.assert_allclose(batched, expected, atol=1e-12)


def test_primitive_cost_and_coverage():
    for fft_type in P.FFT_TYPES:
        x = get_aval(operand(fft_type, (8,), lead=(3,)))
        cost = P.fft_p.cost(x, fft_type=fft_type, fft_lengths=(8,), norm="backward")
        assert set(cost) == {"flops", "bytes"} and cost["flops"] > 0 and cost["bytes"] > 0
    assert P.fft_p.cost(get_aval(np.zeros((3, 8), C128)), fft_type="FFT", fft_lengths=(8,),
                        norm="backward") == {"flops": 3 * 5 * 8 * 3, "bytes": 2 * 3 * 8 * 16}
    prims = [P.fft_p, C.real_p, C.imag_p, C.complex_p, C.conj_p, C.complex_abs_p]
    for p in prims:
        assert all(getattr(p, s) is not None for s in ("impl", "abstract_eval", "jvp", "batch",
                                                       "cost")), p
        assert (p.transpose is not None) == p.linear, p


PRIMITIVE_ERRORS = [
    (lambda: P.fft(np.zeros(4), fft_type="FFT", fft_lengths=(4,)), DTypeError, "complex"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="RFFT", fft_lengths=(4,)), DTypeError,
     "floating"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="FFT", fft_lengths=(8,)), ShapeError, "(8,)"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="IRFFT", fft_lengths=(4,)), ShapeError, "(3,)"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="DFT", fft_lengths=(4,)), InvalidArgumentError,
     "DFT"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="FFT", fft_lengths=(4,), norm=None),
     InvalidArgumentError, "norm"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="FFT", fft_lengths=(0,)), InvalidArgumentError,
     "positive"),
    (lambda: P.fft(np.zeros(4, C128), fft_type="FFT", fft_lengths=(1, 4)), ShapeError,
     "2 trailing axes"),
]


@pytest.mark.parametrize("i", range(len(PRIMITIVE_ERRORS)))
def test_primitive_errors_eager_and_staged(i):
    thunk, exc, word = PRIMITIVE_ERRORS[i]
    with pytest.raises(exc, match=word.replace("(", r"\(").replace(")", r"\)")):
        thunk()
    with pytest.raises(exc):
        fd.make_jaxpr(lambda: thunk())()


# ---------------------------------------------------------------------------
# The complex primitives


def test_complex_primitives_match_numpy():
    z = complex_normal((3, 4))
    np.testing.assert_array_equal(C.real(z), z.real)
    np.testing.assert_array_equal(C.imag(z), z.imag)
    np.testing.assert_array_equal(C.conj(z), np.conj(z))
    np.testing.assert_allclose(C.complex_abs(z), np.abs(z))
    re, im = real_normal((3, 1), F32), real_normal((4,), F32)
    out = C.complex(re, im)
    assert out.dtype == C64 and out.shape == (3, 4)
    np.testing.assert_array_equal(out, re + 1j * im)
    assert C.real(z.astype(C64)).dtype == F32
    # real part is a copy, never a view that a caller could write through
    r = C.real(z)
    r[0, 0] = 123.0
    assert z[0, 0].real != 123.0


def _linear_cases():
    z, ct_c = complex_normal((3, 4)), complex_normal((3, 4))
    ct_r = real_normal((3, 4))
    re, im = real_normal((3, 1)), real_normal((4,))
    return [
        ("real", C.real_p, (z,), ct_r),
        ("imag", C.imag_p, (z,), ct_r),
        ("conj", C.conj_p, (z,), ct_c),
        ("complex", C.complex_p, (re, im), ct_c),
        ("mul", E.mul_p, (z, complex_normal((4,))), ct_c),   # linear in its first operand
        ("add", E.add_p, (z, complex_normal((3, 4))), ct_c),
    ]


@pytest.mark.parametrize("case", _linear_cases(), ids=lambda c: c[0])
def test_complex_transposes_follow_jax_convention(case):
    """Each linear input i: Re(sum(ct * d out / d x_i . x_i)) == Re(sum(ct_i * x_i))."""
    name, prim, args, ct = case
    positions = [0] if name == "mul" else list(range(len(args)))
    for i in positions:
        undefined = list(args)
        undefined[i] = UndefinedPrimal(get_aval(args[i]))
        cts = prim.transpose(ct, *undefined)
        only_i = [a if j == i else (np.zeros_like(a) if name != "mul" else a)
                  for j, a in enumerate(args)]
        assert get_aval(cts[i]) == get_aval(args[i])
        assert np.isclose(bilinear(ct, prim.bind(*only_i)), bilinear(cts[i], args[i]))


@pytest.mark.parametrize("prim", [C.real_p, C.imag_p, C.conj_p, C.complex_abs_p])
def test_complex_unary_batch_and_jit(prim):
    z = complex_normal((3, 4))
    expected = np.stack([prim.bind(z[:, j]) for j in range(4)], axis=0)
    batched = fd.vmap(lambda re, im: prim.bind(C.complex(re, im)), in_axes=1)(z.real, z.imag)
    np.testing.assert_allclose(batched, expected)
    jitted = fd.jit(lambda re, im: prim.bind(C.complex(re, im)))(z.real, z.imag)
    np.testing.assert_array_equal(jitted, prim.bind(z))


def test_complex_constructor_batch_and_zero_tangents():
    re, im = real_normal((3, 4)), real_normal((4,))
    out = fd.vmap(C.complex, in_axes=(0, None))(re, im)
    np.testing.assert_array_equal(out, re + 1j * im)
    # a tangent on one part only: the other stays symbolic and is broadcast
    _, t = fd.jvp(lambda r: C.real(C.complex(r, im)) + C.imag(C.complex(r, im)), (re,),
                  (np.ones_like(re),))
    np.testing.assert_array_equal(t, np.ones_like(re))


def test_complex_abs_gradient_including_zero():
    def f(xr, xi):
        return fnp.sum(C.complex_abs(C.complex(xr, xi)))
    xr, xi = np.array([3.0, 0.0, -1.0]), np.array([4.0, 0.0, 2.0])
    gr, gi = fd.grad(f, argnums=(0, 1))(xr, xi)
    r = np.hypot(xr, xi)
    np.testing.assert_allclose(gr, np.where(r > 0, xr / np.where(r > 0, r, 1), 0))
    np.testing.assert_allclose(gi, np.where(r > 0, xi / np.where(r > 0, r, 1), 0))
    assert gr[1] == 0.0 and gi[1] == 0.0  # JAX: abs'(0) = 0, never NaN
    check_grads(f, (xr[[0, 2]], xi[[0, 2]]), order=2)


# ---------------------------------------------------------------------------
# funcdiff.numpy.fft against numpy.fft

X = real_normal((4, 6))
Z = complex_normal((4, 6))
Z3 = complex_normal((3, 4, 5))

VALUE_CASES = [
    ("fft", (X,), {}), ("fft", (Z,), {}), ("fft", (X,), dict(n=4)), ("fft", (X,), dict(n=9)),
    ("fft", (Z,), dict(axis=0)), ("fft", (X,), dict(norm="ortho")),
    ("fft", (Z,), dict(norm="forward")), ("fft", (X.astype(F32),), {}),
    ("fft", (np.arange(6),), {}), ("fft", ([1.0, 2.0, 3.0],), {}),
    ("ifft", (Z,), {}), ("ifft", (X,), dict(n=3, axis=0, norm="ortho")),
    ("rfft", (X,), {}), ("rfft", (X,), dict(n=5)), ("rfft", (X,), dict(n=11, axis=0)),
    ("rfft", (X.astype(F32),), dict(norm="forward")),
    ("irfft", (Z,), {}), ("irfft", (Z,), dict(n=7)), ("irfft", (Z,), dict(n=4)),
    ("irfft", (X,), {}), ("irfft", (Z.astype(C64),), dict(axis=0, norm="ortho")),
    ("hfft", (Z,), {}), ("hfft", (X,), dict(n=5, norm="ortho")), ("ihfft", (X,), {}),
    ("ihfft", (X,), dict(n=4, norm="forward")),
    ("fft2", (Z3,), {}), ("fft2", (Z3,), dict(s=(3, 7), axes=(0, 2))),
    ("ifft2", (Z3,), dict(norm="ortho")), ("rfft2", (Z3.real,), {}),
    ("irfft2", (Z3,), {}), ("irfft2", (Z3,), dict(s=(5, 6))),
    ("fftn", (Z3,), {}), ("fftn", (Z3,), dict(axes=(2, 0))),
    ("fftn", (Z3,), dict(s=(2, 6), axes=(1, 2))),
    ("fftn", (Z3,), dict(axes=(1, 1))), ("fftn", (Z3,), dict(s=(3, 2), axes=(0, 0))),
    ("ifftn", (Z3,), dict(axes=(-1,), norm="forward")),
    ("rfftn", (Z3.real,), {}), ("rfftn", (Z3.real,), dict(axes=(2, 0))),
    ("rfftn", (Z3.real,), dict(s=(4, 4, 4), axes=(0, 1, 2))),
    ("rfftn", (Z3.real,), dict(axes=(1, 1))),
    ("irfftn", (Z3,), {}), ("irfftn", (Z3,), dict(s=(3, 4, 9), axes=(0, 1, 2))),
    ("irfftn", (Z3,), dict(axes=(0, 1))), ("irfftn", (Z3,), dict(axes=(1, 1), s=(4, 6))),
    ("irfftn", (Z3,), dict(axes=(0, 2), s=(-1, 7))), ("fftn", (Z3,), dict(axes=(1,), s=(-1,))),
    ("fftshift", (X,), {}), ("fftshift", (Z3,), dict(axes=1)),
    ("ifftshift", (X,), dict(axes=(0,))), ("ifftshift", (complex_normal((5, 3)),), {}),
]


@pytest.mark.parametrize("i", range(len(VALUE_CASES)),
                         ids=[f"{c[0]}-{sorted(c[2].items())}" for c in VALUE_CASES])
def test_values_match_numpy(i):
    name, args, kwargs = VALUE_CASES[i]
    expected = getattr(np.fft, name)(*args, **kwargs)
    got = getattr(fnp.fft, name)(*args, **kwargs)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.dtype, expected.dtype)
    tol = 1e-4 if expected.dtype in (F32, C64) else 1e-10
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    a = np.asarray(args[0])
    if a.dtype.kind == "c":  # jit's inputs are real: pass the parts
        staged = fd.jit(lambda re, im: getattr(fnp.fft, name)(C.complex(re, im), **kwargs))(
            a.real, a.imag)
    else:
        staged = fd.jit(lambda a: getattr(fnp.fft, name)(a, **kwargs))(a)
    assert staged.dtype == expected.dtype
    np.testing.assert_allclose(staged, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [1, 4, 5])
def test_frequencies(name, n):
    np.testing.assert_allclose(getattr(fnp.fft, name)(n, 0.3), getattr(np.fft, name)(n, 0.3))
    assert getattr(fnp.fft, name)(n).dtype == F64
    # d may be traced: d/dd of sum(k / (n d)) = -sum(k) / (n d^2)
    g = fd.grad(lambda d: fnp.sum(getattr(fnp.fft, name)(n, d)))(0.5)
    np.testing.assert_allclose(g, -np.sum(getattr(np.fft, name)(n, 1.0)) / 0.25, atol=1e-12)


def test_parts_of_complex_values_match_numpy():
    z = complex_normal((5,))
    for name in ("real", "imag", "conj", "conjugate", "abs", "absolute", "angle"):
        np.testing.assert_allclose(getattr(fnp, name)(z), getattr(np, name)(z), err_msg=name)
    np.testing.assert_allclose(fnp.angle(z, deg=True), np.angle(z, deg=True))
    x = np.array([-2.0, -0.0, 0.0, 3.0])
    np.testing.assert_array_equal(fnp.angle(x), np.angle(x))
    assert fnp.angle(np.float32(-1.0)).dtype == F32
    assert fnp.real(1 + 2j) == 1.0 and fnp.imag([1j, 2 + 3j]).tolist() == [1.0, 3.0]
    # real inputs keep their old path
    assert fnp.real(np.arange(3)).dtype == np.int64 and fnp.conj(np.array([True])).dtype == np.int8


# ---------------------------------------------------------------------------
# Derivatives: Parseval, round trips, norms, second order


def power(z):
    return fnp.sum(fnp.abs(z) ** 2)


# (loss of real x of shape (3, 4), its gradient in closed form): by Parseval,
# sum |fft(x)|^2 = n sum x^2 for a transform of n points (here n = 4 along the last
# axis, or 12 for fftn), so the gradient is 2 n x; "ortho" preserves the norm, "forward"
# and ifft divide it by n.
PARSEVAL = [
    ("fft", lambda x: power(fnp.fft.fft(x)), lambda x: 2 * 4 * x),
    ("fft-ortho", lambda x: power(fnp.fft.fft(x, norm="ortho")), lambda x: 2 * x),
    ("fft-forward", lambda x: power(fnp.fft.fft(x, norm="forward")), lambda x: 2 * x / 4),
    ("ifft", lambda x: power(fnp.fft.ifft(x)), lambda x: 2 * x / 4),
    ("fft2-ortho", lambda x: power(fnp.fft.fft2(x, norm="ortho")), lambda x: 2 * x),
    ("fftn", lambda x: power(fnp.fft.fftn(x)), lambda x: 2 * 12 * x),
    ("real*conj", lambda x: fnp.sum(C.real(E.mul(fnp.fft.fft(x), C.conj(fnp.fft.fft(x))))),
     lambda x: 2 * 4 * x),
    ("real^2+imag^2", lambda x: fnp.sum(fnp.real(fnp.fft.fft(x)) ** 2
                                        + fnp.imag(fnp.fft.fft(x)) ** 2),
     lambda x: 2 * 4 * x),
]


@pytest.mark.parametrize("name,loss,closed_form", PARSEVAL, ids=[p[0] for p in PARSEVAL])
def test_parseval_gradient_in_both_modes_and_second_order(name, loss, closed_form):
    x = real_normal((3, 4))
    expected = closed_form(x)
    np.testing.assert_allclose(fd.grad(loss)(x), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fd.jacfwd(loss)(x), expected, rtol=1e-10, atol=1e-10)
    # the Hessian is the constant diagonal of the closed form (forward over reverse)
    h = fd.hessian(loss)(x).reshape(x.size, x.size)
    np.testing.assert_allclose(h, np.diag(closed_form(np.ones_like(x)).reshape(-1)), atol=1e-9)
    check_grads(loss, (x,), order=2)


def test_parseval_of_rfft_through_numpy_dispatch():
    x = real_normal(8)
    w = np.full(5, 2.0)
    w[[0, -1]] = 1.0  # rfft keeps one of each conjugate pair: count it twice
    g = fd.grad(lambda x: np.sum(w * np.abs(fnp.fft.rfft(x)) ** 2))(x)
    np.testing.assert_allclose(g, 2 * 8 * x, rtol=1e-10)
    g = fd.grad(lambda x: np.sum(w * (np.real(fnp.fft.rfft(x)) ** 2
                                      + np.imag(fnp.fft.rfft(x)) ** 2)))(x)
    np.testing.assert_allclose(g, 2 * 8 * x, rtol=1e-10)


def test_parseval_with_complex_operators():
    x = real_normal(6)
    g = fd.grad(lambda x: fnp.sum(fnp.real(fnp.fft.fft(x) * fnp.conj(fnp.fft.fft(x)))))(x)
    np.testing.assert_allclose(g, 2 * 6 * x)


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_round_trip_gradients(n, norm):
    x, w = real_normal(n), real_normal(n)
    loss = lambda x: fnp.sum(w * fnp.fft.irfft(fnp.fft.rfft(x, norm=norm), n=n, norm=norm))
    np.testing.assert_allclose(fd.grad(loss)(x), w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fd.jacfwd(loss)(x), w, rtol=1e-10, atol=1e-12)
    loss_c = lambda x: fnp.sum(w * fnp.real(fnp.fft.ifft(fnp.fft.fft(x, norm=norm), norm=norm)))
    np.testing.assert_allclose(fd.grad(loss_c)(x), w, rtol=1e-10, atol=1e-12)
    check_grads(lambda x: fnp.fft.irfft(fnp.fft.rfft(x, norm=norm), n=n, norm=norm), (x,),
                order=1)


def parts(z):
    return fnp.real(z), fnp.imag(z)


GRAD_CASES = [  # real-to-real compositions of every function; checked to order 2
    ("fft", lambda x: parts(fnp.fft.fft(x ** 2, n=7))),
    ("ifft-axis0-ortho", lambda x: parts(fnp.fft.ifft(fnp.sin(x), axis=0, norm="ortho"))),
    ("rfft", lambda x: parts(fnp.fft.rfft(x * x, n=5))),
    ("irfft", lambda x: fnp.fft.irfft(fnp.fft.fft(x), n=9) ** 2),
    ("irfft-crop", lambda x: fnp.fft.irfft(fnp.fft.rfft(fnp.exp(x)), n=4, norm="forward")),
    ("hfft", lambda x: fnp.fft.hfft(fnp.fft.fft(x)) * x[0, 0]),
    ("ihfft", lambda x: parts(fnp.fft.ihfft(x ** 3))),
    ("fft2", lambda x: parts(fnp.fft.fft2(fnp.tanh(x), s=(3, 3)))),
    ("ifft2", lambda x: parts(fnp.fft.ifft2(x * x[0, 0]))),
    ("rfft2", lambda x: parts(fnp.fft.rfft2(x ** 2))),
    ("irfft2", lambda x: fnp.fft.irfft2(fnp.fft.rfft2(x ** 2))),
    ("fftn", lambda x: parts(fnp.fft.fftn(x ** 2, axes=(1, 0)))),
    ("ifftn", lambda x: parts(fnp.fft.ifftn(fnp.sin(x), s=(5, 2)))),
    ("rfftn", lambda x: parts(fnp.fft.rfftn(x ** 2, norm="ortho"))),
    ("irfftn", lambda x: fnp.fft.irfftn(fnp.fft.fftn(x ** 2), s=(3, 6))),
    ("shifts", lambda x: parts(fnp.fft.fftshift(fnp.fft.ifftshift(fnp.fft.fft(x ** 2)), axes=0))),
    # angle away from its branch cut (the DC term of a real signal is real)
    ("abs-angle", lambda x: (fnp.abs(fnp.fft.fft(x)) ** 3,
                             fnp.angle(C.complex(x, x ** 2 + 1.0)) * x[0, 0])),
    ("conj", lambda x: parts(fnp.conj(fnp.fft.fft(x ** 2)))),
]


@pytest.mark.parametrize("name,f", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads_order_2(name, f):
    x = real_normal((3, 4)) + 0.5
    check_grads(f, (x,), order=2, atol=1e-5, rtol=1e-5)


def test_complex_inputs_through_real_parts():
    """A function of a complex value, given as its real and imaginary parts."""
    def f(re, im):
        return parts(E.mul(fnp.fft.fft(C.complex(re, im)), C.complex(re, re)))
    check_grads(f, (real_normal(5), real_normal(5)), order=2)


def test_linear_transpose_and_vjp_of_complex_outputs_follow_the_convention():
    x, c = real_normal(8), complex_normal(5)
    (x_ct,) = fd.linear_transpose(fnp.fft.rfft, x)(c)
    v = real_normal(8)
    assert np.isclose(bilinear(c, np.fft.rfft(v)), float(np.dot(x_ct, v)))
    # jvp of a complex-valued function is the complex derivative
    y, t = fd.jvp(fnp.fft.fft, (x,), (v,))
    np.testing.assert_allclose(y, np.fft.fft(x))
    np.testing.assert_allclose(t, np.fft.fft(v))


def test_float32_stays_single_precision():
    x = real_normal(8, F32)
    g = fd.grad(lambda x: power(fnp.fft.rfft(x)))(x)
    assert g.dtype == F32
    _, t = fd.jvp(fnp.fft.fft, (x,), (x,))
    assert t.dtype == C64


# ---------------------------------------------------------------------------
# vmap, jit, nesting


@pytest.mark.parametrize("in_axes", [0, 1])
def test_vmap_equals_loop(in_axes):
    x = real_normal((4, 6))
    fns = [lambda v: fnp.fft.fft(v), lambda v: fnp.fft.rfft(v, n=5, norm="ortho"),
           lambda v: fnp.fft.irfft(fnp.fft.rfft(v), n=7), lambda v: fnp.fft.fftshift(v),
           lambda v: fd.grad(lambda u: power(fnp.fft.fft(u)))(v)]
    for f in fns:
        expected = np.stack([f(np.take(x, i, axis=in_axes)) for i in range(x.shape[in_axes])])
        np.testing.assert_allclose(fd.vmap(f, in_axes=in_axes)(x), expected, atol=1e-12)
    x3 = real_normal((2, 3, 4))
    f2 = lambda v: fnp.fft.rfft2(v, axes=(1, 0))
    np.testing.assert_allclose(fd.vmap(f2, in_axes=2)(x3),
                               np.stack([np.fft.rfft2(x3[..., i], axes=(1, 0))
                                         for i in range(4)]), atol=1e-12)


def test_jit_equals_eager_and_composes_with_grad():
    x = real_normal((3, 8))
    loss = lambda x: power(fnp.fft.rfft2(x, norm="ortho")) + fnp.sum(fnp.fft.irfft(
        fnp.fft.rfft(x ** 2), n=8))
    np.testing.assert_allclose(fd.jit(loss)(x), loss(x))
    np.testing.assert_allclose(fd.jit(fd.grad(loss))(x), fd.grad(loss)(x), atol=1e-12)
    np.testing.assert_allclose(fd.grad(fd.jit(loss))(x), fd.grad(loss)(x), atol=1e-12)


def test_no_perturbation_confusion():
    def inner(x):
        return fd.grad(lambda y: power(fnp.fft.fft(x * y)))(1.0)  # = 2 n |x|^2 y at y=1
    x = real_normal(4)
    n = x.size
    np.testing.assert_allclose(inner(x), 2 * n * np.sum(x ** 2))
    np.testing.assert_allclose(fd.grad(lambda x: inner(x))(x), 4 * n * x)


# ---------------------------------------------------------------------------
# Bad input

BAD = [
    (lambda: fnp.fft.fft(np.ones(4), norm="bad"), nfft.FFTNormError, "norm"),
    (lambda: fnp.fft.fft(np.ones(4), n=0), ShapeError, r"\(0\)"),
    (lambda: fnp.fft.fft(np.ones(4), axis=1), AxisError, "axis 1"),
    (lambda: fnp.fft.fft(np.float64(1.0)), ShapeError, "rank"),
    (lambda: fnp.fft.rfft(np.ones(4, C128)), DTypeError, "real input"),
    (lambda: fnp.fft.irfft(np.ones(1, C128)), ShapeError, r"\(0\)"),
    (lambda: fnp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1)), ShapeError, "lengths"),
    (lambda: fnp.fft.fft(np.ones(4), out=np.ones(4)), UnsupportedNumpyError, "out="),
    (lambda: fnp.fft.fft(np.array(["a"])), DTypeError, "fft.fft"),
    (lambda: fnp.fft.fftfreq(2.5), InvalidArgumentError, "integer"),
    (lambda: fnp.fft.fftshift(np.ones(3), axes=2), AxisError, "axis 2"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_funcdiff_errors(i):
    thunk, exc, pattern = BAD[i]
    with pytest.raises(exc, match=pattern):
        thunk()
    assert issubclass(exc, FunctionalDiffError)


def test_norm_error_is_a_value_error_like_numpy():
    with pytest.raises(ValueError):
        fnp.fft.ifft(np.ones(2), norm="unitary")


def test_complex_transform_inputs_follow_jaxs_convention():
    z = complex_normal(4)
    # the gradient of a real function of z = x + iy is df/dx - i df/dy
    g = fd.grad(lambda z: fnp.sum(fnp.abs(z)))(z)
    np.testing.assert_allclose(g, np.conj(z) / np.abs(z), rtol=1e-12)
    np.testing.assert_allclose(fd.jacrev(fnp.abs)(z), np.diag(np.conj(z) / np.abs(z)),
                               rtol=1e-12)
    np.testing.assert_allclose(fd.jit(fnp.abs)(z), np.abs(z))
    # casting back from complex to real would drop the imaginary part: an error
    with pytest.raises(DTypeError, match="fnp.real"):
        fd.grad(lambda x: fnp.sum(fnp.astype(fnp.astype(x, np.complex128), np.float64)))(
            np.ones(2))


REAL_TO_COMPLEX = {  # real losses through complex values made from real ones
    "astype": lambda x: fnp.sum(fnp.abs(fnp.astype(x, np.complex128) * (1 + 2j)) ** 2),
    "method": lambda x: fnp.sum(fnp.real(x.astype(np.complex128) ** 3)),
    "plus-0j": lambda x: fnp.sum(fnp.real((x + 0j) ** 3)),
    "exp-1j": lambda x: fnp.sum(fnp.imag(fnp.exp(1j * x)) * x),
    "angle": lambda x: fnp.sum(fnp.angle(x * (1 + 2j) + 1j)),
    "fft": lambda x: fnp.sum(fnp.abs(fnp.fft.fft(x * fnp.exp(0.5j * x))) ** 2),
}


@pytest.mark.parametrize("name", list(REAL_TO_COMPLEX))
def test_real_to_complex_casts_are_differentiable(name):
    f = REAL_TO_COMPLEX[name]
    x = np.array([0.3, -1.2, 2.0])
    check_grads(f, (x,), order=2)
    g = fd.grad(f)(x)
    np.testing.assert_allclose(fd.jit(fd.grad(f))(x), g, rtol=1e-12)
    np.testing.assert_allclose(fd.vmap(fd.grad(f))(np.stack([x, 2 * x]))[0], g, rtol=1e-12)
    g32 = fd.grad(f)(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g, rtol=1e-3, atol=1e-3)


def test_exp_of_imaginary_angle_has_the_textbook_derivative():
    x = 0.3
    assert fd.grad(lambda t: fnp.real(fnp.exp(1j * t)))(x) == pytest.approx(-np.sin(x))
    assert fd.grad(lambda t: fnp.imag(fnp.exp(1j * t)))(x) == pytest.approx(np.cos(x))


def test_docstring_examples():
    from funcdiff.numpy import _fft_complex, _fft_frequencies, _fft_real
    for module in (nfft, _fft_complex, _fft_real, _fft_frequencies, P):
        result = doctest.testmod(module, extraglobs={"np": np},
                                 optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module


# ---------------------------------------------------------------------------
# Complex intermediates in funcdiff.numpy arithmetic (inputs and outputs stay real)


def test_fft_times_conj_loss_by_grad_jvp_and_check_grads():
    x = real_normal(6)
    loss = lambda x: fnp.real(fnp.sum(fnp.fft.fft(x) * fnp.conj(fnp.fft.fft(x))))
    np.testing.assert_allclose(fd.grad(loss)(x), 2 * 6 * x, rtol=1e-10)
    t = real_normal(6)
    _, t_out = fd.jvp(loss, (x,), (t,))
    np.testing.assert_allclose(t_out, np.dot(2 * 6 * x, t), rtol=1e-10)
    check_grads(loss, (x,), order=2)


COMPLEX_ARITHMETIC = [  # real -> real losses through complex arithmetic, checked to order 2
    ("exp", lambda x: fnp.real(fnp.sum(fnp.exp(0.3 * C.complex(x, x ** 2))))),
    ("log", lambda x: fnp.imag(fnp.sum(fnp.log(fnp.fft.fft(x) + 10.0)))),
    ("div", lambda x: fnp.real(fnp.sum(1.0 / (fnp.fft.fft(x) + 10.0)))),
    ("sub-neg-pow", lambda x: fnp.real(fnp.sum(-(fnp.fft.fft(x) - 1.0) ** 3))),
    ("cumsum", lambda x: fnp.imag(fnp.sum(fnp.cumsum(fnp.fft.fft(x)) ** 2))),
    ("complex-scalar", lambda x: fnp.real(fnp.sum((1 + 2j) * fnp.fft.fft(x) * 1j))),
]


@pytest.mark.parametrize("name,loss", COMPLEX_ARITHMETIC, ids=[c[0] for c in COMPLEX_ARITHMETIC])
def test_complex_arithmetic_gradients(name, loss):
    x = real_normal(5)
    check_grads(loss, (x,), order=2)
    np.testing.assert_allclose(fd.jit(loss)(x), loss(x), rtol=1e-12)


def test_complex_exp_matches_numpy():
    x = real_normal(5)
    loss = lambda x: fnp.real(fnp.sum(fnp.exp(C.complex(fnp.zeros_like(x), x))))
    np.testing.assert_allclose(loss(x), np.sum(np.cos(x)))
    np.testing.assert_allclose(fd.grad(loss)(x), -np.sin(x), rtol=1e-12)


def test_grad_of_complex_scalar_output_asks_for_a_real_one():
    with pytest.raises(fd.FunctionalDiffError, match=r"real scalar.*fnp\.real.*fnp\.abs"):
        fd.grad(lambda x: fnp.sum(fnp.fft.fft(x)))(real_normal(4))


def test_vjp_of_complex_output_takes_a_complex_cotangent():
    x, ct = real_normal(6), complex_normal((6,))
    out, pullback = fd.vjp(fnp.fft.fft, x)
    assert out.dtype == C128
    (g,) = pullback(ct)
    # JAX's convention: Re(sum(ct * fft(t))) == sum(g * t), i.e. g = Re(fft(ct))
    np.testing.assert_allclose(g, np.real(np.fft.fft(ct)), rtol=1e-12)


def test_complex_inputs_and_python_powers():
    np.testing.assert_allclose(fd.grad(lambda z: fnp.real(fnp.sum(z)))(complex_normal((3,))),
                               np.ones(3, complex))
    # non-integer powers of complex values: numpy's principal branch, d/dz z**0.5 = 0.5 z**-0.5
    x = real_normal(4)
    g = fd.grad(lambda x: fnp.real(fnp.sum(fnp.fft.fft(x) ** 0.5)))(x)
    np.testing.assert_allclose(g, np.real(np.fft.fft(0.5 * np.fft.fft(x) ** -0.5)), rtol=1e-10)
