"""funcdiff.numpy.linalg's products and powers: matrix_power, multi_dot, tensorsolve, tensorinv.

``matrix_power`` squares repeatedly (inverting first for a negative power),
``multi_dot`` multiplies a chain in the cheapest order (numpy's dynamic
programme), and the tensor functions reshape to one matrix solve or inverse.
``funcdiff.numpy.linalg`` re-exports them.
"""

from __future__ import annotations

import math
import operator

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import get_aval
from funcdiff.errors import InvalidArgumentError
from funcdiff.numpy import _util
from funcdiff.numpy._linalg_core import (LinAlgArgumentError, SquareMatrixError, _float, inv,
                                         solve)
from funcdiff.primitives import structural


# ---------------------------------------------------------------------------
# Products and powers


def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring (numpy.linalg.matrix_power).

    ``n = 0`` gives identities of a's dtype; negative ``n`` inverts first.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.matrix_power(np.array([[1., 1.], [0., 1.]]), 3)
    array([[1., 3.],
           [0., 1.]])
    """
    a = _util.asarray(a, "funcdiff.numpy.linalg.matrix_power")
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise SquareMatrixError(f"funcdiff.numpy.linalg.matrix_power needs square matrices in "
                                f"the last two axes, but got shape {shape}")
    try:
        n = operator.index(n)
    except TypeError:
        raise InvalidArgumentError(f"funcdiff.numpy.linalg.matrix_power: the exponent must be "
                                   f"an integer, got {n!r}") from None
    if n == 0:
        return structural.broadcast_to(np.eye(shape[-1], dtype=_util.dtype_of(a)), shape)
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while True:
        if n & 1:
            result = square if result is None else fnp.matmul(result, square)
        n >>= 1
        if not n:
            return result
        square = fnp.matmul(square, square)


def _chain_order(shapes):
    """Optimal parenthesisation of a matrix chain (dynamic programming, as numpy)."""
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """Product of a chain of matrices in the cheapest order (numpy.linalg.multi_dot).

    The first and last arrays may be 1-D (a row and a column vector).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.multi_dot([np.ones(2), np.eye(2), np.array([[1., 2.], [3., 4.]])])
    array([4., 6.])
    """
    _util.reject("linalg.multi_dot", out=out)
    arrays = [_util.asarray(a, "funcdiff.numpy.linalg.multi_dot") for a in arrays]
    if len(arrays) < 2:
        raise LinAlgArgumentError("funcdiff.numpy.linalg.multi_dot needs at least two arrays")
    arrays = _util.promote("multi_dot", *arrays)
    first_1d = len(get_aval(arrays[0]).shape) == 1
    last_1d = len(get_aval(arrays[-1]).shape) == 1
    if first_1d:
        arrays[0] = fnp.reshape(arrays[0], (1, -1))
    if last_1d:
        arrays[-1] = fnp.reshape(arrays[-1], (-1, 1))
    shapes = [get_aval(a).shape for a in arrays]
    for i, s in enumerate(shapes):
        if len(s) != 2:
            raise SquareMatrixError(f"funcdiff.numpy.linalg.multi_dot: array {i} has shape "
                                    f"{s}; only the first and last may be 1-D, the others "
                                    "must be 2-D")
    split = _chain_order(shapes)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return fnp.dot(product(i, k), product(k + 1, j))

    result = product(0, len(arrays) - 1)
    if first_1d and last_1d:
        return fnp.reshape(result, ())
    if first_1d or last_1d:
        return fnp.reshape(result, (-1,))
    return result


def tensorsolve(a, b, axes=None):
    """Solve the tensor equation ``tensordot(a, x, x.ndim) = b`` (numpy.linalg.tensorsolve).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.tensorsolve(np.eye(4).reshape(2, 2, 2, 2), np.ones((2, 2))).shape
    (2, 2)
    """
    a = _float("tensorsolve", a)
    b = _float("tensorsolve", b)
    a_shape, b_nd = get_aval(a).shape, len(get_aval(b).shape)
    if axes is not None:
        order = [i for i in range(len(a_shape)) if i not in
                 [_util.normalize_axis(k, len(a_shape), "tensorsolve") for k in axes]]
        order += [_util.normalize_axis(k, len(a_shape), "tensorsolve") for k in axes]
        a = fnp.transpose(a, order)
        a_shape = get_aval(a).shape
    x_shape = a_shape[b_nd:]
    size = math.prod(x_shape)
    if math.prod(a_shape) != size * size:
        raise SquareMatrixError(
            f"funcdiff.numpy.linalg.tensorsolve needs prod(a.shape[b.ndim:]) == "
            f"prod(a.shape[:b.ndim]), but a has shape {a_shape} and b {b_nd} dimensions")
    x = solve(fnp.reshape(a, (size, size)), fnp.reshape(b, (size,)))
    return fnp.reshape(x, x_shape)


def tensorinv(a, ind=2):
    """Inverse of a tensor with respect to ``tensordot`` (numpy.linalg.tensorinv).

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.linalg.tensorinv(np.eye(6).reshape(6, 2, 3), ind=1).shape
    (2, 3, 6)
    """
    a = _float("tensorinv", a)
    shape = get_aval(a).shape
    if ind <= 0:
        raise LinAlgArgumentError(f"funcdiff.numpy.linalg.tensorinv: ind must be positive, "
                                  f"got {ind}")
    size = math.prod(shape[ind:])
    return fnp.reshape(inv(fnp.reshape(a, (size, -1))), shape[ind:] + shape[:ind])
