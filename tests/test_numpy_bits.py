"""gcd, lcm, the shifts, frexp, ldexp, nextafter, spacing, i0 and kaiser: numpy's values and
dtypes bit for bit (each binds a primitive whose impl is numpy's), over integer dtypes
(negative values, zeros, counts past the bit width) and float dtypes (inf, NaN, signed
zeros, denormals), with broadcasting and numpy 2's promotion; jit against eager; vmap
against a loop; derivatives to order 2 in both modes where there are any (frexp's
mantissa, ldexp in x, i0, kaiser in beta), the zero derivative of spacing and the error of
nextafter's; numpy calls on tracers dispatching here; and the errors for dtypes numpy
has no loop for either.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.errors import (DifferentiationError, DTypeError, InvalidArgumentError,
                             UnsupportedNumpyError)
from funcdiff.test_util import check_grads
from numpy_tables import assert_matches, assert_vmap_equals_a_loop, both

RNG = np.random.default_rng(0)

TINY64, TINY32 = np.finfo(np.float64).tiny, np.finfo(np.float32).tiny
SPECIAL64 = np.array([0.0, -0.0, 1.0, -3.0, 0.1, np.inf, -np.inf, np.nan, 5e-324, -5e-324,
                      TINY64, TINY64 / 3, np.finfo(np.float64).max, -1e-300, 2.0 ** 60])
SPECIAL32 = np.array([0.0, -0.0, 1.0, -3.0, 0.1, np.inf, -np.inf, np.nan, TINY32, TINY32 / 5,
                      -1e-45, np.finfo(np.float32).max, 7.5e5], np.float32)


def _ints(*shape, dtype="i8", lo=-30, hi=31):
    """Integers with many common divisors, negatives and zeros."""
    return (RNG.integers(lo, hi, shape) * RNG.choice([1, 2, 6], shape)).astype(dtype)


def _counts(*shape, dtype="i8"):
    """Shift counts, including negative ones and ones past the bit width."""
    return RNG.integers(-2, 8 * np.dtype(dtype).itemsize + 3, shape).astype(dtype)


def _floats(*shape, dtype="f8", scale=3.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


class Row(NamedTuple):
    name: str
    fn: Callable          # funcdiff version, called with the arrays
    ref: Callable         # numpy version
    args: tuple           # arrays (Python scalars only in the value table)


def _scalar(f, value, first=False):
    """``f`` with the Python scalar ``value`` as its second (or first) argument."""
    return (lambda x: f(value, x)) if first else (lambda x: f(x, value))


ROWS = [
    Row("gcd-int64", *both("gcd"), (_ints(4, 5), _ints(4, 5))),
    Row("gcd-int32-broadcast", *both("gcd"), (_ints(3, 1, dtype="i4"), _ints(4, dtype="i4"))),
    Row("gcd-int8-extremes", *both("gcd"), (np.array([-128, -128, 127, 0, -6], np.int8),
                                            np.array([0, -128, 0, 0, 4], np.int8))),
    Row("gcd-uint8", *both("gcd"), (_ints(6, dtype="u1", lo=0, hi=40),
                                    _ints(6, dtype="u1", lo=0, hi=40))),
    Row("gcd-int8-uint8-promote", *both("gcd"), (_ints(5, dtype="i1"),
                                                 _ints(5, dtype="u1", lo=0, hi=20))),
    Row("gcd-python-int", _scalar(fnp.gcd, 12), _scalar(np.gcd, 12), (_ints(5, dtype="i2"),)),
    Row("lcm-int64", *both("lcm"), (_ints(4, 5), _ints(4, 5))),
    Row("lcm-int32-broadcast", *both("lcm"), (_ints(2, 3, dtype="i4"), _ints(3, dtype="i4"))),
    Row("lcm-int8-wraps", *both("lcm"), (np.array([100, -7, 0, 16], np.int8),
                                         np.array([3, 5, 9, -12], np.int8))),
    Row("lcm-uint8", *both("lcm"), (_ints(6, dtype="u1", lo=0, hi=40),
                                    _ints(6, dtype="u1", lo=0, hi=40))),
    Row("left_shift-int64", *both("left_shift"), (_ints(4, 3), _counts(4, 3))),
    Row("left_shift-int8", *both("left_shift"), (_ints(12, dtype="i1"), _counts(12, dtype="i1"))),
    Row("left_shift-uint8-int8", *both("left_shift"), (_ints(6, dtype="u1", lo=0, hi=40),
                                                       _counts(6, dtype="i1"))),
    Row("left_shift-bool", *both("left_shift"), (np.array([True, False, True]),
                                                 np.array([True, True, False]))),
    Row("left_shift-python-count", _scalar(fnp.left_shift, 3), _scalar(np.left_shift, 3),
        (_ints(5, dtype="i4"),)),
    Row("right_shift-int64", *both("right_shift"), (_ints(4, 3), _counts(4, 3))),
    Row("right_shift-int8-negative", *both("right_shift"),
        (np.array([-128, -1, -7, 5, 127, -100], np.int8),
         np.array([1, 7, 9, 20, -1, 2], np.int8))),
    Row("right_shift-uint8", *both("right_shift"), (np.array([200, 255, 1, 128], np.uint8),
                                                    np.array([1, 7, 8, 20], np.uint8))),
    Row("right_shift-broadcast", *both("right_shift"), (_ints(3, 1, dtype="i4"),
                                                        _counts(4, dtype="i4"))),
    Row("bitwise_left_shift", *both("bitwise_left_shift"), (_ints(5), _counts(5))),
    Row("bitwise_right_shift", *both("bitwise_right_shift"), (_ints(5, dtype="i2"),
                                                              _counts(5, dtype="i2"))),
    Row("frexp-float64-special", *both("frexp"), (SPECIAL64,)),
    Row("frexp-float32-special", *both("frexp"), (SPECIAL32,)),
    Row("frexp-float64", *both("frexp"), (_floats(3, 4, scale=1e5),)),
    Row("frexp-int64", *both("frexp"), (_ints(5),)),
    Row("frexp-int8", *both("frexp"), (_ints(5, dtype="i1"),)),
    Row("frexp-bool", *both("frexp"), (np.array([True, False]),)),
    Row("frexp-0d", *both("frexp"), (np.array(-6.5),)),
    Row("ldexp-float64-edges", *both("ldexp"),
        (np.array([0.75, 0.5, 3.0, 1.0, -0.6, 1.5, np.inf, np.nan, -0.0, 5e-324]),
         np.array([1024, 1024, -1075, -1074, -1070, 2000, -3, 4, 7, 1100]))),
    Row("ldexp-float32-edges", *both("ldexp"), (np.array([1.0, 0.75, 1.5, 3.0], np.float32),
                                                np.array([127, 128, -149, -150], np.int32))),
    Row("ldexp-broadcast-int8", *both("ldexp"), (_floats(3, 1), _ints(4, dtype="i1"))),
    Row("ldexp-int-x", *both("ldexp"), (_ints(4, dtype="i1"), _ints(4, dtype="u2", lo=0, hi=5))),
    Row("ldexp-bool-exponent", *both("ldexp"), (_floats(3, dtype="f4"),
                                                np.array([True, False, True]))),
    Row("ldexp-frexp-round-trip", lambda x: fnp.ldexp(*fnp.frexp(x)),
        lambda x: np.ldexp(*np.frexp(x)), (SPECIAL64,)),
    Row("ldexp-frexp-round-trip-float32", lambda x: fnp.ldexp(*fnp.frexp(x)),
        lambda x: np.ldexp(*np.frexp(x)), (SPECIAL32,)),
    Row("nextafter-float64-special", *both("nextafter"),
        (np.repeat(SPECIAL64, SPECIAL64.size), np.tile(SPECIAL64, SPECIAL64.size))),
    Row("nextafter-float32-special", *both("nextafter"),
        (np.repeat(SPECIAL32, SPECIAL32.size), np.tile(SPECIAL32, SPECIAL32.size))),
    Row("nextafter-float32-python-float", _scalar(fnp.nextafter, np.inf),
        _scalar(np.nextafter, np.inf), (SPECIAL32,)),
    Row("nextafter-broadcast", *both("nextafter"), (_floats(3, 1), np.array([-np.inf, 0.0, 5.0]))),
    Row("nextafter-int", *both("nextafter"), (_ints(4), _ints(4))),
    Row("nextafter-int8", *both("nextafter"), (_ints(4, dtype="i1"), _ints(4, dtype="i1"))),
    Row("nextafter-mixed-float", *both("nextafter"), (_floats(4, dtype="f4"), _floats(4))),
    Row("spacing-float64-special", *both("spacing"), (SPECIAL64,)),
    Row("spacing-float32-special", *both("spacing"), (SPECIAL32,)),
    Row("spacing-int64", *both("spacing"), (_ints(5),)),
    Row("spacing-int8", *both("spacing"), (_ints(5, dtype="i1"),)),
    Row("i0-float64", *both("i0"), (_floats(4, 5, scale=8.0),)),  # both of numpy's ranges
    Row("i0-float64-special", *both("i0"), (SPECIAL64[np.abs(SPECIAL64) < 700],)),
    Row("i0-float32", *both("i0"), (_floats(6, dtype="f4", scale=10.0),)),
    Row("i0-int8", *both("i0"), (_ints(5, dtype="i1"),)),
    Row("i0-bool", *both("i0"), (np.array([True, False]),)),
    Row("i0-0d", *both("i0"), (np.array(9.5),)),
]
ARRAY_ROWS = [r for r in ROWS if all(isinstance(a, np.ndarray) for a in r.args)]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_values_and_dtypes_match_numpy(row):
    with np.errstate(all="ignore"):
        assert_matches(row.fn(*row.args), row.ref(*row.args), exact=True, where=row.name)


def test_python_scalars_match_numpy():
    cases = [("gcd", (12, -18)), ("lcm", (4, 6)), ("left_shift", (3, 4)),
             ("right_shift", (-9, 1)), ("frexp", (12.0,)), ("frexp", (3,)), ("ldexp", (3, 2)),
             ("ldexp", (0.75, 1024)),
             ("nextafter", (1.0, 0)), ("nextafter", (1, 2)), ("spacing", (1.0,)),
             ("spacing", (True,)), ("i0", (2.0,)), ("i0", (3,))]
    for name, args in cases:
        assert_matches(getattr(fnp, name)(*args), getattr(np, name)(*args), exact=True,
                       where=f"{name}{args}")


@pytest.mark.parametrize("row", ARRAY_ROWS, ids=[r.name for r in ARRAY_ROWS])
def test_jit_equals_eager(row):
    with np.errstate(all="ignore"):
        assert_matches(fd.jit(row.fn)(*row.args), row.fn(*row.args), exact=True, where=row.name)


@pytest.mark.parametrize("row", ARRAY_ROWS, ids=[r.name for r in ARRAY_ROWS])
def test_vmap_equals_a_loop(row):
    with np.errstate(all="ignore"):
        assert_vmap_equals_a_loop(row.fn, row.args)


# ---------------------------------------------------------------------------
# Derivatives


def _binades(*shape):
    """Values m * 2**k, 0.55 <= |m| <= 0.95, k in [-5, 5]: several binades of frexp,
    away from the powers of two where its mantissa jumps."""
    m = RNG.uniform(0.55, 0.95, shape) * RNG.choice([-1.0, 1.0], shape)
    return np.ldexp(m, RNG.integers(-5, 6, shape))


GRAD_ROWS = [
    ("frexp-mantissa", lambda x: fnp.frexp(x)[0], (_binades(3, 4),)),
    ("frexp-mantissa-times-x", lambda x: fnp.frexp(x)[0] * x ** 2, (_binades(5),)),
    ("ldexp", lambda x: fnp.ldexp(x, np.array([[3], [-2]])) * x, (_floats(4),)),
    ("i0", fnp.i0, (np.array([-12.0, -8.5, -1.3, 0.0, 0.4, 7.9, 8.1, 20.0]),)),
    ("i0-composed", lambda x, y: fnp.i0(x * y) / fnp.i0(y), (_floats(4), _floats(4))),
    ("kaiser-beta", lambda b: fnp.kaiser(7, b), (np.array(3.5),)),
    ("kaiser-beta-large", lambda b: fnp.kaiser(6, b) * b, (np.array(14.0),)),
    ("kaiser-beta-negative", lambda b: fnp.kaiser(5, b), (np.array(-2.0),)),
    ("spacing-plus-x", lambda x: fnp.spacing(x) + x, (_floats(5),)),
    ("gcd-scales-x", lambda x: x * fnp.gcd(np.array([4, 6, -9]), 6), (_floats(3),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_to_order_two(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_derivative_values():
    x = np.array([3.0, -0.3, 5e-324, 0.0, 1e300])
    with np.errstate(over="ignore"):
        want = np.ldexp(1.0, -np.frexp(x)[1])  # 2**-exponent, inf below the normal range
    np.testing.assert_array_equal(fd.grad(lambda v: fnp.sum(fnp.frexp(v)[0]))(x), want)
    np.testing.assert_array_equal(fd.grad(lambda v: fnp.sum(fnp.spacing(v)))(x), np.zeros(5))
    sps = pytest.importorskip("scipy.special")
    y = np.array([-9.0, -0.5, 0.0, 2.0, 30.0])
    np.testing.assert_allclose(fd.vmap(fd.grad(fnp.i0))(y), sps.i1(y), rtol=3e-15)
    np.testing.assert_allclose(fd.vmap(fd.grad(fd.grad(fnp.i0)))(y),
                               [sps.i0(9.0) - sps.i1(9.0) / 9.0, sps.i0(0.5) - sps.i1(0.5) / 0.5,
                                0.5, sps.i0(2.0) - sps.i1(2.0) / 2.0,
                                sps.i0(30.0) - sps.i1(30.0) / 30.0], rtol=1e-14)
    # d/dbeta kaiser(M, beta)[n] = (r I1(beta r) I0(beta) - I1(beta) I0(beta r)) / I0(beta)**2
    beta, M = 4.0, 6
    n = np.arange(M)
    r = np.sqrt(1 - ((n - (M - 1) / 2) / ((M - 1) / 2)) ** 2)
    i0, i1 = sps.i0, sps.i1
    want = (r * i1(beta * r) * i0(beta) - i1(beta) * i0(beta * r)) / i0(beta) ** 2
    np.testing.assert_allclose(fd.jacfwd(lambda b: fnp.kaiser(M, b))(beta), want, rtol=1e-13)
    np.testing.assert_allclose(fd.jacrev(lambda b: fnp.kaiser(M, b))(beta), want, rtol=1e-13)


def test_float32_stays_float32_through_derivatives():
    x = _binades(4).astype(np.float32)
    for f in [lambda v: fnp.sum(fnp.frexp(v)[0] * v), lambda v: fnp.sum(fnp.i0(v) * v),
              lambda v: fnp.sum(fnp.spacing(v) + v)]:
        assert np.asarray(f(x)).dtype == np.float32
        g = fd.grad(f)(x)
        assert g.dtype == np.float32 and np.all(np.isfinite(g))
        assert fd.jit(fd.grad(f))(x).dtype == np.float32


def test_nextafter_has_no_derivative():
    x, y = _floats(3), _floats(3)
    with pytest.raises(DifferentiationError, match="nextafter has no derivative"):
        fd.grad(lambda v: fnp.sum(fnp.nextafter(v, y)))(x)
    with pytest.raises(DifferentiationError, match="nextafter has no derivative"):
        fd.jvp(lambda w: np.nextafter(x, w), (y,), (np.ones(3),))
    # with the gradient stopped, it is a constant
    g = fd.grad(lambda v: fnp.sum(fnp.nextafter(fd.stop_gradient(v), y) * v))(x)
    np.testing.assert_array_equal(g, np.nextafter(x, y))


def test_integer_results_carry_no_tangent():
    n = np.array([4, 6, -9])
    out, t = fd.jvp(lambda x: fnp.frexp(x)[1], (_floats(3),), (np.ones(3),))
    assert out.dtype == np.int32 and t.dtype == dtypes.float0
    with pytest.raises(DifferentiationError, match="dtype int64, and only floating and complex values"):
        fd.grad(lambda m: fnp.sum(fnp.gcd(m, 6)))(n)


# ---------------------------------------------------------------------------
# kaiser


@pytest.mark.parametrize("M", [-2, 0, 1, 2, 3, 8, 13, np.int32(6)])
def test_kaiser_matches_numpy(M):
    for beta in (0.0, 0.5, 5.0, 8.6, 14, -3.0, 40.0, np.float32(2.5), True, np.array(6.0)):
        got, want = fnp.kaiser(M, beta), np.kaiser(M, beta)
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape, (M, beta)
        np.testing.assert_array_equal(got, want, err_msg=f"kaiser({M}, {beta!r})")


def test_kaiser_under_transforms():
    betas = np.array([0.0, 3.0, 9.0])
    want = np.stack([np.kaiser(7, b) for b in betas])
    np.testing.assert_array_equal(fd.vmap(lambda b: fnp.kaiser(7, b))(betas), want)
    np.testing.assert_array_equal(fd.jit(fnp.kaiser, static_argnums=0)(7, 3.0), want[1])
    np.testing.assert_array_equal(fd.jit(lambda b: fnp.kaiser(7, b))(np.float32(3.0)),
                                  np.kaiser(7, np.float32(3.0)))
    assert fd.grad(lambda b: fnp.sum(fnp.kaiser(1, b)))(2.0) == 0.0  # [1.] for every beta
    assert fd.jit(lambda b: fnp.kaiser(0, b))(2.0).shape == (0,)


# ---------------------------------------------------------------------------
# numpy calls on tracers dispatch here


def test_numpy_functions_dispatch_on_tracers():
    n, x = _ints(6), _floats(6)

    def ints(m):
        return (np.gcd(m, 12), np.lcm(m, 4), np.left_shift(m, 2), np.right_shift(m, 1),
                np.bitwise_left_shift(m, 3), np.bitwise_right_shift(m, 1), m << 2, m >> 1)

    for got, want in zip(fd.jit(ints)(n), ints(n)):
        assert_matches(got, want, exact=True)

    def floats(v):
        mantissa, exponent = np.frexp(v)
        return mantissa * np.i0(v) + np.spacing(v), exponent, np.nextafter(v, 0.0)

    for got, want in zip(fd.jit(floats)(x), floats(x)):
        assert_matches(got, want, exact=True)
    check_grads(lambda v: np.frexp(v)[0] * np.i0(v) + np.spacing(v), (_binades(4),), order=1)
    assert "frexp" in str(fd.make_jaxpr(floats)(x))


# ---------------------------------------------------------------------------
# Errors

ERRORS = [
    ("gcd-float", lambda: fnp.gcd(np.array([4.0]), 2), DTypeError,
     r"gcd takes integers only.*float64.*astype"),
    ("gcd-bool", lambda: fnp.gcd(np.array([True]), np.array([False])), DTypeError,
     r"gcd takes integers only.*bool.*Convert booleans"),
    ("lcm-uint64-int64", lambda: fnp.lcm(np.array([4], np.uint64), np.array([6])), DTypeError,
     r"lcm takes integers only.*float64"),
    ("lcm-float-traced", lambda: fd.jit(lambda v: fnp.lcm(v, 3))(np.ones(2)), DTypeError,
     r"lcm takes integers only"),
    ("left_shift-float", lambda: fnp.left_shift(np.ones(2), 1), DTypeError,
     r"left_shift takes integers only.*float64"),
    ("right_shift-float32-traced", lambda: fd.jit(lambda v: np.right_shift(v, 1))(
        np.ones(2, np.float32)), DTypeError, r"right_shift takes integers only.*float32"),
    ("i0-complex", lambda: fnp.i0(np.array([1j])), DTypeError, r"i0 takes real values only"),
    ("frexp-out", lambda: fnp.frexp(np.ones(2), out=(np.ones(2), None)), UnsupportedNumpyError,
     r"frexp does not support the argument out="),
    ("nextafter-where", lambda: fnp.nextafter(np.ones(2), 2.0, where=np.ones(2, bool)),
     UnsupportedNumpyError, r"nextafter does not support the argument where="),
    ("kaiser-beta-array", lambda: fnp.kaiser(4, np.ones(3)), InvalidArgumentError,
     r"kaiser: beta must be a real scalar, got f64\[3\]"),
    ("kaiser-M-float", lambda: fnp.kaiser(4.5, 1.0), InvalidArgumentError,
     r"kaiser: M is the number of points"),
    ("ldexp-float-exponent", lambda: fnp.ldexp(np.ones(2), 1.5), DTypeError,
     r"ldexp needs integer exponents.*float64"),
    ("ldexp-uint64-exponent", lambda: fnp.ldexp(np.ones(2), np.uint64(3)), DTypeError,
     r"ldexp needs integer exponents \(not uint64"),
    ("gcd-shapes", lambda: fnp.gcd(np.ones(3, int), np.ones(4, int)), ValueError,
     r"gcd cannot broadcast shapes \(3,\) and \(4,\)"),
]


@pytest.mark.parametrize("name,call,exc,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, call, exc, match):
    with pytest.raises(exc, match=match):
        call()
