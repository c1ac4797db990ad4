"""autograd's ``flatten``: a pytree of arrays as one vector, and the way back."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcdiff import numpy as fnp
from funcdiff.tree_util import tree_flatten, tree_unflatten


def flatten(value: Any) -> tuple[Any, Callable]:
    """``(vector, unflatten)``: the leaves raveled and joined, and the inverse.

    >>> vector, unflatten = flatten({"w": np.ones((2, 2)), "b": np.zeros(1)})
    >>> vector.shape, unflatten(vector)["w"].shape
    ((5,), (2, 2))
    """
    leaves, tree = tree_flatten(value)
    shapes = [np.shape(x) for x in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    vector = (fnp.concatenate([fnp.ravel(x) for x in leaves]) if leaves
              else np.zeros(0))

    def unflatten(flat: Any) -> Any:
        out, start = [], 0
        for shape, size in zip(shapes, sizes):
            out.append(fnp.reshape(flat[start:start + size], shape))
            start += size
        return tree_unflatten(tree, out)
    return vector, unflatten


def flatten_func(func: Callable, example: Any) -> tuple[Callable, Callable, Any]:
    """``func`` as a function of a flat vector, with ``unflatten`` and the flat ``example``."""
    flat, unflatten = flatten(example)
    return (lambda v, *args, **kwargs: func(unflatten(v), *args, **kwargs)), unflatten, flat


__all__ = ["flatten", "flatten_func"]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
