"""vmap's call arguments: which leaves are batched along which axis, and the batch size.

``in_axes`` (an int, None, or a tuple with one pytree prefix per positional
argument) is broadcast over the arguments' leaves; keyword arguments are
always batched along their axis 0, as in JAX. The batched leaves must agree
on one size (or ``axis_size`` gives it when none is batched). Errors name the
offending leaves by argument and path (``argument 1['w']``, ``keyword
argument 'scale'``) and say how to fix the call.
"""

from __future__ import annotations

from typing import Any, Callable

from funcdiff.arguments.flattening import flatten_args
from funcdiff.core import get_aval
from funcdiff.errors import BatchingError, TreeStructureError
from funcdiff.tree_util import PyTreeDef, broadcast_prefix


def batched_call(f: Callable, args: tuple, kwargs: dict, in_axes: Any,
                 axis_size: int | None) -> tuple[Callable, list, PyTreeDef, list, int]:
    """``(function of the arguments as one tuple, leaves, their tree, batch axis of
    each leaf or None, batch size)`` for the call ``f(*args, **kwargs)``."""
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise BatchingError(
            f"vmap got in_axes with {len(in_axes)} entries but the function was called "
            f"with {len(args)} positional arguments; give one entry per argument.")
    fk, arg_axes, call_args = f, in_axes, args
    if kwargs:  # one more argument, the dict of keyword arguments, batched along axis 0
        fk = lambda *a: f(*a[:-1], **a[-1])  # noqa: E731
        arg_axes = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)) + (0,)
        call_args = args + (kwargs,)
    leaves, in_tree = flatten_args(call_args, "vmap")
    try:
        axes = broadcast_prefix(arg_axes, call_args)
    except TreeStructureError as e:
        raise BatchingError(f"vmap in_axes do not match the arguments: {e}") from None
    sizes: dict[int, list[int]] = {}
    dims = []
    for i, (x, ax) in enumerate(zip(leaves, axes)):
        if ax is None:
            dims.append(None)
            continue
        if not isinstance(ax, int):
            raise BatchingError(f"vmap in_axes entries must be int or None, got {ax!r}")
        shape = get_aval(x).shape
        if not -len(shape) <= ax < len(shape):
            name = _leaf_names(in_tree, len(args))[i]
            if name.startswith("keyword"):
                raise BatchingError(
                    f"vmap batches keyword arguments along their axis 0, but {name} has shape "
                    f"{shape}. Pass a value shared by the whole batch positionally, with an "
                    "in_axes entry of None, or close over it.")
            raise BatchingError(f"vmap in_axes={ax} is out of range for {name} of shape "
                                f"{shape}.")
        ax %= len(shape)
        dims.append(ax)
        sizes.setdefault(shape[ax], []).append(i)
    if len(sizes) > 1:
        names = _leaf_names(in_tree, len(args))
        detail = "; ".join(f"size {s} for {', '.join(names[i] for i in ls)}"
                           for s, ls in sizes.items())
        raise BatchingError(f"vmap got inconsistent batch sizes: {detail}. All batched "
                            "inputs must have the same size along their in_axes.")
    if not sizes:
        if axis_size is None:
            raise BatchingError("vmap needs at least one batched input (an in_axes entry "
                                "that is not None) or an explicit axis_size.")
        return fk, leaves, in_tree, dims, axis_size
    size = next(iter(sizes))
    if axis_size is not None and axis_size != size:
        raise BatchingError(f"vmap got axis_size={axis_size} but the inputs have "
                            f"batch size {size}.")
    return fk, leaves, in_tree, dims, size


def _leaf_names(in_tree: PyTreeDef, n_positional: int) -> list[str]:
    """Each leaf of the call's arguments as an error names it: ``argument 0``,
    ``argument 1['w']``, ``keyword argument 'scale'`` (keywords come last)."""
    names = []
    for path in in_tree.leaf_paths():
        index, rest = path[1:].split("]", 1)
        if int(index) < n_positional:
            names.append(f"argument {index}{rest}")
        else:  # rest starts with the keyword's own ['name']
            key, rest = rest[2:].split("']", 1)
            names.append(f"keyword argument {key!r}{rest}")
    return names


__all__ = ["batched_call"]
