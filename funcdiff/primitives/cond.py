"""The ``cond`` primitive: run one of several branches, chosen by an integer index.

``cond[branches] index *args`` runs ``branches[index]`` (index clamped to the
branches that exist); every branch is a ``ClosedJaxpr`` of the same type. On a
concrete index the jvp differentiates just the branch that runs; on a staged
one it binds ``cond`` again over the branches' jvp programs, or, inside
``linearize``, over forward branches (outputs plus the residuals of every
branch, zeros for those not taken) and linear ones, whose transpose is a
``cond`` of transposed branches. Under vmap a batched index computes every
branch and selects per member. The public API is ``funcdiff.lax.cond`` and
``funcdiff.lax.switch``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcdiff.core import Primitive, Zero, bind, get_aval, tangent_aval, zeros_array
from funcdiff.errors import ControlFlowTypeError, DifferentiationError
from funcdiff.interpreters.batching import move_batch_axis
from funcdiff.compiler.evaluator import runner
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.passes.pipeline import program_cost
from funcdiff.interpreters.programs import (batch_jaxpr, batch_size, cached, concrete_or_none,
                                            jvp_jaxpr, linearize_jaxpr, nonzero, run,
                                            tangents_staged_apart, to_front, transpose_jaxpr,
                                            type_list)
from funcdiff.interpreters import tape_control
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.primitives import elementwise, structural


cond_p = Primitive("cond", multiple_results=True)


def _clamp(i: Any, n: int) -> int:
    return min(max(int(i), 0), n - 1)


def _cond_impl(index, *args, branches):
    return runner(branches[_clamp(index, len(branches))], "cond_branch", 1)(*args)


def _cond_abstract_eval(index, *args, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise ControlFlowTypeError(
            f"the primitive cond needs a scalar integer index, but got {index.str_short()}. "
            "fd.lax.cond converts its boolean predicate; fd.lax.switch takes an integer.")
    for i, b in enumerate(branches):
        if list(b.in_avals) != list(args) or b.out_avals != branches[0].out_avals:
            raise ControlFlowTypeError(
                f"cond branch {i} has type {type_list(b.in_avals)} -> "
                f"{type_list(b.out_avals)}, but the operands are {type_list(args)} and "
                f"branch 0 returns {type_list(branches[0].out_avals)}.")
    return list(branches[0].out_avals)


def _union(masks: Sequence[tuple[bool, ...]]) -> tuple[bool, ...]:
    return tuple(any(m) for m in zip(*masks))


def _cond_jvp(primals, tangents, *, branches):
    index, args, arg_tangents = primals[0], primals[1:], tangents[1:]
    i = concrete_or_none(index)
    if i is not None:  # a known index: differentiate just the branch that runs
        branch = branches[_clamp(i, len(branches))]
        return jvp_flat(lambda *a: run(branch, *a), args, arg_tangents)
    nonzeros = tuple(type(t) is not Zero for t in arg_tangents)
    out_avals = branches[0].out_avals
    n_out, none = len(out_avals), (False,) * len(out_avals)
    if tangents_staged_apart(args, arg_tangents):
        fwds, lins, out_nz = _cond_linearized(branches, nonzeros)
        outs = bind(cond_p, index, *args, branches=fwds)
        touts = iter(bind(cond_p, index, *outs[n_out:], *nonzero(arg_tangents), branches=lins))
    else:
        out_nz = _union([jvp_jaxpr(b, nonzeros, none)[1] for b in branches])
        jvps = tuple(jvp_jaxpr(b, nonzeros, out_nz)[0] for b in branches)
        outs = bind(cond_p, index, *args, *nonzero(arg_tangents), branches=jvps)
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
                outs = run(fwd, *args)
                zeros = [zeros_array(a) for a in all_res]
                return outs[:n_out] + zeros[:start] + outs[n_out:] + zeros[start + n_res:]
            fwds.append(trace_to_jaxpr(forward, fwd.in_avals))
            t_avals = lin.in_avals[n_res:]
            lins.append(trace_to_jaxpr(
                lambda *a, lin=lin, start=start, n_res=n_res:
                    run(lin, *a[start:start + n_res], *a[len(all_res):]),
                all_res + list(t_avals)))
            start += n_res
        return tuple(fwds), tuple(lins), out_nz
    # the key holds the other branches, so their identity cannot be reused while cached
    return cached(branches[0], ("cond_linearize", branches[1:], nonzeros), make)


def _cond_transpose(cts, index, *args, branches):
    if is_undefined(index):
        raise DifferentiationError("cond cannot be transposed with respect to its index")
    linear = tuple(is_undefined(a) for a in args)
    ct_nz = tuple(type(c) is not Zero for c in cts)
    transposed = tuple(transpose_jaxpr(b, linear, ct_nz) for b in branches)
    defined = [a for a in args if not is_undefined(a)]
    cts_in = iter(bind(cond_p, index, *defined, *nonzero(cts), branches=transposed))
    return [None] + [next(cts_in) if l else None for l in linear]


def _cond_batch(vals, dims, *, branches):
    size = batch_size(vals, dims)
    (index, *args), (index_dim, *arg_dims) = vals, dims
    batched = tuple(d is not None for d in arg_dims)
    args = to_front(args, arg_dims, batched, size)
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
        outs = run(batch_jaxpr(b, size, batched, (True,) * n_out)[0], *args)
        if result is None:
            result = outs
            continue
        take = elementwise.ge(index, np.asarray(i, get_aval(index).dtype))
        result = [elementwise.select(expand_to(take, get_aval(o).ndim), o, r)
                  for o, r in zip(outs, result)]
    return result, [0] * n_out


def expand_to(pred, ndim: int):
    """A batched (size,) predicate reshaped to broadcast against rank-``ndim`` values."""
    size = get_aval(pred).shape[0]
    return structural.reshape(pred, new_sizes=(size,) + (1,) * (ndim - 1)) if ndim > 1 else pred


def _cond_cost(index, *args, branches):
    costs = [program_cost(b) for b in branches]
    return {"flops": max(c["flops"] for c in costs), "bytes": max(c["bytes"] for c in costs)}


def _cond_on_tape(trace, args, *, branches):
    # the eager tape runs the chosen branch itself, recording its operations
    index, *operands = args
    i = min(max(int(tape_control.value(trace, index)), 0), len(branches) - 1)  # as the impl
    return run(branches[i], *operands)


cond_p.impl = _cond_impl
cond_p.abstract_eval = _cond_abstract_eval
cond_p.jvp = _cond_jvp
cond_p.transpose = _cond_transpose  # reached only for conds produced by linearization
cond_p.batch = _cond_batch
cond_p.cost = _cond_cost
cond_p.tape_rule = _cond_on_tape
