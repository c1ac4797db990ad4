"""funcdiff.numpy.polynomial: every function of every basis module against numpy.

One table row per (basis, function, arguments): the value equals numpy's
(numpy's trailing zero coefficients, which it trims, padded back); under
grad and jvp the derivative in every float argument equals central finite
differences of *numpy's* function; vmap equals a loop over numpy calls; jit
equals numpy; the Hessian of a few rows equals finite differences of the
gradient. Then the refusals (roots, trim of traced values), the static-shape
differences from numpy, and errors for bad arguments.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (ConcretizationError, InvalidArgumentError, ShapeError,
                             UnsupportedNumpyError)
from funcdiff.numpy import polynomial as FP

MODULES = {"polynomial": "poly", "chebyshev": "cheb", "legendre": "leg", "hermite": "herm",
           "hermite_e": "herme", "laguerre": "lag"}
RNG = np.random.default_rng(3)
C1 = np.array([0.5, -1.0, 0.7, 0.3])
C2 = np.array([[0.5, -1.0], [0.7, 0.3], [0.2, 0.4]])
C3 = RNG.uniform(-1, 1, (2, 3, 2))
XA = np.array([0.1, 0.3, -0.4])
XS = np.array(0.3)
XF = np.linspace(-1.0, 1.0, 7) + 0.02 * RNG.standard_normal(7)
YF = np.sin(2.0 * XF)
WF = RNG.uniform(0.5, 1.5, 7)


def _cases(prefix):
    """(function name, args, keyword arguments, indices of the differentiable args)."""
    p = prefix
    rows = [
        (f"{p}val", (XA, C1), {}, (0, 1)),
        (f"{p}val", (XS, C2), {}, (0, 1)),
        (f"{p}val", (XA, C2), {}, (0, 1)),       # numpy's own computes another function here
        (f"{p}val", (XA[:2], C2), {"tensor": False}, (0, 1)),
        (f"{p}val2d", (XA, XA[::-1], C2), {}, (0, 1, 2)),
        (f"{p}val3d", (XA[:2], XA[1:], XA[:2] ** 2, C3), {}, (0, 1, 2, 3)),
        (f"{p}grid2d", (XA, XA[:2], C2), {}, (0, 1, 2)),
        (f"{p}grid3d", (XA[:2], XA, XA[:2], C3), {}, (0, 1, 2, 3)),
        (f"{p}vander", (XA, 3), {}, (0,)),
        (f"{p}vander2d", (XA, XA ** 2, [2, 1]), {}, (0, 1)),
        (f"{p}vander3d", (XA, XA ** 2, -XA, [1, 2, 1]), {}, (0, 1, 2)),
        (f"{p}der", (C1,), {}, (0,)),
        (f"{p}der", (C2, 2, 0.5), {}, (0, 2)),
        (f"{p}der", (C2.T, 1), {"axis": 1}, (0,)),
        (f"{p}der", (C1, 5), {}, (0,)),
        (f"{p}int", (C1,), {}, (0,)),
        (f"{p}int", (C1, 2, [0.3, -0.2], 0.4, 1.5), {}, (0, 2, 3, 4)),
        (f"{p}int", (C2.T, 1), {"axis": 1, "k": 0.5}, (0,)),
        (f"{p}add", (C1, C1[:2]), {}, (0, 1)),
        (f"{p}sub", (C1[:2], C1), {}, (0, 1)),
        (f"{p}mul", (C1, C1[1:3]), {}, (0, 1)),
        (f"{p}mulx", (C1,), {}, (0,)),
        (f"{p}div", (C1, C1[1:3]), {}, (0, 1)),
        (f"{p}pow", (C1[:3], 3), {}, (0,)),
        (f"{p}fromroots", (XA,), {}, (0,)),
        (f"{p}line", (0.3, -1.2), {}, (0, 1)),
        (f"{p}fit", (XF, YF, 3), {}, (0, 1)),
        (f"{p}fit", (XF, YF, [0, 1, 3]), {"w": WF}, (0, 1)),
        (f"{p}fit", (XF, np.stack([YF, XF ** 2], 1), 2), {}, (0, 1)),
    ]
    if p == "poly":
        rows += [("polyvalfromroots", (XA, C1[:2]), {}, (0, 1)),
                 ("polyvalfromroots", (XS, C2), {}, (0, 1)),
                 ("polyvalfromroots", (XA[:2], C2), {"tensor": False}, (0, 1))]
    else:
        rows += [(f"{p}2poly", (C1,), {}, (0,)), (f"poly2{p}", (C1,), {}, (0,))]
    return rows


ROWS = [(module, *case) for module, prefix in MODULES.items() for case in _cases(prefix)]
IDS = [f"{m}.{name}-{i}" for i, (m, name, *_) in enumerate(ROWS)]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _flat(o)]
    return [np.asarray(out, float)]


def _numpy(module, name, args, kwargs):
    """numpy's result as a list of float arrays."""
    return _flat(getattr(getattr(np.polynomial, module), name)(*args, **kwargs))


def _padded_like(want, got):
    """numpy drops trailing zero coefficients; put them back where funcdiff keeps them."""
    if want.shape != got.shape and want.ndim == got.ndim == 1 and len(want) < len(got):
        want = np.concatenate([want, np.zeros(len(got) - len(want))])
    return want


def _assert_close(got, want, tol=1e-10):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g, float)
        w = _padded_like(w, g)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _scalarized(module, name, args, kwargs, i, weights):
    """numpy's result, made a scalar by fixed weights, as a function of argument ``i``."""
    def f(a):
        full = list(args)
        full[i] = a
        outs = _numpy(module, name, full, kwargs)
        return sum(float(np.sum(_padded_like(o, np.zeros_like(w)) * w))
                   for o, w in zip(outs, weights))
    return f


def _central(f, a, h=1e-6):
    a = np.asarray(a, float)
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = h
        g[idx] = (f(a + e) - f(a - e)) / (2 * h)
    return g


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_value_jit_and_derivatives_match_numpy(row):
    module, name, args, kwargs, diff = row
    fn = getattr(getattr(FP, module), name)
    got = _flat(fn(*args, **kwargs))
    want = _numpy(module, name, args, kwargs)
    _assert_close(got, want)
    array_args = [i for i in diff if np.ndim(args[i]) > 0 or isinstance(args[i], np.ndarray)]
    static = {i: a for i, a in enumerate(args) if i not in array_args}

    def on_arrays(*arrays):
        full = [static.get(i) for i in range(len(args))]
        for i, a in zip(array_args, arrays):
            full[i] = a
        return fn(*full, **kwargs)

    arrays = [np.asarray(args[i], float) for i in array_args]
    _assert_close(_flat(fd.jit(on_arrays)(*arrays)), want)
    weights = [np.cos(np.arange(g.size) + 1.0).reshape(g.shape) for g in got]

    def scalar(*arrays):
        return sum(fnp.sum(o * w) for o, w in zip(_flat_traced(on_arrays(*arrays)), weights))

    grads = fd.grad(scalar, argnums=tuple(range(len(arrays))))(*arrays)
    for k, i in enumerate(array_args):
        want_grad = _central(_scalarized(module, name, args, kwargs, i, weights), args[i])
        np.testing.assert_allclose(grads[k], want_grad, rtol=1e-6, atol=1e-6)
        tangents = [np.zeros_like(a) for a in arrays]
        tangents[k] = np.linspace(0.5, 1.5, arrays[k].size).reshape(arrays[k].shape)
        _, t = fd.jvp(scalar, tuple(arrays), tuple(tangents))
        np.testing.assert_allclose(t, np.sum(want_grad * tangents[k]), rtol=1e-6, atol=1e-6)


def _flat_traced(out):
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _flat_traced(o)]
    return [out]


VMAP_ROWS = [r for r in ROWS if r[1].endswith(("val", "grid2d", "der", "int", "mul", "fit",
                                               "fromroots", "valfromroots"))]


@pytest.mark.parametrize("row", VMAP_ROWS, ids=[f"{r[0]}.{r[1]}-{i}" for i, r in
                                                  enumerate(VMAP_ROWS)])
def test_vmap_equals_a_loop_over_numpy(row):
    module, name, args, kwargs, diff = row
    fn = getattr(getattr(FP, module), name)
    i = diff[-1] if np.ndim(args[diff[-1]]) > 0 else diff[0]
    batch = [np.asarray(args[i]) * s + t for s, t in ((1.0, 0.0), (1.3, 0.1), (0.7, -0.2))]

    def member(a):
        full = list(args)
        full[i] = a
        return fn(*full, **kwargs)

    batched = _flat(fd.vmap(member)(np.stack(batch)))
    for k, a in enumerate(batch):
        full = list(args)
        full[i] = a
        want = _numpy(module, name, full, kwargs)
        _assert_close([b[k] for b in batched], want, tol=1e-9)


@pytest.mark.parametrize("module", MODULES)
def test_hessian_in_x_and_in_the_coefficients(module):
    p = MODULES[module]
    S, N = getattr(FP, module), getattr(np.polynomial, module)
    for f_fd, f_np, arg in [
            (lambda x: fnp.sum(getattr(S, p + "val")(x, C2)), lambda x: N.__dict__[p + "val"](x, C2).sum(), XA),
            (lambda c: fnp.sum(getattr(S, p + "mul")(c, c) ** 2),
             lambda c: np.sum(N.__dict__[p + "mul"](c, c) ** 2), C1)]:
        h = fd.hessian(f_fd)(arg)
        want = np.stack([_central(lambda a: _central(f_np, a, 1e-4)[j], arg, 1e-4)
                         for j in range(arg.size)])
        np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-5)


def test_numpy_would_compute_another_function_and_is_refused():
    """The motivating case: a traced array x would take numpy's scalar path."""
    from numpy.polynomial import polynomial as P
    x, r = np.array([0.1, 0.3]), np.array([0.5, 0.2])
    want = _central(lambda x: P.polyvalfromroots(x, r).sum(), x)
    np.testing.assert_allclose(fd.grad(lambda x: FP.polynomial.polyvalfromroots(x, r).sum())(x),
                               want, rtol=1e-7)
    with pytest.raises(UnsupportedNumpyError, match="funcdiff.numpy.polynomial.polynomial"):
        fd.grad(lambda x: P.polyvalfromroots(x, r).sum())(x)


@pytest.mark.parametrize("module", MODULES)
def test_roots_and_trim_are_numpys_on_concrete_values_and_refuse_tracers(module):
    p = MODULES[module]
    S, N = getattr(FP, module), getattr(np.polynomial, module)
    np.testing.assert_allclose(getattr(S, p + "roots")(C1), getattr(N, p + "roots")(C1))
    assert getattr(S, p + "trim")([1.0, 2.0, 0.0]).tolist() == [1.0, 2.0]
    for suffix, hint in (("roots", "companion matrix"), ("trim", "depends on the values")):
        with pytest.raises(UnsupportedNumpyError, match=f"{p}{suffix} got the traced.*{hint}"):
            fd.grad(lambda c: fnp.sum(getattr(S, p + suffix)(c)))(C1)


def test_shapes_do_not_depend_on_values():
    """numpy trims trailing zeros (its length depends on the values); funcdiff keeps them."""
    C = FP.chebyshev
    assert C.chebadd([1.0, 2.0], [0.0, -2.0]).tolist() == [1.0, 0.0]
    assert C.chebline(3.0, 0.0).tolist() == [3.0, 0.0]
    assert np.polynomial.chebyshev.chebline(3.0, 0.0).tolist() == [3.0]
    assert fd.jit(lambda a: C.chebmul(a, a))(np.array([1.0, 0.0])).shape == (3,)
    assert FP.hermite.hermpow([1.0, 2.0], 0).tolist() == [1.0]


def test_counts_must_be_concrete_and_arguments_well_formed():
    P = FP.polynomial
    with pytest.raises(ConcretizationError, match="polyder: m="):
        fd.jit(lambda c, m: P.polyder(c, m))(C1, 2)
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        P.polyvander(XA, -1)
    with pytest.raises(ShapeError, match="at most m=1 integration constants"):
        P.polyint(C1, 1, k=[1.0, 2.0])
    with pytest.raises(ShapeError, match="one shape"):
        P.polyval2d(XA, XA[:2], C2)
    with pytest.raises(ShapeError, match="at least one coefficient"):
        P.polyval(XA, [])
    with pytest.raises(InvalidArgumentError, match="maxpower"):
        P.polypow(C1, 20)
    with pytest.raises(ShapeError, match="fewer axes than r"):
        P.polyvalfromroots(XA, C1[:3], tensor=False)


def test_integer_coefficients_become_float64_and_float32_stays():
    C = FP.legendre
    assert C.legval(0.5, [1, 2, 3]).dtype == np.float64
    assert C.legder(np.ones(3, np.float32)).dtype == np.float32
    assert C.legval(np.float32(0.5), np.ones(3, np.float32)).dtype == np.float32
