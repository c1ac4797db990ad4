"""Linear-algebra primitives: factorizations, solves, determinants and the matrix exponential.

Every primitive works on stacks of matrices: the last two axes are the matrix,
all leading axes are a batch, exactly as in ``numpy.linalg``. So each batch
rule only moves the vmapped axis to the front (a solve with an unbatched
matrix folds the batch into the right-hand side's columns instead). Impls call
LAPACK through ``numpy.linalg``; LU, which numpy lacks, is LAPACK's blocked
partial-pivoting algorithm written in numpy here. numpy has no triangular
solver either: ``triangular_solve`` runs LAPACK's general solve on the masked
triangle (O(n³) rather than O(n²) flops, same results).

The jvp rules are the standard matrix-calculus results, written with funcdiff
operations (``dot_general``, ``triangular_solve``, ``solve``, elementwise
masks) so that they are linear in the tangents (reverse mode transposes them)
and differentiable again (second order comes for free). Matrices are real or
complex; complex rules use the conjugate transpose where the mathematics has
one (``Uᴴ Ȧ V``), while transposes of linear maps never conjugate (JAX's
convention). ``cholesky`` and ``eigh`` read the Hermitian part ``(a + aᴴ)/2``
of their input (equal to ``a`` for Hermitian input), so their derivatives are
Hermitian too. ``eig`` (general matrices) always returns complex results.
``solve`` and ``triangular_solve`` are linear in the right-hand side, with
transposes that solve with the transposed matrix; ``expm_frechet`` (the Fréchet derivative of
the matrix exponential) is linear in its direction ``e``.

Numerical failures (a matrix that is not positive definite, an exactly
singular one) raise ``LinAlgError``, a funcdiff error that is also a
``numpy.linalg.LinAlgError``; derivatives that need an inverse raise it too
rather than returning NaN. The derivatives of eigenvectors and singular
vectors divide by eigenvalue (singular-value) gaps: they are exact for
distinct values and infinite for exactly repeated ones (see the docstrings of
``funcdiff.numpy.linalg.eigh`` and ``svd``).

One module per concept, re-exported here: ``linalg_common`` (the errors,
checks and matrix helpers the rules share), ``linalg_solve`` (triangular_solve,
solve, det, slogdet), ``linalg_factor`` (cholesky, eigh, svd, qr, pinv), ``linalg_eig`` (eig of
general square matrices),
``linalg_lu`` (lu, lu_pivots_to_permutation) and ``linalg_expm`` (expm,
expm_frechet).
"""

from funcdiff.primitives.linalg_common import (INEXACT, LinAlgError, SquareMatrixError,
                                               check_matrix)
from funcdiff.primitives.linalg_eig import eig_p
from funcdiff.primitives.linalg_expm import expm_frechet_p, expm_p
from funcdiff.primitives.linalg_factor import cholesky, cholesky_p, eigh_p, pinv_p, qr_p, svd_p
from funcdiff.primitives.linalg_lu import lu_p, lu_pivots_to_permutation_p
from funcdiff.primitives.linalg_solve import (det_p, slogdet_p, solve, solve_p, triangular_solve,
                                              triangular_solve_p)

__all__ = ["INEXACT", "LinAlgError", "SquareMatrixError", "check_matrix", "cholesky_p", "cholesky",
           "triangular_solve_p", "triangular_solve", "solve_p", "solve", "det_p", "slogdet_p",
           "eigh_p", "eig_p", "svd_p", "qr_p", "lu_p", "lu_pivots_to_permutation_p", "pinv_p",
           "expm_p", "expm_frechet_p"]
