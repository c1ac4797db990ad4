"""Programs derived from programs: the jvp, linearized, transposed and batched
forms of a closed sub-program, each traced once and cached per sub-program.

The control-flow primitives (``cond``, ``while``, ``scan``) hold their branches
and loop bodies as ``ClosedJaxpr`` params. Their rules never see the user's
Python functions: they derive new sub-programs from the old ones here and bind
the primitive again, so every transform of a loop is again a loop. A derived
program is cached on the sub-program it came from (weakly, so it lives as long
as that sub-program) under a key naming the derivation and its masks (which
inputs carry tangents, which are batched). The small helpers below the
derivations are the operand bookkeeping those rules share: splitting flat
operand lists into groups, the masks of nonzero tangents, and the fixed point
a loop body's mask reaches.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

from funcdiff import dtypes
from funcdiff.core import (ShapedArray, Tracer, Zero, find_top_trace, get_aval, new_main,
                           tangent_aval, zeros_array)
from funcdiff.errors import ConcretizationError
from funcdiff.interpreters.batching import BatchTrace, BatchTracer, move_batch_axis
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.linearize import linearize_flat
from funcdiff.interpreters.staging import JaxprTrace, JaxprTracer, trace_to_jaxpr
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass
from funcdiff.ir import ClosedJaxpr, Jaxpr, Var, eval_jaxpr


# Derived programs live as long as the sub-program they were derived from.
_derived: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def cached(jaxpr: ClosedJaxpr, key: tuple, make: Callable[[], Any]) -> Any:
    """What ``make()`` derives from ``jaxpr``, made once per ``key`` while ``jaxpr`` lives."""
    cache = _derived.get(jaxpr)
    if cache is None:
        cache = _derived[jaxpr] = {}
    if key not in cache:
        cache[key] = make()
    return cache[key]


def run(jaxpr: ClosedJaxpr, *args: Any) -> list:
    """Evaluate ``jaxpr`` on ``args``, binding each equation (so it runs under any trace)."""
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def reorder(jaxpr: ClosedJaxpr, in_order: Sequence[int] | None = None,
            out_order: Sequence[int] | None = None) -> ClosedJaxpr:
    """The same program with its inputs and/or outputs listed in another order."""
    j = jaxpr.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(j.constvars, list(invars), j.eqns, list(outvars)), jaxpr.consts)


def with_unused_inputs(jaxpr: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """The same program taking extra trailing inputs of ``avals`` that it ignores."""
    j = jaxpr.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, list(j.invars) + [Var(a) for a in avals], j.eqns,
                             j.outvars), jaxpr.consts)


def materialize(ct: Any, aval: ShapedArray) -> Any:
    """``ct`` as an array: a symbolic zero (or None) becomes zeros of ``aval``."""
    return zeros_array(aval) if ct is None or type(ct) is Zero else ct


def jvp_jaxpr(jaxpr: ClosedJaxpr, nonzeros: tuple[bool, ...], instantiate: tuple[bool, ...]):
    """``(primals, nonzero tangents) -> (outs, nonzero tangent outs)`` and which outs
    have tangents; tangent outs marked in ``instantiate`` are always present."""
    def make():
        in_avals, out_nz = jaxpr.in_avals, []

        def fun(*args):
            primals, tans = args[:len(in_avals)], iter(args[len(in_avals):])
            tangents = [next(tans) if nz else Zero(tangent_aval(a))
                        for a, nz in zip(in_avals, nonzeros)]
            outs, touts = jvp_flat(lambda *a: run(jaxpr, *a), primals, tangents)
            out_nz[:] = [dtypes.is_inexact(a.dtype) and (inst or type(t) is not Zero)
                         for a, t, inst in zip(jaxpr.out_avals, touts, instantiate)]
            return list(outs) + [materialize(t, a) for t, a, nz
                                 in zip(touts, jaxpr.out_avals, out_nz) if nz]
        t_avals = [a for a, nz in zip(in_avals, nonzeros) if nz]
        return trace_to_jaxpr(fun, list(in_avals) + t_avals), tuple(out_nz)
    return cached(jaxpr, ("jvp", nonzeros, instantiate), make)


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
            outs, lin = linearize_flat(lambda *a: run(jaxpr, *a), primals,
                                       in_mask=list(nonzeros))
            res_idx = [i for i, c in enumerate(lin.jaxpr.consts) if isinstance(c, JaxprTracer)]
            residuals = [lin.jaxpr.consts[i] for i in res_idx]
            record.update(lin=lin, res_idx=res_idx, res_inputs=tuple(
                next((k for k, p in enumerate(primals) if p is r), None) for r in residuals))
            return list(outs) + residuals

        fwd = trace_to_jaxpr(forward, jaxpr.in_avals)
        lin, res_idx = record["lin"], record["res_idx"]
        out_avals = jaxpr.out_avals
        out_nz = tuple(dtypes.is_inexact(a.dtype) and (inst or not z)
                       for a, z, inst in zip(out_avals, lin.out_is_zero, instantiate))
        res_avals = [get_aval(lin.jaxpr.consts[i]) for i in res_idx]
        t_avals = [a for a, nz in zip(jaxpr.in_avals, nonzeros) if nz]

        def linear(*args):
            res, tangents = iter(args[:len(res_idx)]), args[len(res_idx):]
            res_set = set(res_idx)
            consts = [next(res) if i in res_set else c for i, c in enumerate(lin.jaxpr.consts)]
            staged = iter(eval_jaxpr(lin.jaxpr.jaxpr, consts, *tangents))
            touts = [None if z else next(staged) for z in lin.out_is_zero]
            return [materialize(t, a) for t, a, nz in zip(touts, out_avals, out_nz) if nz]

        linear_jaxpr = trace_to_jaxpr(linear, res_avals + t_avals)
        return fwd, linear_jaxpr, res_avals, out_nz, record["res_inputs"]
    return cached(jaxpr, ("linearize", nonzeros, instantiate), make)


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
            return [materialize(ct, a) for ct, a, l in zip(cts_in, in_avals, linear) if l]
        avals = [a for a, l in zip(in_avals, linear) if not l] + \
                [a for a, nz in zip(out_avals, ct_nonzeros) if nz]
        return trace_to_jaxpr(backward, avals)
    return cached(jaxpr, ("transposed", linear, ct_nonzeros), make)


def batch_jaxpr(jaxpr: ClosedJaxpr, size: int, batched: tuple[bool, ...],
                force: tuple[bool, ...]):
    """The program over inputs batched along axis 0 where ``batched``; returns it and
    which outputs are batched (along axis 0; those in ``force`` always are)."""
    def make():
        out_batched: list = []

        def fun(*args):
            with new_main(BatchTrace, size) as main:
                ins = [BatchTracer(main.trace, a, 0) if b else a for a, b in zip(args, batched)]
                outs = run(jaxpr, *ins)
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
    return cached(jaxpr, ("batch", size, batched, force), make)


# ---------------------------------------------------------------------------
# Operand bookkeeping shared by the control-flow rules


def groups(items: Sequence[Any], *sizes: int) -> list[list]:
    """``items`` split into consecutive groups of ``sizes``, plus the rest."""
    out, start = [], 0
    for n in sizes:
        out.append(list(items[start:start + n]))
        start += n
    out.append(list(items[start:]))
    return out


def nonzero(ts: Sequence[Any]) -> list:
    """The tangents in ``ts`` that are not symbolic zeros."""
    return [t for t in ts if type(t) is not Zero]


def tangents_staged_apart(primals: Sequence[Any], tangents: Sequence[Any]) -> bool:
    """True inside ``linearize``: the tangents are staged into a linear program by a
    trace above the one computing the primals, so a loop over (primal, tangent)
    pairs would stage primal work into the linear program; the rule must split."""
    moving = nonzero(tangents)
    if not moving:
        return False
    top = find_top_trace(moving)
    return isinstance(top, JaxprTrace) and top.main.level > find_top_trace(primals).main.level


def concrete_or_none(x: Any) -> Any:
    """``x``'s concrete value, or None when it is only known abstractly."""
    if not isinstance(x, Tracer):
        return x
    try:
        return x.to_concrete("control flow")
    except ConcretizationError:
        return None


def batch_size(vals, dims) -> int:
    """The vmap batch size: the size of the first batched value's batch axis."""
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def to_front(vals, dims, batched, size):
    """Each value with its batch axis at 0 where ``batched`` (broadcast if it had none)."""
    return [move_batch_axis(v, d, 0, size) if b else v for v, d, b in zip(vals, dims, batched)]


def type_list(avals: Sequence[ShapedArray]) -> str:
    """``(f64[3], i32[])``-style types of ``avals``, for error messages."""
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def fixed_point(out_mask_of: Callable[[tuple], tuple], mask: tuple[bool, ...]) -> tuple:
    """The smallest mask containing ``mask`` that a loop body maps into itself
    (which carries have tangents, or are batched, once the body has run)."""
    while True:
        new = tuple(a or b for a, b in zip(mask, out_mask_of(mask)))
        if new == mask:
            return mask
        mask = new
