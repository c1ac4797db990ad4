"""Shapes without values, and JAX's names for the host-synchronous parts of its API.

- ``eval_shape(f, *args)`` traces ``f`` at abstract values and returns the
  shapes and dtypes of its outputs, computing nothing; arguments may be arrays
  or ``ShapeDtypeStruct`` descriptions of them.
- ``Array`` is the type that both numpy arrays and funcdiff's traced values
  satisfy, for ``isinstance`` checks in code that must accept either (as
  ``jax.Array`` does for JAX's arrays and tracers).
- ``block_until_ready(x)`` waits for a pytree of results: numpy computes
  eagerly, so there is nothing to wait for unless a leaf's own array library
  (a GPU array, say) has a ``block_until_ready`` method, which it calls.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.arguments.flattening import OutInfo, flat_fun
from funcdiff.core import ShapedArray, Tracer, get_aval
from funcdiff.errors import InvalidArgumentError
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.tree_util import tree_flatten, tree_map, tree_unflatten


class ShapeDtypeStruct:
    """A shape and a dtype: an array's description, without its values.

    >>> ShapeDtypeStruct((2, 3), np.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Any, dtype: Any):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = dtypes.check_dtype(dtype, "ShapeDtypeStruct's dtype", allow_complex=True)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and other.shape == self.shape
                and other.dtype == self.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


def _aval(x: Any, where: str) -> ShapedArray:
    if isinstance(x, (ShapeDtypeStruct, ShapedArray)):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))
    if isinstance(x, (np.ndarray, np.generic, Tracer)) or type(x) in (bool, int, float, complex):
        return get_aval(x)
    raise InvalidArgumentError(
        f"eval_shape: {where} is {type(x).__name__}; pass arrays, Python scalars or "
        "ShapeDtypeStruct(shape, dtype) descriptions (close over other values).")


def eval_shape(f: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``f(*args, **kwargs)``, found without computing it.

    Args:
      f: a function of pytrees of arrays.
      *args, **kwargs: arrays, Python scalars or ``ShapeDtypeStruct``s (pytrees of them).

    Returns:
      ``f``'s output pytree with a ``ShapeDtypeStruct`` per array.

    Raises:
      ConcretizationError: if ``f`` needs a value (Python control flow on it).

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> fd.eval_shape(lambda x, w: fnp.tanh(x @ w), fd.ShapeDtypeStruct((8, 3), np.float32),
    ...               np.ones((3, 5), np.float32))
    ShapeDtypeStruct(shape=(8, 5), dtype=float32)
    """
    leaves, tree = tree_flatten((args, kwargs))
    avals = [_aval(x, f"argument leaf {i}") for i, x in enumerate(leaves)]
    out_info = OutInfo()

    def call(a, kw):  # flat_fun rebuilds the (args, kwargs) pair from the leaves
        return f(*a, **kw)
    closed = trace_to_jaxpr(flat_fun(call, tree, out_info, transform="eval_shape"), avals)
    structs = [ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
    return tree_unflatten(out_info.tree, structs)


class _ArrayType(type):
    def __instancecheck__(cls, x: Any) -> bool:
        return isinstance(x, (np.ndarray, Tracer))


class Array(metaclass=_ArrayType):
    """The type of funcdiff's arrays: numpy arrays and traced values alike.

    >>> import funcdiff as fd
    >>> seen = []
    >>> _ = fd.grad(lambda x: seen.append(isinstance(x, fd.Array)) or x.sum())(np.ones(2))
    >>> seen, isinstance(np.ones(2), fd.Array), isinstance(2.0, fd.Array)
    ([True], True, False)
    """

    def __init__(self, *args: Any, **kwargs: Any):
        raise InvalidArgumentError(
            "fd.Array is a type for isinstance checks; make arrays with funcdiff.numpy "
            "(fnp.asarray, fnp.zeros, ...).")


def block_until_ready(x: Any) -> Any:
    """``x`` once its arrays are computed (numpy's always are), for JAX ports.

    >>> block_until_ready({"w": np.ones(2)})["w"].tolist()
    [1.0, 1.0]
    """
    def ready(leaf: Any) -> Any:
        wait = getattr(leaf, "block_until_ready", None)
        return wait() if callable(wait) and not isinstance(leaf, np.ndarray) else leaf
    return tree_map(ready, x)


__all__ = ["eval_shape", "ShapeDtypeStruct", "Array", "block_until_ready"]
