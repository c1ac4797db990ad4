"""Structured control flow: the primitives ``cond``, ``while`` and ``scan``.

Each holds its branches or loop body as closed sub-programs (``ClosedJaxpr``
params) and runs them compiled. Their rules never look at the user's Python
functions: they transform the sub-programs (jvp, linearize, transpose, vmap),
cache the derived programs per sub-program, and bind the primitive again, so
every transform of a loop is again a loop.

- ``cond[branches] index *args`` runs ``branches[index]`` (index clamped).
- ``while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts] *cconsts *bconsts *carry``.
- ``scan[jaxpr num_consts num_carry length reverse] *consts *carry *xs`` returns
  the final carry and the per-iteration outputs stacked along a new axis 0.

Forward mode runs a loop over (primal, tangent) pairs. Reverse mode first
*linearizes*: when the tangents are staged apart from the primals (inside
``linearize``), a jvp rule splits the sub-program into a forward part (outputs
plus residuals, stacked per iteration for ``scan``) and a linear part, and
transposing the linear part gives a ``cond`` of transposed branches or a
``scan`` running the other way. A ``while`` loop has no static trip count.
On concrete values (eager ``grad``) it runs forward now, records each
iteration's residuals and differentiates as a scan of that length; under vmap
a batched predicate is reduced with ``any_in_batch`` and finished members are
frozen. Under ``jit`` the linear part is a ``while_tangent`` loop whose
transpose, ``while_cotangent``, reruns the forward loop at run time keeping
each iteration's carry and walks back through them.
The public API with pytrees and checks is ``funcdiff.lax``.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import dtypes
from funcdiff.core import (Primitive, ShapedArray, Tracer, Zero, bind, find_top_trace,
                           get_aval, new_main, tangent_aval, zeros_array)
from funcdiff.errors import (ConcretizationError, ControlFlowTypeError,
                             DifferentiationError)
from funcdiff.interpreters.batching import BatchTrace, BatchTracer, move_batch_axis
from funcdiff.interpreters.call import call_p, compiled
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.interpreters.staging import JaxprTrace, JaxprTracer, trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from funcdiff.ir import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from funcdiff.primitives import elementwise, reductions, structural

# ---------------------------------------------------------------------------
# Programs derived from sub-programs, cached per sub-program

_derived: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _cached(jaxpr: ClosedJaxpr, key: tuple, make: Callable[[], Any]) -> Any:
    cache = _derived.get(jaxpr)
    if cache is None:
        cache = _derived[jaxpr] = {}
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _run(jaxpr: ClosedJaxpr, *args: Any) -> list:
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _reorder(jaxpr: ClosedJaxpr, in_order: Sequence[int] | None = None,
             out_order: Sequence[int] | None = None) -> ClosedJaxpr:
    """The same program with its inputs and/or outputs listed in another order."""
    j = jaxpr.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(j.constvars, list(invars), j.eqns, list(outvars)), jaxpr.consts)


def _with_unused_inputs(jaxpr: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    j = jaxpr.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, list(j.invars) + [Var(a) for a in avals], j.eqns,
                             j.outvars), jaxpr.consts)


def _groups(items: Sequence[Any], *sizes: int) -> list[list]:
    out, start = [], 0
    for n in sizes:
        out.append(list(items[start:start + n]))
        start += n
    out.append(list(items[start:]))
    return out


def _materialize(ct: Any, aval: ShapedArray) -> Any:
    return zeros_array(aval) if ct is None or type(ct) is Zero else ct


def _nonzero(ts: Sequence[Any]) -> list:
    return [t for t in ts if type(t) is not Zero]


def jvp_jaxpr(jaxpr: ClosedJaxpr, nonzeros: tuple[bool, ...], instantiate: tuple[bool, ...]):
    """``(primals, nonzero tangents) -> (outs, nonzero tangent outs)`` and which outs
    have tangents; tangent outs marked in ``instantiate`` are always present."""
    def make():
        in_avals, out_nz = jaxpr.in_avals, []

        def fun(*args):
            primals, tans = args[:len(in_avals)], iter(args[len(in_avals):])
            tangents = [next(tans) if nz else Zero(tangent_aval(a))
                        for a, nz in zip(in_avals, nonzeros)]
            outs, touts = jvp_flat(lambda *a: _run(jaxpr, *a), primals, tangents)
            out_nz[:] = [dtypes.is_float(a.dtype) and (inst or type(t) is not Zero)
                         for a, t, inst in zip(jaxpr.out_avals, touts, instantiate)]
            return list(outs) + [_materialize(t, a) for t, a, nz
                                 in zip(touts, jaxpr.out_avals, out_nz) if nz]
        t_avals = [a for a, nz in zip(in_avals, nonzeros) if nz]
        return trace_to_jaxpr(fun, list(in_avals) + t_avals), tuple(out_nz)
    return _cached(jaxpr, ("jvp", nonzeros, instantiate), make)


def linearize_jaxpr(jaxpr: ClosedJaxpr, nonzeros: tuple[bool, ...],
                    instantiate: tuple[bool, ...]):
    """Split ``jaxpr`` into a forward program ``primals -> outs + residuals`` and a
    linear program ``residuals + nonzero tangents -> nonzero tangent outs``.

    Returns ``(forward, linear, residual avals, out_nonzeros, res_inputs)`` where
    ``res_inputs[k]`` is the input position a residual merely forwards, or None.
    """
    def make():
        record: dict = {}

        def forward(*primals):
            outs, lin = linearize_flat(lambda *a: _run(jaxpr, *a), primals,
                                       in_mask=list(nonzeros))
            res_idx = [i for i, c in enumerate(lin.jaxpr.consts) if isinstance(c, JaxprTracer)]
            residuals = [lin.jaxpr.consts[i] for i in res_idx]
            record.update(lin=lin, res_idx=res_idx, res_inputs=tuple(
                next((k for k, p in enumerate(primals) if p is r), None) for r in residuals))
            return list(outs) + residuals

        fwd = trace_to_jaxpr(forward, jaxpr.in_avals)
        lin, res_idx = record["lin"], record["res_idx"]
        out_avals = jaxpr.out_avals
        out_nz = tuple(dtypes.is_float(a.dtype) and (inst or not z)
                       for a, z, inst in zip(out_avals, lin.out_is_zero, instantiate))
        res_avals = [get_aval(lin.jaxpr.consts[i]) for i in res_idx]
        t_avals = [a for a, nz in zip(jaxpr.in_avals, nonzeros) if nz]

        def linear(*args):
            res, tangents = iter(args[:len(res_idx)]), args[len(res_idx):]
            res_set = set(res_idx)
            consts = [next(res) if i in res_set else c for i, c in enumerate(lin.jaxpr.consts)]
            staged = iter(eval_jaxpr(lin.jaxpr.jaxpr, consts, *tangents))
            touts = [None if z else next(staged) for z in lin.out_is_zero]
            return [_materialize(t, a) for t, a, nz in zip(touts, out_avals, out_nz) if nz]

        linear_jaxpr = trace_to_jaxpr(linear, res_avals + t_avals)
        return fwd, linear_jaxpr, res_avals, out_nz, record["res_inputs"]
    return _cached(jaxpr, ("linearize", nonzeros, instantiate), make)


def transpose_jaxpr(jaxpr: ClosedJaxpr, linear: tuple[bool, ...], ct_nonzeros: tuple[bool, ...]):
    """``(non-linear inputs, nonzero cotangents) -> cotangents of the linear inputs``."""
    def make():
        in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
        n_defined = sum(not l for l in linear)

        def backward(*args):
            defined, cts = iter(args[:n_defined]), iter(args[n_defined:])
            linear_args = [UndefinedPrimal(a) if l else next(defined)
                           for a, l in zip(in_avals, linear)]
            cts_out = [next(cts) if nz else Zero(a) for a, nz in zip(out_avals, ct_nonzeros)]
            cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, linear_args, cts_out)
            return [_materialize(ct, a) for ct, a, l in zip(cts_in, in_avals, linear) if l]
        avals = [a for a, l in zip(in_avals, linear) if not l] + \
                [a for a, nz in zip(out_avals, ct_nonzeros) if nz]
        return trace_to_jaxpr(backward, avals)
    return _cached(jaxpr, ("transpose", linear, ct_nonzeros), make)


def batch_jaxpr(jaxpr: ClosedJaxpr, size: int, batched: tuple[bool, ...],
                force: tuple[bool, ...]):
    """The program over inputs batched along axis 0 where ``batched``; returns it and
    which outputs are batched (along axis 0; those in ``force`` always are)."""
    def make():
        out_batched: list = []

        def fun(*args):
            with new_main(BatchTrace, size) as main:
                ins = [BatchTracer(main.trace, a, 0) if b else a for a, b in zip(args, batched)]
                outs = _run(jaxpr, *ins)
                results = []
                for o, f in zip(outs, force):
                    val, bdim = ((o.val, o.bdim) if isinstance(o, BatchTracer)
                                 and o._trace.main is main else (o, None))
                    out_batched.append(bdim is not None or f)
                    results.append(val if bdim is None and not f
                                   else move_batch_axis(val, bdim, 0, size))
                return results
        avals = [ShapedArray((size,) + a.shape, a.dtype) if b else a
                 for a, b in zip(jaxpr.in_avals, batched)]
        return trace_to_jaxpr(fun, avals), tuple(out_batched)
    return _cached(jaxpr, ("batch", size, batched, force), make)


def _tangents_staged_apart(primals: Sequence[Any], tangents: Sequence[Any]) -> bool:
    """True inside ``linearize``: the tangents are staged into a linear program by a
    trace above the one computing the primals, so a loop over (primal, tangent)
    pairs would stage primal work into the linear program; the rule must split."""
    nonzero = _nonzero(tangents)
    if not nonzero:
        return False
    top = find_top_trace(nonzero)
    return isinstance(top, JaxprTrace) and top.main.level > find_top_trace(primals).main.level


def _concrete_or_none(x: Any) -> Any:
    if not isinstance(x, Tracer):
        return x
    try:
        return x.to_concrete("control flow")
    except ConcretizationError:
        return None


def _batch_size(vals, dims) -> int:
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def _to_front(vals, dims, batched, size):
    """Each value with its batch axis at 0 where ``batched`` (broadcast if it had none)."""
    return [move_batch_axis(v, d, 0, size) if b else v for v, d, b in zip(vals, dims, batched)]


def _type_list(avals: Sequence[ShapedArray]) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _program_cost(jaxpr: ClosedJaxpr) -> dict:
    from funcdiff.interpreters.passes import program_cost
    return program_cost(jaxpr)


# ---------------------------------------------------------------------------
# cond: run one of several branches, chosen by an integer index

cond_p = Primitive("cond", multiple_results=True)


def _clamp(i: Any, n: int) -> int:
    return min(max(int(i), 0), n - 1)


def _cond_impl(index, *args, branches):
    return compiled(branches[_clamp(index, len(branches))], "cond_branch")(*args)


def _cond_abstract_eval(index, *args, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise ControlFlowTypeError(
            f"the primitive cond needs a scalar integer index, but got {index.str_short()}. "
            "fd.lax.cond converts its boolean predicate; fd.lax.switch takes an integer.")
    for i, b in enumerate(branches):
        if list(b.in_avals) != list(args) or b.out_avals != branches[0].out_avals:
            raise ControlFlowTypeError(
                f"cond branch {i} has type {_type_list(b.in_avals)} -> "
                f"{_type_list(b.out_avals)}, but the operands are {_type_list(args)} and "
                f"branch 0 returns {_type_list(branches[0].out_avals)}.")
    return list(branches[0].out_avals)


def _union(masks: Sequence[tuple[bool, ...]]) -> tuple[bool, ...]:
    return tuple(any(m) for m in zip(*masks))


def _cond_jvp(primals, tangents, *, branches):
    index, args, arg_tangents = primals[0], primals[1:], tangents[1:]
    i = _concrete_or_none(index)
    if i is not None:  # a known index: differentiate just the branch that runs
        branch = branches[_clamp(i, len(branches))]
        return jvp_flat(lambda *a: _run(branch, *a), args, arg_tangents)
    nonzeros = tuple(type(t) is not Zero for t in arg_tangents)
    out_avals = branches[0].out_avals
    n_out, none = len(out_avals), (False,) * len(out_avals)
    if _tangents_staged_apart(args, arg_tangents):
        fwds, lins, out_nz = _cond_linearized(branches, nonzeros)
        outs = bind(cond_p, index, *args, branches=fwds)
        touts = iter(bind(cond_p, index, *outs[n_out:], *_nonzero(arg_tangents), branches=lins))
    else:
        out_nz = _union([jvp_jaxpr(b, nonzeros, none)[1] for b in branches])
        jvps = tuple(jvp_jaxpr(b, nonzeros, out_nz)[0] for b in branches)
        outs = bind(cond_p, index, *args, *_nonzero(arg_tangents), branches=jvps)
        touts = iter(outs[n_out:])
    return outs[:n_out], [next(touts) if nz else Zero(tangent_aval(a))
                          for a, nz in zip(out_avals, out_nz)]


def _cond_linearized(branches, nonzeros):
    """Forward branches (outputs + the residuals of every branch, zeros for the
    branches not taken) and linear branches (all residuals + tangents -> tangents)."""
    def make():
        none = (False,) * len(branches[0].out_avals)
        out_nz = _union([linearize_jaxpr(b, nonzeros, none)[3] for b in branches])
        parts = [linearize_jaxpr(b, nonzeros, out_nz) for b in branches]
        all_res = [a for p in parts for a in p[2]]
        fwds, lins, start = [], [], 0
        for fwd, lin, res_avals, _, _ in parts:
            n_res, n_out = len(res_avals), len(branches[0].out_avals)

            def forward(*args, fwd=fwd, start=start, n_res=n_res):
                outs = _run(fwd, *args)
                zeros = [zeros_array(a) for a in all_res]
                return outs[:n_out] + zeros[:start] + outs[n_out:] + zeros[start + n_res:]
            fwds.append(trace_to_jaxpr(forward, fwd.in_avals))
            t_avals = lin.in_avals[n_res:]
            lins.append(trace_to_jaxpr(
                lambda *a, lin=lin, start=start, n_res=n_res:
                    _run(lin, *a[start:start + n_res], *a[len(all_res):]),
                all_res + list(t_avals)))
            start += n_res
        return tuple(fwds), tuple(lins), out_nz
    # the key holds the other branches, so their identity cannot be reused while cached
    return _cached(branches[0], ("cond_linearize", branches[1:], nonzeros), make)


def _cond_transpose(cts, index, *args, branches):
    if is_undefined(index):
        raise DifferentiationError("cond cannot be transposed with respect to its index")
    linear = tuple(is_undefined(a) for a in args)
    ct_nz = tuple(type(c) is not Zero for c in cts)
    transposed = tuple(transpose_jaxpr(b, linear, ct_nz) for b in branches)
    defined = [a for a in args if not is_undefined(a)]
    cts_in = iter(bind(cond_p, index, *defined, *_nonzero(cts), branches=transposed))
    return [None] + [next(cts_in) if l else None for l in linear]


def _cond_batch(vals, dims, *, branches):
    size = _batch_size(vals, dims)
    (index, *args), (index_dim, *arg_dims) = vals, dims
    batched = tuple(d is not None for d in arg_dims)
    args = _to_front(args, arg_dims, batched, size)
    n_out = len(branches[0].out_avals)
    if index_dim is None:  # one branch for the whole batch
        out_b = _union([batch_jaxpr(b, size, batched, (False,) * n_out)[1] for b in branches])
        new = tuple(batch_jaxpr(b, size, batched, out_b)[0] for b in branches)
        outs = bind(cond_p, index, *args, branches=new)
        return outs, [0 if b else None for b in out_b]
    # a branch per member: compute every branch, then select (clamping like impl)
    index = move_batch_axis(index, index_dim, 0, size)
    result = None
    for i, b in enumerate(branches):
        outs = _run(batch_jaxpr(b, size, batched, (True,) * n_out)[0], *args)
        if result is None:
            result = outs
            continue
        take = elementwise.ge(index, np.asarray(i, get_aval(index).dtype))
        result = [elementwise.select(_expand_to(take, get_aval(o).ndim), o, r)
                  for o, r in zip(outs, result)]
    return result, [0] * n_out


def _expand_to(pred, ndim: int):
    """A batched (size,) predicate reshaped to broadcast against rank-``ndim`` values."""
    size = get_aval(pred).shape[0]
    return structural.reshape(pred, new_sizes=(size,) + (1,) * (ndim - 1)) if ndim > 1 else pred


def _cond_cost(index, *args, branches):
    costs = [_program_cost(b) for b in branches]
    return {"flops": max(c["flops"] for c in costs), "bytes": max(c["bytes"] for c in costs)}


cond_p.impl = _cond_impl
cond_p.abstract_eval = _cond_abstract_eval
cond_p.jvp = _cond_jvp
cond_p.transpose = _cond_transpose  # reached only for conds produced by linearization
cond_p.batch = _cond_batch
cond_p.cost = _cond_cost


def _fixed_point(out_mask_of: Callable[[tuple], tuple], mask: tuple[bool, ...]) -> tuple:
    """The smallest mask containing ``mask`` that a loop body maps into itself
    (which carries have tangents, or are batched, once the body has run)."""
    while True:
        new = tuple(a or b for a, b in zip(mask, out_mask_of(mask)))
        if new == mask:
            return mask
        mask = new


# ---------------------------------------------------------------------------
# while: repeat a body while a predicate holds

while_p = Primitive("while", multiple_results=True)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = _groups(args, cond_nconsts, body_nconsts)
    cond_fn, body_fn = compiled(cond_jaxpr, "while_cond"), compiled(body_jaxpr, "while_body")
    while cond_fn(*cconsts, *carry)[0]:
        carry = body_fn(*bconsts, *carry)
    return list(carry)


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = _groups(avals, cond_nconsts, body_nconsts)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0] != ShapedArray((), np.dtype(np.bool_)):
        raise ControlFlowTypeError(
            f"the predicate of while must be a boolean scalar, but it is {_type_list(pred)}.")
    if cond_jaxpr.in_avals != cconsts + carry or body_jaxpr.in_avals != bconsts + carry \
            or body_jaxpr.out_avals != carry:
        raise ControlFlowTypeError(
            f"while received the carry {_type_list(carry)}, but its body has type "
            f"{_type_list(body_jaxpr.in_avals[body_nconsts:])} -> "
            f"{_type_list(body_jaxpr.out_avals)}.")
    return list(carry)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    cconsts, bconsts, carry = _groups(primals, cond_nconsts, body_nconsts)
    _, bconsts_t, carry_t = _groups(tangents, cond_nconsts, body_nconsts)
    b_nz = tuple(type(t) is not Zero for t in bconsts_t)
    carry_nz = tuple(type(t) is not Zero for t in carry_t)
    carry_avals = [tangent_aval(get_aval(c)) for c in carry]
    if not any(b_nz + carry_nz):  # only the predicate's inputs have tangents
        return bind(while_p, *primals, **params), [Zero(a) for a in carry_avals]
    if _tangents_staged_apart(primals, tangents):
        return _while_split(cconsts, bconsts, carry, bconsts_t, carry_t, **params)
    carry_nz = _fixed_point(lambda nz: jvp_jaxpr(body_jaxpr, b_nz + nz, nz)[1], carry_nz)
    cond, body = _while_jvp_programs(cond_jaxpr, body_jaxpr, b_nz, carry_nz)
    n_bt = sum(b_nz)
    outs = bind(while_p, *cconsts, *bconsts, *_nonzero(bconsts_t), *carry,
                *[_materialize(t, a) for t, a, nz in zip(carry_t, carry_avals, carry_nz) if nz],
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
        return _with_unused_inputs(cond_jaxpr, t_avals), _reorder(jbody, order)
    return _cached(body_jaxpr, ("while_jvp", cond_jaxpr, b_nz, carry_nz), make)


class _Restart(Exception):
    """Recording must start over: ``guarded`` when the predicate differs across a
    vmap batch, ``abstract`` when it has no concrete value (under jit)."""


def _while_split(cconsts, bconsts, carry, bconsts_t, carry_t, **params):
    """Reverse mode of a loop. On concrete values: run it now, recording each
    iteration's residuals, and differentiate it as a scan of that many steps.
    On abstract values: a ``while_tangent`` loop, whose transpose recomputes."""
    # under jit or make_jaxpr every primal operation is staged: nothing is concrete
    mode = "abstract" if isinstance(find_top_trace(()), JaxprTrace) else "plain"
    while True:
        try:
            if mode == "abstract":
                return _while_tangent_loop(cconsts, bconsts, carry, bconsts_t, carry_t,
                                           **params)
            return _record_loop(cconsts, bconsts, carry, bconsts_t, carry_t,
                                mode == "guarded", **params)
        except _Restart as restart:
            mode = str(restart)


def _record_loop(cconsts, bconsts, carry, bconsts_t, carry_t, guarded, *, cond_jaxpr,
                 body_jaxpr, cond_nconsts, body_nconsts):
    if guarded:  # step = select(pred, body(carry), carry), consts = cconsts + bconsts
        step = _guarded_body(cond_jaxpr, body_jaxpr, cond_nconsts)
        consts = list(cconsts) + list(bconsts)
        consts_t = [Zero(tangent_aval(get_aval(c))) for c in cconsts] + list(bconsts_t)
    else:
        step, consts, consts_t = body_jaxpr, list(bconsts), list(bconsts_t)
    c_nz = tuple(type(t) is not Zero for t in consts_t)
    carry_nz = tuple(type(t) is not Zero for t in carry_t)
    carry_nz = _fixed_point(lambda nz: linearize_jaxpr(step, c_nz + nz, nz)[3], carry_nz)
    fwd, lin_scan, invariant, stacked = _recorded_programs(step, c_nz, carry_nz, len(consts))
    nk = len(carry)
    records: list[list] = [[] for _ in stacked]
    length = 0
    while True:
        pred = bind(call_p, *cconsts, *carry, jaxpr=cond_jaxpr, name="while_cond")[0]
        go = _concrete_or_none(pred)
        if go is None:
            go = _concrete_or_none(any_in_batch(pred))
            if go is None:
                raise _Restart("abstract")
            if not guarded:
                raise _Restart("guarded")
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
    touts = iter(bind(scan_p, *[consts[i] for i in invariant], *_nonzero(consts_t),
                      *[_materialize(t, a) for t, a, nz in zip(carry_t, carry_avals, carry_nz)
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
        return fwd, _reorder(lin, order), [res_inputs[k] for k in invariant_k], stacked
    return _cached(step, ("recorded", c_nz, carry_nz), make)


def _guarded_body(cond_jaxpr, body_jaxpr, cond_nconsts):
    def make():
        nb = len(body_jaxpr.in_avals) - len(body_jaxpr.out_avals)

        def step(*args):
            cconsts, bconsts, carry = _groups(args, cond_nconsts, nb)
            pred = _run(cond_jaxpr, *cconsts, *carry)[0]
            new = _run(body_jaxpr, *bconsts, *carry)
            return [elementwise.select(pred, n, c) for n, c in zip(new, carry)]
        return trace_to_jaxpr(step, cond_jaxpr.in_avals[:cond_nconsts] + body_jaxpr.in_avals)
    return _cached(body_jaxpr, ("guarded", cond_jaxpr, cond_nconsts), make)


def _while_batch(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = _batch_size(vals, dims)
    cconsts, bconsts, carry = _groups(vals, cond_nconsts, body_nconsts)
    c_dims, b_dims, k_dims = _groups(dims, cond_nconsts, body_nconsts)
    c_b = tuple(d is not None for d in c_dims)
    b_b = tuple(d is not None for d in b_dims)
    carry_b = _fixed_point(lambda m: batch_jaxpr(body_jaxpr, size, b_b + m, m)[1],
                           tuple(d is not None for d in k_dims))
    pred_batched = batch_jaxpr(cond_jaxpr, size, c_b + carry_b, (False,))[1][0]
    if pred_batched:
        carry_b = (True,) * len(carry)
    cconsts = _to_front(cconsts, c_dims, c_b, size)
    bconsts = _to_front(bconsts, b_dims, b_b, size)
    carry = _to_front(carry, k_dims, carry_b, size)
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
            return [reductions.reduce_or(_run(cond_b, *args)[0], axes=(0,))]

        def body(*args):
            cconsts, bconsts, carry = _groups(args, n_c, len(b_b))
            pred = _run(cond_b, *cconsts, *carry)[0]
            new = _run(body_b, *bconsts, *carry)
            return [elementwise.select(_expand_to(pred, get_aval(n).ndim), n, c)
                    for n, c in zip(new, carry)]
        return (trace_to_jaxpr(cond, cond_b.in_avals),
                trace_to_jaxpr(body, cond_b.in_avals[:n_c] + body_b.in_avals))
    return _cached(body_jaxpr, ("batched_pred", cond_jaxpr, size, c_b, b_b), make)


def _while_cost(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # the trip count is known only at run time: this is the cost of one iteration
    c, b = _program_cost(cond_jaxpr), _program_cost(body_jaxpr)
    return {"flops": c["flops"] + b["flops"], "bytes": c["bytes"] + b["bytes"]}


while_p.impl = _while_impl
while_p.abstract_eval = _while_abstract_eval
while_p.jvp = _while_jvp
while_p.batch = _while_batch
while_p.cost = _while_cost



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
    carry_nz = _fixed_point(lambda nz: jvp_jaxpr(body_jaxpr, b_nz + nz, nz)[1],
                            tuple(type(t) is not Zero for t in carry_t))
    carry_avals = [tangent_aval(get_aval(c)) for c in carry]
    outs = bind(while_p, *cconsts, *bconsts, *carry, cond_jaxpr=cond_jaxpr,
                body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    touts = iter(bind(while_tangent_p, *cconsts, *bconsts, *carry, *_nonzero(bconsts_t),
                      *[_materialize(t, a) for t, a, nz in zip(carry_t, carry_avals, carry_nz)
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
            return _run(lin_t, *_run(fwd, *args[:nb + nk])[nk:], *args[nb + nk:])
        return trace_to_jaxpr(step_t, list(body_jaxpr.in_avals) + ct_avals)
    return _cached(body_jaxpr, ("transposed_step", b_nz, carry_nz), make)


def _tangent_groups(items, cond_nconsts, b_nz, carry_nz):
    return _groups(items, cond_nconsts, len(b_nz), len(carry_nz))


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
    outs = bind(while_cotangent_p, *args[:n_res], *map(_materialize, cts, avals),
                cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                b_nz=b_nz, carry_nz=carry_nz)
    return [None] * n_res + [o if is_undefined(a) else None for o, a in zip(outs, args[n_res:])]


def _batched_tangent_loop(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, b_nz, carry_nz):
    """Operands and params of the batched ``while_tangent``/``while_cotangent``; all
    (co)tangents are per member, and so are the consts and carries they pair with."""
    size = _batch_size(vals, dims)
    cconsts, bconsts, carry, lin = _tangent_groups(vals, cond_nconsts, b_nz, carry_nz)
    c_dims, b_dims, k_dims, lin_dims = _tangent_groups(dims, cond_nconsts, b_nz, carry_nz)
    c_b = tuple(d is not None for d in c_dims)
    b_b = tuple(d is not None or nz for d, nz in zip(b_dims, b_nz))
    k_b = _fixed_point(lambda m: batch_jaxpr(body_jaxpr, size, b_b + m, m)[1],
                       tuple(d is not None or nz for d, nz in zip(k_dims, carry_nz)))
    pred_batched = batch_jaxpr(cond_jaxpr, size, c_b + k_b, (False,))[1][0]
    if pred_batched:
        k_b = (True,) * len(k_b)
    cconsts = _to_front(cconsts, c_dims, c_b, size)
    bconsts = _to_front(bconsts, b_dims, b_b, size)
    carry = _to_front(carry, k_dims, k_b, size)
    lin = _to_front(lin, lin_dims, (True,) * len(lin), size)
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
    c, b = _program_cost(cond_jaxpr), _program_cost(body_jaxpr)
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
    touts = bind(while_cotangent_p, *primals[:n_res], *map(_materialize, tangents[n_res:], avals),
                 **params)
    return outs, touts


def _while_cotangent_transpose(cts, *args, **params):
    n_res = params["cond_nconsts"] + len(params["b_nz"]) + len(params["carry_nz"])
    avals = _while_cotangent_abstract_eval(**params)
    outs = bind(while_tangent_p, *args[:n_res], *map(_materialize, cts, avals), **params)
    return [None] * n_res + [o if is_undefined(a) else None for o, a in zip(outs, args[n_res:])]


while_cotangent_p = Primitive("while_cotangent", multiple_results=True)
while_cotangent_p.impl = _while_cotangent_impl
while_cotangent_p.abstract_eval = _while_cotangent_abstract_eval
while_cotangent_p.jvp = _while_cotangent_jvp
while_cotangent_p.transpose = _while_cotangent_transpose
while_cotangent_p.batch = _tangent_loop_batch(while_cotangent_p)
while_cotangent_p.cost = _tangent_loop_cost

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


# ---------------------------------------------------------------------------
# scan: a loop over the leading axis of xs, threading a carry

scan_p = Primitive("scan", multiple_results=True)


def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = _groups(args, num_consts, num_carry)
    body = compiled(jaxpr, "scan_body")
    ys = [np.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = body(*consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return list(carry) + ys


def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = _groups(avals, num_consts, num_carry)
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ControlFlowTypeError(
                f"scan of length {length} needs xs with leading axis {length}, got "
                f"{_type_list(xs)}.")
    x_avals = [ShapedArray(x.shape[1:], x.dtype) for x in xs]
    if jaxpr.in_avals != consts + carry + x_avals or jaxpr.out_avals[:num_carry] != carry:
        raise ControlFlowTypeError(
            f"scan received consts {_type_list(consts)}, carry {_type_list(carry)} and "
            f"slices {_type_list(x_avals)}, but its body has type "
            f"{_type_list(jaxpr.in_avals)} -> {_type_list(jaxpr.out_avals)}.")
    return list(carry) + [ShapedArray((length,) + a.shape, a.dtype)
                          for a in jaxpr.out_avals[num_carry:]]


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    consts, init, xs = _groups(primals, nc, nk)
    consts_t, init_t, xs_t = _groups(tangents, nc, nk)
    c_nz, k_nz, x_nz = (tuple(type(t) is not Zero for t in ts) for ts in (consts_t, init_t, xs_t))
    split = _tangents_staged_apart(primals, tangents)
    if split:
        def carry_nz_of(nz):
            return linearize_jaxpr(jaxpr, c_nz + nz + x_nz, nz + (False,) * ny)[3][:nk]
    else:
        def carry_nz_of(nz):
            return jvp_jaxpr(jaxpr, c_nz + nz + x_nz, nz + (False,) * ny)[1][:nk]
    k_nz = _fixed_point(carry_nz_of, k_nz)
    params = dict(length=length, reverse=reverse)
    carry_avals = jaxpr.in_avals[nc:nc + nk]
    init_t = [_materialize(t, a) for t, a, nz in zip(init_t, carry_avals, k_nz) if nz]
    if split:
        fwd, lin, forwarded, y_nz = _scan_split(jaxpr, nc, nk, c_nz, k_nz, x_nz)
        outs = bind(scan_p, *consts, *init, *xs, jaxpr=fwd, num_consts=nc, num_carry=nk, **params)
        carry, ys, stacked = _groups(outs, nk, ny)
        res_consts = [consts[r] for r in forwarded[0]]
        res_xs = [xs[r] for r in forwarded[1]]
        touts = bind(scan_p, *res_consts, *_nonzero(consts_t), *init_t, *stacked, *res_xs,
                     *_nonzero(xs_t), jaxpr=lin, num_consts=len(res_consts) + sum(c_nz),
                     num_carry=sum(k_nz), **params)
        carry_t, ys_t = _groups(touts, sum(k_nz))[:2]
    else:
        body, y_nz = _scan_joint(jaxpr, nc, nk, c_nz, k_nz, x_nz)
        outs = bind(scan_p, *consts, *_nonzero(consts_t), *init, *init_t, *xs, *_nonzero(xs_t),
                    jaxpr=body, num_consts=nc + sum(c_nz), num_carry=nk + sum(k_nz), **params)
        carry, carry_t, ys, ys_t = _groups(outs, nk, sum(k_nz), ny)
    out_avals = [tangent_aval(a) for a in jaxpr.out_avals[:nk]] + [
        tangent_aval(ShapedArray((length,) + a.shape, a.dtype)) for a in jaxpr.out_avals[nk:]]
    touts = iter(list(carry_t) + list(ys_t))
    return list(carry) + list(ys), [next(touts) if nz else Zero(a)
                                    for a, nz in zip(out_avals, k_nz + y_nz)]


def _scan_joint(jaxpr, nc, nk, c_nz, k_nz, x_nz):
    """A scan over (primal, tangent) pairs: consts, carries and xs each followed by
    their nonzero tangents."""
    def make():
        ny = len(jaxpr.out_avals) - nk
        jbody, out_nz = jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + (False,) * ny)
        nx, nct, nkt, nxt, nyt = len(x_nz), sum(c_nz), sum(k_nz), sum(x_nz), sum(out_nz[nk:])
        p = nc + nk + nx
        in_order = [*range(nc), *range(p, p + nct), *range(nc, nc + nk),
                    *range(p + nct, p + nct + nkt), *range(nc + nk, p),
                    *range(p + nct + nkt, p + nct + nkt + nxt)]
        out_order = [*range(nk), *range(nk + ny, nk + ny + nkt), *range(nk, nk + ny),
                     *range(nk + ny + nkt, nk + ny + nkt + nyt)]
        return _reorder(jbody, in_order, out_order), out_nz[nk:]
    return _cached(jaxpr, ("scan_joint", nc, nk, c_nz, k_nz, x_nz), make)


def _scan_split(jaxpr, nc, nk, c_nz, k_nz, x_nz):
    """A forward scan (carry, ys, residuals stacked per iteration) and a linear scan
    over the residuals. Residuals that merely forward a const or an xs operand are
    not stacked again: the operand itself is passed to the linear scan."""
    def make():
        ny = len(jaxpr.out_avals) - nk
        fwd, lin, res_avals, out_nz, res_inputs = linearize_jaxpr(
            jaxpr, c_nz + k_nz + x_nz, k_nz + (False,) * ny)
        from_consts = [k for k, r in enumerate(res_inputs) if r is not None and r < nc]
        from_xs = [k for k, r in enumerate(res_inputs) if r is not None and r >= nc + nk]
        stacked = [k for k in range(len(res_avals)) if k not in from_consts + from_xs]
        forward = _reorder(fwd, out_order=[*range(nk + ny)] + [nk + ny + k for k in stacked])
        n_res, nct, nkt = len(res_avals), sum(c_nz), sum(k_nz)
        order = from_consts + list(range(n_res, n_res + nct + nkt)) + stacked + from_xs + \
            list(range(n_res + nct + nkt, len(lin.in_avals)))
        forwarded = ([res_inputs[k] for k in from_consts],
                     [res_inputs[k] - nc - nk for k in from_xs])
        return forward, _reorder(lin, order), forwarded, out_nz[nk:]
    return _cached(jaxpr, ("scan_split", nc, nk, c_nz, k_nz, x_nz), make)


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    consts, init, xs = _groups(args, num_consts, num_carry)
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    c_lin = tuple(is_undefined(c) for c in consts)
    x_lin = tuple(is_undefined(x) for x in xs)
    carry_avals = jaxpr.in_avals[num_consts:num_consts + num_carry]
    if not all(dtypes.is_float(a.dtype) for a in carry_avals):
        raise DifferentiationError(
            f"scan with carry {_type_list(carry_avals)} is not linear in its carries and "
            "cannot be transposed; this is a bug in a rule producing it, please report it.")
    y_nz = tuple(type(c) is not Zero for c in ct_ys)
    body = _scan_transposed_body(jaxpr, num_consts, num_carry, c_lin, x_lin, y_nz)
    lin_const_avals = [c.aval for c in consts if is_undefined(c)]
    res_consts = [c for c in consts if not is_undefined(c)]
    outs = bind(scan_p, *res_consts, *[_materialize(c, a) for c, a in zip(ct_carry, carry_avals)],
                *[zeros_array(a) for a in lin_const_avals], *[x for x in xs if not is_undefined(x)],
                *_nonzero(ct_ys), jaxpr=body, num_consts=len(res_consts),
                num_carry=num_carry + len(lin_const_avals), length=length, reverse=not reverse)
    ct_init, ct_consts, ct_xs = _groups(outs, num_carry, len(lin_const_avals))
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return ([next(ct_consts) if l else None for l in c_lin]
            + [ct if is_undefined(c) else None for c, ct in zip(init, ct_init)]
            + [next(ct_xs) if l else None for l in x_lin])


def _scan_transposed_body(jaxpr, nc, nk, c_lin, x_lin, y_nz):
    """(residual consts; carry cotangents, const cotangents so far; residual xs,
    ys cotangents) -> (carry cotangents, const cotangents, xs cotangents)."""
    def make():
        consts_a, carry_a, xs_a = _groups(jaxpr.in_avals, nc, nk)
        ys_a = jaxpr.out_avals[nk:]
        res_c = [a for a, l in zip(consts_a, c_lin) if not l]
        lin_c = [a for a, l in zip(consts_a, c_lin) if l]
        res_x = [a for a, l in zip(xs_a, x_lin) if not l]
        ct_y = [a for a, nz in zip(ys_a, y_nz) if nz]

        def body(*args):
            rc, ct_carry, acc, rx, cy = (iter(g) for g in _groups(
                args, len(res_c), nk, len(lin_c), len(res_x)))
            linear_args = ([UndefinedPrimal(a) if l else next(rc) for a, l in zip(consts_a, c_lin)]
                           + [UndefinedPrimal(a) for a in carry_a]
                           + [UndefinedPrimal(a) if l else next(rx) for a, l in zip(xs_a, x_lin)])
            cts_out = list(ct_carry) + [next(cy) if nz else Zero(a) for a, nz in zip(ys_a, y_nz)]
            ct_c, ct_k, ct_x = _groups(backward_pass(jaxpr.jaxpr, jaxpr.consts, linear_args,
                                                     cts_out), nc, nk)
            ct_c = [c for c, l in zip(ct_c, c_lin) if l]
            return ([_materialize(c, a) for c, a in zip(ct_k, carry_a)]
                    + [a if c is None or type(c) is Zero else elementwise.add(a, c)
                       for a, c in zip(acc, ct_c)]
                    + [_materialize(c, a) for c, a, l in zip(ct_x, xs_a, x_lin) if l])
        return trace_to_jaxpr(body, res_c + list(carry_a) + lin_c + res_x + ct_y)
    return _cached(jaxpr, ("scan_transpose", nc, nk, c_lin, x_lin, y_nz), make)


def _scan_batch(vals, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    size = _batch_size(vals, dims)
    nk, ny = num_carry, len(jaxpr.out_avals) - num_carry
    consts, init, xs = _groups(vals, num_consts, nk)
    c_dims, k_dims, x_dims = _groups(dims, num_consts, nk)
    c_b, x_b = (tuple(d is not None for d in ds) for ds in (c_dims, x_dims))
    k_b = _fixed_point(lambda m: batch_jaxpr(jaxpr, size, c_b + m + x_b,
                                             m + (False,) * ny)[1][:nk],
                       tuple(d is not None for d in k_dims))
    body, out_b = batch_jaxpr(jaxpr, size, c_b + k_b + x_b, k_b + (False,) * ny)
    xs = [move_batch_axis(x, d, 1, size) if d is not None else x for x, d in zip(xs, x_dims)]
    outs = bind(scan_p, *_to_front(consts, c_dims, c_b, size), *_to_front(init, k_dims, k_b, size),
                *xs, jaxpr=body, num_consts=num_consts, num_carry=nk, length=length,
                reverse=reverse)
    return outs, [0 if b else None for b in k_b] + [1 if b else None for b in out_b[nk:]]


def _scan_cost(*avals, jaxpr, num_consts, num_carry, length, reverse):
    c = _program_cost(jaxpr)
    return {"flops": length * c["flops"], "bytes": length * c["bytes"]}


scan_p.impl = _scan_impl
scan_p.abstract_eval = _scan_abstract_eval
scan_p.jvp = _scan_jvp
scan_p.transpose = _scan_transpose  # reached only for scans produced by linearization
scan_p.batch = _scan_batch
scan_p.cost = _scan_cost
