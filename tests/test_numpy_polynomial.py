"""polyval, polyadd, polysub, polymul, polyder, polyint and vander: values and
dtypes against numpy, derivatives (check_grads to order 2), vmap against a
loop, jit against eager, numpy's own functions dispatching on tracers, and the
errors for bad input and for abstract static arguments."""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (ConcretizationError, DTypeError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)
P3, P5, Q2 = RNG.standard_normal(3), RNG.standard_normal(5), RNG.standard_normal(2)
X4, X23 = RNG.standard_normal(4), RNG.standard_normal((2, 3))
F32 = np.float32


def _f32(a):
    return np.asarray(a, F32)


# (id, name, args, kwargs, expected dtype where funcdiff keeps float32 and numpy
# widens it to float64, else None for numpy's dtype)
CASES = [
    ("polyval-vector-x", "polyval", (P5, X4), {}, None),
    ("polyval-scalar-x", "polyval", (P3, 0.7), {}, None),
    ("polyval-matrix-x", "polyval", (P3, X23), {}, None),
    ("polyval-2d-p", "polyval", (RNG.standard_normal((3, 2)), X4[:, None]), {}, None),
    ("polyval-constant", "polyval", (np.array([2.5]), X4), {}, None),
    ("polyval-empty-p", "polyval", (np.zeros(0), X4), {}, None),
    ("polyval-f32", "polyval", (_f32(P3), _f32(X4)), {}, None),
    ("polyval-f32-python-x", "polyval", (_f32(P3), 1.5), {}, None),
    ("polyval-int", "polyval", ([1, -2, 3], np.arange(4)), {}, None),
    ("polyval-int-p-float-x", "polyval", ([1, -2, 3], X4), {}, None),
    ("polyadd-equal", "polyadd", (P3, P3[::-1].copy()), {}, None),
    ("polyadd-a1-shorter", "polyadd", (Q2, P5), {}, None),
    ("polyadd-a2-shorter", "polyadd", (P5, Q2), {}, None),
    ("polyadd-scalar", "polyadd", (3.0, P3), {}, None),
    ("polyadd-f32", "polyadd", (_f32(Q2), _f32(P3)), {}, None),
    ("polyadd-int-f32", "polyadd", ([1, 2], _f32(P3)), {}, None),
    ("polyadd-int", "polyadd", ([1, 2, 3], [4, 5]), {}, None),
    ("polyadd-bool", "polyadd", (np.array([True, False]), np.array([True])), {}, None),
    ("polyadd-empty", "polyadd", (np.zeros(0), P3), {}, None),
    ("polysub-equal", "polysub", (P3, P3[::-1].copy()), {}, None),
    ("polysub-a1-shorter", "polysub", (Q2, P5), {}, None),
    ("polysub-a2-shorter", "polysub", (P5, Q2), {}, None),
    ("polysub-f32", "polysub", (_f32(P5), _f32(Q2)), {}, None),
    ("polysub-int", "polysub", ([1, 2], [4, 5, 6]), {}, None),
    ("polymul", "polymul", (P3, P5), {}, None),
    ("polymul-longer-first", "polymul", (P5, Q2), {}, None),
    ("polymul-constant", "polymul", (np.array([2.0]), P3), {}, None),
    ("polymul-scalar", "polymul", (P3, 1.5), {}, None),
    ("polymul-f32", "polymul", (_f32(P3), _f32(Q2)), {}, None),
    ("polymul-int", "polymul", ([1, 2], [3, 4, 5]), {}, None),
    ("polyder", "polyder", (P5,), {}, None),
    ("polyder-m2", "polyder", (P5,), {"m": 2}, None),
    ("polyder-m0", "polyder", (P5,), {"m": 0}, None),
    ("polyder-constant", "polyder", (np.array([4.0]),), {}, None),
    ("polyder-m-too-large", "polyder", (P3,), {"m": 5}, None),
    ("polyder-np-int-m", "polyder", (P5,), {"m": np.int32(3)}, None),
    ("polyder-f32", "polyder", (_f32(P5),), {"m": 2}, F32),
    ("polyder-int", "polyder", ([3, 1, 4, 1, 5],), {"m": 2}, None),
    ("polyder-int32", "polyder", (np.array([3, 1, 4], np.int32),), {}, None),
    ("polyder-int-overflow", "polyder", (np.ones(25, np.int64),), {"m": 22}, None),
    ("polyint", "polyint", (P3,), {}, None),
    ("polyint-m2", "polyint", (P3,), {"m": 2}, None),
    ("polyint-m2-k", "polyint", (P3,), {"m": 2, "k": np.array([0.5, -1.0])}, None),
    ("polyint-m3-scalar-k", "polyint", (P3,), {"m": 3, "k": 2.0}, None),
    ("polyint-long-k", "polyint", (Q2,), {"m": 1, "k": np.array([3.0, 9.0])}, None),
    ("polyint-m0", "polyint", (P3,), {"m": 0}, None),
    ("polyint-empty", "polyint", (np.zeros(0),), {}, None),
    ("polyint-int", "polyint", ([1, 2, 3],), {"m": 2}, None),
    ("polyint-f32", "polyint", (_f32(P3),), {"m": 2}, F32),
    ("polyint-f32-python-k", "polyint", (_f32(P3),), {"k": 1.5}, F32),
    ("vander", "vander", (X4,), {}, None),
    ("vander-wide", "vander", (X4,), {"N": 6}, None),
    ("vander-narrow", "vander", (X4,), {"N": 2}, None),
    ("vander-one-column", "vander", (X4,), {"N": 1}, None),
    ("vander-no-column", "vander", (X4,), {"N": 0}, None),
    ("vander-increasing", "vander", (X4,), {"N": 5, "increasing": True}, None),
    ("vander-zeros-nan-inf", "vander", (np.array([0.0, np.nan, np.inf, -2.0]),), {}, None),
    ("vander-empty", "vander", (np.zeros(0),), {"N": 3}, None),
    ("vander-f32", "vander", (_f32(X4),), {}, F32),
    ("vander-int", "vander", (np.array([1, 2, 3]),), {}, None),
    ("vander-int32", "vander", (np.array([1, -2, 3], np.int32),), {"increasing": True}, None),
    ("vander-bool", "vander", (np.array([True, False]),), {}, None),
]
IDS = [case[0] for case in CASES]


def _is_float64(a):
    return isinstance(a, np.ndarray) and a.dtype == np.float64 and a.size > 0


def _split(args, kwargs):
    """The float64 array arguments (positional, then keyword), and a function of them
    that calls with the others held fixed."""
    pos = [i for i, a in enumerate(args) if _is_float64(a)]
    keys = [k for k, v in kwargs.items() if _is_float64(v)]

    def call(fn, *values):
        full, kw = list(args), dict(kwargs)
        for i, v in zip(pos, values[:len(pos)]):
            full[i] = v
        for k, v in zip(keys, values[len(pos):]):
            kw[k] = v
        return fn(*full, **kw)
    return [args[i] for i in pos] + [kwargs[k] for k in keys], call


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_dtypes_match_numpy(case):
    _, name, args, kwargs, dtype = case
    want = getattr(np, name)(*args, **kwargs)
    got = getattr(fnp, name)(*args, **kwargs)
    assert isinstance(got, (np.ndarray, np.generic))
    assert got.shape == np.shape(want)
    assert got.dtype == (dtype or np.asarray(want).dtype)
    tol = 1e-5 if got.dtype == F32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [c for c in CASES if _split(c[2], c[3])[0]],
                         ids=[c[0] for c in CASES if _split(c[2], c[3])[0]])
def test_derivatives_to_second_order(case):
    _, name, args, kwargs, _ = case
    diff, call = _split(args, kwargs)
    diff = [np.where(np.isfinite(a), a, 0.5) for a in diff]
    check_grads(lambda *v: call(getattr(fnp, name), *v), tuple(diff), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("case", [c for c in CASES if _split(c[2], c[3])[0]],
                         ids=[c[0] for c in CASES if _split(c[2], c[3])[0]])
def test_vmap_equals_a_loop(case):
    _, name, args, kwargs, _ = case
    diff, call = _split(args, kwargs)
    batches = [np.stack([a + 0.25 * k for k in range(3)]) for a in diff]
    f = lambda *v: call(getattr(fnp, name), *v)  # noqa: E731
    got = fd.vmap(f)(*batches)
    want = np.stack([f(*[b[k] for b in batches]) for k in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit_equals_eager(case):
    _, name, args, kwargs, _ = case
    arrays = [np.asarray(a) for a in args]
    f = lambda *a: getattr(fnp, name)(*a, **kwargs)  # noqa: E731
    got, want = fd.jit(f)(*arrays), f(*arrays)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_the_functions_agree_with_calculus():
    p, x = P5, X4
    # grad of polyval in x is polyval of polyder; hessian likewise with m=2
    g = fd.vmap(fd.grad(lambda t: fnp.polyval(p, t)))(x)
    np.testing.assert_allclose(g, np.polyval(np.polyder(p), x), rtol=1e-12)
    h = fd.hessian(lambda t: fnp.polyval(p, t))(0.3)
    np.testing.assert_allclose(h, np.polyval(np.polyder(p, 2), 0.3), rtol=1e-12)
    np.testing.assert_allclose(fnp.polyder(fnp.polyint(p, m=3), m=3), p, rtol=1e-12)
    # polymul and polyval: (a * b)(x) = a(x) b(x), also under jit
    prod = fd.jit(lambda a, b, t: fnp.polyval(fnp.polymul(a, b), t))(P3, Q2, x)
    np.testing.assert_allclose(prod, np.polyval(P3, x) * np.polyval(Q2, x), rtol=1e-12)
    # vander @ coefficients is polyval
    np.testing.assert_allclose(fnp.vander(x, 5) @ p, np.polyval(p, x), rtol=1e-12)
    # Horner starts from p[0], so an infinite x gives inf (numpy starts from 0 * x: nan)
    assert fnp.polyval(np.array([2.0, 1.0]), np.inf) == np.inf
    # polyint's constants are differentiable: d/dk of the constant term
    dk = fd.jacrev(lambda k: fnp.polyint(P3, m=2, k=k))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(dk[-2:], [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(dk[:-2], 0.0)


def test_numpy_functions_dispatch_on_tracers():
    grad = fd.grad(lambda p: np.sum(np.polyval(p, X4)))(P3)
    np.testing.assert_allclose(grad, np.stack([X4 ** 2, X4, np.ones(4)]).sum(1), rtol=1e-12)
    np.testing.assert_allclose(fd.jit(lambda x: np.vander(x, 3, increasing=True))(X4),
                               np.vander(X4, 3, increasing=True))
    np.testing.assert_allclose(fd.jit(lambda a, b: np.polysub(np.polyadd(a, b), b))(Q2, P5),
                               np.polyadd(Q2, np.zeros(5)), atol=1e-15)
    np.testing.assert_allclose(fd.jit(lambda p: np.polyint(np.polyder(p, 2), 1))(P5),
                               np.polyint(np.polyder(P5, 2), 1), rtol=1e-12)
    np.testing.assert_allclose(fd.jit(lambda a: np.polymul(a, a))(P3), np.polymul(P3, P3))


def test_static_arguments_under_grad_jit_and_vmap():
    # an integer 0-d array is a concrete order ...
    np.testing.assert_allclose(fnp.polyder(P5, m=np.array(2)), np.polyder(P5, 2))
    # ... an abstract one is refused with the argument to make static
    with pytest.raises(ConcretizationError, match="m= as a Python int"):
        fd.jit(lambda p, m: fnp.polyder(p, m))(P5, 2)
    with pytest.raises(ConcretizationError, match="m= as a Python int"):
        fd.jit(lambda p, m: fnp.polyint(p, m))(P5, 2)
    with pytest.raises(ConcretizationError, match="N= as a Python int"):
        fd.vmap(lambda x, n: fnp.vander(x, n))(np.ones((2, 3)), np.array([2, 2]))
    # static_argnums is the fix the message names
    out = fd.jit(lambda p, m: fnp.polyder(p, m), static_argnums=1)(P5, 2)
    np.testing.assert_allclose(out, np.polyder(P5, 2))


ERRORS = [
    ("polyval-0d-p", lambda: fnp.polyval(np.array(2.0), X4), ShapeError, "rank >= 1"),
    ("polyval-poly1d-x", lambda: fnp.polyval(P3, np.poly1d([1.0, 2.0])),
     UnsupportedNumpyError, "poly1d"),
    ("polyadd-2d", lambda: fnp.polyadd(np.ones((2, 2)), P3), ShapeError, "a1 as a 1-D"),
    ("polyadd-poly1d", lambda: fnp.polyadd(P3, np.poly1d([1.0])), UnsupportedNumpyError,
     "a2.coeffs"),
    ("polysub-bool", lambda: fnp.polysub(np.array([True]), np.array([False])), DTypeError,
     "booleans"),
    ("polymul-empty", lambda: fnp.polymul(P3, np.zeros(0)), ShapeError, "a2 is empty"),
    ("polymul-2d", lambda: fnp.polymul(P3, np.ones((2, 1))), ShapeError, "a2 as a 1-D"),
    ("polyder-negative-m", lambda: fnp.polyder(P3, m=-1), InvalidArgumentError,
     "non-negative Python int, got -"),
    ("polyder-float-m", lambda: fnp.polyder(P3, m=1.5), InvalidArgumentError,
     "must be a non-negative Python int"),
    ("polyder-2d", lambda: fnp.polyder(np.ones((2, 2))), ShapeError, "p as a 1-D"),
    ("polyint-negative-m", lambda: fnp.polyint(P3, m=-2), InvalidArgumentError,
     "non-negative Python int, got -"),
    ("polyint-short-k", lambda: fnp.polyint(P3, m=3, k=[1.0, 2.0]), ShapeError,
     "at least m=3 values"),
    ("polyint-2d-k", lambda: fnp.polyint(P3, m=2, k=np.ones((2, 2))), ShapeError, "k as a 1-D"),
    ("vander-2d", lambda: fnp.vander(np.ones((2, 2))), ShapeError, "1-D array"),
    ("vander-0d", lambda: fnp.vander(2.0), ShapeError, "1-D array"),
    ("vander-negative-N", lambda: fnp.vander(X4, -1), InvalidArgumentError,
     "non-negative Python int, got -"),
    ("vander-float-N", lambda: fnp.vander(X4, 2.0), InvalidArgumentError,
     "must be a non-negative Python int"),
]


@pytest.mark.parametrize("call,error,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
