"""The scatters: ``updates`` written into a copy of ``operand`` along one axis.

Each scatter writes ``updates`` of exactly the gathered shape back into a copy
of ``operand`` along one axis: ``scatter_add`` accumulates repeated indices
(``numpy.add.at``), ``scatter`` overwrites (the last write wins, like numpy
fancy assignment), ``scatter_mul`` multiplies and ``scatter_min`` /
``scatter_max`` keep the extremum (the ``.at[].multiply/min/max`` updates).
One card builder, ``scatter_card``, gives them their shape rule, impl,
batching and cost; each card then states only its numpy update and its
derivative.

Indices are never differentiated. ``scatter_add`` and ``scatter`` are linear in
``(operand, updates)`` jointly. The transpose of ``scatter_add`` is ``gather``
(from ``indexing_gather``); that of ``scatter`` gives each position's
cotangent only to the update that survives there. ``scatter_mul`` is linear in
its operand alone; ``scatter_min`` and ``scatter_max`` split the derivative
equally among ties. ``indexing`` re-exports all of it.
"""

from __future__ import annotations

import math

import numpy as np

from funcdiff import roles
from funcdiff.bridge import NamespaceArray
from funcdiff.compiler import fusion
from funcdiff.core import Primitive, Tracer, Zero, get_aval, instantiate
from funcdiff.errors import DifferentiationError, ShapeError
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.passes.rules import ANY, on_zeros, zeros
from funcdiff.passes.zero_propagation import ZERO
from funcdiff.primitives import elementwise, structural
from funcdiff.primitives.cards import make_op, nbytes, same_dtype
from funcdiff.primitives.indexing_common import (aval_of, check_axis, check_index_dtype,
                                                 gathered_shape, has_negative,
                                                 offset_batched_indices, out_of_bounds,
                                                 reshape, with_batch_at, zeros_like)
from funcdiff.primitives.indexing_gather import gather


# --- scatters -------------------------------------------------------------------
# The scatters share shape rules, impl skeleton, batching and cost; each
# states only its numpy update and its derivative.


def scatter_abstract_eval(name):
    def abstract_eval(operand, indices, updates, *, axis):
        check_axis(name, operand, axis)
        check_index_dtype(name, indices)
        same_dtype(name, operand, updates)
        expected = gathered_shape(operand.shape, indices.shape, axis)
        if updates.shape != expected:
            raise ShapeError(
                f"{name} along axis {axis} of {operand.str_short()} with indices "
                f"{indices.str_short()} needs updates of shape {expected} "
                "(operand.shape[:axis] + indices.shape + operand.shape[axis+1:]), but got "
                f"{updates.str_short()}. Broadcast the updates to that shape first.")
        return operand
    return abstract_eval


def scatter_impl(name, abstract_eval, update, bridged=None):
    def impl(operand, indices, updates, *, axis):
        like = next((a for a in (operand, updates, indices) if type(a) is NamespaceArray), None)
        if like is not None and bridged is not None:  # another library's arrays
            return bridged(like, operand, indices, updates, axis)
        operand, indices, updates = np.asarray(operand), np.asarray(indices), np.asarray(updates)
        if (indices.dtype.kind not in "iu" or type(axis) is not int
                or not 0 <= axis < operand.ndim or operand.dtype != updates.dtype
                or updates.shape != gathered_shape(operand.shape, indices.shape, axis)):
            abstract_eval(get_aval(operand), get_aval(indices), get_aval(updates), axis=axis)
        if has_negative(indices):
            raise out_of_bounds(name, indices, operand.shape[axis], axis)
        out = operand.copy()
        try:
            update(out, (slice(None),) * axis + (indices,), updates)
        except IndexError:
            raise out_of_bounds(name, indices, operand.shape[axis], axis) from None
        return out
    return impl


def scatter_batch(prim):
    def rule(vals, dims, *, axis):
        (operand, indices, updates), (o_bdim, i_bdim, u_bdim) = vals, dims
        size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
        if i_bdim is None:  # batch axis first everywhere; the indexed axis shifts by one
            operand = with_batch_at(operand, o_bdim, 0, size)
            updates = with_batch_at(updates, u_bdim, 0, size)
            return prim.bind(operand, indices, updates, axis=axis + 1), 0
        # Fold the batch axis into the indexed one: operand (..., B*n, ...), updates
        # (..., B, *indices.shape, ...), indices offset into their member's block.
        operand = with_batch_at(operand, o_bdim, axis, size)
        shape = get_aval(operand).shape
        n = shape[axis + 1]
        operand = structural.reshape(operand, new_sizes=shape[:axis] + (size * n,) + shape[axis + 2:])
        indices = offset_batched_indices(indices, i_bdim, size, n)
        updates = with_batch_at(updates, u_bdim, axis, size)
        out = prim.bind(operand, indices, updates, axis=axis)
        return structural.reshape(out, new_sizes=shape), axis
    return rule


def scatter_cost(flops_per_update):
    def cost(operand, indices, updates, *, axis):
        return {"flops": flops_per_update * updates.size,
                "bytes": 2 * nbytes(operand) + 3 * nbytes(updates) + nbytes(indices)}
    return cost


def scatter_card(name, update, flops_per_update, bridged=None):
    """A scatter primitive updating with the numpy ufunc method ``update``; ``bridged``
    computes it on another library's arrays (else they are refused by name)."""
    prim = Primitive(name)
    prim.abstract_eval = scatter_abstract_eval(name)
    prim.impl = scatter_impl(name, prim.abstract_eval, update, bridged)
    prim.batch = scatter_batch(prim)
    prim.cost = scatter_cost(flops_per_update)
    return prim


# --- scatter_add ----------------------------------------------------------------

scatter_add_p = scatter_card("scatter_add", np.add.at, 1,
                             bridged=lambda like, *operands: like.scatter_add(*operands))


def scatter_add_jvp(primals, tangents, *, axis):
    (operand, indices, updates), (o_dot, _, u_dot) = primals, tangents
    out = scatter_add(operand, indices, updates, axis=axis)
    if type(u_dot) is Zero:
        return out, o_dot
    return out, scatter_add(instantiate(o_dot), indices, u_dot, axis=axis)


def scatter_add_transpose(ct, operand, indices, updates, *, axis):
    return [ct if is_undefined(operand) else None, None,
            gather(ct, indices, axis=axis) if is_undefined(updates) else None]


scatter_add_p.jvp = scatter_add_jvp
scatter_add_p.linear = True
scatter_add_p.transpose = scatter_add_transpose
roles.SCATTER_ADD.fill(scatter_add_p)  # along-axis indexing, fused by the compiler
scatter_add_p.rewrites = (
    on_zeros("adding zeros -> the operand", (ANY, ANY, ZERO), lambda rw, eqn, x, i, z: x),
)
scatter_add = make_op(scatter_add_p, """Add ``updates`` into a copy of ``operand`` at ``indices`` along ``axis``.

Repeated indices accumulate (numpy.add.at). Linear in ``(operand, updates)``;
its transpose gathers the cotangent.

Args:
  operand: array of rank >= 1.
  indices: integer array with values in ``[0, operand.shape[axis])``.
  updates: array of operand's dtype and shape
    ``operand.shape[:axis] + indices.shape + operand.shape[axis+1:]``.
  axis: keyword-only Python int.

Returns:
  A new array shaped like ``operand``.

Raises:
  AxisError, DTypeError, ShapeError, IndexOutOfBoundsError.

>>> import numpy as np
>>> scatter_add(np.zeros(3), np.array([0, 2, 0]), np.array([1., 2., 3.]), axis=0)
array([4., 0., 2.])
""")

# --- scatter (set) --------------------------------------------------------------

scatter_p = scatter_card("scatter", lambda out, index, updates: out.__setitem__(index, updates), 0)


def scatter_jvp(primals, tangents, *, axis):
    (operand, indices, updates), (o_dot, _, u_dot) = primals, tangents
    out = scatter(operand, indices, updates, axis=axis)
    return out, scatter(instantiate(o_dot), indices, instantiate(u_dot), axis=axis)


def last_write_mask(indices, axis_size: int, dtype):
    """1 where an update is the one that survives at its position, else 0.

    Each update scatters its own position id; reading the winning id back at
    every update's target and scattering ones there marks exactly the
    survivors. It uses the same ``scatter`` as the forward pass, so it agrees
    with numpy's order of repeated writes (in practice: the last one wins).
    """
    shape = get_aval(indices).shape
    count = math.prod(shape)
    ids = reshape(elementwise.iota(np.int64, (count,)), shape)
    winners = scatter(structural.full((axis_size,), 0, np.dtype(np.int64)), indices, ids, axis=0)
    winner_of_each = reshape(gather(winners, indices, axis=0), (count,))
    mask = scatter(structural.full((count,), 0, dtype), winner_of_each,
                   structural.full((count,), 1, dtype), axis=0)
    return reshape(mask, shape)


def may_repeat(indices) -> bool:
    if isinstance(indices, Tracer):
        return True
    indices = np.asarray(indices)
    return indices.size > 1 and np.unique(indices).size != indices.size


def scatter_transpose(ct, operand, indices, updates, *, axis):
    # Exact also for repeated indices: only the surviving update receives the
    # cotangent of its position (the mask is skipped for known-unique indices).
    ct_operand = ct_updates = None
    if is_undefined(operand):
        ct_operand = scatter(ct, indices, zeros_like(updates), axis=axis)
    if is_undefined(updates):
        ct_updates = gather(ct, indices, axis=axis)
        if may_repeat(indices):
            aval = get_aval(ct_updates)
            idx_ndim = get_aval(indices).ndim
            mask = last_write_mask(indices, aval_of(operand).shape[axis], aval.dtype)
            if idx_ndim != aval.ndim:
                mask = structural.broadcast_in_dim(
                    mask, shape=aval.shape, broadcast_dimensions=tuple(range(axis, axis + idx_ndim)))
            ct_updates = elementwise.mul(ct_updates, mask)
    return [ct_operand, None, ct_updates]


scatter_p.jvp = scatter_jvp
scatter_p.linear = True
scatter_p.transpose = scatter_transpose
scatter_p.rewrites = (on_zeros("zeros with zeros written -> zeros", (ZERO, ANY, ZERO), zeros),)
scatter = make_op(scatter_p, """Write ``updates`` into a copy of ``operand`` at ``indices`` along ``axis``.

For repeated indices the last write wins, as in numpy fancy assignment.
Linear in ``(operand, updates)`` jointly; reverse mode is exact also for
repeated indices (overwritten updates get a zero cotangent).

Args:
  operand, indices, updates, axis: as for ``scatter_add``.

Returns:
  A new array shaped like ``operand``.

Raises:
  AxisError, DTypeError, ShapeError, IndexOutOfBoundsError.

>>> import numpy as np
>>> scatter(np.zeros(3), np.array([2, 0]), np.array([1., 2.]), axis=0)
array([2., 0., 1.])
""")

# --- scatter_mul ----------------------------------------------------------------

scatter_mul_p = scatter_card("scatter_mul", np.multiply.at, 1)


def product_of_others(indices, updates, out_shape, axis):
    """Per update, the product of the *other* updates written to its position.

    A nonzero update divides the product of all by itself. Zeros are counted per
    position: the only zero of its position sees the product of the nonzero
    updates there, a zero among several sees 0. Dividing the full product keeps
    the cross derivatives right, so the rule is exact to every order while at
    most one update per position is zero (beyond first order otherwise).
    """
    el = elementwise
    aval = get_aval(updates)
    ones, zeros = (structural.full(aval.shape, v, aval.dtype) for v in (1, 0))

    def per_update(prim_op, start, values):  # reduce values per position, read back per update
        return gather(prim_op(structural.full(out_shape, start, aval.dtype), indices, values,
                              axis=axis), indices, axis=axis)
    is_zero = el.eq(updates, zeros)
    safe = el.select(is_zero, ones, updates)
    full_product = per_update(scatter_mul, 1, updates)
    nonzero_product = per_update(scatter_mul, 1, safe)
    zero_count = per_update(scatter_add, 0, el.convert_element_type(is_zero, new_dtype=aval.dtype))
    only_zero = el.select(el.eq(zero_count, ones), nonzero_product, zeros)
    return el.select(is_zero, only_zero, el.div(full_product, safe))


def scatter_mul_jvp(primals, tangents, *, axis):
    (operand, indices, updates), (o_dot, _, u_dot) = primals, tangents
    out = scatter_mul(operand, indices, updates, axis=axis)
    t_out = None if type(o_dot) is Zero else scatter_mul(o_dot, indices, updates, axis=axis)
    if type(u_dot) is not Zero:
        shape = get_aval(operand).shape
        weighted = elementwise.mul(u_dot, product_of_others(indices, updates, shape, axis))
        summed = scatter_add(zeros_like(operand), indices, weighted, axis=axis)
        term = elementwise.mul(operand, summed)
        t_out = term if t_out is None else elementwise.add(t_out, term)
    return out, t_out


def scatter_mul_transpose(ct, operand, indices, updates, *, axis):
    # Only the operand can be linear (the jvp multiplies its tangent by the
    # updates): each position is scaled by the product of its updates.
    if is_undefined(updates):
        raise DifferentiationError("reverse mode met scatter_mul with linear updates, but it is "
                                   "linear in its operand only; this is a bug in a jvp rule, "
                                   "please report it.")
    return [scatter_mul(ct, indices, updates, axis=axis), None, None]


scatter_mul_p.jvp = scatter_mul_jvp
scatter_mul_p.transpose = scatter_mul_transpose
scatter_mul = make_op(scatter_mul_p, """Multiply a copy of ``operand`` by ``updates`` at ``indices`` along ``axis``.

Repeated indices multiply together (numpy.multiply.at). Derivatives are exact
with repeated indices and zero updates; only where two or more updates of
one position are zero are derivatives beyond the first not tracked.

Args:
  operand, indices, updates, axis: as for ``scatter_add``.

Returns:
  A new array shaped like ``operand``.

>>> import numpy as np
>>> scatter_mul(np.ones(3), np.array([0, 2, 0]), np.array([2., 3., 4.]), axis=0)
array([8., 1., 3.])
""")

# --- scatter_min / scatter_max ---------------------------------------------------


def scatter_extremum_jvp(op):
    """Ties share the derivative equally, like max/min (JAX's convention):
    the operand and every update equal to the result each get 1/count of it."""
    def jvp(primals, tangents, *, axis):
        (operand, indices, updates), (o_dot, _, u_dot) = primals, tangents
        el = elementwise
        out = op(operand, indices, updates, axis=axis)
        dtype = get_aval(out).dtype
        operand_wins = el.convert_element_type(el.eq(operand, out), new_dtype=dtype)
        update_wins = el.convert_element_type(el.eq(updates, gather(out, indices, axis=axis)),
                                              new_dtype=dtype)
        count = el.add(operand_wins,
                       scatter_add(zeros_like(operand), indices, update_wins, axis=axis))
        total = None
        if type(o_dot) is not Zero:
            total = el.mul(operand_wins, o_dot)
        if type(u_dot) is not Zero:
            term = scatter_add(zeros_like(operand), indices, el.mul(update_wins, u_dot), axis=axis)
            total = term if total is None else el.add(total, term)
        return out, el.div(total, count)
    return jvp


scatter_min_p = scatter_card("scatter_min", np.minimum.at, 1)
scatter_min = make_op(scatter_min_p, """Keep the minimum of ``operand`` and ``updates`` at ``indices`` along ``axis``.

numpy.minimum.at on a copy; ties split the derivative equally.

>>> import numpy as np
>>> scatter_min(np.zeros(3), np.array([0, 2, 0]), np.array([-1., 3., -2.]), axis=0)
array([-2.,  0.,  0.])
""")
scatter_min_p.jvp = scatter_extremum_jvp(scatter_min)

scatter_max_p = scatter_card("scatter_max", np.maximum.at, 1)
scatter_max = make_op(scatter_max_p, """Keep the maximum of ``operand`` and ``updates`` at ``indices`` along ``axis``.

numpy.maximum.at on a copy; ties split the derivative equally.

>>> import numpy as np
>>> scatter_max(np.zeros(3), np.array([0, 2, 0]), np.array([-1., 3., 2.]), axis=0)
array([2., 0., 3.])
""")
scatter_max_p.jvp = scatter_extremum_jvp(scatter_max)
