"""funcdiff.numpy.linalg's argument handling, result types and solves (inv, solve, det, slogdet).

The other functions of the namespace build on these: one private module per
concept (decompositions; pinv, rank and least squares; norms; products and
powers; numpy 2's array-API names), all gathered by ``funcdiff.numpy.linalg``.
"""

from __future__ import annotations

import collections
import functools
from typing import Any

import numpy as np

from funcdiff.core import Tracer, get_aval
from funcdiff.errors import FunctionalDiffError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.primitives import linalg as pl
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.primitives.linalg import SquareMatrixError


class LinAlgArgumentError(FunctionalDiffError, ValueError):
    """A linear-algebra function got an invalid setting (``ord``, ``mode``, ``UPLO``, ...)."""


EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])

NoValue = object()

# ---------------------------------------------------------------------------
# Argument handling


def _qualified(name: str) -> str:
    return name if name.startswith("funcdiff.") else f"funcdiff.numpy.linalg.{name}"


_INEXACT = pl.INEXACT  # the dtypes the primitives take: real and complex


def _float(name: str, x: Any) -> Any:
    """``x`` as an array or tracer; integers and booleans become float64."""
    if (type(x) is np.ndarray or isinstance(x, Tracer)) and x.dtype.kind == "f":
        return x  # the common case: nothing to convert
    x = _util.asarray(x, _qualified(name))
    if _util.dtype_of(x).kind in "biu":
        x = _util.cast(x, np.dtype(np.float64))
    return x


def matrix(name: str, a: Any, square: bool = True) -> Any:
    a = _float(name, a)
    _check_matrix(name, get_aval(a), square)
    return a


def _check_matrix(name: str, aval: Any, square: bool = True) -> None:
    """``pl.check_matrix``, whose error message is built only when the check fails."""
    shape = aval.shape
    if (aval.dtype not in _INEXACT or len(shape) < 2
            or (square and shape[-1] != shape[-2])):
        pl.check_matrix(_qualified(name), aval, square)


def solve_operands(name: str, a: Any, b: Any) -> tuple[Any, Any, bool]:
    """``a`` (..., n, n) and ``b`` promoted and broadcast to common leading axes.

    ``b`` is a vector (..., n) only if it is 1-D (numpy 2's and SciPy's rule);
    it is returned as a matrix (..., n, 1) with ``True`` to say so.
    """
    a, b = _float(name, a), _float(name, b)
    if a.dtype != b.dtype:
        a, b = _util.promote(name, a, b)
    a_aval = get_aval(a)
    _check_matrix(name, a_aval)
    a_shape, b_shape = a_aval.shape, get_aval(b).shape
    if len(b_shape) == 0 or b_shape[-2 if len(b_shape) > 1 else 0] != a_shape[-1]:
        raise SquareMatrixError(
            f"{_qualified(name)}: the right-hand side b needs {a_shape[-1]} rows (shape (n,) "
            f"or (..., n, k)) for matrices of shape {a_shape}, but got shape {b_shape}.")
    vector = len(b_shape) == 1
    if vector:
        b_shape = b_shape + (1,)
        b = structural.reshape(b, new_sizes=b_shape)
    if a_shape[:-2] == b_shape[:-2]:  # the common case: nothing to broadcast
        return a, b, vector
    lead = broadcast_shapes(_qualified(name), a_shape[:-2], b_shape[:-2])
    return (structural.broadcast_to(a, lead + a_shape[-2:]),
            structural.broadcast_to(b, lead + b_shape[-2:]), vector)


def unvector(x, vector: bool):
    """Drop the column axis that ``solve_operands`` added to a vector right-hand side."""
    return structural.reshape(x, new_sizes=get_aval(x).shape[:-1]) if vector else x


def _eye_like(a):
    aval = get_aval(a)
    return structural.broadcast_to(_eye(aval.shape[-1], aval.dtype), aval.shape)


@functools.lru_cache(maxsize=64)  # bounded: one read-only identity per (size, dtype)
def _eye(n: int, dtype: np.dtype) -> np.ndarray:
    eye = np.eye(n, dtype=dtype)
    eye.flags.writeable = False
    return eye


def static_float(name, what, value):
    if isinstance(value, Tracer) or np.ndim(value) != 0:
        raise UnsupportedNumpyError(
            f"funcdiff.numpy.linalg.{name} needs {what} to be one Python number (a static "
            f"setting), but got {value!r:.60}.")
    return float(value)


# ---------------------------------------------------------------------------
# Inverses, solves and determinants


def inv(a):
    """Inverse of each square matrix in the last two axes (numpy.linalg.inv).

    Computed as ``solve(a, I)``; its derivative is ``-a⁻¹ ȧ a⁻¹``.

    Args:
      a: array ``(..., n, n)``.

    Returns:
      The inverses, same shape (float64 for integer input, float32 stays float32).

    Raises:
      SquareMatrixError: ``a`` is not a stack of square matrices.
      LinAlgError: a matrix is exactly singular.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.inv(np.array([[2., 0.], [0., 4.]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    a = matrix("inv", a)
    return pl.solve(a, _eye_like(a))


def solve(a, b):
    """Solve ``a x = b`` (numpy.linalg.solve), batched with broadcasting leading axes.

    ``b`` is a vector only if it is 1-D (numpy 2's rule); otherwise it is a
    stack of matrices ``(..., n, k)``. ``x`` is linear in ``b`` (its transpose
    solves with ``aᵀ``) and ``ẋ = a⁻¹ (ḃ − ȧ x)``.

    Args:
      a: array ``(..., n, n)``.
      b: array ``(n,)`` or ``(..., n, k)``.

    Returns:
      ``x``, shaped like the broadcast ``b``.

    Raises:
      SquareMatrixError: non-square ``a`` or a ``b`` of the wrong size.
      LinAlgError: a matrix is exactly singular.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.solve(np.array([[3., 1.], [1., 2.]]), np.array([9., 8.]))
    array([2., 3.])
    """
    a, b, vector = solve_operands("solve", a, b)
    return unvector(pl.solve(a, b), vector)


def det(a):
    """Determinant of each square matrix (numpy.linalg.det).

    Its derivative is ``det(a) a⁻ᵀ``; at an exactly singular matrix the
    derivative raises LinAlgError (the value itself is fine).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> round(float(fnp.linalg.det(np.array([[2., 1.], [1., 3.]]))), 12)
    5.0
    """
    return pl.det_p.bind(matrix("det", a))


def slogdet(a):
    """Sign and log of the absolute determinant (numpy.linalg.slogdet).

    Returns:
      ``SlogdetResult(sign, logabsdet)``; ``logabsdet`` has derivative ``a⁻ᵀ``
      (LinAlgError at an exactly singular matrix), ``sign`` has none.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> sign, logabsdet = fnp.linalg.slogdet(np.array([[0., 2.], [1., 0.]]))
    >>> float(sign), round(float(logabsdet), 6)
    (-1.0, 0.693147)
    """
    return SlogdetResult(*pl.slogdet_p.bind(matrix("slogdet", a)))
