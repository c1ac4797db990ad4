"""Reductions: sums, products, extrema, arg-extrema and boolean reductions.

``axes`` is always a sorted tuple of distinct non-negative axes (``argmax``
and ``argmin`` take one ``axis``); the numpy layer normalises ``axis=None``,
negative axes, ``keepdims`` and dtype promotion before binding. Every
reduction keeps its input dtype (``reduce_sum`` of int32 is int32), unlike
numpy's ``sum`` which widens small integers: that keeps shape rules exact.

Derivatives at ties follow JAX: the tangent of ``reduce_max`` is the average
of the input tangents over all positions that attain the maximum, so a tie
between two entries splits the gradient 0.5/0.5. ``reduce_prod``'s derivative
multiplies each tangent by the product of all *other* entries, built from
exclusive cumulative products so that it is exact when entries are zero.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from funcdiff import core, roles
from funcdiff.compiler.lowerings import lower_reduce
from funcdiff.backends import as_array
from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.errors import AxisError, DTypeError, ShapeError
from funcdiff.passes import traits as passes
from funcdiff.passes.rewriter import scalar_literal
from funcdiff.passes.rules import defined_by, identity, rewrite
from funcdiff.primitives import cumulative, elementwise, structural
from funcdiff.primitives.cards import checked_impl, deflinear, make_op, nbytes


def _require_kind(x, kinds):
    """``x`` as an array; TypeError (turned into a DTypeError) for other kinds."""
    x = as_array(x)
    if x.dtype.kind not in kinds:
        raise TypeError(x.dtype)
    return x


def _check_axes(name, x, axes):
    if (type(axes) is not tuple or any(type(a) is not int for a in axes)
            or any(not 0 <= a < x.ndim for a in axes) or list(axes) != sorted(set(axes))):
        raise AxisError(
            f"the primitive {name} got axes={axes!r} for an array of shape {x.shape}; it "
            f"needs a sorted tuple of distinct ints in [0, {x.ndim}). funcdiff.numpy "
            "normalises axis=None and negative axes; at the primitive level pass e.g. "
            "axes=(0,).")


def _check_dtype_kind(name, x, kinds, hint):
    if x.dtype.kind not in kinds:
        raise DTypeError(f"the primitive {name} does not accept dtype {x.dtype}; {hint}")


def _check_nonempty(name, x, axes):
    """numpy refuses to reduce an empty axis when the reduction has no identity."""
    empty = [a for a in axes if x.shape[a] == 0]
    if empty:
        raise ShapeError(
            f"the primitive {name} cannot reduce the empty axis {empty[0]} of shape "
            f"{x.shape}: the operation has no identity element (numpy raises here too). "
            "Check the shape, or reduce only non-empty axes.")


def _reduced_aval(name, x, axes, dtype=None):
    _check_axes(name, x, axes)
    shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype if dtype is None else dtype)


@functools.lru_cache(maxsize=1024)  # bounded: shapes come from users
def _kept(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _reduce_batch(prim):
    def rule(vals, dims, *, axes, **params):
        (x,), (d,) = vals, dims
        new_axes = tuple(a + (a >= d) for a in axes)
        out_dim = d - sum(a < d for a in axes)
        return bind(prim, x, axes=new_axes, **params), out_dim
    return rule


def _reduction_cost(x, *, axes, **params):
    out_size = math.prod([x.shape[i] for i in _kept(x.ndim, axes)])
    out_itemsize = params["index_dtype"].itemsize if "index_dtype" in params else x.dtype.itemsize
    return {"flops": x.size, "bytes": nbytes(x) + out_size * out_itemsize}


def _expand(y, x_shape, axes):
    """Broadcast the reduced ``y`` back over the reduced ``axes`` of ``x_shape``."""
    return structural.broadcast_in_dim(y, shape=x_shape,
                                       broadcast_dimensions=_kept(len(x_shape), axes))


# every reduction's card: over no axes it returns its operand
_OVER_NO_AXES = identity("a reduction over no axes", lambda eqn, x: tuple(eqn.params["axes"]) == ())

# --- reduce_sum ----------------------------------------------------------------

reduce_sum_p = Primitive("reduce_sum")


def _reduce_sum_impl(x, *, axes):
    x = _require_kind(x, "iufc")
    if type(x) is not np.ndarray:  # a dask or cupy array: numpy dispatches np.sum, not reduce
        return np.sum(x, axis=axes, dtype=x.dtype)
    return np.add.reduce(x, axis=axes, dtype=x.dtype)  # np.sum without its Python layer


def _reduce_sum_abstract_eval(x, *, axes):
    _check_dtype_kind("reduce_sum", x, "iufc",
                      "it sums numbers. Convert booleans with convert_element_type first "
                      "(funcdiff.numpy.sum does this) or use reduce_or.")
    return _reduced_aval("reduce_sum", x, axes)


def _reduce_sum_transpose(ct, x, *, axes):
    shape = x.aval.shape
    if type(ct) in _CONCRETE and core.impls_run_directly():  # the eager tape's backward pass
        return [structural.broadcast_in_dim_p.raw_impl(
            ct, shape=shape, broadcast_dimensions=_kept(len(shape), axes))]
    return [_expand(ct, shape, axes)]


# the cotangents a sum's transpose broadcasts with numpy directly (a full sum's is a scalar)
_CONCRETE = frozenset({np.ndarray, np.float64, np.float32, np.complex128, np.complex64})


reduce_sum_p.abstract_eval = _reduce_sum_abstract_eval
reduce_sum_p.impl = checked_impl(_reduce_sum_impl, _reduce_sum_abstract_eval)
reduce_sum_p.batch = _reduce_batch(reduce_sum_p)
reduce_sum_p.cost = _reduction_cost
reduce_sum_p.lowering = lower_reduce(np.add, "iufc")
deflinear(reduce_sum_p, _reduce_sum_transpose)
reduce_sum = make_op(reduce_sum_p, "Sum of x over axes (a sorted tuple of axes).")
roles.REDUCE_SUM.fill(reduce_sum_p)
reduce_sum_p.traits |= {passes.ZERO_PRESERVING, passes.NEG_COMMUTING}


def _sum_of_broadcast(rw, eqn, bcast):
    """reduce_sum(broadcast_in_dim(x)) -> broadcast(reduce_sum(x) * count)."""
    x = bcast.invars[0]
    shape, dims = bcast.params["shape"], tuple(bcast.params["broadcast_dimensions"])
    axes = set(eqn.params["axes"])
    dtype = x.aval.dtype
    if dtype.kind not in "iuf" or list(dims) != sorted(set(dims)) \
            or any(shape[d] == 0 for d in axes):
        return None  # (an empty sum is 0 even of inf; count * inf would not be)
    count = 1
    for d in axes:  # summed axes x does not vary along: each adds shape[d] copies
        if d not in dims or x.aval.shape[dims.index(d)] != shape[d]:
            count *= shape[d]
    x_axes = tuple(k for k, d in enumerate(dims) if d in axes)
    y = rw.add(reduce_sum_p, x, axes=x_axes) if x_axes else x
    if count != 1:
        y = rw.add(elementwise.mul_p, y, scalar_literal(count, dtype))
    kept = [d for d in range(len(shape)) if d not in axes]
    out_aval = eqn.outvars[0].aval
    new_dims = tuple(kept.index(d) for k, d in enumerate(dims) if d not in axes)
    if y.aval.shape != out_aval.shape or new_dims != tuple(range(len(new_dims))):
        y = rw.add(structural.broadcast_in_dim_p, y, shape=out_aval.shape,
                   broadcast_dimensions=new_dims)
    return y


reduce_sum_p.rewrites = (
    _OVER_NO_AXES,
    rewrite("reduce_sum(broadcast x) -> broadcast(reduce_sum(x) * count)",
            (defined_by(structural.broadcast_in_dim_p),), _sum_of_broadcast),
)

# --- reduce_max, reduce_min ------------------------------------------------------


def _extremum_ties(x, out, axes):
    """The derivative of a max or min: the average over the positions attaining
    it (JAX's rule). Returns the mask of those positions (in x's dtype) and their
    count per result element; the jvp and the vjp below apply it each way."""
    x_aval = get_aval(x)
    hit = elementwise.eq(x, _expand(out, x_aval.shape, axes))
    hit = elementwise.convert_element_type(hit, new_dtype=x_aval.dtype)
    return hit, reduce_sum(hit, axes=axes)


def _extremum_jvp(prim):
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, axes=axes)
        hit, count = _extremum_ties(x, out, axes)
        return out, elementwise.div(reduce_sum(elementwise.mul(t, hit), axes=axes), count)
    return jvp


def _extremum_vjp(needed, out, x, *, axes):
    shape = get_aval(x).shape
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))  # out's shape, keepdims
    if type(x) is np.ndarray:  # concrete (the tape's residuals): numpy directly
        hit = (x == out.reshape(kept)).astype(x.dtype)  # (reshape: a tenth of expand_dims')
        count = np.add.reduce(hit, axis=axes)
    else:
        hit, count = _extremum_ties(x, out, axes)

    def pullback(ct):
        if type(ct) is np.ndarray and type(hit) is np.ndarray:  # concrete: numpy directly
            return ((ct / count).reshape(kept) * hit,)
        return (elementwise.mul(_expand(elementwise.div(ct, count), shape, axes), hit),)
    return pullback


def _extremum_card(name, numpy_fn, dispatched_fn):
    prim = Primitive(name)

    def abstract_eval(x, *, axes):
        aval = _reduced_aval(name, x, axes)
        _check_nonempty(name, x, axes)
        return aval
    def impl(x, *, axes):
        if type(x) is np.ndarray:
            return numpy_fn(x, axis=axes)
        return dispatched_fn(as_array(x), axis=axes)  # numpy dispatches np.max, not reduce
    prim.impl = checked_impl(impl, abstract_eval)
    prim.abstract_eval = abstract_eval
    prim.jvp = _extremum_jvp(prim)
    prim.vjp = _extremum_vjp
    prim.batch = _reduce_batch(prim)
    prim.cost = _reduction_cost
    return prim


# The ufuncs' reduce directly: np.max and np.min add a Python wrapper per call.
reduce_max_p = _extremum_card("reduce_max", np.maximum.reduce, np.max)
reduce_max = make_op(reduce_max_p, "Maximum of x over axes; NaN propagates. Ties share "
                                   "the derivative equally.")
reduce_max_p.lowering = lower_reduce(np.maximum, "iuf")
reduce_max_p.traits |= {passes.ZERO_PRESERVING, passes.EXTREMUM_REDUCTION}
reduce_max_p.rewrites = (_OVER_NO_AXES,)
reduce_min_p = _extremum_card("reduce_min", np.minimum.reduce, np.min)
reduce_min = make_op(reduce_min_p, "Minimum of x over axes; NaN propagates. Ties share "
                                   "the derivative equally.")
reduce_min_p.lowering = lower_reduce(np.minimum, "iuf")
reduce_min_p.traits |= {passes.ZERO_PRESERVING, passes.EXTREMUM_REDUCTION}
reduce_min_p.rewrites = (_OVER_NO_AXES,)

# --- reduce_prod -----------------------------------------------------------------

reduce_prod_p = Primitive("reduce_prod")


def _reduce_prod_impl(x, *, axes):
    x = _require_kind(x, "iufc")
    return np.prod(x, axis=axes, dtype=x.dtype)


def _reduce_prod_abstract_eval(x, *, axes):
    _check_dtype_kind("reduce_prod", x, "iufc",
                      "it multiplies numbers. Convert booleans with convert_element_type "
                      "first, or use reduce_and.")
    return _reduced_aval("reduce_prod", x, axes)


def _reduce_prod_jvp(primals, tangents, *, axes):
    # d prod(x) = sum_i t_i * prod_{k != i} x_k. The product of the others is
    # (exclusive cumprod from the left) * (exclusive cumprod from the right)
    # along the reduced axes flattened into one trailing axis: exact with
    # zeros, unlike prod(x) / x_i, and differentiable again via cumprod.
    (x,), (t,) = primals, tangents
    out = reduce_prod(x, axes=axes)
    if not axes:
        return out, t
    shape = get_aval(x).shape
    kept = _kept(len(shape), axes)
    flat_shape = tuple(shape[i] for i in kept) + (
        math.prod([shape[a] for a in axes]),)

    def flatten(v):
        v = structural.transpose(v, permutation=kept + axes)
        return structural.reshape(v, new_sizes=flat_shape)
    xf, tf = flatten(x), flatten(t)
    last = len(flat_shape) - 1
    others = elementwise.mul(cumulative.exclusive_cumprod(xf, axis=last, reverse=False),
                             cumulative.exclusive_cumprod(xf, axis=last, reverse=True))
    return out, reduce_sum(elementwise.mul(tf, others), axes=(last,))


reduce_prod_p.abstract_eval = _reduce_prod_abstract_eval
reduce_prod_p.impl = checked_impl(_reduce_prod_impl, _reduce_prod_abstract_eval)
reduce_prod_p.jvp = _reduce_prod_jvp
reduce_prod_p.batch = _reduce_batch(reduce_prod_p)
reduce_prod_p.cost = _reduction_cost
reduce_prod = make_op(reduce_prod_p, "Product of x over axes (exact derivative at zeros).")
reduce_prod_p.rewrites = (_OVER_NO_AXES,)

# --- argmax, argmin --------------------------------------------------------------


def _arg_extremum_card(name, numpy_fn):
    prim = Primitive(name)

    def abstract_eval(x, *, axis, index_dtype):
        if type(axis) is not int or not 0 <= axis < x.ndim:
            raise AxisError(
                f"the primitive {name} got axis={axis!r} for an array of shape {x.shape}; "
                f"it needs one int in [0, {x.ndim}). funcdiff.numpy.{name} normalises "
                "axis=None (by flattening) and negative axes.")
        if not isinstance(index_dtype, np.dtype) or index_dtype.kind not in "iu":
            raise DTypeError(
                f"the primitive {name} got index_dtype={index_dtype!r}; it needs an integer "
                "numpy dtype such as np.dtype('int64').")
        if x.shape[axis] == 0:
            raise ShapeError(
                f"the primitive {name} cannot search the empty axis {axis} of shape "
                f"{x.shape}: an empty sequence has no {name[3:]}imum.")
        return ShapedArray(x.shape[:axis] + x.shape[axis + 1:], index_dtype)

    def batch(vals, dims, *, axis, index_dtype):
        (x,), (d,) = vals, dims
        out = bind(prim, x, axis=axis + (axis >= d), index_dtype=index_dtype)
        return out, d - (axis < d)

    def impl(x, *, axis, index_dtype):
        if index_dtype.kind not in "iu":
            raise TypeError(index_dtype)
        return numpy_fn(x, axis=axis).astype(index_dtype)
    prim.impl = checked_impl(impl, abstract_eval)
    prim.abstract_eval = abstract_eval
    prim.nondifferentiable = True
    prim.batch = batch
    prim.cost = lambda x, *, axis, index_dtype: _reduction_cost(
        x, axes=(axis,), index_dtype=index_dtype)
    return prim


argmax_p = _arg_extremum_card("argmax", np.argmax)
argmax = make_op(argmax_p, "Index of the first maximum of x along axis (NaN counts as "
                           "the maximum); output dtype index_dtype.")
argmin_p = _arg_extremum_card("argmin", np.argmin)
argmin = make_op(argmin_p, "Index of the first minimum of x along axis (NaN counts as "
                           "the minimum); output dtype index_dtype.")

# --- reduce_and, reduce_or -------------------------------------------------------


def _boolean_card(name, numpy_fn):
    prim = Primitive(name)

    def abstract_eval(x, *, axes):
        _check_dtype_kind(name, x, "b", "it reduces booleans. Compare first (e.g. x != 0) "
                                        "to get a boolean array.")
        return _reduced_aval(name, x, axes)
    prim.impl = checked_impl(lambda x, *, axes: numpy_fn(_require_kind(x, "b"), axis=axes),
                             abstract_eval)
    prim.abstract_eval = abstract_eval
    prim.nondifferentiable = True
    prim.batch = _reduce_batch(prim)
    prim.cost = _reduction_cost
    return prim


reduce_and_p = _boolean_card("reduce_and", np.all)
reduce_and = make_op(reduce_and_p, "True where all of x over axes is True (True if empty).")
reduce_and_p.rewrites = (_OVER_NO_AXES,)
reduce_or_p = _boolean_card("reduce_or", np.any)
reduce_or = make_op(reduce_or_p, "True where any of x over axes is True (False if empty).")
reduce_or_p.rewrites = (_OVER_NO_AXES,)
