"""The last numpy gaps met in real code: fnp.r_ / fnp.c_, sliding_window_view (and
numpy's own dispatching to it), iscomplex, isreal, real_if_close, packbits /
unpackbits, and the integer cast of a traced float in np.array / fnp.array.

Values and dtypes against numpy's; derivatives with check_grads (order 2, both
modes) and against closed forms; jit and vmap against eager; the refusals.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (ConcretizationError, DTypeError, ShapeError,
                             TracerArrayConversionError, UnsupportedNumpyError)
from funcdiff.numpy.lib.stride_tricks import sliding_window_view
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)
A, B = np.array([1, 2]), np.arange(6.0).reshape(2, 3)


def same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# r_ and c_

INDEX_EXPRESSIONS = [
    lambda R: R[A, 0, 4:6],
    lambda R: R[1:2:5j, A],
    lambda R: R[A, 2.5],
    lambda R: R[np.array([1.0], np.float32), 2.5],
    lambda R: R["0,2", A, A],
    lambda R: R["0,2,0", A, A],
    lambda R: R["1,2,0", A, A],
    lambda R: R[B, B],
    lambda R: R["-1", B, B],
    lambda R: R["0,3,-1", A, B],
    lambda R: R[3],
]


@pytest.mark.parametrize("concatenator", ["r_", "c_"])
@pytest.mark.parametrize("row", range(len(INDEX_EXPRESSIONS)))
def test_index_expressions_match_numpy(concatenator, row):
    expression = INDEX_EXPRESSIONS[row]
    try:
        want = expression(getattr(np, concatenator))
    except ValueError:
        with pytest.raises(ValueError):
            expression(getattr(fnp, concatenator))
        return
    same(expression(getattr(fnp, concatenator)), want)


def test_index_expressions_differentiate_jit_and_vmap():
    x = RNG.normal(size=3)
    r = lambda v: fnp.r_[v, 0.0, 3 * v, 1:3] ** 2
    c = lambda v: fnp.sin(fnp.c_[v, v ** 2])
    check_grads(r, (x,), order=2)
    check_grads(c, (x,), order=2)
    np.testing.assert_allclose(fd.grad(lambda v: r(v).sum())(x), 20 * x)  # 2v + 18v
    for f in (r, c):
        np.testing.assert_allclose(fd.jit(f)(x), f(x))
        xs = RNG.normal(size=(4, 3))
        np.testing.assert_allclose(fd.vmap(f)(xs), np.stack([f(row) for row in xs]))
    same(c(x), np.sin(np.c_[x, x ** 2]))


def test_index_expressions_refuse_what_they_cannot_do():
    with pytest.raises(UnsupportedNumpyError, match="matrix"):
        fnp.r_["r", A]
    with pytest.raises(fd.FunctionalDiffError, match="directive"):
        fnp.r_["a,b", A]
    with pytest.raises(fd.FunctionalDiffError, match="first"):
        fnp.r_[A, "0"]


def test_numpys_r_converts_its_items_and_refuses_a_tracer():
    with pytest.raises(TracerArrayConversionError, match="_index_tricks"):
        fd.grad(lambda v: np.r_[v, v].sum())(np.ones(2))


# ---------------------------------------------------------------------------
# sliding_window_view

WINDOWS = [((2, 3, 4), None), (2, 1), (3, -1), ((2, 2), (1, 1)), ((2, 3), (2, 0)), (0, 0),
           ((1, 1, 1), None), (5, 2)]


@pytest.mark.parametrize("window_shape, axis", WINDOWS)
def test_sliding_window_view_matches_numpy(window_shape, axis):
    x = np.arange(60.0).reshape(3, 4, 5)
    want = np.lib.stride_tricks.sliding_window_view(x, window_shape, axis)
    same(sliding_window_view(x, window_shape, axis), want)
    # numpy's own function dispatches here on a tracer
    same(fd.jit(lambda v: np.lib.stride_tricks.sliding_window_view(v, window_shape, axis))(x),
         want)


def test_sliding_window_view_derivatives_jit_and_vmap():
    x = RNG.normal(size=(4, 5))
    f = lambda v: fnp.tanh(sliding_window_view(v, (2, 3)))
    check_grads(f, (x,), order=2)
    # each entry is counted once for every window that contains it
    counts = np.outer([1, 2, 2, 1], [1, 2, 3, 2, 1]).astype(float)
    np.testing.assert_allclose(fd.grad(lambda v: sliding_window_view(v, (2, 3)).sum())(x), counts)
    np.testing.assert_allclose(
        fd.grad(lambda v: np.lib.stride_tricks.sliding_window_view(v, 3, axis=1).sum())(x),
        np.tile([1.0, 2, 3, 2, 1], (4, 1)))
    np.testing.assert_allclose(fd.jit(f)(x), f(x))
    xs = RNG.normal(size=(3, 4, 5))
    np.testing.assert_allclose(fd.vmap(f)(xs), np.stack([f(row) for row in xs]))


def test_sliding_window_view_refuses_bad_windows():
    with pytest.raises(ShapeError, match="longer"):
        sliding_window_view(np.arange(3.0), 4)
    with pytest.raises(ShapeError, match="one per axis"):
        sliding_window_view(np.ones((2, 2)), 2)
    with pytest.raises(fd.FunctionalDiffError, match="writeable"):
        sliding_window_view(np.ones(3), 2, writeable=True)
    with pytest.raises(fd.FunctionalDiffError, match="axis"):
        sliding_window_view(np.ones(3), 2, axis=1)


# ---------------------------------------------------------------------------
# iscomplex, isreal, real_if_close

COMPLEX_INPUTS = [np.array([1 + 1j, 1 + 0j, 4.5, -0j, 3j]), np.array([1.0, np.nan]),
                  np.array([1, 2]), 3.0, 2 + 1j, np.array([[1 + 1e-20j], [np.nan * 1j]])]


@pytest.mark.parametrize("x", COMPLEX_INPUTS, ids=range(len(COMPLEX_INPUTS)))
def test_iscomplex_isreal_match_numpy_eagerly_under_jit_and_vmap(x):
    for name in ("iscomplex", "isreal"):
        ours, theirs = getattr(fnp, name), getattr(np, name)
        same(ours(x), np.asarray(theirs(x)))
        same(fd.jit(ours)(x), np.asarray(theirs(x)))
        if np.ndim(x):
            same(fd.vmap(ours)(x), np.asarray(theirs(x)))
        # numpy's own calls on a tracer dispatch here
        same(fd.jit(lambda v: theirs(v))(x), np.asarray(theirs(x)))


@pytest.mark.parametrize("a, tol", [(np.array([2.1 + 4e-14j, 5.2 + 3e-15j]), 100),
                                    (np.array([2.1 + 4e-13j]), 100),
                                    (np.array([2.1 + 4e-3j]), 1e-2),
                                    (np.array([2.1 + 4e-3j]), 1e-3),
                                    (np.array([1.0, 2.0]), 100),
                                    (np.array([1 + 1e-7j], np.complex64), 100)])
def test_real_if_close_matches_numpy(a, tol):
    want = np.real_if_close(a, tol=tol)
    same(fnp.real_if_close(a, tol=tol), want)
    # a traced value decides eagerly from its number, and the real part differentiates
    value, tangent = fd.jvp(lambda v: fnp.real_if_close(v, tol=tol), (a,), (np.ones_like(a),))
    same(value, want)
    assert np.asarray(tangent).dtype == want.dtype


def test_real_if_close_derivative_and_refusal_under_jit():
    z = np.array([0.5 + 1e-17j, 1.5 + 0j])
    f = lambda v: fnp.real_if_close(v * v)
    assert np.asarray(f(z)).dtype == np.float64
    # real inputs keep the imaginary part zero under finite differences too
    g = lambda x: fnp.real_if_close(fnp.sin(x * (1 + 0j))) * x
    check_grads(g, (z.real,), order=2)
    np.testing.assert_allclose(fd.grad(lambda x: f(x + 0j).sum())(z.real), 2 * z.real)
    with pytest.raises(ConcretizationError, match="real_if_close"):
        fd.jit(f)(z)
    with pytest.raises(ConcretizationError, match="real_if_close"):
        fd.vmap(f)(z[:, None])
    same(fd.jit(fnp.real_if_close)(np.array([1.0])), np.array([1.0]))  # real: no decision


# ---------------------------------------------------------------------------
# packbits and unpackbits

@pytest.mark.parametrize("shape", [(9,), (3, 5), (2, 3, 17), (0,)])
def test_packbits_unpackbits_match_numpy(shape):
    a = RNG.integers(-2, 3, shape)
    for axis in [None] + list(range(-len(shape), len(shape))):
        for bitorder in ("big", "little"):
            packed = np.packbits(a, axis, bitorder=bitorder)
            same(fnp.packbits(a, axis, bitorder), packed)
            same(fnp.packbits(a != 0, axis, bitorder), packed)
            for count in (None, 0, 3, -2, 100):
                if packed.size == 0 and count:  # numpy returns uninitialised bytes here
                    continue
                same(fnp.unpackbits(packed, axis, count, bitorder),
                     np.unpackbits(packed, axis, count=count, bitorder=bitorder))


def test_packbits_unpackbits_under_jit_vmap_and_numpy_dispatch():
    a = RNG.integers(0, 2, (4, 11)).astype(bool)
    packed = np.packbits(a, axis=1)
    same(fd.jit(lambda v: fnp.packbits(v, axis=-1))(a), packed)
    same(fd.vmap(fnp.packbits)(a), packed)
    same(fd.jit(lambda v: np.packbits(v, axis=1))(a), packed)
    same(fd.jit(lambda v: fnp.unpackbits(v, axis=1, count=11))(packed), a.astype(np.uint8))
    same(fd.vmap(lambda v: np.unpackbits(v, count=11))(packed), a.astype(np.uint8))
    # a float computation's comparison packs inside grad; the bits carry no derivative
    x = RNG.normal(size=8)
    g = fd.grad(lambda v: (fnp.unpackbits(fnp.packbits(v > 0)) * v).sum())(x)
    np.testing.assert_allclose(g, (x > 0).astype(float))


def test_packbits_unpackbits_refuse_other_dtypes():
    with pytest.raises(DTypeError, match="packbits"):
        fnp.packbits(np.array([0.5, 1.0]))
    with pytest.raises(DTypeError, match="unpackbits"):
        fnp.unpackbits(np.array([1, 2]))
    with pytest.raises(ShapeError, match="count"):
        fnp.unpackbits(np.array([1], np.uint8), count=-9)


# ---------------------------------------------------------------------------
# Casting a traced float to an integer

def test_integer_cast_of_a_traced_float_has_zero_derivative():
    x = np.array([2.7, -1.2, 0.5])
    for cast in (lambda v: fnp.array(v, dtype=int), lambda v: np.array(v, dtype=int),
                 lambda v: np.array(v, dtype=np.int32)):
        f = lambda v: (cast(v) * v).sum()  # d/dv = trunc(v): the cast contributes nothing
        np.testing.assert_allclose(fd.grad(f)(x), np.trunc(x))
        np.testing.assert_allclose(fd.jvp(f, (x,), (np.ones(3),))[1], np.trunc(x).sum())
    same(fd.jit(lambda v: fnp.array(v, dtype=int))(x), np.array(x, dtype=int))
    same(fd.vmap(lambda v: fnp.array(v, dtype=int))(x), np.array(x, dtype=int))
    with pytest.raises(TracerArrayConversionError, match="fnp.array"):
        fd.jit(lambda v: np.array(v, dtype=int))(x)
    with pytest.raises(TracerArrayConversionError):  # a float conversion still refuses
        fd.grad(lambda v: np.array(v, dtype=float).sum())(x)
