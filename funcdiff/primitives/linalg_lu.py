"""LU with partial pivoting (``lu``) and ``lu_pivots_to_permutation``.

numpy has no LU: the impl is LAPACK's blocked partial-pivoting algorithm
written in numpy, for all matrices of a stack at once. ``lu`` returns the
packed factors (unit lower L below the diagonal, U on and above it), the
pivots and the permutation; its jvp solves with the two triangular factors
(rectangular inputs pad them with identity blocks). ``lu_pivots_to_permutation``
turns LAPACK's pivots into a permutation and has no derivative.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, ShapedArray, get_aval
from funcdiff.errors import ShapeError
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import indexing, slicing, structural
from funcdiff.primitives.cards import checked_impl, nbytes
from funcdiff.primitives.linalg_common import (cols, leading_batch, mask, matrices, mm, rows,
                                               zero_like, check_matrix)
from funcdiff.primitives.linalg_solve import triangular_solve


# --- lu and lu_pivots_to_permutation -----------------------------------------------

lu_p = Primitive("lu", multiple_results=True)


_LU_BLOCK = 32


def _lu_impl(a):
    """LU with partial pivoting, ``a[perm] = L U`` (L unit lower, packed with U).

    numpy has no LU. This is LAPACK's blocked right-looking algorithm, all
    matrices of the stack at once: each panel of ``_LU_BLOCK`` columns is
    eliminated column by column (vectorised row swaps and rank-1 updates),
    then the rest of the matrix is updated with one triangular solve and one
    matrix product (BLAS). An exactly zero pivot column is skipped, as LAPACK does.
    """
    a = np.asarray(a)
    *lead, m, n = a.shape
    k = min(m, n)
    lu = np.array(a, copy=True).reshape(-1, m, n)
    count = lu.shape[0]
    pivots = np.zeros((count, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (count, 1))
    members = np.arange(count)
    for j0 in range(0, k, _LU_BLOCK):
        j1 = min(j0 + _LU_BLOCK, k)
        for j in range(j0, j1):
            p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
            pivots[:, j] = p
            lu[members, j], lu[members, p] = lu[members, p], lu[members, j]
            perm[members, j], perm[members, p] = perm[members, p], perm[members, j]
            pivot = lu[:, j, j:j + 1]
            lu[:, j + 1:, j] /= np.where(pivot == 0, 1, pivot)
            lu[:, j + 1:, j + 1:j1] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:j1]
        if j1 < n:  # U12 = L11⁻¹ A12, then A22 -= L21 U12
            l11 = np.tril(lu[:, j0:j1, j0:j1], -1) + np.eye(j1 - j0, dtype=lu.dtype)
            lu[:, j0:j1, j1:] = np.linalg.solve(l11, lu[:, j0:j1, j1:])
            lu[:, j1:, j1:] -= lu[:, j1:, j0:j1] @ lu[:, j0:j1, j1:]
    return [lu.reshape(a.shape), pivots.reshape(tuple(lead) + (k,)),
            perm.reshape(tuple(lead) + (m,))]


def _lu_abstract_eval(a):
    check_matrix("lu", a, square=False)
    m, n = a.shape[-2:]
    return [a, ShapedArray(a.shape[:-2] + (min(m, n),), np.dtype(np.int32)),
            ShapedArray(a.shape[:-1], np.dtype(np.int32))]


def _lu_jvp(primals, tangents):
    # P A = L U: with X = L⁻¹ P Ȧ U⁻¹, L̇ = L tril(X, -1) and U̇ = triu(X) U. Rectangular
    # inputs pad L to m x m and U to n x n with identity blocks.
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    nd = get_aval(a).ndim
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    dtype = get_aval(a).dtype
    zero = np.zeros((), dtype)
    pa_dot = indexing.take_along_axis(a_dot, structural.expand_dims(perm, dimensions=(-1,)),
                                      axis=nd - 2)
    l = mask(cols(lu, 0, k), (m, k), -1, lower=True)
    if m > k:
        l = slicing.pad(l, zero, padding_config=((0, 0, 0),) * (nd - 1) + ((0, m - k, 0),))
    l = ew.add(l, np.eye(m, dtype=dtype))
    u = mask(rows(lu, k), (k, n), 0, lower=False)
    if n > k:
        u = slicing.pad(u, zero, padding_config=((0, 0, 0),) * (nd - 2)
                           + ((0, n - k, 0), (0, 0, 0)))
        u = ew.add(u, np.diag(np.r_[np.zeros(k), np.ones(n - k)]).astype(dtype))
    la = triangular_solve(l, pa_dot, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(u, la, left_side=False, lower=False)
    lu_dot = ew.add(mm(l, mask(x, (m, n), -1, lower=True)),
                    mm(mask(x, (m, n), 0, lower=False), u))
    return [lu, pivots, perm], [lu_dot, zero_like(pivots), zero_like(perm)]


def _lu_cost(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    return {"flops": matrices(a) * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3),
            "bytes": 2 * nbytes(a)}


lu_p.abstract_eval = _lu_abstract_eval
lu_p.impl = checked_impl(_lu_impl, _lu_abstract_eval)
lu_p.jvp = _lu_jvp
lu_p.batch = leading_batch(lu_p)
lu_p.cost = _lu_cost

lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")


def _pivots_impl(pivots, *, permutation_size):
    pivots = np.asarray(pivots)
    if pivots.ndim < 1 or pivots.dtype.kind not in "iu" or pivots.shape[-1] > permutation_size:
        raise ValueError("bad pivots")  # checked_impl reports the shape rule's error
    lead, k = pivots.shape[:-1], pivots.shape[-1]
    flat = pivots.reshape(-1, k)
    perm = np.tile(np.arange(permutation_size, dtype=np.int32), (flat.shape[0], 1))
    members = np.arange(flat.shape[0])
    for j in range(k):
        p = flat[:, j]
        perm[members, j], perm[members, p] = perm[members, p], perm[members, j].copy()
    return perm.reshape(lead + (permutation_size,))


def _pivots_abstract_eval(pivots, *, permutation_size):
    if pivots.ndim < 1 or pivots.dtype.kind not in "iu" or pivots.shape[-1] > permutation_size:
        raise ShapeError(
            f"lu_pivots_to_permutation needs integer pivots (..., k) with k <= "
            f"permutation_size={permutation_size}, but got {pivots.str_short()}.")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype(np.int32))


lu_pivots_to_permutation_p.abstract_eval = _pivots_abstract_eval
lu_pivots_to_permutation_p.impl = checked_impl(_pivots_impl, _pivots_abstract_eval)
lu_pivots_to_permutation_p.nondifferentiable = True
lu_pivots_to_permutation_p.batch = leading_batch(lu_pivots_to_permutation_p)
lu_pivots_to_permutation_p.cost = lambda p, *, permutation_size: {
    "flops": 0, "bytes": nbytes(p) + 4 * (p.size // max(p.shape[-1], 1)) * permutation_size}
