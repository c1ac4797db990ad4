"""funcdiff.numpy.linalg: numpy.linalg, differentiable in every mode and batched like numpy.

Each function takes what numpy's does (arrays, lists, tracers), promotes
integers to float64, checks shapes with errors naming the function, and binds
the primitives of ``funcdiff.primitives.linalg`` (factorizations, solves,
determinants, pseudo-inverse) or composes them with funcdiff.numpy (norms,
powers, chained products). Leading axes are a batch, as in numpy; under
``vmap`` the same primitives batch once more.

Conventions worth knowing:

- ``cholesky``, ``eigh`` and ``eigvalsh`` use the symmetric part
  ``(a + aᵀ)/2`` of their input (numpy reads one triangle; both agree on
  symmetric input), so their gradients are symmetric matrices.
- ``svd`` is the reduced SVD (``full_matrices=False``); numpy's default
  ``full_matrices=True`` is accepted for square matrices only. ``qr`` is
  reduced too.
- Eigenvectors and singular vectors are defined up to sign, and their
  derivatives exist only for distinct eigenvalues (singular values); see
  ``eigh`` and ``svd``.
- Singular or non-positive-definite input raises ``LinAlgError`` (a funcdiff
  error that is also ``numpy.linalg.LinAlgError``), and so does a derivative
  that would need the inverse of a singular matrix: never silent NaN.

>>> import numpy as np, funcdiff as fd, funcdiff.numpy as fnp
>>> a = np.array([[2., 1.], [1., 3.]])
>>> fd.grad(lambda a: fnp.linalg.slogdet(a)[1])(a)   # d log|det a| / da = a⁻ᵀ
array([[ 0.6, -0.2],
       [-0.2,  0.4]])
"""

from funcdiff.numpy._linalg_core import (EighResult, LinAlgArgumentError, QRResult,
                                         SlogdetResult, SVDResult, det, inv, slogdet, solve)
from funcdiff.numpy._linalg_array_api import (
    cross, diagonal, matmul, matrix_transpose, outer, tensordot, trace, vecdot)
from funcdiff.numpy._linalg_decompositions import (
    cholesky, eigh, eigvalsh, qr, svd, svdvals)
from funcdiff.numpy._linalg_lstsq import lstsq, matrix_rank, pinv
from funcdiff.numpy._linalg_norms import (
    cond, matrix_norm, norm, vector_norm)
from funcdiff.numpy._linalg_products import (
    matrix_power, multi_dot, tensorinv, tensorsolve)
from funcdiff.primitives.linalg import LinAlgError, SquareMatrixError

__all__ = [
    "LinAlgError", "LinAlgArgumentError", "SquareMatrixError", "EighResult", "SVDResult",
    "QRResult", "SlogdetResult", "inv", "solve", "det", "slogdet", "cholesky", "eigh",
    "eigvalsh", "svd", "svdvals", "qr", "pinv", "matrix_rank", "lstsq", "norm", "vector_norm",
    "matrix_norm", "cond", "matrix_power", "multi_dot", "tensorsolve", "tensorinv",
    "matrix_transpose", "diagonal", "trace", "outer", "cross", "vecdot", "matmul", "tensordot",
]
