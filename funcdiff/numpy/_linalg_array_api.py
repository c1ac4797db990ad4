"""numpy 2's array-API names in funcdiff.numpy.linalg.

``matrix_transpose``, ``diagonal``, ``trace``, ``outer``, ``cross``,
``vecdot``, ``matmul`` and ``tensordot``: the linalg spellings of operations
funcdiff.numpy already has, fixed to the last axes (and ``outer`` to 1-D
vectors) as the array API specifies. ``funcdiff.numpy.linalg`` re-exports them.
"""

from __future__ import annotations


import funcdiff.numpy as fnp
from funcdiff.core import get_aval
from funcdiff.numpy import _util
from funcdiff.numpy._linalg_core import SquareMatrixError
from funcdiff.primitives.linalg_common import mT


# ---------------------------------------------------------------------------
# numpy 2's array-API names


def matrix_transpose(x, /):
    """Transpose of the last two axes (numpy.linalg.matrix_transpose).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.matrix_transpose(np.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = _util.asarray(x, "funcdiff.numpy.linalg.matrix_transpose")
    if len(get_aval(x).shape) < 2:
        raise SquareMatrixError("funcdiff.numpy.linalg.matrix_transpose needs at least 2 "
                                f"dimensions, got shape {get_aval(x).shape}")
    return mT(x)


def diagonal(x, /, *, offset=0):
    """Diagonals of the matrices in the last two axes (numpy.linalg.diagonal).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.diagonal(np.array([[1., 2.], [3., 4.]]))
    array([1., 4.])
    """
    return fnp.diagonal(x, offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """Traces of the matrices in the last two axes (numpy.linalg.trace).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.trace(np.array([[1., 2.], [3., 4.]])))
    5.0
    """
    return fnp.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def outer(x1, x2, /):
    """Outer product of two vectors (numpy.linalg.outer).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.outer(np.array([1., 2.]), np.array([3., 4.]))
    array([[3., 4.],
           [6., 8.]])
    """
    x1 = _util.asarray(x1, "funcdiff.numpy.linalg.outer")
    x2 = _util.asarray(x2, "funcdiff.numpy.linalg.outer")
    for x in (x1, x2):
        if len(get_aval(x).shape) != 1:
            raise SquareMatrixError("funcdiff.numpy.linalg.outer needs 1-D vectors, got "
                                    f"shape {get_aval(x).shape}")
    return fnp.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors (numpy.linalg.cross).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.cross(np.array([1., 0., 0.]), np.array([0., 1., 0.]))
    array([0., 0., 1.])
    """
    return fnp.cross(x1, x2, axis=axis)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of vectors along ``axis``, broadcasting the rest (numpy.linalg.vecdot).

    The same function as ``fnp.vecdot``: ``x1`` is conjugated and the dtype is
    the inputs' (int32 stays int32).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.vecdot(np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    """
    return fnp.vecdot(x1, x2, axis=axis)


def matmul(x1, x2, /):
    """Matrix product with broadcasting (numpy.linalg.matmul; same as ``fnp.matmul``).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.matmul(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    return fnp.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """Tensor contraction (numpy.linalg.tensordot; same as ``fnp.tensordot``).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> float(fnp.linalg.tensordot(np.ones((2, 3)), np.ones((2, 3))))
    6.0
    """
    return fnp.tensordot(x1, x2, axes=axes)
