"""funcdiff.numpy.linalg: numpy.linalg, differentiable in every mode and batched like numpy.

Each function takes what numpy's does (arrays, lists, tracers), promotes
integers to float64, checks shapes with errors naming the function, and binds
the primitives of ``funcdiff.primitives.linalg`` (factorizations, solves,
determinants, pseudo-inverse) or composes them with funcdiff.numpy (norms,
powers, chained products). Leading axes are a batch, as in numpy; under
``vmap`` the same primitives batch once more.

Conventions worth knowing:

- ``cholesky``, ``eigh`` and ``eigvalsh`` use the symmetric part
  ``(a + aᵀ)/2`` of their input, the Hermitian part ``(a + aᴴ)/2`` of a
  complex one (numpy reads one triangle; both agree on symmetric or
  Hermitian input), so their gradients are symmetric (Hermitian) matrices.
- ``svd`` is the reduced SVD (``full_matrices=False``); numpy's default
  ``full_matrices=True`` is accepted for square matrices only. ``qr`` is
  reduced too.
- Eigenvectors and singular vectors are defined up to sign, and their
  derivatives exist only for distinct eigenvalues (singular values); see
  ``eigh`` and ``svd``.
- ``eig`` and ``eigvals`` (general square matrices) always return complex
  arrays, as JAX does: numpy returns real ones when every eigenvalue is real,
  a dtype that depends on the values, which a traced program cannot have.
  Each eigenvector has unit 2-norm (numpy's normalisation) and is defined up
  to a phase; derivatives are exact for phase-invariant functions of simple
  eigenvalues and undefined (infinite or NaN) at repeated ones.
- Singular or non-positive-definite input raises ``LinAlgError`` (a funcdiff
  error that is also ``numpy.linalg.LinAlgError``), and so does a derivative
  that would need the inverse of a singular matrix: never silent NaN.

Complex matrices (complex64, complex128) work everywhere, with JAX's
convention: transposes never conjugate, and the gradient of a real loss of a
complex matrix ``Z = X + iY`` is ``∂L/∂X − i ∂L/∂Y``. The rules use the
conjugate transpose where the mathematics has one: Hermitian parts, ``L Lᴴ``,
``Uᴴ ȧ V``, unitary ``Q`` with the real diagonal of LAPACK's ``R``. Outputs
that are real in numpy stay real (``eigh``'s eigenvalues, singular values,
norms, ``slogdet``'s ``logabsdet``; its ``sign`` is the complex phase
``det / |det|``, which has a derivative). The phases of complex eigenvectors
and singular-vector pairs are free: differentiate functions invariant to
them (``|V|``, ``V diag(g(λ)) Vᴴ``, ``U diag(g(s)) Vh``).

>>> import numpy as np, funcdiff as fd, funcdiff.numpy as fnp
>>> a = np.array([[2., 1.], [1., 3.]])
>>> fd.grad(lambda a: fnp.linalg.slogdet(a)[1])(a)   # d log|det a| / da = a⁻ᵀ
array([[ 0.6, -0.2],
       [-0.2,  0.4]])
>>> z = np.array([[2., 1j], [0., 1.]])
>>> fd.grad(lambda z: fnp.linalg.slogdet(z)[1])(z)    # the same a⁻ᵀ, never conjugated
array([[0.5+0.j , 0. +0.j ],
       [0. -0.5j, 1. +0.j ]])
"""

from funcdiff.numpy._linalg_core import (EigResult, EighResult, LinAlgArgumentError, QRResult,
                                         SlogdetResult, SVDResult, det, inv, slogdet, solve)
from funcdiff.numpy._linalg_array_api import (
    cross, diagonal, matmul, matrix_transpose, outer, tensordot, trace, vecdot)
from funcdiff.numpy._linalg_decompositions import (
    cholesky, eig, eigh, eigvals, eigvalsh, qr, svd, svdvals)
from funcdiff.numpy._linalg_lstsq import lstsq, matrix_rank, pinv
from funcdiff.numpy._linalg_norms import (
    cond, matrix_norm, norm, vector_norm)
from funcdiff.numpy._linalg_products import (
    matrix_power, multi_dot, tensorinv, tensorsolve)
from funcdiff.primitives.linalg import LinAlgError, SquareMatrixError

__all__ = [
    "LinAlgError", "LinAlgArgumentError", "SquareMatrixError", "EighResult", "EigResult",
    "SVDResult", "QRResult", "SlogdetResult", "inv", "solve", "det", "slogdet", "cholesky",
    "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "pinv", "matrix_rank",
    "lstsq", "norm", "vector_norm", "matrix_norm", "cond", "matrix_power", "multi_dot",
    "tensorsolve", "tensorinv", "matrix_transpose", "diagonal", "trace", "outer", "cross",
    "vecdot", "matmul", "tensordot",
]
