"""Cumulative primitives: running sums, products, maxima and minima along one axis.

Each takes ``axis`` (a non-negative int) and ``reverse`` (accumulate from the
end when True) and keeps its input's shape and dtype (numpy's ``cumsum``
widens small integers; these do not, so shape rules stay exact).

Derivatives, all in funcdiff operations so they differentiate again:

- ``cumsum`` is linear; its transpose is the cumsum running the other way.
- ``cumprod``: the tangent is the second half of the running product of dual
  numbers ``(x_i, t_i)``, computed by a Hillis-Steele scan of ``log2(n)``
  shift-and-multiply steps. Unlike ``cumprod(x) * cumsum(t / x)`` it is exact
  when ``x`` has zeros, and unlike a log-domain formula it handles negatives;
  it costs ``O(n log n)`` work and ``O(n)`` memory per step.
- ``cummax``/``cummin``: output ``i`` is the extremum of the prefix ``x[..i]``,
  so its tangent follows ``reduce_max``'s rule on that prefix: the average of
  the tangents of the prefix entries that attain the running extremum. With
  no ties this is the tangent at the position where the extremum was reached,
  and ``cummax(x)[-1]`` has exactly ``reduce_max(x)``'s derivative, ties
  included. The prefix averages are segmented sums over the runs where the
  running extremum is constant, built from cumsums and gathers at each run's
  start (``O(n)``). With ties, the run sums are differences of running sums, so
  their rounding error scales with the earlier tangents' sum.
"""

from __future__ import annotations

import numpy as np

from funcdiff.backends import as_array
from funcdiff.core import Primitive, bind, get_aval, instantiate
from funcdiff.errors import AxisError, DTypeError, InvalidArgumentError
from funcdiff.passes import traits as passes
from funcdiff.primitives import elementwise, indexing, slicing
from funcdiff.primitives.cards import checked_impl, deflinear, make_op, nbytes


def _accumulate(numpy_fn, kinds):
    """The numpy impl of a cumulative primitive, honouring ``reverse``."""
    def impl(x, *, axis, reverse):
        x = as_array(x)
        if x.dtype.kind not in kinds or x.ndim == 0:
            raise TypeError(x.dtype)  # checked_impl reports abstract_eval's error
        if reverse:
            return np.flip(numpy_fn(np.flip(x, axis), axis), axis)
        return numpy_fn(x, axis)
    return impl


def _abstract_eval(name, kinds, hint):
    def abstract_eval(x, *, axis, reverse):
        if type(axis) is not int or not 0 <= axis < x.ndim:
            raise AxisError(
                f"the primitive {name} got axis={axis!r} for an array of shape {x.shape}; it "
                f"needs one int in [0, {x.ndim}) (0-d arrays have no axis to accumulate "
                "along). funcdiff.numpy normalises negative axes and axis=None (flattening).")
        if type(reverse) is not bool:
            raise InvalidArgumentError(
                f"the primitive {name} got reverse={reverse!r}; it must be True or False")
        if x.dtype.kind not in kinds:
            raise DTypeError(f"the primitive {name} does not accept dtype {x.dtype}; {hint}")
        return x
    return abstract_eval


def _batch(prim):
    def rule(vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        return bind(prim, x, axis=axis + (axis >= d), reverse=reverse), d
    return rule


def _cost(x, *, axis, reverse):
    return {"flops": x.size, "bytes": 2 * nbytes(x)}


def _card(name, numpy_fn, kinds, hint):
    prim = Primitive(name)
    prim.abstract_eval = _abstract_eval(name, kinds, hint)
    prim.impl = checked_impl(_accumulate(numpy_fn, kinds), prim.abstract_eval)
    prim.batch = _batch(prim)
    prim.cost = _cost
    return prim


_NUMBERS_ONLY = ("it accumulates numbers. Convert booleans with convert_element_type first "
                 "(funcdiff.numpy.cumsum does this).")

# --- shared helpers for the derivative rules --------------------------------------


def shift(x, *, axis, offset, fill, reverse=False):
    """``x`` moved ``offset`` places along ``axis`` (towards the end, or towards the
    start when ``reverse``), the vacated places set to ``fill``: the building block
    of exclusive scans. One ``pad`` that crops the far side, so linear in ``x``."""
    aval = get_aval(x)
    offset = min(offset, aval.shape[axis])
    if offset == 0:
        return x
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (-offset, offset, 0) if reverse else (offset, -offset, 0)
    return slicing.pad(x, np.asarray(fill, dtype=aval.dtype), padding_config=tuple(config))


def exclusive_cumprod(x, *, axis, reverse=False):
    """Products of the entries strictly before each position (strictly after,
    when ``reverse``); 1 where there are none. Exact with zeros."""
    return shift(cumprod(x, axis=axis, reverse=reverse), axis=axis, offset=1, fill=1,
                 reverse=reverse)


# --- cumsum -----------------------------------------------------------------------

cumsum_p = _card("cumsum", lambda x, axis: np.cumsum(x, axis, dtype=x.dtype), "iufc",
                 _NUMBERS_ONLY)
deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [
    cumsum(ct, axis=axis, reverse=not reverse)])
cumsum = make_op(cumsum_p, "Running sum of x along axis (from the end if reverse).")
cumsum_p.traits |= {passes.ZERO_PRESERVING, passes.NEG_COMMUTING}

# --- cumprod ----------------------------------------------------------------------

cumprod_p = _card("cumprod", lambda x, axis: np.cumprod(x, axis, dtype=x.dtype), "iufc",
                  _NUMBERS_ONLY)


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    # Scan of dual numbers (c, dc): combining with the element `step` places
    # earlier gives (c * c_prev, dc * c_prev + c * dc_prev); after the steps
    # 1, 2, 4, ... < n each position has combined its whole prefix.
    (x,), (t,) = primals, tangents
    out = cumprod(x, axis=axis, reverse=reverse)
    n = get_aval(x).shape[axis]
    c, dc = x, instantiate(t)
    step = 1
    while step < n:
        c_prev = shift(c, axis=axis, offset=step, fill=1, reverse=reverse)
        dc_prev = shift(dc, axis=axis, offset=step, fill=0, reverse=reverse)
        dc = elementwise.add(elementwise.mul(dc, c_prev), elementwise.mul(c, dc_prev))
        step *= 2
        if step < n:
            c = elementwise.mul(c, c_prev)
    return out, dc


cumprod_p.jvp = _cumprod_jvp
cumprod = make_op(cumprod_p, "Running product of x along axis (from the end if reverse); "
                             "exact derivatives also where x has zeros.")

# --- cummax, cummin ---------------------------------------------------------------


def _running_extremum_jvp(prim):
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        m = bind(prim, x, axis=axis, reverse=reverse)
        aval = get_aval(x)
        hit = elementwise.convert_element_type(elementwise.eq(x, m), new_dtype=aval.dtype)
        hit_t = elementwise.mul(t, hit)
        # A run of constant running extremum starts where it differs from the previous
        # one (the NaN fill makes the first position a start; a NaN extremum starts a
        # run at every position, where the tangent becomes 0/0 = NaN like reduce_max's).
        starts = elementwise.ne(m, shift(m, axis=axis, offset=1, fill=np.nan, reverse=reverse))
        # Position of the current run's start: the latest start seen so far.
        index = elementwise.iota(np.int64, aval.shape, axis)
        none = np.asarray(aval.shape[axis] - 1 if reverse else 0, np.int64)
        start = (cummin if reverse else cummax)(elementwise.select(starts, index, none),
                                                axis=axis, reverse=reverse)

        def since_start(v):
            # Sum of v over the run so far: running sum now - running sum at the
            # start + v at the start. (now - start) is exactly 0 when there are no ties.
            so_far = cumsum(v, axis=axis, reverse=reverse)
            return elementwise.add(elementwise.sub(so_far, at_start(so_far)), at_start(v))

        def at_start(v):
            return indexing.take_along_axis(v, start, axis)
        return m, elementwise.div(since_start(hit_t), since_start(hit))
    return jvp


def _running_extremum_card(name, ufunc):
    prim = _card(name, ufunc.accumulate, "biuf", "")
    prim.jvp = _running_extremum_jvp(prim)
    return prim


cummax_p = _running_extremum_card("cummax", np.maximum)
cummax = make_op(cummax_p, "Running maximum of x along axis (from the end if reverse); NaN "
                           "propagates. Tangent: average over the prefix entries attaining it.")
cummax_p.traits |= {passes.ZERO_PRESERVING}
cummin_p = _running_extremum_card("cummin", np.minimum)
cummin = make_op(cummin_p, "Running minimum of x along axis (from the end if reverse); NaN "
                           "propagates. Tangent: average over the prefix entries attaining it.")
cummin_p.traits |= {passes.ZERO_PRESERVING}
