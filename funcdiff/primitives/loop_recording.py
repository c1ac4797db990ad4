"""Reverse mode of a ``while`` loop on concrete values: record it, differentiate a scan.

A while loop has no static trip count, so its linearization cannot be typed in
advance. When the values are concrete (eager ``grad``), the loop instead runs
forward now, one compiled forward step per iteration, recording each
iteration's residuals; its tangent is then a ``scan`` of the linear step over
those records, which reverse mode transposes like any scan. Under vmap a
predicate that differs across the batch is reduced with ``any_in_batch`` and
the step becomes ``select(pred, body(carry), carry)``, so finished members are
frozen (a loop whose predicate turns out to differ across the batch starts
over guarded). When the predicate has no concrete value (the primal side is
staged, as under jit) the loop cannot run now: ``record_loop`` returns None
and ``while_loop`` uses ``while_tangent``.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, ShapedArray, Zero, bind, get_aval, tangent_aval
from funcdiff.interpreters.call import call_p
from funcdiff.interpreters.programs import (cached, concrete_or_none, fixed_point, groups,
                                            linearize_jaxpr, materialize, nonzero, reorder, run)
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.primitives import elementwise, reductions, structural
from funcdiff.primitives.scan import scan_p


def record_loop(cconsts, bconsts, carry, bconsts_t, carry_t, guarded=False, *, cond_jaxpr,
                body_jaxpr, cond_nconsts, body_nconsts):
    """Run the loop now, one forward step per iteration, and return its carry and the
    tangent of the carry: a scan of the linear step over the recorded residuals.

    Returns None when the predicate has no concrete value, not even reduced over
    a vmap batch: the values are staged, and the loop cannot run now.
    """
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    carry_in = carry
    if guarded:  # step = select(pred, body(carry), carry), consts = cconsts + bconsts
        step = _guarded_body(cond_jaxpr, body_jaxpr, cond_nconsts)
        consts = list(cconsts) + list(bconsts)
        consts_t = [Zero(tangent_aval(get_aval(c))) for c in cconsts] + list(bconsts_t)
    else:
        step, consts, consts_t = body_jaxpr, list(bconsts), list(bconsts_t)
    c_nz = tuple(type(t) is not Zero for t in consts_t)
    carry_nz = tuple(type(t) is not Zero for t in carry_t)
    carry_nz = fixed_point(lambda nz: linearize_jaxpr(step, c_nz + nz, nz)[3], carry_nz)
    fwd, lin_scan, invariant, stacked = _recorded_programs(step, c_nz, carry_nz, len(consts))
    nk = len(carry)
    records: list[list] = [[] for _ in stacked]
    length = 0
    while True:
        pred = bind(call_p, *cconsts, *carry, jaxpr=cond_jaxpr, name="while_cond")[0]
        go = concrete_or_none(pred)
        if go is None:
            go = concrete_or_none(any_in_batch(pred))
            if go is None:
                return None
            if not guarded:  # members finish at different times: start over, guarded
                return record_loop(cconsts, bconsts, carry_in, bconsts_t, carry_t, True,
                                   **params)
        if not go:
            break
        outs = bind(call_p, *consts, *carry, jaxpr=fwd, name="while_body_fwd")
        carry, res = outs[:nk], outs[nk:]
        for record, k in zip(records, stacked):
            record.append(res[k])
        length += 1
    carry_avals = [tangent_aval(get_aval(c)) for c in carry]
    if length == 0:
        return list(carry), list(carry_t)
    xs = [structural.concatenate(*[structural.expand_dims(r, dimensions=(0,)) for r in rec],
                                 dimension=0) for rec in records]
    touts = iter(bind(scan_p, *[consts[i] for i in invariant], *nonzero(consts_t),
                      *[materialize(t, a) for t, a, nz in zip(carry_t, carry_avals, carry_nz)
                        if nz], *xs,
                      jaxpr=lin_scan, num_consts=len(invariant) + sum(c_nz),
                      num_carry=sum(carry_nz), length=length, reverse=False))
    return list(carry), [next(touts) if nz else Zero(a) for a, nz in zip(carry_avals, carry_nz)]


def _recorded_programs(step, c_nz, carry_nz, n_consts):
    """The step's forward program, and its linear program as a scan body over the
    recorded residuals; residuals that only forward a constant are not recorded."""
    def make():
        fwd, lin, res_avals, _, res_inputs = linearize_jaxpr(step, c_nz + carry_nz, carry_nz)
        invariant_k = [k for k, r in enumerate(res_inputs) if r is not None and r < n_consts]
        stacked = [k for k in range(len(res_avals)) if k not in invariant_k]
        n_res, nct, nkt = len(res_avals), sum(c_nz), sum(carry_nz)
        order = invariant_k + list(range(n_res, n_res + nct + nkt)) + stacked
        return fwd, reorder(lin, order), [res_inputs[k] for k in invariant_k], stacked
    return cached(step, ("recorded", c_nz, carry_nz), make)


def _guarded_body(cond_jaxpr, body_jaxpr, cond_nconsts):
    def make():
        nb = len(body_jaxpr.in_avals) - len(body_jaxpr.out_avals)

        def step(*args):
            cconsts, bconsts, carry = groups(args, cond_nconsts, nb)
            pred = run(cond_jaxpr, *cconsts, *carry)[0]
            new = run(body_jaxpr, *bconsts, *carry)
            return [elementwise.select(pred, n, c) for n, c in zip(new, carry)]
        return trace_to_jaxpr(step, cond_jaxpr.in_avals[:cond_nconsts] + body_jaxpr.in_avals)
    return cached(body_jaxpr, ("guarded", cond_jaxpr, cond_nconsts), make)


# any_in_batch: is the predicate true for any member of the enclosing vmap batches?
# Outside vmap it is the predicate itself; its batch rule reduces over the batch.
# Recording a loop under vmap uses it to run until every member is done.

any_in_batch_p = Primitive("any_in_batch")
any_in_batch_p.impl = lambda pred: np.asarray(pred, dtype=np.bool_)
any_in_batch_p.abstract_eval = lambda pred: ShapedArray((), np.dtype(np.bool_))
any_in_batch_p.nondifferentiable = True
any_in_batch_p.batch = lambda vals, dims: (
    any_in_batch(reductions.reduce_or(vals[0], axes=(dims[0],))), None)
any_in_batch_p.cost = lambda pred: {"flops": 0, "bytes": 2}


def any_in_batch(pred):
    """True when the boolean scalar ``pred`` holds for any member of the vmap batch."""
    return bind(any_in_batch_p, pred)
