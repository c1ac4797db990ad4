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
    aval_of, check_axis, check_index_dtype, gathered_shape, has_negative,
    offset_batched_indices, out_of_bounds, ramp, reshape, widen_indices, with_batch_at,
    zeros_like)
from funcdiff.primitives.indexing_gather import (  # noqa: F401
    gather_abstract_eval, gather_batch, gather_cost, gather_impl, gather_jvp,
    gather_transpose, gather, gather_p, take_along_axis)
from funcdiff.primitives.indexing_scatter import (  # noqa: F401
    last_write_mask, may_repeat, product_of_others, scatter_abstract_eval,
    scatter_add_jvp, scatter_add_transpose, scatter_batch, scatter_card, scatter_cost,
    scatter_extremum_jvp, scatter_impl, scatter_jvp, scatter_mul_jvp,
    scatter_mul_transpose, scatter_transpose, scatter, scatter_add, scatter_add_p,
    scatter_max, scatter_max_p, scatter_min, scatter_min_p, scatter_mul, scatter_mul_p,
    scatter_p)

__all__ = ["gather", "gather_p", "scatter_add", "scatter_add_p", "scatter", "scatter_p",
           "scatter_mul", "scatter_mul_p", "scatter_min", "scatter_min_p", "scatter_max",
           "scatter_max_p", "take_along_axis", "IndexOutOfBoundsError"]
