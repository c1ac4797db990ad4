"""Tests of the eager fast paths of funcdiff.numpy's shape, reduction and linalg functions.

Several functions take a short route for their common case (a tuple of
Python ints as a shape, ``axis=None``, a leading-prefix reduction, a 1-D
vector norm, a cached identity for ``inv``) and fall back to the general code
otherwise. Each table row here runs one function on a fast-path argument and
on the equivalent argument that takes the general route, and requires both to
equal numpy's result in value, shape and dtype (float32 stays float32), and to
agree eagerly, under jit, vmap and grad.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(7)


def _assert_same(expected, actual, where=""):
    """Equal values (to float rounding), shapes, dtypes and scalar-ness."""
    assert type(np.asarray(actual)) is np.ndarray
    assert np.ndim(actual) == np.ndim(expected), where
    assert np.shape(actual) == np.shape(expected), where
    assert np.asarray(actual).dtype == np.asarray(expected).dtype, where
    assert isinstance(actual, np.ndarray) == isinstance(expected, np.ndarray), where
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-12, err_msg=where)


def _transforms_agree(f, x):
    """f eagerly, under jit, under vmap of a batch of three and, if scalar-valued, grad."""
    eager = f(x)
    np.testing.assert_allclose(fd.jit(f)(x), eager, rtol=1e-12, atol=1e-12)
    batch = np.stack([x, 2 * x, x - 1])
    np.testing.assert_allclose(fd.vmap(f)(batch), np.stack([f(b) for b in batch]),
                               rtol=1e-12, atol=1e-12)
    check_grads(lambda y: fnp.sum(fnp.sin(f(y))), (x,), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------------------
# Shape functions: reshape (static shapes cached), squeeze, transpose


# (input shape, fast-path shape, the same shape in a form taking the general route)
RESHAPES = [
    ((8, 8), (64,), [64]),
    ((8, 8), 64, np.int64(64)),
    ((2, 3, 4), (4, -1), [np.int64(4), -1]),
    ((6,), (1, 2, 3, 1), [1, 2, 3, 1]),
    ((2, 3), (2, 3), [2, 3]),
    ((0, 3), (3, -1), [3, -1]),
    ((), (1, 1), [1, 1]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("row", RESHAPES, ids=[str(r[1]) for r in RESHAPES])
def test_reshape_static_shape_matches_general_path(row, dtype):
    in_shape, fast, general = row
    x = (RNG.standard_normal(in_shape) * 3).astype(dtype)
    expected = np.reshape(x, fast)
    for _ in range(2):  # the second call is answered by the cache
        _assert_same(expected, fnp.reshape(x, fast), f"reshape {fast}")
        _assert_same(expected, fnp.reshape(x, general), f"reshape {general}")


def test_reshape_static_shape_errors_are_raised_every_time():
    x = np.ones((2, 3))
    for _ in range(2):
        with pytest.raises(ShapeError, match="cannot reshape an array of shape"):
            fnp.reshape(x, (4, 2))
        with pytest.raises(ShapeError, match="at most one -1"):
            fnp.reshape(x, (-1, -1))
    # a float equal to an int must not be answered from the cache of the int
    fnp.reshape(x, (6,))
    with pytest.raises(InvalidArgumentError, match="must be an integer"):
        fnp.reshape(x, (6.0,))


def test_reshape_static_shape_under_transforms():
    x = RNG.standard_normal((2, 6))
    _transforms_agree(lambda y: fnp.reshape(y, (3, -1)), x)
    _transforms_agree(lambda y: fnp.reshape(y, 12), x)


@pytest.mark.parametrize("shape", [(1, 8, 8), (1, 3, 1, 2), (3, 2), (1,), (1, 1), ()])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_squeeze_matches_numpy(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    _assert_same(np.squeeze(x), fnp.squeeze(x), f"squeeze {shape}")
    units = tuple(i for i, n in enumerate(shape) if n == 1)
    if units:  # the same axes named explicitly, in reverse and negative form
        named = tuple(sorted((u - len(shape) for u in units), reverse=True))
        _assert_same(np.squeeze(x, axis=named), fnp.squeeze(x, axis=named), f"{named}")


def test_squeeze_errors_and_transforms():
    x = RNG.standard_normal((1, 3, 1))
    with pytest.raises(ShapeError, match="size not equal to one"):
        fnp.squeeze(x, axis=1)
    with pytest.raises(AxisError):
        fnp.squeeze(x, axis=3)
    _transforms_agree(fnp.squeeze, x)
    _transforms_agree(lambda y: fnp.squeeze(y, axis=-1), x)
    # under vmap the batch axis may itself have length one: it must stay
    out = fd.vmap(fnp.squeeze)(np.ones((1, 1, 3, 1)))
    assert out.shape == (1, 3)


@pytest.mark.parametrize("shape", [(), (4,), (8, 8), (2, 3, 4), (1, 2, 1, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8])
def test_transpose_reverses_axes_like_numpy(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    _assert_same(np.transpose(x), fnp.transpose(x), f"transpose {shape}")
    _assert_same(np.transpose(x), fnp.transpose(x, tuple(range(len(shape)))[::-1]),
                 f"transpose {shape} with axes")


def test_transpose_under_transforms():
    _transforms_agree(fnp.transpose, RNG.standard_normal((2, 3, 4)))
    _transforms_agree(fnp.transpose, RNG.standard_normal(5))


# ---------------------------------------------------------------------------
# Reductions: planned once per (axis, shape); var/std skip re-expanding the mean
# when the reduced axes lead (numpy broadcasting restores them)


# axis given as a Python int or None (planned and cached) and the same axes in a
# form taking the general route (a list or numpy integers)
REDUCTION_AXES = [
    ((8, 8), None, [0, 1]),
    ((8, 8), 0, [0]),
    ((8, 8), 1, [np.int64(1)]),
    ((8, 8), -1, [-1]),
    ((2, 3, 4), 0, (np.int64(0),)),
    ((2, 3, 4), 1, [1]),
    ((2, 3, 4), (0, 1), [0, 1]),
    ((2, 3, 4), (2, 0), [0, 2]),
    ((2, 3, 4), (1, 2), [2, 1]),
    ((5,), None, [0]),
    ((5,), 0, (0,)),
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("row", REDUCTION_AXES, ids=[f"{r[0]}-{r[1]}" for r in REDUCTION_AXES])
def test_reduction_plans_match_numpy_and_general_path(row, name, dtype, keepdims):
    shape, fast, general = row
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    expected = getattr(np, name)(x, axis=fast, keepdims=keepdims)
    for _ in range(2):  # the second call is answered by the plan cache
        _assert_same(expected, getattr(fnp, name)(x, axis=fast, keepdims=keepdims), f"{fast}")
        _assert_same(expected, getattr(fnp, name)(x, axis=general, keepdims=keepdims),
                     f"{general}")


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_ddof_and_empty_axes(name):
    x = RNG.standard_normal((3, 4))
    for axis in (None, 0, 1, ()):
        for ddof in (0, 1) if axis != () else (0,):
            _assert_same(getattr(np, name)(x, axis=axis, ddof=ddof),
                         getattr(fnp, name)(x, axis=axis, ddof=ddof), f"{axis} {ddof}")


@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_reduction_axis_errors_are_raised_every_time(name):
    x = np.ones((2, 3))
    for _ in range(2):
        with pytest.raises(AxisError, match="out of bounds"):
            getattr(fnp, name)(x, axis=2)
        # a float equal to a valid axis must not be answered from the cache of the int
        getattr(fnp, name)(x, axis=1)
        with pytest.raises(AxisError, match="needs integer axes"):
            getattr(fnp, name)(x, axis=1.0)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_reductions_under_transforms(name, axis):
    x = RNG.standard_normal((3, 4, 2)) + 2.0
    _transforms_agree(lambda y: getattr(fnp, name)(y, axis=axis), x)
    _transforms_agree(lambda y: getattr(fnp, name)(y, axis=axis, keepdims=True), x)
    # hessian of a full variance: 2/n (I - 1/n)
    n = x.size
    h = fd.hessian(lambda y: fnp.var(y))(x.ravel())
    np.testing.assert_allclose(h, 2 / n * (np.eye(n) - 1 / n), atol=1e-12)


# ---------------------------------------------------------------------------
# linalg: norm's default order binds its primitives directly; solve skips
# promotion and broadcasting when there is none to do; inv solves with a cached identity


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(8,), (3, 4), (2, 3, 2), (), (0,), (1,)])
def test_norm_default_order_matches_numpy(shape, dtype, keepdims):
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    expected = np.linalg.norm(x, keepdims=keepdims)
    if shape == () and keepdims:  # numpy returns a scalar here, funcdiff a 0-d array
        expected = np.asarray(expected)
    _assert_same(expected, fnp.linalg.norm(x, keepdims=keepdims), f"norm {shape}")
    if len(shape) in (1, 2):  # the same norm through the general route (2-norm / Frobenius)
        ord_ = 2 if len(shape) == 1 else "fro"
        _assert_same(expected, fnp.linalg.norm(x, ord=ord_, keepdims=keepdims), f"ord {ord_}")


def test_norm_default_order_under_transforms():
    _transforms_agree(fnp.linalg.norm, RNG.standard_normal(5))
    _transforms_agree(fnp.linalg.norm, RNG.standard_normal((3, 2)))
    x = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(fd.grad(fnp.linalg.norm)(x), x / np.linalg.norm(x))


# (a's shape, b's shape): vector and matrix right-hand sides, with and without
# leading axes to broadcast
SOLVES = [((8, 8), (8,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 1)),
          ((2, 3, 3), (3, 4)), ((1, 3, 3), (2, 3, 2)), ((3, 3), (4, 3, 1))]


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.int64, np.float32),
                                    (np.int32, np.int32)])
@pytest.mark.parametrize("shapes", SOLVES, ids=[str(s) for s in SOLVES])
def test_solve_matches_numpy(shapes, dtypes):
    a_shape, b_shape = shapes
    a = (RNG.standard_normal(a_shape) + 10 * np.eye(a_shape[-1])).astype(dtypes[0])
    b = (RNG.standard_normal(b_shape) * 3).astype(dtypes[1])
    expected = np.linalg.solve(a, b)
    if expected.dtype == np.float32:  # numpy solves float32 in float32, as funcdiff does
        np.testing.assert_allclose(fnp.linalg.solve(a, b), expected, rtol=1e-4)
        assert fnp.linalg.solve(a, b).dtype == np.float32
    else:
        _assert_same(expected, fnp.linalg.solve(a, b), f"{shapes} {dtypes}")


def test_solve_errors_name_the_function():
    from funcdiff.numpy.linalg import SquareMatrixError
    from funcdiff.errors import DTypeError
    with pytest.raises(SquareMatrixError, match=r"linalg.solve: the right-hand side b needs 3"):
        fnp.linalg.solve(np.eye(3), np.ones(2))
    with pytest.raises(SquareMatrixError, match=r"linalg.solve needs square matrices"):
        fnp.linalg.solve(np.ones((3, 2)), np.ones(3))
    with pytest.raises(SquareMatrixError, match=r"linalg.solve needs an array of at least 2"):
        fnp.linalg.solve(np.ones(3), np.ones(3))
    with pytest.raises(DTypeError, match=r"linalg.solve needs float32, float64, complex64 or complex128"):
        fnp.linalg.solve(np.eye(3, dtype=np.float16), np.ones(3, np.float16))
    with pytest.raises(Exception, match=r"linalg.solve"):
        fnp.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))


def test_solve_and_inv_under_transforms():
    a = RNG.standard_normal((3, 3)) + 4 * np.eye(3)
    b = RNG.standard_normal(3)
    _transforms_agree(lambda m: fnp.linalg.solve(m, b), a)
    _transforms_agree(lambda y: fnp.linalg.solve(a, y), b)
    _transforms_agree(fnp.linalg.inv, a)
    ainv = np.linalg.inv(a)
    np.testing.assert_allclose(fd.jacrev(fnp.linalg.inv)(a),
                               -np.einsum("ik,lj->ijkl", ainv, ainv), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_inv_matches_numpy_and_returns_fresh_arrays(shape, dtype):
    a = (RNG.standard_normal(shape) + 3 * np.eye(shape[-1])).astype(dtype)
    expected = np.linalg.inv(a)
    for _ in range(2):  # the second call solves with the cached identity
        out = fnp.linalg.inv(a)
        assert out.dtype == expected.dtype
        np.testing.assert_allclose(out, expected, rtol=1e-4 if dtype == np.float32 else 1e-10)
        assert out.flags.writeable
        out[...] = 0  # writing to a result must not touch the identity later calls use
    np.testing.assert_allclose(fnp.linalg.inv(np.eye(shape[-1], dtype=dtype) * 2),
                               np.eye(shape[-1]) / 2)


# ---------------------------------------------------------------------------
# outer: operands flattened with at most one reshape each, then one mul (and_ for bool)


OUTERS = [((8,), (8,)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (2, 2)), ((), (3,)), ((0,), (2,))]


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.int8, np.int64),
                                    (np.bool_, np.bool_), (np.bool_, np.int32)])
@pytest.mark.parametrize("shapes", OUTERS, ids=[str(s) for s in OUTERS])
def test_outer_matches_numpy(shapes, dtypes):
    a = (RNG.standard_normal(shapes[0]) * 3).astype(dtypes[0])
    b = (RNG.standard_normal(shapes[1]) * 3).astype(dtypes[1])
    _assert_same(np.outer(a, b), fnp.outer(a, b), f"{shapes} {dtypes}")
    _assert_same(np.outer(a, 2.5), fnp.outer(a, 2.5), "Python scalar b")


def test_outer_rejects_out_and_agrees_under_transforms():
    from funcdiff.errors import UnsupportedNumpyError
    v = RNG.standard_normal(3)
    with pytest.raises(UnsupportedNumpyError, match="outer does not support the argument out"):
        fnp.outer(v, v, out=np.empty((3, 3)))
    _transforms_agree(lambda y: fnp.outer(y, v), v)
    _transforms_agree(lambda y: fnp.outer(y, y), RNG.standard_normal((2, 2)))
