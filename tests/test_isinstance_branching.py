"""numpy code that branches on isinstance(x, numpy.ndarray), under every transform.

A funcdiff tracer is not an ``ndarray``, so such code takes its scalar branch.
The table holds what each numpy function does with traced arguments, found by
running it: ``ok`` (the value and derivatives are right), ``raises`` (a
funcdiff error, naming this file's line for a conversion), or ``refused``
(numpy would compute another function, silently; funcdiff's dispatch sees the
numpy.polynomial frame and raises, naming the funcdiff.numpy.polynomial
function). Every replacement is checked too. Each row runs under grad, jvp, vmap, jit and hessian against
central finite differences of numpy's function on plain arrays.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from numpy.polynomial import chebyshev as NC, hermite as NH, polynomial as NP, polyutils

import funcdiff as fd
from funcdiff.errors import FunctionalDiffError, TracerConversionError
from funcdiff.numpy.polynomial import chebyshev as FC, hermite as FH, polynomial as FPo

C1 = np.array([0.5, -1.0, 0.7, 0.3])
C2 = np.array([[0.5, -1.0], [0.7, 0.3], [0.2, 0.4]])
C3 = np.arange(1.0, 9.0).reshape(2, 2, 2) / 7
XA, XS = np.array([0.1, 0.3]), np.array(0.3)
X3 = np.array([0.1, 0.3, -0.4])

# (name, numpy function of one array, the argument, class, funcdiff replacement or None)
TABLE = [
    ("polyval(x, c 1-D), x[2]", lambda x: NP.polyval(x, C1), XA, "ok", None),
    ("polyval(x, c 2-D), x scalar", lambda x: NP.polyval(x, C2), XS, "ok", None),
    ("polyval(x, c 2-D, tensor=False)", lambda x: NP.polyval(x, C2, tensor=False), XA, "ok",
     None),
    ("polyval(x, c 2-D), x[2]", lambda x: NP.polyval(x, C2), XA, "refused",
     lambda x: FPo.polyval(x, C2)),
    ("chebval(x, c 2-D), x[2]", lambda x: NC.chebval(x, C2), XA, "refused",
     lambda x: FC.chebval(x, C2)),
    ("hermval(x, c 2-D), x[2]", lambda x: NH.hermval(x, C2), XA, "refused",
     lambda x: FH.hermval(x, C2)),
    # the same path, when c.shape[1:] and x.shape do not broadcast: a (confusing) ShapeError
    ("hermval(x, c 2-D), x[3]", lambda x: NH.hermval(x, C2), X3, "raises",
     lambda x: FH.hermval(x, C2)),
    ("polyvalfromroots(x, r), x[2]", lambda x: NP.polyvalfromroots(x, C1[:2]), XA, "refused",
     lambda x: FPo.polyvalfromroots(x, C1[:2])),
    ("polyvalfromroots(x, r), x scalar", lambda x: NP.polyvalfromroots(x, C1), XS, "ok", None),
    ("chebgrid2d(x, y traced, c), y[2]", lambda y: NC.chebgrid2d(XA, y, C2.T), XA, "refused",
     lambda y: FC.chebgrid2d(XA, y, C2.T)),
    ("chebgrid3d(x, y, z traced, c), z[2]", lambda z: NC.chebgrid3d(XA, XA, z, C3), XA,
     "refused", lambda z: FC.chebgrid3d(XA, XA, z, C3)),
    ("polygrid2d(x, y traced, c) (dispatched)", lambda y: NP.polygrid2d(XA, y, C2.T), XA,
     "ok", None),
    ("polyval2d(x traced, y, c) (dispatched)", lambda x: NP.polyval2d(x, XA, C2), XA, "ok",
     None),
    ("chebval2d(x traced, y, c)", lambda x: NC.chebval2d(x, XA, C2), XA, "raises",
     lambda x: FC.chebval2d(x, XA, C2)),
    ("chebgrid2d(x traced, y, c)", lambda x: NC.chebgrid2d(x, XA, C2), XA, "raises",
     lambda x: FC.chebgrid2d(x, XA, C2)),
    ("polyval(0.3, c traced)", lambda c: NP.polyval(0.3, c), C1, "raises",
     lambda c: FPo.polyval(0.3, c)),
    ("chebder(c traced)", lambda c: NC.chebder(c), C1, "raises", lambda c: FC.chebder(c)),
    ("chebvander(x traced, 3)", lambda x: NC.chebvander(x, 3), XA, "raises",
     lambda x: FC.chebvander(x, 3)),
    ("chebfit(x, y traced, 2)", lambda y: NC.chebfit(X3, y, 2), X3, "raises",
     lambda y: FC.chebfit(X3, y, 2)),
    ("Chebyshev(c)(x traced)", lambda x: np.polynomial.Chebyshev(C1)(x), XA, "raises", None),
    ("Polynomial(c traced)(0.3)", lambda c: np.polynomial.Polynomial(c)(0.3), C1, "raises",
     None),
    ("polyutils.mapdomain(x traced)", lambda x: polyutils.mapdomain(x, [0, 1], [-1, 1]), XA,
     "raises", None),
    ("polyutils.mapparms(old traced, new)",
     lambda x: np.stack(polyutils.mapparms(x, [-1.0, 1.0])), XA, "ok", None),
    ("numpy.poly1d(c)(x traced)", lambda x: np.poly1d([1.0, 2.0, 3.0])(x), X3, "ok", None),
    ("numpy.lib.scimath.sqrt(x traced)", lambda x: np.lib.scimath.sqrt(x), XA, "raises", None),
    ("numpy.lib.stride_tricks.as_strided", lambda x: np.lib.stride_tricks.as_strided(
        x, (2, 2), (8, 8)), X3, "raises", None),
    ("numpy.lib.stride_tricks.sliding_window_view",
     lambda x: np.lib.stride_tricks.sliding_window_view(x, 2), X3, "ok", None),
    ("numpy.vectorize(numpy.sin)(x traced)", lambda x: np.vectorize(np.sin)(x), XA, "raises",
     None),
    ("numpy.r_[x, x]", lambda x: np.r_[x, x], XA, "raises", None),
    ("numpy.ma.array(x) * 2", lambda x: np.ma.array(x) * 2, XA, "raises", None),
    ("numpy.matrix(x)", lambda x: np.asarray(np.matrix(x) * 2.0), XA, "raises", None),
    ("numpy.block([x, x])", lambda x: np.block([x, x]), XA, "ok", None),
    ("numpy.nanvar(x)", lambda x: np.nanvar(x), X3, "ok", None),
    ("numpy.piecewise(x, ...)", lambda x: np.piecewise(x, [x < 0.2], [np.sin, np.cos]), X3,
     "ok", None),
    ("numpy.astype(x, float64)", lambda x: np.astype(x, np.float64), XA, "ok", None),
]
TRANSFORMS = ("grad", "jvp", "vmap", "jit", "hessian")


def _central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (np.sum(f(x + e)) - np.sum(f(x - e))) / (2 * h)
    return g


def _run(f, x, transform):
    """What the transform gives for ``f`` at ``x``."""
    if transform == "grad":
        return fd.grad(lambda x: np.sum(f(x)))(x)
    if transform == "jvp":
        return fd.jvp(f, (x,), (np.linspace(0.3, 1.1, x.size).reshape(x.shape),))
    if transform == "vmap":
        return fd.vmap(f)(np.stack([x, 0.7 * x + 0.05]))
    if transform == "jit":
        return fd.jit(f)(x)
    return fd.hessian(lambda x: np.sum(f(x)))(x)


def _reference(f, x, transform):
    """What it should give: numpy's ``f`` on plain arrays, and its central differences."""
    if transform == "grad":
        return _central(f, x)
    if transform == "jvp":
        v = np.linspace(0.3, 1.1, x.size).reshape(x.shape)
        return f(x), (np.asarray(f(x + 1e-6 * v)) - f(x - 1e-6 * v)) / 2e-6
    if transform == "vmap":
        return np.stack([f(x), f(0.7 * x + 0.05)])
    if transform == "jit":
        return f(x)
    flat = x.reshape(-1)
    rows = [_central(lambda y: _central(f, y.reshape(x.shape), 1e-4).reshape(-1)[j],
                     flat, 1e-4) for j in range(flat.size)]
    return np.stack(rows).reshape(x.shape * 2)


def _close(got, want, tol):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return all(np.shape(g) == np.shape(w) and np.allclose(g, w, rtol=tol, atol=tol)
               for g, w in zip(got, want))


CASES = [(row, t) for row in TABLE for t in TRANSFORMS]


@pytest.mark.parametrize("row,transform", CASES, ids=[f"{r[0]}-{t}" for r, t in CASES])
def test_numpy_function_under_transform(row, transform):
    name, f, x, kind, replacement = row
    tol = 1e-4 if transform == "hessian" else 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in ("raises", "refused"):
            with pytest.raises(FunctionalDiffError) as info:
                _run(f, x, transform)
            if isinstance(info.value, TracerConversionError):
                assert os.path.basename(__file__) in str(info.value), str(info.value)
            if kind == "refused":
                assert "isinstance(x, numpy.ndarray)" in str(info.value)
                assert "funcdiff.numpy.polynomial." in str(info.value)
        else:
            got, want = _run(f, x, transform), _reference(f, x, transform)
            assert _close(got, want, tol), (name, transform)
        if replacement is not None:
            assert _close(_run(replacement, x, transform), _reference(f, x, transform), tol), (
                name, transform, "funcdiff.numpy.polynomial")
