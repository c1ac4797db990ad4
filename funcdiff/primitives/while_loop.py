"""The ``while`` primitive, and ``while_tangent``/``while_cotangent``, its reverse mode under jit.

``while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts] *cconsts *bconsts *carry``
repeats the body while the predicate holds. Forward mode runs a loop over
(primal, tangent) carries. Reverse mode needs the loop split into a forward and
a linear part, and a while loop has no static trip count: on concrete values
``loop_recording`` runs it now and differentiates a scan of that length; under
``jit`` the linear part is a ``while_tangent`` loop whose transpose,
``while_cotangent``, reruns the forward loop at run time keeping each
iteration's carry and walks back through them. Under vmap a batched predicate
runs the loop until every member is done, freezing the finished ones. The
public API is ``funcdiff.lax.while_loop`` and ``fori_loop``.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import (Primitive, ShapedArray, Zero, bind, get_aval, staging_active,
                           tangent_aval)
from funcdiff.errors import ControlFlowTypeError, DifferentiationError
from funcdiff.compiler.evaluator import COMPILE_AFTER, compiled, runner
from funcdiff.passes.pipeline import program_cost
from funcdiff.interpreters.programs import (batch_jaxpr, batch_size, cached, fixed_point,
                                            groups, jvp_jaxpr, linearize_jaxpr, materialize,
                                            nonzero, reorder, run, tangents_staged_apart,
                                            to_front, transpose_jaxpr, type_list,
                                            with_unused_inputs)
from funcdiff.interpreters import tape_control
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.primitives import elementwise, reductions
from funcdiff.primitives.cond import expand_to
from funcdiff.primitives.loop_recording import record_loop


while_p = Primitive("while", multiple_results=True)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = groups(args, cond_nconsts, body_nconsts)
    # The trip count is unknown: the programs start interpreted (runner) and are
    # compiled once the loop has run long enough for that to pay.
    cond_fn = runner(cond_jaxpr, "while_cond", 1, args)
    body_fn = runner(body_jaxpr, "while_body", 1, args)
    compile_at = COMPILE_AFTER // max(1, len(cond_jaxpr.jaxpr.eqns) + len(body_jaxpr.jaxpr.eqns))
    steps = 0
    while cond_fn(*cconsts, *carry)[0]:
        carry = body_fn(*bconsts, *carry)
        steps += 1
        if steps == compile_at:
            cond_fn, body_fn = compiled(cond_jaxpr, "while_cond"), compiled(body_jaxpr,
                                                                            "while_body")
    return list(carry)


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = groups(avals, cond_nconsts, body_nconsts)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0] != ShapedArray((), np.dtype(np.bool_)):
        raise ControlFlowTypeError(
            f"the predicate of while must be a boolean scalar, but it is {type_list(pred)}.")
    if cond_jaxpr.in_avals != cconsts + carry or body_jaxpr.in_avals != bconsts + carry \
            or body_jaxpr.out_avals != carry:
        raise ControlFlowTypeError(
            f"while received the carry {type_list(carry)}, but its body has type "
            f"{type_list(body_jaxpr.in_avals[body_nconsts:])} -> "
            f"{type_list(body_jaxpr.out_avals)}.")
    return list(carry)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    cconsts, bconsts, carry = groups(primals, cond_nconsts, body_nconsts)
    _, bconsts_t, carry_t = groups(tangents, cond_nconsts, body_nconsts)
    b_nz = tuple(type(t) is not Zero for t in bconsts_t)
    carry_nz = tuple(type(t) is not Zero for t in carry_t)
    carry_avals = [tangent_aval(get_aval(c)) for c in carry]
    if not any(b_nz + carry_nz):  # only the predicate's inputs have tangents
        return bind(while_p, *primals, **params), [Zero(a) for a in carry_avals]
    if tangents_staged_apart(primals, tangents):
        return _while_split(cconsts, bconsts, carry, bconsts_t, carry_t, **params)
    carry_nz = fixed_point(lambda nz: jvp_jaxpr(body_jaxpr, b_nz + nz, nz)[1], carry_nz)
    cond, body = _while_jvp_programs(cond_jaxpr, body_jaxpr, b_nz, carry_nz)
    n_bt = sum(b_nz)
    outs = bind(while_p, *cconsts, *bconsts, *nonzero(bconsts_t), *carry,
                *[materialize(t, a) for t, a, nz in zip(carry_t, carry_avals, carry_nz) if nz],
                cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cond_nconsts,
                body_nconsts=body_nconsts + n_bt)
    touts = iter(outs[len(carry):])
    return outs[:len(carry)], [next(touts) if nz else Zero(a)
                               for a, nz in zip(carry_avals, carry_nz)]


def _while_jvp_programs(cond_jaxpr, body_jaxpr, b_nz, carry_nz):
    """A loop over (primal, tangent) carries: the predicate ignores the tangents."""
    def make():
        jbody = jvp_jaxpr(body_jaxpr, b_nz + carry_nz, carry_nz)[0]
        nb, nk, nbt, nkt = len(b_nz), len(carry_nz), sum(b_nz), sum(carry_nz)
        order = [*range(nb), *range(nb + nk, nb + nk + nbt), *range(nb, nb + nk),
                 *range(nb + nk + nbt, nb + nk + nbt + nkt)]
        t_avals = [a for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
        return with_unused_inputs(cond_jaxpr, t_avals), reorder(jbody, order)
    return cached(body_jaxpr, ("while_jvp", cond_jaxpr, b_nz, carry_nz), make)


def _while_split(cconsts, bconsts, carry, bconsts_t, carry_t, **params):
    """Reverse mode of a loop. On concrete values: run it now, recording each
    iteration's residuals, and differentiate it as a scan of that many steps.
    On abstract values (the primal side staged, as under jit or make_jaxpr, or a
    predicate with no value): a ``while_tangent`` loop, whose transpose recomputes."""
    if not staging_active():
        recorded = record_loop(cconsts, bconsts, carry, bconsts_t, carry_t, **params)
        if recorded is not None:
            return recorded
    return _while_tangent_loop(cconsts, bconsts, carry, bconsts_t, carry_t, **params)


def _while_batch(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = batch_size(vals, dims)
    cconsts, bconsts, carry = groups(vals, cond_nconsts, body_nconsts)
    c_dims, b_dims, k_dims = groups(dims, cond_nconsts, body_nconsts)
    c_b = tuple(d is not None for d in c_dims)
    b_b = tuple(d is not None for d in b_dims)
    carry_b = fixed_point(lambda m: batch_jaxpr(body_jaxpr, size, b_b + m, m)[1],
                          tuple(d is not None for d in k_dims))
    pred_batched = batch_jaxpr(cond_jaxpr, size, c_b + carry_b, (False,))[1][0]
    if pred_batched:
        carry_b = (True,) * len(carry)
    cconsts = to_front(cconsts, c_dims, c_b, size)
    bconsts = to_front(bconsts, b_dims, b_b, size)
    carry = to_front(carry, k_dims, carry_b, size)
    if pred_batched:  # run until every member is done, freezing the finished ones
        cond, body = _batched_predicate_loop(cond_jaxpr, body_jaxpr, size, c_b, b_b)
        outs = bind(while_p, *cconsts, *cconsts, *bconsts, *carry, cond_jaxpr=cond,
                    body_jaxpr=body, cond_nconsts=cond_nconsts,
                    body_nconsts=cond_nconsts + body_nconsts)
    else:
        outs = bind(while_p, *cconsts, *bconsts, *carry,
                    cond_jaxpr=batch_jaxpr(cond_jaxpr, size, c_b + carry_b, (False,))[0],
                    body_jaxpr=batch_jaxpr(body_jaxpr, size, b_b + carry_b, carry_b)[0],
                    cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return outs, [0 if b else None for b in carry_b]


def _batched_predicate_loop(cond_jaxpr, body_jaxpr, size, c_b, b_b):
    def make():
        every = (True,) * len(body_jaxpr.out_avals)
        cond_b = batch_jaxpr(cond_jaxpr, size, c_b + every, (True,))[0]
        body_b = batch_jaxpr(body_jaxpr, size, b_b + every, every)[0]
        n_c = len(c_b)

        def cond(*args):
            return [reductions.reduce_or(run(cond_b, *args)[0], axes=(0,))]

        def body(*args):
            cconsts, bconsts, carry = groups(args, n_c, len(b_b))
            pred = run(cond_b, *cconsts, *carry)[0]
            new = run(body_b, *bconsts, *carry)
            return [elementwise.select(expand_to(pred, get_aval(n).ndim), n, c)
                    for n, c in zip(new, carry)]
        return (trace_to_jaxpr(cond, cond_b.in_avals),
                trace_to_jaxpr(body, cond_b.in_avals[:n_c] + body_b.in_avals))
    return cached(body_jaxpr, ("batched_pred", cond_jaxpr, size, c_b, b_b), make)


def _while_cost(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # the trip count is known only at run time: this is the cost of one iteration
    c, b = program_cost(cond_jaxpr), program_cost(body_jaxpr)
    return {"flops": c["flops"] + b["flops"], "bytes": c["bytes"] + b["bytes"]}


def _while_on_tape(trace, args, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # the eager tape runs the loop itself, recording each iteration's operations
    cconsts, bconsts, carry = groups(args, cond_nconsts, body_nconsts)
    while bool(tape_control.value(trace, run(cond_jaxpr, *cconsts, *carry)[0])):
        carry = run(body_jaxpr, *bconsts, *carry)
    return list(carry)


while_p.impl = _while_impl
while_p.abstract_eval = _while_abstract_eval
while_p.jvp = _while_jvp
while_p.batch = _while_batch
while_p.cost = _while_cost
while_p.tape_rule = _while_on_tape


# ---------------------------------------------------------------------------
# while_tangent and while_cotangent: reverse mode of a loop under jit
#
# Under jit the trip count is known only when the program runs, so no residual
# buffer can be typed. ``while_tangent`` is the tangent half of a loop over
# (primal, tangent) pairs: it takes the loop's primal inputs (residuals) and
# the tangents of the body's consts and carries (linear), reruns the primal
# loop beside the tangents and returns the carries' tangents. Its transpose
# ``while_cotangent`` reruns the primal loop keeping every iteration's carry
# (memory: n carries for n iterations, during the backward pass only), then
# walks them backwards through the transposed step. Each is the other's
# transpose. Params: cond_jaxpr, body_jaxpr, cond_nconsts, b_nz and carry_nz
# (which body consts and carries have tangents); operands: cond consts, body
# consts, initial carry, then the tangents (or cotangents) marked nonzero.

def _while_tangent_loop(cconsts, bconsts, carry, bconsts_t, carry_t, *, cond_jaxpr,
                        body_jaxpr, cond_nconsts, body_nconsts):
    b_nz = tuple(type(t) is not Zero for t in bconsts_t)
    carry_nz = fixed_point(lambda nz: jvp_jaxpr(body_jaxpr, b_nz + nz, nz)[1],
                           tuple(type(t) is not Zero for t in carry_t))
    carry_avals = [tangent_aval(get_aval(c)) for c in carry]
    outs = bind(while_p, *cconsts, *bconsts, *carry, cond_jaxpr=cond_jaxpr,
                body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    touts = iter(bind(while_tangent_p, *cconsts, *bconsts, *carry, *nonzero(bconsts_t),
                      *[materialize(t, a) for t, a, nz in zip(carry_t, carry_avals, carry_nz)
                        if nz],
                      cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                      b_nz=b_nz, carry_nz=carry_nz))
    return outs, [next(touts) if nz else Zero(a) for a, nz in zip(carry_avals, carry_nz)]


def _transposed_step(body_jaxpr, b_nz, carry_nz):
    """``(bconsts, carry, ct of carry') -> (cts of bconsts_t, ct of carry_t)``: the
    transpose of one step's linear part at ``carry`` (recomputing its residuals)."""
    def make():
        nb, nk = len(b_nz), len(carry_nz)
        fwd, lin, res_avals, out_nz, _ = linearize_jaxpr(body_jaxpr, b_nz + carry_nz, carry_nz)
        lin_t = transpose_jaxpr(lin, (False,) * len(res_avals) + (True,) * (sum(b_nz) + sum(
            carry_nz)), tuple(k for k, o in zip(carry_nz, out_nz) if o))
        ct_avals = [a for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]

        def step_t(*args):
            return run(lin_t, *run(fwd, *args[:nb + nk])[nk:], *args[nb + nk:])
        return trace_to_jaxpr(step_t, list(body_jaxpr.in_avals) + ct_avals)
    return cached(body_jaxpr, ("transposed_step", b_nz, carry_nz), make)


def _tangent_groups(items, cond_nconsts, b_nz, carry_nz):
    return groups(items, cond_nconsts, len(b_nz), len(carry_nz))


def _while_tangent_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    cconsts, bconsts, carry, tangents = _tangent_groups(args, cond_nconsts, b_nz, carry_nz)
    cond, body = _while_jvp_programs(cond_jaxpr, body_jaxpr, b_nz, carry_nz)
    outs = _while_impl(*cconsts, *bconsts, *tangents[:sum(b_nz)], *carry,
                       *tangents[sum(b_nz):], cond_jaxpr=cond, body_jaxpr=body,
                       cond_nconsts=cond_nconsts, body_nconsts=len(b_nz) + sum(b_nz))
    return outs[len(carry):]


def _while_tangent_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    return [a for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]


def _while_tangent_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz,
                       carry_nz):
    # while_tangent is the tangent half of a loop over pairs: differentiate that loop
    cond, body = _while_jvp_programs(cond_jaxpr, body_jaxpr, b_nz, carry_nz)
    nbt, nk = sum(b_nz), len(carry_nz)

    def joint(vals):
        cconsts, bconsts, carry, lin = _tangent_groups(vals, cond_nconsts, b_nz, carry_nz)
        return [*cconsts, *bconsts, *lin[:nbt], *carry, *lin[nbt:]]
    outs, touts = _while_jvp(joint(primals), joint(tangents), cond_jaxpr=cond, body_jaxpr=body,
                             cond_nconsts=cond_nconsts, body_nconsts=len(b_nz) + nbt)
    return outs[nk:], touts[nk:]


def _while_tangent_transpose(cts, *args, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    n_res = cond_nconsts + len(b_nz) + len(carry_nz)
    if any(is_undefined(a) for a in args[:n_res]):
        raise DifferentiationError("while_tangent is linear only in its tangent operands; "
                                   "this is a bug in a rule producing it, please report it.")
    avals = [a for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
    outs = bind(while_cotangent_p, *args[:n_res], *map(materialize, cts, avals),
                cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                b_nz=b_nz, carry_nz=carry_nz)
    return [None] * n_res + [o if is_undefined(a) else None for o, a in zip(outs, args[n_res:])]


def _batched_tangent_loop(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    """Operands and params of the batched ``while_tangent``/``while_cotangent``; all
    (co)tangents are per member, and so are the consts and carries they pair with."""
    size = batch_size(vals, dims)
    cconsts, bconsts, carry, lin = _tangent_groups(vals, cond_nconsts, b_nz, carry_nz)
    c_dims, b_dims, k_dims, lin_dims = _tangent_groups(dims, cond_nconsts, b_nz, carry_nz)
    c_b = tuple(d is not None for d in c_dims)
    b_b = tuple(d is not None or nz for d, nz in zip(b_dims, b_nz))
    k_b = fixed_point(lambda m: batch_jaxpr(body_jaxpr, size, b_b + m, m)[1],
                      tuple(d is not None or nz for d, nz in zip(k_dims, carry_nz)))
    pred_batched = batch_jaxpr(cond_jaxpr, size, c_b + k_b, (False,))[1][0]
    if pred_batched:
        k_b = (True,) * len(k_b)
    cconsts = to_front(cconsts, c_dims, c_b, size)
    bconsts = to_front(bconsts, b_dims, b_b, size)
    carry = to_front(carry, k_dims, k_b, size)
    lin = to_front(lin, lin_dims, (True,) * len(lin), size)
    if pred_batched:
        cond, body = _batched_predicate_loop(cond_jaxpr, body_jaxpr, size, c_b, b_b)
        return [*cconsts, *cconsts, *bconsts, *carry, *lin], dict(
            cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cond_nconsts,
            b_nz=(False,) * cond_nconsts + b_nz, carry_nz=carry_nz)
    return [*cconsts, *bconsts, *carry, *lin], dict(
        cond_jaxpr=batch_jaxpr(cond_jaxpr, size, c_b + k_b, (False,))[0],
        body_jaxpr=batch_jaxpr(body_jaxpr, size, b_b + k_b, k_b)[0],
        cond_nconsts=cond_nconsts, b_nz=b_nz, carry_nz=carry_nz)


def _tangent_loop_batch(prim):
    def rule(vals, dims, **params):
        vals, params = _batched_tangent_loop(vals, dims, **params)
        outs = bind(prim, *vals, **params)
        return outs, [0] * len(outs)
    return rule


def _tangent_loop_cost(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    # per iteration: the primal step and its linear (or transposed) part
    c, b = program_cost(cond_jaxpr), program_cost(body_jaxpr)
    return {"flops": c["flops"] + 3 * b["flops"], "bytes": c["bytes"] + 3 * b["bytes"]}


while_tangent_p = Primitive("while_tangent", multiple_results=True)
while_tangent_p.impl = _while_tangent_impl
while_tangent_p.abstract_eval = _while_tangent_abstract_eval
while_tangent_p.jvp = _while_tangent_jvp
while_tangent_p.transpose = _while_tangent_transpose
while_tangent_p.batch = _tangent_loop_batch(while_tangent_p)
while_tangent_p.cost = _tangent_loop_cost


def _while_cotangent_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    cconsts, bconsts, carry, cts = _tangent_groups(args, cond_nconsts, b_nz, carry_nz)
    cond_fn, body_fn = compiled(cond_jaxpr, "while_cond"), compiled(body_jaxpr, "while_body")
    step_t = compiled(_transposed_step(body_jaxpr, b_nz, carry_nz), "while_step_T")
    carries = []  # the carry entering each iteration, kept for the backward sweep
    while cond_fn(*cconsts, *carry)[0]:
        carries.append(carry)
        carry = body_fn(*bconsts, *carry)
    nbt, ct_consts = sum(b_nz), None
    while carries:
        outs = step_t(*bconsts, *carries.pop(), *cts)
        cts = outs[nbt:]
        ct_consts = outs[:nbt] if ct_consts is None else \
            [np.add(a, b) for a, b in zip(ct_consts, outs[:nbt])]
    if ct_consts is None:
        ct_consts = [np.zeros(a.shape, a.dtype) for a, nz
                     in zip(body_jaxpr.in_avals[:len(b_nz)], b_nz) if nz]
    return list(ct_consts) + list(cts)


def _while_cotangent_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz,
                                   carry_nz):
    return [a for a, nz in zip(body_jaxpr.in_avals[:len(b_nz)], b_nz) if nz] + \
        [a for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]


def _while_cotangent_jvp(primals, tangents, **params):
    n_res = params["cond_nconsts"] + len(params["b_nz"]) + len(params["carry_nz"])
    if any(type(t) is not Zero for t in tangents[:n_res]):
        raise DifferentiationError(
            "second derivatives of fd.lax.while_loop in reverse mode under jit (e.g. "
            "jit(hessian(f)) or jvp of jit(grad(f))) are not supported: the backward loop "
            "reruns the forward loop at run time. Take them outside jit (eager loops are "
            "recorded and differentiate to any order), or use fd.lax.fori_loop with "
            "concrete bounds or fd.lax.scan.")
    avals = [get_aval(p) for p in primals[n_res:]]
    outs = bind(while_cotangent_p, *primals, **params)
    touts = bind(while_cotangent_p, *primals[:n_res], *map(materialize, tangents[n_res:], avals),
                 **params)
    return outs, touts


def _while_cotangent_transpose(cts, *args, **params):
    n_res = params["cond_nconsts"] + len(params["b_nz"]) + len(params["carry_nz"])
    avals = _while_cotangent_abstract_eval(**params)
    outs = bind(while_tangent_p, *args[:n_res], *map(materialize, cts, avals), **params)
    return [None] * n_res + [o if is_undefined(a) else None for o, a in zip(outs, args[n_res:])]


while_cotangent_p = Primitive("while_cotangent", multiple_results=True)
while_cotangent_p.impl = _while_cotangent_impl
while_cotangent_p.abstract_eval = _while_cotangent_abstract_eval
while_cotangent_p.jvp = _while_cotangent_jvp
while_cotangent_p.transpose = _while_cotangent_transpose
while_cotangent_p.batch = _tangent_loop_batch(while_cotangent_p)
while_cotangent_p.cost = _tangent_loop_cost
