"""Labelled contractions: the helpers behind every product of funcdiff.numpy.

Every product is a contraction of labelled axes, so one helper,
``contract_pair``, serves dot, vdot, inner, matmul, tensordot and einsum: it
gives each operand's axes labels, sums labels that only one operand has and
nobody needs, and maps the rest onto ONE ``dot_general`` (shared labels that
are kept become batch axes, shared labels that are not kept are contracted),
whose impl reaches BLAS. Products with nothing to contract are a broadcasting
``mul``. Size-1 axes that numpy would broadcast are squeezed away first, so
``matmul``'s broadcasting of leading dimensions never materialises a copy.
A diagonal (``diagonal_last``) is a strided slice of its two axes flattened
into one: the diagonal of an ``n x m`` block is every ``(m+1)``-th element.

The decisions depend only on shapes and labels, so each helper is split into
a ``*_plan`` that works on shapes alone and returns *steps* (an operation and
its params, applied by ``_run``), and the eager helper that runs them. Plans
can therefore be cached (``pair_plan`` is, per shapes and labels) and
composed into whole programs (einsum caches one per call signature).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from funcdiff.errors import ShapeError
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import reductions, slicing, structural
from funcdiff.primitives.dot import dot_general_p


def shape_of(x) -> tuple[int, ...]:
    return x.shape  # arrays, numpy scalars and tracers (Python scalars are converted first)


def _run(x, steps):
    """Apply ``steps``, pairs (operation, params), to ``x`` in order."""
    for op, params in steps:
        x = op(x, **params)
    return x


def _reshape_plan(shape: tuple, new_shape) -> tuple:
    new_shape = tuple(new_shape)
    return () if shape == new_shape else ((structural.reshape, {"new_sizes": new_shape}),)


def _transpose_plan(perm) -> tuple:
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return ()
    return ((structural.transpose, {"permutation": perm}),)


def reshape(x, shape):
    shape = tuple(shape)
    return x if shape_of(x) == shape else structural.reshape(x, new_sizes=shape)


def _transpose(x, perm):
    return _run(x, _transpose_plan(perm))


def _nonzero(x):
    return ew.ne(x, np.zeros((), np.int64))


_TO_INT64 = (ew.convert_element_type, {"new_dtype": np.dtype(np.int64)})
NONZERO = (_nonzero, {})


def bool_in(arrays: list) -> tuple[list, bool]:
    """Boolean products are computed in int64 and compared with 0 afterwards
    (numpy's boolean dot is an OR of ANDs); dot_general multiplies numbers."""
    if arrays and _util.dtype_of(arrays[0]) == np.bool_:
        return [_run(a, (_TO_INT64,)) for a in arrays], True
    return arrays, False


def bool_out(x, was_bool: bool):
    return _nonzero(x) if was_bool else x


def sum_plan(shape: tuple, labels: tuple, drop) -> tuple[tuple, tuple, tuple]:
    """Steps summing the axes labelled in ``drop``, and the shape and labels left."""
    axes = tuple(i for i, l in enumerate(labels) if l in drop)
    if not axes:
        return (), shape, labels
    return (((reductions.reduce_sum, {"axes": axes}),),
            tuple(s for s, l in zip(shape, labels) if l not in drop),
            tuple(l for l in labels if l not in drop))


def _sum_labels(x, labels: tuple, drop) -> tuple[Any, tuple]:
    steps, _, labels = sum_plan(shape_of(x), labels, drop)
    return _run(x, steps), labels


def squeeze_plan(shape: tuple, labels: tuple, sizes: dict) -> tuple[tuple, tuple, tuple]:
    """Steps dropping size-1 axes whose label is larger elsewhere: numpy
    broadcasts them, and a size-1 axis contributes one factor, so dropping it
    is exact. Returns the steps and the shape and labels left."""
    keep = [i for i, l in enumerate(labels) if not (shape[i] == 1 and sizes[l] != 1)]
    if len(keep) == len(labels):
        return (), shape, labels
    new_shape = tuple(shape[i] for i in keep)
    return _reshape_plan(shape, new_shape), new_shape, tuple(labels[i] for i in keep)


def _squeeze_labels(x, labels: tuple, sizes: dict) -> tuple[Any, tuple]:
    steps, _, labels = squeeze_plan(shape_of(x), labels, sizes)
    return _run(x, steps), labels


def label_sizes(name: str, pairs) -> dict:
    """Size of each label over (shape, labels) pairs; size 1 broadcasts."""
    sizes: dict = {}
    for shape, labels in pairs:
        for size, label in zip(shape, labels):
            old = sizes.get(label, 1)
            if size != 1 and old != 1 and size != old:
                shapes = " and ".join(str(tuple(s)) for s, _ in pairs)
                raise ShapeError(
                    f"{name}: operands of shapes {shapes} disagree on the size of a "
                    f"contracted or aligned axis ({old} vs {size}). Those axes must have "
                    "equal sizes (or size 1 to broadcast).")
            if size != 1 or label not in sizes:
                sizes[label] = size if size != 1 else old
    return sizes


@functools.lru_cache(maxsize=512)
def pair_plan(x_shape: tuple, x_labels: tuple, y_shape: tuple, y_labels: tuple,
               keep: tuple) -> tuple:
    """The plan of ``contract_pair``: (x steps, y steps, product operation,
    its params, result shape, result labels)."""
    keep_pos = {l: i for i, l in enumerate(keep)}
    sizes = label_sizes("contraction", [(x_shape, x_labels), (y_shape, y_labels)])
    x_squeeze, x_shape, x_labels = squeeze_plan(x_shape, x_labels, sizes)
    y_squeeze, y_shape, y_labels = squeeze_plan(y_shape, y_labels, sizes)
    x_set, y_set = set(x_labels), set(y_labels)
    x_sum, x_shape, x_labels = sum_plan(x_shape, x_labels, {
        l for l in x_labels if l not in y_set and l not in keep_pos})
    y_sum, y_shape, y_labels = sum_plan(y_shape, y_labels, {
        l for l in y_labels if l not in x_set and l not in keep_pos})
    x_steps, y_steps = x_squeeze + x_sum, y_squeeze + y_sum
    shared = [l for l in x_labels if l in y_set]
    batch = sorted((l for l in shared if l in keep_pos), key=keep_pos.get)
    contract = [l for l in shared if l not in keep_pos]
    x_free = [l for l in x_labels if l not in y_set]
    y_free = [l for l in y_labels if l not in x_set]
    out_labels = tuple(batch + x_free + y_free)
    size_of = dict(zip(y_labels, y_shape))
    size_of.update(zip(x_labels, x_shape))
    out_shape = tuple(size_of[l] for l in out_labels)
    if not contract:  # nothing to sum: a broadcasting elementwise product
        x_steps += _transpose_plan([x_labels.index(l) for l in batch + x_free])
        x_steps += _reshape_plan(
            tuple(x_shape[x_labels.index(l)] for l in batch + x_free),
            [x_shape[x_labels.index(l)] for l in batch + x_free] + [1] * len(y_free))
        y_steps += _transpose_plan([y_labels.index(l) for l in batch + y_free])
        y_steps += _reshape_plan(
            tuple(y_shape[y_labels.index(l)] for l in batch + y_free),
            [y_shape[y_labels.index(l)] for l in batch] + [1] * len(x_free)
            + [y_shape[y_labels.index(l)] for l in y_free])
        return x_steps, y_steps, ew.mul, {}, out_shape, out_labels
    numbers = ((tuple(x_labels.index(l) for l in contract),
                tuple(y_labels.index(l) for l in contract)),
               (tuple(x_labels.index(l) for l in batch),
                tuple(y_labels.index(l) for l in batch)))
    # The numbers are already tuples of ints: bind the primitive without the
    # wrapper that canonicalises them.
    return (x_steps, y_steps, dot_general_p.bind, {"dimension_numbers": numbers},
            out_shape, out_labels)


def contract_pair(x, x_labels: tuple, y, y_labels: tuple, keep: Sequence) -> tuple[Any, tuple]:
    """The product of ``x`` and ``y`` whose axes carry the given (distinct) labels,
    summed over every label not in ``keep``.

    Returns the result and its axis labels: batch labels (in ``keep`` order),
    then ``x``'s free labels, then ``y``'s, as ``dot_general`` lays them out.
    """
    x_steps, y_steps, product, params, _, out_labels = pair_plan(
        shape_of(x), tuple(x_labels), shape_of(y), tuple(y_labels), tuple(keep))
    return product(_run(x, x_steps), _run(y, y_steps), **params), out_labels


def arrange_plan(shape: tuple, labels: tuple, out_labels: Sequence,
                  out_shape: Sequence[int]) -> tuple:
    """Steps transposing an array of ``shape`` (axes labelled ``labels``, a subset
    of ``out_labels``) into ``out_labels`` order and broadcasting it to
    ``out_shape`` (labels it lacks)."""
    present = [l for l in out_labels if l in labels]
    steps = _transpose_plan([labels.index(l) for l in present])
    x_shape = tuple(shape[labels.index(l)] for l in present)
    out_shape = tuple(out_shape)
    if len(present) == len(out_labels):
        return steps + _reshape_plan(x_shape, out_shape)
    dims = tuple(i for i, l in enumerate(out_labels) if l in labels)
    if x_shape == tuple(out_shape[d] for d in dims):
        return steps + ((structural.broadcast_in_dim,
                         {"shape": out_shape, "broadcast_dimensions": dims}),)
    steps += _reshape_plan(x_shape, [x_shape[present.index(l)] if l in labels else 1
                                     for l in out_labels])
    return steps + ((structural.broadcast_to, {"shape": out_shape}),)


def arrange(x, labels: tuple, out_labels: Sequence, out_shape: Sequence[int]):
    """``x`` (axes labelled ``labels``, a subset of ``out_labels``) transposed into
    ``out_labels`` order and broadcast to ``out_shape`` (labels it lacks)."""
    return _run(x, arrange_plan(shape_of(x), labels, out_labels, out_shape))


def diagonal_plan(shape: tuple, offset: int, axis1: int, axis2: int) -> tuple[tuple, tuple]:
    """Steps taking the (offset) diagonal of axes ``axis1``/``axis2`` of an array
    of ``shape`` as its last axis, and the resulting shape.

    The two axes are moved to the end and flattened; the diagonal is then every
    ``(m+1)``-th element starting at the offset: one strided slice.
    """
    ndim = len(shape)
    rest = [i for i in range(ndim) if i not in (axis1, axis2)]
    steps = _transpose_plan(rest + [axis1, axis2])
    n, m = shape[axis1], shape[axis2]
    lead = [shape[i] for i in rest]
    steps += _reshape_plan(tuple(lead) + (n, m), lead + [n * m])
    if offset >= 0:
        start, count = offset, max(0, min(n, m - offset))
    else:
        start, count = -offset * m, max(0, min(n + offset, m))
    if count == 0:
        start, limit = 0, 0
    else:
        limit = start + (count - 1) * (m + 1) + 1
    starts = (0,) * len(lead) + (start,)
    limits = tuple(lead) + (limit,)
    strides = (1,) * len(lead) + (m + 1,)
    # Params as slicing.slice normalises them (int tuples; unit strides are
    # None), so the primitive is bound directly.
    steps += ((slicing.slice_p.bind, {
        "start_indices": starts, "limit_indices": limits,
        "strides": None if m == 0 else strides}),)
    return steps, tuple(lead) + (count,)


def diagonal_last(x, offset: int, axis1: int, axis2: int):
    """numpy.diagonal: the (offset) diagonal of axes ``axis1``/``axis2``, as the last axis."""
    return _run(x, diagonal_plan(shape_of(x), offset, axis1, axis2)[0])
