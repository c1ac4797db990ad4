"""Eigendecomposition of general square matrices: ``eig`` (values, and vectors if asked).

The impl is ``numpy.linalg.eig`` (LAPACK ``geev``). Its results are always
complex (complex64 for float32 and complex64 input, complex128 otherwise):
numpy returns real arrays when every eigenvalue happens to be real, a dtype
that depends on the values, and a traced program needs one fixed dtype.
Eigenvectors are the columns of ``V``, each of unit 2-norm as numpy's.

The jvp is the standard first-order perturbation result. With
``M = V⁻¹ Ȧ V``: ``λ̇ = diag(M)`` and ``V̇ = V (F ∘ M)``, ``F_ij = 1/(λ_j − λ_i)``
off the diagonal and 0 on it; then ``v̇_i −= v_i Re(v_iᴴ v̇_i)`` keeps each
column at unit norm to first order. An eigenvector is defined only up to a
complex factor; the norm fixes its size, not its phase, so derivatives of
functions invariant to each column's phase (``|V|``, ``V diag(g(λ)) V⁻¹``, ...)
are exact, and others are not defined. ``λ̇`` needs only ``V⁻¹``: it is exact
for every diagonalizable matrix with simple eigenvalues; ``V̇`` divides by the
eigenvalue gaps and is infinite or NaN at repeated eigenvalues, where the
eigenvectors are not differentiable. A defective ``V`` makes the solve raise
``LinAlgError``. The rule is built from ``solve``, ``dot_general`` and
elementwise operations, so reverse mode transposes it and higher orders follow.
"""

from __future__ import annotations

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, get_aval
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import reductions
from funcdiff.primitives.linalg_common import (as_dtype, check_matrix, col, conj, const, cost,
                                               diag, leading_batch, mm, numerical, real_part,
                                               row)
from funcdiff.primitives.linalg_solve import solve_p

eig_p = Primitive("eig", multiple_results=True)


def _complex_of(dtype: np.dtype) -> np.dtype:
    return dtypes.complex_dtype(dtypes.real_dtype(dtype))


def _eig_impl(a, *, compute_vectors):
    out = _complex_of(a.dtype)
    if compute_vectors:
        w, v = np.linalg.eig(a)
        return [w.astype(out, copy=False), v.astype(out, copy=False)]
    return [np.linalg.eigvals(a).astype(out, copy=False)]


def _eig_abstract_eval(a, *, compute_vectors):
    check_matrix("eig", a)
    dtype = _complex_of(a.dtype)
    w = ShapedArray(a.shape[:-1], dtype)
    return [w, ShapedArray(a.shape, dtype)] if compute_vectors else [w]


def _eig_jvp(primals, tangents, *, compute_vectors):
    (a,), (a_dot,) = primals, tangents
    w, v = eig_p.bind(a, compute_vectors=True)
    dtype = get_aval(w).dtype
    m = solve_p.bind(v, mm(as_dtype(a_dot, dtype), v))  # V⁻¹ Ȧ V
    w_dot = diag(m)
    if not compute_vectors:
        return [w], [w_dot]
    n = get_aval(a).shape[-1]
    eye = np.eye(n, dtype=dtype)
    gaps = ew.add(ew.sub(row(w), col(w)), eye)
    f = ew.mul(ew.div(const(w, 1), gaps), 1 - eye)
    v_dot = mm(v, ew.mul(f, m))
    # keep ‖v_i‖ = 1: remove the real part of v̇_i's component along v_i
    along = reductions.reduce_sum(ew.mul(conj(v), v_dot), axes=(get_aval(v).ndim - 2,))
    v_dot = ew.sub(v_dot, ew.mul(v, row(as_dtype(real_part(along), dtype))))
    return [w, v], [w_dot, v_dot]


eig_p.abstract_eval = _eig_abstract_eval
eig_p.impl = numerical("eig", _eig_impl, _eig_abstract_eval,
                       "the eigenvalue iteration did not converge (is the input finite?)")
eig_p.jvp = _eig_jvp
eig_p.batch = leading_batch(eig_p)
eig_p.cost = cost(lambda m, n, compute_vectors=True: (25 if compute_vectors else 10) * n ** 3)
