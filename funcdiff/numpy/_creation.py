"""Array creation and conversion of funcdiff.numpy: array, asarray, zeros, full, arange, ...

Creation functions whose result depends only on shapes and Python values
(``zeros``, ``eye``, ``arange``) return numpy arrays directly: constants need
no primitive. Where a value may be traced (``array`` and ``asarray`` of lists
holding tracers, ``full`` with a traced fill value, ``meshgrid`` of traced
vectors) the result is built from primitives and stays differentiable. Shapes
and counts must be concrete. ``copy`` of a tracer is the tracer itself (values
are immutable inside transforms). Evenly spaced values (linspace, logspace,
geomspace) are in ``_spacing``.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from funcdiff import bridge, dtypes
from funcdiff.backends import backend_of
from funcdiff.core import Tracer, concrete_value, get_aval
from funcdiff.errors import InvalidArgumentError, ShapeError, UnsupportedNumpyError
from funcdiff.numpy import _util
from funcdiff.numpy._ufunc_support import (F64, arg, _array, cast, dtype_arg,
                                           fname, shape_of)
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes
from funcdiff.numpy._views import distinct, note_views, returns_copies, returns_tracers_like



# ---------------------------------------------------------------------------
# Array creation


def has_tracer(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return builtins.any(has_tracer(e) for e in x)
    return False


def _checked_numpy(name: str, arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        dtypes.check_dtype(arr.dtype, f"the input of {fname(name)}")
    return arr


def _creation_dtype(name: str, dtype: Any, default: np.dtype = F64) -> np.dtype:
    return default if dtype is None else dtype_arg(name, dtype, allow_complex=True)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """Create an array (like ``numpy.array``); nested lists may hold tracers.

    Outside transforms this is ``numpy.array`` (string and object data are
    rejected). Tracers, and lists containing them, are stacked with
    primitives, so the result stays differentiable.

    Args:
      object: array_like, a tracer, or nested lists of them.
      dtype: optional dtype of the result. copy, order, subok: as numpy.
      ndmin: minimum number of dimensions (leading axes are added).

    Returns:
      A numpy array, or a tracer inside a transform.

    Raises:
      DTypeError: for string or object data, or complex data with a real dtype=. ShapeError: for ragged lists.

    >>> import funcdiff.numpy as fnp
    >>> fnp.array([[1, 2], [3, 4]], dtype=float)
    array([[1., 2.],
           [3., 4.]])
    """
    if like is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.array does not support like=")
    if isinstance(object, Tracer) or has_tracer(object):
        dtype = None if dtype is None else dtype_arg("array", dtype, allow_complex=True)
        out = _util.asarray(object, fname("array"), dtype)
        if copy and out is object:
            out = distinct(out)  # numpy's copy: a write to it leaves the argument alone
    else:
        dtype = None if dtype is None else dtype_arg("array", dtype, allow_complex=True)
        _util.refuse_dropping_imaginary(fname("array"), object, dtype)
        try:
            out = np.array(object, dtype=dtype, copy=copy, order=order, subok=subok)
        except ValueError as e:
            raise ShapeError(f"{fname('array')} cannot make an array of {object!r:.60}: "
                             f"{e}") from None
        out = _checked_numpy("array", out)
    ndim = shape_of(out).__len__()
    if ndmin > ndim:
        out = structural.reshape(out, new_sizes=(1,) * (ndmin - ndim) + shape_of(out)) \
            if isinstance(out, Tracer) else out.reshape((1,) * (ndmin - ndim) + out.shape)
    return out


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """Convert ``a`` to an array without copying when possible (like ``numpy.asarray``).

    Tracers are returned as they are (cast if ``dtype`` differs); nested lists
    holding tracers are stacked with primitives. Inside a transform, an array of
    another library (array_api_strict, torch, dask) stays in its library, so a
    closed-over one meets traced values as the arguments do.

    >>> import funcdiff.numpy as fnp
    >>> fnp.asarray([1., 2.]).dtype
    dtype('float64')
    """
    if like is not None:
        raise UnsupportedNumpyError("funcdiff.numpy.asarray does not support like=")
    dtype = None if dtype is None else dtype_arg("asarray", dtype, allow_complex=True)
    _util.refuse_dropping_imaginary(fname("asarray"), a, dtype)
    if isinstance(a, Tracer) or has_tracer(a) or (
            bridge.calls.depth and type(a) is not np.ndarray and backend_of(a) is not None):
        return _util.asarray(a, fname("asarray"), dtype)
    try:
        out = np.asarray(a, dtype=dtype, order=order, copy=copy)
    except ValueError as e:
        raise ShapeError(f"{fname('asarray')} cannot make an array of {a!r:.60}: {e}") from None
    return _checked_numpy("asarray", out)


asanyarray = asarray  # funcdiff has no ndarray subclasses, so numpy's distinction is moot


def ascontiguousarray(a, dtype=None, *, like=None):
    """``a`` as an array of at least one dimension (numpy.ascontiguousarray).

    funcdiff values are immutable and have no memory layout of their own, so
    this is ``asarray`` except that, as in numpy, a 0-d input becomes shape (1,).

    >>> import funcdiff.numpy as fnp
    >>> fnp.ascontiguousarray(3.0)
    array([3.])
    """
    return _at_least_1d("ascontiguousarray", a, dtype, like)


def asfortranarray(a, dtype=None, *, like=None):
    """``a`` as an array of at least one dimension (numpy.asfortranarray).

    As ``ascontiguousarray``: the layout flag has no meaning for funcdiff
    values; a 0-d input becomes shape (1,) as in numpy.

    >>> import funcdiff.numpy as fnp
    >>> fnp.asfortranarray([[1., 2.]]).shape
    (1, 2)
    """
    return _at_least_1d("asfortranarray", a, dtype, like)


def _at_least_1d(name: str, a: Any, dtype: Any, like: Any) -> Any:
    if like is not None:
        raise UnsupportedNumpyError(f"funcdiff.numpy.{name} does not support like=")
    x = asarray(a, dtype)
    shape = shape_of(x)
    if shape == ():
        out = structural.reshape(x, new_sizes=(1,))
        if isinstance(x, Tracer):
            note_views(x, out, f"{name}()")  # numpy's (1,) result is a view
        return out
    if name == "asfortranarray" and sum(n > 1 for n in shape) > 1:
        return distinct(x)  # numpy copies a C-ordered array with two long axes
    return x


@returns_copies
def copy(a, order="K", subok=False):
    """A new array with the values of ``a`` (like ``numpy.copy``).

    Writing into the result leaves ``a`` unchanged, outside transforms and
    inside (where the copy is a new tracer whose derivative is the identity).

    Args:
      a: array_like, a tracer, or nested lists holding tracers.
      order, subok: as numpy (only numpy arrays keep a memory layout).

    Returns:
      A numpy array, or a tracer inside a transform.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> x = np.array([1., 2.])
    >>> y = fnp.copy(x)
    >>> y[0] = 5.
    >>> x
    array([1., 2.])
    """
    if isinstance(a, Tracer) or has_tracer(a):
        return _util.asarray(a, fname("copy"))
    return array(a, copy=True, order=order, subok=subok)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (like ``numpy.astype``). Float to float and
    float to complex casts keep derivatives; complex to real is an error (take
    ``real`` explicitly)."""
    out = cast(_array("astype", x), dtype_arg("astype", dtype, allow_complex=True))
    return distinct(out) if copy and out is x else out


def _shape_arg(name: str, shape: Any) -> tuple[int, ...]:
    shape = concrete_value(shape, fname(name))
    try:
        if isinstance(shape, (list, tuple, np.ndarray)):
            return tuple(operator.index(concrete_value(s, fname(name))) for s in shape)
        return (operator.index(shape),)
    except TypeError:
        raise InvalidArgumentError(
            f"{fname(name)} needs a shape of Python ints, got {shape!r}") from None


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    """An array of zeros (like ``numpy.zeros``; float64 by default).

    >>> import funcdiff.numpy as fnp
    >>> fnp.zeros((2,), dtype=int)
    array([0, 0])
    """
    return np.zeros(_shape_arg("zeros", shape), _creation_dtype("zeros", dtype), order)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    """An array of ones (like ``numpy.ones``; float64 by default)."""
    return np.ones(_shape_arg("ones", shape), _creation_dtype("ones", dtype), order)


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    """A new array; funcdiff fills it with zeros so results are reproducible."""
    return np.zeros(_shape_arg("empty", shape), _creation_dtype("empty", dtype), order)


def _fill_dtype(name: str, fill_value: Any, dtype: Any) -> np.dtype:
    if dtype is not None:
        return dtype_arg(name, dtype, allow_complex=True)
    fill_value = arg(name, fill_value)
    # a complex Python scalar too: its dtype then meets the dtype checks of the result
    return fill_value.dtype if hasattr(fill_value, "dtype") else np.asarray(fill_value).dtype


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """An array of ``shape`` filled with ``fill_value`` (like ``numpy.full``).

    ``fill_value`` may be a tracer (or an array that broadcasts to ``shape``);
    the result is then differentiable in it.

    >>> import funcdiff.numpy as fnp
    >>> fnp.full((2,), 7.)
    array([7., 7.])
    """
    shape = _shape_arg("full", shape)
    dtype = _fill_dtype("full", fill_value, dtype)
    if isinstance(fill_value, Tracer) or has_tracer(fill_value):
        fill = cast(arg("full", fill_value), dtype)
        if broadcast_shapes(fname("full"), shape_of(fill), shape) != shape:
            raise ShapeError(f"{fname('full')}: fill_value of shape {shape_of(fill)} does not "
                             f"broadcast to the shape {shape}")
        return structural.broadcast_to(fill, shape)
    return _checked_numpy("full", np.full(shape, fill_value, dtype, order))


def _like(name: str, a: Any, dtype: Any, shape: Any) -> tuple[tuple[int, ...], np.dtype]:
    a = _array(name, a)
    dtype = a.dtype if dtype is None else dtype_arg(name, dtype, allow_complex=True)
    shape = shape_of(a) if shape is None else _shape_arg(name, shape)
    return shape, dtype


@returns_tracers_like
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros with the shape and dtype of ``a`` (like ``numpy.zeros_like``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.zeros_like(np.ones(2, np.float32))
    array([0., 0.], dtype=float32)
    """
    shape, dtype = _like("zeros_like", a, dtype, shape)
    return np.zeros(shape, dtype)


@returns_tracers_like
def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones with the shape and dtype of ``a`` (like ``numpy.ones_like``)."""
    shape, dtype = _like("ones_like", a, dtype, shape)
    return np.ones(shape, dtype)


@returns_tracers_like
def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """A new array like ``prototype``; funcdiff fills it with zeros."""
    shape, dtype = _like("empty_like", prototype, dtype, shape)
    return np.zeros(shape, dtype)


@returns_tracers_like
@returns_copies
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``fill_value`` in the shape and dtype of ``a`` (like ``numpy.full_like``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.full_like(np.arange(3), 2.7)
    array([2, 2, 2])
    """
    shape, dtype = _like("full_like", a, dtype, shape)
    if isinstance(fill_value, Tracer) or has_tracer(fill_value):
        return full(shape, fill_value, dtype)
    return _checked_numpy("full_like", np.full(shape, fill_value, dtype))


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    """A 2-d array with ones on the ``k``-th diagonal (like ``numpy.eye``).

    >>> import funcdiff.numpy as fnp
    >>> fnp.eye(2, dtype=int)
    array([[1, 0],
           [0, 1]])
    """
    name = fname("eye")
    N, k = operator.index(concrete_value(N, name)), operator.index(concrete_value(k, name))
    M = None if M is None else operator.index(concrete_value(M, name))
    return np.eye(N, M, k, _creation_dtype("eye", dtype), order)


def identity(n, dtype=None, *, like=None):
    """The ``n x n`` identity matrix (like ``numpy.identity``)."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """Ones at and below the ``k``-th diagonal (like ``numpy.tri``)."""
    name = fname("tri")
    N, k = _util.static_int(N, name, "N"), _util.static_int(k, name, "k")
    M = None if M is None else _util.static_int(M, name, "M")
    return np.tri(N, M, k, _creation_dtype("tri", dtype))


def arange(start, stop=None, step=None, dtype=None, *, device=None, like=None):
    """Evenly spaced values in ``[start, stop)`` (like ``numpy.arange``).

    The length of the result depends on the values of the arguments, so they
    must be concrete (tracers with known values are accepted).

    Raises:
      ConcretizationError: an argument is traced by jit or make_jaxpr.

    >>> import funcdiff.numpy as fnp
    >>> fnp.arange(1, 7, 2)
    array([1, 3, 5])
    """
    name = fname("arange")
    args = [concrete_value(v, name) for v in (start, stop, step)]
    for v in args:
        if v is not None:
            arg("arange", v)
    dtype = None if dtype is None else dtype_arg("arange", dtype, allow_complex=True)
    if args[1] is None:
        return _checked_numpy("arange", np.arange(args[0], step=args[2], dtype=dtype))
    return _checked_numpy("arange", np.arange(args[0], args[1], args[2], dtype=dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors (like ``numpy.meshgrid``).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> X, Y = fnp.meshgrid(np.array([1, 2, 3]), np.array([4, 5]))
    >>> X
    array([[1, 2, 3],
           [1, 2, 3]])
    """
    if indexing not in ("xy", "ij"):
        raise InvalidArgumentError(
            f"funcdiff.numpy.meshgrid needs indexing='xy' or 'ij', got {indexing!r}")
    xi = [_array("meshgrid", x) for x in xi]
    if not builtins.any(isinstance(x, Tracer) for x in xi):
        return tuple(np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing))
    ndim = len(xi)
    shapes = [[1] * ndim for _ in xi]
    for i, x in enumerate(xi):
        shapes[i][i] = get_aval(x).size
    if indexing == "xy" and ndim > 1:
        shapes[0][0], shapes[0][1] = 1, shapes[0][0]
        shapes[1][0], shapes[1][1] = shapes[1][1], 1
    outs = [structural.reshape(x, new_sizes=tuple(s)) for x, s in zip(xi, shapes)]
    if not sparse:
        full_shape = tuple(builtins.max(s[d] for s in shapes) for d in range(ndim))
        outs = [structural.broadcast_to(o, full_shape) for o in outs]
    return tuple(outs)


__all__ = ["array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "zeros",
           "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye",
           "identity", "tri", "arange", "meshgrid", "astype", "copy"]
