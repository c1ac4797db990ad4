"""Sorting: one multi-operand, stable sort primitive and the operations built on it.

``sort_p`` sorts several arrays of one shape along ``dimension``, ordering
them by the first ``num_keys`` operands (lexicographically, the first key most
significant) and carrying the rest along. The order is numpy's: ascending,
stable (equal keys keep their input order), NaN last, ``-0.0`` equal to
``0.0``. ``argsort`` is a sort of ``(x, iota)`` that returns the permuted iota.

The derivative of a sort is the same permutation applied to the tangents: the
jvp sorts an extra iota alongside the operands to learn the permutation and
gathers each tangent with it (``take_along_axis``, whose transpose is a
scatter-add, so reverse mode needs no rule of its own).
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff.bridge import NamespaceArray
from funcdiff.core import Primitive, Zero, get_aval, tangent_aval
from funcdiff.errors import AxisError, InvalidArgumentError, ShapeError
from funcdiff.primitives import elementwise, gradient_control, indexing, structural
from funcdiff.primitives.cards import checked_impl, nbytes


# --- sort ---------------------------------------------------------------------------

sort_p = Primitive("sort", multiple_results=True)


def _sort_impl(*operands, dimension, num_keys):
    operands = [o if type(o) is NamespaceArray else np.asarray(o) for o in operands]
    if not 1 <= num_keys <= len(operands) or any(o.shape != operands[0].shape for o in operands):
        raise ValueError(num_keys)  # checked_impl reports abstract_eval's error
    if len(operands) == 1:  # the stable sort's values, without the permutation
        return [np.sort(operands[0], axis=dimension, kind="stable")]
    if num_keys == 1:
        perm = np.argsort(operands[0], axis=dimension, kind="stable")
    else:  # lexsort's *last* key is the most significant one
        perm = np.lexsort(operands[num_keys - 1::-1], axis=dimension)
    if perm.ndim == 1:  # (another library's permutation takes from arrays of its library)
        return [o[perm] if type(perm) is np.ndarray else np.take(perm.like(o), perm, axis=0)
                for o in operands]
    return [np.take_along_axis(o, perm, axis=dimension) for o in operands]


def _sort_abstract_eval(*operands, dimension, num_keys):
    if not operands:
        raise InvalidArgumentError("the primitive sort needs at least one operand")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands):
        raise ShapeError(
            "the primitive sort needs operands of one shape, but got "
            f"{', '.join(o.str_short() for o in operands)}. Broadcast them first.")
    if type(dimension) is not int or not 0 <= dimension < len(shape):
        raise AxisError(
            f"the primitive sort got dimension={dimension!r} for operands of shape {shape}; "
            f"it needs one int in [0, {len(shape)}) (0-d arrays cannot be sorted). The "
            "operations sort/argsort normalise negative axes.")
    if type(num_keys) is not int or not 1 <= num_keys <= len(operands):
        raise InvalidArgumentError(
            f"the primitive sort got num_keys={num_keys!r} for {len(operands)} operand(s); "
            "it needs an int between 1 and the number of operands (the keys come first).")
    return list(operands)


def _sort_jvp(primals, tangents, *, dimension, num_keys):
    shape = get_aval(primals[0]).shape
    *outs, perm = sort_p.bind(*primals, elementwise.iota(np.int64, shape, dimension),
                              dimension=dimension, num_keys=num_keys)
    return outs, [Zero(tangent_aval(get_aval(o))) if type(t) is Zero
                  else indexing.take_along_axis(t, perm, dimension)
                  for o, t in zip(outs, tangents)]


def _to_front(x, bdim, size):
    """``x`` with its batch axis at 0; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        shape = get_aval(x).shape
        return structural.broadcast_in_dim(x, shape=(size,) + shape,
                                           broadcast_dimensions=tuple(range(1, len(shape) + 1)))
    return structural.moveaxis(x, bdim, 0)


def _sort_batch(vals, dims, *, dimension, num_keys):
    # Every operand gets the batch axis in front, so the sorted axis moves up by one.
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [_to_front(v, d, size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(*moved, dimension=dimension + 1, num_keys=num_keys)
    return outs, [0] * len(outs)


def _sort_cost(*operands, dimension, num_keys):
    n = operands[0].shape[dimension]
    rows = operands[0].size // max(n, 1)
    compares = rows * n * max(1, math.ceil(math.log2(max(n, 2)))) * num_keys
    return {"flops": compares, "bytes": 2 * sum(nbytes(o) for o in operands)}


sort_p.abstract_eval = _sort_abstract_eval
sort_p.impl = checked_impl(_sort_impl, _sort_abstract_eval)
sort_p.jvp = _sort_jvp
sort_p.batch = _sort_batch
sort_p.cost = _sort_cost

# --- operations ---------------------------------------------------------------------


def _normalize_axis(name, x, axis):
    ndim = get_aval(x).ndim
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise AxisError(f"{name} got axis={axis!r} for an array of rank {ndim}; it needs an "
                        f"int in [{-ndim}, {ndim}) (0-d arrays cannot be sorted)")
    return int(axis) % ndim


def sort_together(*operands, dimension, num_keys=1):
    """Sort arrays of one shape together along ``dimension`` by their first ``num_keys``.

    Args:
      *operands: arrays of one shape (dtypes may differ); the first ``num_keys``
        are the keys, most significant first.
      dimension: the axis to sort along (negatives count from the end).
      num_keys: how many leading operands are keys.

    Returns:
      A list with every operand permuted by the same stable, ascending,
      NaN-last order of the keys.

    Raises:
      ShapeError, AxisError, InvalidArgumentError: on mismatched shapes, a bad
      dimension or a bad ``num_keys``.

    >>> import numpy as np
    >>> keys, values = sort_together(np.array([2., 1.]), np.array([10, 20]), dimension=0)
    >>> values
    array([20, 10])
    """
    if not operands:
        raise InvalidArgumentError("sort_together needs at least one operand")
    dimension = _normalize_axis("sort_together", operands[0], dimension)
    return sort_p.bind(*operands, dimension=dimension, num_keys=num_keys)


def sort(x, axis=-1):
    """``x`` sorted along ``axis`` (numpy.sort: ascending, stable, NaN last).

    Differentiable: the tangent is permuted like ``x``.

    >>> import numpy as np
    >>> sort(np.array([3., np.nan, 1.]))
    array([ 1.,  3., nan])
    """
    return sort_p.bind(x, dimension=_normalize_axis("sort", x, axis), num_keys=1)[0]


def argsort(x, axis=-1, index_dtype=np.dtype(np.int64)):
    """The indices that sort ``x`` along ``axis`` (numpy.argsort with kind="stable").

    Its output is an integer array, so it carries no derivative; ``x`` enters
    through stop_gradient so that differentiating code does not permute a
    tangent nobody reads.

    >>> import numpy as np
    >>> argsort(np.array([3., 1., 2.]))
    array([1, 2, 0])
    """
    axis = _normalize_axis("argsort", x, axis)
    # the primitives bound directly: the shape and axis are known valid, and x is one
    # array (no pytree walk of stop_gradient)
    iota = elementwise.iota_p.bind(dtype=np.dtype(index_dtype), shape=get_aval(x).shape,
                                   dimension=axis)
    return sort_p.bind(gradient_control.stop_gradient_p.bind(x), iota, dimension=axis,
                       num_keys=1)[1]


__all__ = ["sort_p", "sort", "sort_together", "argsort"]
