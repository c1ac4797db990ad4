"""Indexing primitives: gather along one axis and the scatters that invert it.

The family is deliberately small. ``gather(x, indices, axis=a)`` is
``numpy.take``: one axis of ``x`` is replaced by the (any-shaped) integer array
``indices``. The scatters write ``updates`` of exactly the gathered shape back
into a copy of ``operand`` along one axis: ``scatter_add`` accumulates repeated
indices (``numpy.add.at``), ``scatter`` overwrites (the last write wins, like
numpy fancy assignment), ``scatter_mul`` multiplies and ``scatter_min`` /
``scatter_max`` keep the extremum (the ``.at[].multiply/min/max`` updates).
General numpy integer-array indexing and ``.at[]`` reduce to these once the
numpy layer has normalised negative indices and flattened the indexed axes
into one. ``take_along_axis`` is an operation built from ``gather``.

Indices are never differentiated. ``gather`` is linear in ``x``; ``scatter_add``
and ``scatter`` are linear in ``(operand, updates)`` jointly; their transposes
are each other (``gather`` <-> ``scatter_add``), so reverse mode accumulates
repeated indices. Batch rules move batch axes out of the indexed axis' way; when
indices and data are both batched, the batch axis is folded into the indexed
axis and each batch member's indices are offset into its own block.

Each concept has its own module, and this one holds none of the rules any
more: it is the family's namespace and re-exports every name of the three,
private helpers included. ``indexing_common`` holds the index checks and the
index arithmetic the batch rules share; ``indexing_gather`` the ``gather``
card and ``take_along_axis``; ``indexing_scatter`` the card builder of the
scatters and the cards of ``scatter_add``, ``scatter``, ``scatter_mul``,
``scatter_min`` and ``scatter_max``.
"""

from funcdiff.errors import IndexOutOfBoundsError  # noqa: F401
from funcdiff.primitives.indexing_common import (  # noqa: F401
    _aval, _check_axis, _check_index_dtype, _gathered_shape, _has_negative,
    _offset_batched_indices, _out_of_bounds, _ramp, _reshape, _widen_indices, _with_batch_at,
    _zeros_like)
from funcdiff.primitives.indexing_gather import (  # noqa: F401
    _gather_abstract_eval, _gather_batch, _gather_cost, _gather_impl, _gather_jvp,
    _gather_transpose, gather, gather_p, take_along_axis)
from funcdiff.primitives.indexing_scatter import (  # noqa: F401
    _last_write_mask, _may_repeat, _product_of_others, _scatter_abstract_eval,
    _scatter_add_jvp, _scatter_add_transpose, _scatter_batch, _scatter_card, _scatter_cost,
    _scatter_extremum_jvp, _scatter_impl, _scatter_jvp, _scatter_mul_jvp,
    _scatter_mul_transpose, _scatter_transpose, scatter, scatter_add, scatter_add_p,
    scatter_max, scatter_max_p, scatter_min, scatter_min_p, scatter_mul, scatter_mul_p,
    scatter_p)

__all__ = ["gather", "gather_p", "scatter_add", "scatter_add_p", "scatter", "scatter_p",
           "scatter_mul", "scatter_mul_p", "scatter_min", "scatter_min_p", "scatter_max",
           "scatter_max_p", "take_along_axis", "IndexOutOfBoundsError"]
