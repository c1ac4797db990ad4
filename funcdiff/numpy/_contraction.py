"""Labelled contractions: the helpers behind every product of funcdiff.numpy.

Every product is a contraction of labelled axes, so one helper,
``_contract_pair``, serves dot, vdot, inner, matmul, tensordot and einsum: it
gives each operand's axes labels, sums labels that only one operand has and
nobody needs, and maps the rest onto ONE ``dot_general`` (shared labels that
are kept become batch axes, shared labels that are not kept are contracted),
whose impl reaches BLAS. Products with nothing to contract are a broadcasting
``mul``. Size-1 axes that numpy would broadcast are squeezed away first, so
``matmul``'s broadcasting of leading dimensions never materialises a copy.
A diagonal (``_diagonal_last``) is a strided slice of its two axes flattened
into one: the diagonal of an ``n x m`` block is every ``(m+1)``-th element.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff.errors import ShapeError
from funcdiff.numpy import _util
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import reductions, structural
from funcdiff.primitives.dot import dot_general


def _shape(x) -> tuple[int, ...]:
    return x.shape  # arrays, numpy scalars and tracers (Python scalars are converted first)


def _reshape(x, shape):
    shape = tuple(shape)
    return x if _shape(x) == shape else structural.reshape(x, new_sizes=shape)


def _transpose(x, perm):
    perm = tuple(perm)
    return x if perm == tuple(range(len(perm))) else structural.transpose(x, permutation=perm)


def _bool_in(arrays: list) -> tuple[list, bool]:
    """Boolean products are computed in int64 and compared with 0 afterwards
    (numpy's boolean dot is an OR of ANDs); dot_general multiplies numbers."""
    if arrays and _util.dtype_of(arrays[0]) == np.bool_:
        return [ew.convert_element_type(a, new_dtype=np.dtype(np.int64)) for a in arrays], True
    return arrays, False


def _bool_out(x, was_bool: bool):
    return ew.ne(x, np.zeros((), np.int64)) if was_bool else x


def _sum_labels(x, labels: tuple, drop) -> tuple[Any, tuple]:
    axes = tuple(i for i, l in enumerate(labels) if l in drop)
    if not axes:
        return x, labels
    return reductions.reduce_sum(x, axes=axes), tuple(l for l in labels if l not in drop)


def _squeeze_labels(x, labels: tuple, sizes: dict) -> tuple[Any, tuple]:
    """Drop size-1 axes whose label is larger elsewhere: numpy broadcasts them,
    and a size-1 axis contributes one factor, so dropping it is exact."""
    shape = _shape(x)
    keep = [i for i, l in enumerate(labels) if not (shape[i] == 1 and sizes[l] != 1)]
    if len(keep) == len(labels):
        return x, labels
    return (_reshape(x, [shape[i] for i in keep]), tuple(labels[i] for i in keep))


def _label_sizes(name: str, pairs) -> dict:
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


def _contract_pair(x, x_labels: tuple, y, y_labels: tuple, keep: Sequence) -> tuple[Any, tuple]:
    """The product of ``x`` and ``y`` whose axes carry the given (distinct) labels,
    summed over every label not in ``keep``.

    Returns the result and its axis labels: batch labels (in ``keep`` order),
    then ``x``'s free labels, then ``y``'s, as ``dot_general`` lays them out.
    """
    keep_pos = {l: i for i, l in enumerate(keep)}
    sizes = _label_sizes("contraction", [(_shape(x), x_labels), (_shape(y), y_labels)])
    x, x_labels = _squeeze_labels(x, x_labels, sizes)
    y, y_labels = _squeeze_labels(y, y_labels, sizes)
    x_set, y_set = set(x_labels), set(y_labels)
    x, x_labels = _sum_labels(x, x_labels, {l for l in x_labels
                                             if l not in y_set and l not in keep_pos})
    y, y_labels = _sum_labels(y, y_labels, {l for l in y_labels
                                             if l not in x_set and l not in keep_pos})
    shared = [l for l in x_labels if l in y_set]
    batch = sorted((l for l in shared if l in keep_pos), key=keep_pos.get)
    contract = [l for l in shared if l not in keep_pos]
    x_free = [l for l in x_labels if l not in y_set]
    y_free = [l for l in y_labels if l not in x_set]
    out_labels = tuple(batch + x_free + y_free)
    if not contract:  # nothing to sum: a broadcasting elementwise product
        x_shape, y_shape = _shape(x), _shape(y)
        x = _transpose(x, [x_labels.index(l) for l in batch + x_free])
        x = _reshape(x, [x_shape[x_labels.index(l)] for l in batch + x_free] + [1] * len(y_free))
        y = _transpose(y, [y_labels.index(l) for l in batch + y_free])
        y = _reshape(y, [y_shape[y_labels.index(l)] for l in batch] + [1] * len(x_free)
                     + [y_shape[y_labels.index(l)] for l in y_free])
        return ew.mul(x, y), out_labels
    numbers = ((tuple(x_labels.index(l) for l in contract),
                tuple(y_labels.index(l) for l in contract)),
               (tuple(x_labels.index(l) for l in batch),
                tuple(y_labels.index(l) for l in batch)))
    return dot_general(x, y, dimension_numbers=numbers), out_labels


def _arrange(x, labels: tuple, out_labels: Sequence, out_shape: Sequence[int]):
    """``x`` (axes labelled ``labels``, a subset of ``out_labels``) transposed into
    ``out_labels`` order and broadcast to ``out_shape`` (labels it lacks)."""
    present = [l for l in out_labels if l in labels]
    x = _transpose(x, [labels.index(l) for l in present])
    out_shape = tuple(out_shape)
    if len(present) == len(out_labels):
        return _reshape(x, out_shape)
    x_shape = _shape(x)
    dims = tuple(i for i, l in enumerate(out_labels) if l in labels)
    if x_shape == tuple(out_shape[d] for d in dims):
        return structural.broadcast_in_dim(x, shape=out_shape, broadcast_dimensions=dims)
    x = _reshape(x, [x_shape[present.index(l)] if l in labels else 1 for l in out_labels])
    return structural.broadcast_to(x, out_shape)


def _diagonal_last(x, offset: int, axis1: int, axis2: int):
    """numpy.diagonal: the (offset) diagonal of axes ``axis1``/``axis2``, as the last axis.

    The two axes are moved to the end and flattened; the diagonal is then every
    ``(m+1)``-th element starting at the offset: one strided slice.
    """
    shape = _shape(x)
    ndim = len(shape)
    rest = [i for i in range(ndim) if i not in (axis1, axis2)]
    x = _transpose(x, rest + [axis1, axis2])
    n, m = shape[axis1], shape[axis2]
    lead = [shape[i] for i in rest]
    x = _reshape(x, lead + [n * m])
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
    return structural.slice(x, start_indices=starts, limit_indices=limits, strides=strides)
