"""funcdiff.scipy.linalg's structured matrices and linear matrix equations.

One row per function: the funcdiff function, scipy.linalg's, and float64
arguments. The rows drive: values against scipy's; derivatives in every
argument against central differences (check_grads, order 2, both modes); jit
against eager; vmap against a loop. Then closed forms of the derivatives and
the refusals of bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import funcdiff as fd
from funcdiff.errors import InvalidArgumentError
from funcdiff.primitives.linalg import LinAlgError, SquareMatrixError
from funcdiff.scipy import linalg as fl
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)


def well_conditioned(n, shift=4.0):
    return RNG.normal(size=(n, n)) + shift * np.eye(n)


def banded(l, u, n):
    ab = RNG.normal(size=(l + u + 1, n))
    ab[u] += 5.0  # a dominant diagonal
    return ab


class Row:
    def __init__(self, id, fun, ref, args, rtol=1e-10):
        self.id, self.fun, self.ref, self.args, self.rtol = id, fun, ref, args, rtol


ROWS = [
    Row("toeplitz_c", fl.toeplitz, sl.toeplitz, (RNG.normal(size=4),)),
    Row("toeplitz_cr", fl.toeplitz, sl.toeplitz, (RNG.normal(size=3), RNG.normal(size=5))),
    Row("toeplitz_complex", fl.toeplitz, sl.toeplitz,
        (RNG.normal(size=3) + 1j * RNG.normal(size=3),)),
    Row("circulant", fl.circulant, sl.circulant, (RNG.normal(size=4),)),
    Row("block_diag", fl.block_diag, sl.block_diag,
        (RNG.normal(size=(2, 3)), RNG.normal(size=4), RNG.normal(size=(3, 1)))),
    Row("solve_banded_vec", lambda ab, b: fl.solve_banded((1, 2), ab, b),
        lambda ab, b: sl.solve_banded((1, 2), ab, b), (banded(1, 2, 5), RNG.normal(size=5))),
    Row("solve_banded_mat", lambda ab, b: fl.solve_banded((2, 0), ab, b),
        lambda ab, b: sl.solve_banded((2, 0), ab, b),
        (banded(2, 0, 4), RNG.normal(size=(4, 2)))),
    Row("solve_sylvester", fl.solve_sylvester, sl.solve_sylvester,
        (well_conditioned(3), well_conditioned(2), RNG.normal(size=(3, 2)))),
    Row("solve_continuous_lyapunov", fl.solve_continuous_lyapunov,
        sl.solve_continuous_lyapunov, (well_conditioned(3), RNG.normal(size=(3, 3)))),
]
IDS = [r.id for r in ROWS]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_values_match_scipy(row):
    got = np.asarray(row.fun(*row.args))
    want = row.ref(*row.args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=row.rtol, atol=1e-12)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_derivatives_order_2(row):
    check_grads(row.fun, row.args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_jit_matches_eager(row):
    np.testing.assert_allclose(fd.jit(row.fun)(*row.args), row.fun(*row.args), rtol=1e-13)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_vmap_matches_loop(row):
    stacks = [np.stack([a, a + 0.1 * RNG.normal(size=np.shape(a))]) for a in row.args]
    got = fd.vmap(row.fun)(*stacks)
    want = np.stack([np.asarray(row.fun(*[s[k] for s in stacks])) for k in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_batched_toeplitz_and_circulant_match_scipy():
    c, r = RNG.normal(size=(2, 3)), RNG.normal(size=(1, 4))
    np.testing.assert_array_equal(fl.toeplitz(c, r), sl.toeplitz(c, r))
    np.testing.assert_array_equal(fl.circulant(c), sl.circulant(c))
    assert fl.block_diag().shape == sl.block_diag().shape == (1, 0)


def test_structure_gradients_count_the_entries():
    # d sum(toeplitz(c, r)) / dc[k] is the length of diagonal -k of the m x n
    # matrix, min(m - k, n); for r[k] that of diagonal k, min(m, n - k), and r[0]
    # is never read
    m, n = 4, 6
    gc, gr = fd.grad(lambda c, r: fl.toeplitz(c, r).sum(), argnums=(0, 1))(
        np.ones(m), np.ones(n))
    np.testing.assert_array_equal(gc, [4, 3, 2, 1])
    np.testing.assert_array_equal(gr, [0, 4, 4, 3, 2, 1])
    np.testing.assert_array_equal(fd.grad(lambda c: fl.circulant(c).sum())(np.ones(3)), [3, 3, 3])


def test_sylvester_derivative_solves_a_sylvester_equation():
    a, b, q = ROWS[7].args
    da, db, dq = (RNG.normal(size=np.shape(v)) for v in (a, b, q))
    x, dx = fd.jvp(fl.solve_sylvester, (a, b, q), (da, db, dq))
    np.testing.assert_allclose(a @ dx + dx @ b, dq - da @ x - x @ db, atol=1e-12)


def test_solve_banded_cotangent_lives_on_the_band():
    ab, b = ROWS[5].args
    ab = ab.copy()
    ab[0, :2] = ab[3, -1:] = 0.0  # slots outside a (1, 2)-band matrix
    g = fd.grad(lambda ab: fl.solve_banded((1, 2), ab, b).sum())(ab)
    assert np.all(g[0, :2] == 0) and np.all(g[3, -1:] == 0)
    dense = sum(np.diag(ab[2 - k, max(k, 0):ab.shape[1] + min(k, 0)], k) for k in range(-1, 3))
    want = -np.linalg.solve(dense.T, np.ones(5))[:, None] * np.linalg.solve(dense, b)[None, :]
    for k in range(-1, 3):
        np.testing.assert_allclose(np.diag(want, k), g[2 - k, max(k, 0):5 + min(k, 0)],
                                   rtol=1e-10)


def test_bad_input_names_the_function():
    with pytest.raises(InvalidArgumentError, match="solve_banded.*l \\+ u \\+ 1"):
        fl.solve_banded((1, 1), np.ones((2, 3)), np.ones(3))
    with pytest.raises(InvalidArgumentError, match="solve_banded: b must be"):
        fl.solve_banded((1, 1), np.ones((3, 3)), np.ones(4))
    with pytest.raises(np.linalg.LinAlgError):  # scipy raises too
        sl.solve_banded((1, 1), np.zeros((3, 3)), np.ones(3))
    with pytest.raises(LinAlgError, match="solve_banded: the banded matrix a is singular"):
        fl.solve_banded((1, 1), np.zeros((3, 3)), np.ones(3))
    with pytest.raises(LinAlgError, match="solve_sylvester: a and -b share an eigenvalue"):
        fl.solve_sylvester(np.eye(2), -np.eye(1), np.ones((2, 1)))
    with pytest.raises(SquareMatrixError, match="solve_sylvester: a must be a square"):
        fl.solve_sylvester(np.ones((2, 3)), np.eye(2), np.ones((2, 2)))
    with pytest.raises(InvalidArgumentError, match="solve_sylvester: q must be"):
        fl.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 2)))
    with pytest.raises(SquareMatrixError, match="solve_continuous_lyapunov"):
        fl.solve_continuous_lyapunov(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(InvalidArgumentError, match="block_diag: block 1"):
        fl.block_diag(np.eye(2), np.ones((1, 2, 2)))
