"""numpy.polynomial's series functions, once for every basis, in funcdiff.numpy operations.

- A series is an array of coefficients, lowest degree first, along axis 0
  (``[1, 2, 3]`` is ``P0 + 2 P1 + 3 P2``), as in numpy.polynomial.
- Evaluation is Horner's rule for the power basis (``funcdiff.numpy.polyval``)
  and Clenshaw's rule for the others; the pseudo-Vandermonde matrix is the
  recurrence run forwards. Derivatives, antiderivatives, ``mulx``, products
  and basis changes apply the static matrices of ``_basis``.
- Shapes never depend on values: numpy trims trailing zero coefficients
  from the results of ``add``, ``sub``, ``mul``, ``line`` and friends, where
  funcdiff keeps them (the same series), so every function traces under jit
  and vmap. Counts (``m``, ``deg``, ``pow``) must be concrete ints.
- ``x`` is an array when it has a shape (a numpy array or a tracer): with
  ``tensor=True`` each coefficient is evaluated at every point, as numpy does
  for an ``ndarray`` ``x``.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

import funcdiff.numpy as fnp
from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.errors import InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy.polynomial import _basis
from funcdiff.numpy.polynomial._basis import POWER, Basis


def as_float(x: Any, name: str) -> Any:
    """``x`` as an array or tracer of a float dtype (integers and booleans become float64)."""
    x = _util.asarray(x, name)
    return x if dtypes.is_float(_util.dtype_of(x)) else _util.cast(x, dtypes.default_float)


def coefficients(c: Any, name: str, *, one_d: bool = False) -> Any:
    """``c`` as a float series of rank >= 1 (a scalar is one coefficient)."""
    c = as_float(c, name)
    shape = _util.shape_of(c)
    if not shape:
        return fnp.reshape(c, (1,))
    if one_d and len(shape) != 1:
        raise ShapeError(f"{name} needs a 1-D array of coefficients (lowest degree first), "
                         f"but got shape {shape}; use vmap for a batch of series.")
    if shape[0] == 0:
        raise ShapeError(f"{name} needs at least one coefficient, but got an empty array; "
                         f"write the zero series as [0.].")
    return c


def points(x: Any, name: str) -> Any:
    """``x`` as numpy.polynomial reads it: lists and tuples become arrays, numbers stay."""
    if isinstance(x, (list, tuple)):
        return _util.asarray(x, name)
    return x


def val(basis: Basis, x: Any, c: Any, tensor: bool = True) -> Any:
    name = basis.public_name("val")
    c, x = coefficients(c, name), points(x, name)
    if tensor and hasattr(x, "shape"):  # an array or a tracer: every coefficient at every x
        c = fnp.reshape(c, _util.shape_of(c) + (1,) * len(_util.shape_of(x)))
    n = _util.shape_of(c)[0]
    if basis is POWER:
        return fnp.polyval(fnp.flip(c, 0), x)
    if n == 1:
        return fnp.add(c[0], fnp.multiply(x, 0.0))
    # Clenshaw: b[k] = c[k] + (a(k) x + b(k)) b[k+1] - g(k+1) b[k+2]
    b1, b2 = c[n - 1], None
    for k in range(n - 2, -1, -1):
        b = fnp.add(c[k], fnp.multiply(_linear(basis, k, x), b1))
        if b2 is not None:
            b = fnp.subtract(b, fnp.multiply(basis.g(k + 1), b2))
        b1, b2 = b, b1
    return b1


def _linear(basis: Basis, k: int, x: Any) -> Any:
    """``a(k) x + b(k)``, leaving out a zero ``b(k)`` and a unit ``a(k)``."""
    a, b = basis.a(k), basis.b(k)
    ax = x if a == 1.0 else fnp.multiply(a, x)
    return ax if b == 0.0 else fnp.add(ax, b)


def same_shape(name: str, *arrays: Any) -> list[Any]:
    arrays = [as_float(a, name) for a in arrays]
    shapes = [_util.shape_of(a) for a in arrays]
    if any(s != shapes[0] for s in shapes[1:]):
        raise ShapeError(f"{name} evaluates at the points (x[i], y[i], ...), so the "
                         f"coordinates need one shape, but got shapes {shapes}; use the grid "
                         f"function for the Cartesian product of the coordinates.")
    return arrays


def valnd(basis: Basis, suffix: str, c: Any, *coordinates: Any) -> Any:
    name = basis.public_name(suffix)
    coordinates = same_shape(name, *coordinates)
    c = coefficients(c, name)
    if len(_util.shape_of(c)) < len(coordinates):
        raise ShapeError(f"{name} needs c with at least {len(coordinates)} axes (one per "
                         f"coordinate), but got shape {_util.shape_of(c)}.")
    c = val(basis, coordinates[0], c)
    for x in coordinates[1:]:
        c = val(basis, x, c, tensor=False)
    return c


def gridnd(basis: Basis, suffix: str, c: Any, *coordinates: Any) -> Any:
    name = basis.public_name(suffix)
    c = coefficients(c, name)
    for x in coordinates:
        c = val(basis, points(x, name), c)
    return c


def vander(basis: Basis, x: Any, deg: Any) -> Any:
    name = basis.public_name("vander")
    count = _util.static_count(deg, name, "deg", "the degree of the matrix") + 1
    x = as_float(x, name)
    if not _util.shape_of(x):
        x = fnp.reshape(x, (1,))
    columns = [fnp.ones_like(x)]
    if count > 1:
        columns.append(_linear(basis, 0, x))
    for k in range(1, count - 1):
        columns.append(fnp.subtract(fnp.multiply(_linear(basis, k, x), columns[k]),
                                    fnp.multiply(basis.g(k), columns[k - 1])))
    return fnp.stack(columns, axis=-1)


def vandernd(basis: Basis, suffix: str, coordinates: Sequence[Any], deg: Any) -> Any:
    name = basis.public_name(suffix)
    degrees = [int(d) for d in _static_sequence(deg, name, "deg")]
    if len(degrees) != len(coordinates):
        raise ShapeError(f"{name} needs one degree per coordinate ({len(coordinates)}), but "
                         f"got deg={list(degrees)}.")
    coordinates = same_shape(name, *coordinates)
    shape = _util.shape_of(coordinates[0]) or (1,)  # numpy makes scalars 1-D
    out = None
    for i, (x, d) in enumerate(zip(coordinates, degrees)):
        v = vander(basis, x, d)
        v = fnp.reshape(v, shape + (1,) * i + (d + 1,) + (1,) * (len(degrees) - i - 1))
        out = v if out is None else fnp.multiply(out, v)
    return fnp.reshape(out, shape + (-1,))


def _static_sequence(value: Any, name: str, arg: str) -> list[int]:
    if isinstance(value, Tracer) or not isinstance(value, (list, tuple, np.ndarray)):
        raise InvalidArgumentError(f"{name} needs {arg}= as a list of concrete ints, one per "
                                   f"coordinate, got {value!r}.")
    return [_util.static_count(v, name, arg, "a degree") for v in value]


def _along_first(c: Any, axis: Any, name: str) -> tuple[Any, int]:
    """``c`` with ``axis`` moved to the front (numpy's series functions act along axis 0)."""
    axis = _util.normalize_axis(_util.static_int(axis, name, "axis"),
                                len(_util.shape_of(c)), name)
    return fnp.moveaxis(c, axis, 0), axis


def apply_matrix(matrix: np.ndarray, c: Any) -> Any:
    """``matrix @ c`` along axis 0 of ``c``, in ``c``'s float dtype."""
    return fnp.tensordot(matrix.astype(_util.dtype_of(c)), c, axes=1)


def der(basis: Basis, c: Any, m: Any = 1, scl: Any = 1, axis: Any = 0) -> Any:
    name = basis.public_name("der")
    m = _util.static_count(m, name, "m", "the order of the derivative")
    c = coefficients(c, name)
    if m == 0:
        return c
    c, axis = _along_first(c, axis, name)
    out = apply_matrix(_basis.derivative_matrix(basis, _util.shape_of(c)[0], m), c)
    if not (type(scl) in (int, float) and scl == 1):
        out = fnp.multiply(fnp.power(scl, m), out)
    return fnp.moveaxis(out, 0, axis)


def integ(basis: Basis, c: Any, m: Any = 1, k: Any = (), lbnd: Any = 0, scl: Any = 1,
          axis: Any = 0) -> Any:
    name = basis.public_name("int")
    m = _util.static_count(m, name, "m", "the order of the antiderivative")
    c = coefficients(c, name)
    if isinstance(k, (list, tuple)):
        constants = list(k)
    elif _util.shape_of(k):
        constants = [k[i] for i in range(_util.shape_of(k)[0])]
    else:
        constants = [k]
    if len(constants) > m:
        raise ShapeError(f"{name} takes at most m={m} integration constants, but k has "
                         f"{len(constants)}.")
    for arg, value in (("lbnd", lbnd), ("scl", scl)):
        if isinstance(value, (list, tuple)) or _util.shape_of(value):
            raise ShapeError(f"{name} needs {arg}= as a scalar, got {value!r}.")
    constants += [0.0] * (m - len(constants))
    if m == 0:
        return c
    c, axis = _along_first(c, axis, name)
    for constant in constants:
        c = apply_matrix(_basis.integral_matrix(basis, _util.shape_of(c)[0]), c)
        if not (type(scl) in (int, float) and scl == 1):
            c = fnp.multiply(scl, c)
        # the constant term makes the antiderivative equal k at lbnd
        shift = fnp.subtract(constant, val(basis, lbnd, c))
        c = fnp.concatenate([fnp.expand_dims(fnp.add(c[0], shift), 0), c[1:]])
    return fnp.moveaxis(c, 0, axis)


def padded_pair(name: str, c1: Any, c2: Any) -> tuple[Any, Any]:
    c1, c2 = coefficients(c1, name, one_d=True), coefficients(c2, name, one_d=True)
    c1, c2 = _util.promote(name, c1, c2)
    n1, n2 = _util.shape_of(c1)[0], _util.shape_of(c2)[0]
    n = max(n1, n2)
    return fnp.pad(c1, (0, n - n1)), fnp.pad(c2, (0, n - n2))


def add(basis: Basis, c1: Any, c2: Any) -> Any:
    return fnp.add(*padded_pair(basis.public_name("add"), c1, c2))


def sub(basis: Basis, c1: Any, c2: Any) -> Any:
    return fnp.subtract(*padded_pair(basis.public_name("sub"), c1, c2))


def mulx(basis: Basis, c: Any) -> Any:
    c = coefficients(c, basis.public_name("mulx"), one_d=True)
    return apply_matrix(_basis.mulx_matrix(basis, _util.shape_of(c)[0]), c)


def mul(basis: Basis, c1: Any, c2: Any) -> Any:
    name = basis.public_name("mul")
    c1, c2 = _util.promote(name, coefficients(c1, name, one_d=True),
                           coefficients(c2, name, one_d=True))
    if basis is POWER:
        return fnp.convolve(c1, c2)
    tensor = _basis.product_tensor(basis, _util.shape_of(c1)[0], _util.shape_of(c2)[0])
    return fnp.einsum("kij,i,j->k", tensor.astype(_util.dtype_of(c1)), c1, c2)


def power(basis: Basis, c: Any, pow: Any, maxpower: Any = 16) -> Any:
    name = basis.public_name("pow")
    exponent = _util.static_count(pow, name, "pow", "the power")
    if maxpower is not None and exponent > maxpower:
        raise InvalidArgumentError(f"{name}: pow={exponent} exceeds maxpower={maxpower}; "
                                   f"raise maxpower= if you mean it.")
    c = coefficients(c, name, one_d=True)
    if exponent == 0:
        return np.ones(1, _util.dtype_of(c))
    out = c
    for _ in range(exponent - 1):
        out = mul(basis, out, c)
    return out


def line(basis: Basis, off: Any, scl: Any) -> Any:
    one, x = _basis.line_vectors(basis)
    return fnp.add(fnp.multiply(off, one), fnp.multiply(scl, x))


def fromroots(basis: Basis, roots: Any) -> Any:
    name = basis.public_name("fromroots")
    r = as_float(roots, name)
    shape = _util.shape_of(r)
    if len(shape) > 1:
        raise ShapeError(f"{name} needs a 1-D array of roots, got shape {shape}.")
    r = fnp.reshape(r, (-1,))
    count = _util.shape_of(r)[0]
    if count == 0:
        return np.ones(1)
    if basis is POWER:
        return fnp.flip(fnp.poly(r), 0)
    factors = [line(basis, fnp.negative(r[i]), 1.0) for i in range(count)]
    while len(factors) > 1:  # pairwise, as numpy multiplies them
        half, odd = divmod(len(factors), 2)
        paired = [mul(basis, factors[i], factors[i + half]) for i in range(half)]
        if odd:
            paired[0] = mul(basis, paired[0], factors[-1])
        factors = paired
    return factors[0]


def div(basis: Basis, c1: Any, c2: Any) -> tuple[Any, Any]:
    name = basis.public_name("div")
    c1, c2 = _util.promote(name, coefficients(c1, name, one_d=True),
                           coefficients(c2, name, one_d=True))
    n1, n2 = _util.shape_of(c1)[0], _util.shape_of(c2)[0]
    if n1 < n2:
        return fnp.multiply(c1[:1], 0.0), c1
    if n2 == 1:
        return fnp.divide(c1, c2[0]), fnp.multiply(c1[:1], 0.0)
    # long division: the top remaining coefficient over the top one of P[i] * c2
    quotient, rem = [None] * (n1 - n2 + 1), c1
    tensor = _basis.product_tensor(basis, n1 - n2 + 1, n2).astype(_util.dtype_of(c1))
    for i in range(n1 - n2, -1, -1):  # rem has i + n2 coefficients here
        p = fnp.tensordot(tensor[:i + n2, i, :], c2, axes=1)  # P[i] * c2
        quotient[i] = fnp.divide(rem[-1], p[-1])
        rem = fnp.subtract(rem[:-1], fnp.multiply(quotient[i], p[:-1]))
    return fnp.stack(quotient), rem


def valfromroots(x: Any, r: Any, tensor: bool = True) -> Any:
    name = "funcdiff.numpy.polynomial.polynomial.polyvalfromroots"
    r, x = coefficients(r, name), points(x, name)
    if hasattr(x, "shape"):
        x_ndim = len(_util.shape_of(x))
        if tensor:
            r = fnp.reshape(r, _util.shape_of(r) + (1,) * x_ndim)
        elif x_ndim >= len(_util.shape_of(r)):
            raise ShapeError(f"{name} with tensor=False needs x with fewer axes than r "
                             f"(x.ndim < r.ndim, as numpy requires), but x has {x_ndim} and r "
                             f"{len(_util.shape_of(r))}.")
    return fnp.prod(fnp.subtract(x, r), axis=0)


def convert(matrix_of: Any, basis: Basis, c: Any, name: str) -> Any:
    c = coefficients(c, name, one_d=True)
    return apply_matrix(matrix_of(basis, _util.shape_of(c)[0]), c)


def fit(basis: Basis, x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False,
        w: Any = None) -> Any:
    name = basis.public_name("fit")
    if isinstance(deg, (list, tuple, np.ndarray)) and np.ndim(deg) == 1:
        terms = sorted(_util.static_count(d, name, "deg", "a degree") for d in deg)
        if not terms:
            raise InvalidArgumentError(f"{name}: deg= lists no degree.")
        top = terms[-1]
    else:
        top = _util.static_count(deg, name, "deg", "the degree of the fit")
        terms = list(range(top + 1))
    x_precision = as_float(x, name)
    x, y = as_float(x, name), as_float(y, name)
    x_shape, y_shape = _util.shape_of(x), _util.shape_of(y)
    if len(x_shape) != 1 or x_shape[0] == 0:
        raise ShapeError(f"{name} needs x as a non-empty 1-D array of sample points, but got "
                         f"shape {x_shape}; use vmap for a batch of fits.")
    if len(y_shape) not in (1, 2) or y_shape[0] != x_shape[0]:
        raise ShapeError(f"{name} needs y of shape ({x_shape[0]},) or ({x_shape[0]}, k) to "
                         f"match x of shape {x_shape}, but got shape {y_shape}.")
    lhs = vander(basis, x, top)
    if terms != list(range(top + 1)):
        lhs = fnp.take(lhs, np.array(terms), axis=1)
    rhs = y
    vector = len(y_shape) == 1
    if w is not None:
        w = as_float(w, name)
        if _util.shape_of(w) != x_shape:
            raise ShapeError(f"{name} needs the weights w shaped like x {x_shape}, but got "
                             f"shape {_util.shape_of(w)}.")
        lhs = fnp.multiply(lhs, fnp.expand_dims(w, 1))
        rhs = fnp.multiply(rhs, w if vector else fnp.expand_dims(w, 1))
    if rcond is None:
        rcond = x_shape[0] * np.finfo(_util.dtype_of(x_precision)).eps
    elif isinstance(rcond, Tracer) or not isinstance(rcond, (int, float, np.number)):
        raise InvalidArgumentError(f"{name}: rcond= must be a static number, got {rcond!r}.")
    # columns scaled to unit norm, as numpy does, keep the singular values comparable
    scale = fnp.sqrt(fnp.sum(fnp.multiply(lhs, lhs), axis=0))
    scale = fnp.where(scale == 0, 1.0, scale)
    coef, residuals, rank, s = fnp.linalg.lstsq(fnp.divide(lhs, scale), rhs, rcond=float(rcond))
    coef = fnp.divide(coef, scale if vector else fnp.expand_dims(scale, 1))
    if len(terms) != top + 1:  # the degrees left out get zero coefficients
        zeros = np.zeros((top + 1,) + y_shape[1:], _util.dtype_of(coef))
        coef = fnp.at(zeros)[np.array(terms)].set(coef)
    known_rank = _util.concrete_or_none(rank, "fit")
    if not full and known_rank is not None and int(known_rank) != len(terms):
        warnings.warn("The fit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=3)
    if full:
        return coef, [residuals, rank, s, rcond]
    return coef


def roots(basis: Basis, c: Any) -> Any:
    name = basis.public_name("roots")
    if isinstance(c, Tracer):
        raise UnsupportedNumpyError(
            f"{name} got the traced {c.aval.str_short()}, but it cannot be traced: the roots "
            "are the eigenvalues of the companion matrix, which is not symmetric, and "
            "funcdiff has eigenvalues of symmetric matrices only (eigh). Call it on concrete "
            "coefficients outside the transform; for the derivative of a simple real root r, "
            "differentiate implicitly: dr/dc = -(dP/dc)(r) / P'(r).")
    return basis.numpy_function("roots")(c)


def trim(basis: Basis, c: Any, tol: float = 0) -> Any:
    name = f"funcdiff.numpy.polynomial.{basis.module}.{basis.prefix}trim"
    if isinstance(c, Tracer):
        raise UnsupportedNumpyError(
            f"{name} got the traced {c.aval.str_short()}, but the length of its result "
            "depends on the values (trailing coefficients below tol are dropped), so it has "
            "no traced form. Trim concrete coefficients outside the transform, or keep the "
            "trailing zeros: they describe the same series.")
    return basis.numpy_function("trim")(c, tol)
