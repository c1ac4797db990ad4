"""Broadcasting in funcdiff.numpy: broadcast_to, broadcast_arrays, broadcast_shapes and
atleast_1d/2d/3d.

``broadcast_to`` is one ``broadcast_in_dim`` (its transpose sums the
cotangent back down), ``broadcast_arrays`` broadcasts each argument to the
common shape of all, ``broadcast_shapes`` works on static shapes only, and the
``atleast_*`` functions add leading (or, for 3-D, trailing) unit axes with a
reshape, as numpy does.
"""

from __future__ import annotations

from typing import Any

from funcdiff.errors import ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._shape import _arr, _int, shape_of
from funcdiff.primitives import structural
from funcdiff.primitives.cards import broadcast_shapes as _broadcast_shapes
from funcdiff.numpy._views import returns_views


@returns_views
def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    """Broadcast an array to a new shape (numpy broadcasting rules).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.broadcast_to(np.array([1, 2]), (2, 2))
    array([[1, 2],
           [1, 2]])
    """
    array = _arr(array, "broadcast_to")
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    shape = tuple(_int(s, "broadcast_to", "shape") for s in shape)
    in_shape = shape_of(array)
    lead = len(shape) - len(in_shape)
    if (lead < 0 or min(shape, default=0) < 0
            or any(s not in (1, t) for s, t in zip(in_shape, shape[lead:]))):
        raise ShapeError(f"funcdiff.numpy.broadcast_to cannot broadcast an array of shape "
                         f"{in_shape} to the requested shape {shape}")
    return structural.broadcast_to(array, shape)


@returns_views
def broadcast_arrays(*args: Any, subok: bool = False) -> tuple:
    """Broadcast arrays against each other; returns a tuple (numpy 2).

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> [y.shape for y in fnp.broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    [(2, 3), (2, 3)]
    """
    arrays = [_arr(a, "broadcast_arrays") for a in args]
    return tuple(_util.broadcast_arrays_of("funcdiff.numpy.broadcast_arrays", *arrays))


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that arrays of the given shapes broadcast to (like ``numpy.broadcast_shapes``).

    Shapes are static: tuples of ints, or one int for a 1-d shape. No shape
    at all gives ``()``.

    Raises:
      ShapeError: the shapes do not broadcast, or a dimension is negative.
      InvalidArgumentError: a dimension is not an integer.

    >>> import funcdiff.numpy as fnp
    >>> fnp.broadcast_shapes((2, 1), 3, (1, 1, 3))
    (1, 2, 3)
    """
    dims = []
    for shape in shapes:
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        shape = tuple(_int(d, "broadcast_shapes", "each dimension") for d in shape)
        if min(shape, default=0) < 0:
            raise ShapeError(f"funcdiff.numpy.broadcast_shapes: dimensions must be "
                             f"non-negative, got the shape {shape}")
        dims.append(shape)
    return _broadcast_shapes("funcdiff.numpy.broadcast_shapes", *dims) if dims else ()


def _atleast(name: str, nd: int, arys: tuple) -> Any:
    out = []
    for a in arys:
        a = _arr(a, name)
        shape = shape_of(a)
        if len(shape) < nd:
            if nd == 3 and len(shape) == 1:
                new = (1, shape[0], 1)
            elif nd == 3 and len(shape) == 2:
                new = shape + (1,)
            else:
                new = (1,) * (nd - len(shape)) + shape
            a = structural.reshape(a, new_sizes=new)
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


@returns_views
def atleast_1d(*arys: Any) -> Any:
    """View inputs as arrays with at least one dimension (a tuple for several inputs).

    >>> import funcdiff.numpy as fnp
    >>> fnp.atleast_1d(3.0)
    array([3.])
    """
    return _atleast("atleast_1d", 1, arys)


@returns_views
def atleast_2d(*arys: Any) -> Any:
    """View inputs as arrays with at least two dimensions ((N,) becomes (1, N))."""
    return _atleast("atleast_2d", 2, arys)


@returns_views
def atleast_3d(*arys: Any) -> Any:
    """View inputs as arrays of at least 3 dimensions: (N,) is (1, N, 1), (M, N) is (M, N, 1)."""
    return _atleast("atleast_3d", 3, arys)


__all__ = ["broadcast_to", "broadcast_arrays", "broadcast_shapes", "atleast_1d", "atleast_2d",
           "atleast_3d"]
