"""Linear solves and determinants: ``triangular_solve``, ``solve``, ``det`` and ``slogdet``.

``solve`` and ``triangular_solve`` are linear in the right-hand side, with
transposes that solve with the transposed matrix; under vmap a solve with an
unbatched matrix folds the batch into the right-hand side's columns instead of
copying the matrix. numpy has no triangular solver: ``triangular_solve`` runs
LAPACK's general solve on the masked triangle (O(n³) rather than O(n²) flops,
same results). Complex matrices follow JAX's convention: the transposes solve
with ``aᵀ``, never ``aᴴ`` (cotangents are not conjugated). The derivatives of
``det`` and ``slogdet`` are solves, so at an
exactly singular matrix they raise ``LinAlgError`` rather than return NaN.
"""

from __future__ import annotations

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Primitive, ShapedArray, Zero, get_aval
from funcdiff.errors import DifferentiationError
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives.cards import checked_impl
from funcdiff.primitives.linalg_common import (SINGULAR, check_matrix, check_rhs, conj, const,
                                               cost, is_complex, leading_batch, mask, mm, mT,
                                               numerical, operand, real_part, solve_batch, trace,
                                               zero_like)


# --- triangular_solve -------------------------------------------------------------

triangular_solve_p = Primitive("triangular_solve")


def _triangle(a, lower, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    return t


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    # numpy has no triangular solver: LAPACK's general solve on the masked triangle
    # (O(n³) instead of O(n²); exact singularity is still detected).
    t = _triangle(a, lower, unit_diagonal)
    if transpose_a == left_side:  # solve tᵀ x = b, or x t = b  <=>  tᵀ xᵀ = bᵀ
        t = np.swapaxes(t, -1, -2)
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(t, np.swapaxes(b, -1, -2)), -1, -2)


def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    check_rhs("triangular_solve", a, b, left_side)
    return b


def _op(x, transpose_a):
    return mT(x) if transpose_a else x


def _triangular_solve_jvp(primals, tangents, **params):
    # x = op(A)⁻¹ b: ẋ = op(A)⁻¹ (ḃ − op(Ȧ) x) (left side), x = b op(A)⁻¹:
    # ẋ = (ḃ − x op(Ȧ)) op(A)⁻¹, with Ȧ restricted to the triangle the solve reads.
    (a, b), (a_dot, b_dot) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    rhs = None if type(b_dot) is Zero else b_dot
    if type(a_dot) is not Zero:
        n = get_aval(a).shape[-1]
        lower = params["lower"]
        k = (-1 if lower else 1) if params["unit_diagonal"] else 0
        a_dot = mask(a_dot, (n, n), k, lower)
        a_dot = _op(a_dot, params["transpose_a"])
        term = mm(a_dot, x) if params["left_side"] else mm(x, a_dot)
        rhs = ew.neg(term) if rhs is None else ew.sub(rhs, term)
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    if is_undefined(a):
        raise DifferentiationError("triangular_solve is linear only in its right-hand side b; "
                                   "it cannot be transposed with respect to the matrix a")
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                          transpose_a=not transpose_a,
                                          unit_diagonal=unit_diagonal)]


triangular_solve_p.abstract_eval = _triangular_solve_abstract_eval
triangular_solve_p.impl = numerical(
    "triangular_solve (used by solve_triangular, cho_solve, lu_solve and the derivatives of "
    "cholesky, qr and lu)", _triangular_solve_impl, _triangular_solve_abstract_eval,
    SINGULAR.replace("singular", "singular (a zero on the diagonal)", 1))
triangular_solve_p.jvp = _triangular_solve_jvp
triangular_solve_p.transpose = _triangular_solve_transpose
triangular_solve_p.batch = solve_batch(triangular_solve_p)
triangular_solve_p.cost = cost(lambda m, n, b: n * n * (b.shape[-1] if b.shape[-2] == n
                                                          else b.shape[-2]))


def triangular_solve(a, b, *, left_side=True, lower=False, transpose_a=False,
                     unit_diagonal=False):
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` with triangular ``a``.

    Only the lower (``lower=True``) or upper triangle of ``a`` is read; with
    ``unit_diagonal`` its diagonal is taken to be ones. ``op(a)`` is ``aᵀ`` when
    ``transpose_a``. ``a`` is ``(..., n, n)`` and ``b`` is ``(..., n, k)``
    (``(..., k, n)`` on the right side) with the same leading axes.

    >>> triangular_solve(np.array([[2., 0.], [1., 1.]]), np.array([[2.], [3.]]), lower=True)
    array([[1.],
           [2.]])
    """
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   unit_diagonal=bool(unit_diagonal))


# --- solve ---------------------------------------------------------------------------

solve_p = Primitive("solve")


def _solve_abstract_eval(a, b):
    check_rhs("solve", a, b)
    return b


def _solve_jvp(primals, tangents):
    (a, b), (a_dot, b_dot) = primals, tangents
    x = solve_p.bind(a, b)
    rhs = None if type(b_dot) is Zero else b_dot
    if type(a_dot) is not Zero:
        term = mm(a_dot, x)
        rhs = ew.neg(term) if rhs is None else ew.sub(rhs, term)
    return x, solve_p.bind(a, rhs)


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise DifferentiationError("solve is linear only in its right-hand side b; it cannot "
                                   "be transposed with respect to the matrix a")
    return [None, solve_p.bind(mT(a), ct)]


solve_p.abstract_eval = _solve_abstract_eval
solve_p.impl = numerical(
    "solve (used by linalg.solve, linalg.inv and the derivatives of det and slogdet)",
    np.linalg.solve, _solve_abstract_eval, SINGULAR)
solve_p.jvp = _solve_jvp
solve_p.transpose = _solve_transpose
solve_p.batch = solve_batch(solve_p)
solve_p.cost = cost(lambda m, n, b: 2 * n ** 3 // 3 + 2 * n * n * b.shape[-1])


def solve(a, b):
    """Solve ``a x = b`` for square ``a`` ``(..., n, n)`` and ``b`` ``(..., n, k)`` (LU, LAPACK).

    >>> solve(np.array([[2., 0.], [0., 4.]]), np.array([[2.], [2.]]))
    array([[1. ],
           [0.5]])
    """
    return solve_p.bind(a, b)


# --- det and slogdet ----------------------------------------------------------------

det_p = Primitive("det")


def _det_abstract_eval(a):
    check_matrix("det", a)
    return ShapedArray(a.shape[:-2], a.dtype)


def _det_jvp(primals, tangents):
    # d det(A) = det(A) tr(A⁻¹ Ȧ); at a singular A the solve raises LinAlgError.
    (a,), (a_dot,) = primals, tangents
    y = det_p.bind(a)
    return y, ew.mul(y, trace(solve_p.bind(a, a_dot)))


det_p.abstract_eval = _det_abstract_eval
det_p.impl = checked_impl(lambda a: np.linalg.det(operand(a)), _det_abstract_eval)
det_p.jvp = _det_jvp
det_p.batch = leading_batch(det_p)
det_p.cost = cost(lambda m, n: 2 * n ** 3 // 3)

slogdet_p = Primitive("slogdet", multiple_results=True)


def _slogdet_abstract_eval(a):
    check_matrix("slogdet", a)
    sign = ShapedArray(a.shape[:-2], a.dtype)  # complex input: the phase det / |det|
    return [sign, ShapedArray(a.shape[:-2], dtypes.real_dtype(a.dtype))]


def _slogdet_jvp(primals, tangents):
    # With t = tr(A⁻¹ Ȧ) = d log det A: d log|det A| = Re t, and for complex A the
    # phase moves too, d sign = sign · i Im t; a real sign is piecewise constant.
    (a,), (a_dot,) = primals, tangents
    sign, logabsdet = slogdet_p.bind(a)
    t = trace(solve_p.bind(a, a_dot))
    if not is_complex(a):
        return [sign, logabsdet], [zero_like(sign), t]
    i_im_t = ew.mul(ew.sub(t, conj(t)), const(t, 0.5))
    return [sign, logabsdet], [ew.mul(sign, i_im_t), real_part(t)]


slogdet_p.abstract_eval = _slogdet_abstract_eval
slogdet_p.impl = checked_impl(lambda a: list(np.linalg.slogdet(operand(a))),
                              _slogdet_abstract_eval)
slogdet_p.jvp = _slogdet_jvp
slogdet_p.batch = leading_batch(slogdet_p)
slogdet_p.cost = cost(lambda m, n: 2 * n ** 3 // 3)
