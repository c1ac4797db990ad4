"""funcdiff.scipy.special's functions whose values are scipy.special's own.

One row per function: the funcdiff function, scipy's, the arguments (a grid over
the domain scipy documents, with its edges) and which argument is differentiated.
The rows drive: values equal to scipy's (the same bits for float64) and NaN where
scipy's are NaN; derivatives against central differences (check_grads, order 2,
both modes) and against closed forms; jit against eager; vmap against a loop.
Then the refusals: a traced order, and the derivatives funcdiff does not have.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.special as sp

import funcdiff as fd
from funcdiff.errors import ConcretizationError, DifferentiationError, InvalidArgumentError
from funcdiff.scipy import special as fs
from funcdiff.test_util import check_grads

POS = np.array([0.0, 0.1, 0.5, 1.0, 2.5, 7.0, 30.0, 200.0])
REAL = np.concatenate([-POS[::-1], POS[1:]])
SMOOTH_POS = np.array([0.3, 1.1, 2.7, 6.0])  # where finite differences are meaningful
SMOOTH_REAL = np.array([-2.3, -0.7, 0.4, 1.9, 5.0])


class Row:
    """fun(*args) against ref(*args); the argument ``wrt`` differentiated at ``at``."""

    def __init__(self, id, fun, ref, args, at, wrt, rtol=1e-6):
        self.id, self.fun, self.ref, self.args = id, fun, ref, args
        self.at, self.wrt, self.rtol = at, wrt, rtol


def unary(name, grid, at, rtol=1e-6):
    return Row(name, getattr(fs, name), getattr(sp, name), (grid,), (at,), 0, rtol)


def ordered(name, order, grid, at, rtol=1e-6):
    return Row(f"{name}-{order}", lambda x: getattr(fs, name)(order, x),
               lambda x: getattr(sp, name)(order, x), (grid,), (at,), 0, rtol)


ROWS = [
    unary("j0", REAL, SMOOTH_REAL), unary("j1", REAL, np.append(SMOOTH_REAL, 0.0)),
    *(ordered("jv", v, REAL, SMOOTH_REAL) for v in (0.0, 2.0, -3.0)),
    *(ordered("jv", v, POS, SMOOTH_POS) for v in (0.5, 2.7)),
    ordered("jn", 3, REAL, SMOOTH_REAL),
    unary("y0", POS, SMOOTH_POS), unary("y1", POS, SMOOTH_POS),
    *(ordered("yn", n, POS, SMOOTH_POS, rtol=1e-5) for n in (0, 1, 4, -2)),
    *(ordered("yv", v, POS, SMOOTH_POS, rtol=1e-5) for v in (0.5, 2.3)),
    *(ordered("iv", v, REAL, SMOOTH_REAL) for v in (0.0, 1.0, 3.0)),
    ordered("iv", 1.5, POS, SMOOTH_POS),
    *(ordered("ive", v, REAL, SMOOTH_REAL) for v in (0.0, 2.0)),
    ordered("ive", 0.5, POS, SMOOTH_POS),
    unary("i0e", REAL, SMOOTH_REAL), unary("i1e", REAL, SMOOTH_REAL),
    *(ordered("kv", v, POS, SMOOTH_POS, rtol=1e-5) for v in (0.0, 1.0, 2.5)),
    *(ordered("kve", v, POS, SMOOTH_POS) for v in (0.0, 1.5)),
    unary("expi", REAL, SMOOTH_REAL), unary("exp1", POS, SMOOTH_POS),
    unary("spence", np.array([-1.0, 0.0, 0.2, 0.99, 1.0, 1.01, 3.0, 50.0]),
          np.array([0.3, 0.97, 1.0, 1.04, 2.0])),
    unary("erfcinv", np.array([-0.5, 0.0, 1e-300, 1e-5, 0.3, 1.0, 1.7, 2.0, 2.5]),
          np.array([0.2, 0.9, 1.0, 1.6])),
    unary("rgamma", np.array([-3.0, -2.5, -1.0, 0.0, 0.5, 1.0, 4.5, 171.5, 200.0]),
          np.array([-2.5, -0.4, 0.7, 3.2])),
    Row("multigammaln-3", lambda a: fs.multigammaln(a, 3), lambda a: sp.multigammaln(a, 3),
        (np.array([1.01, 1.5, 4.0, 50.0]),), (np.array([1.3, 2.0, 6.5]),), 0),
    Row("zeta-q", fs.zeta, sp.zeta, (np.array([[1.0], [1.5], [2.0], [4.0], [0.5]]), POS[1:]),
        (np.array([2.0, 3.5]), np.array([0.7, 2.2])), 1),
    unary("zeta", np.array([-3.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 10.0]), None),
    Row("gammainc", fs.gammainc, sp.gammainc, (np.array([[0.2], [1.0], [3.5], [40.0]]), POS),
        (np.array([0.6, 1.0, 3.5]), np.array([0.4, 1.3, 2.9])), 1),
    Row("gammaincc", fs.gammaincc, sp.gammaincc, (np.array([[0.2], [1.0], [3.5], [40.0]]), POS),
        (np.array([0.6, 1.0, 3.5]), np.array([0.4, 1.3, 2.9])), 1),
    Row("betainc", fs.betainc, sp.betainc,
        (np.array([[0.5], [1.0], [2.0]]), np.array([[[0.7]], [[3.0]]]),
         np.array([0.0, 0.1, 0.5, 0.9, 1.0])),
        (np.array([0.5, 1.0, 2.0]), np.array([0.7, 1.0, 3.0]), np.array([0.2, 0.5, 0.8])), 2),
]
DIFFERENTIABLE = [r for r in ROWS if r.at[0] is not None]


def ids(row):
    return row.id


def partial(row, args):
    """row.fun as a function of its differentiated argument alone."""
    def f(v):
        full = list(args)
        full[row.wrt] = v
        return row.fun(*full)
    return f


@pytest.mark.parametrize("row", ROWS, ids=ids)
def test_values_are_scipys(row):
    with np.errstate(all="ignore"):
        want = row.ref(*row.args)
    got = row.fun(*row.args)
    assert isinstance(got, (np.ndarray, np.generic)) and got.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.any(np.isfinite(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(got, want)  # the same bits: scipy's own value


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=ids)
def test_derivatives_against_central_differences(row):
    f = partial(row, row.at)
    check_grads(f, (row.at[row.wrt],), order=2, rtol=row.rtol, atol=row.rtol)


def test_derivatives_against_closed_forms():
    x = np.array([0.3, 1.7, 4.0])
    grad = fd.elementwise_grad
    np.testing.assert_allclose(grad(fs.j0)(x), -sp.j1(x), rtol=1e-14)
    np.testing.assert_allclose(grad(fs.j1)(x), sp.jvp(1, x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda t: fs.jv(2.5, t))(x), sp.jvp(2.5, x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda t: fs.yv(1.5, t))(x), sp.yvp(1.5, x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda t: fs.iv(0.5, t))(x), sp.ivp(0.5, x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda t: fs.kv(1.5, t))(x), sp.kvp(1.5, x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda t: fs.kve(1.5, t))(x),
                               (sp.kvp(1.5, x) + sp.kv(1.5, x)) * np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda t: fs.ive(1.0, t))(-x),
                               (sp.ivp(1, -x) + sp.iv(1, -x)) * np.exp(-x), rtol=1e-12)
    np.testing.assert_allclose(grad(fs.i1e)(x), (sp.ivp(1, x) - sp.iv(1, x)) * np.exp(-x),
                               rtol=1e-12)
    np.testing.assert_allclose(grad(fs.expi)(x), np.exp(x) / x, rtol=1e-14)
    np.testing.assert_allclose(grad(fs.exp1)(x), -np.exp(-x) / x, rtol=1e-14)
    np.testing.assert_allclose(grad(fs.erfcinv)(x / 3),
                               -np.sqrt(np.pi) / 2 * np.exp(sp.erfcinv(x / 3) ** 2), rtol=1e-14)
    np.testing.assert_allclose(grad(fs.rgamma)(x), -sp.digamma(x) * sp.rgamma(x), rtol=1e-13)
    np.testing.assert_allclose(grad(lambda t: fs.gammainc(2.5, t))(x),
                               x ** 1.5 * np.exp(-x) / sp.gamma(2.5), rtol=1e-13)
    np.testing.assert_allclose(grad(lambda t: fs.betainc(2.0, 3.0, t))(x / 5),
                               12 * (x / 5) * (1 - x / 5) ** 2, rtol=1e-13)
    np.testing.assert_allclose(grad(lambda q: fs.zeta(3.0, q))(x), -3 * sp.zeta(4.0, x),
                               rtol=1e-14)
    assert np.all(grad(fs.gammasgn)(np.array([-1.5, 2.0])) == 0)


def test_derivatives_at_the_points_where_the_formulas_divide_by_zero():
    grad = fd.grad
    assert float(grad(fs.j1)(0.0)) == 0.5
    assert float(grad(fs.i1e)(0.0)) == 0.5
    assert float(grad(lambda x: fs.jv(1.0, x))(0.0)) == 0.5
    assert float(grad(fs.spence)(1.0)) == -1.0
    np.testing.assert_allclose(float(grad(grad(fs.spence))(1.0)), 0.5, rtol=1e-15)
    for n in range(4):  # 1/Gamma near -n is (-1)^n n! (x + n)
        assert float(grad(fs.rgamma)(-float(n))) == (-1) ** n * np.prod(np.arange(1, n + 1))
    assert float(grad(fs.gammainc, argnums=1)(1.0, 0.0)) == 1.0  # x^0 e^0 / Gamma(1)
    assert float(grad(fs.betainc, argnums=2)(1.0, 1.0, 1.0)) == 1.0
    assert float(grad(fs.betainc, argnums=2)(2.0, 1.0, 0.0)) == 0.0


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=ids)
def test_jit_equals_eager_for_values_and_gradients(row):
    f = partial(row, row.at)
    x = row.at[row.wrt]
    np.testing.assert_array_equal(fd.jit(f)(x), f(x))
    g = fd.elementwise_grad(f)
    np.testing.assert_allclose(fd.jit(g)(x), g(x), rtol=1e-14)


@pytest.mark.parametrize("row", DIFFERENTIABLE, ids=ids)
def test_vmap_equals_a_loop(row):
    f = partial(row, row.at)
    x = row.at[row.wrt]
    g = fd.grad(lambda v: f(v).sum())
    xs = np.stack([x, x * 1.1])
    np.testing.assert_array_equal(fd.vmap(f)(xs), np.stack([f(v) for v in xs]))
    np.testing.assert_allclose(fd.vmap(g)(xs), np.stack([g(v) for v in xs]), rtol=1e-14)


def test_array_orders_and_float32():
    x = np.array([0.5, 1.5, 3.0])
    v = np.array([0.0, 1.0, 2.5])
    np.testing.assert_array_equal(fs.jv(v, x), sp.jv(v, x))
    np.testing.assert_array_equal(fs.kv(v[:, None], x), sp.kv(v[:, None], x))
    np.testing.assert_allclose(fd.elementwise_grad(lambda t: fs.iv(v, t))(x), sp.ivp(v, x),
                               rtol=1e-12)
    out = fs.j0(x.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, sp.j0(x), rtol=1e-6)
    assert fs.yn(2, np.arange(1, 4)).dtype == np.float64  # integers become float64


def test_a_traced_order_is_refused_by_name():
    x = np.array([0.5, 2.0])
    with pytest.raises(ConcretizationError, match="jv needs a concrete v"):
        fd.jit(fs.jv)(1.0, x)
    with pytest.raises(ConcretizationError, match="yn needs a concrete n"):
        fd.vmap(fs.yn, in_axes=(0, None))(np.array([1.0, 2.0]), x)
    with pytest.raises(DifferentiationError, match="kv has no derivative with respect to its v"):
        fd.grad(lambda v: fs.kv(v, 2.0))(1.0)
    with pytest.raises(DifferentiationError, match="multigammaln has no derivative .* d"):
        fd.grad(lambda d: fs.multigammaln(3.0, d))(2.0)
    np.testing.assert_array_equal(fd.jit(fs.jv, static_argnums=0)(1.0, x), sp.jv(1.0, x))
    with pytest.raises(InvalidArgumentError, match="yn's n must be an integer"):
        fs.yn(1.5, x)
    with pytest.raises(InvalidArgumentError, match="positive integer dimension d"):
        fs.multigammaln(3.0, 0)


def test_derivatives_in_x_with_integer_parameters():
    # integer-valued parameters held fixed: the derivative in x alone
    g = fd.grad(lambda x: fs.gammainc(3, x) + fs.betainc(2, 3, x / 4) + fs.zeta(2, x))
    want = (sp.gammainc(3, 2.0 + 1e-6) - sp.gammainc(3, 2.0 - 1e-6)) / 2e-6
    want += 12 * 0.5 * 0.5 ** 2 / 4 - 2 * sp.zeta(3.0, 2.0)
    np.testing.assert_allclose(g(2.0), want, rtol=1e-8)


def test_import_funcdiff_does_not_import_scipy():
    code = ("import sys, funcdiff, funcdiff.scipy.special as s; "
            "assert 'scipy' not in sys.modules, 'scipy imported'; "
            "s.j0(1.0); assert 'scipy.special' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_scipy_the_error_says_how_to_install_it():
    code = ("import sys; sys.modules['scipy'] = None; "
            "import funcdiff.scipy.special as s\n"
            "try:\n    s.gammainc(1.0, 2.0)\n"
            "except ImportError as e:\n"
            "    assert 'pip install funcdiff[scipy]' in str(e), e\n"
            "    from funcdiff.errors import FunctionalDiffError\n"
            "    assert isinstance(e, FunctionalDiffError)\n"
            "else:\n    raise SystemExit('no error')")
    subprocess.run([sys.executable, "-c", code], check=True)
