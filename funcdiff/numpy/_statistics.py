"""Statistics of sampled variables: cov and corrcoef (numpy's, unweighted).

Rows (or columns, with ``rowvar=False``) are variables and the other axis
holds their observations. Both are composed of funcdiff.numpy operations
(centring, one matrix product, a scaling), so they are differentiated,
batched and compiled like any other code; only ``ddof``, which changes the
formula, must be concrete. float32 inputs give float32 results, as in JAX
(numpy computes in float64 always); integers give float64.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.errors import DTypeError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._calculus import F64, shape_of, static_int


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """Covariance matrix of variables observed together (numpy.cov).

    Args:
      m: 1-D (one variable) or 2-D observations: each row a variable, each
        column an observation (the other way round with ``rowvar=False``).
      y: more variables, in the same layout as ``m``.
      rowvar: whether rows are variables.
      bias: normalise by N instead of N - 1.
      ddof: normalise by N - ddof (overrides ``bias``); a concrete integer.
      fweights, aweights: not supported (weight the observations yourself).
      dtype: a float dtype for the computation (default: float64, or float32
        for float32 inputs).

    Returns:
      The (variables x variables) matrix, squeezed (0-d for one variable).
      Differentiable in ``m`` and ``y``. With N - ddof <= 0 numpy's
      RuntimeWarning is issued and the entries are inf or nan.

    Raises:
      ShapeError: for inputs of rank above 2 or ``y`` with a different number
        of observations.
      ConcretizationError: for a traced ``ddof``.
      UnsupportedNumpyError: for ``fweights`` or ``aweights``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.cov(np.array([[0., 1., 2.], [2., 1., 0.]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    for key, value in (("fweights", fweights), ("aweights", aweights)):
        if value is not None:
            raise UnsupportedNumpyError(
                f"funcdiff.numpy.cov does not support {key}=. Weight the observations "
                f"yourself, e.g. the weighted mean fnp.average(m, axis=1, weights=w) and "
                f"the centred products ((m - mean) * w) @ (m - mean).T / normaliser.")
    if ddof is None:
        ddof = 0 if bias else 1
    ddof = static_int(ddof, "cov", "ddof", "Pass ddof as a Python int (or mark it static "
                       "with jit's static_argnums).")
    parts = [_variables(m, "m", rowvar)]
    if y is not None:
        parts.append(_variables(y, "y", rowvar))
        if shape_of(parts[1])[1] != shape_of(parts[0])[1]:
            raise ShapeError(f"funcdiff.numpy.cov needs as many observations in y as in m, "
                             f"got {shape_of(parts[1])[1]} and {shape_of(parts[0])[1]}.")
    dtype = _float_dtype("cov", dtype, parts)
    if shape_of(parts[0])[0] == 0:
        return fnp.zeros((0, 0), dtype)
    X = fnp.concatenate([_util.cast(p, dtype) for p in parts], axis=0)
    fact = shape_of(X)[1] - ddof
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    centred = fnp.subtract(X, fnp.mean(X, axis=1, keepdims=True))
    c = fnp.matmul(centred, fnp.transpose(centred))
    return fnp.squeeze(fnp.multiply(c, 1.0 / fact if fact > 0 else float("inf")))


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients of variables observed together (numpy.corrcoef).

    ``cov(x, y, rowvar)`` divided by the outer product of the standard
    deviations, clipped to [-1, 1]. Arguments are those of ``cov``.

    Returns:
      The (variables x variables) matrix, squeezed; a single variable gives
      1.0 (nan if it is constant). Differentiable in ``x`` and ``y``.

    Raises:
      ShapeError: as ``cov``.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.corrcoef(np.array([0., 1., 2.]), np.array([3., 1., -1.]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        return fnp.divide(c, c)
    std = fnp.sqrt(fnp.diagonal(c))
    c = fnp.divide(fnp.divide(c, fnp.expand_dims(std, 1)), fnp.expand_dims(std, 0))
    return fnp.clip(c, -1.0, 1.0)


def _variables(a: Any, what: str, rowvar: bool) -> Any:
    """``a`` as a 2-D (variables, observations) array."""
    a = _util.asarray(a, "cov")
    if len(shape_of(a)) > 2:
        raise ShapeError(f"funcdiff.numpy.cov: {what} holds variables in rows and "
                         f"observations in columns, so it must be 1-D or 2-D, got shape "
                         f"{shape_of(a)}.")
    a = fnp.atleast_2d(a)
    if not rowvar and shape_of(a)[0] != 1:
        a = fnp.transpose(a)
    return a


def _float_dtype(name: str, dtype: Any, arrays: list) -> np.dtype:
    if dtype is None:
        dtype = dtypes.result_type(*arrays)
        return dtype if dtypes.is_float(dtype) else F64
    dtype = np.dtype(dtype)
    if not dtypes.is_float(dtype):
        raise DTypeError(f"funcdiff.numpy.{name}: dtype must be a float dtype (float32 or "
                         f"float64), got {dtype}.")
    return dtype



__all__ = ["cov", "corrcoef"]
